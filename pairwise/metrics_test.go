package pairwise

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestScoresToMatchesDot: the four-row dense loop of ScoresTo gives every
// score bit for bit as dot (and Dataset.Dot) does, for row counts that are
// and are not multiples of four and odd and even dimensions; and
// AUCScratch.LinearAUC equals LinearAUC bit for bit while its buffers are
// reused across datasets of different sizes.
func TestScoresToMatchesDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var sc AUCScratch
	for _, n := range []int{1, 3, 4, 5, 8, 13, 1000, 37} {
		for _, d := range []int{1, 2, 3, 22, 23} {
			ds := &Dataset{N: n, D: d, X: make([]float64, n*d), Y: make([]float64, n)}
			for i := range ds.X {
				ds.X[i] = rng.NormFloat64() * math.Exp(4*rng.NormFloat64())
			}
			for i := range ds.Y {
				ds.Y[i] = float64(2*(i%3%2) - 1)
			}
			w := make([]float64, d)
			for j := range w {
				w[j] = rng.NormFloat64()
			}
			got := ScoresTo(make([]float64, n), w, ds)
			for i := range n {
				if want := dot(ds.X[i*d:(i+1)*d], w); math.Float64bits(got[i]) != math.Float64bits(want) {
					t.Fatalf("n %d d %d row %d: ScoresTo %v, dot %v", n, d, i, got[i], want)
				}
				if want := ds.Dot(i, w); math.Float64bits(got[i]) != math.Float64bits(want) {
					t.Fatalf("n %d d %d row %d: ScoresTo %v, Dataset.Dot %v", n, d, i, got[i], want)
				}
			}
			a, b := LinearAUC(w, ds), sc.LinearAUC(w, ds)
			if math.Float64bits(a) != math.Float64bits(b) && !(math.IsNaN(a) && math.IsNaN(b)) {
				t.Fatalf("n %d d %d: AUCScratch.LinearAUC %v, LinearAUC %v", n, d, b, a)
			}
		}
	}
}
