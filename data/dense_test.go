package data

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

// The dense fixtures hold the same five records, label first ("6.0000",
// "2.0000"), written with single spaces, single tabs, and mixed runs of
// blanks with leading and trailing blanks, CRLF line ends and a blank
// line (also gzipped).
var denseWant = [][]float64{
	{-1, -0.733333, 0.5},
	{0.25, 1, -0.5},
	{0.1, 0.2, 0.3},
	{-0.1, -0.2, -0.3},
	{0, 0, 1},
}

func TestDenseFixtures(t *testing.T) {
	for _, name := range []string{"dense-spaces.txt", "dense-tabs.txt", "dense-mixed.txt", "dense-mixed.txt.gz"} {
		for _, opt := range []Options{{}, {Format: FormatDense}, {Sep: "space"}, {Format: FormatCSV, Sep: "whitespace"}} {
			tab, err := Load("testdata/"+name, opt)
			if err != nil {
				t.Fatalf("%s %+v: %v", name, opt, err)
			}
			if tab.Format != FormatDense || tab.N != 5 || tab.D != 3 {
				t.Fatalf("%s %+v: format %s, %d×%d", name, opt, tab.Format, tab.N, tab.D)
			}
			if got := dense(tab.Dataset); !slices.EqualFunc(got, denseWant, slices.Equal) {
				t.Errorf("%s: rows %v", name, got)
			}
			// Labels 6.0000 (2 records, the minority) and 2.0000.
			if !slices.Equal(tab.Classes, []string{"6.0000", "2.0000"}) || !slices.Equal(tab.Y, []float64{1, -1, 1, -1, -1}) {
				t.Errorf("%s: classes %v, y %v", name, tab.Classes, tab.Y)
			}
		}
	}
	// Each kind gzipped and xz-compressed reads the same.
	for _, name := range []string{"dense-spaces.txt", "dense-tabs.txt", "dense-mixed.txt"} {
		plain := string(readFile(t, "testdata/"+name))
		for kind, z := range map[string][]byte{"gzip": gzipBytes(t, plain), "xz": xzBytes(t, plain)} {
			tab, err := Read(bytes.NewReader(z), name, Options{})
			if err != nil || tab.Format != FormatDense || !slices.EqualFunc(dense(tab.Dataset), denseWant, slices.Equal) {
				t.Errorf("%s, %s: %v", name, kind, err)
			}
		}
	}
	// "6" selects the class spelled "6.0000"; a label column moves the label.
	tab, err := Load("testdata/dense-spaces.txt", Options{PositiveClasses: "0.5,1", LabelColumn: "4"})
	if err != nil {
		t.Fatal(err)
	}
	if tab.D != 3 || tab.Row(0)[0] != 6 || !slices.Equal(tab.Classes, []string{"0.5", "-0.5", "0.3", "-0.3", "1"}) {
		t.Errorf("label column 4: %v %v", tab.Row(0), tab.Classes)
	}
	tab, err = Load("testdata/dense-tabs.txt", Options{PositiveClasses: "2"})
	if err != nil || !slices.Equal(tab.Y, []float64{-1, 1, -1, 1, 1}) {
		t.Errorf("positive class 2 for 2.0000: %v %v", err, tab)
	}
}

func TestDenseSyntax(t *testing.T) {
	// A header of names is detected; # lines are comments.
	tab := mustRead(t, "# generated\ny a b\n1 0.5 2\n0 1 3\n", "h.txt", Options{})
	if tab.Format != FormatDense || !slices.Equal(tab.FeatureNames, []string{"a", "b"}) || tab.N != 2 {
		t.Errorf("header: %+v", tab)
	}
	// One-feature records.
	tab = mustRead(t, "1 5\n-1 6\n", "one.txt", Options{})
	if tab.Format != FormatDense || tab.D != 1 || tab.Row(1)[0] != 6 {
		t.Errorf("one feature: %+v", tab)
	}
	// Ignored columns and missing values as in CSV.
	tab = mustRead(t, "1 7 ? 2\n-1 8 4 3\n1 9 2 1\n", "m.txt", Options{IgnoreColumns: []string{"2"}, Impute: "mean"})
	if tab.D != 2 || tab.Row(0)[0] != 3 {
		t.Errorf("ignore + impute: %v", dense(tab.Dataset))
	}
	// Other separators: --sep for CSV.
	tab = mustRead(t, "1|2|a\n3|4|b\n", "p.txt", Options{Sep: "|"})
	if tab.Format != FormatCSV || tab.D != 2 {
		t.Errorf("sep |: %+v", tab)
	}
	tab = mustRead(t, "1\t\t2\tx\n3\t4\t5\ty\n", "t.tsv", Options{Format: FormatCSV, Impute: "mean"})
	if tab.D != 3 || tab.Row(0)[1] != 4 {
		t.Errorf("TSV with an empty field: %v", dense(tab.Dataset))
	}
}

