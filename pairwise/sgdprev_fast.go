package pairwise

import (
	"context"
	"math"
	"math/rand/v2"
)

// The specialized sgd-prev loop.
//
// runPairSGD is the general loop: every step calls the pair source, the
// objective's Step (through an interface, which calls the loss's Eval through
// another) and the projection. For sgd-prev ([Y21a] Alg 1) on the AUC task
// without a regularizer, most steps do nothing: a pair of two records with
// the same label has zero gradient for every AUC loss here (hinge and square
// are multiplied by I[y ≠ y'], the logistic loss's derivative carries the
// factor y − y' = 0), so w is unchanged and only the averaging weights move.
// The loops below test the labels first and touch rows only for the pairs
// with different labels (18 % of ijcnn1's draws), with the loss and the
// projection fixed per loop: no interface call or type switch per step.
//
// They are bit-identical to runPairSGD with a PrevInstance for the same rng:
// the same draws in the same order, and the same floating-point operations on
// w and on the averaging state in the same order (the tests check this over
// seeds, losses, projections, averaging modes and dense and sparse data). The
// only operations skipped are the loss values Eval computes and discards, and
// the score of same-label pairs — which can change the model only when the
// score is ±Inf or NaN, i.e. when the data or w already are not finite
// (runPairSGD then propagates NaN through the logistic loss; data are
// checked finite when loaded).

// prevLoss names the loss a specialized loop computes.
type prevLoss int

const (
	prevHinge prevLoss = iota
	prevSquare
	prevLogistic
)

// prevFast is the state of a specialized sgd-prev run.
type prevFast struct {
	data  *Dataset
	loss  prevLoss
	n, d  int
	r, r2 float64 // ball radius R and R² (+Inf without a constraint)
	eta   float64 // the constant step size η_t
	paper bool    // AvgPaper; otherwise AvgLast

	// pos has bit i set when y_i = +1: the label test of every draw reads
	// n/8 bytes (6 kB for ijcnn1, in L1) instead of the 8n-byte labels.
	pos []uint64

	w    []float64
	avg  *averager
	prev int // i_{t−1}
}

// labelBits returns the bitmap of positive labels, or nil when a label is
// not ±1 (the loops' label test is y_i ≠ y_j on ±1 labels).
func labelBits(y []float64) []uint64 {
	b := make([]uint64, (len(y)+63)/64)
	for i, v := range y {
		switch v {
		case 1:
			b[i>>6] |= 1 << (i & 63)
		case -1:
		default:
			return nil
		}
	}
	return b
}

// newPrevFast returns the specialized loop for obj and cfg, or nil when the
// general loop must run (regularizer, metric task, other loss, projection,
// schedule or averaging).
func newPrevFast(obj Objective, cfg *RunConfig, sched Schedule) *prevFast {
	o, ok := obj.(*linearObjective)
	if !ok || o.lambda != 0 {
		return nil
	}
	if cfg.Schedule != "" {
		sched = cfg.Schedule
	}
	if sched != Constant && sched != ScaledConstant {
		return nil
	}
	mode := cfg.Averaging
	if mode == "" {
		mode = AvgPaper
	}
	if mode != AvgPaper && mode != AvgLast {
		return nil
	}
	f := &prevFast{data: o.data, n: o.data.N, d: o.data.D, paper: mode == AvgPaper}
	switch o.loss.(type) {
	case AUCHinge:
		f.loss = prevHinge
	case AUCSquare:
		f.loss = prevSquare
	case AUCLogistic:
		f.loss = prevLogistic
	default:
		return nil
	}
	switch p := o.proj.(type) {
	case L2Ball:
		f.r, f.r2 = p.R, p.R*p.R
	case NoConstraint:
		f.r, f.r2 = math.Inf(1), math.Inf(1)
	default:
		return nil
	}
	if o.data.X == nil && o.data.Ptr == nil {
		return nil
	}
	if f.pos = labelBits(o.data.Y); f.pos == nil {
		return nil
	}
	return f
}

