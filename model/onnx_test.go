package model_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/internal/onnxeval"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/pairwise"
)

func fp(v float64) *float64 { return &v }

// onnxCase is a model whose preprocessing map exercises one path of the
// export, and how to draw raw records for it.
type onnxCase struct {
	name string
	m    *model.Model
	// lo, hi: the range raw values are drawn from (wider than the map's,
	// so that the box clip acts); groups: indices of one-hot columns.
	lo, hi []float64
	onehot []int
}

func onnxCases(t *testing.T) []onnxCase {
	t.Helper()
	// Bounds schema: 3 numeric features (one unknown, DP-ranged), a
	// one-hot group of 3, per-feature impute constants, norm divide.
	s := &data.Schema{Features: []data.SchemaFeature{
		{Name: "age", Lo: fp(18), Hi: fp(90), Impute: fp(50)},
		{Name: "glucose", Lo: fp(0), Hi: fp(300)},
		{Name: "ma", Unknown: true, Impute: fp(3)},
		{Name: "site", Count: 3, Lo: fp(0), Hi: fp(1), OneHot: "site"},
	}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	imp := s.ImputeValues()
	var impute []*float64
	for _, v := range imp {
		impute = append(impute, fp(v))
	}
	base := func(task string, d int) *model.Model {
		m := &model.Model{Task: task, Loss: "logistic", D: d, ScoreMeaning: model.ScoreMeaning,
			Algorithm:   model.Algorithm{Name: "dp-gd-grad", Release: "test"},
			Certificate: model.Certificate{Private: true, Why: "test, certified (ε, δ) = (1, 1e-06)", Epsilon: 1, Delta: 1e-6, Mechanism: "gaussian", Neighbouring: model.Neighbouring, N: 500},
			Provenance:  model.Provenance{Pairfed: "test", Created: "2026-01-01T00:00:00Z"}}
		rng := rand.New(rand.NewPCG(uint64(d), 7))
		if task == "auc" {
			for j := 0; j < d; j++ {
				m.Weights = append(m.Weights, rng.NormFloat64())
			}
		} else {
			m.ScoreMeaning = model.MetricScoreMeaning
			a := make([]float64, d*d)
			for i := range a {
				a[i] = rng.NormFloat64()
			}
			m.Metric = make([]float64, d*d) // AᵀA, not symmetric-rounded on purpose
			for i := 0; i < d; i++ {
				for j := 0; j < d; j++ {
					for k := 0; k < d; k++ {
						m.Metric[i*d+j] += a[k*d+i] * a[k*d+j]
					}
				}
			}
			m.Metric[1] += 0.3 // an antisymmetric part: the graph must use W as stored
		}
		return m
	}
	bounds := base("auc", 6)
	bounds.Features = []string{"age", "glucose", "ma", "site#1", "site#2", "site#3"}
	bounds.Preprocessing = model.Preprocessing{Loader: model.Loader{Format: "csv", PositiveClasses: "1", Impute: "constant", ImputeValues: impute},
		Scale: "bounds", Schema: s, Ranges: &model.Ranges{Source: "dp", Features: []int{2}, Lo: []float64{0.5}, Hi: []float64{12}},
		Norm: "divide", Radius: 1}

	boundsClip := base("auc", 6)
	boundsClip.Preprocessing = bounds.Preprocessing
	boundsClip.Preprocessing.Norm, boundsClip.Preprocessing.Radius = "clip", 0.9

	private := base("auc", 4)
	private.Preprocessing = model.Preprocessing{Loader: model.Loader{Format: "csv", PositiveClasses: "1", Impute: "constant:0"},
		Scale: "private", Ranges: &model.Ranges{Source: "dp", Lo: []float64{-1, 0, 10, -5}, Hi: []float64{1, 4, 20, 5}},
		Norm: "clip", Radius: 1.3}

	minmax := base("auc", 3)
	minmax.Preprocessing = model.Preprocessing{Loader: model.Loader{Format: "csv", PositiveClasses: "1", Impute: "error"},
		Scale: "minmax", Fitted: &model.Fitted{Kind: "minmax", Shift: []float64{1, -2, 30}, Scale: []float64{0.5, 2, 0.1}},
		Norm: "clip", Radius: 1.5, Unshifted: true}

	none := base("auc", 3)
	none.Preprocessing = model.Preprocessing{Loader: model.Loader{Format: "csv", PositiveClasses: "1", Impute: "error"},
		Scale: "none", Norm: "clip", Radius: 2}

	metric := base("metric", 6)
	metric.Preprocessing = bounds.Preprocessing

	wide := func(lo, hi []float64) ([]float64, []float64) {
		l, h := make([]float64, len(lo)), make([]float64, len(lo))
		for j := range lo {
			w := hi[j] - lo[j]
			l[j], h[j] = lo[j]-0.3*w, hi[j]+0.3*w
		}
		return l, h
	}
	cases := []onnxCase{
		{name: "bounds-divide-onehot-unknown-impute", m: bounds, onehot: []int{3, 4, 5}},
		{name: "bounds-clip", m: boundsClip, onehot: []int{3, 4, 5}},
		{name: "private-clip-constant", m: private},
		{name: "minmax-unshifted-clip", m: minmax},
		{name: "none-clip", m: none},
		{name: "metric-bounds-divide", m: metric, onehot: []int{3, 4, 5}},
	}
	for i := range cases {
		c := &cases[i]
		if err := c.m.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		switch c.m.Preprocessing.Scale {
		case "bounds":
			c.lo, c.hi = wide([]float64{18, 0, 0.5, 0, 0, 0}, []float64{90, 300, 12, 1, 1, 1})
		case "private":
			c.lo, c.hi = wide(c.m.Preprocessing.Ranges.Lo, c.m.Preprocessing.Ranges.Hi)
		default:
			c.lo, c.hi = []float64{-3, -2, 20}, []float64{5, 2, 45}
		}
	}
	return cases
}

// records draws n raw records (NaN for 5 % of the values when the model
// imputes constants; one-hot groups get one 1, sometimes two or none).
func (c *onnxCase) records(n int, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 11))
	imputes := c.m.Preprocessing.Loader.Impute != "error"
	out := make([][]float64, n)
	for i := range out {
		r := make([]float64, c.m.D)
		for j := range r {
			r[j] = c.lo[j] + rng.Float64()*(c.hi[j]-c.lo[j])
			if imputes && rng.IntN(20) == 0 {
				r[j] = math.NaN()
			}
		}
		for _, j := range c.onehot {
			r[j] = 0
		}
		if len(c.onehot) > 0 {
			for k := rng.IntN(3); k >= 0 && k < 2; k-- { // 0, 1 or 2 indicators set
				r[c.onehot[rng.IntN(len(c.onehot))]] = 1
			}
		}
		out[i] = r
	}
	return out
}

