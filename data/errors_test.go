package data

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ulikunitz/xz"
)

// malformed is a corpus of bad inputs. Each names the exact position and
// problem the error must report: Line is 1-based; Col is the byte column
// for LIBSVM and ARFF header lines, the field number for CSV and ARFF data.
var malformed = []struct {
	name      string // file name; also the test name
	in        string
	opt       Options
	line, col int
	msg       string
}{
	// LIBSVM.
	{"bad-number.libsvm", "1 1:0.5 2:abc\n", Options{}, 1, 11, `bad feature value "abc"`},
	{"german.numer", strings.Repeat("+1 1:1 2:2\n", 16) + "-1 1:abc\n", Options{Format: "libsvm"}, 17, 6, `bad feature value "abc"`},
	{"nan.libsvm", "+1 1:NaN\n", Options{}, 1, 6, `non-finite feature value "NaN"`},
	{"inf.libsvm", "1 1:1\n-1 2:-Inf\n", Options{}, 2, 6, `non-finite feature value "-Inf"`},
	{"overflow.libsvm", "1 1:1e999\n-1 1:1\n", Options{}, 1, 5, `feature value "1e999" out of range`},
	{"hex.libsvm", "1 1:0x10\n-1 1:1\n", Options{}, 1, 5, `bad feature value "0x10"`},
	{"order.libsvm", "1 3:1 2:1\n", Options{}, 1, 7, "feature index 2 after 3 (indices must be strictly increasing)"},
	{"repeat.libsvm", "-1 1:1\n1 2:1 2:1\n", Options{}, 2, 7, "feature index 2 after 2"},
	{"zero-index.libsvm", "1 1:1\n-1 0:1\n", Options{}, 2, 4, "feature index 0 (LIBSVM indices are 1-based)"},
	{"negative-index.libsvm", "1 -1:1\n", Options{Format: "libsvm"}, 1, 3, `bad feature index "-1"`},
	{"huge-index.libsvm", "1 99999999999:1\n", Options{}, 1, 3, "feature index 99999999999 too large"},
	{"dim.libsvm", "1 1:1 4:2\n", Options{Dim: 3}, 1, 7, "feature index 4 exceeds Dim 3"},
	{"no-label.libsvm", "1 1:1\n1:0.5 2:1\n", Options{Format: "libsvm"}, 2, 1, "missing label"},
	{"bad-label.libsvm", "1 1:1\nabc 1:1\n", Options{Format: "libsvm"}, 2, 1, `bad label "abc" (LIBSVM labels are numbers)`},
	{"nan-label.libsvm", "nan 1:1\n", Options{Format: "libsvm"}, 1, 1, `non-finite label "nan"`},
	{"no-value.libsvm", "1 1:1\n-1 2:\n", Options{}, 2, 6, "missing value for feature 2"},
	{"no-colon.libsvm", "1 1:1 7\n", Options{}, 1, 7, `feature "7" is not index:value`},
	{"qid.libsvm", "1 qid:3 1:1\n", Options{}, 1, 3, "qid (ranking data) is not supported"},
	{"multiclass.libsvm", "1 1:1\n2 1:1\n# comment\n3 1:2\n", Options{}, 4, 1,
		"3 classes found (1: 1, 2: 1, 3: 1); choose the positive ones with --positive-classes"},
	{"one-class.libsvm", "\n1 1:1\n1 1:2\n", Options{}, 2, 1, "only one class present (label 1, 2 records)"},
	{"no-features.libsvm", "1\n-1\n", Options{Format: "libsvm"}, 1, 1, "no feature columns (no feature index occurs; declare Dim)"},

	// CSV.
	{"bad-number.csv", "1,2,0\n3,abc,1\n", Options{}, 2, 2, `bad feature value "abc" in column 2`},
	{"nan.csv", "1,NaN,0\n2,3,1\n", Options{}, 1, 2, `non-finite feature value "NaN" in column 2`},
	{"inf.csv", "1,2,0\n1,+Inf,1\n", Options{}, 2, 2, `non-finite feature value "+Inf" in column 2`},
	{"missing.csv", "1,?,0\n1,2,1\n", Options{}, 1, 2, "missing value in column 2 (use --impute constant:V or schema, which keep a run private, or mean|drop, which do not)"},
	{"empty-field.csv", "a,b,y\n1,2,0\n1,,1\n", Options{}, 3, 2, `missing value in column 2 "b" (use --impute constant:V or schema, which keep a run private, or mean|drop, which do not)`},
	{"missing-label.csv", "1,2,0\n1,2,?\n", Options{Impute: "mean"}, 2, 3, "missing label in column 3"},
	{"all-missing.csv", "1,?,0\n2,?,1\n", Options{Impute: "mean"}, 1, 2, "column 2 has only missing values"},
	{"ragged-long.csv", "1,2,0\n1,2,3,1\n", Options{}, 2, 4, "record has 4 fields, want 3"},
	{"ragged-short.csv", "1,2,0\n\n1,1\n", Options{}, 3, 3, "record has 2 fields, want 3"},
	{"unknown-label.csv", "a,b,y\n1,2,0\n", Options{LabelColumn: "target"}, 1, 1, `label column "target" not found (columns: a, b, y)`},
	{"label-range.csv", "1,2,0\n", Options{LabelColumn: "7"}, 1, 1, "label column 7 out of range (the file has 3 columns)"},
	{"label-name-no-header.csv", "1,2,0\n3,4,1\n", Options{Header: "no", LabelColumn: "y"}, 1, 1, `label column "y" is a name but the file has no header`},
	{"ignore-label.csv", "1,2,0\n3,4,1\n", Options{IgnoreColumns: []string{"3"}}, 1, 1, "column 3 is both the label and ignored"},
	{"multiclass.csv", "1,0\n2,1\n3,2\n", Options{}, 3, 2, "3 classes found (0: 1, 1: 1, 2: 1)"},
	{"one-class.csv", "x,y\n1,1\n2,1\n", Options{}, 2, 2, "only one class present (label 1, 2 records)"},
	{"all-negative.csv", "1,a\n2,b\n", Options{PositiveClasses: "c"}, 1, 2, `positive class "c" matches none of the 2 records' labels (a: 1, b: 1)`},
	{"empty.csv", "", Options{}, 1, 1, "no records"},
	{"blank.csv", "\n \n", Options{}, 2, 1, "no records"},
	{"header-only.csv", "a,b,label\n", Options{}, 1, 1, "no records"},
	{"all-dropped.csv", "1,?,0\n", Options{Impute: "drop"}, 1, 1, "no records left after dropping 1 with missing values"},
	{"unterminated.csv", "1,2,0\n1,\"abc\n", Options{}, 2, 2, "unterminated quoted field"},
	{"after-quote.csv", "1,\"2\"x,0\n", Options{Format: "csv"}, 1, 2, "text after the closing quote"},
	{"dim.csv", "1,2,0\n3,4,1\n", Options{Dim: 3}, 1, 1, "file has 2 feature columns, but Dim is 3"},

	// ARFF.
	{"nominal.arff", "@relation r\n@attribute color {red,blue}\n@attribute x numeric\n@attribute class {0,1}\n@data\nred,1,0\n",
		Options{}, 2, 18, `attribute "color" has type nominal {red,blue}; only numeric features are read as such (declare it categorical in a --feature-bounds schema ({"name": "color", "categories": ["red", "blue"]}`},
	{"string.arff", "% c\n@relation r\n@attribute name string\n@attribute x real\n@attribute class {0,1}\n@data\n",
		Options{}, 3, 17, `attribute "name" has type string`},
	{"unknown-type.arff", "@relation r\n@attribute x float\n@data\n", Options{}, 2, 14, `attribute "x" has unknown type "float"`},
	{"no-data.arff", "@relation r\n@attribute x numeric\n@attribute class {0,1}\n", Options{}, 3, 1, "no @data section"},
	{"no-attributes.arff", "@relation r\n@data\n1,2\n", Options{}, 2, 1, "no @attribute declarations"},
	{"bad-value.arff", "@relation r\n@attribute x numeric\n@attribute y numeric\n@attribute class {0,1}\n@data\n1,2,0\n% c\n1,x,1\n",
		Options{}, 8, 2, `bad feature value "x" in column 2 "y"`},
	{"missing.arff", "@relation r\n@attribute x numeric\n@attribute class {0,1}\n@data\n1,0\n?,1\n", Options{}, 6, 1, "missing value in column 1"},
	{"ragged.arff", "@relation r\n@attribute x numeric\n@attribute class {0,1}\n@data\n1,0\n1,1,1\n", Options{}, 6, 3, "record has 3 fields, want 2"},
	{"undeclared.arff", "@relation r\n@attribute x numeric\n@attribute Class {0,1}\n@data\n1,0\n2,2\n", Options{}, 6, 2, `label "2" is not a declared value of "Class" {0,1}`},
	{"sparse.arff", "@relation r\n@attribute x numeric\n@attribute class {0,1}\n@data\n{0 1, 1 0}\n", Options{}, 5, 1, "sparse ARFF rows"},
	{"junk.arff", "@relation r\nhello\n@data\n", Options{Format: "arff"}, 2, 1, `unexpected text before @data: "hello"`},
	{"binary.csv", "1,2,1\n3,4\x00,0\n", Options{}, 2, 4, "binary content (a NUL byte)"},
	{"archive.zip", "PK\x03\x04\x14\x00", Options{Format: "csv"}, 1, 6, "not a LIBSVM, CSV or ARFF text file"},
	{"label.arff", "@relation r\n@attribute x numeric\n@attribute class {0,1}\n@data\n1,0\n", Options{LabelColumn: "klass"}, 4, 1, `label column "klass" not found`},

	// Line endings and encodings (issue 28, finding 7).
	{"lone-cr.csv", "a,b,y\n1,2,0\r3,4,1\n5,6,0\n", Options{}, 2, 6, "a carriage return (CR) inside the line: the file mixes line endings"},
	{"cr-then-lf.libsvm", "+1 1:1\r-1 1:2\r\n+1 1:3\n", Options{}, 1, 7, "convert every line ending to LF, e.g. perl -pi -e"},
	{"latin1.csv", "a,b,y\n1,2,B\xe9nin\n3,4,no\n", Options{}, 2, 3, `label "B\xe9nin" is not UTF-8 text (byte 0xe9: Latin-1 or Windows-1252?); convert the file to UTF-8, e.g. iconv -f latin1 -t utf-8`},
	{"mixed-encodings.csv", "a,b,y\n1,2,B\xc3\xa9nin\n3,4,no\n5,6,B\xe9nin\n", Options{}, 4, 3,
		`label "B\xe9nin" is not UTF-8 text (byte 0xe9: Latin-1 or Windows-1252?); line 2 has the label "Bénin" in UTF-8, so the file mixes encodings; convert its Latin-1 lines to UTF-8`},
	{"latin1-label.libsvm", "+1 1:1\n\xb11 1:2\n", Options{Format: "libsvm"}, 2, 1, `label "\xb11" is not UTF-8 text`},
}

