package kernel

import "math"

// CholLowerGo is CholLower's reference. It replaces the lower triangle of
// the d×d row-major matrix in l (a symmetric M; the upper triangle is not
// read) by its Cholesky factor L (M = LLᵀ), writes Lᵀ into the upper
// triangle (l[j·d + i] = L_ij: the factor's columns as contiguous rows, for
// CholSolve and the AVX2 factorization), and reports whether M is
// numerically positive definite (every pivot > 0 and finite; on false, l is
// partly overwritten). Entry (i, j) of L is
//
//	L_ij = (M_ij − dot(L_j[:j], L_i[:j])) / L_jj,   L_ii = √(M_ii − dot(L_i[:i], L_i[:i]))
//
// with dot's summation: even-indexed terms in one sum and odd-indexed ones
// in another, each in index order, added at the end. Entries of a row are
// computed four at a time (cholRow4): the same values, bit for bit, as one
// dot per entry.
func CholLowerGo(l []float64, d int) bool { return cholLower(l, d, false) }

// cholLower is CholLowerGo (recip false) and CholLowerRecipGo (recip true):
// one recurrence, whose only difference is the pivot step (pivot) and the
// diagonal it stores (L_ii or 1/L_ii).
func cholLower(l []float64, d int, recip bool) bool {
	l = l[:d*d]
	for i := 0; i < d; i++ {
		ri := l[i*d : i*d+i+1]
		j := 0
		for ; j+4 <= i; j += 4 {
			cholRow4(l, d, ri, j, recip)
		}
		for ; j < i; j++ {
			ri[j] = pivot(ri[j]-dot(l[j*d:j*d+j], ri[:j]), l[j*d+j], recip)
		}
		for j := 0; j < i; j++ {
			l[j*d+i] = ri[j]
		}
		s := ri[i] - dot(ri[:i], ri[:i])
		if !(s > 0) || math.IsInf(s, 0) {
			return false
		}
		if recip {
			ri[i] = 1 / math.Sqrt(s)
		} else {
			ri[i] = math.Sqrt(s)
		}
	}
	return true
}

// pivot is v/p, or v·p when the factor stores reciprocal pivots (p is
// then 1/L_jj): the one step where the two factorizations differ.
func pivot(v, p float64, recip bool) float64 {
	if recip {
		return v * p
	}
	return v / p
}

// cholRow4 computes L_{i,j…j+3} (j even, j+3 < i) into ri, row i of l (or
// a vector being solved for, in cholSolve), from the rows j…j+3 of L
// above it: entry c is (M_ic − dot(L_c[:c], L_i[:c]))/L_cc (with recip,
// times the stored 1/L_cc) with dot's own
// summation (even terms in one sum, odd terms in another, each in order,
// added at the end), the four sums over the common prefix [:j] sharing
// their loads and overlapping their additions, and the short tails added
// in dot's order.
func cholRow4(l []float64, d int, ri []float64, j int, recip bool) {
	r0 := l[j*d : j*d+j+1]
	r1 := l[(j+1)*d : (j+1)*d+j+2]
	r2 := l[(j+2)*d : (j+2)*d+j+3]
	r3 := l[(j+3)*d : (j+3)*d+j+4]
	x := ri[:j]
	r0, r1, r2, r3 = r0[:len(r0):len(r0)], r1[:len(r1):len(r1)], r2[:len(r2):len(r2)], r3[:len(r3):len(r3)]
	var a0, b0, a1, b1, a2, b2, a3, b3 float64
	for c := 0; c+1 < len(x); c += 2 {
		xe, xo := x[c], x[c+1]
		a0 += r0[c] * xe
		b0 += r0[c+1] * xo
		a1 += r1[c] * xe
		b1 += r1[c+1] * xo
		a2 += r2[c] * xe
		b2 += r2[c+1] * xo
		a3 += r3[c] * xe
		b3 += r3[c+1] * xo
	}
	// j is even: the tail's index j is an even term, j+1 odd, j+2 even.
	v0 := pivot(ri[j]-(a0+b0), r0[j], recip)
	ri[j] = v0
	a1 += r1[j] * v0
	v1 := pivot(ri[j+1]-(a1+b1), r1[j+1], recip)
	ri[j+1] = v1
	a2 += r2[j] * v0
	b2 += r2[j+1] * v1
	v2 := pivot(ri[j+2]-(a2+b2), r2[j+2], recip)
	ri[j+2] = v2
	a3 += r3[j] * v0
	b3 += r3[j+1] * v1
	a3 += r3[j+2] * v2
	ri[j+3] = pivot(ri[j+3]-(a3+b3), r3[j+3], recip)
}

