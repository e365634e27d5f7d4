// Package audit measures privacy empirically: it runs a private algorithm
// of package pairwise many times on neighbouring datasets that differ in one
// worst-case record and turns the best distinguishing test's error rates
// into a lower bound ε_lb on the ε the mechanism can have. A correct
// mechanism gives ε_lb ≤ ε (except with the test's stated probability); a
// mechanism with too little noise is caught. The federated algorithms of
// package fedalgo are audited the same way (federated.go): one site's
// releases over a whole job, or, under secure aggregation, the decoded sum
// of the distributed discrete Gaussian and one site's share of it
// (federated_secagg.go, with a tampered announcement's regression case).
// It sits above dp (noise, accountants), pairwise (algorithms) and fedalgo
// (federated algorithms, secure aggregation's parameters), and below the
// CLI.
package audit
