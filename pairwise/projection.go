package pairwise

import (
	"fmt"
	"math"
)

// Projector is the Euclidean projection Π_W onto a closed convex parameter
// set W (Frobenius geometry for matrices).
type Projector interface {
	// Name is the constraint's public name ("none", "l2", "frobenius-psd", …).
	Name() string
	// Radius is sup_{w ∈ W} ‖w‖ (Euclidean/Frobenius); +Inf when unbounded.
	Radius() float64
	// Project does w ← argmin_{v ∈ W} ‖v − w‖ in place. It must not
	// allocate for vector constraints.
	Project(w []float64)
}

// NewProjector returns the projector named kind with radius r for a task
// whose records have dimension d.
func NewProjector(kind string, r float64, task Task, d int) (Projector, error) {
	switch kind {
	case "none":
		return NoConstraint{}, nil
	case "l2":
		if task != TaskAUC {
			return nil, fmt.Errorf("pairwise: constraint l2 is for the auc task; metric models use frobenius-psd, nuclear-psd or psd")
		}
		return L2Ball{R: r}, nil
	case "frobenius-psd", "nuclear-psd", "psd":
		if task != TaskMetric {
			return nil, fmt.Errorf("pairwise: constraint %s is for the metric task", kind)
		}
		return newPSDProjector(kind, r, d), nil
	}
	return nil, fmt.Errorf("pairwise: unknown constraint %q (none, l2, frobenius-psd, nuclear-psd, psd)", kind)
}

// The sets NewProjector builds (psd.go holds the spectral ones).
var (
	_ Projector = NoConstraint{}
	_ Projector = L2Ball{}
	_ Projector = (*psdProjector)(nil)
)

// NoConstraint is W = R^p.
type NoConstraint struct{}

func (NoConstraint) Name() string        { return "none" }
func (NoConstraint) Radius() float64     { return math.Inf(1) }
func (NoConstraint) Project(w []float64) {}

// L2Ball is W = {w : ‖w‖₂ ≤ R}; Π(w) = w·min(1, R/‖w‖).
type L2Ball struct{ R float64 }

func (b L2Ball) Name() string    { return "l2" }
func (b L2Ball) Radius() float64 { return b.R }
func (b L2Ball) Project(w []float64) {
	n2 := dot(w, w)
	if n2 > b.R*b.R {
		scale(b.R/math.Sqrt(n2), w)
	}
}
