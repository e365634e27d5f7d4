package pairwise

import "fmt"

// metricObjective is TaskMetric: similarity metric learning with the
// (squared) Mahalanobis score
//
//	h_W(x, x') = (x − x')ᵀ W (x − x'),  W ∈ S^d,
//
// of [H20]/[X21] Example 1 and [Y21b] eq. (11). W is a flat row-major d×d
// slice (NumParams = d²). Writing v = x_i − x_j, ∇_W h = v vᵀ, so
//
//	∇_W f(W; z_i, z_j) = (∂f/∂h)·v vᵀ,
//
// a rank-one symmetric matrix with ‖v vᵀ‖_F = ‖v‖² ≤ 4R²; the losses'
// Lipschitz constants (MetricHinge, MetricLogistic) are computed from this.
//
// The parameters are matrices of S^d. Score, PairLoss and AddGrad treat W as
// a general d×d matrix (Score = Σ_ab W_ab v_a v_b, whose derivative in every
// entry W_ab is v_a v_b), so finite differences in single entries agree with
// AddGrad. Step updates the upper triangle and mirrors it, so W stays
// exactly symmetric (W[a][b] == W[b][a] bit for bit) whatever rounding does;
// for a symmetric W this is the exact update w ← w − η(∇f + λw). The zero
// matrix, where the algorithms start by default, lies in every constraint set.
//
// The struct holds the scratch difference vector, so one metricObjective must
// not be used from two goroutines at once (see Objective).
type metricObjective struct {
	loss   Loss
	data   *Dataset
	lambda float64
	proj   Projector
	d      int

	// v is x_i − x_j of the last pair: dense (len d) for dense data; for
	// sparse data vIdx[:nv], v[:nv] hold its support (strictly increasing
	// indices, the union of the two rows' supports) and values.
	v    []float64
	vIdx []int32
	nv   int
	// wv is W·v for the dense score (matVec's scratch).
	wv []float64

	// The last Step, for the projector's fast path (stepProjector): w's
	// first element's address, the factor k and coefficient c of
	// w ← k·w + c·v vᵀ, and v dense (vd, for sparse data; zero outside the
	// support of the last difference, which vdIdx[:vdN] lists).
	stepW *float64
	stepK float64
	stepC float64
	vd    []float64
	vdIdx []int32
	vdN   int
}

func newMetricObjective(data *Dataset, loss Loss, lambda float64, proj Projector) *metricObjective {
	if data == nil || data.D < 1 {
		panic("pairwise: metric objective needs a dataset with d ≥ 1")
	}
	if loss.Task() != TaskMetric {
		panic(fmt.Sprintf("pairwise: loss %s is for task %s, not metric", loss.Name(), loss.Task()))
	}
	o := &metricObjective{loss: loss, data: data, lambda: lambda, proj: proj, d: data.D, v: make([]float64, data.D), wv: make([]float64, data.D)}
	if data.X == nil {
		o.vIdx = make([]int32, data.D)
	}
	return o
}

func (o *metricObjective) Task() Task            { return TaskMetric }
func (o *metricObjective) Loss() Loss            { return o.loss }
func (o *metricObjective) Data() *Dataset        { return o.data }
func (o *metricObjective) NumParams() int        { return o.d * o.d }
func (o *metricObjective) Lambda() float64       { return o.lambda }
func (o *metricObjective) Constraint() Projector { return o.proj }

// Project projects w. Right after Step(w, …) it hands the projector the
// step (k, c, v) when it has a fast path for it (stepProjector), which
// checks that w is that update of its last output and otherwise projects
// the general way: the result is Π_C(w) either way.
func (o *metricObjective) Project(w []float64) {
	sp, fast := o.proj.(stepProjector)
	if fast && psdStepFast && len(w) > 0 && o.stepW == &w[0] {
		o.stepW = nil
		sp.ProjectStep(w, o.stepK, o.stepC, o.denseV())
		return
	}
	o.stepW = nil
	o.proj.Project(w)
}

