package algo

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pairfed/pairfed/pairwise"
)

// baselineCase is one (algorithm, loss) of the Table 1 baselines with a step
// size that suits the toy data under the algorithm's default schedule.
type baselineCase struct {
	algo, loss string
	eta        float64
}

var baselineCases = []baselineCase{
	{"olp", "hinge", 1},
	{"olp", "square", 1},
	{"oam-gra", "hinge", 0.01},
	{"spauc", "square", 10},
}

func baselineObjective(t *testing.T, data *pairwise.Dataset, loss string, radius float64) pairwise.Objective {
	t.Helper()
	l, err := pairwise.LossByName(pairwise.TaskAUC, loss)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := pairwise.NewObjective(data, pairwise.ObjectiveConfig{Loss: l, Radius: radius})
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

func runBaseline(t *testing.T, name string, obj pairwise.Objective, cfg pairwise.RunConfig, seed uint64) *pairwise.Result {
	t.Helper()
	a, err := pairwise.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), obj, cfg, rand.New(rand.NewPCG(seed, 7)))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// iterates returns w_1..w_T of a run, recorded through checkpoints at every
// step with AvgLast (the averaging mode does not touch the random stream).
func iterates(t *testing.T, name string, obj pairwise.Objective, cfg pairwise.RunConfig, seed uint64) [][]float64 {
	t.Helper()
	T := cfg.Steps
	var ws [][]float64
	cfg.Averaging = pairwise.AvgLast
	cfg.Checkpoints = make([]int, T)
	for k := range cfg.Checkpoints {
		cfg.Checkpoints[k] = k + 1
	}
	cfg.OnCheckpoint = func(_ int, w []float64) { ws = append(ws, slices.Clone(w)) }
	runBaseline(t, name, obj, cfg, seed)
	if len(ws) != T {
		t.Fatalf("recorded %d iterates, want %d", len(ws), T)
	}
	return ws
}

func maxAbsDiff(a, b []float64) float64 {
	var m float64
	for k := range a {
		m = math.Max(m, math.Abs(a[k]-b[k]))
	}
	return m
}

// Each baseline ranks a nearly separable toy set well (test AUC ≥ 0.9),
// decreases the empirical pairwise objective from w = 0, is deterministic
// for a fixed seed, gives the same model on sparse storage, and counts its
// pair gradients.
func TestBaselinesLearnToyAUC(t *testing.T) {
	train := toyAUC(300, 5, 3, 31)
	test := toyAUC(1000, 5, 3, 32)
	sparse := toSparse(train)
	for _, c := range baselineCases {
		t.Run(c.algo+"/"+c.loss, func(t *testing.T) {
			obj := baselineObjective(t, train, c.loss, 10)
			cfg := pairwise.RunConfig{Eta: c.eta} // T = 10 passes
			res := runBaseline(t, c.algo, obj, cfg, 3)
			T := 10 * train.N
			if res.Steps != T {
				t.Fatalf("Steps = %d, want 10 passes = %d", res.Steps, T)
			}
			before, _ := pairwise.EmpiricalRisk(obj, make([]float64, train.D), math.MaxInt, nil)
			after, _ := pairwise.EmpiricalRisk(obj, res.W, math.MaxInt, nil)
			if !(after < before) {
				t.Fatalf("objective did not decrease: %v → %v", before, after)
			}
			auc := pairwise.LinearAUC(res.W, test)
			if auc < 0.9 {
				t.Fatalf("test AUC %.3f < 0.9", auc)
			}
			t.Logf("F_S: %.4f → %.4f, test AUC %.4f, pair grads %d", before, after, auc, res.PairGrads)

			var want int64
			switch c.algo {
			case "olp": // Σ_t min(t, 200)
				for s := 1; s <= T; s++ {
					want += int64(min(s, defaultOLPBuffer))
				}
			case "oam-gra": // the opposite buffer's 100 slots per step
				want = int64(T) * defaultOAMBuffer
			case "spauc":
				want = int64(T)
			}
			if res.PairGrads != want {
				t.Fatalf("PairGrads = %d, want %d", res.PairGrads, want)
			}

			res2 := runBaseline(t, c.algo, obj, cfg, 3)
			if !slices.Equal(res.W, res2.W) {
				t.Fatal("not deterministic for a fixed seed")
			}
			res3 := runBaseline(t, c.algo, baselineObjective(t, sparse, c.loss, 10), cfg, 3)
			if d := maxAbsDiff(res.W, res3.W); d > 1e-9 {
				t.Fatalf("sparse and dense runs differ by %g", d)
			}
		})
	}
}

