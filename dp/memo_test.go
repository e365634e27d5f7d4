package dp

import (
	"fmt"
	"github.com/pairfed/pairfed/internal/memo"
	"math"
	"sync"
	"testing"
)

// uncached runs f with every memo bypassed: the reference computation.
func uncached(f func()) {
	memo.Bypass.Store(true)
	defer memo.Bypass.Store(false)
	f()
}

func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// The cached accountant returns the uncached one's results bit for bit,
// on a miss and on a hit, over a grid of rates, multipliers, step counts,
// δ's, both relations and secure coordinate counts (0: continuous), errors
// included (q = 0, z = 0, steps = 0, δ = 1 are refused the same way).
func TestCacheSubsampledEpsilonBitExact(t *testing.T) {
	type args struct {
		q, z   float64
		steps  int
		delta  float64
		rel    Neighbouring
		coords int64
	}
	var grid []args
	for _, q := range []float64{0.5, 0.04, 1.0 / 3} {
		for _, z := range []float64{0.7, 1.3, 4.1} {
			for _, steps := range []int{1, 37, 250} {
				for _, rel := range []Neighbouring{AddRemove, ReplaceOne} {
					for _, coords := range []int64{0, int64(steps) * 9} {
						grid = append(grid, args{q, z, steps, 1e-5, rel, coords})
					}
				}
			}
		}
	}
	grid = append(grid, args{0.1, 2, 10, 1.0 / 3000, ReplaceOne, 90}, args{0, 1, 10, 1e-5, AddRemove, 0},
		args{0.1, 0, 10, 1e-5, AddRemove, 0}, args{0.1, 1, 0, 1e-5, AddRemove, 0}, args{0.1, 1, 10, 1, AddRemove, 5},
		args{0.1, 1, 10, 1e-5, "bogus", 0}, args{0.1, 1, 10, 1e-5, AddRemove, -1}, args{math.NaN(), 1, 10, 1e-5, AddRemove, 0})
	type res struct {
		eps   float64
		order int
		err   string
	}
	want := make([]res, len(grid))
	uncached(func() {
		for i, a := range grid {
			e, o, err := SecureSubsampledGaussianEpsilon(a.q, a.z, a.steps, a.delta, a.rel, a.coords)
			want[i] = res{e, o, errText(err)}
		}
	})
	subsampledMemo.Reset()
	subsampledRatesMemo.Reset()
	for pass := range 2 { // a miss, then a hit
		for i, a := range grid {
			e, o, err := SecureSubsampledGaussianEpsilon(a.q, a.z, a.steps, a.delta, a.rel, a.coords)
			if got := (res{e, o, errText(err)}); !sameFloat(got.eps, want[i].eps) || got.order != want[i].order || got.err != want[i].err {
				t.Errorf("pass %d, %+v: cached %+v, uncached %+v", pass, a, got, want[i])
			}
		}
	}
	if subsampledMemo.Len() == 0 || subsampledRatesMemo.Len() == 0 {
		t.Errorf("nothing memoized (%d results, %d curves)", subsampledMemo.Len(), subsampledRatesMemo.Len())
	}
}

// The cached multiplier search returns the uncached search's z bit for bit
// (each uncached search costs a few hundred milliseconds: a small grid),
// and the refusal of an unreachable request the same error.
func TestCacheSubsampledMultiplierBitExact(t *testing.T) {
	type args struct {
		q          float64
		steps      int
		eps, delta float64
		rel        Neighbouring
		coords     int64
	}
	grid := []args{{0.144, 70, 1, 1.0 / 7680, ReplaceOne, 70 * 9}, {0.5, 40, 2, 1e-5, AddRemove, 0},
		{0.04, 250, 0.5, 1e-6, ReplaceOne, 0}, {0.1, 10, -1, 1e-5, ReplaceOne, 90}}
	type res struct {
		z   float64
		err string
	}
	want := make([]res, len(grid))
	uncached(func() {
		for i, a := range grid {
			z, err := SecureSubsampledGaussianMultiplier(a.q, a.steps, a.eps, a.delta, a.rel, a.coords)
			want[i] = res{z, errText(err)}
		}
	})
	multiplierMemo.Reset()
	for pass := range 2 {
		for i, a := range grid {
			z, err := SecureSubsampledGaussianMultiplier(a.q, a.steps, a.eps, a.delta, a.rel, a.coords)
			if got := (res{z, errText(err)}); !sameFloat(got.z, want[i].z) || got.err != want[i].err {
				t.Errorf("pass %d, %+v: cached %+v, uncached %+v", pass, a, got, want[i])
			}
		}
	}
}

