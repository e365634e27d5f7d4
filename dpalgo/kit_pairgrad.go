package dpalgo

import (
	"math"
	"math/rand/v2"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// dp-pair-sgd's batch sum on sparse data in O(nnz) per pair.
//
// pairSGDBatchSumGeneral builds each pair's gradient in a dense scratch
// vector: zero it, add the pair's two rows, take its norm, add it to g —
// four passes over all d coordinates per pair, although the gradient of
// the linear AUC task, ℓ'(h)·(x_i − x_j), has at most nnz_i + nnz_j
// nonzeros. pairSGDBatchSumSparse computes the same numbers from the two
// rows alone, bit for bit:
//
//   - the score h = x_iᵀw − x_jᵀw (Dataset.Dot's sparse branch, as Score);
//   - the scratch's coordinate c is (0 + a·x_ic) + (−a)·x_jc, the same
//     operations AddScaled does in the same order (a coordinate in one row
//     only is 0 + a·x_ic = a·x_ic);
//   - ‖tmp‖² in dot's order: dot sums even coordinates into one lane and
//     odd ones into the other, left to right, and adds the lanes; the
//     zeros add +0, which changes no partial sum (each is a sum of squares,
//     never −0), so summing the nonzeros in increasing column order into
//     the lane of their column's parity gives the same two sums;
//   - g += f·tmp skips the zeros: g's coordinates are never −0 (they start
//     at +0, and a sum of two floats is −0 only when both are), so adding
//     f·0 = +0 changes nothing.
//
// TestPairSGDBatchSumSparseBitIdentical checks this against the general
// sum over random sparse data, losses and clip norms.

// pairSGDBatchSumSparse is pairSGDBatchSumGeneral for a linear objective
// on CSR data; buf is scratch for the merged pair (grown as needed) and is
// returned.
func pairSGDBatchSumSparse(obj pairwise.Objective, w, g []float64, batch []int, C float64, buf []float64) (int, []float64) {
	clear(g)
	s, loss := obj.Data(), obj.Loss()
	for b := 1; b < len(batch); b++ {
		i, j := batch[b], batch[b-1]
		_, d := loss.Eval(s.Dot(i, w)-s.Dot(j, w), s.Y[i], s.Y[j])
		if d == 0 {
			continue
		}
		a := 1 * d // AddGrad's scale·d with scale 1
		ii, iv := s.SparseRow(i)
		ji, jv := s.SparseRow(j)
		// the merged difference a·x_i − a·x_j, by column, into buf:
		// values only (the columns are re-walked below)
		buf = buf[:0]
		var s0, s1 float64
		p, q := 0, 0
		for p < len(ii) || q < len(ji) {
			var v float64
			var c int32
			switch {
			case q == len(ji) || (p < len(ii) && ii[p] < ji[q]):
				c, v = ii[p], 0+a*iv[p]
				p++
			case p == len(ii) || ji[q] < ii[p]:
				c, v = ji[q], 0+(-a)*jv[q]
				q++
			default: // the same column in both rows
				c, v = ii[p], (0+a*iv[p])+(-a)*jv[q]
				p++
				q++
			}
			buf = append(buf, v)
			if c&1 == 0 {
				s0 += v * v
			} else {
				s1 += v * v
			}
		}
		f := 1.0
		if nrm := math.Sqrt(s0 + s1); nrm > C {
			f = C / nrm
		}
		p, q = 0, 0
		for _, v := range buf {
			var c int32
			switch {
			case q == len(ji) || (p < len(ii) && ii[p] < ji[q]):
				c = ii[p]
				p++
			case p == len(ii) || ji[q] < ii[p]:
				c = ji[q]
				q++
			default:
				c = ii[p]
				p++
				q++
			}
			g[c] += f * v
		}
	}
	return max(len(batch)-1, 0), buf
}

// poissonSample appends to dst the indices in [0, n) that each enter
// independently with probability exactly q (the q the accountant
// certifies): dp.PoissonSubsample, exact Bernoulli(q) coins (blocks of
// 64–256 records counted from the exact Binomial CDF below q = 1/16, else
// compared bit-sliced with q's binary expansion; proofs in
// dp/exactsample.go). The float geometric-skip sampler it replaces,
// ⌊log(u)/log1p(−q)⌋ on a 2⁻⁵³ grid, was not Bernoulli(q)
// (TestOldPoissonSamplerIsInexact), which the subsampled-RDP theorem
// assumes.
func poissonSample(dst []int, n int, q float64, rng *rand.Rand) []int {
	return dp.PoissonSubsample(dst, n, q, rng)
}

// pairSGDBatchSum writes into g the sum over the previous-instance pairs of
// batch (in its order) of the pair gradients clipped to norm C, using tmp
// as scratch; it returns the number of pairs. A linear objective on CSR
// data takes pairSGDBatchSumSparse (O(nnz) per pair, the same bits).
func pairSGDBatchSum(obj pairwise.Objective, w, g, tmp []float64, batch []int, C float64) int {
	if s := obj.Data(); pairwise.IsLinear(obj) && s.X == nil && s.Ptr != nil {
		m, _ := pairSGDBatchSumSparse(obj, w, g, batch, C, tmp[:0]) // a pair has ≤ d nonzeros: tmp never grows
		return m
	}
	return pairSGDBatchSumGeneral(obj, w, g, tmp, batch, C)
}

// pairSGDBatchSumGeneral is pairSGDBatchSum through the Objective
// interface and a dense scratch (the reference).
func pairSGDBatchSumGeneral(obj pairwise.Objective, w, g, tmp []float64, batch []int, C float64) int {
	for k := range g {
		g[k] = 0
	}
	for s := 1; s < len(batch); s++ {
		for k := range tmp {
			tmp[k] = 0
		}
		if !obj.AddGrad(tmp, w, batch[s], batch[s-1], 1) {
			continue
		}
		f := 1.0
		if nrm := pairwise.Norm2(tmp); nrm > C {
			f = C / nrm
		}
		pairwise.Axpy(f, tmp, g)
	}
	return max(len(batch)-1, 0)
}

// pairSGDMultiplier is dp.SecureSubsampledGaussianMultiplier (memoized
// there by all its arguments, concurrent callers of the same arguments
// sharing one search: dp/memo.go); coords is the number of noise
// coordinates the T steps draw from the secure sampler (T·p), whose
// discrete-noise δ term the multiplier leaves room for.
func pairSGDMultiplier(q float64, T int, eps, delta float64, rel dp.Neighbouring, coords int64) (float64, error) {
	return dp.SecureSubsampledGaussianMultiplier(q, T, eps, delta, rel, coords)
}
