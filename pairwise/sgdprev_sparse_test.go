package pairwise

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pairfed/pairfed/internal/toydata"
)

// sparseAUC is toydata.SparseAUC's CSR dataset.
func sparseAUC(n, d, nnz int, pos float64, seed uint64) *Dataset {
	m, y := toydata.SparseAUC(n, d, nnz, pos, seed)
	return &Dataset{N: n, D: d, Y: y, Ptr: m.Ptr, Idx: m.Idx, Val: m.Val}
}

// TestPrevSparseLazyMatchesGeneral checks the lazy O(nnz) sparse loop
// against the general loop (RunPairSGD with a PrevInstance), the reference,
// over seeds, the three AUC losses, the ℓ2 ball (active: R = 0.3; inactive:
// R = 50) and no constraint, every output rule, checkpoints that draw from
// the rng, and an initial point, with the bounds of sgdprev_sparse.go:
//
//   - no constraint: the last iterate and AvgLast's output bit for bit; the
//     averages within 8(T+4)u·M, M = max_t ‖w_t‖∞ (the general run's);
//   - ℓ2 ball: everything within T·(2⁻³⁵R + 32u(R + 2η·g)) + 2¹⁰·8(T+4)u·M,
//     g the largest |ℓ'| (the per-step rounding, accumulated linearly by a
//     nonexpansive map: η·ℓ”·‖x_i − x_j‖² ≤ 2 holds here);
//
// and the same rng stream afterwards. The bounds are deterministic (fixed
// seeds): a failure is a real difference, not chance.
//
// The default `go test` runs 9 of the 270 cases: the d1024 dataset, each
// loss × constraint once, the output rule and the seed (plain, constant
// schedule with an initial point, the context check at step 4096) taken
// in turn so that each appears; TestLongPrevSparseLazyMatchesGeneral
// (build tag long, run by .ci/run without -race) runs all 270. The
// comparison exercises no concurrency: -race only multiplies its time.
func TestPrevSparseLazyMatchesGeneral(t *testing.T) { prevSparseLazyMatchesGeneral(t, false) }

func prevSparseLazyMatchesGeneral(t *testing.T, full bool) {
	datasets := map[string]*Dataset{
		"d1024":      sparseAUC(300, 1024, 12, 0.4, 1),
		"d2048-rare": sparseAUC(400, 2048, 12, 0.1, 2),
	}
	cons := []struct {
		name string
		r    float64
	}{{"l2", 0.3}, {"l2", 50}, {"none", 0}, {"l2", 0.003}}
	cases, exactCases, combo := 0, 0, 0
	var maxEpochs, capSweeps, foldCases int
	for dn, ds := range datasets {
		if !useLazySparse(ds) {
			t.Fatalf("%s: the lazy loop is not taken", dn)
		}
		if !full && dn != "d1024" {
			continue
		}
		for _, loss := range []Loss{AUCHinge{}, AUCSquare{}, AUCLogistic{}} {
			for _, c := range cons {
				obj, err := NewObjective(ds, ObjectiveConfig{Loss: loss, Constraint: c.name, Radius: c.r})
				if err != nil {
					t.Fatal(err)
				}
				combo++
				for ai, avg := range []Averaging{"", AvgPaper, AvgLast, AvgWindow, AvgUniform} {
					for seed := uint64(1); seed <= 3; seed++ {
						if !full && (ai != (combo-1)%5 || int(seed) != 1+(combo-1)%3) {
							continue
						}
						cfg := RunConfig{Eta: 0.3 * float64(seed), Averaging: avg, Passes: 3}
						if seed == 2 {
							cfg.Schedule = Constant
							cfg.Eta = 0.05
							cfg.Init = make([]float64, ds.D)
							cfg.Init[0], cfg.Init[5] = 0.1, -0.05
						}
						if seed == 3 {
							cfg.Steps = 4500 // crosses the context check at 4096
						}
						name := fmt.Sprintf("%s/%s/%s-%v/%s/%d", dn, loss.Name(), c.name, c.r, avg, seed)
						exact, z := compareLazyGeneral(t, name, obj, cfg, seed, loss)
						if exact {
							exactCases++
						}
						maxEpochs = max(maxEpochs, z.nepochs)
						if z.epochs && z.nepochs >= z.epochCap {
							capSweeps++
						}
						cases++
						if c.r == 0.003 {
							// the fold path (R² < 2⁻⁶⁰⁰) at the
							// same radius
							lazyEpochs = false
							_, z := compareLazyGeneral(t, name+"/fold", obj, cfg, seed, loss)
							lazyEpochs = true
							if z.nepochs != 0 || z.passes < 3 {
								t.Fatalf("%s/fold: %d epochs, %d passes: the fold path did not run", name, z.nepochs, z.passes)
							}
							foldCases++
						}
					}
				}
			}
		}
	}
	want := 2 * 3 * 4 * 5 * 3
	if !full {
		want = 3 * 4
	}
	// the strongly binding ball (R = 0.003) begins an epoch at most
	// updates, past epochCap (the sweep) in some case
	if cases != want || exactCases == 0 || foldCases == 0 || maxEpochs < 100 || capSweeps == 0 {
		t.Fatalf("ran %d cases, %d exact, %d on the fold path; at most %d epochs, %d cases past epochCap", cases, exactCases, foldCases, maxEpochs, capSweeps)
	}
}