// stepProject is Step followed by Project, as RunPairSGD calls them, with
// the same result bit for bit. When w is, bit for bit, the PSD projector's
// last output P (as it is between the steps of a run: Project remembered
// it and nothing else wrote w), v is dense and every c·v_a is finite, the
// update Step writes is by construction the one ProjectStep's isStep would
// verify entry by entry — each A_ab is computed by the same two
// operations on the same operands, fl(fl(P_ab·k) + fl(c·v_a)·v_b), and
// mirrored — and it cannot be NaN (P has none, k ≤ 1, c·v_a is finite),
// so the verification is skipped (psdProjector.projectStep). Otherwise,
// and for other projectors, this is Step and Project.
func (o *metricObjective) stepProject(w []float64, i, j int, eta float64) bool {
	p, ok := o.proj.(*psdProjector)
	if !ok || !psdStepFast || o.vIdx != nil || !p.lastOK || len(w) != o.d*o.d || !equalBits(w, p.last) {
		if o.Step(w, i, j, eta) {
			o.Project(w)
			return true
		}
		return false
	}
	if !o.Step(w, i, j, eta) {
		return false
	}
	o.stepW = nil
	v, c := o.v[:o.d], o.stepC
	for _, va := range v {
		if ca := c * va; ca-ca != 0 { // ±Inf or NaN: ProjectStep decides
			p.ProjectStep(w, o.stepK, c, v)
			return true
		}
	}
	p.projectStep(w, o.stepK, c, v)
	return true
}

// psdStepFast switches the projector's step fast path on (tests turn it off
// to compare with the general projection).
var psdStepFast = true

// denseV returns the last difference v as a dense vector of length d.
func (o *metricObjective) denseV() []float64 {
	if o.vIdx == nil {
		return o.v[:o.d]
	}
	if o.vd == nil {
		o.vd = make([]float64, o.d)
		o.vdIdx = make([]int32, o.d)
	}
	for _, a := range o.vdIdx[:o.vdN] {
		o.vd[a] = 0
	}
	copy(o.vdIdx, o.vIdx[:o.nv])
	o.vdN = o.nv
	for p, a := range o.vIdx[:o.nv] {
		o.vd[a] = o.v[p]
	}
	return o.vd
}

// diff stores v = x_i − x_j in the scratch buffers.
func (o *metricObjective) diff(i, j int) {
	s := o.data
	d := o.d
	if s.X != nil {
		xi := s.X[i*d : (i+1)*d]
		xj := s.X[j*d : (j+1)*d]
		v := o.v[:len(xi)]
		xj = xj[:len(xi)]
		for k := range xi {
			v[k] = xi[k] - xj[k]
		}
		return
	}
	// Merge the two sorted supports.
	ai, av := s.SparseRow(i)
	bi, bv := s.SparseRow(j)
	n, p, q := 0, 0, 0
	for p < len(ai) || q < len(bi) {
		switch {
		case q == len(bi) || (p < len(ai) && ai[p] < bi[q]):
			o.vIdx[n], o.v[n] = ai[p], av[p]
			p++
		case p == len(ai) || bi[q] < ai[p]:
			o.vIdx[n], o.v[n] = bi[q], -bv[q]
			q++
		default: // same index
			o.vIdx[n], o.v[n] = ai[p], av[p]-bv[q]
			p++
			q++
		}
		n++
	}
	o.nv = n
}

// score returns vᵀWv for the v in the scratch buffers.
func (o *metricObjective) score(w []float64) float64 {
	d := o.d
	if len(w) != d*d {
		panic(fmt.Sprintf("pairwise: metric model has %d values, want %d×%d", len(w), d, d))
	}
	if o.vIdx == nil {
		// h = Σ_a v_a·dot(W_a, v) in a's order, skipping v_a = 0; the row
		// products come from matVec (dot's sums, bit for bit, four rows at
		// a time).
		v, wv := o.v[:d], o.wv[:d]
		matVec(w, d, v, wv)
		var h float64
		for a, va := range v {
			if va != 0 {
				h += va * wv[a]
			}
		}
		return h
	}
	idx, v := o.vIdx[:o.nv], o.v[:o.nv]
	var h float64
	for k, a := range idx {
		row := w[int(a)*d : (int(a)+1)*d]
		var r float64
		for l, b := range idx {
			r += row[b] * v[l]
		}
		h += v[k] * r
	}
	return h
}

