package pairwise

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pairfed/pairfed/pairwise/internal/kernel"
)

// TestPrevFastBitIdentical checks the specialized sgd-prev loops against the
// general loop they replace (RunPairSGD with a PrevInstance): the same output
// and last iterate, bit for bit, and the same rng state afterwards, over
// seeds, the three AUC losses, both vector constraints, both averaging modes
// the fast path takes, checkpoints, an initial point, and dense and sparse
// data with balanced and rare positives.
//
// The default `go test` runs every dataset (each aims at a kernel path)
// with each loss × constraint once, the averaging mode and the seed
// (plain, constant schedule with an initial point, context checks at
// 4096 and 8192, a larger step) taken in turn so that each appears: 63
// of the 1260 cases per kernel set; TestLongPrevFastBitIdentical (build
// tag long, run by .ci/run without -race) runs all of them. The loops
// are single-goroutine: -race only multiplies their time.
func TestPrevFastBitIdentical(t *testing.T) { prevFastBitIdentical(t, false) }

func prevFastBitIdentical(t *testing.T, full bool) {
	testPrevFastBitIdentical(t, full)
	if kernel.UseAVX2 {
		// and the Go kernels the loops run without AVX2
		kernel.UseAVX2 = false
		defer func() { kernel.UseAVX2 = true }()
		testPrevFastBitIdentical(t, full)
	}
}

func testPrevFastBitIdentical(t *testing.T, full bool) {
	datasets := map[string]*Dataset{
		"dense":       toyAUC(300, 7, 1, 1),
		"dense-d3":    toyAUC(200, 3, 1, 8),
		"dense-rare":  rarePositives(toyAUC(500, 22, 0.8, 2), 0.1, 3),
		"dense-2pos":  rarePositives(toyAUC(700, 5, 1, 9), 0.003, 10), // gaps of hundreds of steps between updates
		"dense-d70":   toyAUC(150, 70, 1, 12),                         // kernel.AddRepeat's chunks of 32 lanes: two full, one partial
		"sparse":      toSparse(toyAUC(300, 9, 1, 4)),
		"sparse-rare": toSparse(rarePositives(toyAUC(400, 12, 1, 5), 0.1, 6)),
	}
	cons := []struct {
		name string
		r    float64
	}{{"l2", 0.3}, {"l2", 50}, {"none", 0}}
	cases, combo := 0, 0
	for _, dn := range slices.Sorted(maps.Keys(datasets)) { // a fixed order: the default subset is the same every run
		ds := datasets[dn]
		for _, loss := range []Loss{AUCHinge{}, AUCSquare{}, AUCLogistic{}} {
			for _, c := range cons {
				obj, err := NewObjective(ds, ObjectiveConfig{Loss: loss, Constraint: c.name, Radius: c.r})
				if err != nil {
					t.Fatal(err)
				}
				combo++
				for ai, avg := range []Averaging{"", AvgPaper, AvgLast, AvgWindow, AvgUniform} {
					for seed := uint64(1); seed <= 4; seed++ {
						if !full && (ai != combo%5 || int(seed) != 1+combo%4) {
							continue
						}
						cfg := RunConfig{Eta: 0.3 * float64(seed), Averaging: avg, Passes: 3}
						if seed == 2 {
							cfg.Schedule = Constant
							cfg.Init = make([]float64, ds.D)
							cfg.Init[0] = 0.1
						}
						if seed == 3 {
							cfg.Steps = 9000 // crosses context checks at 4096 and 8192
						}
						name := fmt.Sprintf("%s/%s/%s-%v/%s/%d", dn, loss.Name(), c.name, c.r, avg, seed)
						compareFastGeneral(t, name, obj, cfg, seed)
						cases++
					}
				}
			}
		}
	}
	want := 7 * 3 * 3 * 5 * 4
	if !full {
		want = 7 * 3 * 3
	}
	if cases != want {
		t.Fatalf("ran %d cases", cases)
	}
}