func TestBaselinesRejectWrongLoss(t *testing.T) {
	wrong := map[string][]string{
		"olp":     {"logistic"},
		"oam-gra": {"square", "logistic"},
		"spauc":   {"hinge", "logistic"},
	}
	train := toyAUC(40, 3, 3, 1)
	for name, losses := range wrong {
		a, err := pairwise.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if a.Setting != "online" || a.Paper == "" || a.Ref == "" || a.Title == "" || a.Assumptions == "" {
			t.Errorf("%s: incomplete registry entry %+v", name, a)
		}
		if err := a.Supports(pairwise.TaskMetric, "hinge"); err == nil {
			t.Errorf("%s accepts the metric task", name)
		}
		for _, l := range losses {
			if err := a.Supports(pairwise.TaskAUC, l); err == nil {
				t.Errorf("%s accepts the %s loss", name, l)
			}
			// Run checks too, in case a caller skips Supports.
			obj := baselineObjective(t, train, l, 1)
			if _, err := a.Run(context.Background(), obj, pairwise.RunConfig{Eta: 1}, rand.New(rand.NewPCG(1, 1))); err == nil {
				t.Errorf("%s ran with the %s loss", name, l)
			}
		}
	}
	for _, c := range baselineCases {
		a, _ := pairwise.Lookup(c.algo)
		if err := a.Supports(pairwise.TaskAUC, c.loss); err != nil {
			t.Errorf("%s rejects %s: %v", c.algo, c.loss, err)
		}
	}
}

func TestBaselineConfigValidation(t *testing.T) {
	train := toyAUC(40, 3, 3, 1)
	bad := []struct {
		algo string
		cfg  pairwise.RunConfig
	}{
		{"olp", pairwise.RunConfig{Eta: 1, Buffer: -1}},
		{"oam-gra", pairwise.RunConfig{Eta: 1, PosBuffer: -1}},
		{"oam-gra", pairwise.RunConfig{Eta: 1, NegBuffer: -5}},
		{"spauc", pairwise.RunConfig{Eta: 0}},
		{"olp", pairwise.RunConfig{Eta: 1, Checkpoints: []int{3}}}, // no callback
		{"olp", pairwise.RunConfig{Eta: 1, Checkpoints: []int{5, 3}, OnCheckpoint: func(int, []float64) {}}},
		{"spauc", pairwise.RunConfig{Eta: 1, Init: []float64{1}}},
	}
	for _, b := range bad {
		a, _ := pairwise.Lookup(b.algo)
		loss := "hinge"
		if b.algo == "spauc" {
			loss = "square"
		}
		obj := baselineObjective(t, train, loss, 1)
		if _, err := a.Run(context.Background(), obj, b.cfg, rand.New(rand.NewPCG(1, 1))); err == nil {
			t.Errorf("%s accepted %+v", b.algo, b.cfg)
		}
	}
	// SPAUC needs both classes.
	one := toyAUC(40, 3, 3, 1)
	for i := range one.Y {
		one.Y[i] = 1
	}
	a, _ := pairwise.Lookup("spauc")
	if _, err := a.Run(context.Background(), baselineObjective(t, one, "square", 1), pairwise.RunConfig{Eta: 1}, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("spauc ran on a one-class sample")
	}
}

