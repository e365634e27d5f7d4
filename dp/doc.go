// Package dp is pairfed's differential-privacy layer: everything that turns a
// privacy request (ε, δ) into noise, and everything that checks the claim
// afterwards. The learning code in package pairwise decides what to release
// and with which sensitivity; dp decides how much noise that takes, draws it,
// and keeps count. In pairfed privacy is the product, so every guarantee dp
// states is meant to follow from the code and the comments next to it.
//
// Mechanisms (noise*.go, rand*.go). NewSecureNoise and NewSeededNoise
// implement pairwise.Noise: Gaussian, Laplace and ℓ2-Laplace noise added to a
// vector. The secure one draws from crypto/rand; the seeded one is
// reproducible and labelled NOT private (Secure() == false), for tests and
// non-private experiments. Gaussian and Laplace noise are exact integer
// samplers (discrete Gaussian and discrete Laplace, after Canonne, Kamath and
// Steinke 2020) scaled by a power-of-two granularity, with the true value
// rounded to the same grid, as google/differential-privacy does against the
// floating-point attack of Mironov (2012); noise.go states the exact
// guarantee, including what the rounding costs (GaussianGranularity,
// LaplaceGranularity, SnappedL2Sensitivity). The ℓ2-Laplace mechanism has no
// floating-point proof, and says so.
//
// Calibration and accountants (calibrate.go, accountant*.go). Calibration
// picks σ or b from (ε, δ) and a sensitivity; CalibrateGaussian is the one
// path every Gaussian private algorithm uses: the smallest σ's whose exact
// Gaussian-DP composition (sequential or over disjoint parts, with a
// failure probability for high-probability sensitivity bounds) certifies
// (ε, δ), and CertifyGaussian the certified (ε, δ) of given σ's.
// Accountants compose the privacy loss of all the releases of a run (basic
// composition, Rényi DP, zCDP, Gaussian DP) and convert it back to (ε, δ).
//
// Private preprocessing (range.go, range_gdp.go). EstimateRanges releases
// per-feature ranges (one noisy octave histogram per feature, a central
// 2nd–98th percentile interval of the detected bins) for runs without
// public feature bounds; SplitGDP splits a request between it and a
// Gaussian training mechanism for exact Gaussian-DP composition (share of
// μ², certified after training by CertifyWithRanges), SplitBudget for basic
// composition with any other.
//
// Ledger. A run's budget is charged before a noisy value is released, and a
// value is released once: the ledger records each charge so that the
// PrivacyReport of a run can list every release and its σ or b.
//
// Audit (audit.go). An empirical check of the claim: run the real mechanism
// on neighbouring datasets many times, and turn the error rates of the best
// distinguishing test into a lower bound on ε (Kairouz, Oh and Viswanath
// 2015). A correct mechanism has lower bound ≤ claimed ε; too little noise
// shows up as a violation.
package dp
