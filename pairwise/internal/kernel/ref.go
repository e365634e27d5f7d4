package kernel

import (
	"math"
	"math/bits"
	"unsafe"
)

// The Go references: what every kernel computes, bit for bit. They run off
// amd64, under the purego tag, and on CPUs without the instructions; the
// assembly is tested against them (kernel_test.go).

// DiffDotGo returns wᵀ(a − b) (len(a), len(b) ≥ len(w)): even terms summed
// left to right in s₀, odd ones in s₁, an odd last term to s₀, then
// s₀ + s₁. It is pairwise's diffDot too (exported for that), and the
// order the AVX kernel reproduces.
func DiffDotGo(w, a, b []float64) float64 {
	a = a[:len(w)]
	b = b[:len(w)]
	var s0, s1 float64
	i := 0
	for ; i+1 < len(w); i += 2 {
		s0 += w[i] * (a[i] - b[i])
		s1 += w[i+1] * (a[i+1] - b[i+1])
	}
	if i < len(w) {
		s0 += w[i] * (a[i] - b[i])
	}
	return s0 + s1
}

// updateFlushGo is DenseUpdate(w, xi, xj, a, r, r2) followed by the flush
// of the averager at the next step, sum += pend·prev and prev = w, in one
// pass (the same operations on each element, so the same results). It sums
// ‖w‖² left to right in the same pass — stepProject's sum exactly, so no
// second pass decides the projection.
func updateFlushGo(w, xi, xj []float64, a, r, r2 float64, sum, prev []float64, pend float64) {
	n := len(xi)
	w, xj, sum, prev = w[:n], xj[:n], sum[:n], prev[:n]
	var n2 float64
	k := 0
	for ; k+4 <= n; k += 4 {
		w4 := (*[4]float64)(w[k:])
		xi4 := (*[4]float64)(xi[k:])
		xj4 := (*[4]float64)(xj[k:])
		sum4 := (*[4]float64)(sum[k:])
		prev4 := (*[4]float64)(prev[k:])
		v0 := w4[0] + a*(xi4[0]-xj4[0])
		v1 := w4[1] + a*(xi4[1]-xj4[1])
		v2 := w4[2] + a*(xi4[2]-xj4[2])
		v3 := w4[3] + a*(xi4[3]-xj4[3])
		sum4[0] += pend * prev4[0]
		sum4[1] += pend * prev4[1]
		sum4[2] += pend * prev4[2]
		sum4[3] += pend * prev4[3]
		w4[0], w4[1], w4[2], w4[3] = v0, v1, v2, v3
		prev4[0], prev4[1], prev4[2], prev4[3] = v0, v1, v2, v3
		n2 += v0 * v0
		n2 += v1 * v1
		n2 += v2 * v2
		n2 += v3 * v3
	}
	for ; k < n; k++ {
		v := w[k] + a*(xi[k]-xj[k])
		w[k] = v
		sum[k] += pend * prev[k]
		prev[k] = v
		n2 += v * v
	}
	if n2 > r2 { // never for r2 = +Inf (no constraint)
		c := r / math.Sqrt(n2)
		for k, v := range w {
			v *= c
			w[k] = v
			prev[k] = v
		}
	}
}

