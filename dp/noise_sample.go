package dp

import (
	"math"
	"math/bits"
)

// Integer noise samplers. Both return a noise value in units of the grid
// (see noise.go): an integer m, as a sign and a magnitude, that the caller
// scales by the granularity g.
//
// Technique. google/differential-privacy (go/noise/gaussian_noise.go and
// go/noise/laplace_noise.go, Copyright 2020 Google LLC, Apache License 2.0)
// resists floating-point attacks (Mironov, "On significance of the least
// significant bits for differential privacy", CCS 2012) by drawing integer
// noise and scaling it by a power-of-two granularity, after rounding the
// true value to that granularity. We keep that technique and its
// 2^k-granularity snapping, and draw the integers with exact samplers:
//
//   - Gaussian. Their symmetricBinomial is Bringmann et al.'s rejection
//     sampler (a geometric block index, a uniform offset inside the block,
//     acceptance ∝ target/proposal) with the binomial pmf approximated by
//     Lemma 7 of their Secure_Noise_Generation note; the m-dependent factor
//     of that approximation is exp(−2m²/n), so what it samples is a
//     truncated discrete Gaussian. We sample the discrete Gaussian N_ℤ(0, s²)
//     on purpose, with the same block proposal (geometric in e rather than 2
//     so that the acceptance probability is exp(−(γ−k)), a trial drawn
//     exactly by CKS20 Algorithm 1 instead of against a float64 uniform).
//   - Laplace. Their twoSidedGeometric draws a geometric by a float64 binary
//     search; we use CKS20 Algorithm 2 (the discrete Laplace from exact
//     Bernoulli(exp(−u/t)) trials and integer arithmetic only).
//
// CKS20 is Canonne, Kamath and Steinke, "The Discrete Gaussian for
// Differential Privacy", NeurIPS 2020 (arXiv:2004.00010).

// gaussBlocks bounds the Gaussian proposal's block index: proposals cover
// |m| < gaussBlocks·L with L = ⌈1.5 s⌉, i.e. |m| ≤ 36 s (36σ). With
// s < 2^47 that is < 36·2^47 + 24 < 2^53, so every m and every m·g is exact
// in float64.
const gaussBlocks = 24

// gaussBlockLen returns the Gaussian proposal's block length L = ⌈1.5 s⌉.
// L ≥ 1.5 s makes every m in block k ≥ 1 satisfy γ(m) = m²/(2s²) ≥
// 1.125 k² ≥ k + 0.125, so the acceptance probability exp(−(γ−k)) is ≤ 1
// with a margin far above float64 rounding.
func gaussBlockLen(s float64) uint64 { return uint64(math.Ceil(1.5 * s)) }

// discreteGaussian returns m with P(m) ∝ exp(−m²/(2s²)) for integer m with
// −24L ≤ m < 24L (L = gaussBlockLen(s)), as (neg, |m|).
//
// Proposal: a block index k ≥ 0 with P(k) = (1−e⁻¹)e^(−k) (the number of
// successes of exact Bernoulli(e⁻¹) trials before the first failure;
// k ≥ gaussBlocks is rejected), a fair sign, and a uniform offset
// u ∈ [0, L): m = kL+u or m = −(kL+u)−1 (the blocks tile ℤ). So
// q(m) = (1−e⁻¹)e^(−k)/(2L). Acceptance: exp(−(γ(m)−k)) ≤ 1, drawn
// exactly. q(m)·accept(m) = (1−e⁻¹)/(2L)·exp(−γ(m)): the target, up to a
// constant. Acceptance rate per proposal ≈ (1−e⁻¹)·√(2π)s/(2L) ≈ 0.53.
//
// The one inexact quantity is γ(m) = ½(m/s)², computed in float64: m and s
// are exact, and the two roundings (m/s, then the square) give a relative
// error ≤ 3·2^−53 + O(2^−106), so |γ̂ − γ| ≤ 3.0001·2^−53·648.01 < 2.2e-13
// on the support (γ < (24L)²/(2s²) ≤ 648.01 for s ≥ 2^46). The returned m
// therefore has P̂(m) = P(m)·e^(θ(m)) with |θ(m)| ≤ 4.4e-13 (both the
// weight and the normalizer move by at most 2.2e-13 in log), where P is
// N_ℤ(0, s²) conditioned on the support; that conditioning removes mass
// P(|N_ℤ(0, s²)| ≥ 36s) < 1e-280.
func (r *bitSource) discreteGaussian(s float64, L uint64) (neg bool, mag uint64) {
	for {
		k := 0
		for r.expNeg1() {
			k++
			if k == gaussBlocks {
				break
			}
		}
		if k == gaussBlocks {
			continue // block index out of range: reject the proposal
		}
		neg = r.bit()
		mag = uint64(k)*L + r.uint64n(L)
		if neg {
			mag++ // m = −(kL+u)−1
		}
		z := float64(mag) / s // exact operands, one rounding
		if r.expNegShifted(0.5*z*z, k) {
			return neg, mag
		}
	}
}

// discreteLaplace returns m with P(m) ∝ exp(−|m|·2^shift/t) for every
// integer m — the discrete Laplace of scale t/2^shift, exactly and without
// truncation — as (neg, |m|) with |m| = hi·2^64 + lo. It is CKS20
// Algorithm 2 with s = 2^shift:
//
//	U uniform in [0, t); keep it with probability exp(−U/t) (else restart);
//	V = number of exact Bernoulli(e⁻¹) successes before a failure;
//	X = U + tV, so P(X = x) ∝ exp(−x/t) for every integer x ≥ 0;
//	Y = ⌊X/2^shift⌋, so P(Y = y) ∝ exp(−y·2^shift/t);
//	a fair sign, restarting on (−, 0) so that 0 is not counted twice.
//
// X is computed in 128 bits (t < 2^64, V < 2^64), so nothing overflows:
// reaching V = 2^64 would take 2^64 consecutive successful trials.
// Requires 1 ≤ t and 1 ≤ shift ≤ 63.
func (r *bitSource) discreteLaplace(t uint64, shift uint) (neg bool, hi, lo uint64) {
	for {
		u := r.uint64n(t)
		if !r.expNegRatio(u, t) {
			continue
		}
		var v uint64
		for r.expNeg1() {
			v++
		}
		hi, lo = bits.Mul64(t, v)
		var carry uint64
		lo, carry = bits.Add64(lo, u, 0)
		hi += carry
		lo = lo>>shift | hi<<(64-shift)
		hi >>= shift
		neg = r.bit()
		if neg && hi == 0 && lo == 0 {
			continue
		}
		return neg, hi, lo
	}
}
