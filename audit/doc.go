// Package audit measures privacy empirically: it runs a private algorithm
// of package pairwise many times on neighbouring datasets that differ in one
// worst-case record and turns the best distinguishing test's error rates
// into a lower bound ε_lb on the ε the mechanism can have. A correct
// mechanism gives ε_lb ≤ ε (except with the test's stated probability); a
// mechanism with too little noise is caught. It sits above dp (noise,
// accountants) and pairwise (algorithms), and below the CLI.
package audit