// run is runPairSGD(ctx, obj, cfg, rng, &PrevInstance{N: n}, T, sched) for a
// configuration newPrevFast accepted.
func (f *prevFast) run(ctx context.Context, cfg RunConfig, rng *rand.Rand, T int, sched Schedule) (*Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Schedule != "" {
		sched = cfg.Schedule
	}
	f.eta = sched.Eta(cfg.Eta, 1, T)
	f.w = make([]float64, f.d)
	if cfg.Init != nil {
		copy(f.w, cfg.Init)
	}
	mode := AvgLast
	if f.paper {
		mode = AvgPaper
	}
	f.avg = newAverager(mode, f.w)
	cp := checkpointer{cfg: &cfg}
	if T >= 1 {
		// PrevInstance draws i_0 before the first step.
		f.prev = rng.IntN(f.n)
	}
	for t := 1; t <= T; {
		if t&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		// Run up to the next context check, checkpoint or the end.
		end := min(T, t|4095)
		if cp.next < len(cfg.Checkpoints) {
			if c := cfg.Checkpoints[cp.next]; c >= t && c < end {
				end = c
			}
		}
		f.steps(rng, end-t+1)
		t = end
		if cp.due(t) {
			cp.window(t, T, f.w, f.avg)
		}
		t++
	}
	var grads int64
	if T > 0 {
		grads = int64(T)
	}
	out := append([]float64(nil), f.avg.output(f.w)...)
	return &Result{W: out, Last: f.w, Steps: T, PairGrads: grads}, nil
}

// steps runs k steps.
func (f *prevFast) steps(rng *rand.Rand, k int) {
	switch {
	case f.data.X == nil:
		f.stepsSparse(rng, k)
	case f.loss == prevHinge:
		f.hingeDense(rng, k)
	case f.loss == prevSquare:
		f.squareDense(rng, k)
	default:
		f.logisticDense(rng, k)
	}
}

// flush is the stale branch of averager.before: sum += pending·prev and
// prev = w (the caller zeroes pending).
func (f *prevFast) flush(pending float64) {
	a := f.avg
	axpy(pending, a.prev, a.sum)
	copy(a.prev, f.w)
}

// The three dense loops differ only in the lines marked "loss". Each keeps
// the averager's (pending, weight, stale) in registers: averager.before is
//
//	pending += η; weight += η; if stale { sum += pending·prev; pending = 0; prev = w; stale = false }.

func (f *prevFast) hingeDense(rng *rand.Rand, k int) {
	x, y, d, n, eta, r, r2 := f.data.X, f.data.Y, f.d, f.n, f.eta, f.r, f.r2
	w := f.w[:d]
	a := f.avg
	pending, weight, stale, paper := a.pending, a.weight, a.stale, f.paper
	pos := f.pos
	j := f.prev
	bj := pos[j>>6] >> (j & 63) & 1
	for ; k > 0; k-- {
		if paper {
			pending += eta
			weight += eta
			if stale {
				f.flush(pending)
				pending = 0
				stale = false
			}
		}
		i := rng.IntN(n)
		bi := pos[i>>6] >> (i & 63) & 1
		if bi != bj {
			yi, yj := y[i], y[j]
			xi := x[i*d : i*d+d]
			xj := x[j*d : j*d+d]
			h := diffDot(w, xi, xj)
			s := (yi - yj) / 2           // loss
			if m := 1 - s*h; !(m <= 0) { // loss
				if dv := -s; dv != 0 { // loss
					denseUpdate(w, xi, xj, -eta*dv, r, r2)
					stale = true
				}
			}
		}
		j, bj = i, bi
	}
	f.prev = j
	a.pending, a.weight, a.stale = pending, weight, stale
}

func (f *prevFast) squareDense(rng *rand.Rand, k int) {
	x, y, d, n, eta, r, r2 := f.data.X, f.data.Y, f.d, f.n, f.eta, f.r, f.r2
	w := f.w[:d]
	a := f.avg
	pending, weight, stale, paper := a.pending, a.weight, a.stale, f.paper
	pos := f.pos
	j := f.prev
	bj := pos[j>>6] >> (j & 63) & 1
	for ; k > 0; k-- {
		if paper {
			pending += eta
			weight += eta
			if stale {
				f.flush(pending)
				pending = 0
				stale = false
			}
		}
		i := rng.IntN(n)
		bi := pos[i>>6] >> (i & 63) & 1
		if bi != bj {
			yi, yj := y[i], y[j]
			xi := x[i*d : i*d+d]
			xj := x[j*d : j*d+d]
			h := diffDot(w, xi, xj)
			s := (yi - yj) / 2 // loss
			m := 1 - s*h       // loss
			if dv := -2 * s * m; dv != 0 {
				denseUpdate(w, xi, xj, -eta*dv, r, r2)
				stale = true
			}
		}
		j, bj = i, bi
	}
	f.prev = j
	a.pending, a.weight, a.stale = pending, weight, stale
}

