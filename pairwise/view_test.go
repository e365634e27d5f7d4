package pairwise

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// viewCases are a dense and a sparse dataset with both classes.
func viewCases() map[string]*Dataset {
	return map[string]*Dataset{
		"dense":  toyAUC(200, 7, 2, 3),
		"sparse": shapedAUC(200, 40, 5, 0.3, 4),
	}
}

// copyRows is the reference a view must match: every record rebuilt from
// its dense row, in order, by the plain accessors.
func copyRows(s *Dataset, idx []int) (x [][]float64, y []float64) {
	for _, i := range idx {
		x = append(x, s.DenseRowTo(make([]float64, s.D), i))
		y = append(y, s.Y[i])
	}
	return x, y
}

func checkRows(t *testing.T, name string, got *Dataset, src *Dataset, idx []int) {
	t.Helper()
	if err := got.Validate(); err != nil && len(idx) > 0 {
		t.Fatalf("%s: gathered dataset invalid: %v", name, err)
	}
	if got.N != len(idx) || got.D != src.D || got.IsSparse() != src.IsSparse() {
		t.Fatalf("%s: gathered shape n=%d d=%d sparse=%v, want n=%d d=%d sparse=%v", name, got.N, got.D, got.IsSparse(), len(idx), src.D, src.IsSparse())
	}
	x, y := copyRows(src, idx)
	for k := range idx {
		if got.Y[k] != y[k] {
			t.Fatalf("%s: record %d label %v, want %v", name, k, got.Y[k], y[k])
		}
		if row := got.DenseRowTo(make([]float64, got.D), k); !slices.Equal(row, x[k]) {
			t.Fatalf("%s: record %d = %v, want row %d = %v", name, k, row, idx[k], x[k])
		}
		if got.IsSparse() { // the same stored entries, not only the same dense row
			gi, gv := got.SparseRow(k)
			si, sv := src.SparseRow(idx[k])
			if !slices.Equal(gi, si) || !slices.Equal(gv, sv) {
				t.Fatalf("%s: record %d stores %v %v, want %v %v", name, k, gi, gv, si, sv)
			}
		}
	}
}

// TestViewGatherSameRows: a view's gathered records are the indexed
// records of the source, in the view's order, repeats and the empty view
// included; GatherTo reusing a larger buffer gives the same records in the
// same storage.
func TestViewGatherSameRows(t *testing.T) {
	for name, s := range viewCases() {
		rng := rand.New(rand.NewPCG(9, 9))
		big := rng.Perm(s.N)[:150]
		small := []int{5, 3, 3, 199, 0}
		for _, idx := range [][]int{big, small, {}, nil} {
			checkRows(t, name, s.View(idx).Gather(), s, idx)
			checkRows(t, name+" Subset", s.Subset(idx), s, idx)
		}
		all := make([]int, s.N)
		for i := range all {
			all[i] = i
		}
		checkRows(t, name+" All", s.All().Gather(), s, all)

		buf := s.View(big).Gather()
		storage := &buf.Y[0]
		got := s.View(small).GatherTo(buf)
		checkRows(t, name+" GatherTo", got, s, small)
		if got != buf || &got.Y[0] != storage {
			t.Errorf("%s: GatherTo into a larger buffer did not reuse it", name)
		}
		// and back up to the larger view: the storage grows as needed
		checkRows(t, name+" GatherTo grow", s.View(big).GatherTo(got), s, big)
	}
}

// TestSliceSharesRows: Slice(lo, hi) is records lo…hi−1, read from s's own
// storage (a write through it shows in s), for every range of a dense and
// a sparse dataset's first records, empty ones included, and out-of-range
// bounds panic.
func TestSliceSharesRows(t *testing.T) {
	for name, s := range viewCases() {
		for lo := 0; lo <= 12; lo++ {
			for hi := lo; hi <= 12; hi++ {
				idx := make([]int, 0, hi-lo)
				for i := lo; i < hi; i++ {
					idx = append(idx, i)
				}
				got := s.Slice(lo, hi)
				if len(idx) == 0 {
					if got.N != 0 || got.D != s.D {
						t.Fatalf("%s [%d, %d): n=%d d=%d", name, lo, hi, got.N, got.D)
					}
					continue
				}
				checkRows(t, name, got, s, idx)
				if cap(got.Y) != got.N {
					t.Fatalf("%s [%d, %d): labels' capacity %d reaches past the slice", name, lo, hi, cap(got.Y))
				}
			}
		}
		got := s.Slice(3, 5)
		got.Y[1] = -got.Y[1]
		if s.Y[4] != got.Y[1] {
			t.Errorf("%s: Slice copied the labels", name)
		}
		got.Y[1] = -got.Y[1]
		for _, b := range [][2]int{{-1, 2}, {3, 2}, {0, s.N + 1}} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s: Slice(%d, %d) did not panic", name, b[0], b[1])
					}
				}()
				s.Slice(b[0], b[1])
			}()
		}
	}
}

