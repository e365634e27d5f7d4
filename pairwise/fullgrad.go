package pairwise

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"
)

// batchGradienter is implemented by objectives that compute the exact full
// gradient faster than the O(n²·p) loop over pairs.
type batchGradienter interface {
	// lossGradient writes 1/(n(n−1)) Σ_{i≠j} ∇f(w; z_i, z_j) into g and
	// reports whether it handled the call.
	lossGradient(w, g []float64) bool
}

// FullGradient writes ∇F_S(w) = 1/(n(n−1)) Σ_{i≠j} ∇f(w; z_i, z_j) + λw into g.
func FullGradient(obj Objective, w, g []float64) {
	n := obj.Data().N
	bg, ok := obj.(batchGradienter)
	if !ok || !bg.lossGradient(w, g) {
		for k := range g {
			g[k] = 0
		}
		inv := 1 / float64(n*(n-1))
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if i != j {
					obj.AddGrad(g, w, i, j, inv)
				}
			}
		}
	}
	if l := obj.Lambda(); l != 0 {
		axpy(l, w, g)
	}
}

// lossGradient for the linear scorer: with s = Xw, h_ij = s_i − s_j and
// Σ_{i≠j} c_ij (x_i − x_j) = Xᵀa with a_i = Σ_j c_ij − Σ_j c_ji:
// O(n² + n·d) instead of O(n²·d). Every AUC loss has zero gradient on
// same-label pairs (TestAUCLossesIgnoreSameLabelPairs), so only the
// positive–negative pairs are visited, each ordered pair once. The hinge
// and square losses skip even that: aucFastGradient (private_gd.go) sums
// them in O(n·d + n log n); the logistic loss visits each unordered pair
// once, with one exp (the two orders' derivatives are ±2σ(−2h)).
func (o *linearObjective) lossGradient(w, g []float64) bool {
	if aucFastGradient(o, w, g) {
		return true
	}
	s := o.data
	n := s.N
	buf := gradScratchPool.Get().(*gradScratch)
	defer gradScratchPool.Put(buf)
	sc := ScoresTo(growZero(&buf.sc, n), w, s)
	a := growZero(&buf.a, n)
	pos, neg := buf.pos[:0], buf.neg[:0]
	for i, y := range s.Y {
		if y > 0 {
			pos = append(pos, i)
		} else {
			neg = append(neg, i)
		}
	}
	buf.pos, buf.neg = pos, neg
	if _, ok := o.loss.(AUCLogistic); ok {
		// For i ∈ P, j ∈ N: ∂f/∂h(i, j) = −2σ(−2h_ij) and
		// ∂f/∂h(j, i) = +2σ(−2h_ij) with h_ji = −h_ij, so
		// a_i gains −4σ(−2h_ij) and a_j loses it.
		if !logisticAUCCoefs(sc, pos, neg, a, buf) {
			for _, i := range pos {
				si := sc[i]
				var ai float64
				for _, j := range neg {
					c := 4 * sigmoidNeg(2*(si-sc[j]))
					ai -= c
					a[j] += c
				}
				a[i] += ai
			}
		}
		pos = nil // the loop below has nothing left to do
	}
	deriv := derivFunc(o.loss)
	for _, i := range pos {
		for _, j := range neg {
			// (i, j) and (j, i): h_ji = −h_ij.
			if c := deriv(sc[i]-sc[j], 1, -1); c != 0 {
				a[i] += c
				a[j] -= c
			}
			if c := deriv(sc[j]-sc[i], -1, 1); c != 0 {
				a[j] += c
				a[i] -= c
			}
		}
	}
	for k := range g {
		g[k] = 0
	}
	inv := 1 / float64(n*(n-1))
	for i := 0; i < n; i++ {
		if a[i] != 0 {
			s.AddScaled(g, i, a[i]*inv)
		}
	}
	return true
}

// gradScratch holds a linear full gradient's per-record buffers between
// calls (pgd, dpegd and the other full-batch algorithms take thousands of
// gradients of one dataset): no allocation per gradient once warm.
type gradScratch struct {
	sc, a, u, v, in, part []float64
	pos, neg              []int
}

var gradScratchPool = sync.Pool{New: func() any { return new(gradScratch) }}

// growZero sets *b to n zeros, reusing its array when large enough.
func growZero(b *[]float64, n int) []float64 {
	if cap(*b) < n {
		*b = make([]float64, n)
	} else {
		*b = (*b)[:n]
		clear(*b)
	}
	return *b
}

// logisticMaxScore bounds |s_i| for logisticAUCCoefs' product form: with
// |2s| ≤ 350, e^{±2s} and every product x = e^{2s_i}·e^{−2s_j} lie in
// [e^{−700}, e^{700}] (normal doubles), 1 + x does not overflow and
// 4/(1 + x) ≥ 4e^{−700} is normal, so no term underflows or overflows
// where 4·sigmoidNeg(2h) does not; where 1 + x rounds to 1 both give
// exactly 4. Larger scores (unconstrained runs far from 0) take the per-pair
// exp path.
const logisticMaxScore = 175

// Chunking of logisticAUCCoefs' inner class: fixed by the class size alone
// (never by the core count), so the summation order, and so every bit of
// the result, is the same on any machine. A chunk's inner values and sums
// (2·8 KiB at 512) stay in L1.
const (
	logisticChunk     = 512
	logisticMaxChunks = 64
	logisticParPairs  = 1 << 16 // below this many pairs, one goroutine
)

