package pairwise

import (
	"fmt"
	"math"
)

// Task is what a pairwise model is learned for.
type Task string

const (
	// TaskAUC is bipartite ranking / AUC maximization with a linear scorer
	// h(w; x, x') = wᵀ(x − x'), w ∈ R^d.
	TaskAUC Task = "auc"
	// TaskMetric is similarity metric learning with a Mahalanobis metric
	// h_W(x, x') = (x − x')ᵀ W (x − x'), W ∈ S^d_+.
	TaskMetric Task = "metric"
)

// Props are the analytic properties of a pairwise loss over the domain
// {‖x‖ ≤ R} × {‖w‖ ≤ B} (Frobenius norm for metric models). The private
// algorithms derive their sensitivity from these numbers, so every constant
// here must be an upper bound proved in the loss's comment.
type Props struct {
	// Lipschitz is G: ‖∇_w f(w; z, z')‖ ≤ G for all w in the parameter set
	// and all records of norm ≤ R. +Inf when unbounded (e.g. the square loss
	// without a parameter-set radius).
	Lipschitz float64
	// Smooth is L: ∇f is L-Lipschitz in w; +Inf for non-smooth losses.
	Smooth float64
	// Convex reports convexity in w.
	Convex bool
	// StrongConvexity is α of the regularized loss f + (λ/2)‖w‖²; 0 without λ.
	StrongConvexity float64
	// Bound is sup f over the domain (+Inf when unbounded); used by
	// algorithms whose proofs need a bounded loss.
	Bound float64
}

// Smooth reports whether the loss has a finite smoothness constant.
func (p Props) IsSmooth() bool { return !math.IsInf(p.Smooth, 1) }

// RegularizedProps returns the constants of a loss with constants p plus
// the regularizer (λ/2)‖w‖² over a ball of radius B (regProps).
func RegularizedProps(p Props, lambda, B float64) Props { return regProps(p, lambda, B) }

// regProps adds the regularizer (λ/2)‖w‖² over a ball of radius B to p:
// G += λB, L += λ, α = λ.
func regProps(p Props, lambda, B float64) Props {
	if lambda == 0 {
		return p
	}
	p.Lipschitz += lambda * B
	p.Smooth += lambda
	p.StrongConvexity = lambda
	p.Bound += lambda / 2 * B * B
	return p
}

// Loss is a pairwise loss f(w; z, z') of a scalar "margin" u, the loss-specific
// function of h and the labels below. Both tasks share this form:
//
//	AUC:    f = φ(c·h), h = wᵀ(x − x'),          c = c_auc(y, y')
//	metric: f = φ(c·(b + h)) or φ(c·(1 − h)) etc. (see each loss)
//
// Implementations report value and derivative with respect to h, so the
// gradient is Deriv·∇_w h = Deriv·(x − x') (AUC) or Deriv·(x − x')(x − x')ᵀ
// (metric).
type Loss interface {
	// Name is the public name: "hinge", "square" or "logistic".
	Name() string
	// Task is the task the loss is defined for.
	Task() Task
	// Eval returns f and ∂f/∂h for the pair score h and labels y, y' ∈ {±1}.
	// It must not allocate.
	Eval(h, y, y2 float64) (value, deriv float64)
	// Props returns G, L and convexity for feature radius R and parameter
	// radius B (B = +Inf for an unconstrained parameter set), without the
	// regularizer (which the Objective adds).
	Props(R, B float64) Props
	// Formula is the loss as printed in the paper it comes from.
	Formula() string
}

// softplusNeg is φ(t) = log(1 + e^{−t}), computed stably.
func softplusNeg(t float64) float64 {
	if t > 0 {
		return math.Log1p(math.Exp(-t))
	}
	return -t + math.Log1p(math.Exp(t))
}

// sigmoidNeg is −φ'(t) = 1/(1 + e^{t}).
func sigmoidNeg(t float64) float64 {
	if t > 0 {
		e := math.Exp(-t)
		return e / (1 + e)
	}
	return 1 / (1 + math.Exp(t))
}

// aucSign is (y − y')/2 ∈ {−1, 0, +1}: +1 when z is positive and z' negative.
func aucSign(y, y2 float64) float64 { return (y - y2) / 2 }

