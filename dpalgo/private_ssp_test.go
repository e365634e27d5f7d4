package dpalgo

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// randOnSphere returns a uniform point of norm r.
func randOnSphere(rng *rand.Rand, d int, r float64) []float64 {
	x := make([]float64, d)
	for k := range x {
		x[k] = rng.NormFloat64()
	}
	pairwise.Scale(r/pairwise.Norm2(x), x)
	return x
}

// sspNeighbours yields replacements of record 0 of ds: random points in the
// ball, random points on the sphere, the antipode and orthogonal points of
// x_0, each with both labels.
func sspNeighbours(rng *rand.Rand, ds *pairwise.Dataset, R float64, trials int) [][]float64 {
	d := ds.D
	x0 := ds.Row(0)
	var out [][]float64
	anti := append([]float64(nil), x0...)
	pairwise.Scale(-R/pairwise.Norm2(anti), anti)
	out = append(out, anti)
	for t := 0; t < trials; t++ {
		out = append(out, randOnSphere(rng, d, R), randOnSphere(rng, d, R*rng.Float64()))
		// orthogonal to x0, on the sphere (none when d = 1)
		v := randOnSphere(rng, d, 1)
		pairwise.Axpy(-pairwise.Dot(v, x0)/pairwise.Dot(x0, x0), x0, v)
		if nv := pairwise.Norm2(v); nv > 1e-6 {
			pairwise.Scale(R/nv, v)
			out = append(out, v)
			// at a random obtuse angle to x0, on the sphere
			c := -rng.Float64()
			u := append([]float64(nil), x0...)
			pairwise.Scale(c*R/pairwise.Norm2(u), u)
			pairwise.Axpy(math.Sqrt(1-c*c), v, u)
			out = append(out, u)
		}
	}
	for _, x := range out {
		for _, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				panic("sspNeighbours: non-finite neighbour")
			}
		}
	}
	return out
}

// The release vector's change under every replacement of one record (same
// label or flipped, random or adversarial, on or inside the sphere) is at
// most SSPSensitivity, and the antipodal replacement attains it: the bound
// is tight.
func TestSSPSensitivityBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	for _, R := range []float64{1, 2.5} {
		for _, moments := range []SSPKind{SSPClass, SSPMean, SSPPooled} {
			a, b, c := SSPWeights(R, moments)
			sens := SSPSensitivity(R, a, b, c)
			if math.Abs(sens-2) > 1e-12 {
				t.Fatalf("R=%g moments=%v: Δ = %v, want 2 (the weights are chosen to leave it at the sums' sensitivity)", R, moments, sens)
			}
			var worst float64
			for trial := 0; trial < 20; trial++ {
				d := 1 + rng.IntN(5)
				ds := toyAUC(6, d, 2, rng.Uint64())
				for i := 0; i < ds.N; i++ { // spread records up to the sphere
					pairwise.Scale(R*rng.Float64()/math.Max(pairwise.Norm2(ds.Row(i)), 1e-12), ds.Row(i))
				}
				pairwise.Scale(R/pairwise.Norm2(ds.Row(0)), ds.Row(0))
				v := sspVector(SSPStatsOf(ds, moments), a, b, c)
				for _, x := range sspNeighbours(rng, ds, R, 20) {
					for _, y := range []float64{1, -1} {
						nb := &pairwise.Dataset{N: ds.N, D: d, Y: append([]float64(nil), ds.Y...), X: append([]float64(nil), ds.X...)}
						copy(nb.Row(0), x)
						nb.Y[0] = y
						v2 := sspVector(SSPStatsOf(nb, moments), a, b, c)
						var s float64
						for k := range v {
							s += (v[k] - v2[k]) * (v[k] - v2[k])
						}
						ch := math.Sqrt(s)
						if !(ch <= sens*(1+1e-9)) {
							t.Fatalf("R=%g moments=%v d=%d: replacement changed the release by %v > Δ = %v", R, moments, d, ch, sens)
						}
						worst = math.Max(worst, ch)
					}
				}
			}
			if worst < sens*(1-1e-9) {
				t.Errorf("R=%g moments=%v: largest change found %v < Δ = %v: the bound is not attained", R, moments, worst, sens)
			}
		}
	}
}