func (f *prevFast) logisticDense(rng *rand.Rand, k int) {
	x, y, d, n, eta, r, r2 := f.data.X, f.data.Y, f.d, f.n, f.eta, f.r, f.r2
	w := f.w[:d]
	a := f.avg
	pending, weight, stale, paper := a.pending, a.weight, a.stale, f.paper
	pos := f.pos
	j := f.prev
	bj := pos[j>>6] >> (j & 63) & 1
	for ; k > 0; k-- {
		if paper {
			pending += eta
			weight += eta
			if stale {
				f.flush(pending)
				pending = 0
				stale = false
			}
		}
		i := rng.IntN(n)
		bi := pos[i>>6] >> (i & 63) & 1
		if bi != bj {
			yi, yj := y[i], y[j]
			xi := x[i*d : i*d+d]
			xj := x[j*d : j*d+d]
			h := diffDot(w, xi, xj)
			c := yi - yj                             // loss
			if dv := -c * sigmoidNeg(c*h); dv != 0 { // loss
				denseUpdate(w, xi, xj, -eta*dv, r, r2)
				stale = true
			}
		}
		j, bj = i, bi
	}
	f.prev = j
	a.pending, a.weight, a.stale = pending, weight, stale
}

// denseUpdate does w ← Π(w + a·(x_i − x_j)) for the ℓ2 ball of radius r
// (r2 = r², +Inf for no constraint) — linearObjective.stepProject's pass,
// which for r2 = +Inf is addDiff's.
func denseUpdate(w, xi, xj []float64, a, r, r2 float64) {
	w = w[:len(xi)]
	xj = xj[:len(xi)]
	var n2 float64
	for k := range xi {
		v := w[k] + a*(xi[k]-xj[k])
		w[k] = v
		n2 += v * v
	}
	if n2 > r2 {
		scale(r/math.Sqrt(n2), w)
	}
}

// stepsSparse is the loop for CSR data: the score is x_iᵀw − x_jᵀw and the
// update AddScaled(w, i, a), AddScaled(w, j, −a), then Π — linearObjective's
// Step followed by Project. The loss is a loop-invariant branch taken only
// for pairs with different labels.
func (f *prevFast) stepsSparse(rng *rand.Rand, k int) {
	s, y, n, eta, r, r2, loss := f.data, f.data.Y, f.n, f.eta, f.r, f.r2, f.loss
	ball := !math.IsInf(r2, 1)
	w := f.w
	a := f.avg
	pending, weight, stale, paper := a.pending, a.weight, a.stale, f.paper
	pos := f.pos
	j := f.prev
	bj := pos[j>>6] >> (j & 63) & 1
	for ; k > 0; k-- {
		if paper {
			pending += eta
			weight += eta
			if stale {
				f.flush(pending)
				pending = 0
				stale = false
			}
		}
		i := rng.IntN(n)
		bi := pos[i>>6] >> (i & 63) & 1
		if bi != bj {
			yi, yj := y[i], y[j]
			h := sparseDot(s, i, w) - sparseDot(s, j, w)
			var dv float64
			switch loss {
			case prevHinge:
				sg := (yi - yj) / 2
				if m := 1 - sg*h; !(m <= 0) {
					dv = -sg
				}
			case prevSquare:
				sg := (yi - yj) / 2
				dv = -2 * sg * (1 - sg*h)
			default:
				c := yi - yj
				dv = -c * sigmoidNeg(c*h)
			}
			if dv != 0 {
				av := -eta * dv
				sparseAdd(s, w, i, av)
				sparseAdd(s, w, j, -av)
				if ball {
					if n2 := dot(w, w); n2 > r2 {
						scale(r/math.Sqrt(n2), w)
					}
				}
				stale = true
			}
		}
		j, bj = i, bi
	}
	f.prev = j
	a.pending, a.weight, a.stale = pending, weight, stale
}

// sparseDot is Dataset.Dot for CSR data.
func sparseDot(s *Dataset, i int, w []float64) float64 {
	lo, hi := s.Ptr[i], s.Ptr[i+1]
	idx, val := s.Idx[lo:hi], s.Val[lo:hi]
	val = val[:len(idx)]
	var r float64
	for k, c := range idx {
		r += val[k] * w[c]
	}
	return r
}

// sparseAdd is Dataset.AddScaled for CSR data.
func sparseAdd(s *Dataset, dst []float64, i int, a float64) {
	lo, hi := s.Ptr[i], s.Ptr[i+1]
	idx, val := s.Idx[lo:hi], s.Val[lo:hi]
	val = val[:len(idx)]
	for k, c := range idx {
		dst[c] += a * val[k]
	}
}
