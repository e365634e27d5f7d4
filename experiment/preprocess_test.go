package experiment

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

func loadSchema(t *testing.T, name string) *data.Schema {
	t.Helper()
	s, err := data.LoadSchema("../schemas/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// loadDiabetes loads the bundled diabetes file with its 8 features
// declared (a LIBSVM file's inferred dimension is data-dependent).
func loadDiabetes(t *testing.T) *data.Table {
	t.Helper()
	tab, err := data.Load("../datasets/diabetes", data.Options{Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// privateSpec is a cheap private run: dp-gd-grad, few steps.
func privateSpec() Spec {
	return Spec{Algo: "dp-gd-grad", Loss: "logistic", Epsilon: 1, FeatureRadius: 1, Steps: 3, Seed: 2}
}

// A private run with the shipped diabetes schema and secure noise is
// private end to end: the schema's map is per record, with public bounds.
func TestPrivateRunWithSchemaIsPrivate(t *testing.T) {
	tab := loadDiabetes(t)
	spec := privateSpec()
	spec.Bounds = loadSchema(t, "diabetes.json")
	rep, err := Run(context.Background(), spec, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	pre := rep.Privacy.Preprocessing
	if !rep.Private || pre == nil || !pre.Private || pre.Scale != "bounds" || len(pre.Reasons) > 0 {
		t.Fatalf("private %v, preprocessing %+v: want private with --scale bounds", rep.Private, pre)
	}
	if pre.TotalEpsilon != 1 || rep.Privacy.Epsilon != 1 {
		t.Errorf("a schema costs nothing: total ε %v, algorithm ε %v, want 1 and 1", pre.TotalEpsilon, rep.Privacy.Epsilon)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "feature bounds ../schemas/diabetes.json") {
		t.Errorf("notes do not describe the schema: %q", rep.Notes)
	}
}

// Each data-dependent preprocessing makes a private run private: false,
// with its reason in the notes.
func TestFittedPreprocessingIsNotPrivate(t *testing.T) {
	tab := loadDiabetes(t)
	for _, scale := range []string{"minmax", "standard"} {
		spec := privateSpec()
		spec.Scale = scale
		rep, err := Run(context.Background(), spec, tab, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Private || !strings.Contains(strings.Join(rep.Notes, "\n"), "NOT private end to end: --scale "+scale+" is fitted") {
			t.Errorf("--scale %s: private %v, notes %q", scale, rep.Private, rep.Notes)
		}
	}
	// Loading decisions read off the records (data.Table.DataDependent:
	// mean imputation, dropped records, minority or halves labels).
	for _, c := range []struct {
		in   string
		opt  data.Options
		want string
	}{
		{"a,?,x", data.Options{Impute: "mean", PositiveClasses: "x"}, "--impute mean"},
		{"a,?,x", data.Options{Impute: "drop", PositiveClasses: "x"}, "--impute drop"},
		{"a,b,x", data.Options{}, "minority class"},
		{"a,b,x", data.Options{Binarize: "halves"}, "--binarize halves"},
	} {
		tab := syntheticCSV(t, c.in, c.opt)
		spec := privateSpec()
		spec.Scale = "none"
		rep, err := Run(context.Background(), spec, tab, nil)
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(rep.Notes, "\n")
		if rep.Private || !strings.Contains(notes, "NOT private end to end: ") || !strings.Contains(notes, c.want) {
			t.Errorf("%+v: private %v, notes %q", c.opt, rep.Private, notes)
		}
		// The same table with public choices is private.
		if c.want == "minority class" {
			c.opt.PositiveClasses = "x"
			spec.Scale = "none"
			rep, err := Run(context.Background(), spec, syntheticCSV(t, c.in, c.opt), nil)
			if err != nil || !rep.Private {
				t.Errorf("explicit positive class: private %v, err %v", rep != nil && rep.Private, err)
			}
		}
	}
}

// syntheticCSV builds a 60-record CSV: two features and a label; the
// template's "?" marks record 7's second feature missing, and the label
// template "x" cycles over the labels x, y, y (and z for halves).
func syntheticCSV(t *testing.T, tmpl string, opt data.Options) *data.Table {
	t.Helper()
	var b strings.Builder
	labels := []string{"x", "y", "y"}
	if opt.Binarize != "" {
		labels = []string{"1", "2", "3"}
	}
	for i := 0; i < 60; i++ {
		second := "2"
		if strings.Contains(tmpl, "?") && i == 7 {
			second = "?"
		}
		lab := labels[i%3]
		v := float64(i % 7)
		if lab == "x" || lab == "1" {
			v += 3
		}
		b.WriteString(strings.Join([]string{strconv.FormatFloat(v, 'g', -1, 64), second, lab}, ",") + "\n")
	}
	tab, err := data.Read(strings.NewReader(b.String()), "synthetic.csv", opt)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// The DP range release: its own entry, the algorithm runs at the rest,
// and the total is the request — by exact Gaussian-DP composition for a
// Gaussian algorithm (share of μ²), by basic composition otherwise (share
// of ε and δ).
func TestPrivateRangesAccounting(t *testing.T) {
	tab := loadDiabetes(t)
	inv, err := dp.AnalyticGaussianSigma(1, 1e-4, 1)
	if err != nil {
		t.Fatal(err)
	}
	muStar := 1 / inv // the largest μ (1, 1e-4) allows
	for _, share := range []float64{0, 0.25} {
		want := share
		if want == 0 {
			want = dp.DefaultRangeShare
		}
		// Gaussian-DP composition.
		spec := privateSpec()
		spec.RangeShare = share
		spec.Delta, spec.DeltaSet = 1e-4, true
		rep, err := Run(context.Background(), spec, tab, nil)
		if err != nil {
			t.Fatal(err)
		}
		pre := rep.Privacy.Preprocessing
		if pre == nil || pre.Scale != "private" || pre.Ranges == nil || pre.Composition != "gdp" {
			t.Fatalf("share %v: preprocessing %+v, want DP ranges composed by GDP for %s", share, pre, spec.Algo)
		}
		r := pre.Ranges
		if r.Mu > math.Sqrt(want)*muStar || r.Mu < 0.998*math.Sqrt(want)*muStar {
			t.Errorf("share %v: ranges at μ = %v, want √share·μ* = %v", share, r.Mu, math.Sqrt(want)*muStar)
		}
		if rep.Privacy.Epsilon != 1 || rep.Privacy.Delta != pre.TrainDelta || !(pre.TrainDelta < 1e-4) {
			t.Errorf("share %v: algorithm at (%v, %v), want (1, δ_train < 1e-4)", share, rep.Privacy.Epsilon, rep.Privacy.Delta)
		}
		if pre.TotalEpsilon > 1 || pre.TotalDelta != 1e-4 || pre.TotalMu > muStar || pre.TotalMu < 0.99*muStar {
			t.Errorf("share %v: total (%v, %v) at μ = %v, want within (1, 1e-4) and μ near μ* = %v", share, pre.TotalEpsilon, pre.TotalDelta, pre.TotalMu, muStar)
		}
		if !rep.Private {
			t.Errorf("share %v: DP ranges with secure noise reported not private: %q", share, rep.Notes)
		}
		// Basic composition (--tune's selection is not a plain Gaussian
		// composition).
		spec.Tune, spec.Algo, spec.Loss, spec.Steps = true, "", "square", 0
		rep, err = Run(context.Background(), spec, tab, nil)
		if err != nil {
			t.Fatal(err)
		}
		pre = rep.Privacy.Preprocessing
		if pre == nil || pre.Ranges == nil || pre.Composition != "basic" {
			t.Fatalf("share %v, --tune: preprocessing %+v, want basic composition", share, pre)
		}
		r = pre.Ranges
		if math.Abs(r.Epsilon-want) > 1e-12 || math.Abs(r.Delta-want*1e-4) > 1e-18 {
			t.Errorf("share %v: ranges at (%v, %v), want (%v, %v)", share, r.Epsilon, r.Delta, want, want*1e-4)
		}
		if pre.TrainEpsilon+r.Epsilon > 1 || pre.TrainDelta+r.Delta > 1e-4 {
			t.Errorf("share %v: algorithm at (%v, %v), ranges (%v, %v): must sum to at most (1, 1e-4)", share, pre.TrainEpsilon, pre.TrainDelta, r.Epsilon, r.Delta)
		}
		if math.Abs(pre.TotalEpsilon-1) > 1e-12 || math.Abs(pre.TotalDelta-1e-4) > 1e-18 {
			t.Errorf("share %v: total (%v, %v), want (1, 1e-4)", share, pre.TotalEpsilon, pre.TotalDelta)
		}
		if acc, err := dp.Compose([]dp.Release{r.Release}, r.Delta); err != nil || acc.Best.Epsilon > r.Epsilon*(1+1e-9) {
			t.Errorf("share %v: the range release is not certified at its ε = %v: %v %v", share, r.Epsilon, acc.Best.Epsilon, err)
		}
	}
	// Seeded noise: reproducible, not private, and says why.
	spec := privateSpec()
	spec.Seeded, spec.NoiseSeed = true, 3
	rep, err := Run(context.Background(), spec, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Private || !strings.Contains(strings.Join(rep.Notes, "\n"), "feature ranges were released with seeded") {
		t.Errorf("seeded: private %v, notes %q", rep.Private, rep.Notes)
	}
}

func TestScaleSpecErrors(t *testing.T) {
	s := loadSchemaQuiet()
	cases := []struct {
		spec Spec
		want string
	}{
		{Spec{Algo: "sgd-prev", Scale: "bounds"}, "needs a feature-bounds schema"},
		{Spec{Algo: "sgd-prev", Scale: "private"}, "sgd-prev is not private"},
		{Spec{Algo: "sgd-prev", Scale: "minmax", Bounds: s}, "drop one"},
		{Spec{Algo: "sgd-prev", Scale: "minmax", RangeShare: 0.1}, "applies to DP feature ranges only"},
		{Spec{Algo: "dp-gd-grad", Epsilon: 1, FeatureRadius: 1, RangeShare: 1}, "must be in (0, 1)"},
		{Spec{Algo: "sgd-prev", BoundsNorm: "squash", Bounds: s}, "unknown --bounds-norm"},
		{Spec{Algo: "sgd-prev", Scale: "wild"}, "unknown scaling"},
	}
	for _, c := range cases {
		err := c.spec.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.spec, err, c.want)
		}
	}
}

func loadSchemaQuiet() *data.Schema {
	s, err := data.LoadSchema("../schemas/diabetes.json")
	if err != nil {
		panic(err)
	}
	return s
}

// A schema's unknown features: a private run estimates their ranges (and
// only theirs) under DP, charged like --scale private and composed
// exactly, and stays private; a non-private run fits them on the training
// split.
func TestSchemaUnknownFeatures(t *testing.T) {
	tab := loadDiabetes(t)
	schema, err := data.ReadSchema(strings.NewReader(`{"features": [
		{"lo": 0, "hi": 20}, {"unknown": true}, {"lo": 0, "hi": 140}, {"lo": 0, "hi": 80},
		{"unknown": true}, {"lo": 0, "hi": 70}, {"lo": 0, "hi": 2.5}, {"lo": 21, "hi": 90}]}`), "partial.json")
	if err != nil {
		t.Fatal(err)
	}
	spec := privateSpec()
	spec.Bounds = schema
	spec.Delta, spec.DeltaSet = 1e-4, true
	rep, err := Run(context.Background(), spec, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	pre := rep.Privacy.Preprocessing
	if pre == nil || pre.Scale != "bounds" || pre.Ranges == nil || len(pre.Ranges.Lo) != 2 || pre.Composition != "gdp" {
		t.Fatalf("preprocessing %+v, want DP ranges of the 2 unknown features composed by GDP", pre)
	}
	if pre.Ranges.Coordinates != dp.RangeCoordinates(2, dp.RangeConfig{}) {
		t.Errorf("the range release drew %d coordinates, want those of 2 features", pre.Ranges.Coordinates)
	}
	if pre.TotalEpsilon > 1 || pre.TotalDelta != 1e-4 || !rep.Private {
		t.Errorf("total (%v, %v), private %v: %q", pre.TotalEpsilon, pre.TotalDelta, rep.Private, rep.Notes)
	}
	if note := strings.Join(rep.Notes, "\n"); !strings.Contains(note, "2 unknown features (2,5)") {
		t.Errorf("notes do not name the unknown features: %s", note)
	}
	// Non-private: no release, fitted ranges.
	np := Spec{Algo: "sgd-prev", Bounds: schema, Runs: 1, Seed: 1, Eta: 0.1, ParamRadius: 1}
	rep, err = Run(context.Background(), np, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Privacy != nil && rep.Privacy.Preprocessing != nil && rep.Privacy.Preprocessing.Ranges != nil {
		t.Errorf("a non-private run released DP ranges")
	}
}

// Ranges released for Gaussian-DP composition are never silently paired
// with a mechanism the composition does not cover, nor with too little
// training noise: finish refuses the run.
func TestFinishRefusesUncoveredComposition(t *testing.T) {
	tab := loadDiabetes(t)
	spec := privateSpec()
	spec.Delta, spec.DeltaSet = 1e-4, true
	rep, err := Run(context.Background(), spec, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	pre := *rep.Privacy.Preprocessing
	p := *rep.Privacy.PrivacyReport
	if err := pre.finish(spec, &p, nil, 24); err != nil {
		t.Fatalf("the run's own report: %v", err)
	}
	lap := p
	lap.Mechanism = "laplace"
	if err := pre.finish(spec, &lap, nil, 24); err == nil || !strings.Contains(err.Error(), "does not cover") {
		t.Errorf("a Laplace report after GDP ranges: %v", err)
	}
	low := p
	low.Sigmas = append([]float64(nil), p.Sigmas...)
	for i := range low.Sigmas {
		low.Sigmas[i] *= 0.8
	}
	if err := pre.finish(spec, &low, nil, 24); err == nil || !strings.Contains(err.Error(), "beyond the request") {
		t.Errorf("training σ × 0.8 after GDP ranges: %v", err)
	}
}

func TestColumnMinMax(t *testing.T) {
	ds := &pairwise.Dataset{N: 3, D: 3, X: []float64{1, 5, 7, -2, 5, 9, 4, 5, 8}, Y: []float64{1, -1, 1}}
	lo, hi := columnMinMax(ds, []int{0, 1, 2})
	want := [][2]float64{{-2, 4}, {4, 6}, {7, 9}} // the constant column widened by 1 each side
	for k, w := range want {
		if lo[k] != w[0] || hi[k] != w[1] {
			t.Errorf("column %d: [%v, %v], want %v", k, lo[k], hi[k], w)
		}
	}
}

// TestBoundsNormDefaultIsSiteRule: single-site train's default map of
// box-scaled records is the rule of a federated site (BoundsNorm, the one
// SiteMap applies): clip for a non-private and a private algorithm alike,
// divide only for one that centres privately, nothing to divide at R = 0;
// an explicit --bounds-norm divide stays. (Before, a non-private run
// divided by default: sgd-prev's row fails on that.)
func TestBoundsNormDefaultIsSiteRule(t *testing.T) {
	s := loadSchemaQuiet()
	for _, c := range []struct {
		algo    string
		eps, R  float64
		norm    string
		want    string
		centres bool
	}{
		{"sgd-prev", 0, 1, "", NormClip, false},
		{"sgd-prev", 0, 0, "", NormClip, false},
		{"sgd-prev", 0, 1, NormDivide, NormDivide, false},
		{"dp-gd-grad", 1, 1, "", NormClip, false},
		{"dp-lda", 1, 1, "", NormDivide, true},
	} {
		spec := Spec{Algo: c.algo, Loss: "logistic", Epsilon: c.eps, FeatureRadius: c.R, Bounds: s, BoundsNorm: c.norm}
		if err := spec.Validate(); err != nil {
			t.Fatalf("%s: %v", c.algo, err)
		}
		if spec.BoundsNorm != c.want {
			t.Errorf("%s at R = %g, --bounds-norm %q: %s, want %s", c.algo, c.R, c.norm, spec.BoundsNorm, c.want)
		}
		a, err := pairwise.Lookup(c.algo)
		if err != nil {
			t.Fatal(err)
		}
		if a.CentresPrivately != c.centres {
			t.Fatalf("%s: CentresPrivately = %v, the table says %v", c.algo, a.CentresPrivately, c.centres)
		}
		if c.norm != "" {
			continue
		}
		m, err := SiteMap(SiteFacts{CentresPrivately: a.CentresPrivately, Schema: s, Radius: c.R}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if m.Norm != spec.BoundsNorm {
			t.Errorf("%s at R = %g: a federated site maps by %s, train by %s", c.algo, c.R, m.Norm, spec.BoundsNorm)
		}
	}
}

// looseTable is n records of three features and a ±1 label: the first
// feature carries the class (values 1 ± 0.5 around a class shift of
// ±0.25, so in [0, 2]) but its public range is declared [0, 100], as a
// percentage that rarely passes a few per cent would be; the other two
// are noise and a weaker class signal on [0, 2], declared [0, 2].
func looseTable(t *testing.T, n int) (*data.Table, *data.Schema) {
	t.Helper()
	var b strings.Builder
	rng := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < n; i++ {
		y := 2*(i%2) - 1
		f1 := 1 + 0.25*float64(y) + 0.5*(rng.Float64()-0.5)
		f2 := 2 * rng.Float64()
		f3 := 1 + 0.1*float64(y) + 0.8*(rng.Float64()-0.5)
		fmt.Fprintf(&b, "%g,%g,%g,%d\n", f1, f2, f3, y)
	}
	tab, err := data.Read(strings.NewReader(b.String()), "loose.csv", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	schema, err := data.ReadSchema(strings.NewReader(`{"positive_class": "1", "features": [
		{"name": "share", "lo": 0, "hi": 100}, {"name": "noise", "lo": 0, "hi": 2}, {"name": "weak", "lo": 0, "hi": 2}]}`), "loose.json")
	if err != nil {
		t.Fatal(err)
	}
	return tab, schema
}

// --refine-bounds on a schema whose first range is 50× too wide: the
// refined run recovers the feature the public map squashed (dp-lda,
// seeded noise: the same splits and noise seed both ways), its ranges
// lie inside the public ones, its release is charged within the request,
// and the model's preprocessing map is the refined schema with the DP
// ranges, which rebuilds to a scaler.
func TestRefineBoundsLooseSchema(t *testing.T) {
	tab, schema := looseTable(t, 4000)
	run := func(mode string) (*Report, *FittedModel) {
		spec := Spec{Algo: "dp-lda", Epsilon: 1, FeatureRadius: 1, Seed: 3, Runs: 1, Seeded: true, NoiseSeed: 9,
			Bounds: schema, RefineBounds: mode}
		var fm *FittedModel
		spec.OnModel = func(m *FittedModel) { fm = m }
		rep, err := Run(context.Background(), spec, tab, nil)
		if err != nil {
			t.Fatal(mode, err)
		}
		return rep, fm
	}
	off, _ := run("off")
	on, fm := run("on")
	auto, _ := run("auto")
	t.Logf("AUC off %.4f, on %.4f, auto %.4f", off.AUC.Mean, on.AUC.Mean, auto.AUC.Mean)
	if !(on.AUC.Mean > off.AUC.Mean+0.05) {
		t.Errorf("refined AUC %.4f is not above the loose public map's %.4f + 0.05", on.AUC.Mean, off.AUC.Mean)
	}
	if auto.AUC.Mean != on.AUC.Mean {
		t.Errorf("auto at n = 3200 should refine (AUC %.4f, on %.4f)", auto.AUC.Mean, on.AUC.Mean)
	}
	pre := on.Privacy.Preprocessing
	if pre == nil || !pre.Refined || pre.Ranges == nil || len(pre.Ranges.Lo) != 3 || pre.Composition != "gdp" {
		t.Fatalf("preprocessing %+v: want the 3 features refined, composed by GDP", pre)
	}
	if pre.TotalEpsilon > 1 {
		t.Errorf("total ε %v above the request 1", pre.TotalEpsilon)
	}
	p := fm.Preprocessing
	if p == nil || p.Ranges == nil || len(p.Ranges.Lo) != 3 || len(p.Schema.Unknown()) != 3 {
		t.Fatalf("model preprocessing %+v: want the refined schema and 3 ranges", p)
	}
	pubLo, pubHi := schema.Bounds()
	for k := range p.Ranges.Lo {
		if !(p.Ranges.Lo[k] >= pubLo[k] && p.Ranges.Hi[k] <= pubHi[k] && p.Ranges.Lo[k] < p.Ranges.Hi[k]) {
			t.Errorf("feature %d: refined range [%v, %v] not inside the public [%v, %v]", k+1, p.Ranges.Lo[k], p.Ranges.Hi[k], pubLo[k], pubHi[k])
		}
	}
	if !(p.Ranges.Hi[0] < 10) {
		t.Errorf("feature 1's refined upper end %v: the estimate (values ≤ 1.5) should narrow [0, 100]", p.Ranges.Hi[0])
	}
	if _, err := ModelScaler(p, 3); err != nil {
		t.Errorf("the model's map does not rebuild: %v", err)
	}
	if note := strings.Join(on.Notes, "\n"); !strings.Contains(note, "--refine-bounds") {
		t.Errorf("notes do not say the ranges were refined: %s", note)
	}
}

// auto declines where the release cannot detect the bulk (n small for the
// budget): nothing is spent, the run is the off run bit for bit, and the
// note says why.
func TestRefineBoundsAutoDeclines(t *testing.T) {
	tab, schema := looseTable(t, 200)
	spec := Spec{Algo: "dp-lda", Epsilon: 1, FeatureRadius: 1, Seed: 3, Runs: 1, Seeded: true, NoiseSeed: 9, Bounds: schema}
	ok, why, err := RefineDetects(spec, 160, 3)
	if err != nil || ok || !strings.Contains(why, "n/4 = 40 <") {
		t.Fatalf("RefineDetects(n = 160) = %v, %q, %v: want false with its numbers", ok, why, err)
	}
	if ok, _, err := RefineDetects(spec, 100000, 3); err != nil || !ok {
		t.Fatalf("RefineDetects(n = 10⁵) = %v, %v: want true", ok, err)
	}
	spec.RefineBounds = "off"
	off, err := Run(context.Background(), spec, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec.RefineBounds = "auto"
	auto, err := Run(context.Background(), spec, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auto.AUC.Mean != off.AUC.Mean || auto.Privacy.Preprocessing.Ranges != nil || auto.Privacy.Preprocessing.Refined {
		t.Errorf("auto at n = 160: AUC %v (off %v), ranges %v: want the off run", auto.AUC.Mean, off.AUC.Mean, auto.Privacy.Preprocessing.Ranges)
	}
	if note := strings.Join(auto.Notes, "\n"); !strings.Contains(note, "--refine-bounds auto did not refine them") {
		t.Errorf("note does not say why nothing was refined: %s", note)
	}
}

// refineRanges: an estimate is clamped into its public range; not found,
// empty after the clamp, or no narrower, it keeps the public range; a
// feature the schema left unknown (NaN) keeps its estimate.
func TestRefineRanges(t *testing.T) {
	r := &dp.Ranges{Lo: []float64{-5, 2, 0, 200, -3}, Hi: []float64{50, 3, 1, 300, 7}, Found: []bool{true, true, false, true, true}}
	nan := math.NaN()
	pre := &Preprocessing{}
	lo, hi := refineRanges(r, []float64{0, 0, 0, 0, nan}, []float64{100, 10, 10, 100, nan}, pre)
	want := [][2]float64{{0, 50}, {2, 3}, {0, 10}, {0, 100}, {-3, 7}}
	for k, w := range want {
		if lo[k] != w[0] || hi[k] != w[1] {
			t.Errorf("feature %d: [%v, %v], want %v", k, lo[k], hi[k], w)
		}
	}
	if pre.RefinedKept != 2 {
		t.Errorf("kept %d public ranges, want 2 (not found, empty after the clamp)", pre.RefinedKept)
	}
	if r.Lo[0] != -5 {
		t.Errorf("refineRanges changed the release")
	}
}

// The flag's values and the schema it needs are checked before anything runs.
func TestRefineBoundsSpecErrors(t *testing.T) {
	_, schema := looseTable(t, 10)
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Algo: "dp-lda", Epsilon: 1, FeatureRadius: 1, Bounds: schema, RefineBounds: "maybe"}, `--refine-bounds "maybe"`},
		{Spec{Algo: "dp-lda", Epsilon: 1, FeatureRadius: 1, Scale: "private", RefineBounds: "on"}, "needs --feature-bounds"},
	} {
		err := c.spec.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.spec.RefineBounds, err, c.want)
		}
	}
}

// A schema may declare a feature unknown "within" a public range: a
// private run (no --refine-bounds) estimates its range under DP and clamps
// the estimate into it (feature 1's values reach 1.375; "within" [0, 1]
// caps them at 1), and the model's ranges stay inside.
func TestSchemaWithinClampsEstimate(t *testing.T) {
	tab, _ := looseTable(t, 4000)
	schema, err := data.ReadSchema(strings.NewReader(`{"positive_class": "1", "features": [
		{"name": "share", "unknown": true, "within": [0, 1]}, {"name": "noise", "lo": 0, "hi": 2}, {"name": "weak", "lo": 0, "hi": 2}]}`), "within.json")
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Algo: "dp-lda", Epsilon: 1, FeatureRadius: 1, Seed: 3, Runs: 1, Seeded: true, NoiseSeed: 9, Bounds: schema}
	var fm *FittedModel
	spec.OnModel = func(m *FittedModel) { fm = m }
	if _, err := Run(context.Background(), spec, tab, nil); err != nil {
		t.Fatal(err)
	}
	r := fm.Preprocessing.Ranges
	if r == nil || len(r.Lo) != 1 || !(r.Lo[0] >= 0 && r.Hi[0] <= 1 && r.Lo[0] < r.Hi[0]) || r.Hi[0] != 1 {
		t.Fatalf("model ranges %+v: want feature 1's estimate clamped into [0, 1] (its upper end at 1)", r)
	}
}
