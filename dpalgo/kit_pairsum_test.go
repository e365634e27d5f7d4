package dpalgo

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pairfed/pairfed/pairwise"
)

// A gradient round's vector has replace-one ℓ2 sensitivity ≤ 2 for every
// broadcast (brute force over random broadcasts, including ones far from
// any (w, b) the coordinator sends, records far outside the R-ball, label
// flips and records built to push their term the other way), and 2 is
// approached: the bound is tight.
func TestPairSumRoundSensitivity(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const d, n = 3, 6
	worst := 0.0
	for trial := 0; trial < 3000; trial++ {
		ds := spaucData(rng, n, d, 3)
		v := make([]float64, d)
		for k := range v {
			v[k] = rng.NormFloat64() * []float64{0.01, 1, 30, 1e3}[trial%4]
		}
		S := []float64{0.5, 8, 100}[trial%3]
		base, err := PairSumRoundVector(ds, v, S, 1)
		if err != nil {
			t.Fatal(err)
		}
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
			pairwise.Scale(-5, row) // the other side of the threshold, far out
		}
		got, err := PairSumRoundVector(alt, v, S, 1)
		if err != nil {
			t.Fatal(err)
		}
		diff := make([]float64, len(got))
		for k := range diff {
			diff[k] = got[k] - base[k]
		}
		dn := pairwise.Norm2(diff)
		if dn > PairSumSensitivity*(1+1e-12) {
			t.Fatalf("trial %d: replacing record %d moved the vector by %v > %v", trial, i, dn, PairSumSensitivity)
		}
		worst = math.Max(worst, dn)
	}
	// Two records of one class with clipped terms in opposite directions:
	// x = (−3, 0, 0) and x' = (3, 0, 0) at w ∥ e₂ (score b for both), b = 0:
	// t(x) and t(x') are unit vectors (clipped) whose x-parts are opposite.
	ds := &pairwise.Dataset{N: 1, D: 3, X: []float64{-3, 0, 0}, Y: []float64{1}}
	alt := &pairwise.Dataset{N: 1, D: 3, X: []float64{3, 0, 0}, Y: []float64{1}}
	v := PairEncodeBroadcast([]float64{0, 1, 0}, 0, 8)
	a, _ := PairSumRoundVector(ds, v, 8, 1)
	b, _ := PairSumRoundVector(alt, v, 8, 1)
	for k := range a {
		a[k] -= b[k]
	}
	worst = math.Max(worst, pairwise.Norm2(a))
	if !(worst > 1.99) {
		t.Errorf("largest change %v: the bound 2 is not approached", worst)
	}
}

// The sum of the sites' vectors is the pooled records' vector whatever the
// partition (single-class sites included): the statistics and the rounds.
func TestPairSumFederatedEqualsPooled(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const d, n = 4, 200
	ds := spaucData(rng, n, d, 1)
	var pos, neg []int
	for i := 0; i < n; i++ {
		if ds.Y[i] > 0 {
			pos = append(pos, i)
		} else {
			neg = append(neg, i)
		}
	}
	parts := []*pairwise.Dataset{ds.Subset(pos[:30]), ds.Subset(pos[30:]), ds.Subset(neg[:70]), ds.Subset(neg[70:])}
	v := PairEncodeBroadcast([]float64{0.3, -1, 0.2, 0.5}, 0.7, 8)
	want, _ := PairSumRoundVector(ds, v, 8, 1)
	wantStats := PairSumStatsVector(ds, 1)
	got, gotStats := make([]float64, len(want)), make([]float64, len(wantStats))
	for _, p := range parts {
		x, err := PairSumRoundVector(p, v, 8, 1)
		if err != nil {
			t.Fatal(err)
		}
		pairwise.Axpy(1, x, got)
		pairwise.Axpy(1, PairSumStatsVector(p, 1), gotStats)
	}
	for k := range want {
		if math.Abs(got[k]-want[k]) > 1e-9 {
			t.Fatalf("round vector %d: sites %v, pooled %v", k, got[k], want[k])
		}
	}
	for k := range wantStats {
		if math.Abs(gotStats[k]-wantStats[k]) > 1e-9 {
			t.Fatalf("statistics %d: sites %v, pooled %v", k, gotStats[k], wantStats[k])
		}
	}
	// A single-class site's vector has its other class's block at 0.
	x, _ := PairSumRoundVector(parts[0], v, 8, 1)
	if pairwise.Norm2(x[d+1:]) != 0 || !(pairwise.Norm2(x[:d+1]) > 0) {
		t.Errorf("positive-only site: blocks %v", x)
	}
}

