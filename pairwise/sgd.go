package pairwise

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pairfed/pairfed/pairwise/internal/kernel"
)

// Schedule names how the step size η_t follows from the base step size η.
type Schedule string

const (
	// Constant is η_t = η ([Y21a] Theorems 1–2, 4–5).
	Constant Schedule = "constant"
	// ScaledConstant is η_t = η/√T, constant over a run of T steps: the
	// authors' code's "const" geometry (simple-pairwise utils.get_etas).
	ScaledConstant Schedule = "scaled"
	// InvSqrt is η_t = η/√t.
	InvSqrt Schedule = "sqrt"
	// Inverse is η_t = η/t.
	Inverse Schedule = "inverse"
)

// Eta returns η_t for step t ∈ [1, T].
func (s Schedule) Eta(eta float64, t, T int) float64 {
	switch s {
	case ScaledConstant:
		return eta / math.Sqrt(float64(T))
	case InvSqrt:
		return eta / math.Sqrt(float64(t))
	case Inverse:
		return eta / float64(t)
	}
	return eta
}

// Validate checks the schedule name.
func (s Schedule) Validate() error {
	switch s {
	case Constant, ScaledConstant, InvSqrt, Inverse:
		return nil
	}
	return fmt.Errorf("pairwise: unknown step-size schedule %q (constant, scaled, sqrt, inverse)", s)
}

// Averaging names how an SGD run turns iterates into its output.
type Averaging string

const (
	// AvgPaper is the output the algorithm's paper defines (for sgd-prev,
	// [Y21a] Alg 1: w̃_T = Σ_j η_j w_{j−2} / Σ_j η_j).
	AvgPaper Averaging = "paper"
	// AvgWindow is the uniform average of the iterates w_t since the previous
	// checkpoint (the authors' code: simple-pairwise alg/auc_fifo_hinge.py).
	AvgWindow Averaging = "window"
	// AvgUniform is (1/T) Σ_t w_t.
	AvgUniform Averaging = "uniform"
	// AvgLast is the last iterate w_T.
	AvgLast Averaging = "last"
)

// Validate checks the averaging name.
func (a Averaging) Validate() error {
	switch a {
	case "", AvgPaper, AvgWindow, AvgUniform, AvgLast:
		return nil
	}
	return fmt.Errorf("pairwise: unknown averaging %q (paper, window, uniform, last)", a)
}

// RunConfig configures one training run. Zero values mean the algorithm's
// defaults.
type RunConfig struct {
	// Steps is the number of iterations T; 0 means Passes·n.
	Steps int
	// Passes is the number of passes over the data when Steps is 0
	// (default 10 for offline SGD, 1 for online algorithms).
	Passes float64
	// Eta is the base step size η (> 0).
	Eta float64
	// Schedule derives η_t from η (default: the algorithm's).
	Schedule Schedule
	// Averaging selects the output (default AvgPaper).
	Averaging Averaging
	// Checkpoints lists increasing steps t at which OnCheckpoint is called
	// with the output the run would return if stopped at t.
	Checkpoints []int
	// OnCheckpoint receives the model at a checkpoint; the slice is only
	// valid during the call.
	OnCheckpoint func(t int, w []float64)
	// Buffer is the reservoir size s (olp, default 200); PosBuffer and
	// NegBuffer are oam-gra's buffer sizes (default 100 each).
	Buffer, PosBuffer, NegBuffer int
	// Init is w_0 (nil means zero).
	Init []float64
	// Privacy is required by private algorithms and ignored by the others.
	Privacy *Privacy
}

// InitialModel returns w_0 in a new vector of p parameters: a copy of
// Init, zeros when Init is nil. Its length is the algorithm's to check.
func (c *RunConfig) InitialModel(p int) []float64 {
	w := make([]float64, p)
	copy(w, c.Init)
	return w
}

