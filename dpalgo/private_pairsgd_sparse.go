package dpalgo

import (
	"github.com/pairfed/pairfed/pairwise"
	"math"
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