// AUCHinge is the pairwise hinge loss for AUC maximization
// ([Y21a] §5, [Y21b] §1): (1 − wᵀ(x − x'))₊·I[y = 1, y' = −1].
//
// Pairs are unordered in the samplers (the previous instance may be either
// positive or negative), so we evaluate the symmetrized form
// (1 − s·wᵀ(x − x'))₊·I[y ≠ y'] with s = (y − y')/2, which equals the printed
// loss of the (positive, negative) ordering of the pair. This is exactly what
// the authors' code computes (y_t·(x_t − x_{t−1}) when y_t·y_{t−1} < 0).
//
// Properties: convex, not smooth; ∂f/∂w = −s(x − x') so
// G = ‖x − x'‖ ≤ 2R; f ≤ 1 + 2RB.
type AUCHinge struct{}

func (AUCHinge) Name() string { return "hinge" }
func (AUCHinge) Task() Task   { return TaskAUC }
func (AUCHinge) Formula() string {
	return "(1 − wᵀ(x − x'))₊·I[y=1, y'=−1] (symmetrized over the pair order)"
}
func (AUCHinge) Eval(h, y, y2 float64) (float64, float64) {
	s := aucSign(y, y2)
	if s == 0 {
		return 0, 0
	}
	m := 1 - s*h
	if m <= 0 {
		return 0, 0
	}
	return m, -s
}
func (AUCHinge) Props(R, B float64) Props {
	return Props{Lipschitz: 2 * R, Smooth: math.Inf(1), Convex: true, Bound: 1 + 2*R*B}
}

// AUCSquare is the least-squares AUC loss ([Y21b] eq. in §1; Lei & Ying 2019):
// (1 − wᵀ(x − x'))²·I[y = 1, y' = −1], symmetrized as for AUCHinge.
//
// Properties: convex; ∂f/∂w = −2s(1 − s·h)(x − x'), |1 − s·h| ≤ 1 + 2RB, so
// G = 2·(1 + 2RB)·2R (infinite without a parameter radius); L = 2‖x − x'‖² ≤ 8R².
type AUCSquare struct{}

func (AUCSquare) Name() string { return "square" }
func (AUCSquare) Task() Task   { return TaskAUC }
func (AUCSquare) Formula() string {
	return "(1 − wᵀ(x − x'))²·I[y=1, y'=−1] (symmetrized over the pair order)"
}
func (AUCSquare) Eval(h, y, y2 float64) (float64, float64) {
	s := aucSign(y, y2)
	if s == 0 {
		return 0, 0
	}
	m := 1 - s*h
	return m * m, -2 * s * m
}
func (AUCSquare) Props(R, B float64) Props {
	b := 1 + 2*R*B
	return Props{Lipschitz: 2 * b * 2 * R, Smooth: 8 * R * R, Convex: true, Bound: b * b}
}

// AUCLogistic is the AUC loss of [H20]/[X21] Example 2:
// f(w; z, z') = φ((y − y')·wᵀ(x − x')), φ(t) = log(1 + e^{−t}).
//
// For y = y' the loss is the constant log 2 with zero gradient. For y ≠ y',
// (y − y') = ±2, so ∂f/∂w = φ'(·)·(y − y')(x − x') with |φ'| < 1:
// G = 2·2R = 4R; φ” ≤ 1/4 gives L = (1/4)·4·‖x − x'‖² ≤ 4R²; f ≤ log(1 + e^{4RB}).
type AUCLogistic struct{}

func (AUCLogistic) Name() string { return "logistic" }
func (AUCLogistic) Task() Task   { return TaskAUC }
func (AUCLogistic) Formula() string {
	return "φ((y − y')·wᵀ(x − x')), φ(t) = log(1 + e^{−t})  [H20]/[X21] Example 2"
}
func (AUCLogistic) Eval(h, y, y2 float64) (float64, float64) {
	c := y - y2
	t := c * h
	return softplusNeg(t), -c * sigmoidNeg(t)
}

// Deriv is ∂f/∂h alone (Eval's second value).
func (AUCLogistic) Deriv(h, y, y2 float64) float64 {
	c := y - y2
	if c == 0 {
		return 0
	}
	return -c * sigmoidNeg(c*h)
}

