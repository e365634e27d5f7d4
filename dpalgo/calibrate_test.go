package dpalgo

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/pairwise"
)

// replayNoise couples two runs of a private algorithm on neighbouring
// datasets D and D′ the way the composition theorems do. In record mode
// (run on D) it keeps every release's pre-noise value and adds nothing (the
// released value is the pre-noise value: any noise would do). In replay mode
// (run on D′) it keeps the pre-noise value and then overwrites the release
// with D's released value, so everything computed afterwards (the next
// phase's start, the next gradient's point) is the same in both runs —
// exactly the conditioning under which each release's sensitivity is
// defined. ‖pre_D[i] − pre_D′[i]‖ is then the change of release i.
type replayNoise struct {
	pre    [][]float64
	replay [][]float64 // D's released values (replay mode)
	secure bool
}

func (r *replayNoise) add(dst []float64) {
	i := len(r.pre)
	r.pre = append(r.pre, append([]float64(nil), dst...))
	if r.replay != nil && i < len(r.replay) {
		copy(dst, r.replay[i])
	}
}
func (r *replayNoise) AddGaussian(dst []float64, _ float64)  { r.add(dst) }
func (r *replayNoise) AddLaplace(dst []float64, _ float64)   { r.add(dst) }
func (r *replayNoise) AddL2Laplace(dst []float64, _ float64) { r.add(dst) }
func (r *replayNoise) Secure() bool                          { return r.secure }
func (r *replayNoise) Name() string                          { return "replay (test)" }

// bfData returns n records of dimension d: half on the sphere of radius R,
// half inside it, labels alternating ±1.
func bfData(n, d int, R float64, seed uint64) (x, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 17))
	x, y = make([]float64, n*d), make([]float64, n)
	for i := 0; i < n; i++ {
		row := x[i*d : (i+1)*d]
		var s float64
		for k := range row {
			row[k] = rng.NormFloat64()
			s += row[k] * row[k]
		}
		r := R
		if i%2 == 1 {
			r = R * rng.Float64()
		}
		for k := range row {
			row[k] *= r / math.Sqrt(s)
		}
		y[i] = float64(1 - 2*(i%2))
		if i%4 >= 2 {
			y[i] = -y[i]
		}
	}
	return x, y
}

// bfReplacements are the replacements z′ of record k tried by the brute
// force: the worst cases of the sensitivity arguments (the reflected record,
// label flips, a record opposite a partner on the sphere — where the AUC
// gradient coefficient is largest — the origin) and random sphere points,
// each with both labels.
func bfReplacements(x, y []float64, d, k int, R float64, rng *rand.Rand) (xs [][]float64, ys []float64) {
	n := len(y)
	xk := x[k*d : (k+1)*d]
	add := func(v []float64) {
		for _, l := range []float64{1, -1} {
			xs = append(xs, v)
			ys = append(ys, l)
		}
	}
	neg := make([]float64, d)
	for i := range neg {
		neg[i] = -xk[i]
	}
	add(append([]float64(nil), xk...))
	add(neg)
	add(make([]float64, d))
	for _, j := range []int{(k + 1) % n, (k + 2) % n, (k + 3) % n} {
		xj := x[j*d : (j+1)*d]
		var s float64
		for _, v := range xj {
			s += v * v
		}
		v := make([]float64, d)
		for i := range v {
			v[i] = -R * xj[i] / math.Sqrt(s)
		}
		add(v)
	}
	for r := 0; r < 3; r++ {
		v := make([]float64, d)
		var s float64
		for i := range v {
			v[i] = rng.NormFloat64()
			s += v[i] * v[i]
		}
		for i := range v {
			v[i] *= R / math.Sqrt(s)
		}
		add(v)
	}
	return xs, ys
}

// Γ of pairGradGap against brute force: for random w in the parameter set
// and partners, the change of one pair gradient (both orders) when one
// record is replaced never exceeds Γ. It also confirms that "Γ = G" would
// be wrong for the metric losses (the brute force exceeds G) and that the
// AUC logistic and hinge bounds are (nearly) attained. The default run
// checks the bound over 300 trials per case; the 3 000 trials and the
// attainment checks, which need them, run under the build tag long
// (TestLongPairGradGapBruteForce: 26 s under the race detector).
func TestPairGradGapBruteForce(t *testing.T) { pairGradGapBruteForce(t, false) }

