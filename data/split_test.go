package data

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// labels returns npos +1 and nneg −1 labels, interleaved.
func labels(npos, nneg int) []float64 {
	y := make([]float64, 0, npos+nneg)
	for npos > 0 || nneg > 0 {
		if npos > 0 {
			y = append(y, 1)
			npos--
		}
		if nneg > 0 {
			y = append(y, -1)
			nneg--
		}
	}
	return y
}

func count(y []float64, idx []int, label float64) int {
	c := 0
	for _, i := range idx {
		if y[i] == label {
			c++
		}
	}
	return c
}

// checkPartition asserts that the sets are sorted, disjoint and cover 0..n−1.
func checkPartition(t *testing.T, n int, sets ...[]int) {
	t.Helper()
	seen := make([]int, n)
	for _, s := range sets {
		if !slices.IsSorted(s) {
			t.Errorf("index set not sorted")
		}
		for _, i := range s {
			seen[i]++
		}
	}
	for i, c := range seen {
		if c != 1 {
			t.Fatalf("record %d appears %d times", i, c)
		}
	}
}

func TestStratifiedSplit(t *testing.T) {
	cases := []struct {
		npos, nneg int
		frac       float64
		testPos    int
		testNeg    int
	}{
		{268, 500, 0.2, 54, 100}, // round(53.6), 100
		{32, 123, 0.3, 10, 37},   // round(9.6), round(36.9)
		{2, 100, 0.01, 1, 1},     // at least one of each class in test
		{3, 3, 0.99, 2, 2},       // at least one of each class in train
		{1, 10, 0.5, 0, 5},       // a single record stays in training
	}
	for _, c := range cases {
		y := labels(c.npos, c.nneg)
		train, test, err := StratifiedSplit(y, c.frac, rand.New(rand.NewPCG(7, 8)))
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, len(y), train, test)
		if p, n := count(y, test, 1), count(y, test, -1); p != c.testPos || n != c.testNeg {
			t.Errorf("%d/%d frac %v: test has %d+ %d−, want %d+ %d−", c.npos, c.nneg, c.frac, p, n, c.testPos, c.testNeg)
		}
	}
	// Same seed, same split; another seed, another split.
	y := labels(100, 300)
	a1, b1, _ := StratifiedSplit(y, 0.25, rand.New(rand.NewPCG(1, 1)))
	a2, b2, _ := StratifiedSplit(y, 0.25, rand.New(rand.NewPCG(1, 1)))
	a3, _, _ := StratifiedSplit(y, 0.25, rand.New(rand.NewPCG(1, 2)))
	if !slices.Equal(a1, a2) || !slices.Equal(b1, b2) {
		t.Errorf("not deterministic")
	}
	if slices.Equal(a1, a3) {
		t.Errorf("seed ignored")
	}
	for _, frac := range []float64{0, 1, -0.1, 1.5, math.NaN()} {
		if _, _, err := StratifiedSplit(y, frac, rand.New(rand.NewPCG(1, 1))); err == nil {
			t.Errorf("frac %v accepted", frac)
		}
	}
	if _, _, err := StratifiedSplit([]float64{1, math.NaN()}, 0.5, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Errorf("NaN label accepted")
	}
}

func TestStratifiedKFold(t *testing.T) {
	y := labels(37, 103)
	folds, err := StratifiedKFold(y, 5, rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	checkPartition(t, len(y), folds...)
	for f, fold := range folds {
		p, n := count(y, fold, 1), count(y, fold, -1)
		// 37/5 = 7.4, 103/5 = 20.6, 140/5 = 28.
		if p < 7 || p > 8 || n < 20 || n > 21 || len(fold) != 28 {
			t.Errorf("fold %d: %d+ %d− (%d)", f, p, n, len(fold))
		}
		train := Complement(len(y), fold)
		checkPartition(t, len(y), train, fold)
	}
	again, _ := StratifiedKFold(y, 5, rand.New(rand.NewPCG(5, 6)))
	for f := range folds {
		if !slices.Equal(folds[f], again[f]) {
			t.Errorf("not deterministic")
		}
	}
	if _, err := StratifiedKFold(labels(3, 50), 5, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Errorf("class smaller than k accepted")
	}
	for _, k := range []int{1, 0, -3, 141} {
		if _, err := StratifiedKFold(y, k, rand.New(rand.NewPCG(1, 1))); err == nil {
			t.Errorf("k=%d accepted", k)
		}
	}
}

func TestKFold(t *testing.T) {
	for _, c := range []struct{ n, k int }{{10, 3}, {768, 10}, {5, 5}, {7, 2}} {
		folds, err := KFold(c.n, c.k, rand.New(rand.NewPCG(9, 9)))
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, c.n, folds...)
		for f, fold := range folds {
			want := c.n / c.k
			if f < c.n%c.k {
				want++
			}
			if len(fold) != want {
				t.Errorf("n=%d k=%d: fold %d has %d, want %d", c.n, c.k, f, len(fold), want)
			}
		}
	}
	// Shuffled: the first fold of 100 is not 0..9.
	folds, _ := KFold(100, 10, rand.New(rand.NewPCG(9, 9)))
	if slices.Equal(folds[0], []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Errorf("not shuffled")
	}
	again, _ := KFold(100, 10, rand.New(rand.NewPCG(9, 9)))
	if !slices.Equal(folds[3], again[3]) {
		t.Errorf("not deterministic")
	}
	for _, c := range []struct{ n, k int }{{10, 1}, {3, 4}, {0, 2}} {
		if _, err := KFold(c.n, c.k, rand.New(rand.NewPCG(1, 1))); err == nil {
			t.Errorf("n=%d k=%d accepted", c.n, c.k)
		}
	}
}

func TestComplement(t *testing.T) {
	if got := Complement(6, []int{4, 1, 1}); !slices.Equal(got, []int{0, 2, 3, 5}) {
		t.Errorf("got %v", got)
	}
	if got := Complement(3, nil); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("got %v", got)
	}
	defer func() {
		if recover() == nil {
			t.Errorf("no panic on out-of-range index")
		}
	}()
	Complement(3, []int{3})
}