// steps returns T for a dataset of n records.
func (c *RunConfig) TotalSteps(n int, defPasses float64) int {
	if c.Steps > 0 {
		return c.Steps
	}
	p := c.Passes
	if p <= 0 {
		p = defPasses
	}
	return int(math.Ceil(p * float64(n)))
}

func (c *RunConfig) Validate() error {
	if !(c.Eta > 0) || math.IsInf(c.Eta, 0) {
		return fmt.Errorf("pairwise: step size η = %v must be finite and > 0", c.Eta)
	}
	if c.Steps < 0 || c.Passes < 0 || math.IsNaN(c.Passes) {
		return fmt.Errorf("pairwise: steps (%d) and passes (%v) must be ≥ 0", c.Steps, c.Passes)
	}
	if c.Schedule != "" {
		if err := c.Schedule.Validate(); err != nil {
			return err
		}
	}
	return c.Averaging.Validate()
}

// Result is the outcome of a run.
type Result struct {
	// W is the output model.
	W []float64
	// Last is the last iterate w_T, set by the single-pair SGD algorithms
	// (sgd-prev, sgd-pair, …; whatever their output rule) and nil for the
	// others. Fed-avg restarts each round from the sites' last iterates.
	Last []float64
	// Steps is the number of iterations performed.
	Steps int
	// PairGrads counts pair-gradient evaluations (the work done).
	PairGrads int64
	// Privacy is set by private algorithms.
	Privacy *PrivacyReport
}

// averager accumulates the output of an SGD run for one Averaging mode.
type Averager struct {
	mode   Averaging
	sum    []float64 // weighted sum of iterates
	weight float64
	out    []float64

	// AvgPaper: prev is w_{t−2}; pending is the weight owed to prev that is
	// not yet in sum; stale reports that w changed since prev was copied.
	// Most steps leave w unchanged (same-label pairs, inactive hinge), and
	// then w_{t−1} = w_{t−2}: the weight just accumulates, with no O(d) work.
	prev    []float64
	pending float64
	stale   bool
}

func NewAverager(mode Averaging, w0 []float64) *Averager {
	a := &Averager{mode: mode, sum: make([]float64, len(w0)), out: make([]float64, len(w0))}
	if mode == AvgPaper {
		// [Y21a] Alg 1: w_{−1} = w_0.
		a.prev = append([]float64(nil), w0...)
	}
	return a
}

// before is called at step t with the current iterate cur = w_{t−1} before
// the update, and η_t. For AvgPaper it adds η_t·w_{t−2} to the sum (lazily)
// and makes prev = w_{t−1} for the next step.
func (a *Averager) before(cur []float64, eta float64) {
	if a.mode != AvgPaper {
		return
	}
	a.pending += eta
	a.weight += eta
	if a.stale {
		// axpy's sums bit for bit, eight entries per instruction pair with
		// AVX2 (w is d² long for the metric task).
		kernel.Axpy(a.pending, a.prev, a.sum)
		a.pending = 0
		copy(a.prev, cur)
		a.stale = false
	}
}

// changed records that the step just taken changed w.
func (a *Averager) changed() { a.stale = true }

// after is called with w_t after the update (and projection).
func (a *Averager) After(cur []float64) {
	switch a.mode {
	case AvgWindow, AvgUniform:
		axpy(1, cur, a.sum)
		a.weight++
	}
}

// output returns the current output model (a view valid until the next call).
func (a *Averager) Output(cur []float64) []float64 {
	if a.mode == AvgLast || a.weight == 0 {
		copy(a.out, cur)
		return a.out
	}
	for k, v := range a.sum {
		if a.prev != nil {
			v += a.pending * a.prev[k]
		}
		a.out[k] = v / a.weight
	}
	return a.out
}

// reset starts a new window (AvgWindow only).
func (a *Averager) Reset() {
	if a.mode == AvgWindow {
		for k := range a.sum {
			a.sum[k] = 0
		}
		a.weight = 0
	}
}

