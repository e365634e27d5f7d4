package dpalgo

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pairfed/pairfed/pairwise"
)

// spaucData returns n random records of dimension d with norms up to rmax
// and labels ±1 (both classes present).
func spaucData(rng *rand.Rand, n, d int, rmax float64) *pairwise.Dataset {
	ds := &pairwise.Dataset{N: n, D: d, X: make([]float64, n*d), Y: make([]float64, n)}
	for i := 0; i < n; i++ {
		row := ds.X[i*d : (i+1)*d]
		for k := range row {
			row[k] = rng.NormFloat64()
		}
		pairwise.Scale(rmax*rng.Float64()/pairwise.Norm2(row), row)
		ds.Y[i] = float64(1 - 2*(i%2))
	}
	return ds
}

// The product round's vector has replace-one ℓ2 sensitivity ≤ 2 (brute
// force over random and adversarial replacements: label flips, records
// far outside the R-ball, records aligned with the query), and 2 is
// approached (two records whose clipped terms point nearly opposite ways,
// with a small clip level): the bound is tight.
func TestSPAUCProductSensitivity(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const d, n = 3, 6
	worst := 0.0
	for trial := 0; trial < 3000; trial++ {
		ds := spaucData(rng, n, d, 3)
		v := make([]float64, d)
		for k := range v {
			v[k] = rng.NormFloat64()
		}
		kappa := []float64{0.01, 0.1, 1 / math.Sqrt(d), 1, 5}[trial%5]
		C := SPAUCClip(kappa, 1)
		base, err := SPAUCProductVector(ds, v, C)
		if err != nil {
			t.Fatal(err)
		}
		// Replace record i by a random record, a flipped copy, or one built
		// to point away from record i's term.
		i := rng.IntN(n)
		alt := &pairwise.Dataset{N: n, D: d, X: append([]float64(nil), ds.X...), Y: append([]float64(nil), ds.Y...)}
		row := alt.X[i*d : (i+1)*d]
		switch trial % 3 {
		case 0:
			for k := range row {
				row[k] = 10 * rng.NormFloat64()
			}
		case 1:
			alt.Y[i] = -alt.Y[i]
		case 2:
			// x' with the query's component of x and the orthogonal part
			// reversed: (uᵀx')x' points to the other side of u.
			u := append([]float64(nil), v...)
			pairwise.Scale(1/pairwise.Norm2(u), u)
			a := pairwise.Dot(u, row)
			for k := range row {
				row[k] = 2*a*u[k] - row[k]
			}
			pairwise.Scale(5, row)
		}
		got, err := SPAUCProductVector(alt, v, C)
		if err != nil {
			t.Fatal(err)
		}
		diff := make([]float64, len(got))
		for k := range diff {
			diff[k] = got[k] - base[k]
		}
		dn := pairwise.Norm2(diff)
		if dn > SPAUCSensitivity*(1+1e-12) {
			t.Fatalf("trial %d: replacing record %d moved the vector by %v > %v", trial, i, dn, SPAUCSensitivity)
		}
		worst = math.Max(worst, dn)
	}
	if worst < 1.9 {
		t.Errorf("largest change %v: the bound 2 is not approached (is the clip wrong?)", worst)
	}
	// Every record's term has norm ≤ 1 (the clip), whatever its norm.
	ds := spaucData(rng, 50, d, 100)
	v := []float64{1, 2, 3}
	for i := 0; i < ds.N; i++ {
		one := ds.Subset([]int{i})
		vec, _ := SPAUCProductVector(one, v, SPAUCClip(0.3, 1))
		if nrm := pairwise.Norm2(vec); nrm > 1+1e-12 {
			t.Fatalf("record %d: term of norm %v > 1", i, nrm)
		}
	}
	if _, err := SPAUCProductVector(ds, v, 0); err == nil {
		t.Error("clip level 0 accepted")
	}
	if _, err := SPAUCProductVector(ds, v[:2], 1); err == nil {
		t.Error("a query of the wrong length accepted")
	}
}

