package audit

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
	"gonum.org/v1/gonum/stat/distuv"
)

// AuditSpec configures an empirical privacy audit of one private algorithm:
// a distinguishing test between neighbouring datasets D and D' that differ
// in one record (a worst-case canary), run on the real mechanism many times.
// Any test's false-positive and false-negative rates (α, β) of an (ε, δ)-DP
// mechanism satisfy α + e^ε β ≥ 1 − δ and β + e^ε α ≥ 1 − δ (Kairouz, Oh,
// Viswanath 2015), so Clopper–Pearson upper bounds on α, β give a lower
// bound on the ε the mechanism can have — ε_lb ≤ ε for a correct mechanism,
// except with probability ≤ 5% (two one-sided 97.5% bounds).
type AuditSpec struct {
	Algo    string
	Epsilon float64
	Delta   float64 // 0 with DeltaSet false means 1/n
	// DeltaSet marks Delta as given (0 then means pure ε-DP).
	DeltaSet bool
	// Data is the base dataset D (labels ±1, ‖x‖ ≤ R); nil builds a small
	// synthetic one (n = 16, d = 4).
	Data *pairwise.Dataset
	// R is the feature radius (default 1).
	R float64
	// Trials per side for the measurement (default 1000); calibration uses
	// as many again on fresh randomness.
	Trials int
	Seed   uint64
	// NoiseScale multiplies every σ/b the algorithm asks for. 1 (default) audits
	// the real mechanism; < 1 deliberately breaks it, to show the audit
	// catches too little noise (tests and `pairfed audit --noise-scale`).
	NoiseScale float64
	// Calibration of the audited algorithm's noise: exact (default) or
	// paper.
	Calibration pairwise.Calibration
	// Loss and Lambda for the objective; empty picks the first of logistic,
	// hinge, square that meets the algorithm's assumptions, with λ = 0.01 if
	// strong convexity is needed.
	Loss   string
	Lambda float64
	// Steps and Eta override the algorithm's defaults (0 = defaults).
	Steps int
	Eta   float64
}

// AuditResult is the outcome of an audit.
type AuditResult struct {
	Algorithm         string  `json:"algorithm"`
	ClaimedEpsilon    float64 `json:"claimed_epsilon"`
	Delta             float64 `json:"delta"`
	EpsilonLowerBound float64 `json:"epsilon_lower_bound"`
	Trials            int     `json:"trials"`
	Statistic         string  `json:"statistic"`
	Threshold         float64 `json:"threshold"`
	FPR               float64 `json:"false_positive_rate"`
	FNR               float64 `json:"false_negative_rate"`
	NoiseScale        float64 `json:"noise_scale"`
	Loss              string  `json:"loss"`
	N                 int     `json:"n"`
	D                 int     `json:"d"`
	Canary            string  `json:"canary"`
	Consistent        bool    `json:"consistent"` // ε_lb ≤ claimed ε
}

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
		lastErr = fmt.Errorf("dp: audit: no AUC loss fits %s", a.Name)
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

// clopperPearsonUpper is the one-sided (1 − a) upper confidence bound on a
// binomial proportion with k successes in n trials.
func clopperPearsonUpper(k, n int, a float64) float64 {
	if k >= n {
		return 1
	}
	return distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - a)
}

// epsilonBound is the ε lower bound implied by upper bounds on FPR and FNR.
func epsilonBound(fprUB, fnrUB, delta float64) float64 {
	e := 0.0
	if fnrUB > 0 {
		e = math.Max(e, math.Log((1-delta-fprUB)/fnrUB))
	}
	if fprUB > 0 {
		e = math.Max(e, math.Log((1-delta-fnrUB)/fprUB))
	}
	if math.IsNaN(e) {
		return 0
	}
	return e
}

// rates counts, for the test "say D' when s > thr" (or < thr when flip),
// false positives among D-samples and false negatives among D'-samples.
func rates(s0, s1 []float64, thr float64, flip bool) (fp, fn int) {
	for _, v := range s0 {
		if (v > thr) != flip && v != thr {
			fp++
		}
	}
	for _, v := range s1 {
		if !((v > thr) != flip && v != thr) {
			fn++
		}
	}
	return fp, fn
}

// MaxTrials bounds AuditSpec.Trials.
const MaxTrials = 1_000_000

