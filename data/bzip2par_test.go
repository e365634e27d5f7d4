package data

import (
	"bytes"
	"compress/bzip2"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
)

// serialBzip2 is the reference: compress/bzip2 over the whole input.
func serialBzip2(in []byte) ([]byte, error) {
	return io.ReadAll(bzip2.NewReader(bytes.NewReader(in)))
}

// parallelBzip2 decodes in with the parallel reader on w workers; split,
// when set, may cut a block piece in two (a block magic found by chance
// inside a block).
func parallelBzip2(in []byte, w int, split func(*bzPiece) []*bzPiece) ([]byte, error) {
	s := &bzScanner{r: bytes.NewReader(in)}
	next := s.next
	if split != nil {
		var queue []*bzPiece
		next = func() *bzPiece {
			if len(queue) == 0 {
				p := s.next()
				if p.end || p.final {
					return p
				}
				queue = split(p)
			}
			p := queue[0]
			queue = queue[1:]
			return p
		}
	}
	z := newBzParallelFrom(next, w)
	defer z.stop()
	return io.ReadAll(z)
}

// splitAt cuts p after n bits (0 < n < p.n).
func splitAt(p *bzPiece, n int64) []*bzPiece {
	bit := int64(p.start) + n
	q := &bzPiece{level: p.level, b: p.b[bit/8:], start: uint(bit % 8), n: p.n - n}
	return []*bzPiece{{level: p.level, b: p.b, start: p.start, n: n}, q}
}

func multiblock(t *testing.T) []byte {
	t.Helper()
	return readFile(t, "testdata/multiblock.libsvm.bz2") // bzip2 -1: three blocks
}

// The parallel reader gives the serial decoder's bytes on one block, on
// several blocks, on concatenated streams and on an empty stream, for 1
// to 4 workers.
func TestBzip2ParallelMatchesSerial(t *testing.T) {
	tiny := readFile(t, "testdata/tiny.libsvm.bz2")
	multi := multiblock(t)
	empty := []byte{'B', 'Z', 'h', '9', 0x17, 0x72, 0x45, 0x38, 0x50, 0x90, 0, 0, 0, 0}
	for name, in := range map[string][]byte{
		"one block":         tiny,
		"three blocks":      multi,
		"two streams":       append(append([]byte(nil), multi...), tiny...),
		"empty stream":      empty,
		"empty then blocks": append(append([]byte(nil), empty...), multi...),
	} {
		want, err := serialBzip2(in)
		if err != nil {
			t.Fatalf("%s: serial: %v", name, err)
		}
		for w := 1; w <= 4; w++ {
			got, err := parallelBzip2(in, w, nil)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s, %d workers: %d bytes, %v; want the serial %d bytes", name, w, len(got), err, len(want))
			}
		}
	}
	if n := bytes.Count(mustSerial(t, multi), []byte{'\n'}); n < 1000 {
		t.Fatalf("multiblock test file has %d lines", n)
	}
}

