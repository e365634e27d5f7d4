package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/internal/publicdata"
	"github.com/pairfed/pairfed/pairwise"
)

func readSchema(t *testing.T, text string) (*Schema, error) {
	t.Helper()
	return ReadSchema(strings.NewReader(text), "s.json")
}

func TestSchemaParse(t *testing.T) {
	s, err := readSchema(t, `{"version": 1, "name": "toy", "positive_class": "M", "label_column": "2", "ignore_columns": ["1"],
	  "features": [{"name": "a", "lo": 0, "hi": 10, "impute": 3}, {"name": "oh", "count": 3, "lo": 0, "hi": 1}, {"lo": -5, "hi": 5}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if s.D() != 5 {
		t.Fatalf("D = %d, want 5 (count expands)", s.D())
	}
	lo, hi := s.Bounds()
	if lo[0] != 0 || hi[0] != 10 || lo[3] != 0 || hi[3] != 1 || lo[4] != -5 || hi[4] != 5 {
		t.Errorf("bounds %v %v", lo, hi)
	}
	if got := s.ImputeValues(); got[0] != 3 || got[1] != 0.5 || got[4] != 0 {
		t.Errorf("impute values %v: want the given 3, else the midpoints", got)
	}
	if s.names[1] != "oh#1" || s.names[3] != "oh#3" {
		t.Errorf("expanded names %v", s.names)
	}
}

func TestSchemaStrictErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{`{"features": [{"lo": 0, "hi": 1, "hight": 2}]}`, `unknown field "hight"`},
		{`{"feature": []}`, `unknown field "feature"`},
		{`{"features": []}`, "no features"},
		{`{}`, "no features"},
		{`{"features": [{"lo": 0}]}`, `features[0]: both "lo" and "hi" are required`},
		{`{"features": [{"name": "x", "lo": 1, "hi": 1}]}`, `features[0] ("x"): lo = hi = 1: a constant feature`},
		{`{"features": [{"lo": 0, "hi": 1}, {"lo": 2, "hi": -2}]}`, "features[1]: lo = 2 is above hi = -2: swap them"},
		{`{"features": [{"lo": 0, "hi": 1e400}]}`, "feature bounds s.json"},
		{`{"features": [{"lo": -1.7e308, "hi": 1.7e308}]}`, ""}, // wide but finite: accepted
		{`{"features": [{"lo": 0, "hi": 1e-320}]}`, "too narrow"},
		{`{"features": [{"lo": "0", "hi": 1}]}`, `field "features.lo"`},
		{`{"features": [{"lo": 0, "hi": 1, "count": -2}]}`, "count -2 must be ≥ 1"},
		{`{"features": [{"name": "a", "lo": 0, "hi": 1}, {"name": "A", "lo": 0, "hi": 1}]}`, `same name "A" as feature 1`},
		{`{"version": 2, "features": [{"lo": 0, "hi": 1}]}`, "version 2"},
		{`{"positive_class": "1-", "features": [{"lo": 0, "hi": 1}]}`, ""},
		{`{"positive_class": "5-3", "features": [{"lo": 0, "hi": 1}]}`, "positive_class"},
		{`{"label_column": "0", "features": [{"lo": 0, "hi": 1}]}`, "1-based"},
		{`{"features": [{"lo": 0, "hi": 1}]} {}`, "more than one JSON value"},
		{`{"features": [{"lo": 0, "hi": 1},]}`, "s.json:1: invalid JSON"},
	}
	for _, c := range cases {
		_, err := readSchema(t, c.text)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.text, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "data: ")):
			t.Errorf("%s: error %v, want one containing %q", c.text, err, c.want)
		}
	}
}

// TestSchemaApply: the schema fills unset loader options, refuses
// contradicting flags, and the loaded table is checked against it.
func TestSchemaApply(t *testing.T) {
	s, err := readSchema(t, `{"positive_class": "M", "label_column": "y", "features": [{"name": "a", "lo": 0, "hi": 10, "impute": 7}, {"name": "b", "lo": 0, "hi": 4}]}`)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Impute: "schema"}
	if _, err := s.Apply(&o); err != nil {
		t.Fatal(err)
	}
	if o.PositiveClasses != "M" || o.LabelColumn != "y" || o.Dim != 2 || o.Impute != "constant" || o.ImputeValues[0] != 7 || o.ImputeValues[1] != 2 {
		t.Fatalf("options after Apply: %+v", o)
	}
	tab, err := Read(strings.NewReader("a,b,y\n1,?,M\n?,3,B\n5,1,B\n"), "t.csv", o)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(tab); err != nil {
		t.Fatal(err)
	}
	if tab.X[1] != 2 || tab.X[2] != 7 || tab.Imputed != 2 || len(tab.DataDependent) != 0 {
		t.Errorf("imputed rows %v (imputed %d, data-dependent %v): want the schema's constants 2 (midpoint) and 7, nothing data-dependent", tab.X, tab.Imputed, tab.DataDependent)
	}
	if tab.Y[0] != 1 || tab.Y[1] != -1 {
		t.Errorf("labels %v: M is positive", tab.Y)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{PositiveClasses: "B"}, "disagrees with positive_class"},
		{Options{Binarize: "halves"}, "--binarize halves would override"},
		{Options{LabelColumn: "3"}, "disagrees with label_column"},
		{Options{Dim: 3}, "--dim 3 disagrees with the 2 features"},
	} {
		if _, err := s.Apply(&c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.o, err, c.want)
		}
	}
	// Wrong file: names or dimension differ.
	o2 := Options{}
	s.Apply(&o2)
	o2.Dim, o2.DimSource = 0, ""
	other, err := Read(strings.NewReader("a,c,y\n1,2,M\n3,4,B\n"), "u.csv", o2)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(other); err == nil || !strings.Contains(err.Error(), `feature 2 is "c" in u.csv but "b"`) {
		t.Errorf("name mismatch: %v", err)
	}
	o3 := Options{}
	s.Apply(&o3)
	_, err = Read(strings.NewReader("a,b,c,y\n1,2,3,M\n3,4,5,B\n"), "v.csv", o3)
	if err == nil || !strings.Contains(err.Error(), "file has 3 feature columns, but feature bounds s.json declares 2") {
		t.Errorf("dimension mismatch: %v", err)
	}
	// LIBSVM: the schema declares D, padding absent trailing features.
	s2, err := readSchema(t, `{"positive_class": "3", "features": [{"lo": 0, "hi": 10}, {"lo": 0, "hi": 4}]}`)
	if err != nil {
		t.Fatal(err)
	}
	o4 := Options{}
	s2.Apply(&o4)
	lib, err := Read(strings.NewReader("3 1:3\n2 1:1\n"), "w.libsvm", o4)
	if err != nil || lib.D != 2 {
		t.Fatalf("LIBSVM with a schema: %v, D = %v", err, lib)
	}
}

func TestImputeModes(t *testing.T) {
	in := "a,b,y\n1,?,1\n3,4,0\n5,6,0\n"
	tab, err := Read(strings.NewReader(in), "t.csv", Options{Impute: "constant:-1.5"})
	if err != nil {
		t.Fatal(err)
	}
	if tab.X[1] != -1.5 || tab.Imputed != 1 || len(tab.DataDependent) != 0 {
		t.Errorf("constant:-1.5: %v imputed %d, data-dependent %v", tab.X, tab.Imputed, tab.DataDependent)
	}
	for _, bad := range []string{"constant:", "constant:x", "constant:NaN", "constant:inf", "constant", "schema", "median"} {
		if _, err := Read(strings.NewReader(in), "t.csv", Options{Impute: bad}); err == nil || !strings.Contains(err.Error(), "impute") {
			t.Errorf("--impute %s: error %v", bad, err)
		}
	}
	if _, err := Read(strings.NewReader(in), "t.csv", Options{Impute: "constant", ImputeValues: []float64{1, 2, 3}}); err == nil || !strings.Contains(err.Error(), "3 per-feature impute values") {
		t.Errorf("wrong number of per-feature constants: %v", err)
	}
}

// TestDataDependentReasons: each loading decision that reads the records
// is listed with its reason; the public alternatives are not.
func TestDataDependentReasons(t *testing.T) {
	cases := []struct {
		in   string
		opt  Options
		want string // "" = nothing data-dependent
	}{
		{"1,?,a\n3,4,b\n5,6,b\n", Options{Impute: "mean", PositiveClasses: "a"}, "--impute mean"},
		{"1,2,a\n3,4,b\n5,6,b\n", Options{Impute: "mean", PositiveClasses: "a"}, "--impute mean"}, // the mechanism, whatever this file holds
		{"1,?,a\n3,4,b\n5,6,a\n", Options{Impute: "drop", PositiveClasses: "a"}, "--impute drop"},
		{"1,2,a\n3,4,b\n5,6,b\n", Options{}, "minority class"},
		{"1,2,3\n3,4,5\n5,6,7\n", Options{Binarize: "halves"}, "--binarize halves"},
		{"1,2,a\n3,4,b\n5,6,b\n", Options{PositiveClasses: "b"}, ""},
		{"1,2,0\n3,4,1\n5,6,1\n", Options{}, ""},  // 0/1 labels: 1 is positive by convention
		{"1,2,-1\n3,4,1\n5,6,1\n", Options{}, ""}, // ±1 labels
		{"1,?,a\n3,4,b\n5,6,b\n", Options{Impute: "constant:0", PositiveClasses: "a"}, ""},
	}
	// LIBSVM: the dimension read off the largest index is data-dependent;
	// a declared one is not.
	for _, dim := range []int{0, 3} {
		tab, err := Read(strings.NewReader("1 1:2 3:1\n-1 2:1\n"), "t.libsvm", Options{Dim: dim})
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(tab.DataDependent, " | ")
		if (dim == 0) != strings.Contains(got, "number of features (3) was read off the largest feature index") {
			t.Errorf("LIBSVM with Dim %d: data-dependent %q", dim, got)
		}
	}
	for _, c := range cases {
		tab, err := Read(strings.NewReader(c.in), "t.csv", c.opt)
		if err != nil {
			t.Fatalf("%q %+v: %v", c.in, c.opt, err)
		}
		got := strings.Join(tab.DataDependent, " | ")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%q %+v: data-dependent %q, want %q", c.in, c.opt, got, c.want)
		}
	}
}

// TestBoundsMapProperties: the schema's map is per record (a record's
// image does not change when other records change), monotone in every
// coordinate, lands in the box, and with Divide(R) every record has
// ‖x‖ ≤ R; with clipping after the plain map too.
func TestBoundsMapProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const d = 5
	lo := []float64{0, -3, 100, -1e-3, 21}
	hi := []float64{20, 3, 1000, 1e-3, 90}
	draw := func() []float64 {
		x := make([]float64, d)
		for j := range x {
			w := hi[j] - lo[j]
			x[j] = lo[j] - w + 3*w*rng.Float64() // a third outside on each side
		}
		return x
	}
	mk := func(rows [][]float64) *pairwise.Dataset {
		ds := &pairwise.Dataset{N: len(rows), D: d}
		for _, r := range rows {
			ds.X = append(ds.X, r...)
			ds.Y = append(ds.Y, 1)
		}
		return ds
	}
	sc := NewBoundsScaler(lo, hi)
	for _, R := range []float64{1, 0.25, 7} {
		div := sc.Divide(R)
		rows := make([][]float64, 50)
		for i := range rows {
			rows[i] = draw()
		}
		a := div.Apply(mk(rows))
		clipped, _ := ClipNorms(sc.Apply(mk(rows)), R)
		for i := 0; i < a.N; i++ {
			for _, ds := range []*pairwise.Dataset{a, clipped} {
				if n := norm2(ds.Row(i)); n > R {
					t.Fatalf("R = %v: record %d has norm %v", R, i, n)
				}
			}
			for _, v := range sc.Apply(mk(rows[i : i+1])).Row(0) {
				if v < -1 || v > 1 {
					t.Fatalf("coordinate %v outside the box", v)
				}
			}
		}
		// Replace every other record: record 0's image is unchanged, bit
		// for bit.
		rows2 := make([][]float64, len(rows))
		rows2[0] = rows[0]
		for i := 1; i < len(rows2); i++ {
			rows2[i] = draw()
		}
		b := div.Apply(mk(rows2))
		for j := 0; j < d; j++ {
			if a.Row(0)[j] != b.Row(0)[j] {
				t.Fatalf("record 0's image changed with the other records: %v vs %v", a.Row(0), b.Row(0))
			}
		}
	}
	// Monotone: raising one coordinate never lowers its image.
	for trial := 0; trial < 1000; trial++ {
		x := draw()
		j := rng.IntN(d)
		y := append([]float64(nil), x...)
		y[j] += math.Abs(rng.NormFloat64()) * (hi[j] - lo[j])
		fx, fy := sc.Apply(mk([][]float64{x})).Row(0), sc.Apply(mk([][]float64{y})).Row(0)
		if fy[j] < fx[j] {
			t.Fatalf("not monotone: x_%d %v → %v, %v → %v", j, x[j], fx[j], y[j], fy[j])
		}
	}
	// The ends of each range map to ±1, the midpoint to 0.
	ends := sc.Apply(mk([][]float64{lo, hi}))
	for j := 0; j < d; j++ {
		if math.Abs(ends.Row(0)[j]+1) > 1e-12 || math.Abs(ends.Row(1)[j]-1) > 1e-12 {
			t.Errorf("feature %d: lo → %v, hi → %v", j, ends.Row(0)[j], ends.Row(1)[j])
		}
	}
}

// TestShippedSchemas: every schema in schemas/ parses and fits its
// public dataset (publicdata: $PAIRFED_DATASETS, when set), with nothing
// data-dependent in the loading.
func TestShippedSchemas(t *testing.T) {
	files, _ := filepath.Glob("../schemas/*.json")
	if len(files) == 0 {
		t.Fatal("no schemas in ../schemas")
	}
	for _, f := range files {
		s, err := LoadSchema(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, f := range s.Features {
			if f.Source == "" && s.Source == "" {
				t.Errorf("%s: feature %q has no source for its bounds", s.File, f.Name)
			}
		}
	}
}

// TestShippedSchemasLoad loads the shared datasets with their schemas.
func TestShippedSchemasLoad(t *testing.T) {
	pairs := map[string]string{
		"diabetes.json": "diabetes", "pima-indians-diabetes.json": "pima-indians-diabetes.csv",
		"a9a.json": "a9a", "ijcnn1.json": "ijcnn1.trn.bz2", "breast-cancer-wisconsin.json": "breast-cancer-wisconsin.data",
		"hepatitis.json": "hepatitis.data", "german.numer.json": "german.numer",
		"messidor.json": "messidor_features.arff", "wdbc.json": "wdbc.data",
	}
	for schema, file := range pairs {
		path := filepath.Join(publicdata.Dir(t), file)
		if _, err := os.Stat(path); err != nil {
			t.Logf("%s: skipped (%v)", file, err)
			continue
		}
		if _, err := os.Stat(filepath.Join("../schemas", schema)); err != nil {
			continue // not shipped
		}
		s, err := LoadSchema(filepath.Join("../schemas", schema))
		if err != nil {
			t.Fatal(err)
		}
		o := Options{Impute: "schema"}
		if _, err := s.Apply(&o); err != nil {
			t.Fatalf("%s: %v", schema, err)
		}
		tab, err := Load(path, o)
		if err != nil {
			t.Fatalf("%s with %s: %v", file, schema, err)
		}
		if err := s.Check(tab); err != nil {
			t.Fatalf("%s: %v", schema, err)
		}
		if len(tab.DataDependent) > 0 {
			t.Errorf("%s: data-dependent loading with its schema: %v", file, tab.DataDependent)
		}
	}
}

// TestOneHotGroups: a one-hot group maps [0, hi] onto [0, 1] (zeros stay
// zeros) and counts once in the norm bound, so Divide(R) keeps every
// record that honours the groups within R with M = √(plain + groups);
// a record that breaks a group is brought back by the ℓ2 clipping.
func TestOneHotGroups(t *testing.T) {
	s, err := readSchema(t, `{"features": [{"name": "c", "count": 3, "lo": 0, "hi": 1, "onehot": "c"}, {"name": "k", "count": 2, "lo": 0, "hi": 2, "onehot": "k"}, {"lo": -5, "hi": 5}]}`)
	if err != nil {
		t.Fatal(err)
	}
	sc := s.Scaler()
	if math.Abs(sc.MaxNorm-math.Sqrt(3)) > 1e-15 {
		t.Fatalf("MaxNorm %v, want √3 (two groups and one plain feature)", sc.MaxNorm)
	}
	rows := [][]float64{{1, 0, 0, 0, 2, 5}, {0, 0, 1, 2, 0, -5}, {0, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 1, 7}}
	ds := &pairwise.Dataset{N: len(rows), D: 6}
	for _, r := range rows {
		ds.X = append(ds.X, r...)
		ds.Y = append(ds.Y, 1)
	}
	const R = 2
	out := sc.Divide(R).Apply(ds)
	want0 := []float64{1, 0, 0, 0, 1, 1}
	for j, v := range out.Row(0) {
		if math.Abs(v-want0[j]*R/math.Sqrt(3)) > 1e-12 {
			t.Fatalf("record 0 → %v, want %v·R/√3", out.Row(0), want0)
		}
	}
	for i := 0; i < out.N; i++ {
		if n := norm2(out.Row(i)); n > R*(1+1e-15) {
			t.Errorf("record %d (honours its groups) has norm %v > R", i, n)
		}
	}
	if out.Row(2)[0] != 0 || out.Row(2)[5] != 0 {
		t.Errorf("zeros of a group must stay zeros, and the plain feature's midpoint maps to 0: %v", out.Row(2))
	}
	broken := &pairwise.Dataset{N: 1, D: 6, X: []float64{1, 1, 1, 2, 2, 5}, Y: []float64{1}}
	b := sc.Divide(R).Apply(broken)
	if norm2(b.Row(0)) <= R {
		t.Fatalf("a record with three ones in a group should exceed the bound before clipping")
	}
	if c, n := ClipNorms(b, R); n != 1 || norm2(c.Row(0)) > R {
		t.Errorf("clipping must bring it back within R")
	}
	if _, err := readSchema(t, `{"features": [{"lo": -1, "hi": 1, "onehot": "g"}]}`); err == nil || !strings.Contains(err.Error(), `one-hot group "g" needs lo = 0`) {
		t.Errorf("one-hot with lo ≠ 0: %v", err)
	}
}

// TestUnknownFeatures: "unknown": true marks a feature without a public
// range; Scaler refuses such a schema, ScalerWith fills the given ranges
// and keeps the others, and the schema's rules are enforced.
func TestUnknownFeatures(t *testing.T) {
	s, err := readSchema(t, `{"features": [{"lo": 0, "hi": 10}, {"name": "u", "unknown": true, "impute": 3}, {"unknown": true}, {"lo": -1, "hi": 3}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if u := s.Unknown(); len(u) != 2 || u[0] != 1 || u[1] != 2 || s.D() != 4 {
		t.Fatalf("Unknown() = %v, D = %d", u, s.D())
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Scaler() with unknown features did not panic")
			}
		}()
		s.Scaler()
	}()
	sc := s.ScalerWith([]float64{100, -4}, []float64{300, 4})
	want := NewBoundsScaler([]float64{0, 100, -4, -1}, []float64{10, 300, 4, 3})
	for j := range want.Scale {
		if sc.Shift[j] != want.Shift[j] || sc.Scale[j] != want.Scale[j] {
			t.Errorf("feature %d: shift %v scale %v, want %v %v", j+1, sc.Shift[j], sc.Scale[j], want.Shift[j], want.Scale[j])
		}
	}
	// --impute schema: an unknown feature's "impute" constant, and an
	// error naming the feature when one without a constant is missing.
	s2, _ := readSchema(t, `{"features": [{"unknown": true, "impute": 3}, {"lo": 0, "hi": 2}, {"unknown": true}]}`)
	o := Options{Impute: "schema"}
	if _, err := s2.Apply(&o); err != nil || o.ImputeValues[0] != 3 || o.ImputeValues[1] != 1 || !math.IsNaN(o.ImputeValues[2]) {
		t.Errorf("impute values %v, err %v", o.ImputeValues, err)
	}
	if tab, err := Read(strings.NewReader("?,?,1,a\n1,1,1,b\n"), "u.csv", o); err != nil || tab.X[0] != 3 || tab.X[1] != 1 {
		t.Errorf("imputed %v, err %v", tab, err)
	}
	if _, err := Read(strings.NewReader("1,1,?,a\n1,1,1,b\n"), "u.csv", o); err == nil || !strings.Contains(err.Error(), "feature 3") {
		t.Errorf("missing value of an unknown feature without a constant: %v", err)
	}
	for _, c := range []struct{ text, want string }{
		{`{"features": [{"unknown": true, "lo": 0}]}`, "takes no"},
		{`{"features": [{"unknown": true, "onehot": "g"}]}`, "one-hot"},
		{`{"features": [{"name": "x"}]}`, "\"unknown\": true"},
	} {
		if _, err := readSchema(t, c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.text, err, c.want)
		}
	}
}