// compareLazyGeneral runs both loops and checks the bounds; it reports
// whether the case was one of the bit-identical ones.
func compareLazyGeneral(t *testing.T, name string, obj Objective, cfg RunConfig, seed uint64, loss Loss) (bool, *lazySparse) {
	t.Helper()
	n := obj.Data().N
	T := cfg.TotalSteps(n, 10)
	cfg.Checkpoints = []int{1, 17, 4095, 4096, T / 2, T}
	var cpGen, cpLazy [][]float64
	record := func(dst *[][]float64, rng *rand.Rand) func(int, []float64) {
		return func(_ int, w []float64) {
			*dst = append(*dst, append(append([]float64(nil), w...), float64(rng.IntN(1<<20))))
		}
	}
	f := newPrevFast(obj, &cfg, ScaledConstant)
	if f == nil {
		t.Fatalf("%s: fast path not taken", name)
	}
	rngL := rand.New(rand.NewPCG(seed, 99))
	cfgL := cfg
	cfgL.OnCheckpoint = record(&cpLazy, rngL)
	// runLazy, not run: since RunPrevSGD chooses the loop (sgdprev.go),
	// run is the O(d) fast loop on any data.
	lazy, z, err := f.runLazyState(context.Background(), cfgL, rngL, T, ScaledConstant)
	if err != nil {
		t.Fatal(err)
	}
	rngG := rand.New(rand.NewPCG(seed, 99))
	cfgG := cfg
	cfgG.OnCheckpoint = record(&cpGen, rngG)
	gen, err := RunPairSGD(context.Background(), obj, cfgG, rngG, &PrevInstance{N: n}, T, ScaledConstant)
	if err != nil {
		t.Fatal(err)
	}
	if rngL.Uint64() != rngG.Uint64() {
		t.Fatalf("%s: rng streams diverged", name)
	}
	if lazy.Steps != gen.Steps || lazy.PairGrads != gen.PairGrads || len(cpLazy) != len(cpGen) {
		t.Fatalf("%s: steps %d/%d grads %d/%d checkpoints %d/%d", name, lazy.Steps, gen.Steps, lazy.PairGrads, gen.PairGrads, len(cpLazy), len(cpGen))
	}
	if dot(gen.Last, gen.Last) == 0 {
		t.Fatalf("%s: the run never moved w; the comparison is vacuous", name)
	}
	// M = max_t ‖w_t‖∞ over the general run's iterates (AvgLast's
	// checkpoint output is w_t).
	every := make([]int, T)
	for k := range every {
		every[k] = k + 1
	}
	var M float64
	cfgM := cfg
	cfgM.Averaging, cfgM.Checkpoints = AvgLast, every
	cfgM.OnCheckpoint = func(_ int, w []float64) {
		for _, x := range w {
			M = max(M, math.Abs(x))
		}
	}
	if _, err := RunPairSGD(context.Background(), obj, cfgM, rand.New(rand.NewPCG(seed, 99)), &PrevInstance{N: n}, T, ScaledConstant); err != nil {
		t.Fatal(err)
	}
	const u = 0x1p-53
	tol := 8 * float64(T+4) * u * M
	R := obj.Constraint().Radius()
	ball := !math.IsInf(R, 1)
	if ball {
		tol *= 1 / foldBelow // v_k ≤ |w_k|/foldBelow between folds
		eta := cfg.Schedule.Eta(cfg.Eta, 1, T)
		if cfg.Schedule == "" {
			eta = ScaledConstant.Eta(cfg.Eta, 1, T)
		}
		g := 2.0 // |ℓ'| for hinge (1) and logistic (≤ 2)
		if _, ok := loss.(AUCSquare); ok {
			g = 2 * (1 + 2*R)
		}
		tol += float64(T) * (0x1p-35*R + 32*u*(R+2*eta*g))
	}
	var worst float64
	within := func(what string, a, b []float64) {
		for k := range a {
			if debugLazy {
				worst = max(worst, math.Abs(a[k]-b[k]))
			}
			if d := math.Abs(a[k] - b[k]); !(d <= tol) {
				t.Fatalf("%s: %s[%d]: lazy %v, general %v: |Δ| = %.3g > %.3g", name, what, k, a[k], b[k], d, tol)
			}
		}
	}
	within("W", lazy.W, gen.W)
	defer func() {
		if debugLazy {
			t.Logf("%s: worst %.3g tol %.3g M %.3g", name, worst, tol, M)
		}
	}()
	within("Last", lazy.Last, gen.Last)
	for k := range cpLazy {
		within(fmt.Sprintf("checkpoint %d", k), cpLazy[k], cpGen[k])
	}
	if ball {
		return false, z
	}
	if !sameBits(lazy.Last, gen.Last) {
		t.Fatalf("%s: no constraint: the last iterate differs", name)
	}
	if cfg.Averaging == AvgLast && !sameBits(lazy.W, gen.W) {
		t.Fatalf("%s: no constraint, AvgLast: the output differs", name)
	}
	return true, z
}

