package data

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// Sparse data with d > 1000: the fit reads only the stored values and
// gives the dense fit's map (minmax exactly; standard within rounding),
// and a map that fixes 0 keeps the data sparse with Apply's values.
func TestScalerSparseHighD(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	ds := randomDataset(rng, 60, 1200, true)
	dense := ds.ToDense()
	for _, kind := range []string{"minmax", "standard"} {
		sp, err := FitScalerSparse(kind, ds)
		if err != nil {
			t.Fatal(err)
		}
		dn, err := FitScaler(kind, dense)
		if err != nil {
			t.Fatal(err)
		}
		for j := range sp.Scale {
			tol := 0.0
			if kind == "standard" {
				tol = 1e-12
			}
			if !nearly(sp.Shift[j], dn.Shift[j], tol) || !nearly(sp.Scale[j], dn.Scale[j], tol) {
				t.Fatalf("%s feature %d: sparse fit (%v, %v), dense fit (%v, %v)", kind, j, sp.Shift[j], sp.Scale[j], dn.Shift[j], dn.Scale[j])
			}
		}
		// the fitted map moves zeros: applying it with its shift is refused
		if err := sp.CheckApply(ds); err == nil || !strings.Contains(err.Error(), "would densify") {
			t.Fatalf("%s: CheckApply = %v, want a refusal", kind, err)
		}
	}
	// bounds with midpoint 0 fix zeros: sparse output, Apply's values
	lo, hi := make([]float64, ds.D), make([]float64, ds.D)
	for j := range lo {
		lo[j], hi[j] = -float64(j%7+1), float64(j%7+1)
	}
	sc := NewBoundsScaler(lo, hi).Divide(1)
	if !sc.FixesZero() {
		t.Fatal("midpoint-0 bounds do not fix zero")
	}
	if err := sc.CheckApply(ds); err != nil {
		t.Fatal(err)
	}
	out, want := sc.Apply(ds), sc.Apply(dense)
	if !out.IsSparse() || len(out.Val) != len(ds.Val) {
		t.Fatalf("bounds map of sparse data: sparse %v, %d stored values of %d", out.IsSparse(), len(out.Val), len(ds.Val))
	}
	got := out.ToDense()
	for k := range want.X {
		if math.Float64bits(got.X[k]) != math.Float64bits(want.X[k]) && !(got.X[k] == 0 && want.X[k] == 0) {
			t.Fatalf("value %d: sparse %v, dense %v", k, got.X[k], want.X[k])
		}
	}
	// clipping works on the CSR values in place of a copy
	cl, n := ClipNorms(out, 0.05)
	if !cl.IsSparse() || n == 0 {
		t.Fatalf("clip: sparse %v, %d clipped", cl.IsSparse(), n)
	}
	// a bounds map that moves zeros ([0, 1] ↦ [−1, 1]) is refused
	for j := range lo {
		lo[j], hi[j] = 0, 1
	}
	if err := NewBoundsScaler(lo, hi).CheckApply(ds); err == nil || !strings.Contains(err.Error(), "0 ↦ -1") {
		t.Fatalf("moving bounds: CheckApply = %v, want a refusal naming 0 ↦ -1", err)
	}
}

func nearly(a, b, rel float64) bool {
	if rel == 0 {
		return math.Float64bits(a) == math.Float64bits(b)
	}
	return math.Abs(a-b) <= rel*max(math.Abs(a), math.Abs(b))
}
