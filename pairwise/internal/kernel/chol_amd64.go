//go:build !purego

package kernel

import "math"

//go:noescape
func cholRowAVX(l *float64, d int, ri *float64, j0, n int, col int)

//go:noescape
func cholRow4AVX(l *float64, d int, ri *float64, n int, col int)

//go:noescape
func cholBackAVX(l *float64, d int, x *float64)

// CholLower computes CholLowerGo's factor (and its mirror in the upper
// triangle), bit for bit: with AVX2 each row's entries come from
// cholRowAVX (chol_amd64.s), rows 4m…4m+3 sharing their full blocks in
// cholRow4AVX, which sums the four dot products of a block
// over their common prefix in the lanes of two YMM registers (even and odd
// terms), reading the factor's columns from the mirror, then finishes the
// block in scalar code in cholRow4's order; the diagonal is dot's.
func CholLower(l []float64, d int) bool {
	if !UseAVX2 || d < 1 {
		return CholLowerGo(l, d)
	}
	return cholLowerAVX(l, d, false)
}

// cholLowerAVX is CholLower (recip false) and CholLowerRecip (recip true)
// with AVX2: the same loop over rows, with the division or the
// reciprocal-pivot row kernels and L_ii or 1/L_ii on the diagonal.
func cholLowerAVX(l []float64, d int, recip bool) bool {
	row, row4 := cholRowAVX, cholRow4AVX
	if recip {
		row, row4 = cholRowRecipAVX, cholRow4RecipAVX
	}
	l = l[:d*d]
	for i := 0; i < d; i++ {
		// Rows 4m…4m+3 share their full blocks (j + 4 ≤ 4m): row4 runs
		// the four rows' chains side by side; the rows after the last
		// such quad go alone.
		j0 := 0
		if q := i &^ 3; q+3 < d {
			j0 = q
			if i == q && q > 0 {
				row4(&l[0], d, &l[i*d], q, i)
			}
		}
		ri := l[i*d : i*d+i+1]
		if i > j0 {
			row(&l[0], d, &ri[0], j0, i, i)
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

// CholSolve computes CholSolveGo's solution bit for bit: with AVX2 the
// forward substitution is cholRowAVX on x (n = d, no mirror) and the
// backward one cholBackAVX (the axpy four lanes at a time, x_k − x_i·L_ik
// per lane, which equals the reference's x_k + (−x_i)·L_ik exactly).
func CholSolve(l []float64, d int, x []float64) {
	if !UseAVX2 || d < 1 {
		CholSolveGo(l, d, x)
		return
	}
	l, x = l[:d*d], x[:d]
	cholRowAVX(&l[0], d, &x[0], 0, d, -1)
	cholBackAVX(&l[0], d, &x[0])
}

//go:noescape
func copyNoNaNAVX(dst, src []float64) bool

// CopyNoNaN does CopyNoNaNGo (the copy and the verdict): with AVX2 four
// values per instruction (copyNoNaNAVX, an unordered self-compare per lane
// collected in one mask).
func CopyNoNaN(dst, src []float64) bool {
	if !UseAVX2 {
		return CopyNoNaNGo(dst, src)
	}
	if len(dst) < len(src) {
		panic("kernel: CopyNoNaN: dst shorter than src")
	}
	return copyNoNaNAVX(dst, src)
}

//go:noescape
func matVec4AVX(w *float64, d int, x *float64, y *[4]float64)

// MatVec4 computes MatVec4Go's four sums bit for bit: with AVX2 the even
// and odd sums of two rows sit in the four lanes of one YMM register
// ([s0, s1] of row r, then of row r+1), so each lane is one of dot's two
// chains in its order (matVec4AVX).
func MatVec4(w []float64, d int, x []float64, y *[4]float64) {
	if !UseAVX2 || d < 1 {
		MatVec4Go(w, d, x, y)
		return
	}
	if len(w) < 4*d || len(x) < d {
		panic("kernel: MatVec4: w shorter than 4·d or x shorter than d")
	}
	matVec4AVX(&w[0], d, &x[0], y)
}

//go:noescape
func cholRowRecipAVX(l *float64, d int, ri *float64, j0, n int, col int)

//go:noescape
func cholRow4RecipAVX(l *float64, d int, ri *float64, n int, col int)

//go:noescape
func cholBackRecipAVX(l *float64, d int, x *float64)

// CholLowerRecip computes CholLowerRecipGo's factor bit for bit: CholLower's
// loop (cholLowerAVX) with the reciprocal-pivot kernels (chol_recip_amd64.s, the same
// instructions with each division by a pivot a multiplication by the
// stored 1/L_jj) and 1/√s on the diagonal.
func CholLowerRecip(l []float64, d int) bool {
	if !UseAVX2 || d < 1 {
		return CholLowerRecipGo(l, d)
	}
	return cholLowerAVX(l, d, true)
}

// CholSolveRecip computes CholSolveRecipGo's solution bit for bit (the
// reciprocal-pivot forward row and backward axpy kernels).
func CholSolveRecip(l []float64, d int, x []float64) {
	if !UseAVX2 || d < 1 {
		CholSolveRecipGo(l, d, x)
		return
	}
	l, x = l[:d*d], x[:d]
	cholRowRecipAVX(&l[0], d, &x[0], 0, d, -1)
	cholBackRecipAVX(&l[0], d, &x[0])
}