// TestViewSubComposes: Sub of a view is the view of the composed indices.
func TestViewSubComposes(t *testing.T) {
	for name, s := range viewCases() {
		outer := []int{10, 20, 30, 40, 50, 60}
		v := s.View(outer).Sub([]int{5, 0, 2})
		checkRows(t, name, v.Gather(), s, []int{60, 10, 30})
		w := s.All().Sub([]int{7, 8})
		checkRows(t, name+" All", w.Gather(), s, []int{7, 8})
		if !slices.Equal(v.Labels(), []float64{s.Y[60], s.Y[10], s.Y[30]}) {
			t.Errorf("%s: Labels = %v", name, v.Labels())
		}
	}
}

// TestViewEvaluationMatchesGathered: scores, AUC and KNN accuracy read
// through a view are bit-identical to the same computations on the
// gathered copy.
func TestViewEvaluationMatchesGathered(t *testing.T) {
	for name, s := range viewCases() {
		rng := rand.New(rand.NewPCG(2, 2))
		idx := rng.Perm(s.N)[:80]
		v, g := s.View(idx), s.Subset(idx)
		w := make([]float64, s.D)
		for j := range w {
			w[j] = rng.NormFloat64()
		}
		sv := ScoresViewTo(make([]float64, len(idx)), w, v)
		sg := ScoresTo(make([]float64, g.N), w, g)
		for k := range sv {
			if math.Float64bits(sv[k]) != math.Float64bits(sg[k]) {
				t.Fatalf("%s: score %d through the view %v, gathered %v", name, k, sv[k], sg[k])
			}
		}
		if a, b := LinearAUCView(w, v), LinearAUC(w, g); a != b || math.IsNaN(a) {
			t.Errorf("%s: AUC through the view %v, gathered %v", name, a, b)
		}
		if a, b := LinearAUCView(w, s.All()), LinearAUC(w, s); a != b {
			t.Errorf("%s: AUC of the whole view %v, of the dataset %v", name, a, b)
		}
		W := make([]float64, s.D*s.D)
		for j := range W {
			W[j] = rng.NormFloat64()
		}
		train := s.Subset(rng.Perm(s.N)[:60])
		if a, b := KNN3AccuracyView(W, train, v), KNN3Accuracy(W, train, g); a != b || math.IsNaN(a) {
			t.Errorf("%s: KNN-3 accuracy through the view %v, gathered %v", name, a, b)
		}
	}
}

// TestViewOutOfRangePanics: an index outside the dataset is a programmer
// error, caught when the view is made.
func TestViewOutOfRangePanics(t *testing.T) {
	s := toyAUC(10, 2, 1, 1)
	for _, idx := range [][]int{{10}, {-1}, {0, 11}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("View(%v) on n = 10 did not panic", idx)
				}
			}()
			s.View(idx)
		}()
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Errorf("Sub([3]) of a 2-record view did not panic")
			}
		}()
		s.View([]int{1, 2}).Sub([]int{3})
	}()
}

// BenchmarkViewScores compares scoring a test fold (a sorted fifth of the
// records, as KFold makes it) through a view with scoring its gathered
// copy, with the caches warm (the same fold scored again) and cold (64 MB
// written between two scorings, as a training run between two checkpoints
// would evict them), and times the gather of a training fold (four fifths):
// w8a shape (n 49 749, d 300, 12 nonzeros) and ijcnn1 shape (dense d 22).
func BenchmarkViewScores(b *testing.B) {
	evict := make([]float64, 8<<20)
	for _, c := range []struct {
		name string
		ds   *Dataset
	}{{"w8a-shape", shapedAUC(49749, 300, 12, 0.03, 1)}, {"ijcnn1-shape", shapedAUC(49990, 22, 0, 0.097, 1)}} {
		rng := rand.New(rand.NewPCG(5, 5))
		idx := rng.Perm(c.ds.N)[:c.ds.N/5]
		slices.Sort(idx)
		v, g := c.ds.View(idx), c.ds.Subset(idx)
		w := make([]float64, c.ds.D)
		for j := range w {
			w[j] = rng.NormFloat64()
		}
		dst := make([]float64, len(idx))
		for _, cold := range []bool{false, true} {
			for _, view := range []bool{true, false} {
				name := c.name + map[bool]string{true: "/view", false: "/gathered"}[view] + map[bool]string{true: "/cold", false: "/warm"}[cold]
				b.Run(name, func(b *testing.B) {
					for range b.N {
						if cold {
							b.StopTimer()
							for i := 0; i < len(evict); i += 8 {
								evict[i]++
							}
							b.StartTimer()
						}
						if view {
							ScoresViewTo(dst, w, v)
						} else {
							ScoresTo(dst, w, g)
						}
					}
				})
			}
		}
		train := c.ds.View(rng.Perm(c.ds.N)[:c.ds.N*4/5])
		buf := train.Gather()
		b.Run(c.name+"/gather-train-fold", func(b *testing.B) {
			for range b.N {
				train.GatherTo(buf)
			}
		})
	}
}
