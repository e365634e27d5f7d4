package dp

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// table returns a rowTo over a row-major matrix.
func table(x [][]float64) func(dst []float64, i int) []float64 {
	return func(dst []float64, i int) []float64 { return append(dst[:0], x[i]...) }
}

func TestRangeBinEdges(t *testing.T) {
	const minExp, maxExp = -3, 5
	K := maxExp - minExp
	rng := rand.New(rand.NewPCG(1, 2))
	vals := []float64{0, 0.125, -0.125, 0.1250001, 1, 2, -2, 3, 32, -32, 33, 1e9, -1e9, math.SmallestNonzeroFloat64}
	for i := 0; i < 2000; i++ {
		vals = append(vals, (rng.Float64()*2-1)*math.Ldexp(1, rng.IntN(12)-4))
	}
	for _, v := range vals {
		b := rangeBin(v, minExp, maxExp)
		if b < 0 || b > 2*K {
			t.Fatalf("rangeBin(%v) = %d outside [0, %d]", v, b, 2*K)
		}
		lo, hi := rangeEdges(b, minExp, maxExp)
		if !(lo < hi) {
			t.Fatalf("bin %d: edges [%v, %v]", b, lo, hi)
		}
		top := math.Ldexp(1, maxExp)
		if math.Abs(v) <= top && (v < lo || v > hi) {
			t.Fatalf("rangeBin(%v) = %d with edges [%v, %v]: value outside its bin", v, b, lo, hi)
		}
		if v > top && b != 2*K || v < -top && b != 0 {
			t.Fatalf("rangeBin(%v) = %d: values beyond ±2^MaxExp belong to the outermost bins", v, b)
		}
	}
	// Bins are sorted by value: edges increase with the index.
	prevHi := math.Inf(-1)
	for b := 0; b <= 2*K; b++ {
		lo, hi := rangeEdges(b, minExp, maxExp)
		if lo < prevHi {
			t.Fatalf("bin %d starts at %v before the previous bin ends at %v", b, lo, prevHi)
		}
		prevHi = hi
	}
}

// TestRangeSensitivity checks the sensitivity argument by brute force:
// replacing any one record of random small datasets changes the d·B
// counts by at most √(2d) in ℓ2 and 2d in ℓ1.
func TestRangeSensitivity(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func() float64 {
		switch rng.IntN(4) {
		case 0:
			return 0
		case 1:
			return math.Ldexp(1, rng.IntN(40)-20) * float64(1-2*rng.IntN(2))
		}
		return rng.NormFloat64() * math.Ldexp(1, rng.IntN(20)-5)
	}
	for trial := 0; trial < 200; trial++ {
		n, d := 1+rng.IntN(6), 1+rng.IntN(4)
		x := make([][]float64, n)
		for i := range x {
			x[i] = make([]float64, d)
			for j := range x[i] {
				x[i][j] = draw()
			}
		}
		base, err := rangeCounts(n, d, table(x), -12, 30)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			y := append([][]float64(nil), x...)
			y[i] = make([]float64, d)
			for j := range y[i] {
				y[i][j] = draw()
			}
			c, _ := rangeCounts(n, d, table(y), -12, 30)
			var l1, l2 float64
			for k := range c {
				l1 += math.Abs(c[k] - base[k])
				l2 += (c[k] - base[k]) * (c[k] - base[k])
			}
			if l1 > 2*float64(d) || math.Sqrt(l2) > math.Sqrt(2*float64(d))+1e-12 {
				t.Fatalf("n=%d d=%d: replacing record %d changed the counts by ℓ1 %v, ℓ2 %v > bounds 2d = %d, √(2d) = %v", n, d, i, l1, math.Sqrt(l2), 2*d, math.Sqrt(2*float64(d)))
			}
		}
	}
}