// Audit runs the audit: a calibration round chooses the threshold (and
// direction) on ⟨w, e₁⟩ that maximizes the bound, then a fresh measurement
// round with Trials runs per side evaluates it with Clopper–Pearson bounds.
func Audit(ctx context.Context, spec AuditSpec) (*AuditResult, error) {
	a, err := pairwise.Lookup(spec.Algo)
	if err != nil {
		return nil, err
	}
	if !a.Private {
		return nil, fmt.Errorf("dp: audit: %s is not a private algorithm", spec.Algo)
	}
	if !(spec.Epsilon > 0) || math.IsInf(spec.Epsilon, 0) {
		return nil, fmt.Errorf("dp: audit: ε = %v must be finite and > 0", spec.Epsilon)
	}
	if spec.R == 0 {
		spec.R = 1
	}
	if spec.Trials == 0 {
		spec.Trials = 1000
	}
	if spec.Trials < 10 {
		return nil, fmt.Errorf("dp: audit: %d trials is too few (≥ 10)", spec.Trials)
	}
	// Memory is bounded before anything is allocated: four sample slices
	// of Trials float64s. At 10⁶ trials per side the Clopper–Pearson
	// bounds already resolve ε to about 10⁻³; more only costs memory.
	if spec.Trials > MaxTrials {
		return nil, fmt.Errorf("dp: audit: %d trials exceeds the %d allowed (4 × 8 bytes each are held in memory): give --trials ≤ %d", spec.Trials, MaxTrials, MaxTrials)
	}
	if spec.NoiseScale == 0 {
		spec.NoiseScale = 1
	}
	d0, d1 := auditData(spec.Data, spec.R)
	delta := spec.Delta
	if !spec.DeltaSet {
		delta = 1 / float64(d0.N)
	}
	const conf = 0.025 // each one-sided bound holds w.p. 97.5%
	cal0, _, err := samples(ctx, a, d0, spec, delta, spec.Trials, spec.Seed*4+1)
	if err != nil {
		return nil, err
	}
	cal1, _, err := samples(ctx, a, d1, spec, delta, spec.Trials, spec.Seed*4+2)
	if err != nil {
		return nil, err
	}
	cands := append(append([]float64(nil), cal0...), cal1...)
	sort.Float64s(cands)
	bestE, bestThr, bestFlip := -1.0, 0.0, false
	for i, thr := range cands {
		if i > 0 && thr == cands[i-1] {
			continue
		}
		for _, flip := range []bool{false, true} {
			fp, fn := rates(cal0, cal1, thr, flip)
			e := epsilonBound(clopperPearsonUpper(fp, len(cal0), conf), clopperPearsonUpper(fn, len(cal1), conf), delta)
			if e > bestE {
				bestE, bestThr, bestFlip = e, thr, flip
			}
		}
	}
	m0, loss, err := samples(ctx, a, d0, spec, delta, spec.Trials, spec.Seed*4+3)
	if err != nil {
		return nil, err
	}
	m1, _, err := samples(ctx, a, d1, spec, delta, spec.Trials, spec.Seed*4+4)
	if err != nil {
		return nil, err
	}
	fp, fn := rates(m0, m1, bestThr, bestFlip)
	fprUB := clopperPearsonUpper(fp, len(m0), conf)
	fnrUB := clopperPearsonUpper(fn, len(m1), conf)
	lb := epsilonBound(fprUB, fnrUB, delta)
	dir := ">"
	if bestFlip {
		dir = "<"
	}
	return &AuditResult{
		Algorithm: spec.Algo, ClaimedEpsilon: spec.Epsilon, Delta: delta, EpsilonLowerBound: lb, Trials: spec.Trials,
		Statistic: fmt.Sprintf("w₁ = ⟨w, e₁⟩ %s threshold ⇒ D'", dir), Threshold: bestThr,
		FPR: float64(fp) / float64(len(m0)), FNR: float64(fn) / float64(len(m1)), NoiseScale: spec.NoiseScale,
		Loss: loss, N: d0.N, D: d0.D, Canary: fmt.Sprintf("record 0 (y = +1): −R·e₁ in D, +R·e₁ in D' (R = %g); start w₀ = e₁", spec.R),
		Consistent: lb <= spec.Epsilon,
	}, nil
}
