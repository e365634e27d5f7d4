package dpalgo

import (
	"math"

	"github.com/pairfed/pairfed/pairwise"
)

// PrivateParamRadius is the default parameter radius B of dp-gd and
// dp-pair-sgd, a rule from public quantities: the utility bound of dp-gd
// (file comment) is 2B·√(G_F²/T + pΔ²/μ²); its privacy term 2B√p·Δ/μ is
// set to 1, the loss at w = 0 (hinge: 1; logistic: log 2), i.e.
// B = μ/(2√p·Δ) with Δ = GDSensitivity at n records (2c/n for linear AUC,
// 4G/n for metric) and μ the GDP parameter of (ε, δ); at least 1. Larger n
// or ε allow a larger, less regularizing ball at the same noise cost. The
// square loss's sensitivity grows with B, so it keeps B = 1. Privacy does
// not depend on B for the other losses.
func PrivateParamRadius(n, p int, eps, delta, R float64, task pairwise.Task, loss pairwise.Loss) float64 {
	if _, sq := loss.(pairwise.AUCSquare); sq || n < 2 || !(eps > 0) || !(delta > 0 && delta < 1) || !(R > 0) {
		return 1
	}
	d := p
	if task == pairwise.TaskMetric {
		d = int(math.Round(math.Sqrt(float64(p))))
	}
	obj, err := pairwise.NewObjective(&pairwise.Dataset{N: n, D: d}, pairwise.ObjectiveConfig{Task: task, Loss: loss, Constraint: "none"})
	if err != nil {
		return 1
	}
	sens, _, err := GDSensitivity(obj, R)
	if err != nil {
		return 1
	}
	mu, err := gaussianMu(eps, delta)
	if err != nil {
		return 1
	}
	return math.Max(1, mu/(2*math.Sqrt(float64(p))*sens))
}