// The real accountant under concurrent use: 16 goroutines certifying the
// same and different arguments all get the sequential results.
func TestCacheSubsampledConcurrent(t *testing.T) {
	qs := []float64{0.5, 0.25, 0.125}
	want := make([]float64, len(qs))
	uncached(func() {
		for i, q := range qs {
			want[i], _, _ = SecureSubsampledGaussianEpsilon(q, 1.1, 50, 1e-5, ReplaceOne, 450)
		}
	})
	subsampledMemo.Reset()
	subsampledRatesMemo.Reset()
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 3 {
				i := (g + r) % len(qs)
				e, _, err := SecureSubsampledGaussianEpsilon(qs[i], 1.1, 50, 1e-5, ReplaceOne, 450)
				if err != nil || !sameFloat(e, want[i]) {
					t.Errorf("goroutine %d, q = %v: %v (%v), want %v", g, qs[i], e, err, want[i])
				}
			}
		}()
	}
	wg.Wait()
}

// refSubsampledGaussianRDP is SubsampledGaussianRDP as it was before the
// log table (math.Log for log C(α, k), math.Max, a fresh slice): the
// reference the faster one must equal bit for bit.
func refSubsampledGaussianRDP(alpha int, q, z float64) float64 {
	if q == 0 {
		return 0
	}
	a := float64(alpha)
	if q == 1 {
		return GaussianRDP(a, 1, z)
	}
	lq, l1q := math.Log(q), math.Log1p(-q)
	inv := 1 / (2 * z * z)
	terms := make([]float64, alpha+1)
	var lc, maxT, errMax float64
	maxT = math.Inf(-1)
	for k := 0; k <= alpha; k++ {
		if k > 0 {
			lc += math.Log(float64(alpha-k+1)) - math.Log(float64(k))
		}
		kf := float64(k)
		p1, p2, p3 := (a-kf)*l1q, kf*lq, (kf*kf-kf)*inv
		t := lc + p1 + p2 + p3
		terms[k] = t
		e := float64(32*k+64) * acctU * (math.Abs(lc) + math.Abs(p1) + math.Abs(p2) + math.Abs(p3) + 1)
		errMax = math.Max(errMax, e)
		maxT = math.Max(maxT, t)
	}
	var s float64
	for _, t := range terms {
		s += math.Exp(t - maxT)
	}
	lse := maxT + math.Log(s)
	e := errMax + float64(alpha+32)*acctU*(1+math.Abs(lse))
	tau := acctUp((lse+e)/(a-1), 8)
	if tau < 0 {
		return 0
	}
	return tau
}

// refSubsampledEpsilon and refSubsampledMultiplier are the accountant and
// its bisection as they were (full curve at every z, reference RDP).
func refSubsampledEpsilon(q, z float64, steps int, delta float64, rel Neighbouring) float64 {
	e, _ := refSubsampledEpsilonOrder(q, z, steps, delta, rel)
	return e
}

func refSubsampledEpsilonOrder(q, z float64, steps int, delta float64, rel Neighbouring) (float64, int) {
	ar := make([]float64, 2*SubsampledMaxOrder+1)
	for a := 2; a < len(ar); a++ {
		ar[a] = acctUp(float64(steps)*refSubsampledGaussianRDP(a, q, z), 2)
	}
	eps, order := math.Inf(1), 0
	for a := 2; a <= SubsampledMaxOrder; a++ {
		c := ar[a]
		if rel == ReplaceOne {
			af := float64(a)
			c = acctSumUp(acctUp((af-0.5)/(af-1)*ar[2*a], 4), ar[2*a-1])
		}
		if e, _ := rdpToDPUp(float64(a), c, delta); e < eps {
			eps, order = e, a
		}
	}
	return eps, order
}

