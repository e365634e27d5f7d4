package data

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"
)

// repeatReader yields prefix, then line over and over, up to n bytes.
type repeatReader struct {
	prefix, line []byte
	n, off       int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.off >= r.n {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.n-r.off)]
	k := 0
	for k < len(p) {
		var src []byte
		if r.off < int64(len(r.prefix)) {
			src = r.prefix[r.off:]
		} else {
			src = r.line[(r.off-int64(len(r.prefix)))%int64(len(r.line)):]
		}
		c := copy(p[k:], src)
		k += c
		r.off += int64(c)
	}
	return k, nil
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// readBudget reads r with a memory budget of limit bytes, requires
// ErrMemory (or, with tooLarge, ErrTooLarge) and an error that says msg,
// and returns what the read allocated in total.
func readBudget(t *testing.T, r io.Reader, limit int64, opt Options, tooLarge bool, msg ...string) uint64 {
	t.Helper()
	opt.MaxMemory = limit
	var err error
	n := allocated(func() { _, err = Read(r, "big", opt) })
	want := ErrMemory
	if tooLarge {
		want = ErrTooLarge
	}
	if !errors.Is(err, want) || !errors.As(err, new(*ParseError)) {
		t.Fatalf("got %v, want %v", err, want)
	}
	for _, m := range msg {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("error %q does not say %q", err, m)
		}
	}
	return n
}

func TestMemoryBudget(t *testing.T) {
	const limit = 32 << 20
	// Every accepted allocation is charged, and growth never passes the
	// limit; the garbage of earlier, smaller backing arrays adds at most
	// as much again, plus the reader's buffers. So a refused read has
	// allocated at most 2×limit + slack.
	const ceiling = 2*limit + 16<<20
	cases := []struct {
		name     string
		r        func() io.Reader
		opt      Options
		tooLarge bool
		msg      []string
	}{
		{"huge LIBSVM index, 19 bytes", func() io.Reader { return strings.NewReader("1 2147483647:1\n-1 1:1\n") }, Options{}, false,
			[]string{"big:1:3:", "feature index 2147483647: training over 2147483647 features needs at least 16 vectors", "256 GiB", "over the memory limit of 32 MiB", "--max-memory", "--dim"}},
		{"huge LIBSVM index on line 3", func() io.Reader { return strings.NewReader("1 1:1\n-1 2:1\n1 1:1 300000:2\n") }, Options{}, false,
			[]string{"big:3:7:", "feature index 300000"}},
		{"endless LIBSVM records", func() io.Reader {
			return &repeatReader{line: []byte("1 1:0.5 2:0.25 3:1 4:2 5:3 6:4 7:5 8:6\n-1 1:1 2:2 3:3 4:4 5:5 6:6 7:7 8:8\n"), n: 1 << 40}
		}, Options{}, false, []string{"memory for the ", "needed", "over the memory limit of 32 MiB"}},
		{"endless CSV records", func() io.Reader { return &repeatReader{line: []byte("1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n"), n: 1 << 40} }, Options{}, false,
			[]string{"the records (", "of 15 features)", "over the memory limit"}},
		{"endless dense records", func() io.Reader { return &repeatReader{line: []byte("0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1\n"), n: 1 << 40} }, Options{}, false,
			[]string{"the records (", "over the memory limit"}},
		{"one CSV line of 4M columns", func() io.Reader { return &repeatReader{line: []byte("0,"), n: 8 << 20} }, Options{}, false,
			[]string{"over the memory limit"}},
		{"one dense line of 4M columns", func() io.Reader { return &repeatReader{line: []byte("0 "), n: 8 << 20} }, Options{}, false,
			[]string{"over the memory limit"}},
		{"a line of 40 MiB", func() io.Reader { return &repeatReader{line: []byte("x"), n: 40 << 20} }, Options{Format: FormatCSV}, false,
			[]string{"big:1:1:", "a line over", "over the memory limit"}},
		{"a million distinct labels", func() io.Reader {
			var b bytes.Buffer
			for i := 0; b.Len() < 60<<20; i++ {
				b.WriteString("label-")
				b.WriteString(strings.Repeat("x", 40))
				b.WriteString(string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26)) + string(rune('a'+i/17576%26)) + string(rune('a'+i/456976%26)))
				b.WriteString(",1\n")
			}
			return &b
		}, Options{LabelColumn: "1"}, false, []string{"label ", "distinct so far", "over the memory limit"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := readBudget(t, c.r(), limit, c.opt, c.tooLarge, c.msg...)
			if n > ceiling {
				t.Errorf("allocated %s, over %s", FormatSize(int64(n)), FormatSize(ceiling))
			}
			t.Logf("allocated %s in all", FormatSize(int64(n)))
		})
	}
}

// TestMemoryBudgetBlankLines: text beyond the budget that holds no
// record (blank lines) is refused at MaxBytes, with the flag to raise it.
// At the smallest limit the CLI accepts, 16 MiB, not TestMemoryBudget's 32:
// the parser's cost per blank line is the whole cost, and 33 M of them took
// 12 s under the race detector.
func TestMemoryBudgetBlankLines(t *testing.T) {
	const limit = 16 << 20
	r := &repeatReader{prefix: []byte("1 1:1\n-1 1:2\n"), line: []byte("\n"), n: 1 << 40}
	n := readBudget(t, r, limit, Options{}, true, "input exceeds MaxBytes (16777216 bytes after decompression)", "--max-memory")
	if ceiling := uint64(2*limit + 16<<20); n > ceiling {
		t.Errorf("allocated %s, over %s", FormatSize(int64(n)), FormatSize(int64(ceiling)))
	}
}

