package data

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/pairwise"
)

func randomDataset(rng *rand.Rand, n, d int, sparse bool) *pairwise.Dataset {
	ds := &pairwise.Dataset{N: n, D: d, Y: make([]float64, n)}
	x := make([]float64, n*d)
	for i := range x {
		if !sparse || rng.IntN(4) == 0 {
			x[i] = rng.NormFloat64()*3 + float64(i%d)
		}
	}
	for i := range ds.Y {
		ds.Y[i] = float64(2*(i%2) - 1)
	}
	ds.X = x
	if sparse {
		ds.Ptr = make([]int, n+1)
		for i := 0; i < n; i++ {
			for j, v := range x[i*d : (i+1)*d] {
				if v != 0 {
					ds.Idx = append(ds.Idx, int32(j))
					ds.Val = append(ds.Val, v)
				}
			}
			ds.Ptr[i+1] = len(ds.Idx)
		}
		ds.X = nil
	}
	return ds
}

func TestScalerFitOnTrainOnly(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sparse := range []bool{false, true} {
		train := randomDataset(rng, 200, 5, sparse)
		test := randomDataset(rng, 100, 5, sparse)
		trainCopy, testCopy := clone(train), clone(test)

		mm, err := FitScaler("minmax", train)
		if err != nil {
			t.Fatal(err)
		}
		st, err := FitScaler("standard", train)
		if err != nil {
			t.Fatal(err)
		}
		// Fitting on test too must not change the train-fitted scaler.
		if _, err := FitScaler("minmax", test); err != nil {
			t.Fatal(err)
		}
		a := mm.Apply(train)
		lo, hi := columnRange(a)
		for j := range lo {
			if math.Abs(lo[j]+1) > 1e-12 || math.Abs(hi[j]-1) > 1e-12 {
				t.Errorf("minmax train column %d range [%v, %v], want [−1, 1]", j, lo[j], hi[j])
			}
		}
		// The test set is mapped with the training range, so it falls
		// outside [−1, 1] somewhere (the data are unbounded normals).
		b := mm.Apply(test)
		lo, hi = columnRange(b)
		if slices.Min(lo) >= -1 && slices.Max(hi) <= 1 {
			t.Errorf("test data exactly in [−1, 1]: scaler refitted on test?")
		}
		// Standard: zero mean, unit variance on train.
		s := st.Apply(train)
		for j := 0; j < s.D; j++ {
			var m, v float64
			for i := 0; i < s.N; i++ {
				m += s.X[i*s.D+j]
			}
			m /= float64(s.N)
			for i := 0; i < s.N; i++ {
				v += (s.X[i*s.D+j] - m) * (s.X[i*s.D+j] - m)
			}
			v /= float64(s.N)
			if math.Abs(m) > 1e-12 || math.Abs(v-1) > 1e-9 {
				t.Errorf("standard column %d mean %v var %v", j, m, v)
			}
		}
		// Test values use train statistics: check one against the formula.
		xt := test.DenseRowTo(make([]float64, 5), 7)
		if got, want := st.Apply(test).Row(7)[2], (xt[2]-st.Shift[2])*st.Scale[2]; got != want {
			t.Errorf("standard test value %v, want %v", got, want)
		}
		// Inputs untouched; labels copied, not shared.
		if !equalStorage(train, trainCopy) || !equalStorage(test, testCopy) {
			t.Errorf("Apply or FitScaler modified its input")
		}
		a.Y[0] = 99
		if train.Y[0] == 99 {
			t.Errorf("labels shared")
		}
		if a.IsSparse() || s.IsSparse() {
			t.Errorf("scaled output not dense")
		}
	}
}