func refSubsampledMultiplier(q float64, steps int, eps, delta float64, rel Neighbouring) float64 {
	ok := func(z float64) bool { return refSubsampledEpsilon(q, z, steps, delta, rel) <= eps }
	lo, hi := 0.0, 1.0
	for !ok(hi) {
		lo, hi = hi, 2*hi
		if hi > 1e12 {
			return math.NaN()
		}
	}
	for hi-lo > 1e-9*hi {
		m := (lo + hi) / 2
		if ok(m) {
			hi = m
		} else {
			lo = m
		}
	}
	return hi
}

// The faster RDP (log table, inline max, stack buffer) equals the
// original bit for bit, and subsampledRDPLower is ≥ 0 and ≤ it (NaN aside), at every order 2 … 2·SubsampledMaxOrder + 3 (past
// the table too) over a grid of q and z, extreme ones included (z tiny:
// infinite and NaN terms; q subnormal).
func TestCacheRDPMatchesReference(t *testing.T) {
	for _, q := range []float64{1e-6, 0.004, 0.04, 1.0 / 3, 0.5, 0.999, 1, 5e-324} {
		for _, z := range []float64{1e-200, 0.05, 0.6, 1.1, 3.7, 50} {
			for a := 2; a <= 2*SubsampledMaxOrder+3; a++ {
				got, want := SubsampledGaussianRDP(a, q, z), refSubsampledGaussianRDP(a, q, z)
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("α = %d, q = %v, z = %v: %v, reference %v", a, q, z, got, want)
				}
				if lo := subsampledRDPLower(a, q, z); !(lo >= 0) || (!math.IsNaN(got) && lo > got) {
					t.Fatalf("α = %d, q = %v, z = %v: lower bound %v above τ = %v", a, q, z, lo, got)
				}
			}
		}
	}
}

// The order-by-order bisection returns the original bisection's z bit for
// bit (the decisions are the same), both relations.
func TestCacheMultiplierMatchesReference(t *testing.T) {
	for _, c := range []struct {
		q          float64
		steps      int
		eps, delta float64
		rel        Neighbouring
	}{{0.144, 70, 1, 1.0 / 7680, ReplaceOne}, {0.5, 40, 2, 1e-5, AddRemove}, {0.004, 2500, 0.5, 1e-6, ReplaceOne}, {0.3, 3, 8, 1e-3, ReplaceOne}, {0.01, 10000, 1, 1e-5, AddRemove}, {0.9, 5, 0.1, 1e-8, ReplaceOne}} {
		var got float64
		var err error
		uncached(func() { got, err = SubsampledGaussianMultiplier(c.q, c.steps, c.eps, c.delta, c.rel) })
		want := refSubsampledMultiplier(c.q, c.steps, c.eps, c.delta, c.rel)
		if err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%+v: z = %v (%v), reference %v", c, got, err, want)
		}
	}
}

// The branch-and-bound accountant returns the original's ε and order bit
// for bit over a grid (both relations, tiny to large z, small to large δ).
func TestCacheEpsilonMatchesReference(t *testing.T) {
	for _, q := range []float64{0.004, 0.144, 0.5, 1} {
		for _, z := range []float64{1e-200, 0.8, 1.3, 20} {
			for _, steps := range []int{1, 2500} {
				for _, delta := range []float64{1e-9, 0.01} {
					for _, rel := range []Neighbouring{AddRemove, ReplaceOne} {
						var e float64
						var o int
						var err error
						uncached(func() { e, o, err = SubsampledGaussianEpsilon(q, z, steps, delta, rel) })
						we, wo := refSubsampledEpsilonOrder(q, z, steps, delta, rel)
						if err != nil || math.Float64bits(e) != math.Float64bits(we) || o != wo {
							t.Fatalf("q = %v, z = %v, %d steps, δ = %v, %s: ε = %v at α = %d (%v), reference %v at %d", q, z, steps, delta, rel, e, o, err, we, wo)
						}
					}
				}
			}
		}
	}
}