// DenseUpdate does w ← Π(w + a·(x_i − x_j)) for the ℓ2 ball of radius r
// (r2 = r², +Inf for no constraint) — pairwise's linearObjective.stepProject's
// pass,
// which for r2 = +Inf is addDiff's.
//
// stepProject sums ‖w‖² left to right, a chain of d dependent additions;
// here four partial sums run side by side and the left-to-right sum is
// taken only when the result is near the radius. Both sum the same d
// nonnegative terms, so they differ by at most 2γ_{d−1}·‖w‖² (γ_m =
// m·u/(1 − m·u), u = 2⁻⁵³; Higham, Accuracy and Stability, §4.2): when the
// four-way sum is ≤ r²·(1 − 8·d·u), the exact one is < r² and w is not
// projected — the same decision, and otherwise the same n2 and scaling.
// NaN and ±Inf sums take the exact path.
func DenseUpdate(w, xi, xj []float64, a, r, r2 float64) {
	w = w[:len(xi)]
	xj = xj[:len(xi)]
	if math.IsInf(r2, 1) { // no constraint: n2 > +Inf is never true
		for k := range xi {
			w[k] = w[k] + a*(xi[k]-xj[k])
		}
		return
	}
	var s0, s1, s2, s3 float64
	k := 0
	for ; k+3 < len(xi); k += 4 {
		v0 := w[k] + a*(xi[k]-xj[k])
		v1 := w[k+1] + a*(xi[k+1]-xj[k+1])
		v2 := w[k+2] + a*(xi[k+2]-xj[k+2])
		v3 := w[k+3] + a*(xi[k+3]-xj[k+3])
		w[k], w[k+1], w[k+2], w[k+3] = v0, v1, v2, v3
		s0 += v0 * v0
		s1 += v1 * v1
		s2 += v2 * v2
		s3 += v3 * v3
	}
	for ; k < len(xi); k++ {
		v := w[k] + a*(xi[k]-xj[k])
		w[k] = v
		s0 += v * v
	}
	if (s0+s1)+(s2+s3) <= r2*(1-8*float64(len(w))*0x1p-53) {
		return
	}
	var n2 float64
	for _, v := range w {
		n2 += v * v
	}
	if n2 > r2 {
		c := r / math.Sqrt(n2)
		for k := range w {
			w[k] *= c
		}
	}
}

// addRepeatGo does sum[k] += w[k] m times for each k < len(w) — m calls of
// axpy(1, w, sum), whose 1·w[k] is w[k] exactly: the same additions in the
// same order on each element. Four elements' chains run side by side.
func addRepeatGo(sum, w []float64, m int) {
	sum = sum[:len(w)]
	k := 0
	for ; k+4 <= len(w); k += 4 {
		s0, s1, s2, s3 := sum[k], sum[k+1], sum[k+2], sum[k+3]
		w0, w1, w2, w3 := w[k], w[k+1], w[k+2], w[k+3]
		for r := 0; r < m; r++ {
			s0 += w0
			s1 += w1
			s2 += w2
			s3 += w3
		}
		sum[k], sum[k+1], sum[k+2], sum[k+3] = s0, s1, s2, s3
	}
	for ; k < len(w); k++ {
		s, v := sum[k], w[k]
		for r := 0; r < m; r++ {
			s += v
		}
		sum[k] = s
	}
}

// Losses of PrevStepArgs.Loss.
const (
	Hinge  = 0 // dv = −s when 1 − s·h > 0 (or NaN)
	Square = 1 // dv = −2·s·(1 − s·h)
)

// PrevStepArgs are the operands of PrevStep. The assembly
// (sgdprev_amd64.s) reads them at fixed offsets (TestPrevStepArgsLayout).
type PrevStepArgs struct {
	W, Xi, Xj *float64 // 0, 8, 16: w and the pair's rows
	Pa, Pb    *float64 // 24, 32: rows to prefetch (a hint)
	Sum, Prev *float64 // 40, 48: the averager's (Flush = 1)
	N         int      // 56: d ≥ 1, the length of W, Xi, Xj, Sum and Prev
	PLen      int      // 64: the prefetched rows' length
	S         float64  // 72: (y_i − y_j)/2
	Eta       float64  // 80
	Pend      float64  // 88: the flush's pending weight
	R, R2     float64  // 96, 104
	Loss      int      // 112: Hinge or Square
	Flush     int      // 120: 1: updateFlush, 0: DenseUpdate
}

// prevStepGo is one active step of the hinge or square loss: h =
// diffDot(w, xi, xj); dv from the loss; if dv ≠ 0 (NaN included), the
// update with a = (−η)·dv — updateFlushGo (Flush = 1) or DenseUpdate
// (Flush = 0) — and it reports true. The prefetch is a hint and is skipped.
func prevStepGo(p *PrevStepArgs) bool {
	n := p.N
	w, xi, xj := unsafe.Slice(p.W, n), unsafe.Slice(p.Xi, n), unsafe.Slice(p.Xj, n)
	s := p.S
	h := DiffDotGo(w, xi, xj)
	var dv float64
	if p.Loss == Hinge {
		if m := 1 - s*h; !(m <= 0) {
			dv = -s
		}
	} else {
		dv = -2 * s * (1 - s*h)
	}
	if dv == 0 {
		return false
	}
	a := -p.Eta * dv
	if p.Flush != 0 {
		updateFlushGo(w, xi, xj, a, p.R, p.R2, unsafe.Slice(p.Sum, n), unsafe.Slice(p.Prev, n), p.Pend)
	} else {
		DenseUpdate(w, xi, xj, a, p.R, p.R2)
	}
	return true
}

