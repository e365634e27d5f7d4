package pairwise

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

// TestPrevFastBitIdentical checks the specialized sgd-prev loops against the
// general loop they replace (runPairSGD with a PrevInstance): the same output
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
	if haveAVX2 {
		// and the Go kernels the loops run without AVX2
		haveAVX2 = false
		defer func() { haveAVX2 = true }()
		testPrevFastBitIdentical(t, full)
	}
}

func testPrevFastBitIdentical(t *testing.T, full bool) {
	datasets := map[string]*Dataset{
		"dense":       toyAUC(300, 7, 1, 1),
		"dense-d3":    toyAUC(200, 3, 1, 8),
		"dense-rare":  rarePositives(toyAUC(500, 22, 0.8, 2), 0.1, 3),
		"dense-2pos":  rarePositives(toyAUC(700, 5, 1, 9), 0.003, 10), // gaps of hundreds of steps between updates
		"dense-d70":   toyAUC(150, 70, 1, 12),                         // addRepeatAVX's chunks of 32 lanes: two full, one partial
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
	T := cfg.steps(n, 10)
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
	gen, err := runPairSGD(context.Background(), obj, cfgG, rngG, &PrevInstance{N: n}, T, ScaledConstant)
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

// denseUpdate's four-way ‖w‖² must make the projection decision and result
// of the serial sum (stepProject's loop), bit for bit, including when the
// norm lands within rounding of the radius.
func TestDenseUpdateMatchesSerialNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	ref := func(w, xi, xj []float64, a, r float64) {
		var n2 float64
		for k := range xi {
			v := w[k] + a*(xi[k]-xj[k])
			w[k] = v
			n2 += v * v
		}
		if n2 > r*r {
			scale(r/math.Sqrt(n2), w)
		}
	}
	near, far := 0, 0
	for trial := 0; trial < 20000; trial++ {
		d := 1 + rng.IntN(40)
		w, xi, xj := make([]float64, d), make([]float64, d), make([]float64, d)
		for k := range w {
			w[k], xi[k], xj[k] = rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		}
		a := 0.1 * rng.NormFloat64()
		// the norm after the update, and a radius at it within a few ulps
		// (or relatively 1e-15 … 1e-1 away, either side)
		u := make([]float64, d)
		var n2 float64
		for k := range u {
			u[k] = w[k] + a*(xi[k]-xj[k])
			n2 += u[k] * u[k]
		}
		r := math.Sqrt(n2)
		switch trial % 3 {
		case 0:
			for s := rng.IntN(9) - 4; s != 0; s -= sign(s) {
				r = math.Nextafter(r, math.Inf(sign(s)))
			}
			near++
		default:
			r *= 1 + float64(sign(rng.IntN(2)*2-1))*math.Pow(10, -1-14*rng.Float64())
			far++
		}
		w1 := append([]float64(nil), w...)
		w2 := append([]float64(nil), w...)
		denseUpdate(w1, xi, xj, a, r, r*r)
		ref(w2, xi, xj, a, r)
		if !sameBits(w1, w2) {
			t.Fatalf("trial %d (d %d, r %v): %v vs serial %v", trial, d, r, w1, w2)
		}
	}
	if near == 0 || far == 0 {
		t.Fatal("vacuous")
	}
}

func sign(s int) int {
	if s < 0 {
		return -1
	}
	return 1
}

// The assembly kernels must compute their Go counterparts' values bit for
// bit: over lengths 0…41 (every tail of the 4- and 2-wide loops), random
// data, radii at the updated norm within a few ulps (both projection
// decisions), no constraint, and non-finite values.
func TestPrevKernelsMatchGo(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2: the loops run the Go functions")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	vec := func(d int) []float64 { return specialVec(rng, d, 1, 200) }
	projected := 0
	for trial := 0; trial < 30000; trial++ {
		d := trial % 42
		w, xi, xj, sum, prev := vec(d), vec(d), vec(d), vec(d), vec(d)
		if g, want := diffDotAVX(w, xi, xj, sum, prev), diffDot(w, xi, xj); math.Float64bits(g) != math.Float64bits(want) && !(math.IsNaN(g) && math.IsNaN(want)) {
			t.Fatalf("trial %d d %d: diffDotAVX %v, diffDot %v", trial, d, g, want)
		}
		a, pend := 0.1*rng.NormFloat64(), rng.Float64()
		var n2 float64
		for k := range w {
			v := w[k] + a*(xi[k]-xj[k])
			n2 += v * v
		}
		r := math.Sqrt(n2)
		switch trial % 4 {
		case 0:
			for s := rng.IntN(9) - 4; s != 0; s -= sign(s) {
				r = math.Nextafter(r, math.Inf(sign(s)))
			}
		case 1:
			r = math.Inf(1)
		default:
			r *= 0.5 + rng.Float64()
		}
		w1, s1, p1 := append([]float64(nil), w...), append([]float64(nil), sum...), append([]float64(nil), prev...)
		w2, s2, p2 := append([]float64(nil), w...), append([]float64(nil), sum...), append([]float64(nil), prev...)
		updateFlushAVX(w1, xi, xj, s1, p1, a, pend, r, r*r)
		updateFlush(w2, xi, xj, a, r, r*r, s2, p2, pend)
		if !sameBitsNaN(w1, w2) || !sameBitsNaN(s1, s2) || !sameBitsNaN(p1, p2) {
			t.Fatalf("trial %d d %d r %v: updateFlushAVX w %v sum %v prev %v; updateFlush w %v sum %v prev %v", trial, d, r, w1, s1, p1, w2, s2, p2)
		}
		if n2 > r*r {
			projected++
		}
	}
	if projected < 1000 {
		t.Fatalf("only %d trials projected", projected)
	}
}

// addRepeat and addRepeatAVX must be m calls of axpy(1, w, sum), bit for
// bit: every length up to three chunks of 32 lanes (the masks), every
// repetition count up to 40, special values included; and the sum past
// len(w) is never written.
func TestAddRepeatIsRepeatedAxpy(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for trial := 0; trial < 4000; trial++ {
		d, m := trial%100, 1+rng.IntN(40)
		w := specialVec(rng, d, 1, 300)
		sum := specialVec(rng, d+5, 10, 300)
		want := append([]float64(nil), sum...)
		for r := 0; r < m; r++ {
			axpy(1, w, want[:d])
		}
		got := append([]float64(nil), sum...)
		addRepeat(got, w, m)
		if !sameBitsNaN(got, want) {
			t.Fatalf("trial %d d %d m %d: addRepeat %v, repeated axpy %v", trial, d, m, got, want)
		}
		if haveAVX2 {
			got = append(got[:0], sum...)
			addRepeatAVX(got[:d], w, m) // the tail past len(w) must survive
			got = got[:d+5]
			if !sameBitsNaN(got, want) {
				t.Fatalf("trial %d d %d m %d: addRepeatAVX %v, repeated axpy %v", trial, d, m, got, want)
			}
		}
	}
}

// sameBitsNaN is sameBits with any two NaNs equal (Go and the hardware may
// propagate different NaN payloads; every NaN is the same model failure).
func sameBitsNaN(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if math.Float64bits(a[k]) != math.Float64bits(b[k]) && !(math.IsNaN(a[k]) && math.IsNaN(b[k])) {
			return false
		}
	}
	return true
}

