package dpalgo

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// Adding one record anywhere in a batch's order (or at either end) changes
// the sum of clipped previous-instance pair gradients by at most 2C for the
// AUC losses and 3C for metric learning; random batches come within 1% of
// 2C, and a one-dimensional metric example attains 3C.
func TestPairSGDBatchSensitivity(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		task pairwise.Task
		loss pairwise.Loss
	}{{pairwise.TaskAUC, pairwise.AUCHinge{}}, {pairwise.TaskAUC, pairwise.AUCLogistic{}}, {pairwise.TaskAUC, pairwise.AUCSquare{}}, {pairwise.TaskMetric, pairwise.MetricHinge{}}, {pairwise.TaskMetric, pairwise.MetricLogistic{}}} {
		var worst float64
		for trial := 0; trial < 40; trial++ {
			d := 1 + rng.IntN(3)
			ds := toyAUC(8, d, 2, rng.Uint64())
			obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Task: c.task, Loss: c.loss, Radius: 3})
			if err != nil {
				t.Fatal(err)
			}
			p := obj.NumParams()
			w := randOnSphere(rng, p, 3*rng.Float64())
			obj.Project(w)
			C := 0.05 + rng.Float64()
			// record 0 is the one added; the batch is a random order of a
			// random subset of the others
			var others []int
			for i := 1; i < ds.N; i++ {
				if rng.IntN(2) == 0 {
					others = append(others, i)
				}
			}
			rng.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
			g0, g1, tmp := make([]float64, p), make([]float64, p), make([]float64, p)
			pairSGDBatchSum(obj, w, g0, tmp, others, C)
			for pos := 0; pos <= len(others); pos++ {
				with := slices.Insert(slices.Clone(others), pos, 0)
				pairSGDBatchSum(obj, w, g1, tmp, with, C)
				pairwise.Axpy(-1, g0, g1)
				ch := pairwise.Norm2(g1)
				bound := 3.0
				if c.task == pairwise.TaskAUC {
					bound = 2
				}
				if !(ch <= bound*C*(1+1e-12)) {
					t.Fatalf("%s %s: adding a record at position %d of %d changed the sum by %v > %gC = %v", c.task, c.loss.Name(), pos, len(others), ch, bound, bound*C)
				}
				worst = math.Max(worst, ch/C)
			}
		}
		t.Logf("%s %s: largest change %.4g·C", c.task, c.loss.Name(), worst)
		if c.task == pairwise.TaskAUC && worst < 1.99 {
			t.Errorf("%s %s: largest change %v·C, the 2C bound is not approached within 1%%", c.task, c.loss.Name(), worst)
		}
	}
	// x = ±1 in one class, the added record at 0 in the other, metric hinge
	// at W = 0: the removed same-class pair and the two added cross pairs
	// are all clipped to C and aligned.
	ds := pairwise.NewDense([]float64{1, -1, 0}, []float64{1, 1, -1}, 1)
	obj, _ := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Task: pairwise.TaskMetric, Loss: pairwise.MetricHinge{}, Radius: 1})
	C := 0.5
	g0, g1, tmp := make([]float64, 1), make([]float64, 1), make([]float64, 1)
	pairSGDBatchSum(obj, []float64{0}, g0, tmp, []int{0, 1}, C)
	pairSGDBatchSum(obj, []float64{0}, g1, tmp, []int{0, 2, 1}, C)
	if ch := math.Abs(g1[0] - g0[0]); math.Abs(ch-3*C) > 1e-12 {
		t.Errorf("worst case: change %v, want 3C = %v", ch, 3*C)
	}
}

// poissonSample includes each index with probability q: over many draws
// the mean batch size is qn within 5 standard errors (false-failure rate
// < 1e-6), every index is in range and increasing, and q = 1 takes all.
func TestPoissonSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	n, q, trials := 1000, 0.03, 2000
	var total int
	counts := make([]int, n)
	for i := 0; i < trials; i++ {
		b := poissonSample(nil, n, q, rng)
		for k, j := range b {
			if j < 0 || j >= n || (k > 0 && j <= b[k-1]) {
				t.Fatalf("batch %v not increasing in [0, n)", b)
			}
			counts[j]++
		}
		total += len(b)
	}
	mean, want := float64(total)/float64(trials), q*float64(n)
	se := math.Sqrt(float64(n) * q * (1 - q) / float64(trials))
	if math.Abs(mean-want) > 5*se {
		t.Errorf("mean batch %v, want %v ± %v", mean, want, 5*se)
	}
	// first and last index are sampled at the same rate as the rest
	for _, j := range []int{0, n - 1} {
		if e, sd := q*float64(trials), math.Sqrt(q*(1-q)*float64(trials)); math.Abs(float64(counts[j])-e) > 5*sd {
			t.Errorf("index %d sampled %d times, want %v ± %v", j, counts[j], e, 5*sd)
		}
	}
	if b := poissonSample(nil, 5, 1, rng); len(b) != 5 {
		t.Errorf("q = 1: %v", b)
	}
}

