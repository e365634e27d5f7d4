package pairwise

import (
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"

	"github.com/pairfed/pairfed/pairwise/internal/kernel"
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

// PairLoopGradient is ∇F_S(w) by its definition, the reference the
// tests check FullGradient and the private algorithms' gradients against:
// the O(n²·p) loop over ordered pairs, each pair's gradient (AddGrad into
// a zeroed buffer) added to a compensated (Neumaier) sum, so that the
// reference itself carries no accumulated rounding: its error is ~2⁻⁵³
// relative to the sum of the pair gradients' magnitudes. It allocates its
// result.
func PairLoopGradient(obj Objective, w []float64) []float64 {
	n := obj.Data().N
	p := obj.NumParams()
	sum, comp, tmp := make([]float64, p), make([]float64, p), make([]float64, p)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i == j {
				continue
			}
			clear(tmp)
			if !obj.AddGrad(tmp, w, i, j, 1) {
				continue
			}
			for k, v := range tmp {
				t := sum[k] + v
				if math.Abs(sum[k]) >= math.Abs(v) {
					comp[k] += (sum[k] - t) + v
				} else {
					comp[k] += (v - t) + sum[k]
				}
				sum[k] = t
			}
		}
	}
	inv := 1 / float64(n*(n-1))
	for k := range sum {
		sum[k] = (sum[k] + comp[k]) * inv
	}
	axpy(obj.Lambda(), w, sum)
	return sum
}

// lossGradient for the linear scorer: with s = Xw, h_ij = s_i − s_j and
// Σ_{i≠j} c_ij (x_i − x_j) = Xᵀa with a_i = Σ_j c_ij − Σ_j c_ji:
// O(n² + n·d) instead of O(n²·d). Every AUC loss has zero gradient on
// same-label pairs (TestAUCLossesIgnoreSameLabelPairs), so only the
// positive–negative pairs are visited, each ordered pair once. The hinge
// and square losses skip even that: aucFastGradient (below) sums
// them in O(n·d + n log n); the logistic loss visits each unordered pair
// once (the two orders' derivatives are ±2σ(−2h)), with one exp per record
// and a divide per pair (logisticAUCCoefs), or one exp per pair for scores
// beyond its range. Other losses (none today) take the generic ordered-pair
// loop below.
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
		kernel.LogisticChunkSums(u, v[lo:hi], inSum[lo:hi], part[q*no:(q+1)*no])
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

// metricBatchCells bounds the n·d copy of the data (centred, densified)
// that the metric batch gradient works on: 2^24 values, 128 MiB. Larger
// samples use the pair loop. metricBlockCells bounds one block of the
// kernel matrix (2^20 values, 8 MiB).
const (
	metricBatchCells = 1 << 24
	metricBlockCells = 1 << 20
)

// lossGradient for the metric model: with W_s = (W + Wᵀ)/2 (h reads only
// the symmetric part: vᵀWv = vᵀW_s v), K = XW_sXᵀ,
// h_ij = K_ii + K_jj − 2K_ij, c_ij = ∂f/∂h = c_ji (every metric loss is
// symmetric in the pair), r_i = Σ_{j≠i} c_ij and S = Σ_{i<j} c_ij x_i x_jᵀ:
//
//	Σ_{i≠j} c_ij (x_i − x_j)(x_i − x_j)ᵀ = 2(Xᵀdiag(r)X − S − Sᵀ),
//
// O(n²·d + n·d²) instead of the pair loop's O(n²·d²), each unordered pair's
// derivative taken once. The rows are centred first (h and x_i − x_j do not
// change; the two sides of the difference above lose less to cancellation),
// sparse rows are densified, and K is formed in row blocks of its upper
// triangle, S += X_Iᵀ(C_I X), so memory is O(n·d + metricBlockCells)
// whatever n.
func (o *metricObjective) lossGradient(w, g []float64) bool {
	s := o.data
	n, d := s.N, s.D
	if n < 2 || n*d > metricBatchCells {
		return false
	}
	xc := make([]float64, n*d)
	mu := make([]float64, d)
	for i := 0; i < n; i++ {
		s.DenseRowTo(xc[i*d:(i+1)*d], i)
		axpy(1, xc[i*d:(i+1)*d], mu)
	}
	scale(1/float64(n), mu)
	for i := 0; i < n; i++ {
		axpy(-1, mu, xc[i*d:(i+1)*d])
	}
	ws := make([]float64, d*d)
	for a := 0; a < d; a++ {
		for b := 0; b < d; b++ {
			ws[a*d+b] = (w[a*d+b] + w[b*d+a]) / 2
		}
	}
	X := mat.NewDense(n, d, xc)
	var XW mat.Dense
	XW.Mul(X, mat.NewDense(d, d, ws))
	kd := make([]float64, n) // K_ii
	for i := 0; i < n; i++ {
		kd[i] = dot(XW.RawRowView(i), xc[i*d:(i+1)*d])
	}
	deriv := metricDeriv(o.loss)
	r := make([]float64, n)
	sAcc := make([]float64, d*d) // S
	b := max(1, min(n, metricBlockCells/n))
	blk := make([]float64, b*n)
	var T, P mat.Dense
	for r0 := 0; r0 < n-1; r0 += b {
		r1 := min(n-1, r0+b) // rows r0..r1−1, columns r0..n−1 (j > i)
		m := n - r0
		Kb := mat.NewDense(r1-r0, m, blk[:(r1-r0)*m])
		Kb.Mul(XW.Slice(r0, r1, 0, d), X.Slice(r0, n, 0, d).T())
		kb := Kb.RawMatrix().Data
		for i := r0; i < r1; i++ {
			row := kb[(i-r0)*m : (i-r0+1)*m]
			ki, yi := kd[i], s.Y[i]
			var ri float64
			for jj := range row {
				j := r0 + jj
				if j <= i {
					row[jj] = 0
					continue
				}
				c := deriv(ki+kd[j]-2*row[jj], yi, s.Y[j])
				row[jj] = c
				ri += c
				r[j] += c
			}
			r[i] += ri
		}
		T.Reset()
		T.Mul(Kb, X.Slice(r0, n, 0, d)) // (C X)_I, columns j > i
		P.Reset()
		P.Mul(X.Slice(r0, r1, 0, d).T(), &T) // X_Iᵀ(C X)_I
		axpy(1, P.RawMatrix().Data, sAcc)
	}
	// Xᵀdiag(r)X
	rx := make([]float64, n*d)
	for i := 0; i < n; i++ {
		axpy(r[i], xc[i*d:(i+1)*d], rx[i*d:(i+1)*d])
	}
	var D mat.Dense
	D.Mul(X.T(), mat.NewDense(n, d, rx))
	dd := D.RawMatrix().Data
	f := 2 / (float64(n) * float64(n-1))
	for a := 0; a < d; a++ {
		for c := a; c < d; c++ {
			v := ((dd[a*d+c]+dd[c*d+a])/2 - (sAcc[a*d+c] + sAcc[c*d+a])) * f
			g[a*d+c] = v
			g[c*d+a] = v
		}
	}
	return true
}