func TestScalerConstantAndNone(t *testing.T) {
	ds := pairwise.NewDense([]float64{5, 1, 5, 2, 5, 3}, []float64{1, -1, 1}, 2)
	for _, kind := range []string{"minmax", "standard"} {
		sc, err := FitScaler(kind, ds)
		if err != nil {
			t.Fatal(err)
		}
		out := sc.Apply(ds)
		for i := 0; i < 3; i++ {
			if out.Row(i)[0] != 0 {
				t.Errorf("%s: constant feature → %v, want 0", kind, out.Row(i)[0])
			}
		}
	}
	sc, err := FitScaler("none", ds)
	if err != nil {
		t.Fatal(err)
	}
	out := sc.Apply(ds)
	if !equalStorage(out, ds) || &out.X[0] == &ds.X[0] {
		t.Errorf("none: not an equal copy")
	}
	if _, err := FitScaler("log", ds); err == nil {
		t.Errorf("unknown kind accepted")
	}
	// Extreme values stay finite.
	big := pairwise.NewDense([]float64{-1e308, 1e308, 1e308, -1e308}, []float64{1, -1}, 2)
	mm, err := FitScaler("minmax", big)
	if err != nil {
		t.Fatal(err)
	}
	if err := mm.Apply(big).Validate(); err != nil {
		t.Errorf("minmax of ±1e308: %v", err)
	}
	if got := mm.Apply(big).Row(0); math.Abs(got[0]+1) > 1e-12 || math.Abs(got[1]-1) > 1e-12 {
		t.Errorf("minmax of ±1e308: %v", got)
	}
	// Sparse high-dimensional data are refused rather than densified
	// (FitScalerSparse fits them for ApplyUnshifted, and CheckApply
	// refuses the shifted map).
	wide := &pairwise.Dataset{N: 2, D: 5000, Y: []float64{1, -1}, Ptr: []int{0, 1, 2}, Idx: []int32{0, 4999}, Val: []float64{1, 2}}
	if _, err := FitScaler("standard", wide); err == nil || !strings.Contains(err.Error(), "densify") {
		t.Errorf("got %v", err)
	}
	if st, err := FitScalerSparse("standard", wide); err != nil {
		t.Errorf("FitScalerSparse on d=5000: %v", err)
	} else if err := st.CheckApply(wide); err == nil || !strings.Contains(err.Error(), "densify") {
		t.Errorf("got %v", err)
	}
	if _, err := FitScaler("none", wide); err != nil {
		t.Errorf("none on sparse: %v", err)
	}
}

func TestScalerApplyShapePanics(t *testing.T) {
	sc, _ := FitScaler("minmax", pairwise.NewDense([]float64{1, 2}, []float64{1, -1}, 1))
	defer func() {
		if recover() == nil {
			t.Errorf("no panic on dimension mismatch")
		}
	}()
	sc.Apply(pairwise.NewDense([]float64{1, 2}, []float64{1}, 2))
}

func TestClipNorms(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sparse := range []bool{false, true} {
		ds := randomDataset(rng, 300, 7, sparse)
		orig := clone(ds)
		for _, R := range []float64{1e-300, 1e-3, 1, 10, 1e6} {
			out, clipped := ClipNorms(ds, R)
			if out.IsSparse() != sparse {
				t.Errorf("representation changed")
			}
			n := 0
			for i := 0; i < ds.N; i++ {
				norm := math.Sqrt(out.SqNorm(i))
				if norm > R+1e-12 || norm > R*(1+1e-15) {
					t.Errorf("R=%v: record %d norm %v", R, i, norm)
				}
				in := ds.DenseRowTo(make([]float64, ds.D), i)
				o := out.DenseRowTo(make([]float64, ds.D), i)
				if ds.SqNorm(i) <= R*R {
					if !slices.Equal(in, o) {
						t.Errorf("R=%v: record %d within R was changed", R, i)
					}
				} else {
					n++
					// Same direction, norm R up to rounding.
					ratio := robustNorm(o) / robustNorm(in)
					for j := range in {
						if math.Abs(o[j]-in[j]*ratio) > 1e-12*math.Abs(in[j])*ratio {
							t.Errorf("R=%v: record %d direction changed", R, i)
						}
					}
					if math.Abs(robustNorm(o)-R) > 1e-9*R {
						t.Errorf("R=%v: record %d clipped to %v", R, i, robustNorm(o))
					}
				}
			}
			if clipped != n {
				t.Errorf("R=%v: clipped %d, want %d", R, clipped, n)
			}
			if !equalStorage(ds, orig) {
				t.Fatalf("input modified")
			}
		}
	}
	// Norms that overflow when squared.
	huge := pairwise.NewDense([]float64{1e200, 1e200, 3, 4}, []float64{1, -1}, 2)
	out, clipped := ClipNorms(huge, 2)
	if clipped != 2 || math.Abs(math.Hypot(out.Row(0)[0], out.Row(0)[1])-2) > 1e-12 || math.Sqrt(out.SqNorm(1)) > 2 {
		t.Errorf("huge: %v clipped %d", out.X, clipped)
	}
}

