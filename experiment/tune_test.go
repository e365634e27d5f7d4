package experiment

import (
	"context"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// flipLabels returns a copy of tab with every label negated.
func flipLabels(tab *data.Table) *data.Table {
	c := *tab
	ds := *tab.Dataset
	ds.Y = make([]float64, len(tab.Y))
	for i, y := range tab.Y {
		ds.Y[i] = -y
	}
	c.Dataset = &ds
	return &c
}

// --tune reads the training split only: with the same seeds (seeded noise),
// a test file whose labels are all flipped leaves every selection (K, the
// chosen candidate) and every model unchanged — the AUCs are exactly
// 1 − the originals.
func TestTuneNeverReadsTheTestSplit(t *testing.T) {
	tab := loadBundled(t, "diabetes")
	// A fixed train/test cut of the file, so that the test table can be
	// altered without touching the training records.
	trIdx, teIdx := make([]int, 0, 600), make([]int, 0, 168)
	for i := 0; i < tab.N; i++ {
		if i < 600 {
			trIdx = append(trIdx, i)
		} else {
			teIdx = append(teIdx, i)
		}
	}
	train := &data.Table{Dataset: tab.Subset(trIdx), Source: "train"}
	test := &data.Table{Dataset: tab.Subset(teIdx), Source: "test"}
	spec := Spec{Tune: true, Epsilon: 1, Runs: 4, Seed: 3, Scale: "minmax", FeatureRadius: 1, NoiseSeed: 9, Seeded: true}
	a, err := Run(context.Background(), spec, train, test)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(context.Background(), spec, train, flipLabels(test))
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Tune {
		if a.Tune[i].Chosen != b.Tune[i].Chosen || a.Tune[i].Runs != b.Tune[i].Runs {
			t.Errorf("run %d: the selection changed with the test labels: %s/%d vs %s/%d", i, a.Tune[i].Chosen, a.Tune[i].Runs, b.Tune[i].Chosen, b.Tune[i].Runs)
		}
		if d := a.AUC.Values[i] + b.AUC.Values[i] - 1; math.Abs(d) > 1e-12 {
			t.Errorf("run %d: AUC %v and %v on flipped labels: the model changed", i, a.AUC.Values[i], b.AUC.Values[i])
		}
	}
	if a.Private || a.Privacy.Private {
		t.Error("seeded noise and minmax scaling: the run must not be reported private")
	}
}

// The accounting: the per-run μ makes the whole selection (ε, δ)-DP by the
// theorem (dp.SelectionEpsilon), each candidate ran at exactly that μ (its
// released sensitivity/σ, composed over its releases, is ≤ μ), and the
// report states the selection's (ε, δ), not the candidate's.
func TestTuneAccounting(t *testing.T) {
	// Dim given: a LIBSVM file's d read off its largest index would make
	// the run data-dependent (not private end to end).
	tab, err := data.Load("../datasets/diabetes", data.Options{Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, eps := range []float64{0.5, 2} {
		spec := Spec{Tune: true, Epsilon: eps, Delta: 1e-4, DeltaSet: true, Runs: 3, Seed: 5, FeatureRadius: 1, Scale: "none"}
		rep, err := Run(context.Background(), spec, tab, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range rep.Tune {
			sel := dp.Selection{Gamma: tr.Gamma}
			if math.Abs(tr.Gamma-1.0/6) > 1e-12 || tr.ExpectedRuns != 6 {
				t.Errorf("γ = %v, E[K] = %v: want 1/6 and 6 for 3 candidates", tr.Gamma, tr.ExpectedRuns)
			}
			e, err := dp.SelectionEpsilon(sel, tr.PerRunMu, 1e-4)
			if err != nil || e > eps {
				t.Errorf("ε = %g: per-run μ %v gives the selection ε %v (%v)", eps, tr.PerRunMu, e, err)
			}
			if d := dp.GaussianDPDelta(tr.PerRunMu, tr.PerRunEpsilon); math.Abs(d-tr.PerRunDelta) > 1e-12*d {
				t.Errorf("candidate calibration (%v, %v) is not on the μ = %v curve (δ %v)", tr.PerRunEpsilon, tr.PerRunDelta, tr.PerRunMu, d)
			}
			if want := float64(tr.NValidation-1) / tr.PerRunMu; tr.ScoreSigma < want {
				t.Errorf("score σ %v below Δ_U/μ = %v", tr.ScoreSigma, want)
			}
		}
		p := rep.Privacy
		if p.Epsilon != eps || p.Delta != 1e-4 || !strings.Contains(p.Accountant, "Papernot & Steinke") {
			t.Errorf("report states (%v, %v) by %q: want the selection's (%v, 1e-4)", p.Epsilon, p.Delta, p.Accountant, eps)
		}
		// The chosen candidate's releases compose to at most μ:
		// √Σ(Δᵢ/σᵢ)² ≤ μ (dp-gd lists one sensitivity for T equal releases).
		var s2 float64
		for i, sg := range p.Sigmas {
			sens := p.Sensitivity[0]
			if i < len(p.Sensitivity) {
				sens = p.Sensitivity[i]
			}
			s2 += (sens / sg) * (sens / sg)
		}
		if mu := rep.Tune[len(rep.Tune)-1].PerRunMu; math.Sqrt(s2) > mu*(1+1e-9) {
			t.Errorf("chosen candidate released at μ = %v > per-run μ %v", math.Sqrt(s2), mu)
		}
		if !rep.Private {
			t.Error("secure noise, --scale none: the tuned run must be private")
		}
	}
}

func TestTuneBadInput(t *testing.T) {
	tab := loadBundled(t, "diabetes")
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Tune: true, Epsilon: 1, FeatureRadius: 1, TuneCandidates: []string{"dp-pair-sgd"}}, "not an exactly Gaussian-DP"},
		{Spec{Tune: true, Epsilon: 1, FeatureRadius: 1, TuneCandidates: []string{"dp-ssp", "dp-ssp"}}, "listed twice"},
		{Spec{Tune: true, Epsilon: 1, FeatureRadius: 1, Task: pairwise.TaskMetric, Loss: "logistic"}, "AUC mechanisms only"},
		{Spec{Tune: true, Epsilon: 1, FeatureRadius: 1, Steps: 5}, "do not apply"},
		{Spec{Tune: true, Epsilon: 1, FeatureRadius: 1, Delta: 0, DeltaSet: true}, "δ > 0"},
	} {
		_, err := Run(context.Background(), c.spec, tab, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.spec, err, c.want)
		}
	}
}