// TestRangeAccounting: the stated release is certified at the requested
// budget by the accountants, for both mechanisms.
func TestRangeAccounting(t *testing.T) {
	x := [][]float64{{1, 2, 3}, {4, 5, 6}}
	for _, c := range []RangeConfig{{Epsilon: 0.1, Delta: 1e-6}, {Epsilon: 1, Delta: 1e-5}, {Epsilon: 8, Delta: 1e-9}, {Epsilon: 0.5}, {Epsilon: 2}} {
		r, err := EstimateRanges(len(x), 3, table(x), c, NewSeededNoise(1))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Compose([]Release{r.Release}, c.Delta)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Best.Epsilon > c.Epsilon*(1+1e-9) {
			t.Errorf("%+v: the accountants certify ε = %v > requested %v (%s, σ = %v)", c, rep.Best.Epsilon, c.Epsilon, r.Mechanism, r.Sigma)
		}
		want := "gaussian"
		if c.Delta == 0 {
			want = "laplace"
		}
		if r.Mechanism != want || r.Secure {
			t.Errorf("%+v: mechanism %s (want %s), secure %v with seeded noise", c, r.Mechanism, want, r.Secure)
		}
		// Exactness: a 1 % smaller noise scale would not be certified.
		smaller := r.Release
		if smaller.Mechanism == MechanismGaussian {
			smaller.Sigma *= 0.99
		} else {
			smaller.Scale *= 0.99
		}
		rep2, err := Compose([]Release{smaller}, c.Delta)
		if err != nil {
			t.Fatal(err)
		}
		if rep2.Best.Epsilon <= c.Epsilon {
			t.Errorf("%+v: σ·0.99 is still certified (ε = %v): the calibration is not tight", c, rep2.Best.Epsilon)
		}
	}
}

// TestRangeAccuracy: on synthetic data with known octaves the estimate
// finds them exactly. The bulk bins hold thousands of records (τ ≈ 50), so
// the only way to fail is an empty bin beyond the bulk passing τ, which
// happens with probability ≤ β = 1e-4 by construction: the false-failure
// rate of this test (with its fixed seed it is deterministic).
func TestRangeAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 20000
	x := make([][]float64, n)
	for i := range x {
		x[i] = []float64{
			32 + 96*rng.Float64(),        // U[32, 128]: octaves (16, 32] (x = 32 only, never drawn), (32, 64] and (64, 128]
			-5 + 10*rng.Float64(),        // U[−5, 5]: (−8, −4] … (4, 8]
			1000 + 100*rng.NormFloat64(), // N(1000, 100²): (512, 1024] and (1024, 2048]
			0.01 * rng.Float64(),         // U[0, 0.01]: a small scale
		}
	}
	// Trim < 0: the edges of the outermost detected bins (no trimming).
	for _, c := range []RangeConfig{{Epsilon: 0.5, Delta: 1e-6, Beta: 1e-4, Trim: -1}, {Epsilon: 1, Beta: 1e-4, Trim: -1}} {
		r, err := EstimateRanges(n, 4, table(x), c, NewSeededNoise(7))
		if err != nil {
			t.Fatal(err)
		}
		want := [][2]float64{{32, 128}, {-8, 8}, {512, 2048}}
		for j, w := range want {
			if !r.Found[j] || r.Lo[j] != w[0] || r.Hi[j] != w[1] {
				t.Errorf("%s: feature %d: range [%v, %v] (found %v), want [%v, %v]", r.Mechanism, j+1, r.Lo[j], r.Hi[j], r.Found[j], w[0], w[1])
			}
		}
		// U[0, 0.01]: the top octave (2^−7, 2^−6] ∋ 0.01 is found; the
		// bottom one passing depends on how many records reach it, but it
		// must lie within [2^−12, 2^−7] (the centre bin edge or above).
		if !r.Found[3] || r.Hi[3] != 1.0/64 || r.Lo[3] < -math.Ldexp(1, -12) || r.Lo[3] > 1.0/128 {
			t.Errorf("%s: feature 4: range [%v, %v], want hi = 2^-6 and lo in [−2^-12, 2^-7]", r.Mechanism, r.Lo[3], r.Hi[3])
		}
	}
}

// TestRangeSmallDataFallsBack: with too few records for the budget no bin
// passes the threshold, and every feature gets the public fallback [−1, 1].
// Failure needs a true count of ≤ 40 to beat τ ≈ 4σ with σ ≈ 100, or an
// empty bin to pass τ (probability ≤ β = 0.01 for the whole release).
func TestRangeSmallDataFallsBack(t *testing.T) {
	x := make([][]float64, 40)
	for i := range x {
		x[i] = []float64{float64(i), -float64(i) * 100}
	}
	r, err := EstimateRanges(len(x), 2, table(x), RangeConfig{Epsilon: 0.1, Delta: 1e-5}, NewSeededNoise(8))
	if err != nil {
		t.Fatal(err)
	}
	for j := 0; j < 2; j++ {
		if r.Found[j] || r.Lo[j] != -1 || r.Hi[j] != 1 {
			t.Errorf("feature %d: [%v, %v] found %v, want the fallback [−1, 1]", j+1, r.Lo[j], r.Hi[j], r.Found[j])
		}
	}
	if r.Threshold < 3*r.Sigma {
		t.Errorf("threshold %v below 3σ = %v", r.Threshold, 3*r.Sigma)
	}
}