// prevStepAVX must be the Go loop's active step, bit for bit: diffDot,
// the hinge or square step, and updateFlush (flush = 1) or denseUpdate
// (flush = 0), over lengths 1…41, both label signs, margins on both sides
// of 0, radii at the updated norm within a few ulps, no constraint, and
// non-finite values.
func TestPrevStepAVXMatchesGo(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2: the loops run the Go functions")
	}
	rng := rand.New(rand.NewPCG(23, 24))
	vec := func(d int, sc float64) []float64 { return specialVec(rng, d, sc, 300) }
	clone := func(v []float64) []float64 { return append([]float64(nil), v...) }
	stepped, skipped := 0, 0
	for trial := 0; trial < 40000; trial++ {
		d := 1 + trial%41
		w, xi, xj := vec(d, []float64{0.01, 0.3, 3}[rng.IntN(3)]), vec(d, 1), vec(d, 1)
		pa, pb, sum, prev := vec(d, 1), vec(d, 1), vec(d, 1), vec(d, 1)
		s := float64(2*rng.IntN(2) - 1)
		loss := prevLoss(rng.IntN(2)) // hinge, square
		flush := rng.IntN(2)
		eta, pend := rng.Float64(), rng.Float64()
		r := math.Sqrt(dot(w, w)) * (0.5 + rng.Float64())
		switch trial % 4 {
		case 0:
			r = math.Inf(1)
		case 1:
			for k := rng.IntN(9) - 4; k != 0; k -= sign(k) {
				r = math.Nextafter(r, math.Inf(sign(k)))
			}
		}
		w1, s1, p1 := clone(w), clone(sum), clone(prev)
		sa := prevStepArgs{w: &w1[0], xi: &xi[0], xj: &xj[0], pa: &pa[0], pb: &pb[0], sum: &s1[0], prev: &p1[0],
			n: d, plen: d, s: s, eta: eta, pend: pend, r: r, r2: r * r, loss: int(loss), flush: flush}
		got := prevStepAVX(&sa)

		w2, s2, p2 := clone(w), clone(sum), clone(prev)
		h := diffDot(w2, xi, xj)
		var dv float64
		if loss == prevHinge {
			if m := 1 - s*h; !(m <= 0) {
				dv = -s
			}
		} else {
			dv = -2 * s * (1 - s*h)
		}
		want := dv != 0
		if want && flush == 1 {
			updateFlush(w2, xi, xj, -eta*dv, r, r*r, s2, p2, pend)
		} else if want {
			denseUpdate(w2, xi, xj, -eta*dv, r, r*r)
		}
		if got != want || !sameBitsNaN(w1, w2) || !sameBitsNaN(s1, s2) || !sameBitsNaN(p1, p2) {
			t.Fatalf("trial %d (d %d loss %d flush %d s %v r %v): stepped %v w %v sum %v prev %v; Go stepped %v w %v sum %v prev %v",
				trial, d, loss, flush, s, r, got, w1, s1, p1, want, w2, s2, p2)
		}
		if want {
			stepped++
		} else {
			skipped++
		}
	}
	if stepped < 1000 || skipped < 1000 {
		t.Fatalf("%d steps taken, %d not: both branches must be exercised", stepped, skipped)
	}
}

