// Package dpalgo holds pairfed's private algorithms: the single-site ones,
// one file per paper or mechanism, the site halves of the private
// federated algorithms, the shared private kit and the default rule.
//
// # Where things are
//
//   - private_<paper or mechanism>.go: the algorithms, each registering
//     itself in package pairwise's registry from init, with its
//     mechanism, its sensitivity argument and its calibration written
//     beside the code: private_y21.go (dp-local-sgd of [Y21a],
//     dp-sgd-output of [Y21b]), private_k22.go (dp-gd-grad, [K22]),
//     private_h20.go (on-/off-pair-strc/c, [H20]), private_x21.go
//     (dpgdsc, dpgdc, dpgdc2, dpegd, [X21]), and pairfed's own private_gd.go
//     (dp-gd), private_ssp.go (dp-ssp, dp-ssp-mean), private_lda.go
//     (dp-lda), private_pairgd.go (dp-pair-gd) and private_pairsgd.go
//     (dp-pair-sgd). An algorithm file uses only what it declares and the
//     kit: layout_test.go parses the package and fails on any identifier
//     one algorithm file borrows from another.
//   - kit*.go: what several algorithms share, named by role —
//     kit_sensitivity.go (pair-gradient gaps, parameter-set diameters,
//     the full-batch gradient's sensitivity, binomial quantiles),
//     kit_calibrate.go (the report's formula line, the knobs a proof
//     fixes, the snapped Gaussian, μ-GDP of one release), kit_pgd.go
//     (noisy projected gradient descent and output noise), kit_iterates.go
//     (post-processing of released iterates, the noisy-iterate output
//     rule), kit_radius.go (the default parameter radius), kit_ssp.go and
//     kit_ssp_vector.go (class statistics: their release, calibration
//     and solver), kit_pairsum.go (the pair-sum statistics and rounds),
//     kit_pairgrad.go (clipped pair-gradient batch sums, dense and sparse).
//   - fed*.go: what one site computes, releases and is charged in a phase
//     of a private algorithm of package fedalgo (phases on disjoint
//     subsets, noisy gradient rounds, the SPAUC sums, their sensitivities
//     under secure aggregation). Package fedalgo holds the algorithms.
//   - recommend.go: the default private algorithm for a job, and why.
//
// The engine, the registry, the privacy report and its certifier are
// package pairwise's: every private algorithm's Run is wrapped at
// registration so that its report is certified by the exact accountant of
// package dp, and a run whose certificate exceeds its request is refused.
//
// Adding a private single-site algorithm is one new file here: see
// toy_private_test.go, which adds one from a test file and runs it through
// `pairfed train`, `pairfed audit` and fed-oneshot.
package dpalgo