// Checkpoints fire at the requested steps, in order, with the AvgWindow
// average of the iterates since the previous checkpoint (the authors' code's
// res_idx windows); the final result is the last window's average.
func TestBaselineCheckpointsWindow(t *testing.T) {
	train := toyAUC(120, 4, 2, 5)
	T := 600
	cps := []int{1, 16, 22, 22, 100, 333, 600}
	for _, c := range baselineCases {
		t.Run(c.algo+"/"+c.loss, func(t *testing.T) {
			obj := baselineObjective(t, train, c.loss, 2)
			base := pairwise.RunConfig{Eta: c.eta, Steps: T, Buffer: 30, PosBuffer: 10, NegBuffer: 15}
			ws := iterates(t, c.algo, obj, base, 9)

			var gotT []int
			var gotW [][]float64
			cfg := base
			cfg.Averaging = pairwise.AvgWindow
			cfg.Checkpoints = cps
			cfg.OnCheckpoint = func(s int, w []float64) {
				gotT = append(gotT, s)
				gotW = append(gotW, slices.Clone(w))
			}
			res := runBaseline(t, c.algo, obj, cfg, 9)
			if !slices.Equal(gotT, cps) {
				t.Fatalf("checkpoints fired at %v, want %v", gotT, cps)
			}
			prev := 0
			for k, s := range cps {
				if s == prev { // a repeated step gets the same model again
					if !slices.Equal(gotW[k], gotW[k-1]) {
						t.Fatalf("repeated checkpoint %d: different models", s)
					}
					continue
				}
				want := make([]float64, train.D)
				for j := prev; j < s; j++ {
					pairwise.Axpy(1/float64(s-prev), ws[j], want)
				}
				if d := maxAbsDiff(gotW[k], want); d > 1e-12 {
					t.Fatalf("checkpoint %d: window average off by %g", s, d)
				}
				prev = s
			}
			if !slices.Equal(res.W, gotW[len(gotW)-1]) {
				t.Fatal("result differs from the last checkpoint's model")
			}

			// AvgUniform: (1/T) Σ_t w_t.
			cfg = base
			cfg.Averaging = pairwise.AvgUniform
			res = runBaseline(t, c.algo, obj, cfg, 9)
			want := make([]float64, train.D)
			for _, w := range ws {
				pairwise.Axpy(1/float64(T), w, want)
			}
			if d := maxAbsDiff(res.W, want); d > 1e-12 {
				t.Fatalf("uniform average off by %g", d)
			}
		})
	}
}

// AvgPaper (the default) is each paper's output: OLP's online-to-batch
// average of w_1..w_{T−1}, OAM's last iterate, SPAUC's η-weighted average of
// w_0..w_{T−1}.
func TestBaselinePaperOutputs(t *testing.T) {
	train := toyAUC(80, 3, 2, 6)
	T := 250
	for _, c := range baselineCases {
		t.Run(c.algo+"/"+c.loss, func(t *testing.T) {
			obj := baselineObjective(t, train, c.loss, 2)
			cfg := pairwise.RunConfig{Eta: c.eta, Steps: T, Schedule: pairwise.InvSqrt, Buffer: 20}
			ws := iterates(t, c.algo, obj, cfg, 4)
			all := append([][]float64{make([]float64, train.D)}, ws...) // w_0..w_T
			want := make([]float64, train.D)
			switch c.algo {
			case "olp":
				for s := 1; s <= T-1; s++ {
					pairwise.Axpy(1/float64(T-1), all[s], want)
				}
			case "oam-gra":
				copy(want, all[T])
			case "spauc":
				var den float64
				for s := 1; s <= T; s++ {
					eta := pairwise.InvSqrt.Eta(c.eta, s, T)
					pairwise.Axpy(eta, all[s-1], want)
					den += eta
				}
				pairwise.Scale(1/den, want)
			}
			res := runBaseline(t, c.algo, obj, cfg, 4)
			if d := maxAbsDiff(res.W, want); d > 1e-12 {
				t.Fatalf("paper output off by %g", d)
			}
		})
	}
}