// logisticChunkSumsGo is LogisticChunkSums in Go. out[k] sums four lanes
// (l mod 4) over the first len(v) &^ 3 entries, combined as
// (s₀ + s₂) + (s₁ + s₃), then the rest in order: the order of four-wide
// vector code, and four independent divisions in flight.
func logisticChunkSumsGo(u, v, in, out []float64) {
	in = in[:len(v)]
	m := len(v) &^ 3
	for k, e := range u {
		var s0, s1, s2, s3 float64
		for l := 0; l < m; l += 4 {
			vv, ii := v[l:l+4:l+4], in[l:l+4:l+4]
			c0 := 4 / (1 + e*vv[0])
			c1 := 4 / (1 + e*vv[1])
			c2 := 4 / (1 + e*vv[2])
			c3 := 4 / (1 + e*vv[3])
			s0 += c0
			s1 += c1
			s2 += c2
			s3 += c3
			ii[0] += c0
			ii[1] += c1
			ii[2] += c2
			ii[3] += c3
		}
		s := (s0 + s2) + (s1 + s3)
		for l := m; l < len(v); l++ {
			c := 4 / (1 + e*v[l])
			s += c
			in[l] += c
		}
		out[k] = s
	}
}

// pcgAffine returns s·m + c mod 2¹²⁸ for s = hi·2⁶⁴ + lo and m, c given as
// halves (pairwise's pcgAffine).
func pcgAffine(hi, lo, mHi, mLo, cHi, cLo uint64) (uint64, uint64) {
	h, l := bits.Mul64(lo, mLo)
	h += hi*mLo + lo*mHi
	l, c := bits.Add64(l, cLo, 0)
	return h + cHi + c, l
}

// pcgOutput is PCG-DXSM's output of the state hi·2⁶⁴ + lo (pairwise's
// pcgOutput).
func pcgOutput(hi, lo uint64) uint64 {
	hi ^= hi >> 32
	hi *= 0xda942042e4dd58b5
	hi ^= hi >> 48
	return hi * (lo | 1)
}

// pcgStep8 moves the eight states of lanes (high halves, then low) by
// s ↦ s·M + C with jump = {M high, M low, C high, C low}.
func pcgStep8(lanes *[16]uint64, jump *[4]uint64) {
	for i := range 8 {
		lanes[i], lanes[8+i] = pcgAffine(lanes[i], lanes[8+i], jump[0], jump[1], jump[2], jump[3])
	}
}

// pcgFill8Go is PCGFill8 in Go: for each group of eight, the outputs of
// the lanes, then (if more groups follow) every lane moved by jump.
func pcgFill8Go(lanes *[16]uint64, dst []uint64, jump *[4]uint64) {
	for k := 0; ; {
		g := dst[k : k+8 : k+8]
		for i := range g {
			g[i] = pcgOutput(lanes[i], lanes[8+i])
		}
		if k += 8; k >= len(dst) {
			return
		}
		pcgStep8(lanes, jump)
	}
}

// pcgDraw8Go is PCGDraw8 in Go.
func pcgDraw8Go(lanes *[16]uint64, dst []int, raw []uint64, jump *[4]uint64, n, limit uint64) int {
	var x [8]uint64
	for k := 0; ; {
		bail := false
		for i := range x {
			x[i] = pcgOutput(lanes[i], lanes[8+i])
			if _, lo := bits.Mul64(x[i], n); lo < limit {
				bail = true
			}
		}
		if bail {
			copy(raw[k:k+8], x[:])
			return k
		}
		g := dst[k : k+8 : k+8]
		for i := range g {
			hi, _ := bits.Mul64(x[i], n)
			g[i] = int(hi)
		}
		if k += 8; k >= len(dst) {
			return k
		}
		pcgStep8(lanes, jump)
	}
}