// compareFastGeneral runs both loops with checkpoints recorded and fails on
// any bit difference.
func compareFastGeneral(t *testing.T, name string, obj Objective, cfg RunConfig, seed uint64) {
	t.Helper()
	n := obj.Data().N
	T := cfg.TotalSteps(n, 10)
	cfg.Checkpoints = []int{1, 17, 4095, 4096, T / 2, T}
	var cpGen, cpFast [][]float64
	// At each checkpoint the callback records the output and a draw from
	// the run's rng: the rng must be where the general loop left it, and
	// the run must continue from the draw taken.
	record := func(dst *[][]float64, rng *rand.Rand) func(int, []float64) {
		return func(_ int, w []float64) {
			*dst = append(*dst, append(append([]float64(nil), w...), float64(rng.IntN(1<<20))))
		}
	}
	f := newPrevFast(obj, &cfg, ScaledConstant)
	if f == nil {
		t.Fatalf("%s: fast path not taken", name)
	}
	// Seed 4 draws from a ChaCha8 source (the loop's interface path), the
	// others from a PCG (the concrete pcg path).
	src := func() rand.Source {
		if seed == 4 {
			return rand.NewChaCha8([32]byte{byte(seed), 99})
		}
		return rand.NewPCG(seed, 99)
	}
	rngF := rand.New(src())
	if (pcgSource(rngF) != nil) != (seed != 4) {
		t.Fatalf("%s: pcgSource(%T) wrong", name, src())
	}
	cfgF := cfg
	cfgF.OnCheckpoint = record(&cpFast, rngF)
	fast, err := f.run(context.Background(), cfgF, rngF, T, ScaledConstant)
	if err != nil {
		t.Fatal(err)
	}
	rngG := rand.New(src())
	cfgG := cfg
	cfgG.OnCheckpoint = record(&cpGen, rngG)
	gen, err := RunPairSGD(context.Background(), obj, cfgG, rngG, &PrevInstance{N: n}, T, ScaledConstant)
	if err != nil {
		t.Fatal(err)
	}
	if !sameBits(fast.W, gen.W) || !sameBits(fast.Last, gen.Last) {
		t.Fatalf("%s: fast W=%v last=%v, general W=%v last=%v", name, fast.W, fast.Last, gen.W, gen.Last)
	}
	if fast.Steps != gen.Steps || fast.PairGrads != gen.PairGrads {
		t.Fatalf("%s: steps %d/%d grads %d/%d", name, fast.Steps, gen.Steps, fast.PairGrads, gen.PairGrads)
	}
	if len(cpFast) != len(cpGen) {
		t.Fatalf("%s: %d checkpoints fast, %d general", name, len(cpFast), len(cpGen))
	}
	for k := range cpFast {
		if !sameBits(cpFast[k], cpGen[k]) {
			t.Fatalf("%s: checkpoint %d differs", name, k)
		}
	}
	if rngF.Uint64() != rngG.Uint64() {
		t.Fatalf("%s: rng streams diverged", name)
	}
	if dot(gen.Last, gen.Last) == 0 {
		t.Fatalf("%s: the run never moved w; the comparison is vacuous", name)
	}
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if math.Float64bits(a[k]) != math.Float64bits(b[k]) {
			return false
		}
	}
	return true
}

// rarePositives relabels ds so that about frac of its records are positive
// (ijcnn1 has 9.7 %), keeping the rows: most draws then pair equal labels.
func rarePositives(ds *Dataset, frac float64, seed uint64) *Dataset {
	rng := rand.New(rand.NewPCG(seed, 7))
	y := make([]float64, ds.N)
	for i := range y {
		y[i] = -1
		if ds.Y[i] > 0 && rng.Float64() < 2*frac {
			y[i] = 1
		}
	}
	out := *ds
	out.Y = y
	return &out
}

// TestPrevFastNotTaken checks that the configurations the specialized loop
// does not implement run the general loop.
func TestPrevFastNotTaken(t *testing.T) {
	ds := toyAUC(50, 3, 1, 1)
	reg, _ := NewObjective(ds, ObjectiveConfig{Loss: AUCHinge{}, Lambda: 0.1, Radius: 1})
	plain, _ := NewObjective(ds, ObjectiveConfig{Loss: AUCHinge{}, Radius: 1})
	met, _ := NewObjective(toyAUC(50, 3, 1, 1), ObjectiveConfig{Loss: MetricHinge{}, Radius: 1})
	odd := *ds
	odd.Y = append([]float64(nil), ds.Y...)
	odd.Y[7] = 0.5 // the label bitmap needs ±1 labels
	oddObj, err := NewObjective(&odd, ObjectiveConfig{Loss: AUCHinge{}, Radius: 1})
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		obj Objective
		cfg RunConfig
	}{
		"regularizer": {reg, RunConfig{Eta: 1}},
		"schedule":    {plain, RunConfig{Eta: 1, Schedule: InvSqrt}},
		"labels":      {oddObj, RunConfig{Eta: 1}},
		"metric":      {met, RunConfig{Eta: 1}},
	} {
		if newPrevFast(c.obj, &c.cfg, ScaledConstant) != nil {
			t.Errorf("%s: fast path taken", name)
		}
	}
}

// drawIndices must be rng.IntN, draw for draw, for any n (powers of two
// take the mask branch; n near 2⁶³ makes rejections frequent).
func TestDrawIndicesIsIntN(t *testing.T) {
	for _, n64 := range []int64{1, 2, 3, 7, 64, 1000, 49990, 1 << 20, 1<<62 + 12345, math.MaxInt64} {
		n := int(n64)
		if int64(n) != n64 {
			continue // beyond int on 32-bit systems
		}
		a := rand.New(rand.NewPCG(uint64(n), 5))
		b := rand.New(rand.NewPCG(uint64(n), 5))
		got := make([]int, 3000)
		drawIndices(a, got, n)
		for k, g := range got {
			if w := b.IntN(n); g != w {
				t.Fatalf("n %d draw %d: %d, IntN %d", n, k, g, w)
			}
		}
		if a.Uint64() != b.Uint64() {
			t.Fatalf("n %d: streams diverged", n)
		}
	}
}
