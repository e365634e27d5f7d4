// Package pairwise is pairfed's learning core: pairwise learning — AUC
// maximization (bipartite ranking) and similarity metric learning — on
// data held in memory, with no I/O and no clock. The data package builds
// its Datasets from files; the CLI, the experiments and the federation
// call into it.
//
// It holds five things:
//
//   - The vocabulary and the engine. Dataset (dense or CSR) and its index
//     views (dataset.go, view.go); Task and Loss, each loss declaring its
//     Lipschitz constant G, smoothness L and convexity in terms of the
//     feature radius R and parameter radius B (loss.go); Objective, the
//     linear (w ∈ R^d) or metric (W ∈ S^d) model of a loss (objective.go,
//     metric.go); projections onto the ℓ2 ball and the Frobenius and
//     nuclear-norm balls intersected with the PSD cone, with the proofs
//     that they are exact (projection.go, psd.go); pair samplers
//     (samplers.go); step-size schedules, iterate averaging and the SGD
//     loops (sgd.go); full pairwise gradients (fullgrad.go); the empirical
//     pairwise risk (risk.go); AUC, ROC and KNN accuracy (metrics.go,
//     knn.go).
//   - The kernels: specialized sgd-prev loops (sgdprev_fast.go, sparse in
//     sgdprev_sparse.go), which call the AVX2/AVX-512 assembly of
//     internal/kernel (each kernel beside the Go reference it matches bit
//     for bit; off amd64 and under the purego tag the references run), a
//     PCG generator (pcg.go) and small dense loops (vec.go).
//   - The registry (registry.go): Algorithm, a named, paper-faithful
//     training algorithm with its paper, reference, setting, tasks,
//     losses, assumptions and, when private, its privacy model and the
//     requirements its proof checks before touching data; Register,
//     Lookup and Algorithms. `pairfed algos` and docs/algorithms.md list
//     it.
//   - The algorithms, which register themselves: the non-private ones of
//     the papers and their baselines (algorithms.go, baselines.go) and
//     the private ones, one file per paper or mechanism (private_y21.go,
//     private_k22.go, private_h20.go, private_x21.go, and pairfed's own
//     private_gd.go, private_lda.go, private_ssp*.go,
//     private_pairsgd*.go). Each private file states its mechanism, its
//     sensitivity argument and its calibration beside the code;
//     private.go holds what they share (Noise, which is dp.Noise, and the
//     PrivacyReport a run returns), calibrate.go the choice between the
//     exact and the paper calibration, delta.go the warning about a large
//     δ, and recommend.go the default private algorithm for a job and
//     why.
//   - The site halves of the federated algorithms (fed*.go): what one site
//     computes, releases and is charged in a phase of a fedalgo
//     algorithm (phases on disjoint subsets, noisy gradient rounds, the
//     pair and SPAUC sums, their sensitivities under secure aggregation).
//     Package fedalgo holds the algorithms themselves.
//
// Randomness is passed in: an algorithm's Run takes a *rand.Rand for
// sampling, and a private one draws its releases from RunConfig.Privacy's
// Noise (dp.NewSecureNoise for private runs; a seeded noise is not private
// and says so).
package pairwise
