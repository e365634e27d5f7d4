package pairwise

import "gonum.org/v1/gonum/mat"

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
	sc := ScoresTo(make([]float64, n), w, s)
	a := make([]float64, n)
	var pos, neg []int
	for i, y := range s.Y {
		if y > 0 {
			pos = append(pos, i)
		} else {
			neg = append(neg, i)
		}
	}
	if _, ok := o.loss.(AUCLogistic); ok {
		// For i ∈ P, j ∈ N: ∂f/∂h(i, j) = −2σ(−2h_ij) and
		// ∂f/∂h(j, i) = +2σ(−2h_ij) with h_ji = −h_ij, so
		// a_i gains −4σ(−2h_ij) and a_j loses it.
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