// metricDeriv returns ∂f/∂h of a metric loss: the logistic one without
// its value (one exp instead of two and a log1p; the same expression as
// MetricLogistic.Eval's derivative, so the same bits), else Eval's.
func metricDeriv(l Loss) func(h, y, y2 float64) float64 {
	if _, ok := l.(MetricLogistic); ok {
		return func(h, y, y2 float64) float64 {
			yy := y * y2
			return yy * sigmoidNeg(yy*(1-h))
		}
	}
	return func(h, y, y2 float64) float64 {
		_, c := l.Eval(h, y, y2)
		return c
	}
}

// AUCFastGradient writes the loss part (no λ) of the full pairwise
// gradient, 1/(n(n−1)) Σ_{i≠j} ∇f(w; z_i, z_j), into g in O(n·d + n log n)
// when obj is a linear objective with the square or hinge AUC loss, and
// reports whether it did; otherwise it leaves g alone (use FullGradient).
func AUCFastGradient(obj Objective, w, g []float64) bool {
	lo, ok := obj.(*linearObjective)
	return ok && aucFastGradient(lo, w, g)
}

// aucFastGradient writes 1/(n(n−1)) Σ_{i≠j} ∇f(w; z_i, z_j) for the linear
// square and hinge AUC losses in O(n·d + n log n), with s_i = wᵀx_i and
// Σ_{i≠j} ∇f = Σ_i a_i x_i:
//
//   - square: ∇f(i, j) = −2(1 − s_i + s_j)(x_i − x_j) for i ∈ P, j ∈ N, twice
//     (both orders), so a_i = −4(n₋(1 − s_i) + Σ_N s) for i ∈ P and
//     a_j = 4(n₊(1 + s_j) − Σ_P s) for j ∈ N (sum the margins over the
//     other class);
//   - hinge: the pair is active iff s_j > s_i − 1, with gradient
//     −(x_i − x_j), twice: a_i = −2·#{j ∈ N : s_j > s_i − 1},
//     a_j = 2·#{i ∈ P : s_i < s_j + 1}, counted by binary search in the
//     sorted scores.
//
// It reports false (and leaves g alone) for other losses.
func aucFastGradient(o *linearObjective, w, g []float64) bool {
	sq := false
	switch o.loss.(type) {
	case AUCSquare:
		sq = true
	case AUCHinge:
	default:
		return false
	}
	s := o.data
	n := s.N
	sc := ScoresTo(make([]float64, n), w, s)
	var ps, ns []float64
	var sumP, sumN float64
	for i, y := range s.Y {
		if y > 0 {
			ps = append(ps, sc[i])
			sumP += sc[i]
		} else {
			ns = append(ns, sc[i])
			sumN += sc[i]
		}
	}
	np, nn := float64(len(ps)), float64(len(ns))
	a := make([]float64, n)
	if sq {
		for i, y := range s.Y {
			if y > 0 {
				a[i] = -4 * (nn*(1-sc[i]) + sumN)
			} else {
				a[i] = 4 * (np*(1+sc[i]) - sumP)
			}
		}
	} else {
		sort.Float64s(ps)
		sort.Float64s(ns)
		for i, y := range s.Y {
			if y > 0 {
				// #{j : s_j > s_i − 1} = n₋ − #{s_j ≤ s_i − 1}
				k := sort.Search(len(ns), func(m int) bool { return ns[m] > sc[i]-1 })
				a[i] = -2 * float64(len(ns)-k)
			} else {
				// #{i : s_i < s_j + 1}
				k := sort.Search(len(ps), func(m int) bool { return ps[m] >= sc[i]+1 })
				a[i] = 2 * float64(k)
			}
		}
	}
	for k := range g {
		g[k] = 0
	}
	inv := 1 / (float64(n) * float64(n-1))
	for i := 0; i < n; i++ {
		if a[i] != 0 {
			s.AddScaled(g, i, a[i]*inv)
		}
	}
	return true
}