// NewCheckpointer returns the checkpointer of a run with configuration cfg.
func NewCheckpointer(cfg *RunConfig) Checkpointer { return Checkpointer{cfg: cfg} }

// checkpointer calls cfg.OnCheckpoint at the configured steps.
type Checkpointer struct {
	cfg  *RunConfig
	next int
}

// segments drives a specialized loop over steps 1..T in blocks: run(k)
// takes the next k steps; a block ends at every 4096th step (the context
// check), at the next checkpoint and at T, and at(t) is called after a
// block that ends on a due checkpoint. The fast and the sparse sgd-prev
// loops share it (the general loop checks per step).
func (c *Checkpointer) segments(ctx context.Context, T int, run func(k int), at func(t int)) error {
	for t := 1; t <= T; {
		if t&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		end := min(T, t|4095)
		if c.next < len(c.cfg.Checkpoints) {
			if cp := c.cfg.Checkpoints[c.next]; cp >= t && cp < end {
				end = cp
			}
		}
		run(end - t + 1)
		t = end
		if c.Due(t) {
			at(t)
		}
		t++
	}
	return nil
}

func (c *Checkpointer) Due(t int) bool {
	return c.next < len(c.cfg.Checkpoints) && c.cfg.Checkpoints[c.next] == t
}

func (c *Checkpointer) Fire(t int, w []float64) {
	for c.Due(t) {
		c.cfg.OnCheckpoint(t, w)
		c.next++
	}
}

// windowed is an output rule whose average restarts at each checkpoint.
type Windowed interface {
	Output(w []float64) []float64
	Reset()
}

// window fires the checkpoints due at step t of T with o's current output
// and starts o's next window — except at t = T, whose window is the run's
// output. Callers test due(t) first (it inlines; this does not).
func (c *Checkpointer) Window(t, T int, w []float64, o Windowed) {
	c.Fire(t, o.Output(w))
	if t < T {
		o.Reset()
	}
}

// PairSource yields the pair (i, j) used at each SGD step.
type PairSource interface {
	// Next returns the pair for the next step; ok is false when the source
	// has no pair this step (the step still counts in t, as in [Y21a]'s code).
	Next(rng *rand.Rand) (i, j int, ok bool)
}

// RunPairSGD is the projected SGD loop shared by single-pair algorithms:
//
//	w_t = Π_W(w_{t−1} − η_t ∇f(w_{t−1}; z_i, z_j)),  t = 1..T,
//
// with the output given by cfg.Averaging (default AvgPaper).
func RunPairSGD(ctx context.Context, obj Objective, cfg RunConfig, rng *rand.Rand, src PairSource, T int, sched Schedule) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Schedule != "" {
		sched = cfg.Schedule
	}
	mode := cfg.Averaging
	if mode == "" {
		mode = AvgPaper
	}
	w := cfg.InitialModel(obj.NumParams())
	avg := NewAverager(mode, w)
	cp := NewCheckpointer(&cfg)
	var grads int64
	constant := sched == Constant || sched == ScaledConstant
	etaConst := sched.Eta(cfg.Eta, 1, T)
	fused, _ := obj.(interface {
		stepProject(w []float64, i, j int, eta float64) bool
	})
	for t := 1; t <= T; t++ {
		if t&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		eta := etaConst
		if !constant {
			eta = sched.Eta(cfg.Eta, t, T)
		}
		avg.before(w, eta)
		if i, j, ok := src.Next(rng); ok {
			grads++
			if fused != nil {
				if fused.stepProject(w, i, j, eta) {
					avg.changed()
				}
			} else if obj.Step(w, i, j, eta) {
				obj.Project(w)
				avg.changed()
			}
		}
		avg.After(w)
		if cp.Due(t) {
			cp.Window(t, T, w, avg)
		}
	}
	out := append([]float64(nil), avg.Output(w)...)
	return &Result{W: out, Last: w, Steps: T, PairGrads: grads}, nil
}