// --- Naive re-implementations of the authors' Python code, for replay ---

func denseRows(s *pairwise.Dataset) [][]float64 {
	out := make([][]float64, s.N)
	for i := range out {
		out[i] = s.DenseRowTo(make([]float64, s.D), i)
	}
	return out
}

func vsub(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for k := range a {
		out[k] = a[k] - b[k]
	}
	return out
}

func vproject(w []float64, r float64) {
	if n := math.Sqrt(pairwise.Dot(w, w)); n > r {
		pairwise.Scale(r/n, w)
	}
}

// naiveOLP follows simple-pairwise alg/auc_olp_{hinge,square}.py line by
// line (0-based t there is t−1 here), drawing randomness in the same order
// as runOLP.
func naiveOLP(s *pairwise.Dataset, loss string, eta func(t int) float64, bufSize, T int, r float64, rng *rand.Rand) [][]float64 {
	x, y := denseRows(s), s.Y
	w := make([]float64, s.D)
	buf := make([]int, bufSize)
	var out [][]float64
	for t := 1; t <= T; t++ {
		i := rng.IntN(s.N)
		switch {
		case t <= bufSize:
			buf[t-1] = i
		case t == bufSize+1:
			for k := range buf {
				if rd := rng.IntN(bufSize + 1); rd == bufSize {
					buf[k] = i
				} else {
					buf[k] = buf[rd]
				}
			}
		default:
			for k := binomialDraw(rng, bufSize, 1/float64(t-1)); k > 0; k-- {
				buf[rng.IntN(bufSize)] = i
			}
		}
		m := float64(min(t, bufSize))
		step := make([]float64, s.D) // w += η·step/m
		for _, j := range buf[:min(t, bufSize)] {
			if y[j] == y[i] {
				continue
			}
			switch loss {
			case "hinge":
				xx := vsub(x[i], x[j])
				if y[i] == 1 && pairwise.Dot(xx, w) <= 1 {
					pairwise.Axpy(1, xx, step)
				} else if y[i] == -1 && pairwise.Dot(xx, w) >= -1 {
					pairwise.Axpy(-1, xx, step)
				}
			case "square":
				xx := vsub(x[i], x[j])
				if y[i] == -1 {
					xx = vsub(x[j], x[i])
				}
				pairwise.Axpy(2*(1-pairwise.Dot(xx, w)), xx, step) // −gd
			}
		}
		pairwise.Axpy(eta(t)/m, step, w)
		vproject(w, r)
		out = append(out, slices.Clone(w))
	}
	return out
}

// naiveOAM follows simple-pairwise alg/auc_oam_gra_hinge.py (the function
// its experiment scripts call): zero-initialized buffers, C_t = η·max(1,
// N_other/buffer), sum over all opposite-buffer rows.
func naiveOAM(s *pairwise.Dataset, eta float64, sp, sn, T int, r float64, rng *rand.Rand) [][]float64 {
	x, y := denseRows(s), s.Y
	w := make([]float64, s.D)
	pos := &pairwise.Reservoir{Cap: sp}
	neg := &pairwise.Reservoir{Cap: sn}
	rows := func(res *pairwise.Reservoir) [][]float64 { // the np.zeros buffer
		b := make([][]float64, res.Cap)
		for k := range b {
			b[k] = make([]float64, s.D)
			if k < len(res.Items) {
				copy(b[k], x[res.Items[k]])
			}
		}
		return b
	}
	var out [][]float64
	for t := 1; t <= T; t++ {
		i := rng.IntN(s.N)
		if y[i] > 0 {
			c := eta * math.Max(1, float64(neg.Seen())/float64(sn))
			pos.Add(i, rng)
			step := make([]float64, s.D)
			for _, xn := range rows(neg) {
				if xx := vsub(x[i], xn); pairwise.Dot(xx, w) <= 1 {
					pairwise.Axpy(1, xx, step)
				}
			}
			pairwise.Axpy(c, step, w)
		} else {
			c := eta * math.Max(1, float64(pos.Seen())/float64(sp))
			neg.Add(i, rng)
			step := make([]float64, s.D)
			for _, xp := range rows(pos) {
				if xx := vsub(x[i], xp); pairwise.Dot(xx, w) >= -1 {
					pairwise.Axpy(1, xx, step)
				}
			}
			pairwise.Axpy(-c, step, w)
		}
		vproject(w, r)
		out = append(out, slices.Clone(w))
	}
	return out
}