func pairGradGapBruteForce(t *testing.T, full bool) {
	const d = 3
	trials := 300
	if full {
		trials = 3000
	}
	for _, c := range []struct {
		task       pairwise.Task
		loss       string
		constraint string
		R, B       float64
		exceedsG   bool // the brute force must find a change > G
		reachGFrac float64
	}{
		{pairwise.TaskAUC, "logistic", "l2", 1, 1, false, 0.8},
		{pairwise.TaskAUC, "hinge", "l2", 1, 1, false, 0.99},
		{pairwise.TaskAUC, "square", "l2", 0.5, 0.9, false, 0.5}, // 2RB ≤ 1: Γ = G
		// 2RB = 2: the proven Γ = 16R²B (> G = 12); the brute force finds
		// no change above G (max ≈ 11.96), so "Γ = G" may hold here too,
		// but without a proof pairfed keeps 16R²B (safe, possibly loose).
		{pairwise.TaskAUC, "square", "l2", 1, 1, false, 0},
		{pairwise.TaskMetric, "logistic", "frobenius-psd", 1, 1, true, 0.8}, // Γ = 1.381G on the PSD set; brute force 1.225G
		{pairwise.TaskMetric, "hinge", "frobenius-psd", 1, 1, true, 0},
	} {
		rng := rand.New(rand.NewPCG(3, 4))
		loss, err := pairwise.LossByName(c.task, c.loss)
		if err != nil {
			t.Fatal(err)
		}
		G := loss.Props(c.R, c.B).Lipschitz
		var worst float64
		for trial := 0; trial < trials; trial++ {
			x, y := bfData(12, d, c.R, uint64(trial))
			xs, ys := bfReplacements(x, y, d, 0, c.R, rng)
			// records: 0 = z, 1 = partner z_j, 2 = z′
			for r := range xs {
				for _, j := range []int{1, 2, 3, 5} {
					X := append(append(append([]float64(nil), x[0:d]...), x[j*d:(j+1)*d]...), xs[r]...)
					ds := pairwise.NewDense(X, []float64{y[0], y[j], ys[r]}, d)
					obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Task: c.task, Loss: loss, Constraint: c.constraint, Radius: c.B})
					if err != nil {
						t.Fatal(err)
					}
					gamma, _ := pairGradGap(obj, c.R)
					w := make([]float64, obj.NumParams())
					for i := range w {
						w[i] = rng.NormFloat64()
					}
					if trial%3 == 0 {
						w[0] += 10 // push to the boundary after projection
					}
					obj.Project(w)
					for _, ord := range [][2][2]int{{{0, 1}, {2, 1}}, {{1, 0}, {1, 2}}} {
						g1 := make([]float64, len(w))
						g2 := make([]float64, len(w))
						obj.AddGrad(g1, w, ord[0][0], ord[0][1], 1)
						obj.AddGrad(g2, w, ord[1][0], ord[1][1], 1)
						var s float64
						for i := range g1 {
							s += (g1[i] - g2[i]) * (g1[i] - g2[i])
						}
						diff := math.Sqrt(s)
						if diff > gamma*(1+1e-12) {
							t.Fatalf("%s %s R=%g B=%g: pair-gradient change %.6g > Γ = %.6g (w = %v, z′ = %v/%v)", c.task, c.loss, c.R, c.B, diff, gamma, w, xs[r], ys[r])
						}
						worst = math.Max(worst, diff)
					}
				}
			}
		}
		gamma, _ := lossPairGradGap(loss, c.R, c.B, isPSDConstraint(c.constraint))
		t.Logf("%s %s R=%g B=%g: G = %.4g, Γ = %.4g, brute-force max %.4g", c.task, c.loss, c.R, c.B, G, gamma, worst)
		if !full {
			continue
		}
		if c.exceedsG && !(worst > G) {
			t.Errorf("%s %s: brute force found no change above G = %g (max %g); the case was meant to show Γ > G", c.task, c.loss, G, worst)
		}
		if c.reachGFrac > 0 && worst < c.reachGFrac*gamma {
			t.Errorf("%s %s: brute force max %g is far below Γ = %g: the search is too weak to test the bound", c.task, c.loss, worst, gamma)
		}
	}
}