// TestLazySparseThreshold checks which data take the lazy loop.
func TestLazySparseThreshold(t *testing.T) {
	for _, c := range []struct {
		ds   *Dataset
		want bool
	}{
		{sparseAUC(100, 1024, 12, 0.5, 1), true},
		{sparseAUC(100, 300, 12, 0.5, 1), false},   // d < 512
		{sparseAUC(100, 1024, 100, 0.5, 1), false}, // d < 16·nnz
		{toyAUC(50, 600, 1, 1), false},             // dense
	} {
		if got := useLazySparse(c.ds); got != c.want {
			t.Errorf("d=%d nnz=%d dense=%v: lazy %v, want %v", c.ds.D, len(c.ds.Idx), c.ds.X != nil, got, c.want)
		}
	}
}

var debugLazy = false

// TestLazySparseODPasses counts the lazy loop's O(d) passes (exactNorm,
// sweep, fold) at d = 2¹⁸, where the left-to-right norm's bound γ_d·‖v‖²
// alone exceeded the 2⁻³⁶‖v‖² that triggers a recomputation (the loop then
// recomputed at every update), over radii from strongly binding (an epoch
// at most updates: α fell below 2⁻¹⁰ at every one, a fold each) to
// inactive: the initial norm, the output's sweep and one sweep per
// epochCap epochs, nothing per update. Deterministic (fixed seeds).
func TestLazySparseODPasses(t *testing.T) {
	ds := sparseAUC(400, 1<<18, 12, 0.4, 3)
	if !useLazySparse(ds) {
		t.Fatal("the lazy loop is not taken")
	}
	var most int
	for _, r := range []float64{0.003, 0.3, 50} {
		for _, eta := range []float64{0.05, 5} {
			obj, err := NewObjective(ds, ObjectiveConfig{Loss: AUCHinge{}, Constraint: "l2", Radius: r})
			if err != nil {
				t.Fatal(err)
			}
			// an initial point outside the ball: the first norm and
			// its bound are not 0, and the first update projects
			cfg := RunConfig{Eta: eta, Steps: 6000, Init: make([]float64, ds.D)}
			cfg.Init[1], cfg.Init[7] = r, -r
			f := newPrevFast(obj, &cfg, ScaledConstant)
			res, z, err := f.runLazyState(context.Background(), cfg, rand.New(rand.NewPCG(5, 6)), cfg.Steps, ScaledConstant)
			if err != nil {
				t.Fatal(err)
			}
			if dot(res.Last, res.Last) == 0 {
				t.Fatalf("R=%v η=%v: w never moved", r, eta)
			}
			if want := 2 + z.nepochs/z.epochCap; z.passes > want {
				t.Errorf("R=%v η=%v: %d O(d) passes over %d steps (%d epochs), want ≤ %d", r, eta, z.passes, cfg.Steps, z.nepochs, want)
			}
			most = max(most, z.nepochs)
		}
	}
	if most < 1000 {
		t.Fatalf("at most %d epochs: no case binds the ball strongly", most)
	}
}