func TestClipRadius(t *testing.T) {
	ds := pairwise.NewDense([]float64{3, 4}, []float64{1}, 2)
	if out, n, err := Clip(ds, 0); err != nil || out != ds || n != 0 {
		t.Errorf("R=0: %v %v", n, err)
	}
	for _, R := range []float64{-1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, _, err := Clip(ds, R); err == nil {
			t.Errorf("R=%v accepted", R)
		}
	}
	out, n, err := Clip(ds, 1)
	if err != nil || n != 1 || math.Abs(out.Row(0)[0]-0.6) > 1e-15 || ds.Row(0)[0] != 3 {
		t.Errorf("R=1: %v %d %v", out.X, n, err)
	}
	defer func() {
		if recover() == nil {
			t.Errorf("ClipNorms(0) did not panic")
		}
	}()
	ClipNorms(ds, 0)
}

// robustNorm computes ‖x‖ without overflow or underflow.
func robustNorm(x []float64) float64 {
	var n float64
	for _, v := range x {
		n = math.Hypot(n, v)
	}
	return n
}

func columnRange(ds *pairwise.Dataset) (lo, hi []float64) {
	lo, hi = make([]float64, ds.D), make([]float64, ds.D)
	for j := range lo {
		lo[j], hi[j] = math.Inf(1), math.Inf(-1)
	}
	row := make([]float64, ds.D)
	for i := 0; i < ds.N; i++ {
		for j, v := range ds.DenseRowTo(row, i) {
			lo[j], hi[j] = min(lo[j], v), max(hi[j], v)
		}
	}
	return lo, hi
}

func equalStorage(a, b *pairwise.Dataset) bool {
	return a.N == b.N && a.D == b.D && slices.Equal(a.Y, b.Y) && slices.Equal(a.X, b.X) &&
		slices.Equal(a.Ptr, b.Ptr) && slices.Equal(a.Idx, b.Idx) && slices.Equal(a.Val, b.Val)
}

// ApplyUnshifted keeps the representation and gives every record the full
// map's record plus one constant vector c = −Scale ⊙ Shift: so differences
// of records agree with Apply's up to rounding (a few ulps of the values).
func TestScalerApplyUnshifted(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, sparse := range []bool{false, true} {
		ds := randomDataset(rng, 200, 9, sparse)
		orig := clone(ds)
		for _, kind := range []string{"minmax", "standard"} {
			sc, err := FitScaler(kind, ds)
			if err != nil {
				t.Fatal(err)
			}
			full, un := sc.Apply(ds), sc.ApplyUnshifted(ds)
			if un.IsSparse() != sparse || un.N != ds.N || !slices.Equal(un.Y, ds.Y) {
				t.Fatalf("%s sparse=%v: representation or labels changed", kind, sparse)
			}
			if sparse && len(un.Val) != len(ds.Val) {
				t.Fatalf("%s: %d stored values, input had %d", kind, len(un.Val), len(ds.Val))
			}
			a, b := make([]float64, ds.D), make([]float64, ds.D)
			shifted := false
			for i := 0; i < ds.N; i++ {
				fa, ua := full.DenseRowTo(a, i), un.DenseRowTo(b, i)
				for j := range fa {
					c := -sc.Shift[j] * sc.Scale[j]
					// x'_j = (x − m)·s and x̃_j + c = x·s − m·s: each side
					// rounds twice, so they agree within 4 ulps of the
					// largest magnitude involved.
					tol := 4 * 0x1p-52 * max(math.Abs(fa[j]), math.Abs(ua[j]), math.Abs(c))
					if math.Abs(fa[j]-(ua[j]+c)) > tol {
						t.Fatalf("%s sparse=%v record %d feature %d: full %v, unshifted %v + c %v", kind, sparse, i, j, fa[j], ua[j], c)
					}
					shifted = shifted || c != 0
				}
			}
			if !shifted {
				t.Fatalf("%s: vacuous (no shift)", kind)
			}
		}
		if !equalStorage(ds, orig) {
			t.Fatal("input modified")
		}
	}
	defer func() {
		if recover() == nil {
			t.Errorf("no panic for a bounds scaler")
		}
	}()
	NewBoundsScaler([]float64{0}, []float64{1}).ApplyUnshifted(pairwise.NewDense([]float64{1, 2}, []float64{1, -1}, 1))
}