// bfCase is one brute-force sensitivity check: an algorithm, an objective
// and a setting where the proven (tight) bound is the active one.
type bfCase struct {
	name, algo  string
	task        pairwise.Task
	loss        string
	constraint  string
	n           int
	R, B        float64
	lambda      float64
	delta       float64
	cfg         pairwise.RunConfig
	records     []int // records replaced (nil: all)
	belowDiam   bool  // the reported bound must be below the diameter (the stability argument is what is tested)
	l1          bool  // Laplace: compare ℓ1 norms
	minReleases int
}

// Each tight sensitivity against brute force: on small random datasets,
// for every replaced record (worst-case constructed replacements and label
// flips), the change of every PRE-NOISE release (captured by replayNoise,
// with the runs coupled as in the composition theorems) is at most the
// sensitivity the algorithm reports and calibrates its noise to.
func TestSensitivityBruteForce(t *testing.T) {
	cases := []bfCase{
		{name: "dpgdsc stability", algo: "dpgdsc", task: pairwise.TaskAUC, loss: "logistic", constraint: "l2", n: 10, R: 1, B: 1, lambda: 0.5, delta: 1e-3, cfg: pairwise.RunConfig{Steps: 30}, belowDiam: true, minReleases: 1},
		{name: "dpgdsc Laplace", algo: "dpgdsc", task: pairwise.TaskAUC, loss: "logistic", constraint: "l2", n: 10, R: 1, B: 1, lambda: 0.5, delta: 0, cfg: pairwise.RunConfig{Steps: 30}, l1: true, minReleases: 1},
		{name: "dpgdc2 AUC", algo: "dpgdc2", task: pairwise.TaskAUC, loss: "logistic", constraint: "l2", n: 10, R: 1, B: 1, delta: 1e-3, cfg: pairwise.RunConfig{Steps: 6}, belowDiam: true, minReleases: 6},
		{name: "dpgdc2 metric", algo: "dpgdc2", task: pairwise.TaskMetric, loss: "logistic", constraint: "frobenius-psd", n: 10, R: 0.7, B: 1, delta: 1e-3, cfg: pairwise.RunConfig{Steps: 4}, belowDiam: true, minReleases: 4},
		{name: "dpegd", algo: "dpegd", task: pairwise.TaskAUC, loss: "logistic", constraint: "l2", n: 16, R: 1, B: 1, delta: 1e-3, cfg: pairwise.RunConfig{Eta: 0.4}, belowDiam: true, minReleases: 4},
		// A start outside C (here an initial point; in dpegd the noisy epoch
		// averages, at a site the coordinator's model): the square loss's
		// Γ = G holds only over C, so the start is projected first.
		{name: "dpgdc2 square, start outside C", algo: "dpgdc2", task: pairwise.TaskAUC, loss: "square", constraint: "l2", n: 10, R: 0.5, B: 0.9, delta: 1e-3, cfg: pairwise.RunConfig{Steps: 3, Init: []float64{9, -9, 9}}, belowDiam: true, minReleases: 3},
		{name: "dpgdc", algo: "dpgdc", task: pairwise.TaskAUC, loss: "logistic", constraint: "l2", n: 10, R: 1, B: 1, delta: 1e-3, cfg: pairwise.RunConfig{Steps: 10, Eta: 0.3}, belowDiam: true, minReleases: 1},
		{name: "dp-gd-grad logistic", algo: "dp-gd-grad", task: pairwise.TaskAUC, loss: "logistic", constraint: "l2", n: 10, R: 1, B: 1, delta: 1e-3, cfg: pairwise.RunConfig{Steps: 5}, belowDiam: true, minReleases: 5},
		{name: "dp-gd-grad square 2RB>1", algo: "dp-gd-grad", task: pairwise.TaskAUC, loss: "square", constraint: "l2", n: 10, R: 1, B: 1, delta: 1e-3, cfg: pairwise.RunConfig{Steps: 5, Eta: 0.05}, minReleases: 5},
		{name: "dp-gd-grad metric", algo: "dp-gd-grad", task: pairwise.TaskMetric, loss: "logistic", constraint: "frobenius-psd", n: 10, R: 0.7, B: 1, delta: 1e-3, cfg: pairwise.RunConfig{Steps: 4}, belowDiam: true, minReleases: 4},
		{name: "dp-local-sgd", algo: "dp-local-sgd", task: pairwise.TaskAUC, loss: "logistic", constraint: "l2", n: 16, R: 1, B: 1, delta: 1e-3, cfg: pairwise.RunConfig{Eta: 0.02}, belowDiam: true, minReleases: 4},
		{name: "dp-sgd-output unbounded W", algo: "dp-sgd-output", task: pairwise.TaskAUC, loss: "hinge", constraint: "none", n: 8, R: 1, delta: 1e-3, cfg: pairwise.RunConfig{Steps: 16, Eta: 0.05}, minReleases: 1},
		{name: "off-pair-strc", algo: "off-pair-strc", task: pairwise.TaskAUC, loss: "logistic", constraint: "l2", n: 48, R: 0.1, B: 1, lambda: 0.1, delta: 1e-3, records: []int{0, 7, 20, 33, 47}, belowDiam: true, minReleases: 1},
		{name: "on-pair-strc", algo: "on-pair-strc", task: pairwise.TaskAUC, loss: "logistic", constraint: "l2", n: 40, R: 0.1, B: 1, lambda: 0.1, delta: 1e-3, records: []int{0, 20, 33, 39}, belowDiam: true, minReleases: 8},
		{name: "on-pair-strc square", algo: "on-pair-strc", task: pairwise.TaskAUC, loss: "square", constraint: "l2", n: 60, R: 0.5, B: 1, lambda: 4, delta: 1e-3, records: []int{0, 37, 45, 59}, belowDiam: true, minReleases: 8},
		{name: "on-pair-c", algo: "on-pair-c", task: pairwise.TaskAUC, loss: "logistic", constraint: "l2", n: 40, R: 0.1, B: 1, delta: 1e-3, records: []int{0, 20, 33, 39}, belowDiam: true, minReleases: 8},
		{name: "off-pair-c", algo: "off-pair-c", task: pairwise.TaskAUC, loss: "logistic", constraint: "l2", n: 48, R: 0.1, B: 1, delta: 1e-3, records: []int{0, 7, 20, 33, 47}, belowDiam: true, minReleases: 1},
		{name: "on-pair-strc metric", algo: "on-pair-strc", task: pairwise.TaskMetric, loss: "logistic", constraint: "frobenius-psd", n: 40, R: 0.3, B: 1, lambda: 0.1, delta: 1e-3, records: []int{0, 20, 33, 39}, belowDiam: true, minReleases: 8},
	}
	const d = 3
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := pairwise.Lookup(c.algo)
			if err != nil {
				t.Fatal(err)
			}
			loss, err := pairwise.LossByName(c.task, c.loss)
			if err != nil {
				t.Fatal(err)
			}
			mk := func(x, y []float64) pairwise.Objective {
				obj, err := pairwise.NewObjective(pairwise.NewDense(x, y, d), pairwise.ObjectiveConfig{Task: c.task, Loss: loss, Lambda: c.lambda, Constraint: c.constraint, Radius: c.B})
				if err != nil {
					t.Fatal(err)
				}
				return obj
			}
			run := func(obj pairwise.Objective, noise *replayNoise) *pairwise.Result {
				cfg := c.cfg
				cfg.Privacy = &pairwise.Privacy{Epsilon: 1, Delta: c.delta, FeatureRadius: c.R, Noise: noise}
				res, err := a.Run(context.Background(), obj, cfg, rand.New(rand.NewPCG(5, 6)))
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			rng := rand.New(rand.NewPCG(9, 10))
			worst := 0.0
			for seed := uint64(1); seed <= 3; seed++ {
				x, y := bfData(c.n, d, c.R, seed)
				base := &replayNoise{}
				res := run(mk(x, y), base)
				rep := res.Privacy
				if len(base.pre) < c.minReleases || len(rep.Sensitivity) != len(base.pre) {
					t.Fatalf("%d releases captured, %d sensitivities reported", len(base.pre), len(rep.Sensitivity))
				}
				if c.belowDiam {
					diam := paramDiameter(mk(x, y))
					for i, s := range rep.Sensitivity {
						if !(s < diam) {
							t.Fatalf("release %d: Δ = %g is the diameter %g: the stability bound is not what is tested", i, s, diam)
						}
					}
				}
				records := c.records
				if records == nil {
					for k := 0; k < c.n; k++ {
						records = append(records, k)
					}
				}
				for _, k := range records {
					xs, ys := bfReplacements(x, y, d, k, c.R, rng)
					for r := range xs {
						x2 := append([]float64(nil), x...)
						y2 := append([]float64(nil), y...)
						copy(x2[k*d:(k+1)*d], xs[r])
						y2[k] = ys[r]
						other := &replayNoise{replay: base.pre}
						run(mk(x2, y2), other)
						if len(other.pre) != len(base.pre) {
							t.Fatalf("record %d: %d releases on D′, %d on D", k, len(other.pre), len(base.pre))
						}
						for i := range base.pre {
							var s float64
							for j := range base.pre[i] {
								v := base.pre[i][j] - other.pre[i][j]
								if c.l1 {
									s += math.Abs(v)
								} else {
									s += v * v
								}
							}
							if !c.l1 {
								s = math.Sqrt(s)
							}
							if s > rep.Sensitivity[i]*(1+1e-9)+1e-15 {
								t.Fatalf("seed %d, record %d → %v/%v: release %d changed by %.6g > reported Δ = %.6g", seed, k, xs[r], ys[r], i, s, rep.Sensitivity[i])
							}
							worst = math.Max(worst, s/rep.Sensitivity[i])
						}
					}
				}
			}
			t.Logf("largest change / Δ over all releases and replacements: %.3f", worst)
			if !(worst > 0) {
				t.Fatal("no release changed: the brute force tests nothing")
			}
		})
	}
}

