// Package dp is pairfed's differential-privacy layer: everything that turns a
// privacy request (ε, δ) into noise, and everything that checks the claim
// afterwards. The learning code in package pairwise decides what to release
// and with which sensitivity; dp decides how much noise that takes, draws it,
// and keeps count. In pairfed privacy is the product, so every guarantee dp
// states is meant to follow from the code and the comments next to it.
//
// Mechanisms (iface.go, noise*.go, rand.go). NewSecureNoise and
// NewSeededNoise implement Noise (pairwise.Noise is this type): Gaussian,
// Laplace and ℓ2-Laplace noise added to a vector, drawn from a Source (a
// stream of uniform 64-bit words). The secure one draws from crypto/rand; the seeded one is
// reproducible and labelled NOT private (Secure() == false), for tests and
// non-private experiments. Gaussian and Laplace noise are exact integer
// samplers (discrete Gaussian and discrete Laplace, after Canonne, Kamath and
// Steinke 2020) scaled by a power-of-two granularity, with the true value
// rounded to the same grid, as google/differential-privacy does against the
// floating-point attack of Mironov (2012); noise.go states the exact
// guarantee, including what the rounding costs (GaussianGranularity,
// LaplaceGranularity, SnappedL2Sensitivity). The ℓ2-Laplace mechanism has no
// floating-point proof, and says so. discrete_gdp.go proves that the
// discrete Gaussian noise is certified by the continuous Gaussian's exact
// Gaussian-DP curve (a total-variation coupling, charged in ε and δ).
// exactsample.go draws Bernoulli trials and Poisson subsamples with
// exactly the requested probability.
//
// Secure aggregation's noise (ddg.go). The distributed discrete Gaussian of
// Kairouz, Liu and Steinke (2021): every site clips, rotates, scales and
// randomly rounds its vector, adds discrete Gaussian noise and reduces it
// modulo 2^b, so that the sum the server unmasks carries noise of at least
// the sites unknown to the adversary; CalibrateDDG sets the per-site scale
// and DDG.Epsilon certifies the releases, sampler deviations included.
//
// Calibration and accountants (calibrate.go, accountant*.go). Calibration
// picks σ or b from (ε, δ) and a sensitivity; CalibrateGaussian is the one
// path every Gaussian private algorithm uses: the smallest σ's whose exact
// Gaussian-DP composition (sequential or over disjoint parts, with a
// failure probability for high-probability sensitivity bounds) certifies
// (ε, δ), and CertifyGaussian the certified (ε, δ) of given σ's.
// Accountants (Compose over the Releases of a run) compose their privacy
// loss (basic and advanced composition, Rényi DP, zCDP, Gaussian DP) and
// convert it back to (ε, δ); accountant_float.go bounds their
// floating-point error, and every formula carries an explicit allowance
// for it.
// The Poisson-subsampled Gaussian (dp-pair-sgd and the metric task of
// fed-dp-pair-sgd) has its own RDP accountant (accountant_subsampled.go,
// add/remove and replace-one; subsampled_secure.go adds the secure
// sampler's deviation), memoized by its public inputs (memo.go).
// Private selection (selection.go) accounts `--tune`'s repeated runs
// (Papernot and Steinke 2022). DefaultDelta is δ = 1/(10n), with why;
// The Check functions (checks.go: CheckEpsilon, CheckDelta, CheckNoiseScale,
// …) are the one range check of a user's privacy parameters, and
// SecretSources (rand.go) the one constructor of a private run's secret
// sampling generator and noise.
//
// Private preprocessing (range.go, range_gdp.go). EstimateRanges releases
// per-feature ranges (one noisy octave histogram per feature, a central
// 2nd–98th percentile interval of the detected bins) for runs without
// public feature bounds; SplitGDP splits a request between it and a
// Gaussian training mechanism for exact Gaussian-DP composition (share of
// μ², certified after training by CertifyWithRanges), SplitBudget for basic
// composition with any other.
//
// What dp does not hold. The durable ledgers that charge a budget before a
// noisy value is released are in package store (written by the
// coordinator and the workers); a run's PrivacyReport, listing every
// release and its σ or b, is pairwise's. The empirical audits (white-box
// and black-box lower bounds on ε from the error rates of a
// distinguishing test, after Kairouz, Oh and Viswanath 2015) are package
// audit.
package dp