func TestDenseErrors(t *testing.T) {
	in := "6.0000 -1.0000 -0.733333 0.5\n2.0000 0.25 1 -0.5\n"
	cases := []struct {
		in        string
		opt       Options
		line, col int
		msg       string
	}{
		{in, Options{Format: FormatLIBSVM}, 1, 8, `feature "-1.0000" is not index:value: this line holds blank-separated numbers without indices, which looks like a dense whitespace-separated file; read it with --format dense (or --format auto)`},
		{in, Options{Format: FormatCSV}, 1, 1, `no ',' separator in the first record: its values are separated by blanks (a dense, whitespace-separated file); read it with --format dense`},
		{in, Options{Sep: ";"}, 1, 1, `no ';' separator`},
		{"1 2 3\n4 5\n", Options{}, 2, 3, "record has 2 fields, want 3"},
		{"1 2 3\n4 x 6\n", Options{}, 2, 2, `bad feature value "x" in column 2`},
		{"1 2 NaN\n4 5 6\n", Options{}, 1, 3, `non-finite feature value "NaN"`},
		{"1 2 3\n4 5 6\n", Options{LabelColumn: "9"}, 1, 1, "label column 9 out of range (the file has 3 columns)"},
	}
	for _, c := range cases {
		_, err := Read(strings.NewReader(c.in), "d.txt", c.opt)
		checkPosErr(t, err, "d.txt", c.line, c.col, c.msg)
	}
	for _, opt := range []Options{{Sep: "ab"}, {Sep: "x"}, {Sep: "1"}, {Format: FormatLIBSVM, Sep: ","}, {Format: FormatDense, Sep: ","}, {Format: FormatARFF, Sep: "tab"}} {
		if err := opt.Validate(); err == nil || !strings.Contains(err.Error(), "sep") && !strings.Contains(err.Error(), "separat") {
			t.Errorf("%+v: %v", opt, err)
		}
	}
	if _, err := Read(strings.NewReader(in), "d.txt", Options{Format: FormatDense, Sep: ","}); err == nil || errors.As(err, new(*ParseError)) {
		t.Errorf("dense with a comma separator: %v", err)
	}
}

func TestDetectFormat(t *testing.T) {
	for in, want := range map[string]string{
		"6.0000 -1 0.5\n":    FormatDense,
		"\t6\t-1\n":          FormatDense,
		"% c\n@relation r\n": FormatARFF,
		"1 1:2\n":            FormatLIBSVM,
		"1\n-1 2:1\n":        FormatLIBSVM,
		"1,2,3\n":            FormatCSV,
		"1;2\n":              FormatCSV,
		"a b c\n1 2 3\n":     FormatDense,
		"# comment\n1 2 3\n": FormatDense,
		"1\t2,3\n":           FormatCSV,
		"1 2 3,4\n":          FormatCSV,
	} {
		if got := detectFormat([]byte(in)); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}

func TestLoadNotAFile(t *testing.T) {
	if _, err := Load("", Options{}); err == nil || !strings.Contains(err.Error(), "empty file name") {
		t.Errorf("empty path: %v", err)
	}
	if _, err := Load("testdata", Options{}); err == nil || !strings.Contains(err.Error(), "testdata is a directory") {
		t.Errorf("directory: %v", err)
	}
	_, err := Read(strings.NewReader("\xff\xfe1\x00,\x002\x00"), "u.csv", Options{})
	checkPosErr(t, err, "u.csv", 1, 1, "UTF-16 text (a byte order mark): convert the file to UTF-8")
}