func mustSerial(t *testing.T, in []byte) []byte {
	out, err := serialBzip2(in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A block magic found by chance inside a block cuts it into a truncated
// piece and a false one; the reader joins them back, whatever the cut.
func TestBzip2ParallelJoinsFalseBoundaries(t *testing.T) {
	multi := multiblock(t)
	want := mustSerial(t, multi)
	for _, frac := range []float64{0.001, 0.3, 0.5, 0.97} {
		cuts := 0
		got, err := parallelBzip2(multi, 2, func(p *bzPiece) []*bzPiece {
			cuts++
			n := max(int64(frac*float64(p.n)), 1)
			if cuts == 2 { // the middle block: in three
				parts := splitAt(p, n)
				return append(parts[:1], splitAt(parts[1], max(parts[1].n/2, 1))...)
			}
			return splitAt(p, n)
		})
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("cut at %.3f: %d bytes, %v; want %d", frac, len(got), err, len(want))
		}
		if cuts != 3 {
			t.Errorf("cut at %.3f: the scanner found %d blocks, want 3", frac, cuts)
		}
	}
}

// Truncated, corrupted and trailing input is an error, as for the serial
// decoder, never a silent short or wrong output.
func TestBzip2ParallelErrors(t *testing.T) {
	multi := multiblock(t)
	want := mustSerial(t, multi)
	corrupt := append([]byte(nil), multi...)
	corrupt[len(corrupt)/2] ^= 0x5a
	badCRC := append([]byte(nil), multi...)
	// The combined CRC is the 32 bits after the end-of-stream magic, which
	// ends 32 bits + padding before the end: flip a bit of the last byte
	// that holds it.
	badCRC[len(badCRC)-2] ^= 0x01
	for name, in := range map[string][]byte{
		"truncated in a block":     multi[:len(multi)/2],
		"truncated before the end": multi[:len(multi)-8],
		"truncated in the CRC":     multi[:len(multi)-2],
		"corrupt block":            corrupt,
		"combined CRC":             badCRC,
		"trailing garbage":         append(append([]byte(nil), multi...), "garbage"...),
	} {
		if _, err := serialBzip2(in); err == nil {
			t.Fatalf("%s: the serial decoder accepts it", name)
		}
		got, err := parallelBzip2(in, 2, nil)
		if err == nil {
			t.Errorf("%s: accepted (%d bytes)", name, len(got))
			continue
		}
		if errors.Is(err, errBzCanceled) {
			t.Errorf("%s: internal error leaked: %v", name, err)
		}
		if !bytes.HasPrefix(want, got) && name != "corrupt block" {
			t.Errorf("%s: %d bytes of output are not a prefix of the file's", name, len(got))
		}
	}
}

// Through the loader: a bzip2 file is read alike on one core and on
// several (parallel decoding), and a truncated one is refused with the
// loader's message.
func TestBzip2ParallelLoader(t *testing.T) {
	multi := multiblock(t)
	a, err := Read(bytes.NewReader(multi), "multi.bz2", Options{})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Read(bytes.NewReader(mustSerial(t, multi)), "multi", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.N != plain.N || a.D != plain.D || !slices.Equal(a.Y, plain.Y) {
		t.Fatalf("bzip2 %d×%d, plain %d×%d (or the labels differ)", a.N, a.D, plain.N, plain.D)
	}
	_, err = Read(bytes.NewReader(multi[:len(multi)/2]), "cut.bz2", Options{})
	if err == nil || !strings.Contains(err.Error(), "corrupt or truncated bzip2 stream") {
		t.Errorf("truncated: %v", err)
	}
}

// FuzzBzip2Parallel: on any input the parallel reader fails exactly when
// the serial decoder does, and otherwise gives its bytes.
func FuzzBzip2Parallel(f *testing.F) {
	for _, p := range []string{"testdata/tiny.libsvm.bz2", "testdata/multiblock.libsvm.bz2"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
			f.Add(b[:len(b)/2])
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 1<<20 || !bytes.HasPrefix(in, []byte("BZh")) {
			return
		}
		want, werr := serialBzip2(in)
		if len(want) > 64<<20 {
			return
		}
		got, err := parallelBzip2(in, 2, nil)
		if (err == nil) != (werr == nil) {
			t.Fatalf("serial error %v, parallel error %v", werr, err)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("parallel %d bytes, serial %d", len(got), len(want))
		}
	})
}

// stuckReader returns its bytes, then no byte and no error for ever.
type stuckReader struct{ b []byte }

func (r *stuckReader) Read(p []byte) (int, error) {
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// A source that stops making progress ends the read with an error
// instead of spinning the scanner for ever.
func TestBzip2ParallelNoProgress(t *testing.T) {
	in := multiblock(t)
	z := newBzParallel(&stuckReader{b: in[:len(in)/2]}, 2)
	defer z.stop()
	if _, err := io.ReadAll(z); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("stuck source: %v, want io.ErrNoProgress", err)
	}
}