// logisticAUCCoefs adds to a (indexed like sc) the coefficients of the
// logistic AUC gradient over all positive–negative pairs: a_i −= c_ij,
// a_j += c_ij with
//
//	c_ij = 4σ(−2(s_i − s_j)) = 4/(1 + e^{2s_i}·e^{−2s_j}),
//
// i ∈ P, j ∈ N. The exponentials are taken once per record (n exps instead
// of n₊n₋), so a pair costs a multiply, an add and a divide. Equal to
// 4·sigmoidNeg(2(s_i − s_j)) up to a relative (|2h| + 4)·2⁻⁵³ per term
// (exp's rounding and the rounding of s_i − s_j); every term is positive, so
// the sums carry no cancellation. TestLogisticAUCCoefsMatchExp checks it.
//
// The smaller class is the outer loop, the larger the inner one, split
// into chunks of logisticChunk records (at most logisticMaxChunks); each
// chunk keeps its inner sums and a partial sum per outer record, reduced in
// chunk order. Chunks run on up to GOMAXPROCS goroutines; the result does
// not depend on how many. It reports false (a untouched) when a score is
// outside ±logisticMaxScore or NaN.
func logisticAUCCoefs(sc []float64, pos, neg []int, a []float64, buf *gradScratch) bool {
	for _, s := range sc {
		if !(math.Abs(s) <= logisticMaxScore) {
			return false
		}
	}
	outer, inner := pos, neg
	so, si := 2.0, -2.0 // u_k = e^{so·s}, v_l = e^{si·s}
	if len(pos) > len(neg) {
		outer, inner = neg, pos
		so, si = -2, 2
	}
	no, ni := len(outer), len(inner)
	if no == 0 || ni == 0 {
		return true
	}
	u := growZero(&buf.u, no)
	for k, i := range outer {
		u[k] = math.Exp(so * sc[i])
	}
	v := growZero(&buf.v, ni)
	for l, j := range inner {
		v[l] = math.Exp(si * sc[j])
	}
	cs := max(logisticChunk, (ni+logisticMaxChunks-1)/logisticMaxChunks)
	nq := (ni + cs - 1) / cs
	inSum := growZero(&buf.in, ni)
	part := growZero(&buf.part, nq*no)
	chunk := func(q int) {
		lo, hi := q*cs, min(ni, (q+1)*cs)
		logisticChunkSums(u, v[lo:hi], inSum[lo:hi], part[q*no:(q+1)*no])
	}
	workers := min(runtime.GOMAXPROCS(0), nq)
	if workers <= 1 || no*ni < logisticParPairs {
		for q := 0; q < nq; q++ {
			chunk(q)
		}
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for q := int(next.Add(1)) - 1; q < nq; q = int(next.Add(1)) - 1 {
					chunk(q)
				}
			}()
		}
		wg.Wait()
	}
	sgn := -1.0 // the outer class's sign: −c for positives
	if len(pos) > len(neg) {
		sgn = 1
	}
	for k, i := range outer {
		var s float64
		for q := 0; q < nq; q++ {
			s += part[q*no+k]
		}
		a[i] += sgn * s
	}
	for l, j := range inner {
		a[j] -= sgn * inSum[l]
	}
	return true
}

// logisticChunkSums adds c_kl = 4/(1 + u_k·v_l) over l to out[k] (which it
// sets) and over k to in[l]: logisticChunkAVX where the CPU has AVX
// (fullgrad_amd64.go), else logisticChunkSumsGo; both give the same bits.
var logisticChunkSums = logisticChunkSumsGo

// logisticChunkSumsGo is logisticChunkSums in Go. out[k] sums four lanes
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

// derivFunc returns ∂f/∂h of the loss, without the value when the loss can
// skip it (the logistic loss then costs one exp instead of exp + log1p).
func derivFunc(l Loss) func(h, y, y2 float64) float64 {
	if d, ok := l.(interface {
		Deriv(h, y, y2 float64) float64
	}); ok {
		return d.Deriv
	}
	return func(h, y, y2 float64) float64 {
		_, c := l.Eval(h, y, y2)
		return c
	}
}

// maxBatchN bounds the n×n matrices of the metric batch gradient (2 of
// them: 2·4096²·8 B = 256 MiB); larger samples use the pair loop.
const maxBatchN = 4096

// lossGradient for the metric model on dense data: with K = XWXᵀ,
// h_ij = K_ii + K_jj − 2K_ij, c_ij = ∂f/∂h, and
// Σ_{i≠j} c_ij (x_i − x_j)(x_i − x_j)ᵀ = Xᵀ(D − C − Cᵀ)X,
// D = diag(Σ_j c_ij + c_ji): O(n²·d + n·d²) instead of O(n²·d²).
func (o *metricObjective) lossGradient(w, g []float64) bool {
	s := o.data
	n, d := s.N, s.D
	if s.X == nil || n > maxBatchN {
		return false
	}
	X := mat.NewDense(n, d, s.X)
	W := mat.NewDense(d, d, w)
	var XW mat.Dense
	XW.Mul(X, W)
	K := mat.NewDense(n, n, nil)
	K.Mul(&XW, X.T())
	A := mat.NewDense(n, n, nil)
	kd, ad := K.RawMatrix().Data, A.RawMatrix().Data // row-major, stride n
	for i := 0; i < n; i++ {
		kii := kd[i*n+i]
		for j := 0; j < n; j++ {
			if i == j {
				continue
			}
			_, c := o.loss.Eval(kii+kd[j*n+j]-2*kd[i*n+j], s.Y[i], s.Y[j])
			if c == 0 {
				continue
			}
			ad[i*n+j] -= c
			ad[j*n+i] -= c
			ad[i*n+i] += c
			ad[j*n+j] += c
		}
	}
	var AX, G mat.Dense
	AX.Mul(A, X)
	G.Mul(X.T(), &AX)
	inv := 1 / float64(n*(n-1))
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			v := (G.At(a, b) + G.At(b, a)) / 2 * inv
			g[a*d+b] = v
			g[b*d+a] = v
		}
	}
	return true
}