// Issue 28's unclear schema messages, each now naming the cause and the
// fix: an empty file, a truncated one, a byte-order mark (accepted).
func TestSchemaReadMessages(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "the file is empty"},
		{" \n\t", "the file is empty"},
		{`{"features": [{"name": "a", "lo": 0`, "s.json:1: the JSON ends in the middle of a value"},
		{"{\n\"features\": [\n", "s.json:3: the JSON ends in the middle of a value"},
	} {
		if _, err := ReadSchema(strings.NewReader(c.in), "s.json"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
	s, err := ReadSchema(strings.NewReader("\xef\xbb\xbf"+`{"features": [{"name": "a", "lo": 0, "hi": 1}]}`), "bom.json")
	if err != nil || s.D() != 1 {
		t.Fatalf("a schema with a byte-order mark: %v", err)
	}
}

// Refined marks every numeric bounded feature unknown within its public
// range — a count-k entry as k single ones with the schema's names —,
// keeps one-hot indicators, categorical columns and features already
// unknown as they are, and keeps each feature's impute constant (the
// public midpoint by default); Within gives the public ranges indexed like
// the copy's Unknown (NaN for a feature that was unknown already).
func TestSchemaRefined(t *testing.T) {
	s, err := ReadSchema(strings.NewReader(`{"features": [
		{"name": "age", "lo": 0, "hi": 120, "impute": 40},
		{"name": "lab", "count": 2, "lo": -1, "hi": 3},
		{"name": "sex", "categories": ["F", "M"]},
		{"name": "w", "count": 2, "lo": 0, "hi": 1, "onehot": "w"},
		{"name": "u", "unknown": true, "impute": 5}]}`), "r.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Refined()
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := r.Within()
	if r.D() != s.D() || strings.Join(r.FeatureNames(), ",") != strings.Join(s.FeatureNames(), ",") {
		t.Fatalf("refined features %v, want the schema's %v", r.FeatureNames(), s.FeatureNames())
	}
	// features: age, lab#1, lab#2, sex=F, sex=M, w#1, w#2, u
	if got, want := fmt.Sprint(r.Unknown()), "[0 1 2 7]"; got != want {
		t.Fatalf("refined unknown %s, want %s", got, want)
	}
	wantLo, wantHi := []float64{0, -1, -1, math.NaN()}, []float64{120, 3, 3, math.NaN()}
	for k := range wantLo {
		same := func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
		if !same(lo[k], wantLo[k]) || !same(hi[k], wantHi[k]) {
			t.Errorf("public range %d: [%v, %v], want [%v, %v]", k, lo[k], hi[k], wantLo[k], wantHi[k])
		}
	}
	imp := r.ImputeValues()
	if imp[0] != 40 || imp[1] != 1 || imp[2] != 1 || imp[7] != 5 {
		t.Errorf("impute %v: want 40, the midpoint 1 twice, and 5 kept", imp)
	}
	if len(r.Categoricals()) != 1 || len(s.Unknown()) != 1 {
		t.Errorf("the categorical column or the original schema changed")
	}
}

// "within" belongs to an unknown feature and is two finite numbers lo < hi.
func TestSchemaWithin(t *testing.T) {
	s, err := ReadSchema(strings.NewReader(`{"features": [{"unknown": true, "within": [0, 100]}, {"unknown": true}]}`), "w.json")
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := s.Within()
	if lo[0] != 0 || hi[0] != 100 || !math.IsNaN(lo[1]) || !math.IsNaN(hi[1]) {
		t.Errorf("within %v %v", lo, hi)
	}
	for text, want := range map[string]string{
		`{"features": [{"lo": 0, "hi": 1, "within": [0, 1]}]}`:    `"within" is the public range of an "unknown": true feature`,
		`{"features": [{"unknown": true, "within": [1, 0]}]}`:     `"within": [1 0] must be two finite numbers [lo, hi] with lo < hi`,
		`{"features": [{"unknown": true, "within": [0]}]}`:        `"within": [0] must be two finite numbers`,
		`{"features": [{"unknown": true, "within": [0, 1, 2]}]}`:  `must be two finite numbers`,
		`{"features": [{"unknown": true, "within": [0, 1e999]}]}`: `within`,
	} {
		if _, err := ReadSchema(strings.NewReader(text), "w.json"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", text, err, want)
		}
	}
}
