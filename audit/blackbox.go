package audit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// auditData returns D and D': D' replaces record 0 by the canary. Every
// other record is x = R·e₁ with label −1; record 0 is the positive record
// −R·e₁ in D and +R·e₁ in D'. In D each pair (record 0, other) has
// ‖x − x'‖ = 2R — the largest difference a record can make — and in D' the
// same pairs have x = x' and contribute no gradient, so the canary's whole
// influence is along e₁, where the audit's statistic looks. (Record 0 sits in
// two consecutive pairs each time a previous-instance sampler draws it; all
// of them carry the full difference.)
func auditData(base *pairwise.Dataset, R float64) (*pairwise.Dataset, *pairwise.Dataset) {
	var d0 *pairwise.Dataset
	if base == nil {
		n, d := 16, 4
		x := make([]float64, n*d)
		y := make([]float64, n)
		for i := range y {
			y[i] = -1
			x[i*d] = R
		}
		d0 = pairwise.NewDense(x, y, d)
	} else {
		d0 = base.ToDense().Subset(seq(base.N))
	}
	d1 := d0.Subset(seq(d0.N))
	for k := 0; k < d0.D; k++ {
		d0.X[k], d1.X[k] = 0, 0
	}
	d0.Y[0], d1.Y[0] = 1, 1
	d0.X[0], d1.X[0] = -R, R
	return d0, d1
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// pickLoss returns the first loss meeting the algorithm's requirements.
func pickLoss(a *pairwise.Algorithm, ds *pairwise.Dataset, spec AuditSpec) (pairwise.Objective, error) {
	names := []string{"logistic", "hinge", "square"}
	if spec.Loss != "" {
		names = []string{spec.Loss}
	}
	lambda := spec.Lambda
	if lambda == 0 && a.Requires.StronglyConvex {
		lambda = 0.01
	}
	var lastErr error
	for _, name := range names {
		if a.Supports(pairwise.TaskAUC, name) != nil {
			continue
		}
		loss, err := pairwise.LossByName(pairwise.TaskAUC, name)
		if err != nil {
			return nil, err
		}
		obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Loss: loss, Lambda: lambda, Radius: 1})
		if err != nil {
			return nil, err
		}
		if _, err := a.Requires.Check(a.Name, obj, spec.R); err != nil {
			lastErr = err
			continue
		}
		return obj, nil
	}
	if lastErr == nil {
		lastErr = fmt.Errorf("audit: no AUC loss fits %s", a.Name)
	}
	return nil, lastErr
}

// samples runs the mechanism trials times on ds and returns ⟨w, e₁⟩.
func samples(ctx context.Context, a *pairwise.Algorithm, ds *pairwise.Dataset, spec AuditSpec, delta float64, trials int, seed uint64) ([]float64, string, error) {
	obj, err := pickLoss(a, ds, spec)
	if err != nil {
		return nil, "", err
	}
	out := make([]float64, trials)
	for k := 0; k < trials; k++ {
		if err := ctx.Err(); err != nil {
			return nil, "", fmt.Errorf("audit: interrupted after %d of %d trials: %w", k, trials, err)
		}
		noise := pairwise.Noise(dp.NewSeededNoise(seed*1_000_003 + uint64(k)))
		if spec.NoiseScale != 1 {
			noise = dp.ScaleNoise(noise, spec.NoiseScale)
		}
		// Start at w₀ = B·e₁ (B = 1, the parameter radius): there the
		// logistic loss of the canary's pairs in D has |φ'| ≈ 1, so their
		// gradients are as large as the Lipschitz bound G allows.
		init := make([]float64, obj.NumParams())
		init[0] = 1
		cfg := pairwise.RunConfig{Eta: spec.Eta, Steps: spec.Steps, Init: init,
			Privacy: &pairwise.Privacy{Epsilon: spec.Epsilon, Delta: delta, FeatureRadius: spec.R, Noise: noise, Calibration: spec.Calibration}}
		res, err := a.Run(ctx, obj, cfg, rand.New(rand.NewPCG(seed, uint64(k))))
		if err != nil {
			return nil, "", err
		}
		out[k] = res.W[0]
	}
	return out, obj.Loss().Name(), nil
}

// blackBox is the black-box audit: the attacker sees only the final model
// and tests w₁ = ⟨w, e₁⟩ against a threshold. A calibration round chooses
// the threshold and direction, a fresh measurement round with Trials runs
// per side evaluates it with Clopper–Pearson bounds (stats.go). δ defaults
// to dp.DefaultDelta(n) of the base dataset.
func blackBox(ctx context.Context, a *pairwise.Algorithm, spec AuditSpec) (*AuditResult, error) {
	d0, d1 := auditData(spec.Data, spec.R)
	delta := spec.Delta
	if !spec.DeltaSet {
		delta = dp.DefaultDelta(d0.N)
	}
	var s [4][]float64
	var loss string
	for k, ds := range []*pairwise.Dataset{d0, d1, d0, d1} {
		var err error
		s[k], loss, err = samples(ctx, a, ds, spec, delta, spec.Trials, spec.Seed*4+uint64(k)+1)
		if err != nil {
			return nil, err
		}
		sort.Float64s(s[k])
	}
	a2 := (1 - spec.Confidence) / 2
	test := chooseTest(s[0], s[1], a2, delta, true)
	lb, fp, fn := test.bound(s[2], s[3], a2, delta)
	dir := ">"
	if test.Flip {
		dir = "<"
	}
	return &AuditResult{
		Algorithm: spec.Algo, Mode: BlackBox, Task: string(pairwise.TaskAUC), ClaimedEpsilon: spec.Epsilon, Delta: delta, EpsilonLowerBound: lb,
		Confidence: spec.Confidence, Trials: spec.Trials,
		Statistic: fmt.Sprintf("w₁ = ⟨w, e₁⟩ of the final model %s threshold ⇒ D'", dir), Threshold: test.Thr,
		FPR: float64(fp) / float64(len(s[2])), FNR: float64(fn) / float64(len(s[3])), NoiseScale: spec.NoiseScale,
		Loss: loss, N: d0.N, D: d0.D, Canary: fmt.Sprintf("record 0 (y = +1): −R·e₁ in D, +R·e₁ in D' (R = %g); start w₀ = e₁", spec.R),
		Consistent: lb <= spec.Epsilon,
	}, nil
}
