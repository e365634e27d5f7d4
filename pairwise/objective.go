package pairwise

import (
	"fmt"
	"math"
)

// Objective couples a task's parameterization, a pairwise loss, an optional
// (λ/2)‖w‖² regularizer, a constraint set and the training sample S:
//
//	F_S(w) = 1/(n(n−1)) Σ_{i≠j} f(w; z_i, z_j) + (λ/2)‖w‖²,  w ∈ W.
//
// Parameters are a flat []float64: w ∈ R^d for TaskAUC, W ∈ S^d row-major
// (d·d entries) for TaskMetric. Objectives hold scratch space, so one
// Objective must not be used from two goroutines at once.
type Objective interface {
	Task() Task
	Loss() Loss
	Data() *Dataset
	// NumParams is the length of a parameter vector.
	NumParams() int
	// Lambda is the regularization strength λ ≥ 0.
	Lambda() float64
	// Constraint describes W (its name and radius).
	Constraint() Projector
	// Score returns h(w; x_i, x_j).
	Score(w []float64, i, j int) float64
	// PairLoss returns f(w; z_i, z_j) + (λ/2)‖w‖².
	PairLoss(w []float64, i, j int) float64
	// AddGrad does g += scale·∇f(w; z_i, z_j) (the loss only, no regularizer)
	// and reports whether the loss gradient was non-zero.
	AddGrad(g, w []float64, i, j int, scale float64) bool
	// Step does w ← w − η(∇f(w; z_i, z_j) + λw) in place, without projecting,
	// and reports whether w changed. It must not allocate.
	Step(w []float64, i, j int, eta float64) bool
	// Project does w ← Π_W(w) in place.
	Project(w []float64)
	// Props returns G, L, α of w ↦ f(w; z, z') + (λ/2)‖w‖² over W for
	// records of norm ≤ R, derived from the loss's own bounds.
	Props(R float64) Props
}

// ObjectiveConfig builds an Objective.
type ObjectiveConfig struct {
	Task   Task
	Loss   Loss
	Lambda float64
	// Constraint is "none", "l2" (AUC), "frobenius-psd", "nuclear-psd" or
	// "psd" (metric; "psd" has no radius). Empty picks the task default:
	// "l2" for AUC and "frobenius-psd" for metric.
	Constraint string
	// Radius is the radius B of the parameter set (ignored for "none"/"psd").
	Radius float64
}

// Validate fills defaults and checks the configuration.
func (c *ObjectiveConfig) Validate() error {
	if c.Loss == nil {
		return fmt.Errorf("pairwise: objective needs a loss")
	}
	if c.Task == "" {
		c.Task = c.Loss.Task()
	}
	if c.Loss.Task() != c.Task {
		return fmt.Errorf("pairwise: loss %s is for task %s, not %s", c.Loss.Name(), c.Loss.Task(), c.Task)
	}
	if c.Lambda < 0 || math.IsNaN(c.Lambda) || math.IsInf(c.Lambda, 0) {
		return fmt.Errorf("pairwise: λ = %v must be finite and ≥ 0", c.Lambda)
	}
	if c.Constraint == "" {
		if c.Task == TaskAUC {
			c.Constraint = "l2"
		} else {
			c.Constraint = "frobenius-psd"
		}
	}
	needsRadius := c.Constraint != "none" && c.Constraint != "psd"
	if needsRadius && (!(c.Radius > 0) || math.IsInf(c.Radius, 0)) {
		return fmt.Errorf("pairwise: constraint %s needs a finite radius > 0, got %v", c.Constraint, c.Radius)
	}
	return nil
}

// NewObjective returns the objective of cfg over data.
func NewObjective(data *Dataset, cfg ObjectiveConfig) (Objective, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	proj, err := NewProjector(cfg.Constraint, cfg.Radius, cfg.Task, data.D)
	if err != nil {
		return nil, err
	}
	switch cfg.Task {
	case TaskAUC:
		return &linearObjective{loss: cfg.Loss, data: data, lambda: cfg.Lambda, proj: proj}, nil
	case TaskMetric:
		return newMetricObjective(data, cfg.Loss, cfg.Lambda, proj), nil
	}
	return nil, fmt.Errorf("pairwise: unknown task %q", cfg.Task)
}

// The two models NewObjective builds (metric.go is the metric one).
var (
	_ Objective = (*linearObjective)(nil)
	_ Objective = (*metricObjective)(nil)
)

// linearObjective is TaskAUC: h(w; x, x') = wᵀ(x − x').
type linearObjective struct {
	loss   Loss
	data   *Dataset
	lambda float64
	proj   Projector
}