// naiveSPAUC follows simple-pairwise alg/auc_spauc_square.py (auc_spauc_square).
func naiveSPAUC(s *pairwise.Dataset, eta func(t int) float64, T int, r float64, rng *rand.Rand) [][]float64 {
	x, y := denseRows(s), s.Y
	d := s.D
	mp, mn := make([]float64, d), make([]float64, d)
	var np_, nn float64
	for i := range x {
		if y[i] == 1 {
			pairwise.Axpy(1, x[i], mp)
			np_++
		} else {
			pairwise.Axpy(1, x[i], mn)
			nn++
		}
	}
	pairwise.Scale(1/np_, mp)
	pairwise.Scale(1/nn, mn)
	p := np_ / float64(s.N)
	diff := vsub(mn, mp)
	w := make([]float64, d)
	var out [][]float64
	for t := 1; t <= T; t++ {
		i := rng.IntN(s.N)
		var gd []float64
		if y[i] > 0 {
			minus := vsub(x[i], mp)
			gd = slices.Clone(minus)
			pairwise.Scale((1-p)*pairwise.Dot(w, minus), gd)
		} else {
			minus := vsub(x[i], mn)
			gd = slices.Clone(minus)
			pairwise.Scale(p*pairwise.Dot(w, minus), gd)
		}
		pairwise.Axpy(p*(1-p)*(pairwise.Dot(diff, w)+1), diff, gd)
		pairwise.Axpy(-eta(t), gd, w)
		vproject(w, r)
		out = append(out, slices.Clone(w))
	}
	return out
}

func compareIterates(t *testing.T, got, want [][]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d iterates, want %d", len(got), len(want))
	}
	for s := range got {
		scaleRef := 1 + math.Sqrt(pairwise.Dot(want[s], want[s]))
		if d := maxAbsDiff(got[s], want[s]); d > 1e-10*scaleRef {
			t.Fatalf("iterate w_%d differs from the reference by %g:\n got %v\nwant %v", s+1, d, got[s], want[s])
		}
	}
}

// The Go OLP replays the authors' update rule exactly (same draws, same
// buffer policy, normalization by min(t, s), same-label entries skipped),
// through the buffer's fill-up, its RS-x refresh at t = s+1 and beyond.
func TestOLPMatchesAuthorsCode(t *testing.T) {
	train := toyAUC(60, 4, 1, 11) // overlapping classes: many active pairs
	T, s, R := 400, 25, 1.5
	for _, loss := range []string{"hinge", "square"} {
		t.Run(loss, func(t *testing.T) {
			obj := baselineObjective(t, train, loss, R)
			for _, sched := range []pairwise.Schedule{pairwise.ScaledConstant, pairwise.InvSqrt} {
				cfg := pairwise.RunConfig{Eta: 0.7, Steps: T, Buffer: s, Schedule: sched}
				got := iterates(t, "olp", obj, cfg, 12)
				want := naiveOLP(train, loss, func(k int) float64 { return sched.Eta(0.7, k, T) }, s, T, R, rand.New(rand.NewPCG(12, 7)))
				compareIterates(t, got, want)
			}
		})
	}
}

