package data

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/pairfed/pairfed/pairwise"
)

func mustRead(t *testing.T, in, name string, opt Options) *Table {
	t.Helper()
	tab, err := Read(strings.NewReader(in), name, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.Validate(); err != nil {
		t.Fatal(err)
	}
	return tab
}

// dense returns the records of ds as dense rows.
func dense(ds *pairwise.Dataset) [][]float64 {
	out := make([][]float64, ds.N)
	for i := range out {
		out[i] = ds.DenseRowTo(make([]float64, ds.D), i)
	}
	return out
}

func equalTables(a, b *pairwise.Dataset) bool {
	if a.N != b.N || a.D != b.D || !slices.Equal(a.Y, b.Y) {
		return false
	}
	ra, rb := dense(a), dense(b)
	for i := range ra {
		if !slices.Equal(ra[i], rb[i]) {
			return false
		}
	}
	return true
}

func TestCompressionRoundTrips(t *testing.T) {
	plain := readFile(t, "testdata/tiny.libsvm")
	want := mustRead(t, string(plain), "tiny.libsvm", Options{})
	if want.N != 4 || want.D != 3 || !slices.Equal(want.Y, []float64{1, -1, 1, -1}) {
		t.Fatalf("tiny.libsvm: %d×%d %v", want.N, want.D, want.Y)
	}
	if got := dense(want.Dataset); !slices.Equal(got[0], []float64{0.5, 0, -2}) || !slices.Equal(got[2], []float64{1, 2, 3}) {
		t.Fatalf("tiny.libsvm rows %v", got)
	}
	inputs := map[string][]byte{
		"gzip":  gzipBytes(t, string(plain)),
		"xz":    xzBytes(t, string(plain)),
		"bzip2": readFile(t, "testdata/tiny.libsvm.bz2"), // made with the bzip2 tool
	}
	for kind, z := range inputs {
		// Misleading names: detection is by magic bytes only.
		for _, name := range []string{"tiny.txt", "tiny.libsvm.gz"} {
			got, err := Read(bytes.NewReader(z), name, Options{})
			if err != nil {
				t.Fatalf("%s as %s: %v", kind, name, err)
			}
			if !equalTables(got.Dataset, want.Dataset) || !hasNote(got, "decompressed "+kind) {
				t.Errorf("%s as %s: differs from plain, notes %q", kind, name, got.Notes)
			}
		}
	}
	// Plain text named .gz is read as plain text.
	if _, err := Read(bytes.NewReader(plain), "tiny.gz", Options{}); err != nil {
		t.Errorf("plain text named .gz: %v", err)
	}
	// Concatenated gzip members are one stream.
	two := append(gzipBytes(t, "1 1:1\n"), gzipBytes(t, "-1 2:1\n")...)
	if got := mustRead(t, string(two), "two.gz", Options{}); got.N != 2 || got.D != 2 {
		t.Errorf("multistream gzip: %d×%d", got.N, got.D)
	}
}

func TestReadPartialReads(t *testing.T) {
	// One byte at a time, and data then error at once: the result must not
	// depend on how the reader splits its input.
	plain := readFile(t, "testdata/tiny.libsvm")
	want := mustRead(t, string(plain), "tiny", Options{})
	wraps := map[string]func(io.Reader) io.Reader{
		"one byte": iotest.OneByteReader,
		"data+err": iotest.DataErrReader,
		"half":     iotest.HalfReader,
	}
	for name, wrap := range wraps {
		for _, in := range [][]byte{plain, gzipBytes(t, string(plain))} {
			got, err := Read(wrap(bytes.NewReader(in)), "tiny", Options{})
			if err != nil || !equalTables(got.Dataset, want.Dataset) {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

func TestLIBSVMSyntax(t *testing.T) {
	in := "# header comment\n" +
		"+1  1:1.5\t3:-2   # trailing comment\n" +
		"\n" +
		"-1.0 2:0 3:4e-1 \r\n" + // explicit zero, CRLF, trailing space
		"1\n" + // no features: all zero
		"-1 1:0.25"
	tab := mustRead(t, in, "syntax.libsvm", Options{Representation: Sparse})
	if tab.N != 4 || tab.D != 3 || tab.Format != FormatLIBSVM {
		t.Fatalf("%d×%d %s", tab.N, tab.D, tab.Format)
	}
	if !slices.Equal(tab.Y, []float64{1, -1, 1, -1}) {
		t.Errorf("labels %v", tab.Y)
	}
	// "+1" and "1" are one class; "-1.0" and "-1" are another.
	if !slices.Equal(tab.Classes, []string{"+1", "-1.0"}) || !slices.Equal(tab.Counts, []int{2, 2}) {
		t.Errorf("classes %v %v", tab.Classes, tab.Counts)
	}
	if !slices.Equal(tab.Ptr, []int{0, 2, 3, 3, 4}) || !slices.Equal(tab.Idx, []int32{0, 2, 2, 0}) ||
		!slices.Equal(tab.Val, []float64{1.5, -2, 0.4, 0.25}) {
		t.Errorf("CSR %v %v %v", tab.Ptr, tab.Idx, tab.Val)
	}
	// Dim pads a file whose largest index is smaller.
	if tab := mustRead(t, in, "syntax.libsvm", Options{Dim: 10}); tab.D != 10 || !tab.DimDeclared {
		t.Errorf("Dim 10: d=%d", tab.D)
	}
}

func TestCSVSyntax(t *testing.T) {
	t.Run("header, quotes, names", func(t *testing.T) {
		in := "\ufeffid,\"x, one\",x2,label\n" +
			"7, 1.5 ,\"2\",yes\n" +
			"8,\"-3\",4,\"no\"\r\n" +
			"\n" +
			"9,5,\"6\",yes\n"
		tab := mustRead(t, in, "q.csv", Options{IgnoreColumns: []string{"id"}, LabelColumn: "label"})
		if tab.N != 3 || tab.D != 2 || !slices.Equal(tab.FeatureNames, []string{"x, one", "x2"}) {
			t.Fatalf("%d×%d %q", tab.N, tab.D, tab.FeatureNames)
		}
		if got := dense(tab.Dataset); !slices.Equal(got[1], []float64{-3, 4}) {
			t.Errorf("rows %v", got)
		}
		// yes (2) vs no (1): minority "no" is positive.
		if !slices.Equal(tab.Positive, []string{"no"}) || !slices.Equal(tab.Y, []float64{-1, 1, -1}) {
			t.Errorf("positive %v, y %v", tab.Positive, tab.Y)
		}
	})
	t.Run("quoted field spanning lines", func(t *testing.T) {
		in := "a,b,c\n1,\"2\",\"x\ny\"\n3,4,z\n5,6,\"x\ny\"\n"
		tab := mustRead(t, in, "ml.csv", Options{})
		if tab.N != 3 || !slices.Equal(tab.Classes, []string{"x\ny", "z"}) {
			t.Errorf("%d records, classes %q", tab.N, tab.Classes)
		}
		// An error after the multi-line record has the right line.
		_, err := Read(strings.NewReader(in+"7,x,z\n"), "ml.csv", Options{})
		checkPosErr(t, err, "ml.csv", 7, 2, `bad feature value "x"`)
	})
	t.Run("semicolons", func(t *testing.T) {
		tab := mustRead(t, "1;2;0\n3;4;1\n", "semi.csv", Options{})
		if tab.D != 2 || !hasNote(tab, `separator ';'`) {
			t.Errorf("d=%d notes %q", tab.D, tab.Notes)
		}
	})
	t.Run("header detection", func(t *testing.T) {
		cases := []struct {
			in     string
			opt    Options
			n      int
			header bool
		}{
			{"a,b,y\n1,2,0\n3,4,1\n", Options{}, 2, true},
			{"1,2,0\n3,4,1\n", Options{}, 2, false},
			{"1,2,a\n3,4,b\n", Options{}, 2, false}, // text labels are not a header
			{"?,2,0\n3,4,1\n", Options{Impute: "mean"}, 2, false},
			{"1,2,0\n3,4,1\n5,6,0\n", Options{Header: "yes"}, 2, true},
			{"x,y,z\n1,2,0\n3,4,1\n", Options{LabelColumn: "z"}, 2, true},
		}
		for _, c := range cases {
			tab := mustRead(t, c.in, "h.csv", c.opt)
			if tab.N != c.n || (tab.FeatureNames != nil) != c.header {
				t.Errorf("%q: n=%d names %q", c.in, tab.N, tab.FeatureNames)
			}
		}
		_, err := Read(strings.NewReader("a,b,y\n1,2,0\n"), "h.csv", Options{Header: "no"})
		checkPosErr(t, err, "h.csv", 1, 1, `bad feature value "a"`)
	})
	t.Run("impute", func(t *testing.T) {
		in := "1,?,0\n3,4,1\n5,8,0\n?,,1\n"
		tab := mustRead(t, in, "m.csv", Options{Impute: "mean"})
		want := [][]float64{{1, 6}, {3, 4}, {5, 8}, {3, 6}}
		if got := dense(tab.Dataset); fmt.Sprint(got) != fmt.Sprint(want) || tab.Imputed != 3 {
			t.Errorf("mean: %v imputed %d", got, tab.Imputed)
		}
		tab = mustRead(t, in, "m.csv", Options{Impute: "drop"})
		if got := dense(tab.Dataset); fmt.Sprint(got) != "[[3 4] [5 8]]" || tab.Dropped != 2 || !slices.Equal(tab.Y, []float64{1, -1}) {
			t.Errorf("drop: %v dropped %d y %v", got, tab.Dropped, tab.Y)
		}
		// A dropped record's label does not count as a class.
		tab = mustRead(t, "1,2,a\n1,?,b\n3,4,c\n5,6,a\n", "m.csv", Options{Impute: "drop"})
		if !slices.Equal(tab.Classes, []string{"a", "c"}) {
			t.Errorf("classes %v", tab.Classes)
		}
		// Ignored columns may hold anything.
		tab = mustRead(t, "x?,1,0\n,2,1\n", "m.csv", Options{IgnoreColumns: []string{"1"}})
		if tab.D != 1 {
			t.Errorf("d=%d", tab.D)
		}
	})
}

func TestARFFSyntax(t *testing.T) {
	in := "% comment\n@RELATION test\n@relation again\n\n" +
		"@attribute 'first one' NUMERIC\n" +
		"@attribute id string\n" +
		"@attribute \"x\" integer\n" +
		"@attribute class{'yes', no}\n" +
		"@attribute z real\n" +
		"@DATA\n% c\n" +
		"1.5,'a b',2,yes,0\n" +
		"2,c,3,'no',1\n" +
		"3,d,4,no,0"
	tab := mustRead(t, in, "t.arff", Options{IgnoreColumns: []string{"id"}})
	if tab.N != 3 || tab.D != 3 || tab.Format != FormatARFF {
		t.Fatalf("%d×%d %s", tab.N, tab.D, tab.Format)
	}
	if !slices.Equal(tab.FeatureNames, []string{"first one", "x", "z"}) {
		t.Errorf("names %q", tab.FeatureNames)
	}
	if !slices.Equal(tab.Classes, []string{"yes", "no"}) || !slices.Equal(tab.Positive, []string{"yes"}) {
		t.Errorf("classes %v positive %v", tab.Classes, tab.Positive)
	}
	if got := dense(tab.Dataset); !slices.Equal(got[0], []float64{1.5, 2, 0}) {
		t.Errorf("rows %v", got)
	}
	// The class is found by name, not position; LabelColumn overrides.
	tab = mustRead(t, in, "t.arff", Options{IgnoreColumns: []string{"2", "class"}, LabelColumn: "z"})
	if tab.D != 2 || !slices.Equal(tab.Classes, []string{"0", "1"}) {
		t.Errorf("label z: d=%d classes %v", tab.D, tab.Classes)
	}
}

func TestLabelMapping(t *testing.T) {
	// labels → CSV with one feature.
	csv := func(labels ...string) string {
		var sb strings.Builder
		for i, l := range labels {
			fmt.Fprintf(&sb, "%d,%s\n", i, l)
		}
		return sb.String()
	}
	rep := func(l string, n int) []string { return slices.Repeat([]string{l}, n) }
	cases := []struct {
		name     string
		labels   []string
		opt      Options
		positive []string
		note     string
	}{
		{"pm1", slices.Concat(rep("-1", 5), rep("1", 2)), Options{}, []string{"1"}, "positive class = 1"},
		{"01 majority 1", slices.Concat(rep("0", 2), rep("1", 5)), Options{}, []string{"1"}, ""},
		{"1.0 and 0", slices.Concat(rep("0", 2), rep("1.0", 5)), Options{}, []string{"1.0"}, ""},
		{"minority", slices.Concat(rep("2", 5), rep("4", 3)), Options{}, []string{"4"}, "positive class = minority class 4 (3 of 8)"},
		{"minority text", slices.Concat(rep("b", 2), rep("a", 3)), Options{}, []string{"b"}, "minority class b"},
		{"tie numeric", slices.Concat(rep("10", 2), rep("9", 2)), Options{}, []string{"10"}, "minority class 10"},
		{"tie text", slices.Concat(rep("b", 2), rep("a", 2)), Options{}, []string{"b"}, ""},
		{"list", []string{"1", "2", "3", "4", "5", "6"}, Options{PositiveClasses: "2,4-5"}, []string{"2", "4", "5"}, "positive classes 2,4,5"},
		{"range", []string{"1", "7", "13", "14", "20"}, Options{PositiveClasses: "1-13"}, []string{"1", "7", "13"}, ""},
		{"negative range", []string{"-3", "-2", "0", "1"}, Options{PositiveClasses: "-3--2"}, []string{"-3", "-2"}, ""},
		{"numeric match", []string{"4.0", "2", "4.0"}, Options{PositiveClasses: "4"}, []string{"4.0"}, ""},
		{"text", []string{"M", "B", "B"}, Options{PositiveClasses: "M"}, []string{"M"}, ""},
		{"unmatched item noted", []string{"M", "B"}, Options{PositiveClasses: "M,X"}, []string{"M"}, `positive class "X" matches no label`},
		// Halves: u=5 sorted 1,2,3,10,20 → ranks 0,1 positive (k ≥ ⌊5/2⌋=2 negative).
		{"halves odd", []string{"20", "10", "3", "2", "1"}, Options{Binarize: "halves"}, []string{"2", "1"}, ""},
		// u=4: ranks 0,1 positive.
		{"halves even", []string{"d", "c", "b", "a", "a"}, Options{Binarize: "halves"}, []string{"b", "a"}, ""},
		// u=2: label 1 is positive whatever the order.
		{"halves two", []string{"1", "2", "2"}, Options{Binarize: "halves"}, []string{"1"}, ""},
		{"negative zero", []string{"0", "-0", "1"}, Options{}, []string{"1"}, ""},
		{"halves two neg", []string{"-1", "1"}, Options{Binarize: "halves"}, []string{"1"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tab := mustRead(t, csv(c.labels...), "l.csv", c.opt)
			if !slices.Equal(tab.Positive, c.positive) {
				t.Errorf("positive %v, want %v", tab.Positive, c.positive)
			}
			for i, l := range c.labels {
				want := -1.0
				if slices.Contains(c.positive, l) {
					want = 1
				}
				if tab.Y[i] != want {
					t.Errorf("record %d (%s): y=%v want %v", i, l, tab.Y[i], want)
				}
			}
			if c.note != "" && !hasNote(tab, c.note) {
				t.Errorf("notes %q lack %q", tab.Notes, c.note)
			}
		})
	}
	// Two labels of which none is 1 cannot be halved.
	_, err := Read(strings.NewReader(csv("a", "b")), "h.csv", Options{Binarize: "halves"})
	checkPosErr(t, err, "h.csv", 1, 2, "all 2 records map to −1")
	// Many classes: the message is bounded.
	many := make([]string, 50)
	for i := range many {
		many[i] = fmt.Sprint(i)
	}
	_, err = Read(strings.NewReader(csv(many...)), "m.csv", Options{})
	if err == nil || !strings.Contains(err.Error(), "50 classes found") || !strings.Contains(err.Error(), "… 40 more") {
		t.Errorf("got %v", err)
	}
	if tab := mustRead(t, csv(many...), "m.csv", Options{Binarize: "halves"}); tab.NumPositive() != 25 {
		t.Errorf("halves of 50: %d positive", tab.NumPositive())
	}
}

func TestPresets(t *testing.T) {
	// A wdbc-shaped file anywhere, even compressed, gets the preset.
	in := "1,M,1,2\n2,B,3,4\n3,B,5,6\n"
	for _, name := range []string{"wdbc.data", "/some/dir/wdbc.data.gz"} {
		tab := mustRead(t, string(gzipBytes(t, in)), name, Options{})
		if tab.D != 2 || !slices.Equal(tab.Positive, []string{"M"}) || !hasNote(tab, "preset for wdbc.data") {
			t.Errorf("%s: d=%d positive %v notes %q", name, tab.D, tab.Positive, tab.Notes)
		}
	}
	// Options the user set win over the preset.
	tab := mustRead(t, in, "wdbc.data", Options{PositiveClasses: "B"})
	if !slices.Equal(tab.Positive, []string{"B"}) {
		t.Errorf("user positive class lost: %v", tab.Positive)
	}
	// A preset for another format does not apply.
	tab = mustRead(t, "1 1:1\n-1 2:1\n", "wdbc.data", Options{})
	if tab.Format != FormatLIBSVM || hasNote(tab, "preset") {
		t.Errorf("format %s notes %q", tab.Format, tab.Notes)
	}
}

func TestRepresentation(t *testing.T) {
	// 20 records, d = 2000, one nonzero each: density 0.05% → sparse.
	var sb strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&sb, "%d %d:1.5\n", 2*(i%2)-1, 100*i+1)
	}
	fmt.Fprintf(&sb, "1 2000:1\n")
	in := sb.String()
	tab := mustRead(t, in, "s.libsvm", Options{})
	if !tab.IsSparse() || tab.Representation != Sparse || tab.D != 2000 {
		t.Errorf("auto: %s d=%d", tab.Representation, tab.D)
	}
	dn := mustRead(t, in, "s.libsvm", Options{Representation: Dense})
	if dn.IsSparse() || !equalTables(tab.Dataset, dn.Dataset) {
		t.Errorf("forced dense differs")
	}
	// The rule is storage: CSR (12 bytes per nonzero + 8 per row) at most
	// a quarter of dense (8 per cell). d = 1000 with one nonzero: sparse;
	// d = 2, both records full: dense.
	if tab := mustRead(t, "1 1000:1\n-1 1:1\n", "s.libsvm", Options{}); !tab.IsSparse() {
		t.Errorf("d=1000, 0.1%% dense: %s", tab.Representation)
	}
	if tab := mustRead(t, "1 1:1 2:1\n-1 1:1 2:3\n", "s.libsvm", Options{}); tab.IsSparse() {
		t.Errorf("d=2, full: %s", tab.Representation)
	}
	// 1001 features: every 10th nonzero (10 %: CSR is 15 % of dense) is
	// sparse; every 5th (20 %: 30 %) is dense.
	for _, c := range []struct {
		step   int
		sparse bool
	}{{10, true}, {5, false}} {
		sb.Reset()
		for i := 0; i < 4; i++ {
			fmt.Fprintf(&sb, "%d", 2*(i%2)-1)
			for j := 1; j <= 1001; j += c.step {
				fmt.Fprintf(&sb, " %d:1", j)
			}
			sb.WriteString("\n")
		}
		if tab := mustRead(t, sb.String(), "s.libsvm", Options{}); tab.IsSparse() != c.sparse || tab.D != 1001 {
			t.Errorf("every %dth feature: %s", c.step, tab.Representation)
		}
	}
	// CSV to sparse drops zeros.
	tab = mustRead(t, "0,2,0,1\n3,0,0,0\n", "z.csv", Options{Representation: Sparse})
	if !slices.Equal(tab.Ptr, []int{0, 1, 2}) || !slices.Equal(tab.Idx, []int32{1, 0}) {
		t.Errorf("CSR %v %v", tab.Ptr, tab.Idx)
	}
}

func TestAlign(t *testing.T) {
	train := mustRead(t, "1 1:1 3:1\n-1 2:1\n", "tr", Options{})
	test := mustRead(t, "1 1:1\n-1 2:1\n", "te", Options{Representation: Sparse})
	old := test.Dataset
	if err := Align(train, test); err != nil {
		t.Fatal(err)
	}
	if test.D != 3 || old.D != 2 || !test.IsSparse() || test.Validate() != nil {
		t.Errorf("d=%d old %d", test.D, old.D)
	}
	// Test wider than train: train is padded.
	train = mustRead(t, "1 1:1\n-1 2:1\n", "tr", Options{})
	test = mustRead(t, "1 1:1 4:1\n-1 2:1\n", "te", Options{})
	if err := Align(train, test); err != nil || train.D != 4 || !slices.Equal(train.Row(0), []float64{1, 0, 0, 0}) {
		t.Errorf("train pad: %v d=%d", err, train.D)
	}
	// Declared dimensions and CSV files are not padded.
	train = mustRead(t, "1 1:1 3:1\n-1 2:1\n", "tr", Options{Dim: 3})
	test = mustRead(t, "1 1:1\n-1 2:1\n", "te", Options{})
	if err := Align(train, test); err == nil || !strings.Contains(err.Error(), "dimension mismatch: tr has 3 features but te has 2") {
		t.Errorf("got %v", err)
	}
	a := mustRead(t, "1,2,0\n3,4,1\n", "a.csv", Options{})
	b := mustRead(t, "1,0\n3,1\n", "b.csv", Options{})
	if err := Align(a, b); err == nil {
		t.Errorf("CSV mismatch accepted")
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load("testdata/no-such-file", Options{}); err == nil || !strings.HasPrefix(err.Error(), "data: ") {
		t.Errorf("got %v", err)
	}
	if _, err := Read(strings.NewReader("1,2\n"), "x", Options{Format: "libsvm", LabelColumn: "1"}); err == nil {
		t.Errorf("LabelColumn accepted for LIBSVM")
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/x.libsvm.xz"
	if err := os.WriteFile(path, xzBytes(t, "1 1:1\n-1 1:-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, err := Load(path, Options{})
	if err != nil || tab.Source != path || tab.N != 2 || math.Abs(tab.Row(1)[0]+1) > 0 {
		t.Errorf("%v %+v", err, tab)
	}
}