// With b above 1/(√2R²) the same-class case is the interior maximum
// 2a²R² + 2b²R⁴ + a⁴/(2b²): a grid over the angle finds it.
func TestSSPSensitivityInteriorMaximum(t *testing.T) {
	R, a, b, c := 1.5, 1.0, 2.0, 0.0
	sens := SSPSensitivity(R, a, b, c)
	var best float64
	for i := 0; i <= 20000; i++ {
		tt := -1 + 2*float64(i)/20000
		f := 2*a*a*R*R*(1-tt) + 2*b*b*R*R*R*R*(1-tt*tt)
		best = math.Max(best, f)
	}
	if math.Abs(math.Sqrt(best)-sens) > 1e-6*sens {
		t.Errorf("grid maximum %v, SSPSensitivity %v", math.Sqrt(best), sens)
	}
}

// SSPStatsOf is additive over a split of the records (what a federation
// sums), and equal on dense and sparse copies.
func TestSSPStatsAdditiveAndSparse(t *testing.T) {
	ds := toyAUC(40, 5, 1.5, 3)
	all := SSPStatsOf(ds, SSPClass)
	idxA, idxB := []int{}, []int{}
	for i := 0; i < ds.N; i++ {
		if i%3 == 0 {
			idxA = append(idxA, i)
		} else {
			idxB = append(idxB, i)
		}
	}
	sum := SSPStatsOf(ds.Subset(idxA), SSPClass)
	if err := sum.Add(SSPStatsOf(ds.Subset(idxB), SSPClass)); err != nil {
		t.Fatal(err)
	}
	sp := SSPStatsOf(toSparse(ds), SSPClass)
	for _, o := range []*SSPStats{sum, sp} {
		va, vo := sspVector(all, 1, 1, 1), sspVector(o, 1, 1, 1)
		for k := range va {
			if math.Abs(va[k]-vo[k]) > 1e-12 {
				t.Fatalf("coordinate %d: %v vs %v", k, va[k], vo[k])
			}
		}
		if o.N != all.N {
			t.Fatalf("N %v vs %v", o.N, all.N)
		}
	}
	if err := sum.Add(SSPStatsOf(ds, SSPMean)); err == nil {
		t.Error("adding statistics without moments to statistics with moments was accepted")
	}
}

// From exact statistics, SolveSSP is the minimizer of the pairwise square
// AUC risk over the n₊n₋ pairs plus λ‖w‖²: its gradient, summed pair by
// pair, vanishes.
func TestSolveSSPIsSquareAUCOptimum(t *testing.T) {
	ds := toyAUC(30, 4, 1.5, 5)
	lambda := 0.05
	w, info, err := SolveSSP(SSPStatsOf(ds, SSPClass), lambda)
	if err != nil {
		t.Fatal(err)
	}
	if info.Clipped != 0 {
		t.Errorf("exact moments had %d negative eigenvalues", info.Clipped)
	}
	g := make([]float64, ds.D)
	var np, nn float64
	for i := 0; i < ds.N; i++ {
		if ds.Y[i] > 0 {
			np++
		} else {
			nn++
		}
	}
	for i := 0; i < ds.N; i++ {
		for j := 0; j < ds.N; j++ {
			if ds.Y[i] > 0 && ds.Y[j] < 0 {
				m := 1 - diffDot(w, ds.Row(i), ds.Row(j))
				for k := range g {
					g[k] += -2 * m * (ds.Row(i)[k] - ds.Row(j)[k]) / (np * nn)
				}
			}
		}
	}
	pairwise.Axpy(2*lambda, w, g)
	if n := pairwise.Norm2(g); n > 1e-10 {
		t.Errorf("gradient of the ridge square AUC risk at SolveSSP's w has norm %v", n)
	}
}

