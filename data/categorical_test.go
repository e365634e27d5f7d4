package data

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const patientsSchema = "../schemas/patients-example.json"

// loadPatients reads testdata/patients.csv with the example schema, or
// with schema text when given, and the impute mode.
func loadPatients(t *testing.T, schemaText, impute string) (*Table, *Schema, error) {
	t.Helper()
	var s *Schema
	var err error
	if schemaText == "" {
		s, err = LoadSchema(patientsSchema)
	} else {
		s, err = ReadSchema(strings.NewReader(schemaText), "p.json")
	}
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Impute: impute}
	if _, err := s.Apply(&o); err != nil {
		t.Fatal(err)
	}
	tab, err := Load("testdata/patients.csv", o)
	if err == nil {
		err = s.Check(tab)
	}
	return tab, s, err
}

// The hospital export: ID column ignored, two text columns one-hot
// encoded, missing values imputed by the schema's rule, text labels.
func TestCategoricalPatients(t *testing.T) {
	tab, s, err := loadPatients(t, "", "schema")
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"age", "sex=F", "sex=M", "bmi", "admission=elective", "admission=emergency", "admission=transfer", "admission=other", "systolic_bp"}
	if tab.N != 60 || tab.D != 9 || strings.Join(tab.FeatureNames, ",") != strings.Join(wantNames, ",") {
		t.Fatalf("shape %d×%d, names %q: want 60×9 %q", tab.N, tab.D, tab.FeatureNames, wantNames)
	}
	if got := s.FeatureNames(); strings.Join(got, ",") != strings.Join(wantNames, ",") {
		t.Errorf("Schema.FeatureNames %q", got)
	}
	// Rows as the file has them (see testdata/patients.csv): missing bmi
	// and blood pressure take the midpoints (40, 150); a missing sex or
	// admission sets all the column's indicators to 0; "day-case" is not
	// listed and goes to admission=other.
	want := map[int][]float64{
		0:  {74, 1, 0, 27.5, 1, 0, 0, 0, 143},
		1:  {44, 0, 1, 40, 0, 1, 0, 0, 136},   // bmi ""
		2:  {39, 1, 0, 17, 0, 1, 0, 0, 150},   // systolic_bp "?"
		3:  {35, 0, 1, 28.2, 0, 0, 0, 0, 142}, // admission ""
		4:  {64, 0, 0, 23.3, 0, 0, 1, 0, 131}, // sex "?"
		6:  {87, 0, 1, 26.3, 0, 0, 0, 1, 159}, // day-case → other
		10: {51, 0, 0, 23.3, 0, 0, 1, 0, 144}, // sex ""
	}
	for i, w := range want {
		if got := tab.Dataset.Row(i); !equalFloats(got, w) {
			t.Errorf("row %d = %v, want %v", i, got, w)
		}
	}
	// Text labels: positive_class "yes".
	if tab.Dataset.Y[0] != 1 || tab.Dataset.Y[1] != -1 || strings.Join(tab.Positive, ",") != "yes" {
		t.Errorf("labels %v, positive %q: want yes → +1", tab.Dataset.Y[:2], tab.Positive)
	}
	if tab.Imputed != 6 || len(tab.DataDependent) != 0 {
		t.Errorf("imputed %d (want 6), data-dependent %q (want none)", tab.Imputed, tab.DataDependent)
	}
	// Every record has exactly one indicator of each column set, or none
	// (imputed).
	for i := 0; i < tab.N; i++ {
		r := tab.Dataset.Row(i)
		for _, g := range [][2]int{{1, 3}, {4, 8}} {
			sum := 0.0
			for _, v := range r[g[0]:g[1]] {
				if v != 0 && v != 1 {
					t.Fatalf("row %d: indicator %v", i, v)
				}
				sum += v
			}
			if sum > 1 {
				t.Fatalf("row %d: %v indicators set in %v", i, sum, r[g[0]:g[1]])
			}
		}
	}
	// The norm bound counts each categorical column once: age, bmi,
	// systolic_bp and two groups, M = √5 (not √9), and every scaled
	// record is inside it with its indicators in [0, 1].
	sc := s.Scaler()
	if math.Abs(sc.MaxNorm-math.Sqrt(5)) > 1e-15 {
		t.Errorf("M = %v, want √5", sc.MaxNorm)
	}
	scaled := sc.Apply(tab.Dataset)
	for i := 0; i < scaled.N; i++ {
		r := scaled.Row(i)
		var n2 float64
		for j, v := range r {
			n2 += v * v
			if g := s.groups[j]; g != "" && (v < 0 || v > 1) {
				t.Errorf("row %d: scaled indicator %d = %v outside [0, 1]", i, j, v)
			}
		}
		if math.Sqrt(n2) > sc.MaxNorm*(1+1e-12) {
			t.Errorf("row %d: ‖x‖ = %v > M = %v", i, math.Sqrt(n2), sc.MaxNorm)
		}
	}
	cats := s.Categoricals()
	if len(cats) != 2 || cats[0].Name != "sex" || cats[0].First != 1 || cats[0].Other != -1 ||
		cats[1].Name != "admission" || cats[1].First != 4 || cats[1].Other != 3 || strings.Join(cats[1].Indicators, ",") != "elective,emergency,transfer,other" {
		t.Errorf("Categoricals %+v", cats)
	}
	cats[0].Categories[0] = "changed"
	if s.Categoricals()[0].Categories[0] != "F" {
		t.Error("Categoricals returns the schema's own slices")
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// patientsText is the example schema with admission's "other" removed.
func patientsStrict(t *testing.T) string {
	raw, err := os.ReadFile(patientsSchema)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(raw), `"other": true,`, "", 1)
	if s == string(raw) {
		t.Fatal("the example schema no longer has \"other\": true")
	}
	return s
}

