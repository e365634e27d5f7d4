package pairwise

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestScoresManyMatchesDot: ScoresManyTo gives every model's scores bit
// for bit as dot (and Dataset.Dot) does — row counts below, at and across
// its row blocks, model counts that are and are not multiples of four,
// odd and even dimensions, dense and CSR storage — and
// AUCScratch.LinearAUCsTo and AUCScratch.LinearAUC equal LinearAUC bit for
// bit while their buffers are reused across datasets of different sizes.
func TestScoresManyMatchesDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var sc AUCScratch
	for _, n := range []int{1, 3, 5, 256, 257, 1000, 37} {
		for _, d := range []int{1, 2, 3, 22, 23} {
			ds := &Dataset{N: n, D: d, X: make([]float64, n*d), Y: make([]float64, n)}
			for i := range ds.X {
				ds.X[i] = rng.NormFloat64() * math.Exp(4*rng.NormFloat64())
			}
			for i := range ds.Y {
				ds.Y[i] = float64(2*(i%3%2) - 1)
			}
			for _, sparse := range []bool{false, true} {
				data := ds
				if sparse {
					data = &Dataset{N: n, D: d, Y: ds.Y, Ptr: make([]int, n+1)}
					for i := range n {
						for j, v := range ds.X[i*d : (i+1)*d] {
							if j%3 != 1 { // a third of the entries are zeros
								data.Idx = append(data.Idx, int32(j))
								data.Val = append(data.Val, v)
							}
						}
						data.Ptr[i+1] = len(data.Idx)
					}
				}
				for _, m := range []int{1, 3, 4, 5, 9} {
					ws := make([][]float64, m)
					dst := make([][]float64, m)
					for k := range ws {
						ws[k] = make([]float64, d)
						for j := range ws[k] {
							ws[k][j] = rng.NormFloat64()
						}
						dst[k] = make([]float64, n)
					}
					ScoresManyTo(dst, ws, data)
					aucs := sc.LinearAUCsTo(make([]float64, m), ws, data)
					for k, w := range ws {
						for i := range n {
							want := data.Dot(i, w)
							if !sparse {
								if v := dot(ds.X[i*d:(i+1)*d], w); v != want {
									t.Fatalf("Dataset.Dot %v, dot %v", want, v)
								}
							}
							if math.Float64bits(dst[k][i]) != math.Float64bits(want) {
								t.Fatalf("n %d d %d sparse %v model %d/%d row %d: ScoresManyTo %v, Dot %v", n, d, sparse, k, m, i, dst[k][i], want)
							}
						}
						a := LinearAUC(w, data)
						for _, b := range []float64{aucs[k], sc.LinearAUC(w, data)} {
							if math.Float64bits(a) != math.Float64bits(b) && !(math.IsNaN(a) && math.IsNaN(b)) {
								t.Fatalf("n %d d %d model %d: scratch AUC %v, LinearAUC %v", n, d, k, b, a)
							}
						}
					}
				}
			}
		}
	}
}

// AUC's bucket count (aucCount) equals the rank count on the data that
// strain it: either class the smaller one, heavy tails (most values in
// one bucket), ranges that overflow (±1e308, ±Inf: one bucket), a
// subnormal range (an infinite scale), ties, ±0, and all values equal.
func TestAUCBucketsEqualRankCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 600 {
		n := 2 + rng.IntN(2000)
		s := make([]float64, n)
		y := make([]float64, n)
		posFrac := []float64{0.05, 0.5, 0.95}[trial%3]
		for i := range s {
			switch trial % 6 {
			case 0:
				s[i] = rng.NormFloat64() / rng.NormFloat64() // Cauchy: heavy tails
			case 1:
				s[i] = math.Copysign(1e308*rng.Float64(), rng.NormFloat64())
			case 2:
				s[i] = float64(rng.IntN(3)) * 5e-324 // subnormal range
			case 3:
				s[i] = 7 // all equal
			case 4:
				s[i] = float64(rng.IntN(4) - 2)
				if s[i] == 0 && rng.IntN(2) == 0 {
					s[i] = math.Copysign(0, -1)
				}
			default:
				s[i] = rng.NormFloat64()
			}
		}
		checkAUCIsRankCount(t, rng, trial, s, y, posFrac, trial%5 == 0)
	}
}
