package pairwise

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// maxRelDiff is max_k |got_k − want_k| / max_k |want_k|.
func maxRelDiff(got, want []float64) float64 {
	var num, den float64
	for k := range want {
		num = math.Max(num, math.Abs(got[k]-want[k]))
		den = math.Max(den, math.Abs(want[k]))
	}
	if den == 0 {
		return num
	}
	return num / den
}

// flipLabels returns s with the classes exchanged (positives the majority).
func flipLabels(s *Dataset) *Dataset {
	out := *s
	out.Y = make([]float64, s.N)
	for i, y := range s.Y {
		out.Y[i] = -y
	}
	return &out
}

// randomW returns a seeded parameter vector of obj with entries
// N(0, scale²), a symmetric W for metric learning unless asym.
func randomW(obj Objective, d int, scale float64, asym bool, rng *rand.Rand) []float64 {
	w := make([]float64, obj.NumParams())
	for k := range w {
		w[k] = scale * rng.NormFloat64()
	}
	if obj.Task() == TaskMetric && !asym {
		for a := 0; a < d; a++ {
			for b := 0; b < a; b++ {
				w[a*d+b] = w[b*d+a]
			}
		}
	}
	return w
}

// TestFullGradientFastPathsMatchPairLoop: FullGradient (sorted-score hinge
// and square forms, the logistic product form on chunks and goroutines,
// the metric blocked XᵀAX form) equals the pair loop within a relative
// 1e-12 (max-norm), for every loss of both tasks, dense and sparse data,
// both class orientations, scores inside and outside the logistic product
// form's range (|s| ≤ 175), sizes that use one chunk and several chunks
// on several goroutines (n₊n₋ ≥ logisticParPairs), one and two kernel
// blocks (metric n = 1100 > metricBlockCells/n), symmetric and asymmetric
// W (h reads only its symmetric part).
//
// The default `go test` checks the sizes of ≥ 1000 records (the pair
// loop's n² reference costs ≈ 0.2–0.7 s a call without -race, ×10–30
// under it) at one point each — big: the logistic form on several
// goroutines (the only concurrency here, so it stays under -race);
// metric-1100: two kernel blocks (hinge) — and everything else in full;
// TestLongFullGradientFastPathsMatchPairLoop (build tag long, run by
// .ci/run without -race) the whole grid.
func TestFullGradientFastPathsMatchPairLoop(t *testing.T) {
	fullGradientFastPathsMatchPairLoop(t, false)
}

func fullGradientFastPathsMatchPairLoop(t *testing.T, full bool) {
	rng := rand.New(rand.NewPCG(4, 4))
	type tc struct {
		name   string
		data   *Dataset
		task   Task
		scales []float64
	}
	small := toyAUC(40, 5, 2, 3)
	big := toyAUC(1500, 4, 1, 5) // ≈ 600 × 900 pairs: two chunks, parallel
	cases := []tc{
		{"small", small, TaskAUC, []float64{0.3, 3, 300}},
		{"small-sparse", toSparse(small), TaskAUC, []float64{1}},
		{"small-flipped", flipLabels(small), TaskAUC, []float64{1}},
		{"big", big, TaskAUC, []float64{0.5, 300}},
		{"big-flipped", flipLabels(big), TaskAUC, []float64{0.5}},
		{"small", small, TaskMetric, []float64{1, 10}},
		{"small-sparse", toSparse(small), TaskMetric, []float64{1}},
		{"metric-300", toyAUC(300, 4, 1, 6), TaskMetric, []float64{1}},
		{"metric-1100", toyAUC(1100, 3, 1, 7), TaskMetric, []float64{1}},
	}
	// smoke: the one (loss, λ, scale, symmetric W) of a large case that
	// the default run checks; none for big-flipped.
	smoke := map[string]string{"big/auc": "logistic", "metric-1100/metric": "hinge"}
	for _, c := range cases {
		large := c.data.N >= 1000
		for _, name := range []string{"hinge", "square", "logistic"} {
			loss, err := LossByName(c.task, name)
			if err != nil {
				continue
			}
			for _, lambda := range []float64{0, 0.1} {
				obj, err := NewObjective(c.data, ObjectiveConfig{Loss: loss, Lambda: lambda, Constraint: "none"})
				if err != nil {
					t.Fatal(err)
				}
				for si, sc := range c.scales {
					for ai, asym := range []bool{false, c.task == TaskMetric} {
						if !full && large && (smoke[c.name+"/"+string(c.task)] != name || lambda == 0 || si > 0 || ai > 0) {
							randomW(obj, c.data.D, sc, asym, rng) // the same draws as the full grid
							continue
						}
						w := randomW(obj, c.data.D, sc, asym, rng)
						got := make([]float64, len(w))
						FullGradient(obj, w, got)
						want := PairLoopGradient(obj, w)
						if e := maxRelDiff(got, want); !(e <= 1e-12) {
							t.Errorf("%s %s/%s λ=%g |w|~%g asymmetric %v: relative difference %.3g > 1e-12\nfast %v\nloop %v", c.name, c.task, name, lambda, sc, asym, e, got, want)
						}
					}
				}
			}
		}
	}
}