func TestRangeErrors(t *testing.T) {
	good := [][]float64{{1}, {2}}
	cases := []struct {
		x    [][]float64
		cfg  RangeConfig
		want string
	}{
		{good, RangeConfig{Epsilon: 0}, "ε = 0"},
		{good, RangeConfig{Epsilon: math.Inf(1)}, "ε = +Inf"},
		{good, RangeConfig{Epsilon: 1, Delta: 1}, "δ = 1"},
		{good, RangeConfig{Epsilon: 1, Beta: 2}, "β = 2"},
		{good, RangeConfig{Epsilon: 1, MinExp: 3, MaxExp: 2}, "octave grid"},
		{good, RangeConfig{Epsilon: 1, Trim: 0.5}, "trim q = 0.5"},
		{good, RangeConfig{Mu: -1}, "μ = -1"},
		{good, RangeConfig{Mu: 1, Epsilon: 1}, "not both"},
		{[][]float64{{1}, {math.NaN()}}, RangeConfig{Epsilon: 1}, "record 1, feature 1: value NaN"},
	}
	for _, c := range cases {
		_, err := EstimateRanges(len(c.x), 1, table(c.x), c.cfg, NewSeededNoise(1))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "dp: ") {
			t.Errorf("%+v: error %v, want one containing %q", c.cfg, err, c.want)
		}
	}
}

func TestSplitBudget(t *testing.T) {
	for _, c := range [][3]float64{{1, 1e-5, 0.1}, {0.3, 1.0 / 7, 0.05}, {8, 0, 0.5}, {1e-9, 1e-300, 0.999}} {
		re, rd, te, td, err := SplitBudget(c[0], c[1], c[2])
		if err != nil {
			t.Fatal(err)
		}
		if re+te > c[0] || rd+td > c[1] || re <= 0 || te <= 0 || rd < 0 || td < 0 {
			t.Errorf("SplitBudget%v = (%v, %v) + (%v, %v): shares must be positive and sum to at most the request", c, re, rd, te, td)
		}
		if math.Abs(re-c[2]*c[0]) > 1e-15*c[0] {
			t.Errorf("SplitBudget%v: range ε %v, want %v", c, re, c[2]*c[0])
		}
	}
	for _, c := range [][3]float64{{0, 1e-5, 0.1}, {1, -1, 0.1}, {1, 1e-5, 0}, {1, 1e-5, 1}, {1, 1e-5, math.NaN()}} {
		if _, _, _, _, err := SplitBudget(c[0], c[1], c[2]); err == nil {
			t.Errorf("SplitBudget%v: no error", c)
		}
	}
}

