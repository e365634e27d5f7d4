// Package pairwise is pairfed's learning core: pairwise learning — AUC
// maximization (bipartite ranking) and similarity metric learning — on
// data held in memory, with no I/O and no clock. The data package builds
// its Datasets from files; the CLI, the experiments and the federation
// call into it.
//
// It holds the vocabulary and the engine, and registers no algorithm:
//
//   - The vocabulary. Dataset (dense or CSR) and its index views
//     (dataset.go, view.go); Task and Loss, each loss declaring its
//     Lipschitz constant G, smoothness L and convexity in terms of the
//     feature radius R and parameter radius B (loss.go); Objective, the
//     linear (w ∈ R^d) or metric (W ∈ S^d) model of a loss (objective.go,
//     metric.go); projections onto the ℓ2 ball and the Frobenius and
//     nuclear-norm balls intersected with the PSD cone, with the proofs
//     that they are exact (projection.go, psd.go).
//   - The engine. Pair samplers (samplers.go); step-size schedules,
//     iterate averaging (Averager), checkpoints and the general SGD loop
//     RunPairSGD (sgd.go); the specialized sgd-prev loops behind
//     RunPrevSGD (sgdprev_fast.go, sparse in sgdprev_sparse.go), which call
//     the AVX2/AVX-512 assembly of internal/kernel (each kernel beside the
//     Go reference it matches bit for bit; off amd64 and under the purego
//     tag the references run); full pairwise gradients (fullgrad.go); the
//     empirical pairwise risk (risk.go); AUC, ROC and KNN accuracy
//     (metrics.go, knn.go); a PCG generator (pcg.go) and small dense loops
//     (vec.go: Dot, Axpy, Scale).
//   - The registry (registry.go): Algorithm, a named, paper-faithful
//     training algorithm with its paper, reference, setting, tasks,
//     losses, assumptions and, when private, its privacy model and the
//     requirements its proof checks before touching data; Register,
//     Lookup and Algorithms; PrivateSetup (the checks every private run
//     makes of its request against its Algorithm before reading a
//     record); and certifiedRun, the wrapper Register puts around every
//     private algorithm so that a report whose certificate exceeds the
//     request is refused. `pairfed algos` and docs/algorithms.md list
//     it. The algorithms live in package algo (non-private) and package
//     dpalgo (private), which register themselves; package algo/all
//     imports both.
//   - The privacy request and report (private.go): Privacy (ε, δ, R, the
//     noise source, the Calibration), Requirements and PrivacyReport; and
//     the certifier (calibrate.go): CalibrateGaussian and
//     CalibrateLaplace choose a run's noise under --calibration exact or
//     paper and certify it with the exact accountant of package dp.
//     DeltaWarning (delta.go) warns about a large δ.
//
// Randomness is passed in: an algorithm's Run takes a *rand.Rand for
// sampling, and a private one draws its releases from RunConfig.Privacy's
// Noise (dp.NewSecureNoise for private runs; a seeded noise is not private
// and says so).
package pairwise