// The assembly reads prevStepArgs at fixed offsets.
func TestPrevStepArgsLayout(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2: prevStepAVX is not used")
	}
	var a prevStepArgs
	got := []uintptr{unsafe.Offsetof(a.w), unsafe.Offsetof(a.xi), unsafe.Offsetof(a.xj), unsafe.Offsetof(a.pa),
		unsafe.Offsetof(a.pb), unsafe.Offsetof(a.sum), unsafe.Offsetof(a.prev), unsafe.Offsetof(a.n),
		unsafe.Offsetof(a.plen), unsafe.Offsetof(a.s), unsafe.Offsetof(a.eta), unsafe.Offsetof(a.pend),
		unsafe.Offsetof(a.r), unsafe.Offsetof(a.r2), unsafe.Offsetof(a.loss), unsafe.Offsetof(a.flush)}
	for k, off := range got {
		if off != uintptr(8*k) {
			t.Fatalf("field %d at offset %d, the assembly reads %d", k, off, 8*k)
		}
	}
}

// specialVec returns d normal values times sc, each replaced with
// probability 3/oneIn by NaN, ±Inf or −0 (one in oneIn each).
func specialVec(rng *rand.Rand, d int, sc float64, oneIn int) []float64 {
	v := make([]float64, d)
	for k := range v {
		v[k] = sc * rng.NormFloat64()
		switch rng.IntN(oneIn) {
		case 0:
			v[k] = math.NaN()
		case 1:
			v[k] = math.Inf(1 - 2*rng.IntN(2))
		case 2:
			v[k] = math.Copysign(0, -1)
		}
	}
	return v
}
