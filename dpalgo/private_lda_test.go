package dpalgo

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// Release A (Σ x/R₀) moves by ‖x − x'‖/R₀ ≤ 2 (the triangle inequality);
// LDASignStats is SSPStatsOf of the signs, dense and sparse alike, and
// every sign lies in the R-ball (the premise of release B's Δ).
func TestLDASignStats(t *testing.T) {
	ds := toyAUC(40, 5, 2, 3)
	c := []float64{0.1, -0.2, 0, 0.05, 0.3}
	R := 0.4
	ref := &pairwise.Dataset{N: ds.N, D: ds.D, Y: ds.Y, X: append([]float64(nil), ds.X...)}
	for i := 0; i < ref.N; i++ {
		r := ref.Row(i)
		pairwise.Axpy(-1, c, r)
		pairwise.Scale(R/pairwise.Norm2(r), r)
		if math.Abs(pairwise.Norm2(r)-R) > 1e-12 {
			t.Fatalf("sign of record %d has norm %v, want %v", i, pairwise.Norm2(r), R)
		}
	}
	want := SSPStatsOf(ref, SSPPooled)
	for _, in := range []*pairwise.Dataset{ds, toSparse(ds)} {
		got := LDASignStats(in, c, R)
		va, vb := sspVector(got, 1, 1, 1), sspVector(want, 1, 1, 1)
		for k := range va {
			if math.Abs(va[k]-vb[k]) > 1e-12 {
				t.Fatalf("coordinate %d: %v, want %v", k, va[k], vb[k])
			}
		}
	}
	// A record at the centre contributes 0 (not NaN).
	one := &pairwise.Dataset{N: 1, D: 2, Y: []float64{1}, X: []float64{0.3, 0.4}}
	st := LDASignStats(one, []float64{0.3, 0.4}, 1)
	if st.SumPos[0] != 0 || st.SumPos[1] != 0 || st.Mom[0] != 0 {
		t.Errorf("record at the centre: %+v", st)
	}
	// The centre is clamped into the R₀-ball whatever the noise.
	if c := LDACentre([]float64{300, 400}, 10, 2); math.Abs(pairwise.Norm2(c)-2) > 1e-12 {
		t.Errorf("centre %v outside the R₀ = 2 ball", c)
	}
}

// On records far from the origin (a common offset of 0.6R, the case of a
// schema box whose centre is not the data's), dp-lda's private centring
// recovers nearly the non-private Fisher direction at ε = 1, n = 4000,
// and beats the same statistics released once without centring (whose
// clip radius must cover the offset, so their noise is larger). Seeded
// noise and data: deterministic; see the logged figures for the margins.
func TestLDACentringRecoversSignal(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 2))
	n, d := 4000, 6
	mk := func(n int) *pairwise.Dataset {
		ds := &pairwise.Dataset{N: n, D: d, X: make([]float64, n*d), Y: make([]float64, n)}
		for i := 0; i < n; i++ {
			ds.Y[i] = -1
			if rng.Float64() < 0.3 {
				ds.Y[i] = 1
			}
			r := ds.Row(i)
			for k := range r {
				r[k] = 0.08 * rng.NormFloat64()
			}
			r[0] += 0.6
			if ds.Y[i] > 0 {
				r[1] += 0.06
				r[2] += 0.04
			}
		}
		return ds
	}
	train, test := mk(n), mk(4000)
	obj, err := pairwise.NewObjective(train, pairwise.ObjectiveConfig{Loss: pairwise.AUCSquare{}, Radius: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The non-private ceiling: exact pooled statistics, tiny ridge.
	w0, _, err := SolveSSP(SSPStatsOf(train, SSPPooled), 1e-9)
	if err != nil {
		t.Fatal(err)
	}
	ceiling := pairwise.LinearAUC(w0, test)
	var centred, once float64
	const seeds = 10
	for seed := uint64(1); seed <= seeds; seed++ {
		priv := &pairwise.Privacy{Epsilon: 1, Delta: 1e-5, FeatureRadius: 1, Noise: dp.NewSeededNoise(seed)}
		res, err := ldaAlg.Run(context.Background(), obj, pairwise.RunConfig{Privacy: priv}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := pairwise.LinearAUC(res.W, test)
		if got < ceiling-0.03 {
			t.Errorf("seed %d: dp-lda AUC %.4f, non-private ceiling %.4f: centring lost more than 0.03", seed, got, ceiling)
		}
		if rep := res.Privacy; rep.Releases != 2 || !(rep.CertifiedEpsilon <= 1 && rep.CertifiedEpsilon > 0.99) || rep.CertifiedDelta > 1e-5 {
			t.Errorf("report: %d releases, certified (%v, %v) for (1, 1e-5)", rep.Releases, rep.CertifiedEpsilon, rep.CertifiedDelta)
		}
		centred += got / seeds
		res, err = runSSP(context.Background(), sspMeanAlg, SSPPooled, obj, pairwise.RunConfig{Privacy: priv})
		if err != nil {
			t.Fatal(err)
		}
		once += pairwise.LinearAUC(res.W, test) / seeds
	}
	if !(centred > once) {
		t.Errorf("mean AUC over %d seeds: centred %.4f ≤ one uncentred release %.4f", seeds, centred, once)
	}
	t.Logf("mean AUC over %d seeds: dp-lda %.4f, one uncentred release %.4f, non-private ceiling %.4f", seeds, centred, once, ceiling)
}