// λ = ∞ (and statistics without moments) give μ₊ − μ₋, and a huge finite λ
// gives its direction: the class-mean-difference ranker is the
// strongest-regularized case.
func TestSolveSSPMeanDifferenceLimit(t *testing.T) {
	ds := toyAUC(50, 3, 1, 9)
	st := SSPStatsOf(ds, SSPClass)
	mean, _, err := SolveSSP(st, math.Inf(1))
	if err != nil {
		t.Fatal(err)
	}
	noMom, _, _ := SolveSSP(SSPStatsOf(ds, SSPMean), 1)
	want := make([]float64, ds.D)
	for i := 0; i < ds.N; i++ {
		c := -1 / (float64(ds.N) - st.NPos)
		if ds.Y[i] > 0 {
			c = 1 / st.NPos
		}
		pairwise.Axpy(c, ds.Row(i), want)
	}
	for k := range want {
		if math.Abs(mean[k]-want[k]) > 1e-12 || math.Abs(noMom[k]-want[k]) > 1e-12 {
			t.Fatalf("mean difference %v / %v, want %v", mean, noMom, want)
		}
	}
	big, _, _ := SolveSSP(st, 1e8)
	if cos := pairwise.Dot(big, want) / (pairwise.Norm2(big) * pairwise.Norm2(want)); cos < 1-1e-6 {
		t.Errorf("λ = 1e8: cos(w, μ₊ − μ₋) = %v, want → 1", cos)
	}
}

// Noisy counts outside [1, n − 1] (a site with a single class, a tiny
// class) are clamped, and the solve still returns a finite model.
func TestSolveSSPClampsCounts(t *testing.T) {
	ds := toyAUC(20, 3, 1, 11)
	st := SSPStatsOf(ds, SSPClass)
	for _, np := range []float64{-5, 0, 20, 30} {
		s := st.Clone()
		s.NPos = np
		w, info, err := SolveSSP(s, SSPLambda(s, 1, 1))
		if err != nil {
			t.Fatal(err)
		}
		if info.NPos < 1 || info.NNeg < 1 {
			t.Errorf("n̂₊ = %v: counts used %v, %v", np, info.NPos, info.NNeg)
		}
		for _, v := range w {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("n̂₊ = %v: w = %v", np, w)
			}
		}
	}
	if _, _, err := SolveSSP(&SSPStats{D: 1, N: 1, SumPos: []float64{0}, SumNeg: []float64{0}}, 1); err == nil {
		t.Error("N = 1 accepted")
	}
	if _, _, err := SolveSSP(st, 0); err == nil {
		t.Error("λ = 0 accepted")
	}
}

// The noise added by NoisySSP has the calibrated σ on the weighted vector:
// over many seeded draws the empirical variance of the count and of a sum
// coordinate match σ² (resp. σ²R²) within 5 standard errors (false-failure
// rate < 1e-6 per check).
func TestNoisySSPNoiseScale(t *testing.T) {
	ds := toyAUC(10, 2, 1, 13)
	R := 2.0
	st := SSPStatsOf(ds, SSPClass)
	rel := SSPRelease{Sigma: 0.7}
	noise := dp.NewSeededNoise(5)
	const N = 4000
	var sc, ss float64
	for i := 0; i < N; i++ {
		o := NoisySSP(st, R, rel, noise)
		sc += (o.NPos - st.NPos) * (o.NPos - st.NPos)
		ss += (o.SumPos[0] - st.SumPos[0]) * (o.SumPos[0] - st.SumPos[0])
	}
	check := func(name string, got, want float64) {
		se := want * math.Sqrt(2.0/N)
		if math.Abs(got-want) > 5*se {
			t.Errorf("%s: variance %v, want %v ± %v", name, got, want, 5*se)
		}
	}
	check("count", sc/N, 0.49)
	check("sum", ss/N, 0.49*R*R)
}