func (o *linearObjective) Task() Task            { return TaskAUC }
func (o *linearObjective) Loss() Loss            { return o.loss }
func (o *linearObjective) Data() *Dataset        { return o.data }
func (o *linearObjective) NumParams() int        { return o.data.D }
func (o *linearObjective) Lambda() float64       { return o.lambda }
func (o *linearObjective) Constraint() Projector { return o.proj }
func (o *linearObjective) Project(w []float64)   { o.proj.Project(w) }

func (o *linearObjective) Score(w []float64, i, j int) float64 {
	s := o.data
	if s.X != nil {
		return diffDot(w, s.X[i*s.D:(i+1)*s.D], s.X[j*s.D:(j+1)*s.D])
	}
	return s.Dot(i, w) - s.Dot(j, w)
}

func (o *linearObjective) PairLoss(w []float64, i, j int) float64 {
	v, _ := o.loss.Eval(o.Score(w, i, j), o.data.Y[i], o.data.Y[j])
	if o.lambda != 0 {
		v += o.lambda / 2 * dot(w, w)
	}
	return v
}

func (o *linearObjective) AddGrad(g, w []float64, i, j int, scale float64) bool {
	_, d := o.loss.Eval(o.Score(w, i, j), o.data.Y[i], o.data.Y[j])
	if d == 0 {
		return false
	}
	o.addDiff(g, i, j, scale*d)
	return true
}

// addDiff does g += a·(x_i − x_j).
func (o *linearObjective) addDiff(g []float64, i, j int, a float64) {
	s := o.data
	if s.X != nil {
		xi := s.X[i*s.D : (i+1)*s.D]
		xj := s.X[j*s.D : (j+1)*s.D]
		g = g[:len(xi)]
		xj = xj[:len(xi)]
		for k := range xi {
			g[k] += a * (xi[k] - xj[k])
		}
		return
	}
	s.AddScaled(g, i, a)
	s.AddScaled(g, j, -a)
}

// Step and stepProject test the labels before reading a row: for every
// AUC loss a same-label pair has zero gradient at any finite score (hinge
// and square return 0 before reading h; logistic's coefficient is
// −0·σ(0) = −0), so the score is not computed. (Only a non-finite score,
// a diverged model, could have given a NaN coefficient there.)
func (o *linearObjective) Step(w []float64, i, j int, eta float64) bool {
	var d float64
	if y := o.data.Y; y[i] != y[j] {
		_, d = o.loss.Eval(o.Score(w, i, j), y[i], y[j])
	}
	if o.lambda != 0 {
		scale(1-eta*o.lambda, w)
	} else if d == 0 {
		return false
	}
	if d != 0 {
		o.addDiff(w, i, j, -eta*d)
	}
	return true
}

func (o *linearObjective) Props(R float64) Props {
	B := o.proj.Radius()
	return regProps(o.loss.Props(R, B), o.lambda, B)
}

// stepProject is Step followed by Project, fused for dense data in an ℓ2
// ball: the update and ‖w‖² are computed in one pass over w. It returns
// whether w changed. RunPairSGD uses it when available; results equal
// Step + Project up to floating-point reassociation of ‖w‖².
func (o *linearObjective) stepProject(w []float64, i, j int, eta float64) bool {
	ball, ok := o.proj.(L2Ball)
	s := o.data
	if !ok || s.X == nil || o.lambda != 0 {
		if o.Step(w, i, j, eta) {
			o.proj.Project(w)
			return true
		}
		return false
	}
	if s.Y[i] == s.Y[j] {
		return false // zero gradient (see Step)
	}
	xi := s.X[i*s.D : (i+1)*s.D]
	xj := s.X[j*s.D : (j+1)*s.D]
	_, d := o.loss.Eval(diffDot(w, xi, xj), s.Y[i], s.Y[j])
	if d == 0 {
		return false
	}
	a := -eta * d
	w = w[:len(xi)]
	xj = xj[:len(xi)]
	var n2 float64
	for k := range xi {
		v := w[k] + a*(xi[k]-xj[k])
		w[k] = v
		n2 += v * v
	}
	if n2 > ball.R*ball.R {
		scale(ball.R/math.Sqrt(n2), w)
	}
	return true
}

// IsLinear reports whether obj is the linear model (w ∈ R^d, score wᵀx)
// of its loss rather than the metric one.
func IsLinear(obj Objective) bool {
	_, ok := obj.(*linearObjective)
	return ok
}