// TestLazySparseStaleCount checks the count of coordinates not yet synced
// to the current epoch (which decides whether a step may use the plain dot
// product) against the epochs themselves, between chunks of steps of a run
// that binds the ball hard enough to begin epochs and sweeps: a miscount
// either way is caught (too low: a stale coordinate read unsynced; too
// high: the plain dot never comes back).
func TestLazySparseStaleCount(t *testing.T) {
	ds := sparseAUC(300, 5000, 12, 0.4, 9) // 300·12 draws over 5000 columns: many never appear
	live := make([]bool, ds.D)
	for _, c := range ds.Idx {
		live[c] = true
	}
	// radius 0.01: an epoch every few steps (the count's bookkeeping);
	// radius 0.3, η = 0.5: epochs rare enough for every live column to sync
	// between them (the plain dot's return)
	var epochsSeen, plain int
	for _, c := range []struct{ r, eta float64 }{{0.01, 5}, {0.3, 0.5}} {
		r := c.r
		for _, avg := range []Averaging{AvgPaper, AvgWindow, AvgLast} {
			obj, err := NewObjective(ds, ObjectiveConfig{Loss: AUCHinge{}, Constraint: "l2", Radius: r})
			if err != nil {
				t.Fatal(err)
			}
			cfg := RunConfig{Eta: c.eta, Steps: 40000, Averaging: avg}
			f := newPrevFast(obj, &cfg, ScaledConstant)
			rng := rand.New(rand.NewPCG(3, 4))
			z := f.startLazy(cfg, rng, cfg.Steps, ScaledConstant)
			for done := 0; done < cfg.Steps; done += 97 {
				f.steps(rng, 97)
				if !z.epochs {
					t.Fatal("no epochs at this radius")
				}
				n := 0
				for k, e := range z.ep {
					if live[k] && e != z.cur {
						n++
					}
				}
				if n != z.stale {
					t.Fatalf("%v after %d steps: %d coordinates unsynced, stale = %d", avg, done+97, n, z.stale)
				}
				if z.cur != 0 && z.stale == 0 {
					plain++
				}
			}
			epochsSeen += z.nepochs
			t.Logf("R = %v %v: %d epochs", r, avg, z.nepochs)
		}
	}
	// a warm start on a column no row has: it stays in its epoch while
	// the live ones sync, and its average must still count every iterate
	// (the older epochs' clocks keep advancing)
	dead := -1
	for k, l := range live {
		if !l {
			dead = k
			break
		}
	}
	obj, err := NewObjective(ds, ObjectiveConfig{Loss: AUCHinge{}, Constraint: "l2", Radius: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	cfg := RunConfig{Eta: 0.5, Steps: 40000, Averaging: AvgPaper, Init: make([]float64, ds.D)}
	cfg.Init[dead] = 0.2
	if _, z := compareLazyGeneral(t, "dead-column", obj, cfg, 1, AUCHinge{}); z.nepochs == 0 {
		t.Fatal("dead-column: no epochs")
	}
	// the plain dot and the skipped clocks give the bits of the loop
	// without them (dotSync at every step, every live clock advanced),
	// for the dead column above and the cases of the first loop
	for _, c := range []struct {
		r, eta float64
		init   bool
	}{{0.3, 0.5, true}, {0.3, 0.5, false}, {0.01, 5, false}} {
		for _, avg := range []Averaging{AvgPaper, AvgWindow, AvgLast} {
			obj, err := NewObjective(ds, ObjectiveConfig{Loss: AUCHinge{}, Constraint: "l2", Radius: c.r})
			if err != nil {
				t.Fatal(err)
			}
			cfg := RunConfig{Eta: c.eta, Steps: 40000, Averaging: avg}
			if c.init {
				cfg.Init = make([]float64, ds.D)
				cfg.Init[dead] = 0.2
			}
			run := func() *Result {
				f := newPrevFast(obj, &cfg, ScaledConstant)
				res, _, err := f.runLazyState(context.Background(), cfg, rand.New(rand.NewPCG(1, 1)), cfg.Steps, ScaledConstant)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			a := run()
			lazyPlainDot = false
			b := run()
			lazyPlainDot = true
			for k := range a.W {
				if math.Float64bits(a.W[k]) != math.Float64bits(b.W[k]) || math.Float64bits(a.Last[k]) != math.Float64bits(b.Last[k]) {
					t.Fatalf("R = %v %v init %v: coordinate %d: %v / %v with the plain dot, %v / %v without", c.r, avg, c.init, k, a.W[k], a.Last[k], b.W[k], b.Last[k])
				}
			}
		}
	}
	if epochsSeen < 1000 || plain == 0 {
		t.Fatalf("%d epochs, %d chunks with every live column synced mid-epoch: the cases do not exercise both paths", epochsSeen, plain)
	}
}