// dp-pair-sgd end to end on a toy problem: it learns, and its report is
// the subsampled release whose ε the accountant certifies at ≤ the target.
func TestRunPairSGDPrivate(t *testing.T) {
	ds := toyAUC(3000, 4, 2, 23)
	obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Loss: pairwise.AUCHinge{}, Radius: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := pairwise.Lookup("dp-pair-sgd")
	res, err := a.Run(context.Background(), obj, pairwise.RunConfig{Privacy: &pairwise.Privacy{Epsilon: 1, Delta: 1e-4, FeatureRadius: 1, Noise: dp.NewSeededNoise(4)}}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	p := res.Privacy
	if p.Mechanism != "subsampled-gaussian" || p.Releases != res.Steps || len(p.Sigmas) != 1 || !(p.SampleRate > 0) {
		t.Fatalf("report %+v", p)
	}
	e, _, err := dp.SubsampledGaussianEpsilon(p.SampleRate, p.Sigmas[0]/p.Sensitivity[0], p.Releases, p.Delta, dp.Neighbouring(p.Neighbouring))
	if err != nil {
		t.Fatal(err)
	}
	if e > 1 || e < 0.99 {
		t.Errorf("certified ε = %v for a target of 1", e)
	}
	exact, _, _ := SolveSSP(SSPStatsOf(ds, SSPClass), 1e-6)
	if auc, ceil := pairwise.LinearAUC(res.W, ds), pairwise.LinearAUC(exact, ds); auc < ceil-0.05 {
		t.Errorf("AUC %v, non-private square-loss optimum %v", auc, ceil)
	}
	if _, err := a.Run(context.Background(), obj, pairwise.RunConfig{Privacy: &pairwise.Privacy{Epsilon: 1, Delta: 1e-4, FeatureRadius: 1, Noise: dp.NewSeededNoise(4)}}, nil); err == nil {
		t.Error("a run without a random source was accepted")
	}
}

// floatPoissonSample is the sampler dp-pair-sgd used before
// dp.PoissonSubsample: geometric skips ⌊log(u)/log1p(−q)⌋ with
// u = 1 − Float64() on the grid {2⁻⁵³, …, 1}. Kept here to show it is not
// Bernoulli(q) and to benchmark against.
func floatPoissonSample(dst []int, n int, q float64, rng *rand.Rand) []int {
	l := math.Log1p(-q)
	i := -1
	for {
		u := 1 - rng.Float64() // (0, 1]
		next := float64(i) + 1 + math.Floor(math.Log(u)/l)
		if !(next < float64(n)) {
			return dst
		}
		i = int(next)
		dst = append(dst, i)
	}
}

// The old float sampler is inexact, computed without sampling:
//
//   - q = 0.04 (dp-pair-sgd's default at n = 10⁴): record 0 is included iff
//     the first skip is 0, i.e. for u = 1 − k·2⁻⁵³ (k uniform in [0, 2⁵³),
//     math/rand/v2's Float64) iff ⌊log(u)/log1p(−q)⌋ = 0, true for k below
//     a threshold k* (found by bisection; the predicate is checked on 4096
//     values either side of it). So P(record 0 in) = k*/2⁵³, a multiple of
//     2⁻⁵³, while q = 0.04 as a float64 has binary digits down to 2⁻⁵⁷: the
//     two differ (and the test prints by how much).
//   - q = ½: the largest skip is ⌊log(2⁻⁵³)/log(½)⌋ ≤ 53 (u ≥ 2⁻⁵³), so the
//     first 54 records are never all excluded, an event of probability
//     2⁻⁵⁴ under Bernoulli(½) coins.
//
// dp.PoissonSubsample, which replaced it, has P(in) = q exactly for both
// (dp's TestPoissonSubsampleExactOneRecord, by enumeration).
func TestOldPoissonSamplerIsInexact(t *testing.T) {
	q := 0.04
	l := math.Log1p(-q)
	in := func(k uint64) bool { // record 0 included when Float64() = k·2⁻⁵³
		u := 1 - float64(k)/(1<<53)
		return math.Floor(math.Log(u)/l) == 0
	}
	lo, hi := uint64(0), uint64(1<<53) // in(lo), !in(hi)
	for hi-lo > 1 {
		if m := lo + (hi-lo)/2; in(m) {
			lo = m
		} else {
			hi = m
		}
	}
	for d := uint64(1); d <= 4096; d++ {
		if !in(hi-d) || in(hi+d-1) {
			t.Fatalf("the inclusion predicate is not monotone near its threshold %d", hi)
		}
	}
	old := new(big.Rat).SetFrac(new(big.Int).SetUint64(hi), new(big.Int).Lsh(big.NewInt(1), 53))
	exact := new(big.Rat).SetFloat64(q)
	if old.Cmp(exact) == 0 {
		t.Fatalf("q = %v: the float sampler's P(record 0 in) = %v equals q", q, old)
	}
	diff, _ := new(big.Rat).Sub(old, exact).Float64()
	t.Logf("q = %v: float sampler P(record 0 in) = %d·2⁻⁵³ = q %+.3g (q = %s)", q, hi, diff, exact.FloatString(25))
	if s := math.Floor(math.Log(0x1p-53) / math.Log1p(-0.5)); s > 53 {
		t.Fatalf("q = ½: largest skip %v, the argument above expects ≤ 53", s)
	}
}

// BenchmarkPoissonSample: ns per draw (one dp-pair-sgd step's batch) at
// dp-pair-sgd's default q for n = 10⁴, 10⁵, 10⁶, exact (dp.PoissonSubsample)
// against the old float sampler, both from ChaCha8 as private runs.
func BenchmarkPoissonSample(b *testing.B) {
	for _, n := range []int{614, 10_000, 100_000, 1_000_000} {
		q, _, _ := PairSGDDefaults(n, pairwise.TaskAUC, 1)
		for _, s := range []struct {
			name string
			f    func([]int, int, float64, *rand.Rand) []int
		}{{"exact", poissonSample}, {"float", floatPoissonSample}} {
			b.Run(fmt.Sprintf("%s/n=%d", s.name, n), func(b *testing.B) {
				rng := rand.New(rand.NewChaCha8([32]byte{9}))
				var batch []int
				b.ReportAllocs()
				for b.Loop() {
					batch = s.f(batch[:0], n, q, rng)
				}
			})
		}
	}
}