// TestRangeMuCalibration: a μ-GDP release has Δ₂′/σ ≤ μ for the snapped
// sensitivity, tightly (σ one part in 10⁹ smaller breaks it), and the
// accountants certify at most the ε of μ-GDP.
func TestRangeMuCalibration(t *testing.T) {
	x := [][]float64{{1, 2, 3}, {4, 5, 6}}
	for _, mu := range []float64{0.01, 0.1, 0.5, 2} {
		r, err := EstimateRanges(len(x), 3, table(x), RangeConfig{Mu: mu}, NewSeededNoise(1))
		if err != nil {
			t.Fatal(err)
		}
		if r.Mechanism != "gaussian" || r.Mu != mu || r.Coordinates != 3*85 || r.Coordinates != RangeCoordinates(3, RangeConfig{}) {
			t.Fatalf("μ = %v: %+v", mu, r)
		}
		l2 := math.Sqrt(6)
		snapped := SnappedL2Sensitivity(l2, GaussianGranularity(r.Sigma), r.Coordinates)
		if snapped/r.Sigma > mu {
			t.Errorf("μ = %v: Δ′/σ = %v exceeds μ", mu, snapped/r.Sigma)
		}
		if s := r.Sigma * (1 - 1e-9); SnappedL2Sensitivity(l2, GaussianGranularity(s), r.Coordinates)/s <= mu {
			t.Errorf("μ = %v: σ = %v is not the smallest (σ·(1 − 1e-9) also passes)", mu, r.Sigma)
		}
		eps, err := GaussianDPEpsilon(mu, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Compose([]Release{r.Release}, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Best.Epsilon > eps*(1+1e-9) {
			t.Errorf("μ = %v: accountants give ε = %v at δ = 1e-6 > %v of μ-GDP", mu, rep.Best.Epsilon, eps)
		}
	}
}

// TestRangeTrimmedQuantiles checks the trimmed-quantile read-out on data
// uniform inside each octave bin, where linear interpolation is exact.
//
// Feature 1 puts each record in one of the octaves (0.25, 0.5], (0.5, 1],
// …, (4, 8] with probability 1/5, uniform inside it; feature 2 is its
// negative. Two checks:
//
//  1. Without noise (exact counts, τ = 0) the estimate is the empirical
//     q and 1 − q quantile of the sample, up to the within-bin empirical
//     CDF: by the DKW inequality, given the bin's count c the deviation
//     exceeds 4/√c of the bin width with probability ≤ 2e^(−32).
//  2. With the μ-GDP noise (σ = 40 for μ = 0.05, d = 2) the estimate moves
//     from the exact-count one only through the noise of at most m = 5
//     detected bins' cumulative count and of the total: the target count
//     moves by at most (1 + q)·z·σ·√m with z = 6 (each sum a Gaussian:
//     two-sided tail ≤ 2e-9 each), i.e. by that over c ≈ 4000 records of
//     the bin, times its width. No empty bin passes τ except with
//     probability β = 1e-6.
//
// False-failure rate ≤ 1e-6 + 1e-8 (with the fixed seeds the test is
// deterministic).
func TestRangeTrimmedQuantiles(t *testing.T) {
	const n, q = 20000, 0.02
	rng := rand.New(rand.NewPCG(11, 12))
	x := make([][]float64, n)
	for i := range x {
		k := rng.IntN(5) // octave (2^(k−2), 2^(k−1)]
		a := math.Ldexp(1, k-2)
		v := a + a*(1-rng.Float64()) // (a, 2a]
		x[i] = []float64{v, -v}
	}
	// Empirical quantiles of the sample.
	col := make([]float64, n)
	for i := range x {
		col[i] = x[i][0]
	}
	slices.Sort(col)
	empLo, empHi := col[int(q*n)], col[int((1-q)*n)]
	counts, err := rangeCounts(n, 2, table(x), -12, 30)
	if err != nil {
		t.Fatal(err)
	}
	B := 85
	binOf := func(v float64) (c, width float64) {
		b := rangeBin(v, -12, 30)
		lo, hi := rangeEdges(b, -12, 30)
		return counts[b], hi - lo
	}
	exLo, exHi, found := trimmedRange(counts[:B], 0, q, -12, 30)
	if !found {
		t.Fatal("exact counts: nothing found")
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"lo", exLo, empLo}, {"hi", exHi, empHi}} {
		cnt, w := binOf(c.want)
		if tol := w * (4/math.Sqrt(cnt) + 1/cnt); math.Abs(c.got-c.want) > tol {
			t.Errorf("exact counts: %s = %v, empirical quantile %v (tolerance %v)", c.name, c.got, c.want, tol)
		}
	}
	// The negated feature: the mirror image.
	nLo, nHi, _ := trimmedRange(counts[B:], 0, q, -12, 30)
	if math.Abs(nLo+exHi) > 1e-9*exHi || math.Abs(nHi+exLo) > 1e-9*exHi {
		t.Errorf("negated feature: [%v, %v], want the mirror of [%v, %v]", nLo, nHi, exLo, exHi)
	}
	r, err := EstimateRanges(n, 2, table(x), RangeConfig{Mu: 0.05, Beta: 1e-6}, NewSeededNoise(13))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.Sigma-40) > 1e-6 {
		t.Fatalf("σ = %v, want 40", r.Sigma)
	}
	shift := (1 + q) * 6 * r.Sigma * math.Sqrt(5)
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"lo", r.Lo[0], exLo}, {"hi", r.Hi[0], exHi}, {"−hi", r.Lo[1], -exHi}, {"−lo", r.Hi[1], -exLo}} {
		cnt, w := binOf(math.Abs(c.want))
		if tol := shift / cnt * w; math.Abs(c.got-c.want) > tol {
			t.Errorf("noisy: %s = %v, exact-count estimate %v (tolerance %v)", c.name, c.got, c.want, tol)
		}
	}
}