func (o *metricObjective) Score(w []float64, i, j int) float64 {
	o.diff(i, j)
	return o.score(w)
}

func (o *metricObjective) PairLoss(w []float64, i, j int) float64 {
	f, _ := o.loss.Eval(o.Score(w, i, j), o.data.Y[i], o.data.Y[j])
	if o.lambda != 0 {
		f += o.lambda / 2 * dot(w, w)
	}
	return f
}

// AddGrad does g += scale·(∂f/∂h)·v vᵀ. Each product v_a·v_b is rounded once
// and added to both g[a][b] and g[b][a], so a symmetric g stays symmetric.
func (o *metricObjective) AddGrad(g, w []float64, i, j int, scale float64) bool {
	_, df := o.loss.Eval(o.Score(w, i, j), o.data.Y[i], o.data.Y[j])
	if df == 0 {
		return false
	}
	if len(g) != len(w) {
		panic(fmt.Sprintf("pairwise: gradient has %d values, want %d", len(g), len(w)))
	}
	c := scale * df
	d := o.d
	if o.vIdx == nil {
		v := o.v[:d]
		for a, va := range v {
			if va == 0 {
				continue
			}
			ca := c * va
			row := g[a*d : (a+1)*d]
			row[a] += ca * va
			for b := a + 1; b < d; b++ {
				t := ca * v[b]
				row[b] += t
				g[b*d+a] += t
			}
		}
		return true
	}
	idx, v := o.vIdx[:o.nv], o.v[:o.nv]
	for k, a := range idx {
		ca := c * v[k]
		g[int(a)*d+int(a)] += ca * v[k]
		for l := k + 1; l < len(idx); l++ {
			b := int(idx[l])
			t := ca * v[l]
			g[int(a)*d+b] += t
			g[b*d+int(a)] += t
		}
	}
	return true
}

// Step does W ← W − η((∂f/∂h)·v vᵀ + λW) on the upper triangle and mirrors
// it to the lower one. It reports whether W changed (λ ≠ 0 or ∂f/∂h ≠ 0),
// and does not allocate.
func (o *metricObjective) Step(w []float64, i, j int, eta float64) bool {
	o.stepW = nil
	_, df := o.loss.Eval(o.Score(w, i, j), o.data.Y[i], o.data.Y[j])
	if df == 0 && o.lambda == 0 {
		return false
	}
	d := o.d
	k := 1 - eta*o.lambda
	c := -eta * df
	if len(w) > 0 {
		o.stepW, o.stepK, o.stepC = &w[0], k, c
	}
	if o.vIdx == nil {
		v := o.v[:d]
		for a := 0; a < d; a++ {
			ca := c * v[a]
			row := w[a*d : (a+1)*d]
			for b := a; b < d; b++ {
				x := row[b]*k + ca*v[b]
				row[b] = x
				w[b*d+a] = x
			}
		}
		return true
	}
	if o.lambda != 0 {
		// Scale the upper triangle and mirror; then add the sparse rank-one
		// term on the support block.
		for a := 0; a < d; a++ {
			row := w[a*d : (a+1)*d]
			for b := a; b < d; b++ {
				x := row[b] * k
				row[b] = x
				w[b*d+a] = x
			}
		}
	}
	if c != 0 {
		idx, v := o.vIdx[:o.nv], o.v[:o.nv]
		for p, a := range idx {
			ca := c * v[p]
			row := w[int(a)*d : (int(a)+1)*d]
			for q := p; q < len(idx); q++ {
				b := int(idx[q])
				x := row[b] + ca*v[q]
				row[b] = x
				w[b*d+int(a)] = x
			}
		}
	}
	return true
}

// Props returns the loss's G, L, bound over ‖x‖ ≤ R and ‖W‖_F ≤ B with
// B = Constraint().Radius(), plus the regularizer's contribution.
func (o *metricObjective) Props(R float64) Props {
	B := o.proj.Radius()
	return regProps(o.loss.Props(R, B), o.lambda, B)
}
