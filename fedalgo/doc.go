// Package fedalgo is where a federated algorithm lives: one file per
// algorithm implements Algorithm and registers itself, and nothing else in
// pairfed knows it by name.
//
// # Its place
//
//	cmd/pairfed, simulate ──► coordinator ──► fedalgo ◄── worker
//	                               │             │          │
//	                               └─► protocol ◄┘◄─────────┘
//	                                             │
//	                          dpalgo (the site math: fed*.go), pairwise, dp
//
// The coordinator and the worker packages are the job state machines —
// membership, phases, timeouts, ledgers, checkpoints and resume — and ask
// this package for everything algorithm-specific: the defaults and the
// validation of a job's parameters (Configure), the plan once the sites
// are known (Plan: phases, η, the (ε, δ) every site is charged and its
// per-release sensitivity), the site's release of one phase together
// with the ledger entry it must record first (Site.Step), and the
// coordinator's combination of a phase's updates and the final model
// (Combiner). The protocol package carries an algorithm's name and
// parameters without knowing any algorithm; Register installs the
// algorithm's validator there, so Encode and Decode apply it. The learning
// math stays in packages dpalgo (the private site halves, dpalgo/fed*.go,
// and the single-site private algorithms), algo and pairwise, which the
// algorithm files call; layout_test.go checks by imports that the
// coordinator, the worker, the protocol, the transport, the store and the
// simulation import none of them but pairwise.
//
// # The algorithms
//
//	fed-avg           fedavg.go      [Y21a] Alg 1 (sgd-prev) per site, weighted averaging; not private
//	fed-dp-local-sgd  dplocalsgd.go  [Y21a] Alg 3 per site, phase k on the k-th disjoint subset
//	fed-dpegd         dpegd.go       [X21] Alg 3 per site, epoch i on the i-th disjoint subset
//	fed-dp-gd-grad    dpgdgrad.go    [K22] Alg 1 across sites: noisy site gradients, coordinator steps
//	fed-oneshot       oneshot.go     a private single-site algorithm once per site, averaged
//	fed-dp-ssp        fedssp.go      noisy square-AUC sufficient statistics once per site, summed and solved
//	fed-dp-ssp-mean   fedssp.go      the same with class sums only (class-mean difference)
//	fed-dp-pair-sgd   fedpairsgd.go  auc (fedpairsgd_sum.go): noisy class sums once, then noisy per-record clipped pair gradients summed per round, gradient steps; metric: subsampled noisy previous-instance pair SGD steps per site, averaged per round
//	fed-dp-spauc      fedspauc.go    noisy class sums once, then noisy clipped square-AUC gradient terms per round, summed; CG steps
//
// Each file states the algorithm, its paper and equations, and how a
// site's privacy guarantee arises (which composition, which accountant).
// Adding an algorithm is adding one such file; simulate/toy_test.go adds
// one in a test file alone and runs it end to end.
//
// # Rules an algorithm follows
//
//   - Charge before release: Site.Step returns the Release with the
//     update; the worker makes it durable before the update leaves. A
//     phase is released once (the worker repeats the saved update).
//   - A site's durable state is its partition (Partitioned): a restarted
//     site keeps it, so no record takes part in two phases.
//   - Combiners see the updates in site-name order, so results do not
//     depend on arrival order; robust rules (Aggregate) are
//     post-processing of the releases.
//   - Plans fix everything a site's σ depends on before the first
//     announcement, from public metadata only (the sites' record counts).
//
// Secure aggregation (secure.go, secure_phases.go): an algorithm whose
// phases release sums of site vectors (SumReleaser, SumSite, SumCombiner —
// fed-dp-lda, fed-dp-ssp[-mean], fed-dp-spauc, fed-dp-pair-sgd (auc), fed-dp-gd-grad, fed-dp-local-sgd, fed-dpegd) can run each phase
// as one SecAgg round with the distributed discrete Gaussian.
//
// Package fedprobe holds in-process references of some algorithms for
// benchmarks.
package fedalgo