// The release is calibrated exactly: its Δ'/σ is the μ of (ε, δ), and the
// reported releases compose to the requested ε.
func TestSSPCalibrationExact(t *testing.T) {
	for _, moments := range []SSPKind{SSPClass, SSPMean, SSPPooled} {
		rel, err := SSPCalibrate(1, 1e-5, 1, 8, moments)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := dp.Compose([]dp.Release{{Mechanism: dp.MechanismGaussian, Sensitivity: rel.Sensitivity, Sigma: rel.Sigma}}, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if e := rep.Best.Epsilon; e > 1 || e < 1-1e-6 {
			t.Errorf("moments=%v: composed ε = %v, want 1 (exact)", moments, e)
		}
	}
}

// runSSP end to end on a toy problem: at n = 2000, ε = 1 the private model
// ranks within 0.03 of the exact statistics' model (the noise on μ̂± is
// ≈ 0.01 per coordinate against a mean gap of 0.6), and the report
// describes one release.
func TestRunSSPToy(t *testing.T) {
	ds := toyAUC(2000, 5, 2, 17)
	exact, _, _ := SolveSSP(SSPStatsOf(ds, SSPClass), 1e-6)
	ceiling := pairwise.LinearAUC(exact, ds)
	for _, name := range []string{"dp-ssp", "dp-ssp-mean"} {
		a, _ := pairwise.Lookup(name)
		obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Loss: pairwise.AUCSquare{}, Radius: 1})
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Run(context.Background(), obj, pairwise.RunConfig{Privacy: &pairwise.Privacy{Epsilon: 1, Delta: 1e-4, FeatureRadius: 1, Noise: dp.NewSeededNoise(3)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if auc := pairwise.LinearAUC(res.W, ds); auc < ceiling-0.03 {
			t.Errorf("%s: AUC %v, exact-statistics model %v", name, auc, ceiling)
		}
		if p := res.Privacy; p.Releases != 1 || len(p.Sigmas) != 1 || p.Private {
			t.Errorf("%s: report %+v", name, p)
		}
		if _, err := a.Run(context.Background(), obj, pairwise.RunConfig{Steps: 3, Privacy: &pairwise.Privacy{Epsilon: 1, Delta: 1e-4, FeatureRadius: 1, Noise: dp.NewSeededNoise(3)}}, nil); err == nil {
			t.Errorf("%s accepted --steps", name)
		}
	}
}

// A federation of sites that each hold a single class: every site releases
// its noisy statistics once (its noisy positive count around 0 or its
// size), the coordinator sums them and solves with λ for the summed noise
// σ√K. The model ranks within 0.03 of the pooled single release (the sum
// has √K times the noise of one release; n = 4000, ε = 1).
func TestSSPFederatedSingleClassSites(t *testing.T) {
	ds := toyAUC(4000, 5, 2, 29)
	var pos, neg []int
	for i := 0; i < ds.N; i++ {
		if ds.Y[i] > 0 {
			pos = append(pos, i)
		} else {
			neg = append(neg, i)
		}
	}
	sites := [][]int{pos[:len(pos)/2], pos[len(pos)/2:], neg[:len(neg)/2], neg[len(neg)/2:]}
	R, eps, delta := 1.0, 1.0, 1e-4
	rel, err := SSPCalibrate(eps, delta, R, ds.D, SSPClass)
	if err != nil {
		t.Fatal(err)
	}
	noise := dp.NewSeededNoise(31)
	var sum *SSPStats
	for _, idx := range sites {
		st := NoisySSP(SSPStatsOf(ds.Subset(idx), SSPClass), R, rel, noise)
		if sum == nil {
			sum = st
		} else if err := sum.Add(st); err != nil {
			t.Fatal(err)
		}
	}
	if sum.N != float64(ds.N) {
		t.Fatalf("summed N = %v, want %d", sum.N, ds.N)
	}
	w, _, err := SolveSSP(sum, SSPLambda(sum, R, rel.Sigma*math.Sqrt(float64(len(sites)))))
	if err != nil {
		t.Fatal(err)
	}
	pooled, _, _ := SolveSSP(NoisySSP(SSPStatsOf(ds, SSPClass), R, rel, noise), SSPLambda(sum, R, rel.Sigma))
	if a, b := pairwise.LinearAUC(w, ds), pairwise.LinearAUC(pooled, ds); a < b-0.03 {
		t.Errorf("federated single-class sites: AUC %v, pooled release %v", a, b)
	}
}