// The Go OAM_gra replays the authors' code, including its pairing with the
// zero rows of a not yet full opposite buffer and its constant step η.
func TestOAMMatchesAuthorsCode(t *testing.T) {
	train := toyAUC(80, 4, 1, 13)
	T, R := 500, 3.0
	obj := baselineObjective(t, train, "hinge", R)
	cfg := pairwise.RunConfig{Eta: 0.002, Steps: T, PosBuffer: 12, NegBuffer: 12}
	got := iterates(t, "oam-gra", obj, cfg, 14)
	want := naiveOAM(train, 0.002, 12, 12, T, R, rand.New(rand.NewPCG(14, 7)))
	compareIterates(t, got, want)

	// Unequal buffer sizes: C_t uses the opposite buffer's size.
	cfg.PosBuffer, cfg.NegBuffer = 7, 19
	got = iterates(t, "oam-gra", obj, cfg, 15)
	want = naiveOAM(train, 0.002, 7, 19, T, R, rand.New(rand.NewPCG(15, 7)))
	compareIterates(t, got, want)
}

func TestSPAUCMatchesAuthorsCode(t *testing.T) {
	train := toyAUC(70, 4, 1, 16)
	T, R := 500, 0.8 // small radius: the projection is active
	obj := baselineObjective(t, train, "square", R)
	cfg := pairwise.RunConfig{Eta: 20, Steps: T}
	got := iterates(t, "spauc", obj, cfg, 17)
	want := naiveSPAUC(train, func(k int) float64 { return pairwise.ScaledConstant.Eta(20, k, T) }, T, R, rand.New(rand.NewPCG(17, 7)))
	compareIterates(t, got, want)

	// Sparse storage gives the same iterates.
	got = iterates(t, "spauc", baselineObjective(t, toSparse(train), "square", R), cfg, 17)
	compareIterates(t, got, want)
}

// With λ > 0, SPAUC's step is the proximal map v/(1 + ηλ) of (λ/2)‖w‖²; OLP
// and OAM_gra take the gradient step (1 − ηλ)w. Check against λ = 0 runs on
// a single step from a non-zero start.
func TestBaselineRegularizer(t *testing.T) {
	train := toyAUC(50, 3, 2, 18)
	lambda, eta := 0.3, 0.5
	w0 := []float64{0.4, -0.2, 0.1}
	for _, c := range baselineCases {
		l, _ := pairwise.LossByName(pairwise.TaskAUC, c.loss)
		plain, _ := pairwise.NewObjective(train, pairwise.ObjectiveConfig{Loss: l, Constraint: "none"})
		reg, _ := pairwise.NewObjective(train, pairwise.ObjectiveConfig{Loss: l, Constraint: "none", Lambda: lambda})
		cfg := pairwise.RunConfig{Eta: eta, Steps: 1, Schedule: pairwise.Constant, Averaging: pairwise.AvgLast, Init: w0}
		a := runBaseline(t, c.algo, plain, cfg, 19).W
		b := runBaseline(t, c.algo, reg, cfg, 19).W
		for k := range a {
			var want float64
			if c.algo == "spauc" {
				want = a[k] / (1 + eta*lambda)
			} else {
				want = a[k] - eta*lambda*w0[k]
			}
			if math.Abs(b[k]-want) > 1e-12 {
				t.Fatalf("%s: coord %d = %v, want %v", c.algo, k, b[k], want)
			}
		}
	}
}

// No allocation inside the per-step loop: a run of 10× the steps allocates
// exactly as much (up-front buffers only).
func TestBaselinesNoAllocPerStep(t *testing.T) {
	train := toyAUC(100, 5, 2, 20)
	for _, c := range baselineCases {
		obj := baselineObjective(t, train, c.loss, 5)
		a, _ := pairwise.Lookup(c.algo)
		rng := rand.New(rand.NewPCG(1, 1))
		allocs := func(T int) float64 {
			cfg := pairwise.RunConfig{Eta: c.eta, Steps: T, Averaging: pairwise.AvgWindow, Checkpoints: []int{T / 2, T},
				OnCheckpoint: func(int, []float64) {}}
			return testing.AllocsPerRun(5, func() {
				if _, err := a.Run(context.Background(), obj, cfg, rng); err != nil {
					t.Fatal(err)
				}
			})
		}
		if short, long := allocs(300), allocs(3000); short != long {
			t.Errorf("%s: %v allocations for 300 steps, %v for 3000", c.algo, short, long)
		}
	}
}

