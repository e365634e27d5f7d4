package pairwise

import (
	"context"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/pairfed/pairfed/pairwise/internal/kernel"
)

// The specialized sgd-prev loop.
//
// RunPairSGD is the general loop: every step calls the pair source, the
// objective's Step (through an interface, which calls the loss's Eval through
// another) and the projection. For sgd-prev ([Y21a] Alg 1) on the AUC task
// without a regularizer, most steps do nothing: a pair of two records with
// the same label has zero gradient for every AUC loss here (hinge and square
// are multiplied by I[y ≠ y'], the logistic loss's derivative carries the
// factor y − y' = 0), so w is unchanged and only the averaging weights move.
// The loops below draw drawBatch indices at a time (from a concrete PCG when
// the rng's source is one: pcg.go), find the draws that pair different
// labels from a bitmap of the labels (18 % of ijcnn1's draws), and touch
// rows only for those, prefetching the rows of the next ones; the loss and
// the projection are fixed per run: no interface call or type switch per
// step. On dense data the steps in between cost nothing, and the active
// steps run AVX2 kernels (internal/kernel) when the CPU has them. Every
// output rule is covered: the default AvgPaper, AvgLast, and AvgWindow (the
// paper protocol's) and AvgUniform, whose per-step sum of w_t is added in
// runs of unchanged w (kernel.AddRepeat).
//
// On CSR data with d ≥ 512 and d ≥ 16 × (mean nonzeros per row) run takes
// RunPrevSGD takes the lazy O(nnz) loop instead (sgdprev_sparse.go): the same draws and
// decisions; without a constraint the same iterates bit for bit, and
// otherwise equal up to the rounding bound stated there. Everything below
// is about the other loops.
//
// They are bit-identical to RunPairSGD with a PrevInstance for the same rng:
// the same draws in the same order, and the same floating-point operations on
// w and on the averaging state in the same order (the tests check this over
// seeds, losses, projections, averaging modes and dense and sparse data). The
// only operations skipped are the loss values Eval computes and discards, the
// score of same-label pairs — which can change the model only when the
// score is ±Inf or NaN, i.e. when the data or w already are not finite
// (RunPairSGD then propagates NaN through the logistic loss; data are
// checked finite when loaded) — and the exact ‖w‖² when a cheaper sum
// proves the projection is not needed (kernel.DenseUpdate).

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
	paper bool    // AvgPaper
	// rep: AvgWindow or AvgUniform, whose averager adds w_t to its sum
	// after every step. Most steps leave w unchanged, so the loops count
	// them in wn (the steps since the last addition whose w_t is the
	// current w) and add w wn times in one call (addRepeat) just before w
	// may change — at an active step — and before a checkpoint or the
	// output: the same additions in the same order, so the same sum.
	rep bool
	wn  int

	// pos has bit i set when y_i = +1: the label test of every draw reads
	// n/8 bytes (6 kB for ijcnn1, in L1) instead of the 8n-byte labels.
	pos []uint64

	w    []float64
	avg  *Averager
	prev int // i_{t−1}

	// AvgPaper on dense data: ptab[m] is the pending weight m increments
	// after a reset, η + η + … left to right (ptab[0] = 0), and pm counts
	// the increments since the last reset, so avg.pending = ptab[pm] when
	// pm < len(ptab).
	ptab []float64
	pm   int

	draws []int    // the current batch of draws i_t
	act   []int32  // positions of the active draws in it
	raw   []uint64 // its 64-bit draws (pcg.drawIndices)

	draws2 []int   // the next batch (dense)
	act2   []int32 // its active draws

	// src is the rng's *rand.PCG when it has one (pcgSource): the draws
	// are then taken from a pcg copy of its state (pcg.go).
	src *rand.PCG

	// lazySteps runs a batch of draws on the lazy O(nnz) loop's state
	// when that loop runs (set by runLazy, sgdprev_sparse.go); nil
	// otherwise. A function, so that this file does not name the lazy
	// loop's type: sgdprev_sparse.go builds on this one, not the reverse.
	lazySteps func(idx []int)
}