// TestLogisticAUCCoefsMatchExp checks the product form term by term
// against 4·sigmoidNeg(2h) over the whole range it accepts (|s| ≤ 175, so
// 2h ∈ [−700, 700]): within a relative (|2h| + 8)·2⁻⁵³ (exp's rounding of
// the two factors, the product, and the rounding of s_i − s_j in the
// reference), never zero, subnormal or infinite, and exactly 4 where the
// reference saturates at 4 (2h ≤ −40: 1 + x rounds to 1 in both); and it
// declines scores beyond ±175 and NaN.
func TestLogisticAUCCoefsMatchExp(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	vals := []float64{0, 1e-300, -1e-17, 1, -1, 20, -20, 87.5, -87.5, 175, -175, math.Nextafter(175, 0)}
	for range 2000 {
		vals = append(vals, (2*rng.Float64()-1)*175, (2*rng.Float64()-1)*2)
	}
	for k, si := range vals {
		sj := vals[(k*7+3)%len(vals)]
		for _, pair := range [][2]float64{{si, sj}, {sj, si}} {
			sc := []float64{pair[0], pair[1]}
			a := make([]float64, 2)
			if !logisticAUCCoefs(sc, []int{0}, []int{1}, a, new(gradScratch)) {
				t.Fatalf("scores %v declined", sc)
			}
			c := -a[0]
			if a[1] != c {
				t.Fatalf("scores %v: a = %v, want opposite coefficients", sc, a)
			}
			h2 := 2 * (sc[0] - sc[1])
			ref := 4 * sigmoidNeg(h2)
			if !(c >= 0x1p-1022) || math.IsInf(c, 0) {
				t.Fatalf("scores %v: coefficient %v is not a normal number (reference %v)", sc, c, ref)
			}
			if tol := (math.Abs(h2) + 8) * 0x1p-53 * ref; !(math.Abs(c-ref) <= tol) {
				t.Fatalf("scores %v (2h = %v): product form %v, exp form %v, difference %.3g > %.3g", sc, h2, c, ref, math.Abs(c-ref), tol)
			}
			if h2 <= -40 && c != 4 {
				t.Fatalf("scores %v (2h = %v): saturated term %v, want exactly 4 (reference %v)", sc, h2, c, ref)
			}
		}
	}
	for _, bad := range []float64{math.Nextafter(175, 200), -176, 1e6, math.Inf(1), math.NaN()} {
		if logisticAUCCoefs([]float64{0, bad}, []int{0}, []int{1}, make([]float64, 2), new(gradScratch)) {
			t.Errorf("score %v accepted, want the exp fallback", bad)
		}
	}
}

// TestLogisticAUCGradientIndependentOfCores: the chunked logistic gradient
// is bit-identical under GOMAXPROCS 1, 2 and 7 (the chunking and the
// reduction order depend on the class sizes only).
func TestLogisticAUCGradientIndependentOfCores(t *testing.T) {
	data := toyAUC(3000, 3, 1, 8) // ≈ 1200 × 1800 pairs: 4 chunks
	obj, err := NewObjective(data, ObjectiveConfig{Loss: AUCLogistic{}, Constraint: "none"})
	if err != nil {
		t.Fatal(err)
	}
	w := []float64{0.7, -0.2, 0.4}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first []float64
	for _, procs := range []int{1, 2, 7} {
		runtime.GOMAXPROCS(procs)
		g := make([]float64, 3)
		FullGradient(obj, w, g)
		if first == nil {
			first = g
			continue
		}
		for k := range g {
			if math.Float64bits(g[k]) != math.Float64bits(first[k]) {
				t.Fatalf("GOMAXPROCS %d: gradient %v, GOMAXPROCS 1: %v", procs, g, first)
			}
		}
	}
}

// BenchmarkFullGradient measures one exact full gradient, the inner loop
// of pgd, dpgdsc, dpgdc, dpgdc2, dpegd, dp-gd and dp-gd-grad: the logistic
// AUC gradient at letter's epoch-1 shape (n = 4200, d = 16, 4 % positive)
// and training split (n = 8400) and at n = 256, and the metric logistic
// gradient (n = 2000, d = 8). cpu-ms/op is the process's CPU time per
// gradient (all goroutines), which a loaded machine does not inflate.
func BenchmarkFullGradient(b *testing.B) {
	letterShape := func(n int) *Dataset {
		s := toyAUC(n, 16, 1, 9)
		for i := range s.Y { // 4 % positive
			s.Y[i] = -1
			if i%25 == 0 {
				s.Y[i] = 1
			}
		}
		return s
	}
	for _, c := range []struct {
		name string
		data *Dataset
		task Task
	}{
		{"auc-logistic/n=256", toyAUC(256, 8, 2, 9), TaskAUC},
		{"auc-logistic/letter-epoch1", letterShape(4200), TaskAUC},
		{"auc-logistic/letter-train", letterShape(8400), TaskAUC},
		{"metric-logistic/n=2000,d=8", toyAUC(2000, 8, 1, 9), TaskMetric},
	} {
		b.Run(c.name, func(b *testing.B) {
			loss, _ := LossByName(c.task, "logistic")
			obj, err := NewObjective(c.data, ObjectiveConfig{Loss: loss, Constraint: "none"})
			if err != nil {
				b.Fatal(err)
			}
			w := randomW(obj, c.data.D, 0.2, false, rand.New(rand.NewPCG(1, 1)))
			g := make([]float64, len(w))
			b.ReportAllocs()
			c0, k := cpuNanos(), 0
			for b.Loop() {
				FullGradient(obj, w, g)
				k++
			}
			b.ReportMetric(float64(cpuNanos()-c0)/1e6/float64(k), "cpu-ms/op")
		})
	}
}
