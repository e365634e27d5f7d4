package data

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Reserving the arrays from the file's size (Load of an uncompressed
// file) changes nothing in what is read: the same table as from a plain
// reader (no size known) when the lines after the first thousand are
// longer (the estimate too small), shorter or long comments (too large;
// given back after the parse), also under the smallest budget (16 MiB),
// where the comments' estimate is more than a quarter of it (skipped).
func TestLoadReserveSameTable(t *testing.T) {
	for _, tc := range []struct {
		tail  int // features per line after line 1000; -1: a comment only
		limit int64
	}{{40, 0}, {1, 0}, {-1, 0}, {-1, 16 << 20}} {
		rng := rand.New(rand.NewPCG(uint64(tc.tail+2), 3))
		var buf bytes.Buffer
		for i := range 4000 {
			nf := 40
			if i >= 1000 {
				nf = tc.tail
			}
			fmt.Fprintf(&buf, "%d", 2*rng.IntN(2)-1)
			if nf < 0 {
				buf.WriteString(" # " + strings.Repeat("x", 2000))
			}
			for j := 1; j <= nf; j++ {
				fmt.Fprintf(&buf, " %d:%.6f", j, rng.NormFloat64())
			}
			buf.WriteByte('\n')
		}
		path := filepath.Join(t.TempDir(), "f.svm")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		opt := Options{MaxMemory: tc.limit, Representation: Sparse}
		a, err := Load(path, opt)
		if err != nil {
			t.Fatalf("tail %d: Load: %v", tc.tail, err)
		}
		b, err := Read(bytes.NewReader(buf.Bytes()), path, opt)
		if err != nil {
			t.Fatalf("tail %d: Read: %v", tc.tail, err)
		}
		if !reflect.DeepEqual(a.Dataset, b.Dataset) || !reflect.DeepEqual(a.Notes, b.Notes) {
			t.Fatalf("tail %d: Load and Read differ", tc.tail)
		}
		// An overestimate is given back: no more than an eighth unused.
		if c, n := cap(a.Val), len(a.Val); c-n > n/8 {
			t.Fatalf("tail %d: %d values in an array of %d", tc.tail, n, c)
		}
	}
}