// reference prepares rows the way `pairfed score` does: the loader's
// imputation (a missing value → its constant), then
// experiment.PrepareModelRecords.
func reference(t *testing.T, m *model.Model, rows [][]float64) *pairwise.Dataset {
	t.Helper()
	l := m.Preprocessing.Loader
	ds := &pairwise.Dataset{N: len(rows), D: m.D, Y: make([]float64, len(rows))}
	for _, r := range rows {
		for j, v := range r {
			if math.IsNaN(v) {
				switch {
				case l.ImputeValues != nil:
					v = *l.ImputeValues[j]
				case l.Impute == "constant:0":
					v = 0
				default:
					t.Fatalf("NaN without imputation")
				}
			}
			ds.X = append(ds.X, v)
		}
	}
	out, err := experiment.PrepareModelRecords(&m.Preprocessing, ds)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// maxDiff runs onx (an export of c.m) in the independent evaluator on n
// records and returns the largest |ONNX − pairfed| over the scores (or
// squared distances) and the prepared records.
func maxDiff(t *testing.T, c *onnxCase, onx []byte, n int) (score, prepared float64) {
	t.Helper()
	g, err := onnxeval.Decode(onx)
	if err != nil {
		t.Fatal(err)
	}
	rows := c.records(n, 1)
	in := map[string]*onnxeval.Tensor{model.ONNXInput: onnxeval.Matrix(rows)}
	var ys [][]float64
	if c.m.Task == "metric" {
		ys = c.records(n, 2)
		in[model.ONNXInputY] = onnxeval.Matrix(ys)
	}
	out, err := g.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	px := reference(t, c.m, rows)
	var want []float64
	var got, prep *onnxeval.Tensor
	if c.m.Task == "auc" {
		want, got, prep = c.m.Scores(nil, px), out["score"], out["prepared"]
	} else {
		py := reference(t, c.m, ys)
		scratch := make([]float64, c.m.D)
		for i := 0; i < n; i++ {
			want = append(want, c.m.SqDistance(px.X[i*c.m.D:(i+1)*c.m.D], py.X[i*c.m.D:(i+1)*c.m.D], scratch))
		}
		got, prep = out["sq_distance"], out["prepared_x"]
	}
	if len(got.F) != n || len(prep.F) != n*c.m.D {
		t.Fatalf("outputs of %d and %d values for %d records", len(got.F), len(prep.F), n)
	}
	for i, w := range want {
		score = max(score, math.Abs(got.F[i]-w))
		if math.IsNaN(got.F[i]) {
			score = math.Inf(1)
		}
	}
	for i, w := range px.X {
		prepared = max(prepared, math.Abs(prep.F[i]-w))
	}
	return score, prepared
}

func export(t *testing.T, m *model.Model) []byte {
	t.Helper()
	sc, err := experiment.ModelScaler(&m.Preprocessing, m.D)
	if err != nil {
		t.Fatal(err)
	}
	b, err := model.ExportONNX(m, sc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The export, run by the independent evaluator, gives pairfed's scores
// (and prepared records) to 1e-9 on 1 000 records for every path of the
// preprocessing map; the records cross the box and the norm bound, and
// some values are missing.
func TestONNXMatchesScore(t *testing.T) {
	for _, c := range onnxCases(t) {
		t.Run(c.name, func(t *testing.T) {
			onx := export(t, c.m)
			s, p := maxDiff(t, &c, onx, 1000)
			t.Logf("max |ONNX − pairfed|: scores %.3g, prepared records %.3g", s, p)
			if !(s <= 1e-9) || !(p <= 1e-9) {
				t.Fatalf("the export differs from pairfed: scores by %g, prepared records by %g (> 1e-9)", s, p)
			}
			g, err := onnxeval.Decode(onx)
			if err != nil {
				t.Fatal(err)
			}
			if g.IRVersion != model.ONNXIRVersion || g.Opsets[""] != model.ONNXOpset {
				t.Fatalf("ir %d opset %v", g.IRVersion, g.Opsets)
			}
			for k, want := range map[string]string{"privacy.epsilon": "1", "privacy.delta": "1e-06", "privacy.private": "true",
				"privacy.mechanism": "gaussian", "pairfed.task": c.m.Task} {
				if g.Metadata[k] != want {
					t.Errorf("metadata %s = %q, want %q", k, g.Metadata[k], want)
				}
			}
			if c.onehot != nil && !strings.Contains(g.Metadata["preprocessing.onehot"], "site: columns 4–6") {
				t.Errorf("one-hot layout %q", g.Metadata["preprocessing.onehot"])
			}
		})
	}
}

// The comparison can fail: an export whose graph lacks the norm step (R
// set to 0 in a copy) or the box (Box off in the scaler), or uses other
// weights, differs from pairfed's scores by far more than 1e-9.
func TestONNXComparisonDetectsWrongExport(t *testing.T) {
	cs := onnxCases(t)
	for _, c := range []onnxCase{cs[0], cs[2]} { // divide and clip
		sc, err := experiment.ModelScaler(&c.m.Preprocessing, c.m.D)
		if err != nil {
			t.Fatal(err)
		}
		noNorm := *c.m
		noNorm.Preprocessing.Radius = 0 // no clip
		nd := *sc
		nd.Post = 0 // no divide
		onx, err := model.ExportONNX(&noNorm, &nd)
		if err != nil {
			t.Fatal(err)
		}
		if s, _ := maxDiff(t, &c, onx, 1000); !(s > 1e-6) {
			t.Errorf("%s: an export without the norm step passed (max diff %g)", c.name, s)
		}
		sc.Box = false
		noBox, err := model.ExportONNX(c.m, sc)
		if err != nil {
			t.Fatal(err)
		}
		if s, _ := maxDiff(t, &c, noBox, 1000); !(s > 1e-6) {
			t.Errorf("%s: an export without the box passed (max diff %g)", c.name, s)
		}
		w := *c.m
		w.Weights = append([]float64(nil), c.m.Weights...)
		w.Weights[0] += 1e-6
		if s, _ := maxDiff(t, &c, export(t, &w), 1000); !(s > 1e-8) {
			t.Errorf("%s: an export with a weight moved by 1e-6 passed (max diff %g)", c.name, s)
		}
	}
}

// A coordinator's artefact without a recorded map is refused.
func TestONNXRefusesUnscorable(t *testing.T) {
	m := onnxCases(t)[0].m
	c := *m
	c.Preprocessing = model.Preprocessing{Scale: "sites", Norm: "clip", Radius: 1}
	sc, _ := experiment.ModelScaler(&m.Preprocessing, m.D)
	if _, err := model.ExportONNX(&c, sc); err == nil || !strings.Contains(err.Error(), "not recorded") {
		t.Fatalf("err = %v", err)
	}
}