// CholSolveGo is CholSolve's reference: x ← (LLᵀ)⁻¹x for the factor
// CholLowerGo left in l (len(x) ≥ d). The forward substitution
// y_i = (x_i − dot(L_i[:i], y[:i]))/L_ii is cholRow4's recurrence with x in
// the place of a row of L, four entries at a time; the backward one is
// x_i ← x_i/L_ii, then x[:i] −= x_i·L_i[:i] entry by entry (an axpy).
func CholSolveGo(l []float64, d int, x []float64) { cholSolve(l, d, x, false) }

// cholSolve is CholSolveGo (recip false) and CholSolveRecipGo (recip true).
func cholSolve(l []float64, d int, x []float64, recip bool) {
	x = x[:d]
	i := 0
	for ; i+4 <= d; i += 4 {
		cholRow4(l, d, x, i, recip)
	}
	for ; i < d; i++ {
		x[i] = pivot(x[i]-dot(l[i*d:i*d+i], x[:i]), l[i*d+i], recip)
	}
	for i := d - 1; i >= 0; i-- {
		x[i] = pivot(x[i], l[i*d+i], recip)
		a, row := -x[i], l[i*d:i*d+i]
		y := x[:i]
		for k, v := range row {
			y[k] += a * v
		}
	}
}

// dot is Σ a_i·b_i with even-indexed terms in one sum and odd-indexed ones
// in another, each in order, added at the end (pairwise's dot).
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1 float64
	i := 0
	for ; i+1 < len(a); i += 2 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
	}
	if i < len(a) {
		s0 += a[i] * b[i]
	}
	return s0 + s1
}

// CopyNoNaNGo is CopyNoNaN's reference: dst[i] = src[i] for every i
// (len(dst) ≥ len(src)), and whether no src[i] is NaN.
func CopyNoNaNGo(dst, src []float64) bool {
	dst = dst[:len(src)]
	ok := true
	for i, v := range src {
		dst[i] = v
		if v != v {
			ok = false
		}
	}
	return ok
}

// MatVec4Go is MatVec4's reference: y_r = dot(W_r, x) for the four rows
// W_r = w[r·d : r·d+d], r = 0…3 (len(w) ≥ 4d, len(x) ≥ d), each with dot's
// summation (even-indexed terms in one sum, odd ones in another, each in
// order, the last term of an odd d into the even sum, added at the end).
func MatVec4Go(w []float64, d int, x []float64, y *[4]float64) {
	for r := 0; r < 4; r++ {
		y[r] = dot(w[r*d:r*d+d], x[:d])
	}
}

// CholLowerRecipGo is CholLowerRecip's reference: CholLowerGo's
// factorization with reciprocal pivots. The diagonal of l receives
// 1/L_ii = 1/√(M_ii − dot(L_i[:i], L_i[:i])) instead of L_ii, and each
// off-diagonal entry is
//
//	L_ij = (M_ij − dot(L_j[:j], L_i[:j])) · (1/L_jj)
//
// (a multiplication where CholLowerGo divides; the sums are the same, four
// entries at a time: cholLower with recip). The mirror Lᵀ goes to the upper
// triangle as in CholLowerGo. The result differs from CholLowerGo's in the
// last bits (one more rounding per entry, for the reciprocal), and takes
// the divisions off the dependent chains of the recurrence. It reports
// whether every pivot is > 0 and finite. Only CholSolveRecipGo (and
// CholSolveRecip) may use this factor.
func CholLowerRecipGo(l []float64, d int) bool { return cholLower(l, d, true) }

// CholSolveRecipGo is CholSolveRecip's reference: x ← (LLᵀ)⁻¹x for the
// factor CholLowerRecipGo left in l (diagonal 1/L_ii): CholSolveGo's
// substitutions with each division by L_ii a multiplication by the stored
// 1/L_ii.
func CholSolveRecipGo(l []float64, d int, x []float64) { cholSolve(l, d, x, true) }