func TestCategoricalErrors(t *testing.T) {
	// A value outside the list without "other": file, line, column,
	// value and the allowed list.
	_, _, err := loadPatients(t, patientsStrict(t), "schema")
	want := `data: testdata/patients.csv:8:5: value "day-case" in categorical column 5 "admission" is not one of its categories ("elective", "emergency", "transfer") in feature bounds p.json: add it`
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), `"other": true`) {
		t.Errorf("got %v\nwant the prefix %s", err, want)
	}
	// A missing categorical value under --impute error.
	_, _, err = loadPatients(t, "", "")
	if err == nil || !strings.Contains(err.Error(), "patients.csv:3:4: missing value in column 4 \"bmi\"") {
		t.Errorf("impute error: %v", err)
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	load := func(schema, file string, impute string) (*Table, error) {
		s, err := ReadSchema(strings.NewReader(schema), "s.json")
		if err != nil {
			t.Fatal(err)
		}
		o := Options{Impute: impute}
		if _, err := s.Apply(&o); err != nil {
			t.Fatal(err)
		}
		tab, err := Load(file, o)
		if err == nil {
			err = s.Check(tab)
		}
		return tab, err
	}
	schema := `{"positive_class": "yes", "features": [{"name": "sex", "categories": ["F", "M"]}, {"name": "x", "lo": 0, "hi": 1}]}`
	csv := write("a.csv", "sex,x,y\nF,0.5,yes\n,0.1,no\nM,0.2,no\n")
	if _, err := load(schema, csv, ""); err == nil || !strings.Contains(err.Error(), `a.csv:3:1: missing value in categorical column 1 "sex" (use --impute schema`) {
		t.Errorf("missing categorical, impute error: %v", err)
	}
	// --impute mean: each indicator takes its column's mean (data-dependent).
	tab, err := load(schema, csv, "mean")
	if err != nil || tab.Dataset.Row(1)[0] != 0.5 || tab.Dataset.Row(1)[1] != 0.5 || len(tab.DataDependent) == 0 || tab.Imputed != 1 {
		t.Errorf("impute mean: %v %v %q", err, tab.Dataset.Row(1), tab.DataDependent)
	}
	tab, err = load(schema, csv, "drop")
	if err != nil || tab.N != 2 {
		t.Errorf("impute drop: %v", err)
	}
	// The schema's column count must match the file's feature columns.
	if _, err := load(schema, write("b.csv", "sex,x,z,y\nF,0.5,1,yes\nM,0.2,1,no\n"), ""); err == nil || !strings.Contains(err.Error(), "the file has 3 feature columns (besides the label and ignored columns) but feature bounds s.json describes 2") {
		t.Errorf("column count: %v", err)
	}
	// A header naming another column: the indicator names disagree.
	if _, err := load(schema, write("c.csv", "gender,x,y\nF,0.5,yes\nM,0.2,no\n"), ""); err == nil || !strings.Contains(err.Error(), `feature 1 is "gender=F" in`) {
		t.Errorf("header mismatch: %v", err)
	}
	// LIBSVM has no categorical columns.
	if _, err := load(schema, write("d.libsvm", "1 1:0.5\n-1 2:1\n"), ""); err == nil || !strings.Contains(err.Error(), `a LIBSVM file has no categorical columns`) {
		t.Errorf("libsvm: %v", err)
	}
	// ARFF: a nominal (or string) attribute of the schema's categorical
	// column is read; without the schema it is refused with the hint.
	arff := write("e.arff", "@relation r\n@attribute sex {F,M}\n@attribute x numeric\n@attribute class {yes,no}\n@data\nF,0.5,yes\nM,0.25,no\n")
	tab, err = load(schema, arff, "")
	if err != nil || tab.D != 3 || !equalFloats(tab.Dataset.Row(1), []float64{0, 1, 0.25}) {
		t.Errorf("arff: %v", err)
	}
	if _, err := Load(arff, Options{}); err == nil || !strings.Contains(err.Error(), `declare it categorical in a --feature-bounds schema ({"name": "sex", "categories": ["F", "M"]}`) {
		t.Errorf("arff without schema: %v", err)
	}
	// A text value in a numeric column (no schema) says how to declare it.
	if _, err := Load(csv, Options{}); err == nil || !strings.Contains(err.Error(), `bad feature value "F" in column 1 "sex" (a text category? declare the column categorical in a --feature-bounds schema, e.g. {"name": "sex", "categories": ["F", …]}`) {
		t.Errorf("text without schema: %v", err)
	}
}

func TestCategoricalSchemaErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{`{"features": [{"categories": ["a", "b"]}]}`, `features[0]: a categorical feature needs a "name"`},
		{`{"features": [{"name": "c", "other": true}]}`, `features[0] ("c"): "other" applies to a categorical feature`},
		{`{"features": [{"name": "c", "categories": []}]}`, `"categories" is empty`},
		{`{"features": [{"name": "c", "categories": ["a"], "lo": 0, "hi": 1}]}`, `a categorical feature takes no "lo"`},
		{`{"features": [{"name": "c", "categories": ["a"], "count": 2}]}`, `takes no "lo", "hi", "count"`},
		{`{"features": [{"name": "c", "categories": ["a", "a"]}]}`, `category "a" is listed twice`},
		{`{"features": [{"name": "c", "categories": ["a", " b"]}]}`, `category " b" is empty or has leading or trailing blanks`},
		{`{"features": [{"name": "c", "categories": ["?"]}]}`, `"?" marks a missing value`},
		{`{"features": [{"name": "c", "categories": ["a", "A"]}]}`, `same name "c=A" as feature 1`},
		{`{"features": [{"name": "c", "categories": ["a"]}, {"name": "c=a", "lo": 0, "hi": 1}]}`, `same name "c=a"`},
		{`{"features": [{"name": "c", "categories": ["a"]}, {"name": "z", "count": 2, "lo": 0, "hi": 1, "onehot": "c"}]}`, `categorical feature "c" has the name of a one-hot group`},
	}
	for _, c := range cases {
		_, err := readSchema(t, c.text)
		if c.want == "" {
			if err == nil {
				t.Errorf("%s: accepted", c.text)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.text, err, c.want)
		}
	}
	// "other" that the list declares is the catch-all; none is added.
	s, err := readSchema(t, `{"features": [{"name": "c", "categories": ["a", "Other"], "other": true}]}`)
	if err != nil || s.D() != 2 || s.Categoricals()[0].Other != 1 {
		t.Errorf("declared other: %v", err)
	}
}

// A schema saved as JSON (e.g. inside a model artefact) reads back with
// the same features and categories, so a scoring file is encoded alike.
func TestCategoricalSchemaRoundTrip(t *testing.T) {
	s, err := LoadSchema(patientsSchema)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadSchema(bytes.NewReader(raw), "saved")
	if err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	if !reflect.DeepEqual(back.FeatureNames(), s.FeatureNames()) || !reflect.DeepEqual(back.Categoricals(), s.Categoricals()) {
		t.Errorf("round trip: %q %+v, want %q %+v", back.FeatureNames(), back.Categoricals(), s.FeatureNames(), s.Categoricals())
	}
}

// A schema whose categories expand past the memory budget is refused
// before any record is stored.
func TestCategoricalMemoryBudget(t *testing.T) {
	cats := make([]string, 200000)
	for i := range cats {
		cats[i] = fmt.Sprintf("c%d", i)
	}
	raw, _ := json.Marshal(map[string]any{"features": []any{map[string]any{"name": "big", "categories": cats}}})
	s, err := ReadSchema(bytes.NewReader(raw), "big.json")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{MaxMemory: 16 << 20}
	if _, err := s.Apply(&o); err != nil {
		t.Fatal(err)
	}
	_, err = Read(strings.NewReader("big,y\nc1,0\nc2,1\n"), "big.csv", o)
	if err == nil || !strings.Contains(err.Error(), "training over 200000 features needs") {
		t.Errorf("got %v", err)
	}
}