// labelBits returns the bitmap of positive labels, or nil when a label is
// not ±1 (the loops' label test is y_i ≠ y_j on ±1 labels).
func labelBits(y []float64) []uint64 {
	b := make([]uint64, (len(y)+63)/64)
	for i, v := range y {
		if v != 1 && v != -1 {
			return nil
		}
		var p uint64
		if v == 1 { // a conditional move: the labels are random
			p = 1
		}
		b[i>>6] |= p << (i & 63)
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
	switch mode {
	case AvgPaper, AvgLast, AvgWindow, AvgUniform:
	default:
		return nil
	}
	f := &prevFast{data: o.data, n: o.data.N, d: o.data.D, paper: mode == AvgPaper,
		rep: mode == AvgWindow || mode == AvgUniform}
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

// run is RunPairSGD(ctx, obj, cfg, rng, &PrevInstance{N: n}, T, sched) for a
// configuration newPrevFast accepted, on dense data or CSR data the lazy
// loop does not take (RunPrevSGD, sgdprev.go, chooses).
func (f *prevFast) run(ctx context.Context, cfg RunConfig, rng *rand.Rand, T int, sched Schedule) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Schedule != "" {
		sched = cfg.Schedule
	}
	f.eta = sched.Eta(cfg.Eta, 1, T)
	if f.paper && f.data.X != nil {
		// Indexed up to a batch's length (at most T, drawBatch); past the
		// table pendingAfter adds the same η's in the same order, so the
		// table's length changes no value (a federated site's phase of
		// ~10 steps built 514 entries).
		f.ptab = make([]float64, 2*min(T, drawBatch)+2)
		for m := 1; m < len(f.ptab); m++ {
			f.ptab[m] = f.ptab[m-1] + f.eta
		}
	}
	f.w = cfg.InitialModel(f.d)
	mode := cfg.Averaging
	if mode == "" {
		mode = AvgPaper
	}
	f.avg = NewAverager(mode, f.w)
	cp := NewCheckpointer(&cfg)
	if T >= 1 {
		// PrevInstance draws i_0 before the first step.
		f.prev = rng.IntN(f.n)
	}
	f.src = pcgSource(rng)
	at := func(t int) {
		f.repFlush()
		cp.Window(t, T, f.w, f.avg)
	}
	if err := cp.segments(ctx, T, func(k int) { f.steps(rng, k) }, at); err != nil {
		return nil, err
	}
	var grads int64
	if T > 0 {
		grads = int64(T)
	}
	f.repFlush()
	out := append([]float64(nil), f.avg.Output(f.w)...)
	return &Result{W: out, Last: f.w, Steps: T, PairGrads: grads}, nil
}

// drawBatch is how many draws the loops take from rng at once.
const drawBatch = 256

// steps runs k steps, drawBatch at a time: the indices are drawn first
// (rng.IntN, in order: the same stream as RunPairSGD's), then walked. With
// a PCG source the draws come from a copy of its state, written back before
// steps returns: between calls the rng is where rng.IntN would have left it.
func (f *prevFast) steps(rng *rand.Rand, k int) {
	if b := min(k, drawBatch); len(f.draws) < b {
		// Batches as long as this call's steps, at most drawBatch: a
		// federated site's phase over a few records takes a few steps,
		// and was given five buffers of drawBatch each phase.
		f.draws = make([]int, b)
		f.act = make([]int32, b)
		f.raw = make([]uint64, b)
		f.draws2 = make([]int, b)
		f.act2 = make([]int32, b)
	}
	var g pcg
	src := f.src
	if src != nil && !g.load(src) {
		src = nil
	}
	draw := func(idx []int) {
		if src != nil {
			g.drawIndices(idx, f.raw, f.n)
		} else {
			drawIndices(rng, idx, f.n)
		}
	}
	if f.data.X == nil {
		for k > 0 {
			m := min(k, drawBatch)
			idx := f.draws[:m]
			draw(idx)
			if f.lazySteps != nil {
				f.lazySteps(idx)
			} else {
				f.stepsSparse(idx)
			}
			k -= m
		}
	} else if k > 0 {
		// Dense: batch b+1 is drawn, and its active draws found, before
		// batch b is walked, so that the walk prefetches rows across the
		// batches' boundary. The draws, and weight's additions, stay in
		// order; the last batch of this call has no successor (a
		// checkpoint may follow it).
		m := min(k, drawBatch)
		idx := f.draws[:m]
		draw(idx)
		act := f.findActive(idx, f.prev, f.act)
		for k > 0 {
			k -= m
			mn := min(k, drawBatch)
			nidx, nact := f.draws2[:mn], f.act2[:0]
			if mn > 0 {
				draw(nidx)
				nact = f.findActive(nidx, idx[m-1], f.act2)
			}
			f.stepsDense(idx, act, nidx, nact)
			f.draws, f.draws2 = f.draws2, f.draws
			f.act, f.act2 = f.act2, f.act
			idx, act, m = nidx, nact, mn
		}
	}
	if src != nil {
		g.store(src)
	}
}

// findActive is active(idx) into buf with prev the draw before idx[0]
// (activeWeight with AvgPaper).
func (f *prevFast) findActive(idx []int, prev int, buf []int32) []int32 {
	if f.paper {
		var act []int32
		act, f.avg.weight = f.activeWeight(idx, prev, buf, f.avg.weight)
		return act
	}
	return f.activeIn(idx, prev, buf)
}

// drawIndices sets dst[t] = rng.IntN(n) for t = 0, 1, …: math/rand/v2's
// IntN (Lemire's multiply-shift with rejection, the same computation on
// 32- and 64-bit systems) written out so that the loop makes one call per
// draw, to the source. TestDrawIndicesIsIntN checks it against rng.IntN.
func drawIndices(rng *rand.Rand, dst []int, n int) {
	nn := uint64(n)
	if nn&(nn-1) == 0 {
		for t := range dst {
			dst[t] = int(rng.Uint64() & (nn - 1))
		}
		return
	}
	for t := range dst {
		hi, lo := bits.Mul64(rng.Uint64(), nn)
		if lo < nn {
			thresh := -nn % nn
			for lo < thresh {
				hi, lo = bits.Mul64(rng.Uint64(), nn)
			}
		}
		dst[t] = int(hi)
	}
}

// active writes to f.act the positions t of idx whose draw pairs records
// with different labels (idx[t] against idx[t−1], idx[−1] = f.prev) and
// returns them: the only steps that read rows (activeWeight).
func (f *prevFast) active(idx []int) []int32 { return f.activeIn(idx, f.prev, f.act) }

// activeIn is active(idx) with prev the draw before idx[0], into buf:
// activeWeight's walk, its weight discarded (the chain of additions costs
// nothing measurable: PrevStep/fast-window ijcnn1 15.4–16.8 ns either way).
func (f *prevFast) activeIn(idx []int, prev int, buf []int32) []int32 {
	act, _ := f.activeWeight(idx, prev, buf, 0)
	return act
}

// flush is the stale branch of averager.before: sum += pending·prev and
// prev = w (the caller zeroes pending).
func (f *prevFast) flush(pending float64) {
	a := f.avg
	axpy(pending, a.prev, a.sum)
	copy(a.prev, f.w)
}

// The loops keep the averager's (pending, weight, stale) in registers:
// averager.before at every step is
//
//	pending += η; weight += η; if stale { sum += pending·prev; pending = 0; prev = w; stale = false }
//
// and only AvgPaper has it. Steps between two active ones do only that.
//
// An active step's sign s = (y_i − y_j)/2 is +1 when i is the positive
// record and −1 otherwise (labels are ±1: labelBits checked), so the loops
// read the label bitmap, never the labels; the logistic loss's c = y_i − y_j
// is 2s. These are the values the general loop computes, exactly.

// prefetchAhead is how many active steps ahead the dense loop prefetches
// the rows it will read (kernel.Prefetch): their loads are then in flight
// while the current step computes. Rows are drawn at random, so the
// hardware prefetcher cannot guess them, and ijcnn1's 8.8 MB of rows miss
// the private caches: without it the loop waits on memory at most active
// steps. (Plain loads of the rows ahead do not help: they block the
// reorder buffer until they complete.)
const prefetchAhead = 4

// stepsDense walks the draws idx on dense data.
//
// With AvgPaper, averager.before at every step adds η to pending and to
// weight and, at the step after an update, flushes (sum += pending·prev;
// prev = w; pending = 0). Here weight's additions are done in the walk that
// finds the active draws (activeWeight), and pending is read from ptab at
// the steps that need it — the flushes and the batch's end — so the steps
// between two active ones cost nothing: the same additions in the same
// order, so the same values. act are idx's active draws (findActive, which
// also did weight's additions); nidx and nact are the next batch and its
// active draws, whose rows the last active steps of idx prefetch. The flush
// after an update is done inside the update's pass over w when that step is
// in this batch (kernel.UpdateFlush, kernel.PrevStep); only an update at the batch's
// last step leaves stale set for the next batch.
func (f *prevFast) stepsDense(idx []int, act []int32, nidx []int, nact []int32) {
	x, d, eta, r, r2, loss := f.data.X, f.d, f.eta, f.r, f.r2, f.loss
	w := f.w[:d]
	a := f.avg
	stale, paper := a.stale, f.paper
	sum, prev := a.sum, a.prev
	pos := f.pos
	avx := kernel.UseAVX2
	// pending after step t's increment: ptab[t − tf] after a flush at
	// step tf of this batch, else pendingAfter(p0, m0, t+1).
	p0, m0, tf := a.pending, f.pm, -1
	if paper && stale && len(idx) > 0 {
		// step 0's before(): the previous batch ended with an update
		f.flush(f.pendingAfter(p0, m0, 1))
		tf, stale = 0, false
	}
	last := len(idx) - 1
	// The hinge and square losses with AVX2 take each active step in one
	// call (kernel.PrevStep); the logistic loss needs exp.
	var sa kernel.PrevStepArgs
	fused := avx && loss != prevLogistic && d > 0
	if fused {
		sa = kernel.PrevStepArgs{W: &w[0], N: d, PLen: d, Eta: eta, R: r, R2: r2, Loss: int(loss)}
		if paper {
			sa.Sum, sa.Prev = &sum[0], &prev[0]
		}
	}
	done := 0 // rep: the steps before idx[done] are counted in wn
	for ai, ta := range act {
		tA := int(ta)
		if f.rep {
			// w_{t−1} for the steps since the last addition, before
			// this step may change w
			f.wn += tA - done
			f.repFlush()
			done = tA
		}
		// the rows of the active step prefetchAhead ahead (if any)
		pi, pj := 0, 0
		if an := ai + prefetchAhead; an < len(act) {
			tn := int(act[an])
			pi, pj = idx[tn], f.prev
			if tn > 0 {
				pj = idx[tn-1]
			}
		} else if an -= len(act); an < len(nact) {
			tn := int(nact[an])
			pi, pj = nidx[tn], idx[last]
			if tn > 0 {
				pj = nidx[tn-1]
			}
		}
		i, j := idx[tA], f.prev
		if tA > 0 {
			j = idx[tA-1]
		}
		s := float64(int(pos[i>>6]>>(i&63)&1)*2 - 1) // (y_i − y_j)/2
		if fused {
			sa.Xi, sa.Xj, sa.Pa, sa.Pb, sa.S = &x[i*d], &x[j*d], &x[pi*d], &x[pj*d], s
			// step tA+1's before() is fused with the update when the
			// table gives its pending weight, else done after it
			sa.Flush = 0
			late := false
			if paper && tA < last {
				if tf >= 0 {
					sa.Pend, sa.Flush = f.ptab[tA+1-tf], 1
				} else if m := m0 + tA + 2; m < len(f.ptab) {
					sa.Pend, sa.Flush = f.ptab[m], 1
				} else {
					late = true
				}
			}
			if !kernel.PrevStep(&sa) {
				continue
			}
			if paper && tA < last {
				if late {
					f.flush(f.pendingAfter(p0, m0, tA+2))
				}
				tf = tA + 1
			} else {
				stale = true
			}
			continue
		}
		xi := x[i*d : i*d+d]
		xj := x[j*d : j*d+d]
		h := kernel.DiffDot(w, xi, xj, x[pi*d:pi*d+d], x[pj*d:pj*d+d])
		var dv float64
		switch loss {
		case prevHinge:
			if m := 1 - s*h; !(m <= 0) {
				dv = -s
			}
		case prevSquare:
			dv = -2 * s * (1 - s*h)
		default:
			c := 2 * s // y_i − y_j
			dv = -c * sigmoidNeg(c*h)
		}
		if dv == 0 {
			continue
		}
		if paper && tA < last {
			// step tA+1's before(), fused with this update
			var pend float64
			if tf >= 0 {
				pend = f.ptab[tA+1-tf]
			} else {
				pend = f.pendingAfter(p0, m0, tA+2)
			}
			kernel.UpdateFlush(w, xi, xj, -eta*dv, r, r2, sum, prev, pend)
			tf = tA + 1
		} else {
			kernel.DenseUpdate(w, xi, xj, -eta*dv, r, r2)
			stale = true
		}
	}
	if paper {
		if tf >= 0 {
			a.pending, f.pm = f.ptab[last-tf], last-tf
		} else {
			a.pending, f.pm = f.pendingAfter(p0, m0, len(idx)), m0+len(idx)
		}
	}
	if f.rep {
		f.wn += len(idx) - done
		a.weight += float64(len(idx)) // weight++ per step: integers, exact
	}
	f.prev = idx[last]
	a.stale = stale
}

// repFlush adds w to the averager's sum f.wn times (rep) and zeroes wn.
func (f *prevFast) repFlush() {
	if f.wn > 0 {
		kernel.AddRepeat(f.avg.sum, f.w, f.wn)
	}
	f.wn = 0
}

// pendingAfter returns the pending weight k increments after it was p0,
// m0 increments after a reset: ptab[m0+k] when the table reaches it (then
// p0 = ptab[m0]), else p0 + η + … + η left to right.
func (f *prevFast) pendingAfter(p0 float64, m0, k int) float64 {
	if m := m0 + k; m < len(f.ptab) {
		return f.ptab[m]
	}
	for ; k > 0; k-- {
		p0 += f.eta
	}
	return p0
}

// activeWeight writes to buf the positions t of idx whose draw pairs
// records with different labels (idx[t] against idx[t−1], idx[−1] = prev)
// and returns them, with weight plus η once per draw, in order
// (averager.before's weight += η). Branch-free (the labels are random, so a
// branch would be mispredicted at every other change).
func (f *prevFast) activeWeight(idx []int, prev int, buf []int32, weight float64) ([]int32, float64) {
	pos, act, eta := f.pos, buf[:len(idx)], f.eta
	j := prev
	bj := pos[j>>6] >> (j & 63) & 1
	na := 0
	for t, i := range idx {
		bi := pos[i>>6] >> (i & 63) & 1
		act[na] = int32(t)
		na += int(bi ^ bj)
		bj = bi
		weight += eta
	}
	return act[:na], weight
}

// stepsSparse walks the draws idx on CSR data: the score is
// x_iᵀw − x_jᵀw and the update AddScaled(w, i, a), AddScaled(w, j, −a),
// then Π — linearObjective's Step followed by Project.
func (f *prevFast) stepsSparse(idx []int) {
	s, eta, r, r2, loss := f.data, f.eta, f.r, f.r2, f.loss
	ball := !math.IsInf(r2, 1)
	w := f.w
	a := f.avg
	pending, weight, stale, paper := a.pending, a.weight, a.stale, f.paper
	pos := f.pos
	act := f.active(idx)
	t := 0
	done := 0 // rep: the steps before idx[done] are counted in wn
	for ai, ta := range act {
		tA := int(ta)
		if an := ai + prefetchAhead; an < len(act) {
			// the rows of the active step prefetchAhead ahead (see
			// stepsDense): a9a's CSR rows are 5 MB, beyond the private caches
			tn := int(act[an])
			pj := f.prev
			if tn > 0 {
				pj = idx[tn-1]
			}
			prefetchRow(s, idx[tn])
			prefetchRow(s, pj)
		}
		if paper {
			for ; t <= tA; t++ {
				pending += eta
				weight += eta
				if stale {
					f.flush(pending)
					pending = 0
					stale = false
				}
			}
		}
		t = tA + 1
		i, j := idx[tA], f.prev
		if tA > 0 {
			j = idx[tA-1]
		}
		h := sparseDot(s, i, w) - sparseDot(s, j, w)
		sg := float64(int(pos[i>>6]>>(i&63)&1)*2 - 1) // (y_i − y_j)/2
		var dv float64
		switch loss {
		case prevHinge:
			if m := 1 - sg*h; !(m <= 0) {
				dv = -sg
			}
		case prevSquare:
			dv = -2 * sg * (1 - sg*h)
		default:
			c := 2 * sg // y_i − y_j
			dv = -c * sigmoidNeg(c*h)
		}
		if dv != 0 {
			if f.rep {
				// w_{t−1} for the steps since the last addition, before
				// this step changes w
				f.wn += tA - done
				f.repFlush()
				done = tA
			}
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
	if paper {
		for ; t < len(idx); t++ {
			pending += eta
			weight += eta
			if stale {
				f.flush(pending)
				pending = 0
				stale = false
			}
		}
	}
	if f.rep {
		f.wn += len(idx) - done
		weight += float64(len(idx))
	}
	f.prev = idx[len(idx)-1]
	a.pending, a.weight, a.stale = pending, weight, stale
}

// prefetchRow prefetches CSR row i's indices and values.
func prefetchRow(s *Dataset, i int) {
	lo, hi := s.Ptr[i], s.Ptr[i+1]
	kernel.PrefetchInt32(s.Idx[lo:hi])
	kernel.Prefetch(s.Val[lo:hi])
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