func (AUCLogistic) Props(R, B float64) Props {
	return Props{Lipschitz: 4 * R, Smooth: 4 * R * R, Convex: true, Bound: softplusNeg(-4 * R * B)}
}

// tau is τ(y, y') of [Y21b] eq. (11): +1 for a same-class pair, −1 otherwise.
func tau(y, y2 float64) float64 {
	if y == y2 {
		return 1
	}
	return -1
}

// MetricHinge is the metric-learning hinge loss of [Y21b] eq. (11):
// f(W; z, z') = (1 + τ(y, y')·h_W(x, x'))₊, h_W = (x − x')ᵀW(x − x').
//
// ∂f/∂W = τ·(x − x')(x − x')ᵀ when active, with Frobenius norm
// ‖x − x'‖² ≤ 4R²: G = 4R². Convex (h is linear in W), not smooth.
// f ≤ 1 + 4R²B (|h| ≤ ‖W‖_F ‖x − x'‖² ≤ 4R²B).
type MetricHinge struct{}

func (MetricHinge) Name() string    { return "hinge" }
func (MetricHinge) Task() Task      { return TaskMetric }
func (MetricHinge) Formula() string { return "(1 + τ(y,y')·h_W(x,x'))₊  [Y21b] eq. (11)" }
func (MetricHinge) Eval(h, y, y2 float64) (float64, float64) {
	t := tau(y, y2)
	m := 1 + t*h
	if m <= 0 {
		return 0, 0
	}
	return m, t
}
func (MetricHinge) Props(R, B float64) Props {
	return Props{Lipschitz: 4 * R * R, Smooth: math.Inf(1), Convex: true, Bound: 1 + 4*R*R*B}
}

// MetricLogistic is the metric-learning loss of [H20]/[X21] Example 1:
// f(W; z, z') = φ(y·y'·(1 − h_W(x, x'))), φ(t) = log(1 + e^{−t}).
//
// ∂f/∂W = −y·y'·φ'(·)·(x − x')(x − x')ᵀ: G = 4R² (|φ'| < 1); φ” ≤ 1/4 gives
// L = (1/4)(4R²)² = 4R⁴. Convex (φ convex, argument affine in W).
type MetricLogistic struct{}

func (MetricLogistic) Name() string { return "logistic" }
func (MetricLogistic) Task() Task   { return TaskMetric }
func (MetricLogistic) Formula() string {
	return "φ(y·y'·(1 − h_W(x,x'))), φ(t) = log(1 + e^{−t})  [H20]/[X21] Example 1"
}
func (MetricLogistic) Eval(h, y, y2 float64) (float64, float64) {
	yy := y * y2
	t := yy * (1 - h)
	// d/dh φ(yy(1−h)) = φ'(t)·(−yy) = yy·σ(−t)
	return softplusNeg(t), yy * sigmoidNeg(t)
}
func (MetricLogistic) Props(R, B float64) Props {
	return Props{Lipschitz: 4 * R * R, Smooth: 4 * R * R * R * R, Convex: true, Bound: softplusNeg(-(1 + 4*R*R*B))}
}

// LossByName returns the named loss for a task.
func LossByName(task Task, name string) (Loss, error) {
	switch task {
	case TaskAUC:
		switch name {
		case "hinge":
			return AUCHinge{}, nil
		case "square":
			return AUCSquare{}, nil
		case "logistic":
			return AUCLogistic{}, nil
		}
	case TaskMetric:
		switch name {
		case "hinge":
			return MetricHinge{}, nil
		case "logistic":
			return MetricLogistic{}, nil
		}
	default:
		return nil, fmt.Errorf("pairwise: unknown task %q (want auc or metric)", task)
	}
	return nil, fmt.Errorf("pairwise: no loss %q for task %s (auc: hinge, square, logistic; metric: hinge, logistic)", name, task)
}

// SigmoidNeg returns σ(−t) = 1/(1 + eᵗ), computed without overflow (the
// function the logistic losses use).
func SigmoidNeg(t float64) float64 { return sigmoidNeg(t) }

// SoftplusNeg returns log(1 + e^{−t}), computed stably (the logistic
// losses' φ).
func SoftplusNeg(t float64) float64 { return softplusNeg(t) }