// Without --delta, --tune's whole selection runs at the default
// δ = dp.DefaultDelta(n_train) = 1/(10n), like every other private run
// (it used 1/n).
func TestTuneDefaultDelta(t *testing.T) {
	tab, err := data.Load("../datasets/diabetes", data.Options{Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Spec{Tune: true, Epsilon: 1, Runs: 1, Seed: 5, FeatureRadius: 1, Scale: "none"}, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := dp.DefaultDelta(rep.NTrain); rep.Privacy.Delta != want {
		t.Fatalf("tuned run at δ = %v, want dp.DefaultDelta(%d) = %v", rep.Privacy.Delta, rep.NTrain, want)
	}
}

// --tune lays its fitting and scored parts out in the training split's own
// storage (data.Holdout) and must put it back: after a selection, the
// split is the same bit for bit, dense and CSR.
func TestTuneRestoresTrainingSet(t *testing.T) {
	for _, rep := range []string{data.Dense, data.Sparse} {
		tab, err := data.Load("../datasets/diabetes", data.Options{Representation: rep})
		if err != nil {
			t.Fatal(err)
		}
		was, _ := data.ClipNorms(tab.Dataset, 1) // what prepare gives a private run
		tr := was.All().Gather()                 // a copy
		spec := Spec{Tune: true, Epsilon: 1, Seed: 3, FeatureRadius: 1, NoiseSeed: 9, Seeded: true}
		if err := spec.Validate(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := tune(context.Background(), spec, tr, rand.New(rand.NewPCG(1, 2))); err != nil {
			t.Fatal(err)
		}
		if !sameDataset(tr, was) {
			t.Errorf("%s: --tune left the training split changed", rep)
		}
	}
}

// dp-lda is a --tune candidate (by default, d ≤ 2000) and runs at the
// per-run μ: its two releases (centre and signs' statistics, Δ = 2 each)
// compose to √((2/σ_A)² + (2/σ_B)²) ≤ μ, which is what makes the
// selection theorem apply to it. Above d = 2000 the default list leaves it
// out (the second-moment release cannot run there).
func TestTuneLDACandidate(t *testing.T) {
	if !slices.Contains(DefaultTuneCandidates, "dp-lda") {
		t.Fatalf("default --tune candidates %v: dp-lda missing", DefaultTuneCandidates)
	}
	if c, err := tuneCandidates(nil, 2001); err != nil || slices.Contains(c, "dp-lda") || slices.Contains(c, "dp-ssp") {
		t.Errorf("d = 2001: candidates %v (%v), want no second-moment mechanism", c, err)
	}
	tab, err := data.Load("../datasets/diabetes", data.Options{Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Tune: true, TuneCandidates: []string{"dp-lda"}, Epsilon: 1, Delta: 1e-4, DeltaSet: true, Runs: 2, Seed: 3, FeatureRadius: 1, Scale: "none"}
	rep, err := Run(context.Background(), spec, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range rep.Tune {
		if tr.Chosen != "dp-lda" {
			t.Errorf("chose %q among [dp-lda]", tr.Chosen)
		}
	}
	p := rep.Privacy
	if len(p.Sigmas) != 2 || len(p.Sensitivity) != 2 {
		t.Fatalf("dp-lda reported σ's %v and sensitivities %v: want two releases", p.Sigmas, p.Sensitivity)
	}
	var s2 float64
	for i, sg := range p.Sigmas {
		s2 += (p.Sensitivity[i] / sg) * (p.Sensitivity[i] / sg)
	}
	if mu := rep.Tune[len(rep.Tune)-1].PerRunMu; math.Sqrt(s2) > mu*(1+1e-9) || math.Sqrt(s2) < 0.99*mu {
		t.Errorf("dp-lda released at μ = %v, want ≤ the per-run μ %v (and within 1 %%: the calibration is exact)", math.Sqrt(s2), mu)
	}
	if !rep.Private || p.CertifiedEpsilon > 1 {
		t.Errorf("private %v, certified ε %v: want a private run certified at ≤ 1", rep.Private, p.CertifiedEpsilon)
	}
}

// dp-pair-gd is a --tune candidate on request and runs at the per-run μ:
// its 1 + T releases (Δ = 2 each) compose to √(Σ (2/σ_k)²) ≤ μ, within
// 1 % (the exact calibration), as dp-lda's two do.
func TestTunePairGDCandidate(t *testing.T) {
	tab, err := data.Load("../datasets/diabetes", data.Options{Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Tune: true, TuneCandidates: []string{"dp-pair-gd"}, Epsilon: 1, Delta: 1e-4, DeltaSet: true, Runs: 2, Seed: 3, FeatureRadius: 1, Scale: "none"}
	rep, err := Run(context.Background(), spec, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Privacy
	if rep.Tune[0].Chosen != "dp-pair-gd" || len(p.Sigmas) < 3 || len(p.Sensitivity) != len(p.Sigmas) {
		t.Fatalf("chose %q; σ's %v, sensitivities %v: want dp-pair-gd's 1 + T ≥ 3 releases", rep.Tune[0].Chosen, p.Sigmas, p.Sensitivity)
	}
	var s2 float64
	for i, sg := range p.Sigmas {
		s2 += (p.Sensitivity[i] / sg) * (p.Sensitivity[i] / sg)
	}
	if mu := rep.Tune[len(rep.Tune)-1].PerRunMu; math.Sqrt(s2) > mu*(1+1e-9) || math.Sqrt(s2) < 0.99*mu {
		t.Errorf("dp-pair-gd released at μ = %v, want ≤ the per-run μ %v (and within 1 %%)", math.Sqrt(s2), mu)
	}
	if !rep.Private || p.CertifiedEpsilon > 1 {
		t.Errorf("private %v, certified ε %v: want a private run certified at ≤ 1", rep.Private, p.CertifiedEpsilon)
	}
}

// The registry's properties replaced two side tables of algorithm names
// (issue 26): the Gaussian-DP mechanisms (private ranges compose with them
// exactly) and the --tune candidates with their losses must be exactly the
// tables' entries — a registration that drops or adds one changes what
// --scale private and --tune do, and fails here.
func TestGaussianDPAndTuneProperties(t *testing.T) {
	gdp := map[string]bool{}
	tune := map[string]string{}
	for _, a := range pairwise.Algorithms() {
		if a.GaussianDP {
			gdp[a.Name] = true
		}
		if a.TuneLoss != "" {
			if !a.GaussianDP {
				t.Errorf("%s has a --tune loss but is not GaussianDP", a.Name)
			}
			tune[a.Name] = a.TuneLoss
		}
	}
	maxDim := map[string]int{}
	for _, a := range pairwise.Algorithms() {
		if a.MaxDim != 0 {
			maxDim[a.Name] = a.MaxDim
		}
	}
	if want := map[string]int{"dp-lda": 2000, "dp-ssp": 2000, "dp-objpert": 2000, "dp-select": 2000}; !maps.Equal(maxDim, want) {
		t.Errorf("MaxDim %v, want %v (the second-moment releases, and dp-objpert's Newton system)", maxDim, want)
	}
	wantGDP := map[string]bool{"dp-ssp-mean": true, "dp-ssp": true, "dp-lda": true, "dp-gd": true, "dp-gd-grad": true, "dp-pair-gd": true}
	wantTune := map[string]string{"dp-lda": "square", "dp-ssp-mean": "square", "dp-ssp": "square", "dp-gd": "hinge", "dp-pair-gd": "logistic"}
	if !maps.Equal(gdp, wantGDP) {
		t.Errorf("GaussianDP algorithms %v, want %v", gdp, wantGDP)
	}
	if !maps.Equal(tune, wantTune) {
		t.Errorf("--tune candidates %v, want %v", tune, wantTune)
	}
	for _, c := range DefaultTuneCandidates {
		if _, ok := tuneLoss(c); !ok {
			t.Errorf("default --tune candidate %s is not a candidate", c)
		}
	}
	if _, ok := tuneLoss("dp-pair-sgd"); ok {
		t.Error("dp-pair-sgd (subsampled RDP, not GDP) accepted as a --tune candidate")
	}
}
