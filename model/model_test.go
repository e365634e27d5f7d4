package model

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/pairwise"
)

func lo(v float64) *float64 { return &v }

// sample is a valid private model over a 2-feature schema.
func sample(t testing.TB) *Model {
	s := &data.Schema{Features: []data.SchemaFeature{{Name: "a", Lo: lo(0), Hi: lo(10)}, {Name: "b", Lo: lo(-1), Hi: lo(1)}}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return &Model{Task: "auc", Loss: "logistic", D: 2, ScoreMeaning: ScoreMeaning, Weights: []float64{0.5, -0.25},
		Features: []string{"a", "b"},
		Preprocessing: Preprocessing{Loader: Loader{Format: "csv", PositiveClasses: "1", Impute: "error"},
			Scale: "bounds", Schema: s, Norm: "clip", Radius: 1},
		Algorithm: Algorithm{Name: "dp-gd-grad", Release: "the model of run 1 of 1"},
		Certificate: Certificate{Private: true, Why: "one release, certified (ε, δ) = (1, 1e-05)", Epsilon: 1, Delta: 1e-5, Neighbouring: Neighbouring, N: 100,
			Statement: []byte(`{"epsilon": 1}`)},
		Provenance: Provenance{Pairfed: "test", Created: "2026-01-01T00:00:00Z"}}
}

func encode(t *testing.T, m *Model) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRoundTrip(t *testing.T) {
	raw := encode(t, sample(t))
	m, err := Decode(bytes.NewReader(raw), "m.json")
	if err != nil {
		t.Fatal(err)
	}
	if again := encode(t, m); !bytes.Equal(again, raw) {
		t.Fatalf("re-encoding differs:\n%s\n%s", raw, again)
	}
	ds := &pairwise.Dataset{N: 2, D: 2, X: []float64{1, 2, -1, 0.5}, Y: []float64{1, -1}}
	if s := m.Scores(nil, ds); s[0] != 0 || s[1] != -0.625 {
		t.Fatalf("scores %v", s)
	}
}

// Every prefix of a model file is refused, and so are the edits below,
// each with an error naming the problem.
func TestDecodeRefuses(t *testing.T) {
	raw := encode(t, sample(t))
	for n := 0; n < len(raw)-1; n++ { // the last byte is the newline
		if _, err := Decode(bytes.NewReader(raw[:n]), "m"); err == nil {
			t.Fatalf("a %d-byte prefix was accepted", n)
		}
	}
	bad := func(edit func(*Model)) []byte {
		m := sample(t)
		edit(m)
		// Encode refuses invalid models: bypass it with a valid encoding
		// whose checksum we recompute after the edit.
		m.Format, m.Version = Format, Version
		sum, err := m.sum()
		if err != nil {
			t.Fatal(err)
		}
		m.Checksum = sum
		var b bytes.Buffer
		if err := encodeRaw(&b, m); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	cases := map[string]struct {
		in   []byte
		want string
	}{
		"checksum":       {bytes.Replace(raw, []byte(`0.5,`), []byte(`0.75,`), 1), "checksum mismatch"},
		"second value":   {append(append([]byte(nil), raw...), []byte("{}")...), "after top-level value"},
		"unknown field":  {bytes.Replace(raw, []byte(`"task"`), []byte(`"x": 1, "task"`), 1), `unknown field "x"`},
		"format":         {bytes.Replace(raw, []byte(Format), []byte("other"), 1), "not a pairfed model file"},
		"weights":        {bad(func(m *Model) { m.Weights = m.Weights[:1] }), "task auc needs 2 weights"},
		"features":       {bad(func(m *Model) { m.Features = []string{"a"} }), "1 feature names for d = 2"},
		"norm":           {bad(func(m *Model) { m.Preprocessing.Norm = "squash" }), `norm "squash"`},
		"scale":          {bad(func(m *Model) { m.Preprocessing.Scale = "private" }), "scale private needs DP ranges"},
		"schema d":       {bad(func(m *Model) { m.D, m.Weights, m.Features = 3, []float64{1, 2, 3}, nil }), "the schema has 2 features"},
		"private reason": {bad(func(m *Model) { m.Certificate.Reasons = []string{"seeded"} }), "private but with reasons"},
		"private eps":    {bad(func(m *Model) { m.Certificate.Epsilon = 0 }), "private needs a finite ε > 0"},
		"not private":    {bad(func(m *Model) { m.Certificate.Private = false }), "not private but no reason"},
		// Probe 4 (issue 28): a private certificate edited to claim a
		// smaller ε (or δ), its checksum recomputed, was shown by card,
		// score and evaluate as the model's guarantee.
		"smaller ε claimed": {bad(func(m *Model) { m.Certificate.Epsilon = 0.1 }), `(0.1, 1e-05) is not the pair its statement "why" certifies`},
		"smaller δ claimed": {bad(func(m *Model) { m.Certificate.Delta = 1e-9 }), "is not the pair"},
		"sites' ε edited": {bad(func(m *Model) {
			m.Certificate.Sites = []SiteGuarantee{{Site: "a", Epsilon: 1, Delta: 1e-5, Secure: true}, {Site: "b", Epsilon: 0.5, Delta: 1e-5, Secure: true}}
			m.Certificate.Epsilon, m.Certificate.Why = 0.5, "at most (0.5, 1e-05) per site"
		}), "not the largest of its sites' guarantees (1, 1e-05)"},
		"ranges": {bad(func(m *Model) {
			m.Preprocessing.Ranges = &Ranges{Source: "dp", Lo: []float64{0, 0}, Hi: []float64{1, 1}}
		}), "ranges stored for a schema without unknown features"},
	}
	for name, c := range cases {
		_, err := Decode(bytes.NewReader(c.in), "m")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", name, err, c.want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(encode(&testing.T{}, sample(f)))
	f.Add([]byte(`{"format": "pairfed-model", "version": 1}`))
	f.Add(encode(&testing.T{}, withinSample(f)))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(bytes.NewReader(b), "fuzz")
		if err == nil {
			// An accepted model re-encodes to a file that decodes.
			var out bytes.Buffer
			if err := Encode(&out, m); err != nil {
				t.Fatalf("accepted but not encodable: %v", err)
			}
		}
	})
}

// A model's DP ranges for features the schema bounds "within" a public
// range must lie inside it: a file whose range left it is refused, naming
// the feature; one inside is accepted, and its card says both ranges.
func TestModelRangesWithinSchema(t *testing.T) {
	m := withinSample(t)
	if err := m.Validate(); err != nil {
		t.Fatalf("a range inside its public one: %v", err)
	}
	if rng, _ := featureRange(&m.Preprocessing, 0); !strings.Contains(rng, "[0, 3.5], released under differential privacy within the public [0, 100]") {
		t.Errorf("card range %q", rng)
	}
	m.Preprocessing.Ranges.Hi[0] = 120
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "feature 1's range [0, 120] is outside the schema's public range [0, 100]") {
		t.Errorf("a range outside its public one: error %v", err)
	}
}

// withinSample is sample with feature a unknown "within" [0, 100] and its
// DP range [0, 3.5].
func withinSample(t testing.TB) *Model {
	m := sample(t)
	s := &data.Schema{Features: []data.SchemaFeature{{Name: "a", Unknown: true, Within: []float64{0, 100}, Impute: lo(50)}, {Name: "b", Lo: lo(-1), Hi: lo(1)}}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	m.Preprocessing.Schema = s
	m.Preprocessing.Ranges = &Ranges{Source: "dp", Features: []int{0}, Lo: []float64{0}, Hi: []float64{3.5}}
	return m
}