func TestMemoryBudgetCompressed(t *testing.T) {
	const limit = 32 << 20
	// A gzip bomb: 256 MiB of records in 252 copies of one gzip member
	// holding 16384 copies of the 65-byte line pair (1040 KiB; the reader
	// sees one stream of lines: compress/gzip reads concatenated members
	// as one). One member compressed instead of 256 MiB: under -race
	// that compression alone took about a minute.
	line := []byte("1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1\n-1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1\n")
	var m bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&m, gzip.BestCompression)
	zw.Write(bytes.Repeat(line, 16384))
	zw.Close()
	z := bytes.NewBuffer(bytes.Repeat(m.Bytes(), 252))
	if n := readBudget(t, bytes.NewReader(z.Bytes()), limit, Options{}, false, "over the memory limit of 32 MiB"); n > 2*limit+16<<20 {
		t.Errorf("gzip bomb: allocated %s", FormatSize(int64(n)))
	}
	// An xz stream that declares a 64 MiB dictionary.
	var x bytes.Buffer
	xw, err := xz.WriterConfig{DictCap: 64 << 20}.NewWriter(&x)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(xw, "1 1:1\n-1 1:2\n")
	xw.Close()
	if d := xzDictCap(x.Bytes()); d != 64<<20 {
		t.Errorf("xzDictCap = %d", d)
	}
	readBudget(t, bytes.NewReader(x.Bytes()), limit, Options{}, false, "big:1:1:", "memory for the xz dictionary the file declares: 32 MiB more needed")
	if tab, err := Read(bytes.NewReader(x.Bytes()), "x", Options{MaxMemory: 128 << 20}); err != nil || tab.N != 2 {
		t.Errorf("xz under a 128 MiB budget: %v", err)
	}
}

func TestMemoryBudgetFits(t *testing.T) {
	// A file that fits is read whole, whatever its representation, and
	// the same file is refused under a smaller budget.
	var b bytes.Buffer
	for i := 0; i < 20000; i++ {
		b.WriteString("1 0.5 0.25 1 2 3 4 5 6\n-1 1 2 3 4 5 6 7 8\n")
	}
	tab, err := Read(bytes.NewReader(b.Bytes()), "fits", Options{MaxMemory: 16 << 20})
	if err != nil || tab.N != 40000 || tab.D != 8 {
		t.Fatalf("%v", err)
	}
	if _, err := Read(bytes.NewReader(b.Bytes()), "sparse", Options{MaxMemory: 32 << 20, Sep: "space", Representation: Sparse}); err != nil {
		t.Fatalf("sparse: %v", err)
	}
	if _, err := Read(bytes.NewReader(b.Bytes()), "small", Options{MaxMemory: 16 << 20, Representation: Sparse}); !errors.Is(err, ErrMemory) {
		t.Fatalf("sparse copy under 16 MiB: %v", err)
	}
	opt := Options{MaxMemory: 10 << 20}
	if err := opt.Validate(); err == nil || !strings.Contains(err.Error(), "below 16 MiB") {
		t.Errorf("10 MiB budget: %v", err)
	}
	opt = Options{MaxMemory: 1 << 30, Dim: 1 << 30}
	if err := opt.Validate(); err == nil || !strings.Contains(err.Error(), "Dim 1073741824") || !strings.Contains(err.Error(), "8388608 features fit") {
		t.Errorf("Dim over the budget: %v", err)
	}
	if MaxDim(1<<30) != 1<<23 {
		t.Errorf("MaxDim(1 GiB) = %d", MaxDim(1<<30))
	}
	if d := DefaultMaxMemory(); d <= 0 || d > DefaultMaxMemoryCap {
		t.Errorf("DefaultMaxMemory() = %d", d)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"512MiB": 512 << 20, "4G": 4 << 30, "4 GiB": 4 << 30, "1.5gib": 3 << 29, "1073741824": 1 << 30, "64k": 64 << 10, "2TB": 2 << 40, "100b": 100,
	} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "abc", "-1G", "4X", "NaN", "1e400", "G"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
	for n, want := range map[int64]string{512: "512 B", 4 << 30: "4 GiB", 3 << 19: "1.5 MiB", 256 << 30: "256 GiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCheckMatrixDim(t *testing.T) {
	// 8 matrices of 4096² float64 are exactly 1 GiB.
	if err := CheckMatrixDim(4096, 1<<30); err != nil {
		t.Errorf("4096 features in 1 GiB: %v", err)
	}
	err := CheckMatrixDim(4097, 1<<30)
	if !errors.Is(err, ErrMemory) || !strings.Contains(err.Error(), "at most 4096 features fit") {
		t.Errorf("4097 features in 1 GiB: %v", err)
	}
}

// TestGrowSliceTransient: while an array grows, the old and the new one
// together stay within 1.25 × the limit (transientShare), and the array
// still grows to at least 3/4 of the limit before it is refused.
func TestGrowSliceTransient(t *testing.T) {
	const limit = 1 << 20
	m := &budget{limit: limit, file: "f"}
	var s []float64
	for {
		old := int64(cap(s)) * 8
		if err := push(m, &s, 1, "test"); err != nil {
			break
		}
		if c := int64(cap(s)) * 8; c != old {
			if m.used > limit || m.used+old > limit+limit/transientShare {
				t.Fatalf("grew %d → %d bytes with %d in use: over %d (or %d while copying)", old, c, m.used, limit, limit+limit/transientShare)
			}
		}
	}
	if got := int64(len(s)) * 8; got < 3*limit/4-16 {
		t.Errorf("refused at %d bytes, want ≥ 3/4 of %d", got, limit)
	}
}