func TestMalformed(t *testing.T) {
	for _, c := range malformed {
		t.Run(c.name, func(t *testing.T) {
			tab, err := Read(strings.NewReader(c.in), c.name, c.opt)
			if err == nil {
				t.Fatalf("no error; loaded %d×%d", tab.N, tab.D)
			}
			checkPosErr(t, err, c.name, c.line, c.col, c.msg)
		})
	}
}

// checkPosErr asserts that err is a *ParseError at file:line:col whose
// message contains msg.
func checkPosErr(t *testing.T, err error, file string, line, col int, msg string) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %q is not a *ParseError", err)
	}
	prefix := fmt.Sprintf("data: %s:%d:%d: ", file, line, col)
	if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), msg) {
		t.Errorf("error\n\t%s\nwant\n\t%s…%s…", err, prefix, msg)
	}
}

func gzipBytes(t testing.TB, s string) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := io.WriteString(w, s); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func xzBytes(t testing.TB, s string) []byte {
	var buf bytes.Buffer
	w, err := xz.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(w, s); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestMalformedCompressed(t *testing.T) {
	var sb strings.Builder
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&sb, "%d 1:%d 2:0.5\n", 2*(i%2)-1, i)
	}
	text := sb.String()

	t.Run("truncated gzip", func(t *testing.T) {
		z := gzipBytes(t, text)
		_, err := Read(bytes.NewReader(z[:len(z)/2]), "cut.gz", Options{})
		var pe *ParseError
		if !errors.As(err, &pe) || !errors.Is(err, io.ErrUnexpectedEOF) ||
			!strings.Contains(err.Error(), "corrupt or truncated gzip stream") {
			t.Fatalf("got %v", err)
		}
		// The error is at the line where the stream broke off, after
		// the bytes of that line that were read.
		if pe.Line < 2 || pe.Line > 20000 || pe.Col < 1 {
			t.Errorf("position %d:%d", pe.Line, pe.Col)
		}
		checkPosErr(t, err, "cut.gz", pe.Line, pe.Col, "unexpected EOF")
	})
	t.Run("truncated gzip header", func(t *testing.T) {
		z := gzipBytes(t, text)
		_, err := Read(bytes.NewReader(z[:5]), "head.gz", Options{})
		checkPosErr(t, err, "head.gz", 1, 1, "corrupt or truncated gzip stream")
	})
	t.Run("corrupt gzip", func(t *testing.T) {
		z := gzipBytes(t, text)
		for i := 20; i < 40; i++ {
			z[i] ^= 0x55
		}
		_, err := Read(bytes.NewReader(z), "bad.gz", Options{})
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "corrupt or truncated gzip stream") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("truncated xz", func(t *testing.T) {
		z := xzBytes(t, text)
		_, err := Read(bytes.NewReader(z[:len(z)/2]), "cut.xz", Options{})
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "corrupt or truncated xz stream") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("truncated bzip2", func(t *testing.T) {
		z := readFile(t, "testdata/tiny.libsvm.bz2")
		_, err := Read(bytes.NewReader(z[:len(z)-10]), "cut.bz2", Options{})
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "corrupt or truncated bzip2 stream") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("oversized decompression", func(t *testing.T) {
		// "1 1:1\n" is 6 bytes, so byte 1000 falls after "1 1:" on line 167.
		z := gzipBytes(t, strings.Repeat("1 1:1\n", 1<<20))
		_, err := Read(bytes.NewReader(z), "bomb.gz", Options{MaxBytes: 1000})
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("got %v, want ErrTooLarge", err)
		}
		checkPosErr(t, err, "bomb.gz", 167, 5, "input exceeds MaxBytes (1000 bytes after decompression)")
	})
	t.Run("oversized plain", func(t *testing.T) {
		_, err := Read(strings.NewReader(text), "big.libsvm", Options{MaxBytes: 100})
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("got %v, want ErrTooLarge", err)
		}
	})
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOptionsValidate(t *testing.T) {
	bad := []Options{
		{Format: "json"},
		{Header: "maybe"},
		{Binarize: "thirds"},
		{Impute: "median"},
		{Representation: "coo"},
		{Dim: -1},
		{MaxBytes: -5},
		{PositiveClasses: "1", Binarize: "halves"},
		{PositiveClasses: "1,,2"},
		{PositiveClasses: "5-2"},
		{LabelColumn: "0"},
		{IgnoreColumns: []string{""}},
	}
	for _, o := range bad {
		if err := o.Validate(); err == nil || !strings.HasPrefix(err.Error(), "data: ") {
			t.Errorf("%+v: got %v", o, err)
		}
		if _, err := Read(strings.NewReader("1 1:1\n-1 1:2\n"), "x", o); err == nil {
			t.Errorf("%+v: Read accepted invalid options", o)
		}
	}
	if err := (&Options{}).Validate(); err != nil {
		t.Errorf("zero options: %v", err)
	}
}

// The read-ahead goroutine under a decompressor ends with Read, whether the
// file parses or breaks off (a parse error mid-file, a truncated stream),
// and its bytes are the stream's.
func TestReadAheadEnds(t *testing.T) {
	base := runtime.NumGoroutine()
	good := strings.Repeat("1 1:1 2:0.5\n-1 1:0.25\n", 40000) // > 3 buffers
	for name, z := range map[string][]byte{
		"good.gz":  gzipBytes(t, good),
		"bad.gz":   gzipBytes(t, good+"1 1:x\n"+good),
		"cut.bz2":  readFile(t, "testdata/tiny.libsvm.bz2")[:40],
		"early.gz": gzipBytes(t, "1 1:x\n"+good),
	} {
		tab, err := Read(bytes.NewReader(z), name, Options{})
		if (err == nil) != (name == "good.gz") {
			t.Fatalf("%s: err %v", name, err)
		}
		if err == nil && tab.N != 80000 {
			t.Fatalf("%s: %d records", name, tab.N)
		}
	}
	for k := 0; runtime.NumGoroutine() > base; k++ {
		if k == 100 {
			t.Fatalf("%d goroutines left running (%d before)", runtime.NumGoroutine(), base)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCROnlyLineEndings: a file whose lines end in CR alone (classic Mac
// OS) reads as the same file with LF endings, plain or compressed, with
// a note saying so. (A CR within a line of a file with LF endings is an
// error: see lone-cr.csv in malformed.)
func TestCROnlyLineEndings(t *testing.T) {
	for _, c := range []struct{ name, lf string }{
		{"cr.csv", "a,b,label\n1,2,yes\n3,4,no\n5,6,yes\n7,8,no\n"},
		{"cr.libsvm", "+1 1:0.5 2:1\n-1 1:0.2\n\n+1 2:0.3\n-1 1:1\n"},
		{"cr.arff", "@relation r\n@attribute x numeric\n@attribute class {0,1}\n@data\n1,0\n2,1\n"},
	} {
		want, err := Read(strings.NewReader(c.lf), c.name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		cr := strings.ReplaceAll(c.lf, "\n", "\r")
		for _, in := range []struct {
			name string
			b    []byte
		}{{c.name, []byte(cr)}, {c.name + ".gz", gzipBytes(t, cr)}} {
			got, err := Read(bytes.NewReader(in.b), c.name, Options{})
			if err != nil {
				t.Fatalf("%s: %v", in.name, err)
			}
			if got.N != want.N || got.D != want.D || fmt.Sprint(got.Dataset) != fmt.Sprint(want.Dataset) {
				t.Errorf("%s: read %d×%d %v, want %d×%d %v", in.name, got.N, got.D, got.Dataset, want.N, want.D, want.Dataset)
			}
			if !strings.Contains(strings.Join(got.Notes, "; "), "line endings: CR alone (classic Mac OS), read as line breaks") {
				t.Errorf("%s: notes %q do not name the CR line endings", in.name, got.Notes)
			}
		}
		if strings.Contains(strings.Join(want.Notes, "; "), "CR alone") {
			t.Errorf("%s with LF endings noted as CR: %q", c.name, want.Notes)
		}
	}
}