// CertifyGaussian's memo returns the uncached certificate bit for bit, on
// a miss and on a hit, errors included, and keys every input: plans that
// differ only in one σ, in Dim, Coordinates, Disjoint or FailureDelta, or
// requests that differ in ε or δ, get their own certificates.
func TestCacheCertifyGaussianBitExact(t *testing.T) {
	type args struct {
		p          GaussianPlan
		sig        []float64
		eps, delta float64
	}
	seq := GaussianPlan{Sensitivities: []float64{1, 0.5, 0.5}, Dim: 18}
	grid := []args{
		{seq, []float64{8.6, 12.2, 12.2}, 1, 1e-4},
		{seq, []float64{8.6, 12.2, 12.3}, 1, 1e-4},
		{seq, []float64{8.6, 12.2, 12.2}, 0.5, 1e-4},
		{seq, []float64{8.6, 12.2, 12.2}, 1, 1e-6},
		{GaussianPlan{Sensitivities: []float64{1, 0.5, 0.5}, Dim: 19}, []float64{8.6, 12.2, 12.2}, 1, 1e-4},
		{GaussianPlan{Sensitivities: []float64{1, 0.5, 0.5}, Dim: 18, Coordinates: 1000}, []float64{8.6, 12.2, 12.2}, 1, 1e-4},
		{GaussianPlan{Sensitivities: []float64{1, 0.5, 0.5}, Dim: 18, Disjoint: true}, []float64{8.6, 12.2, 12.2}, 1, 1e-4},
		{GaussianPlan{Sensitivities: []float64{1, 0.5, 0.5}, Dim: 18, FailureDelta: 1e-6}, []float64{8.6, 12.2, 12.2}, 1, 1e-4},
		{GaussianPlan{Sensitivities: []float64{1}}, []float64{3}, 1, 1e-5},
		{GaussianPlan{Sensitivities: []float64{0}}, []float64{0}, 1, 1e-5},
		{seq, []float64{8.6, 12.2}, 1, 1e-4},          // σ count ≠ plan: refused
		{seq, []float64{8.6, 12.2, 12.2}, -1, 1e-4},   // ε < 0: refused
		{seq, []float64{8.6, 12.2, 12.2}, 1, 1},       // δ = 1: refused
		{seq, []float64{8.6, 12.2, math.NaN()}, 1, 1}, // NaN σ: never a hit
	}
	type res struct {
		c   Certificate
		err string
	}
	same := func(a, b res) bool {
		return sameFloat(a.c.Mu, b.c.Mu) && sameFloat(a.c.Epsilon, b.c.Epsilon) && sameFloat(a.c.Delta, b.c.Delta) &&
			sameFloat(a.c.DiscreteDelta, b.c.DiscreteDelta) && a.err == b.err
	}
	want := make([]res, len(grid))
	uncached(func() {
		for i, a := range grid {
			c, err := CertifyGaussian(a.p, a.sig, a.eps, a.delta)
			want[i] = res{c, errText(err)}
		}
	})
	distinct := map[string]bool{}
	for _, w := range want[:8] {
		distinct[fmt.Sprint(w)] = true
	}
	if len(distinct) < 7 {
		t.Fatalf("the grid's first 8 requests give %d distinct certificates: it does not test the key", len(distinct))
	}
	certifyMemo.Reset()
	for pass := range 2 {
		for i, a := range grid {
			c, err := CertifyGaussian(a.p, a.sig, a.eps, a.delta)
			if got := (res{c, errText(err)}); !same(got, want[i]) {
				t.Errorf("pass %d, request %d: cached %+v, uncached %+v", pass, i, got, want[i])
			}
		}
	}
	if n := certifyMemo.Len(); n == 0 || n > len(grid) {
		t.Errorf("memo holds %d entries after %d distinct requests", n, len(grid))
	}
}
