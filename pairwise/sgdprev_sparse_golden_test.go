package pairwise

import (
	"bufio"
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// lazyGoldenFile holds, for every case of lazyGoldenCases, a digest of all
// the bits the lazy loop produces: the output, the last iterate, every
// checkpoint's output, the rng's next draw, the steps and gradients, and
// the loop's epoch and O(d)-pass counts. It was recorded by the lazy loop
// of main before the in-cache speed work (issue 27), so that the faster
// loop is held to the same bits: PAIRFED_LAZY_GOLDEN=update rewrites it.
const lazyGoldenFile = "testdata/lazy_golden.txt"

// sparseRagged is a CSR dataset whose rows hold 0 to 2·nnz nonzeros
// (empty rows, odd and even lengths), values N(0, 1), rows in the unit ball.
func sparseRagged(n, d, nnz int, pos float64, seed uint64) *Dataset {
	rng := rand.New(rand.NewPCG(seed, 11))
	ds := &Dataset{N: n, D: d, Y: make([]float64, n), Ptr: make([]int, n+1)}
	seen := make(map[int32]bool)
	for i := range n {
		ds.Y[i] = -1
		if rng.Float64() < pos {
			ds.Y[i] = 1
		}
		m := rng.IntN(2*nnz + 1)
		clear(seen)
		var cols []int32
		for len(cols) < m {
			c := int32(rng.IntN(d))
			if !seen[c] {
				seen[c] = true
				cols = append(cols, c)
			}
		}
		sortInt32(cols)
		lo := len(ds.Val)
		var s float64
		for _, c := range cols {
			v := rng.NormFloat64()
			if ds.Y[i] > 0 && c%3 == 0 {
				v += 0.7
			}
			ds.Idx = append(ds.Idx, c)
			ds.Val = append(ds.Val, v)
			s += v * v
		}
		if s > 1 {
			for k := lo; k < len(ds.Val); k++ {
				ds.Val[k] /= math.Sqrt(s)
			}
		}
		ds.Ptr[i+1] = len(ds.Idx)
	}
	return ds
}

type lazyGoldenCase struct {
	name string
	obj  Objective
	cfg  RunConfig
	seed uint64
	fold bool
}

// lazyGoldenCases: four sparse shapes (n, d, nonzeros per row, uniform
// and ragged rows) × the three losses × the ℓ2 ball binding hard (epochs
// at most updates, sweeps), binding, loose, and its fold path, and no
// constraint × the five output rules × two step sizes (scaled and
// constant, with an initial point), with checkpoints.
func lazyGoldenCases(t *testing.T) []lazyGoldenCase {
	datasets := []struct {
		name string
		ds   *Dataset
	}{
		{"rag300x1024", sparseRagged(300, 1024, 12, 0.4, 1)}, // (not sparseAUC: its row norms sum a map in random order)
		{"uni2000x10000", sparseUniform(2000, 10000, 12, 0.3, 7)},
		{"uni500x100000", sparseUniform(500, 100000, 12, 0.3, 8)},
		{"ragged700x4096", sparseRagged(700, 4096, 9, 0.25, 3)},
	}
	cons := []struct {
		name string
		r    float64
		fold bool
	}{{"l2", 0.003, false}, {"l2", 0.003, true}, {"l2", 0.3, false}, {"l2", 50, false}, {"none", 0, false}}
	var cases []lazyGoldenCase
	for _, d := range datasets {
		if !useLazySparse(d.ds) {
			t.Fatalf("%s: the lazy loop is not taken", d.name)
		}
		for _, loss := range []Loss{AUCHinge{}, AUCSquare{}, AUCLogistic{}} {
			for _, c := range cons {
				obj, err := NewObjective(d.ds, ObjectiveConfig{Loss: loss, Constraint: c.name, Radius: c.r})
				if err != nil {
					t.Fatal(err)
				}
				for _, avg := range []Averaging{"", AvgPaper, AvgLast, AvgWindow, AvgUniform} {
					for e := range 2 {
						cfg := RunConfig{Eta: 0.5, Averaging: avg, Passes: 3}
						if e == 1 {
							cfg.Schedule, cfg.Eta = Constant, 0.07
							cfg.Init = make([]float64, d.ds.D)
							cfg.Init[1], cfg.Init[d.ds.D-1] = 0.1, -0.03
						}
						name := fmt.Sprintf("%s/%s/%s-%v/fold=%v/%s/%d", d.name, loss.Name(), c.name, c.r, c.fold, avg, e)
						cases = append(cases, lazyGoldenCase{name, obj, cfg, uint64(e + 1), c.fold})
					}
				}
			}
		}
	}
	return cases
}

// lazyGoldenDigest runs one case on the lazy loop and digests its bits.
func lazyGoldenDigest(t *testing.T, c lazyGoldenCase) (string, *lazySparse) {
	cfg := c.cfg
	n := c.obj.Data().N
	T := cfg.TotalSteps(n, 10)
	cfg.Checkpoints = []int{1, 17, 255, 256, 257, T / 3, T / 2, T}
	h := fnv.New64a()
	put := func(xs ...float64) {
		var b [8]byte
		for _, x := range xs {
			u := math.Float64bits(x)
			for k := range b {
				b[k] = byte(u >> (8 * k))
			}
			h.Write(b[:])
		}
	}
	rng := rand.New(rand.NewPCG(c.seed, 99))
	cfg.OnCheckpoint = func(s int, w []float64) {
		put(float64(s))
		put(w...)
		put(float64(rng.IntN(1 << 20)))
	}
	f := newPrevFast(c.obj, &cfg, ScaledConstant)
	if f == nil {
		t.Fatalf("%s: fast path not taken", c.name)
	}
	if c.fold {
		lazyEpochs = false
		defer func() { lazyEpochs = true }()
	}
	res, z, err := f.runLazyState(context.Background(), cfg, rng, T, ScaledConstant)
	if err != nil {
		t.Fatal(err)
	}
	put(res.W...)
	put(res.Last...)
	put(float64(res.Steps), float64(res.PairGrads), float64(rng.Uint64()>>11))
	put(float64(z.nepochs), float64(z.passes), float64(z.t))
	if dot(res.Last, res.Last) == 0 {
		t.Fatalf("%s: the run never moved w", c.name)
	}
	return fmt.Sprintf("%016x", h.Sum64()), z
}

// TestLazySparseGolden holds the lazy loop to the bits recorded in
// lazyGoldenFile: any change of one ulp in any output, checkpoint or
// iterate of any case changes its digest. (Checked by mutation: one ulp
// up on one coordinate of AvgPaper's output fails the 240 paper cases;
// the update's b = a/α moved one ulp toward 0 fails all 600.)
//
// The default run digests every lazyGoldenStride-th case (55 of the 600,
// every kind among them: the coverage check below); the build tag long
// runs all 600 (TestLongLazySparseGolden), as does recording them.
func TestLazySparseGolden(t *testing.T) { lazySparseGolden(t, lazyGoldenStride) }

// lazyGoldenStride: 11 is prime to the case grid's dimensions, so the
// default subset walks across shapes, losses, constraints and outputs.
const lazyGoldenStride = 11

func lazySparseGolden(t *testing.T, stride int) {
	all := lazyGoldenCases(t)
	update := os.Getenv("PAIRFED_LAZY_GOLDEN") == "update"
	if update && stride != 1 {
		t.Fatal("record the golden with every case: PAIRFED_LAZY_GOLDEN=update go test -tags long -run TestLongLazySparseGolden ./pairwise")
	}
	var cases []lazyGoldenCase
	for i := 0; i < len(all); i += stride {
		cases = append(cases, all[i])
	}
	got := make(map[string]string, len(cases))
	var epochs, sweeps, folds int
	for _, c := range cases {
		var z *lazySparse
		got[c.name], z = lazyGoldenDigest(t, c)
		if z.nepochs > 0 {
			epochs++
		}
		if z.epochs && z.nepochs >= z.epochCap {
			sweeps++
		}
		if c.fold && z.passes >= 3 && z.nepochs == 0 {
			folds++
		}
	}
	// the cases reach the epochs, the sweeps at epochCap and the fold path
	if epochs == 0 || sweeps == 0 || folds == 0 {
		t.Fatalf("%d cases with epochs, %d past epochCap, %d on the fold path", epochs, sweeps, folds)
	}
	t.Logf("%d cases: %d with epochs, %d past epochCap, %d on the fold path", len(cases), epochs, sweeps, folds)
	if update {
		var b strings.Builder
		for _, c := range cases {
			fmt.Fprintf(&b, "%s %s\n", c.name, got[c.name])
		}
		if err := os.WriteFile(lazyGoldenFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %d cases", len(cases))
		return
	}
	fh, err := os.Open(lazyGoldenFile)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	want := make(map[string]string)
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			t.Fatalf("%s: bad line %q", lazyGoldenFile, sc.Text())
		}
		want[f[0]] = f[1]
	}
	if len(want) != len(all) {
		t.Fatalf("%s has %d cases, the test %d", lazyGoldenFile, len(want), len(all))
	}
	bad := 0
	for _, c := range cases {
		if want[c.name] != got[c.name] {
			bad++
			if bad <= 10 {
				t.Errorf("%s: digest %s, recorded %s", c.name, got[c.name], want[c.name])
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d cases differ from the recorded bits", bad, len(cases))
	}
}
