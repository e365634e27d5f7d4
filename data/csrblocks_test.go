package data

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"testing"
)

// TestBlockedLIBSVMMatchesContiguous reads files of more than blockNNZ
// nonzeros, which the parser keeps in blocks, and compares every stored
// value with a forced-sparse read (one contiguous pair of arrays, no
// blocks): a dense file read dense (blocks stored dense as they close,
// then copied and dropped), one whose last records are wider than the
// dense blocks, and a file that looks dense for its first block and
// sparse overall (blocks joined back into CSR by concatBlocks).
//
// The default run uses blocks of 2¹⁴ nonzeros (the files scale with it);
// the build tag long runs the production size, 2²⁰
// (TestLongBlockedLIBSVMMatchesContiguous: 29 s under the race detector).
func TestBlockedLIBSVMMatchesContiguous(t *testing.T) { blockedLIBSVMMatchesContiguous(t, 1<<14) }

func blockedLIBSVMMatchesContiguous(t *testing.T, nnz int) {
	defer func(n int) { blockNNZ = n }(blockNNZ)
	blockNNZ = nnz
	// The files are built with strconv appends, not fmt: under the race
	// detector fmt's 6 M calls took most of this test's 29 s.
	genDense := func(b []byte, rows int) []byte {
		for i := 0; i < rows; i++ {
			b = strconv.AppendInt(b, int64(1-2*min(i%3, 1)), 10)
			for j := 1; j <= 22; j++ {
				if (i+j)%17 != 0 {
					b = append(b, ' ')
					b = strconv.AppendInt(b, int64(j), 10)
					b = append(b, ':')
					b = strconv.AppendInt(b, int64((i*j)%7-3), 10)
					b = append(b, '.')
					b = strconv.AppendInt(b, int64(i%10), 10)
				}
			}
			b = append(b, '\n')
		}
		return b
	}
	dense := genDense(nil, 2*blockNNZ/20+100)
	flip := func() []byte {
		buf := genDense(nil, blockNNZ/20+100)
		for i := 0; i < blockNNZ*3/4; i++ {
			buf = strconv.AppendInt(buf, int64(2*(i%2)-1), 10)
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, int64(1000+i%997), 10)
			buf = append(buf, ":1.5\n"...)
		}
		return buf
	}()
	// Dense blocks stored at 22 columns, then records of 30: the blocks'
	// rows are widened with zeros.
	widen := func() []byte {
		buf := slices.Clone(dense)
		for i := 0; i < 1000; i++ {
			buf = strconv.AppendInt(buf, int64(2*(i%2)-1), 10)
			for j := 1; j <= 30; j++ {
				buf = append(buf, ' ')
				buf = strconv.AppendInt(buf, int64(j), 10)
				buf = append(buf, ':')
				buf = strconv.AppendInt(buf, int64((i+j)%5+1), 10)
			}
			buf = append(buf, '\n')
		}
		return buf
	}()
	for _, tc := range []struct {
		name string
		file []byte
		rep  string // what auto must choose
	}{{"dense", dense, Dense}, {"flip", flip, Sparse}, {"widen", widen, Dense}} {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := Read(bytes.NewReader(tc.file), "ref.svm", Options{Format: FormatLIBSVM, Representation: Sparse})
			if err != nil {
				t.Fatal(err)
			}
			if len(ref.Val) <= blockNNZ {
				t.Fatalf("%d nonzeros: the file does not exercise blocks", len(ref.Val))
			}
			got, err := Read(bytes.NewReader(tc.file), "got.svm", Options{Format: FormatLIBSVM})
			if err != nil {
				t.Fatal(err)
			}
			if got.Representation != tc.rep {
				t.Fatalf("representation %s, want %s", got.Representation, tc.rep)
			}
			if !slices.Equal(got.Y, ref.Y) || got.N != ref.N || got.D != ref.D {
				t.Fatalf("labels or shape differ: %d×%d vs %d×%d", got.N, got.D, ref.N, ref.D)
			}
			if tc.rep == Sparse {
				if !slices.Equal(got.Ptr, ref.Ptr) || !slices.Equal(got.Idx, ref.Idx) || !slices.Equal(got.Val, ref.Val) {
					t.Fatal("joined blocks differ from the contiguous CSR")
				}
				return
			}
			want := make([]float64, ref.N*ref.D)
			for i := 0; i < ref.N; i++ {
				for k := ref.Ptr[i]; k < ref.Ptr[i+1]; k++ {
					want[i*ref.D+int(ref.Idx[k])] = ref.Val[k]
				}
			}
			for i, v := range got.X {
				if math.Float64bits(v) != math.Float64bits(want[i]) {
					t.Fatalf("cell %d: %v, want %v", i, v, want[i])
				}
			}
		})
	}
}