// The broadcast carries (w, b) exactly (b within [−S, S]); any vector
// decodes to w on the sphere of radius S and b in [−S, S].
func TestPairBroadcastRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 200; trial++ {
		S := 0.5 + 20*rng.Float64()
		w := []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		pairwise.Scale(S/pairwise.Norm2(w), w)
		b := (2*rng.Float64() - 1) * S
		gw, gb := PairDecodeBroadcast(PairEncodeBroadcast(w, b, S), S)
		if math.Abs(gb-b) > 1e-9*S {
			t.Fatalf("b %v decoded as %v", b, gb)
		}
		for k := range w {
			if math.Abs(gw[k]-w[k]) > 1e-9*S {
				t.Fatalf("w %v decoded as %v", w, gw)
			}
		}
		v := []float64{1e6 * rng.NormFloat64(), rng.NormFloat64(), 0}
		gw, gb = PairDecodeBroadcast(v, S)
		if math.Abs(pairwise.Norm2(gw)-S) > 1e-9*S || math.Abs(gb) > S {
			t.Fatalf("v %v decoded as w %v (norm %v), b %v", v, gw, pairwise.Norm2(gw), gb)
		}
	}
	if w, b := PairDecodeBroadcast([]float64{0, 0}, 1); pairwise.Norm2(w) != 0 || b != 0 {
		t.Errorf("zero broadcast decoded as %v, %v", w, b)
	}
}

// Noise-free, the solver starts at the class-mean direction and its steps
// lower the class-balanced pair loss; its state round-trips.
func TestPairSumSolverDescends(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const d, n = 3, 400
	ds := &pairwise.Dataset{N: n, D: d, X: make([]float64, n*d), Y: make([]float64, n)}
	for i := 0; i < n; i++ {
		y := float64(1 - 2*(i%2))
		ds.Y[i] = y
		row := ds.X[i*d : (i+1)*d]
		row[0] = 0.1*y + 0.2*rng.NormFloat64()
		row[1] = 0.3*rng.NormFloat64() + 0.2*y*rng.Float64()
		row[2] = 0.05 * rng.NormFloat64()
		clampBall(row, 1)
	}
	loss := func(w []float64, b float64) float64 {
		var lp, ln, np, nn float64
		for i := 0; i < n; i++ {
			s := ds.Dot(i, w) + b
			if ds.Y[i] > 0 {
				lp, np = lp+math.Log1p(math.Exp(-s)), np+1
			} else {
				ln, nn = ln+math.Log1p(math.Exp(s)), nn+1
			}
		}
		return lp/np + ln/nn
	}
	sol, err := NewPairSumSolver(PairSumStatsVector(ds, 1), d, n, 1, 4, 1, 20)
	if err != nil {
		t.Fatal(err)
	}
	start := loss(sol.W, sol.Bias)
	for r := 0; r < 20; r++ {
		vec, err := PairSumRoundVector(ds, sol.Query(), 4, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := sol.Step(vec); err != nil {
			t.Fatal(err)
		}
		back, err := PairSumSolverFromState(sol.State(), d)
		if err != nil {
			t.Fatal(err)
		}
		sol = back
	}
	if end := loss(sol.W, sol.Bias); !(end < start-1e-3) {
		t.Errorf("20 noise-free steps: loss %v → %v", start, end)
	}
	if out := sol.Output(2); math.Abs(pairwise.Norm2(out)-2) > 1e-9 {
		t.Errorf("output norm %v, want 2", pairwise.Norm2(out))
	}
	if _, err := PairSumSolverFromState(append(sol.State(), 1), d); err == nil {
		t.Error("a state of the wrong length was accepted")
	}
}

// The default rule: T = ⌈τ⌉ in [2, 16] and η = S·min(1, τ/T), τ =
// θ₀/E₁, E₁ = κ·ς·σ₁·√(8(d+1))/n — checked at hand-computed points, and
// monotone: more records or less noise never fewer rounds nor a smaller
// step.
func TestPairSumDefaults(t *testing.T) {
	// E₁ = 0.5·1·10·√(8·9)/1000 = 0.042426…, τ = 0.1/E₁ = 2.357…: T = 3,
	// η = 8·2.357/3 = 6.285….
	if T, eta := PairSumDefaults(1000, 8, 10, 1, 8, 0.1, 0); T != 3 || math.Abs(eta-8*0.1/(0.5*10*math.Sqrt(72)/1000)/3) > 1e-12 {
		t.Fatalf("rule at τ ≈ 2.36: T = %d, η = %v", T, eta)
	}
	if T, eta := PairSumDefaults(100, 8, 10, 1, 8, 0.1, 0); T != 2 || !(eta < 8*0.25) {
		t.Fatalf("τ < 2: T = %d, η = %v (want 2 rounds of shorter steps)", T, eta)
	}
	if T, eta := PairSumDefaults(1_000_000, 8, 10, 1, 8, 0.1, 0); T != 16 || eta != 8 {
		t.Fatalf("τ ≫ 16: T = %d, η = %v (want 16 full steps)", T, eta)
	}
	if T, eta := PairSumDefaults(1000, 8, 10, 1, 8, 0.1, 5); T != 5 || math.Abs(eta-8*2.357022603955159/5) > 1e-9 {
		t.Fatalf("T asked: T = %d, η = %v", T, eta)
	}
	prevT, prevEta := 0, 0.0
	for n := 10; n <= 1<<20; n *= 2 {
		T, eta := PairSumDefaults(n, 20, 7, 2, 8, PairSumTheta, 0)
		if T < prevT || (T == prevT && eta < prevEta) || T < 2 || T > 16 || !(eta > 0 && eta <= 8) {
			t.Fatalf("n = %d: T = %d, η = %v after T = %d, η = %v", n, T, eta, prevT, prevEta)
		}
		prevT, prevEta = T, eta
	}
}