func TestBaselinesHonourContext(t *testing.T) {
	train := toyAUC(100, 3, 2, 21)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range baselineCases {
		a, _ := pairwise.Lookup(c.algo)
		obj := baselineObjective(t, train, c.loss, 5)
		if _, err := a.Run(ctx, obj, pairwise.RunConfig{Eta: c.eta, Steps: 5000}, rand.New(rand.NewPCG(1, 1))); err == nil {
			t.Errorf("%s ignored a cancelled context", c.algo)
		}
	}
}

// Reservoir (algorithm R) keeps a uniform sample: after a stream of N = 7
// items with Cap = 3, each of the C(7,3) = 35 subsets is equally likely.
// Pearson's statistic over R = 70,000 independent runs is χ²(34) under that
// hypothesis; the bound 88.38 is its 1 − 10⁻⁶ quantile, so the test fails
// with probability 10⁻⁶ for a correct sampler (the seed is fixed, so it
// either always passes or always fails).
func TestReservoirUniformSample(t *testing.T) {
	const N, Cap, R = 7, 3, 70000
	rng := rand.New(rand.NewPCG(2024, 5))
	counts := map[int]int{} // subset bitmask → count
	for r := 0; r < R; r++ {
		res := &pairwise.Reservoir{Cap: Cap}
		for item := 0; item < N; item++ {
			res.Add(item, rng)
		}
		if res.Seen() != N || len(res.Items) != Cap {
			t.Fatalf("seen %d, kept %d", res.Seen(), len(res.Items))
		}
		mask := 0
		for _, it := range res.Items {
			mask |= 1 << it
		}
		counts[mask]++
	}
	if len(counts) != 35 {
		t.Fatalf("%d distinct subsets, want 35", len(counts))
	}
	exp := float64(R) / 35
	var chi2 float64
	for _, c := range counts {
		chi2 += (float64(c) - exp) * (float64(c) - exp) / exp
	}
	t.Logf("χ²(34) = %.2f", chi2)
	if chi2 > 88.38 {
		t.Fatalf("χ²(34) = %.2f > 88.38: reservoir sample is not uniform", chi2)
	}
}

// binomialDraw (OLP's K ~ Binomial(s, 1/t)) has the binomial law: Pearson's
// statistic over 100,000 draws of Binomial(200, 0.02) in the bins
// 0, 1, …, 9, ≥10 is χ²(10); 46.86 is its 1 − 10⁻⁶ quantile (false-failure
// rate 10⁻⁶).
func TestOLPBinomialDraw(t *testing.T) {
	const n, p, R = 200, 0.02, 100000
	rng := rand.New(rand.NewPCG(77, 1))
	var obs [11]float64
	for r := 0; r < R; r++ {
		k := binomialDraw(rng, n, p)
		if k < 0 || k > n {
			t.Fatalf("draw %d outside [0, %d]", k, n)
		}
		obs[min(k, 10)]++
	}
	var chi2, tail float64 = 0, 1
	for k := 0; k < 10; k++ {
		lg, _ := math.Lgamma(n + 1)
		l1, _ := math.Lgamma(float64(k) + 1)
		l2, _ := math.Lgamma(float64(n-k) + 1)
		pk := math.Exp(lg - l1 - l2 + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
		tail -= pk
		e := R * pk
		chi2 += (obs[k] - e) * (obs[k] - e) / e
	}
	e := R * tail
	chi2 += (obs[10] - e) * (obs[10] - e) / e
	t.Logf("χ²(10) = %.2f", chi2)
	if chi2 > 46.86 {
		t.Fatalf("χ²(10) = %.2f > 46.86: not Binomial(%d, %v)", chi2, n, p)
	}
	if binomialDraw(rng, 5, 0) != 0 || binomialDraw(rng, 5, 1) != 5 {
		t.Fatal("degenerate p handled wrongly")
	}
}