// Without noise and clipping (records in the R-ball, κ = 1), the sum of
// the per-record terms and the means give the exact square-AUC Hessian
// action: d CG rounds reach the ridge optimum (A + λI)⁻¹b computed
// directly from the positive–negative pairs, and the first round is the
// class-mean difference direction. A single-class partition gives the
// same sums (the vector of a site holding one class has the other block
// zero).
func TestSPAUCSolverExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const d, n = 4, 40
	const R = 1.0
	ds := spaucData(rng, n, d, R)
	// A and b from the pairs.
	A := make([]float64, d*d)
	b := make([]float64, d)
	var np, nn float64
	for i := 0; i < n; i++ {
		if ds.Y[i] > 0 {
			np++
		} else {
			nn++
		}
	}
	for i := 0; i < n; i++ {
		if ds.Y[i] < 0 {
			continue
		}
		for j := 0; j < n; j++ {
			if ds.Y[j] > 0 {
				continue
			}
			xi, xj := ds.Row(i), ds.Row(j)
			for k := 0; k < d; k++ {
				b[k] += (xi[k] - xj[k]) / (np * nn)
				for l := 0; l < d; l++ {
					A[k*d+l] += (xi[k] - xj[k]) * (xi[l] - xj[l]) / (np * nn)
				}
			}
		}
	}
	// Site vectors of a single-class partition, summed.
	var pos, neg []int
	for i := 0; i < n; i++ {
		if ds.Y[i] > 0 {
			pos = append(pos, i)
		} else {
			neg = append(neg, i)
		}
	}
	sites := []*pairwise.Dataset{ds.Subset(pos), ds.Subset(neg)}
	sum := func(f func(s *pairwise.Dataset) []float64) []float64 {
		out := make([]float64, SPAUCDim(d))
		for _, s := range sites {
			pairwise.Axpy(1, f(s), out)
		}
		return out
	}
	st := sum(func(s *pairwise.Dataset) []float64 { return SPAUCStatsVector(s, R) })
	sol, err := NewSPAUCSolver(st, d, n, R, 1, 0, d)
	if err != nil {
		t.Fatal(err)
	}
	lambda := sol.Lambda
	for r := 0; r < d; r++ {
		q := sol.Query()
		vec := sum(func(s *pairwise.Dataset) []float64 { v, _ := SPAUCProductVector(s, q, SPAUCClip(1, R)); return v })
		if err := sol.Step(vec); err != nil {
			t.Fatal(err)
		}
		if r == 0 {
			// w ∝ b after one step.
			w := sol.W
			c := pairwise.Dot(w, b) / (pairwise.Norm2(w) * pairwise.Norm2(b))
			if c < 1-1e-9 {
				t.Errorf("after one round w is not along b: cos = %v", c)
			}
		}
	}
	// (A + λI)w ≈ b.
	for k := 0; k < d; k++ {
		r := -b[k] + lambda*sol.W[k]
		for l := 0; l < d; l++ {
			r += A[k*d+l] * sol.W[l]
		}
		if math.Abs(r) > 1e-8 {
			t.Fatalf("residual %d of (A + λI)w − b is %v (w = %v)", k, r, sol.W)
		}
	}
	// The checkpoint round-trips.
	back, err := SPAUCSolverFromState(sol.State(), d)
	if err != nil || pairwise.Norm2(back.W) != pairwise.Norm2(sol.W) || back.Done != d {
		t.Fatalf("state round trip: %v, %+v", err, back)
	}
	if _, err := SPAUCSolverFromState(sol.State()[1:], d); err == nil {
		t.Error("a short state accepted")
	}
	if out := sol.Output(1e-3); math.Abs(pairwise.Norm2(out)-1e-3) > 1e-15 {
		t.Errorf("output norm %v, want the B = 1e-3 ball", pairwise.Norm2(out))
	}
}
