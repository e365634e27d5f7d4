package dpalgo

import (
	"math"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// [K22] Thm 1 by hand for n = 1024, T = 10, ε = 1, δ = 1e-3, the logistic
// AUC loss with R = 1 (G = 4R = 4):
//
//	σ = 8·G·√(T·ln(1/δ))/(n·ε) = 32·√(10·6.907755278982137)/1024
//	  = 32·8.311290/1024 = 0.25972783379204845,
//	Δ = 4G/n = 16/1024 = 0.015625 per release, T = 10 releases.
//
// (At T = 50 the same arithmetic gives 32·18.584681/1024 = 0.5807690920077873.)
//
// Under --calibration paper the drawn σ is exactly that; the report's
// sensitivity is the proven 2Γ/n = 2G/n = 0.0078125 (pairGradGap) and the
// paper's 4G/n is kept beside it.
func TestDPGDGradSigmaMatchesThm1(t *testing.T) {
	data := separableToyData(1024, 5, 21)
	obj := objectiveOf(t, data, pairwise.TaskAUC, "logistic", "l2", 1)
	noise := newYKNoise(8, true)
	res, err := runSeeded(t, "dp-gd-grad", obj, pairwise.RunConfig{Steps: 10,
		Privacy: &pairwise.Privacy{Epsilon: 1, Delta: 1e-3, FeatureRadius: 1, Noise: noise, Calibration: pairwise.CalibrationPaper}})
	if err != nil {
		t.Fatal(err)
	}
	if len(noise.scales) != 10 {
		t.Fatalf("%d noise draws, want T = 10", len(noise.scales))
	}
	rep := res.Privacy
	for k := range noise.scales {
		wantRelClose(t, "drawn σ", noise.scales[k], 0.25972783379204845)
		wantRelClose(t, "reported σ", rep.Sigmas[k], 0.25972783379204845)
		wantRelClose(t, "paper Δ", rep.PaperSensitivity[k], 0.015625)
		wantRelClose(t, "proven Δ", rep.Sensitivity[k], 0.0078125)
		if noise.kinds[k] != "gaussian" || noise.lens[k] != 5 {
			t.Fatalf("draw %d: %s over %d entries", k, noise.kinds[k], noise.lens[k])
		}
	}
	wantRelClose(t, "DPGDGradPaperSigma(T = 50)", DPGDGradPaperSigma(50, 1024, 4, 1, 1e-3), 0.5807690920077873)
	if rep.Releases != 10 || len(rep.Sigmas) != 10 || !strings.Contains(rep.Formula, "[K22] Thm 1") ||
		!strings.Contains(rep.Accountant, "moments accountant") || rep.G != 4 || rep.L != 4 ||
		rep.Private != noise.Secure() || res.Steps != 10 {
		t.Errorf("report fields: %+v", rep)
	}
	if n := pairwise.Norm2(res.W); n > 1+1e-12 {
		t.Errorf("θ_T outside C: ‖θ‖ = %v", n)
	}
	if !(rep.CertifiedEpsilon <= 1 && rep.CertifiedDelta <= 1e-3) || rep.Calibration != "paper" {
		t.Errorf("paper σ not certified: (%v, %v), %q", rep.CertifiedEpsilon, rep.CertifiedDelta, rep.Calibration)
	}
	// The default (exact) calibration: T = 10 releases of Δ = 2G/n compose
	// to μ = √10·Δ/σ, and σ is the smallest with δ_μ(1) ≤ 1e-3: μ* =
	// 1/AnalyticGaussianSigma(1, 1e-3, 1), so σ = √10·0.0078125·that.
	exact, err := runSeeded(t, "dp-gd-grad", obj, pairwise.RunConfig{Steps: 10,
		Privacy: &pairwise.Privacy{Epsilon: 1, Delta: 1e-3, FeatureRadius: 1, Noise: newYKNoise(8, true)}})
	if err != nil {
		t.Fatal(err)
	}
	one, _ := dp.AnalyticGaussianSigma(1, 1e-3, 1)
	if got, want := exact.Privacy.Sigmas[0], math.Sqrt(10)*0.0078125*one; math.Abs(got-want) > 1e-9*want {
		t.Errorf("exact σ = %v, want %v", got, want)
	}
	if p := exact.Privacy; !(p.CertifiedEpsilon <= 1 && p.CertifiedDelta <= 1e-3) || p.Calibration != "exact" {
		t.Errorf("exact σ not certified: %+v", p)
	}
}

// Defaults: T = ⌈ln(nε/√p)⌉ = ⌈ln(1024/√5)⌉ = ⌈6.12675⌉ = 7 (Remark 2) and
// η = 1/L = 1/4 (Thms 2–3) for the logistic loss with R = 1.
func TestDPGDGradDefaults(t *testing.T) {
	if T := DPGDGradDefaultSteps(1024, 5, 1); T != 7 {
		t.Fatalf("DPGDGradDefaultSteps = %d, want 7", T)
	}
	if T := DPGDGradDefaultSteps(4, 100, 1); T != 1 {
		t.Fatalf("DPGDGradDefaultSteps for nε < √p = %d, want 1", T)
	}
	data := separableToyData(1024, 5, 22)
	obj := objectiveOf(t, data, pairwise.TaskAUC, "logistic", "l2", 1)
	noise := newYKNoise(9, false)
	res, err := runSeeded(t, "dp-gd-grad", obj, pairwise.RunConfig{
		Privacy: &pairwise.Privacy{Epsilon: 1, Delta: 1e-3, FeatureRadius: 1, Noise: noise}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 7 || len(noise.scales) != 7 || res.Privacy.Private {
		t.Fatalf("steps %d, draws %d, private %v; want 7, 7, false", res.Steps, len(noise.scales), res.Privacy.Private)
	}
	// paper σ = 32·√(7·6.907755278982137)/1024 = 32·6.953657/1024 = 0.21730178…
	wantRelClose(t, "paper σ at T = 7", res.Privacy.PaperSigmas[0], 32*math.Sqrt(7*6.907755278982137)/1024)
	if !(noise.scales[0] < res.Privacy.PaperSigmas[0]) {
		t.Errorf("exact σ %v not below the paper's %v", noise.scales[0], res.Privacy.PaperSigmas[0])
	}
	found := false
	for _, n := range res.Privacy.Notes {
		found = found || strings.Contains(n, "η = 1/L = 0.25")
	}
	if !found {
		t.Errorf("notes do not state η = 1/L = 0.25: %v", res.Privacy.Notes)
	}
}

func TestDPGDGradRefusals(t *testing.T) {
	data := separableToyData(64, 3, 23)
	for _, c := range []struct {
		name, loss, constraint string
		radius                 float64
		cfg                    pairwise.RunConfig
		want                   string
	}{
		{"hinge is not smooth", "hinge", "l2", 1, pairwise.RunConfig{}, "smooth"},
		{"square without W radius", "square", "none", 0, pairwise.RunConfig{}, "Lipschitz"},
		{"passes", "logistic", "l2", 1, pairwise.RunConfig{Passes: 2}, "steps"},
		{"averaging", "logistic", "l2", 1, pairwise.RunConfig{Averaging: pairwise.AvgUniform}, "last iterate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			obj := objectiveOf(t, data, pairwise.TaskAUC, c.loss, c.constraint, c.radius)
			noise := newYKNoise(1, true)
			cfg := c.cfg
			cfg.Privacy = &pairwise.Privacy{Epsilon: 1, Delta: 1e-3, FeatureRadius: 1, Noise: noise}
			_, err := runSeeded(t, "dp-gd-grad", obj, cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one mentioning %q", err, c.want)
			}
			if len(noise.scales) != 0 {
				t.Fatalf("%d noise draws before refusing", len(noise.scales))
			}
		})
	}
}

func TestDPGDGradUtilityAtHugeEpsilon(t *testing.T) {
	obj := objectiveOf(t, separableToyData(1024, 5, 24), pairwise.TaskAUC, "logistic", "l2", 1)
	res, err := runSeeded(t, "dp-gd-grad", obj, pairwise.RunConfig{
		Privacy: &pairwise.Privacy{Epsilon: 1e6, Delta: 1e-3, FeatureRadius: 1, Noise: newYKNoise(2, true)}})
	if err != nil {
		t.Fatal(err)
	}
	if auc := pairwise.LinearAUC(res.W, separableToyData(1000, 5, 99)); !(auc >= 0.85) {
		t.Fatalf("test AUC %.3f < 0.85 at ε = 1e6", auc)
	}
	if p := res.Privacy; !(p.CertifiedEpsilon <= 1e6 && p.CertifiedDelta <= 1e-3) {
		t.Errorf("ε = 1e6 not certified: (%v, %v)", p.CertifiedEpsilon, p.CertifiedDelta)
	}
}

// Over W = R^p the output is θ_T = −η Σ_t (∇_t + b_t), whose noise part has
// ‖·‖² ~ η²Tσ²·χ²_p; with p = 200 we allow 6 sd = 6√(2/p) relative, plus
// the drift ‖η Σ_t ∇_t‖ ≤ ηTG = 10 (false-failure rate below 1e-6).
func TestDPGDGradNoiseNormMatchesSigma(t *testing.T) {
	const p = 200
	obj := objectiveOf(t, separableToyData(64, p, 25), pairwise.TaskAUC, "logistic", "none", 0)
	res, err := runSeeded(t, "dp-gd-grad", obj, pairwise.RunConfig{Steps: 10,
		Privacy: &pairwise.Privacy{Epsilon: 1e-3, Delta: 1e-3, FeatureRadius: 1, Noise: newYKNoise(10, true)}})
	if err != nil {
		t.Fatal(err)
	}
	s, eta := res.Privacy.Sigmas[0], 0.25
	want := eta * eta * 10 * s * s * p
	if r := pairwise.Norm2(res.W) * pairwise.Norm2(res.W) / want; math.Abs(r-1) > 6*math.Sqrt(2.0/p) {
		t.Errorf("‖θ_T‖²/(η²Tσ²p) = %.4f, want 1 ± %.3f", r, 6*math.Sqrt(2.0/p))
	}
}

func TestDPGDGradMetric(t *testing.T) {
	obj := objectiveOf(t, separableToyData(32, 3, 26), pairwise.TaskMetric, "logistic", "frobenius-psd", 1)
	noise := newYKNoise(11, true)
	var cps []int
	res, err := runSeeded(t, "dp-gd-grad", obj, pairwise.RunConfig{Steps: 5, Checkpoints: []int{2, 5},
		OnCheckpoint: func(t int, w []float64) { cps = append(cps, t) },
		Privacy:      &pairwise.Privacy{Epsilon: 1, Delta: 1e-3, FeatureRadius: 1, Noise: noise}})
	if err != nil {
		t.Fatal(err)
	}
	if len(noise.lens) != 5 || noise.lens[0] != 9 {
		t.Fatalf("draws %v, want 5 over d² = 9 entries", noise.lens)
	}
	if len(cps) != 2 {
		t.Fatalf("checkpoints %v, want [2 5]", cps)
	}
	checkPSDBall(t, res.W, 3, 1)
}