// The registry table: every private algorithm at ε ∈ {0.1, 0.5, 1, 2, 8,
// 20} (δ = 1/(10n)) with a secure-flagged noise source: the default exact
// calibration certifies (ε, δ) (certified ε ≤ ε, certified δ ≤ δ) and
// draws exactly the certified σ's; --calibration paper either certifies
// its printed σ's or is refused, naming the certified ε, before drawing
// any noise. The same holds for the federated site forms.
func TestCalibrationRegistryTable(t *testing.T) {
	const n, d = 64, 3
	epsilons := []float64{0.1, 0.5, 1, 2, 8, 20}
	delta := 1 / (10.0 * n)
	x, y := bfData(n, d, 0.1, 99)
	for _, a := range pairwise.Algorithms() {
		if !a.Private {
			continue
		}
		lambda := 0.0
		if a.NeedsStrongConvexity {
			lambda = 0.1
		}
		loss := "logistic"
		if a.Losses != nil && !strings.Contains(strings.Join(a.Losses, ","), "logistic") {
			loss = a.Losses[0]
		}
		l, _ := pairwise.LossByName(pairwise.TaskAUC, loss)
		obj, err := pairwise.NewObjective(pairwise.NewDense(x, y, d), pairwise.ObjectiveConfig{Task: pairwise.TaskAUC, Loss: l, Lambda: lambda, Constraint: "l2", Radius: 1})
		if err != nil {
			t.Fatal(err)
		}
		deltas := []float64{delta}
		if a.PureDP {
			deltas = append(deltas, 0)
		}
		for _, dl := range deltas {
			for _, eps := range epsilons {
				for _, cal := range []pairwise.Calibration{pairwise.CalibrationExact, pairwise.CalibrationPaper} {
					rec := &recNoise{secure: true}
					cfg := pairwise.RunConfig{Privacy: &pairwise.Privacy{Epsilon: eps, Delta: dl, FeatureRadius: 0.1, Noise: rec, Calibration: cal}}
					if a.Name == "dp-sgd-output" {
						cfg.Steps = 4 * n
					}
					res, err := a.Run(context.Background(), obj, cfg, rand.New(rand.NewPCG(1, 2)))
					if cal == pairwise.CalibrationPaper && !a.PaperCalibration {
						// pairfed's own mechanisms have no printed σ.
						if err == nil || !strings.Contains(err.Error(), "does not apply") || len(rec.calls) != 0 {
							t.Fatalf("%s paper: error %v after %d draws, want the refusal up front", a.Name, err, len(rec.calls))
						}
						continue
					}
					if cal == pairwise.CalibrationPaper && err != nil {
						if !strings.Contains(err.Error(), "refused") || !strings.Contains(err.Error(), "certifies only ε") || len(rec.calls) != 0 {
							t.Fatalf("%s ε=%g δ=%g paper: error %v after %d draws", a.Name, eps, dl, err, len(rec.calls))
						}
						continue
					}
					if err != nil {
						t.Fatalf("%s ε=%g δ=%g %s: %v", a.Name, eps, dl, cal, err)
					}
					p := res.Privacy
					// A run that drew noise states a certificate: ε in
					// (0, requested] (a zero would be a report nobody
					// certified; only a run that released nothing
					// data-dependent, [H20] with T₁ ≥ n, certifies 0).
					if len(rec.calls) > 0 && !(p.CertifiedEpsilon > 0) {
						t.Fatalf("%s ε=%g δ=%g %s: %d noisy draws but certified ε = %v (report without a certificate)", a.Name, eps, dl, cal, len(rec.calls), p.CertifiedEpsilon)
					}
					if !(p.CertifiedEpsilon <= eps) || !(p.CertifiedDelta <= dl) || p.Calibration != string(cal) || !p.Private {
						t.Fatalf("%s ε=%g δ=%g %s: certified (%v, %v), calibration %q, private %v", a.Name, eps, dl, cal, p.CertifiedEpsilon, p.CertifiedDelta, p.Calibration, p.Private)
					}
					if !a.PaperCalibration {
						continue // its own draws layout (e.g. one σ for T subsampled steps)
					}
					drawn := 0
					for i, s := range p.Sigmas {
						if s == 0 {
							continue
						}
						if drawn >= len(rec.calls) || rec.calls[drawn].scale != s {
							t.Fatalf("%s ε=%g %s: σ_%d = %v reported but draws were %+v", a.Name, eps, cal, i, s, rec.calls)
						}
						drawn++
					}
					if drawn != len(rec.calls) {
						t.Fatalf("%s ε=%g %s: %d draws, %d reported σ's", a.Name, eps, cal, len(rec.calls), drawn)
					}
				}
			}
		}
	}
	// The federated site forms, default (exact) calibration.
	obj, err := pairwise.NewObjective(pairwise.NewDense(x, y, d), pairwise.ObjectiveConfig{Task: pairwise.TaskAUC, Loss: pairwise.AUCLogistic{}, Constraint: "l2", Radius: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, eps := range epsilons {
		priv := &pairwise.Privacy{Epsilon: eps, Delta: delta, FeatureRadius: 0.1, Noise: &recNoise{secure: true}}
		start := make([]float64, d)
		part, _ := LocalSGDPartition(n, LocalSGDPhases(n), rand.New(rand.NewPCG(1, 1)))
		for k := range part {
			r, err := LocalSGDPhase(context.Background(), obj, start, part[k], k+1, 0.1, priv, rand.New(rand.NewPCG(2, 2)))
			if err != nil || !(r.CertifiedEpsilon <= eps && r.CertifiedDelta <= delta) || !(r.Sigma <= r.PaperSigma || r.Sigma < 1e-300) {
				t.Fatalf("LocalSGDPhase ε=%g k=%d: %+v, %v", eps, k+1, r, err)
			}
		}
		epochs, _ := DPEGDPartition(n, DPEGDPhases(n), rand.New(rand.NewPCG(1, 1)))
		for i := range epochs {
			r, err := DPEGDEpoch(context.Background(), obj, start, epochs[i], i+1, 0.1, priv)
			if err != nil || !(r.CertifiedEpsilon <= eps && r.CertifiedDelta <= delta) {
				t.Fatalf("DPEGDEpoch ε=%g i=%d: %+v, %v", eps, i+1, r, err)
			}
		}
		r, err := DPGDGradRound(context.Background(), obj, start, 5, priv)
		if err != nil || !(r.CertifiedEpsilon <= eps && r.CertifiedDelta <= delta) || !(r.Sigma < r.PaperSigma) {
			t.Fatalf("DPGDGradRound ε=%g: %+v, %v", eps, r, err)
		}
	}
}

// The metric logistic Γ on PSD sets against a direct search in matrix
// space: for random PSD W with ‖W‖_F ≤ B (rank one, in the plane of the
// two pairs, where the coupling binds; and random full rank) and pair
// directions v, v′ of norms ≤ 2R at random angles, the change of the pair
// gradient between a similar and a dissimilar pair, ‖σ(h − 1)vvᵀ +
// σ(1 − h′)v′v′ᵀ‖_F, and between two pairs of the same kind, never
// exceeds Γ, and the search comes within 15 % of it (the coupled bound is
// not loose by much). Deterministic (fixed seed).
func TestMetricLogisticGapDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	sig := func(u float64) float64 { return 1 / (1 + math.Exp(-u)) }
	for _, c := range []struct{ R, B float64 }{{1, 1}, {0.7, 1}, {1, 4}, {0.3, 1}} {
		G := 4 * c.R * c.R
		gamma, _ := lossPairGradGap(pairwise.MetricLogistic{}, c.R, c.B, true)
		if simple := G * math.Max(math.Sqrt2*math.Max(sig(G*c.B-1), sig(1)), sig(G*c.B-1)+sig(1)); gamma > simple*(1+1e-9) || gamma > 2*G {
			t.Fatalf("R=%g B=%g: Γ = %g above the uncoupled bound %g or 2G", c.R, c.B, gamma, simple)
		}
		worst := 0.0
		for trial := 0; trial < 200000; trial++ {
			th, ph := rng.Float64()*math.Pi, rng.Float64()*math.Pi
			u := [2]float64{1, 0}
			up := [2]float64{math.Cos(th), math.Sin(th)}
			var W [2][2]float64
			if trial%2 == 0 {
				w := [2]float64{math.Cos(ph), math.Sin(ph)}
				for i := range 2 {
					for j := range 2 {
						W[i][j] = c.B * w[i] * w[j]
					}
				}
			} else {
				m := [2][2]float64{{rng.NormFloat64(), rng.NormFloat64()}, {rng.NormFloat64(), rng.NormFloat64()}}
				var f float64
				for i := range 2 {
					for j := range 2 {
						W[i][j] = m[i][0]*m[j][0] + m[i][1]*m[j][1]
						f += W[i][j] * W[i][j]
					}
				}
				s := c.B * rng.Float64() / math.Sqrt(f)
				for i := range 2 {
					for j := range 2 {
						W[i][j] *= s
					}
				}
			}
			a := G * math.Sqrt(rng.Float64())
			ap := G * rng.Float64()
			if trial%3 == 0 {
				a = G
			}
			quad := func(x [2]float64) float64 {
				return x[0]*(W[0][0]*x[0]+W[0][1]*x[1]) + x[1]*(W[1][0]*x[0]+W[1][1]*x[1])
			}
			h, hp := a*quad(u), ap*quad(up)
			k := (u[0]*up[0] + u[1]*up[1]) * (u[0]*up[0] + u[1]*up[1])
			for _, kind := range []int{0, 1, 2} {
				var x, y, sign float64
				switch kind {
				case 0: // similar vs dissimilar
					x, y, sign = sig(h-1)*a, sig(1-hp)*ap, 1
				case 1: // both similar
					x, y, sign = sig(h-1)*a, sig(hp-1)*ap, -1
				case 2: // both dissimilar
					x, y, sign = sig(1-h)*a, sig(1-hp)*ap, -1
				}
				d := math.Sqrt(x*x + y*y + sign*2*x*y*k)
				if d > gamma*(1+1e-12) {
					t.Fatalf("R=%g B=%g: change %.6g > Γ = %.6g (kind %d, a=%g a′=%g h=%g h′=%g κ=%g)", c.R, c.B, d, gamma, kind, a, ap, h, hp, k)
				}
				worst = math.Max(worst, d)
			}
		}
		t.Logf("R=%g B=%g: Γ = %.4gG, direct search %.4gG", c.R, c.B, gamma/G, worst/G)
		if worst < 0.85*gamma {
			t.Errorf("R=%g B=%g: the search reaches %.4gG, below 0.85Γ = %.4gG: the bound is loose or the search weak", c.R, c.B, worst/G, 0.85*gamma/G)
		}
	}
}
