package dpalgo

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/pairwise"
)

// ykNoise is a recording fake Noise for the [Y21a]/[Y21b]/[K22] tests
// (pairwise tests cannot import dp): it logs the mechanism, σ (or b) and
// length of every call and adds seeded math/rand/v2 noise. Secure reports
// whatever the test asks, to check that reports copy it.
type ykNoise struct {
	rng    *rand.Rand
	secure bool
	kinds  []string
	scales []float64
	lens   []int
}

func newYKNoise(seed uint64, secure bool) *ykNoise {
	return &ykNoise{rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), secure: secure}
}

func (f *ykNoise) record(kind string, dst []float64, s float64) {
	f.kinds = append(f.kinds, kind)
	f.scales = append(f.scales, s)
	f.lens = append(f.lens, len(dst))
}

func (f *ykNoise) AddGaussian(dst []float64, sigma float64) {
	f.record("gaussian", dst, sigma)
	for i := range dst {
		dst[i] += sigma * f.rng.NormFloat64()
	}
}

func (f *ykNoise) AddLaplace(dst []float64, b float64) {
	f.record("laplace", dst, b)
	for i := range dst {
		z := b * f.rng.ExpFloat64()
		if f.rng.IntN(2) == 0 {
			z = -z
		}
		dst[i] += z
	}
}

func (f *ykNoise) AddL2Laplace(dst []float64, b float64) {
	f.record("l2-laplace", dst, b)
	dir := make([]float64, len(dst))
	var r float64
	for i := range dir {
		dir[i] = f.rng.NormFloat64()
		r += b * f.rng.ExpFloat64() // Gamma(len, b) as a sum of exponentials
	}
	s := r / pairwise.Norm2(dir)
	for i := range dst {
		dst[i] += s * dir[i]
	}
}

func (f *ykNoise) Secure() bool { return f.secure }
func (f *ykNoise) Name() string { return "recording fake (seeded math/rand/v2)" }

var _ pairwise.Noise = (*ykNoise)(nil)

// separableToyData returns n seeded records in d dimensions that are nearly
// separable along feature 0: x = 0.5·y·e₀ + N(0, 0.2² I), clipped to ‖x‖ ≤ 1.
func separableToyData(n, d int, seed uint64) *pairwise.Dataset {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		y[i] = 1
		if rng.IntN(2) == 0 {
			y[i] = -1
		}
		row := x[i*d : (i+1)*d]
		for k := range row {
			row[k] = 0.2 * rng.NormFloat64()
		}
		row[0] += 0.5 * y[i]
		if nr := pairwise.Norm2(row); nr > 1 {
			pairwise.Scale(1/nr, row)
		}
	}
	return pairwise.NewDense(x, y, d)
}

// objectiveOf builds an objective or fails the test.
func objectiveOf(t *testing.T, data *pairwise.Dataset, task pairwise.Task, loss, constraint string, radius float64) pairwise.Objective {
	t.Helper()
	l, err := pairwise.LossByName(task, loss)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := pairwise.NewObjective(data, pairwise.ObjectiveConfig{Task: task, Loss: l, Constraint: constraint, Radius: radius})
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

func runSeeded(t *testing.T, name string, obj pairwise.Objective, cfg pairwise.RunConfig) (*pairwise.Result, error) {
	t.Helper()
	a, err := pairwise.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return a.Run(context.Background(), obj, cfg, rand.New(rand.NewPCG(11, 12)))
}

func wantRelClose(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-11*math.Abs(want) {
		t.Errorf("%s = %.15g, want %.15g (hand computation)", what, got, want)
	}
}

func TestHalvingPhaseSizes(t *testing.T) {
	for _, c := range []struct {
		n    int
		want []int
	}{
		{1024, []int{512, 256, 128, 64, 32, 16, 8, 4, 2, 1}}, // Σ = 1023: 1 record unused
		{1000, []int{500, 250, 125, 62, 31, 15, 7, 3, 1, 1}}, // Σ = 995: 5 unused (s₂(1000) = 6)
		{2, []int{1}},
		{3, []int{1, 1}},
		{5, []int{2, 1, 1}},
	} {
		got := halvingPhaseSizes(c.n)
		if len(got) != len(c.want) {
			t.Fatalf("n = %d: sizes %v, want %v", c.n, got, c.want)
		}
		sum := 0
		for k := range got {
			sum += got[k]
			if got[k] != c.want[k] {
				t.Fatalf("n = %d: sizes %v, want %v", c.n, got, c.want)
			}
		}
		if sum >= c.n {
			t.Fatalf("n = %d: phases use %d records", c.n, sum)
		}
	}
}

// [Y21a] Alg 3 line 6 by hand for n = 1024, ε = 1, δ = 1e-3, R = 1, the
// logistic AUC loss (G = 4R = 4, L = 4R² = 4), η = 0.1:
//
//	ln(4/δ) = ln 4000 = 8.294049640102028
//	√(2 ln(2.5/δ)) = √(2 ln 2500) = √(2·7.824046010856292) = 3.955766932177954
//	σ_k = 12·4·(0.1/4^k)·8.294049640102028·3.955766932177954/1 = 157.484771041/4^k
//	σ_1 = 39.37119276018968, σ_2 = 9.84279819004742, …, σ_10 = 1.5018918136669036e-4
//	Δ_k = 12·4·(0.1/4^k)·8.294049640102028 = 39.81143827248973/4^k
//	K = ⌈log₂ 1024⌉ = 10, n_k = 512, 256, …, 1, T_k = ⌈n_k·8.29405⌉ =
//	4247, 2124, 1062, 531, 266, 133, 67, 34, 17, 9 (Σ = 8490).
func TestLocalSGDSigmaMatchesAlg3(t *testing.T) {
	data := separableToyData(1024, 5, 1)
	obj := objectiveOf(t, data, pairwise.TaskAUC, "logistic", "l2", 1)
	noise := newYKNoise(3, true)
	res, err := runSeeded(t, "dp-local-sgd", obj, pairwise.RunConfig{Eta: 0.1,
		Privacy: &pairwise.Privacy{Epsilon: 1, Delta: 1e-3, FeatureRadius: 1, Noise: noise, Calibration: pairwise.CalibrationPaper}})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{39.37119276018968, 9.84279819004742, 2.460699547511855, 0.6151748868779637,
		0.15379372171949093, 0.03844843042987273, 0.009612107607468183, 0.002403026901867046,
		0.0006007567254667615, 0.00015018918136669036}
	if len(noise.scales) != len(want) {
		t.Fatalf("%d noise draws, want K = %d", len(noise.scales), len(want))
	}
	rep := res.Privacy
	for k, w := range want {
		wantRelClose(t, "drawn σ_k", noise.scales[k], w)
		wantRelClose(t, "reported σ_k", rep.Sigmas[k], w)
		wantRelClose(t, "Δ_k", rep.PaperSensitivity[k], 39.81143827248973/math.Pow(4, float64(k+1)))
		if noise.kinds[k] != "gaussian" || noise.lens[k] != 5 {
			t.Fatalf("draw %d: %s over %d entries, want gaussian over 5", k, noise.kinds[k], noise.lens[k])
		}
	}
	if res.Steps != 8490 {
		t.Errorf("steps %d, want Σ⌈n_k log(4/δ)⌉ = 8490", res.Steps)
	}
	if rep.Releases != 10 || !strings.Contains(rep.Accountant, "parallel composition over disjoint phases ([Y21a] Thm 10)") ||
		!strings.Contains(rep.Formula, "[Y21a] Alg 3") || rep.G != 4 || rep.L != 4 || rep.Mechanism != "gaussian" ||
		rep.Epsilon != 1 || rep.Delta != 1e-3 || rep.R != 1 || rep.Assumptions == "" || rep.Noise != noise.Name() {
		t.Errorf("report fields: %+v", rep)
	}
	if rep.Private != noise.Secure() {
		t.Errorf("Private = %v, noise Secure() = %v", rep.Private, noise.Secure())
	}
	if n := pairwise.Norm2(res.W); n > 1+1e-12 {
		t.Errorf("output ‖w‖ = %v outside W (radius 1)", n)
	}
	if !(rep.CertifiedEpsilon <= 1 && rep.CertifiedDelta <= 1e-3) {
		t.Errorf("paper σ's not certified: (%v, %v)", rep.CertifiedEpsilon, rep.CertifiedDelta)
	}
}

// The default η of [Y21a] Thm 10 by hand, same setting with d = 5 and
// D = 2 (ℓ2 ball of radius 1):
//
//	min{ln 4000/√1024, 1/(12·ln 4000·√(2·5·ln 2500))}
//	  = min{0.259189, 1/(99.528596·8.845363)} = 1.135890391e-3,
//	η = (2/4)·1.135890391e-3 = 5.67945195645888e-4 ≤ 2/L = 0.5,
//
// so σ_1 = 12·4·(η/4)·ln 4000·√(2 ln 2500) = D/(4√d) = 2/(4√5) = 0.22360679774997894.
func TestLocalSGDDefaultEtaThm10(t *testing.T) {
	wantRelClose(t, "LocalSGDBaseEta", LocalSGDBaseEta(1024, 5, 2, 4, 1, 1e-3), 5.67945195645888e-4)
	data := separableToyData(1024, 5, 1)
	obj := objectiveOf(t, data, pairwise.TaskAUC, "logistic", "l2", 1)
	noise := newYKNoise(3, false)
	res, err := runSeeded(t, "dp-local-sgd", obj, pairwise.RunConfig{
		Privacy: &pairwise.Privacy{Epsilon: 1, Delta: 1e-3, FeatureRadius: 1, Noise: noise}})
	if err != nil {
		t.Fatal(err)
	}
	wantRelClose(t, "paper σ_1 at the Thm 10 η", res.Privacy.PaperSigmas[0], 0.22360679774997894)
	if !(noise.scales[0] <= 0.22360679774997894) {
		t.Errorf("exact σ_1 = %v above the paper's", noise.scales[0])
	}
	if res.Privacy.Private {
		t.Error("a run with an insecure noise source is reported private")
	}
	// The authors' code constant, for the audit comparison only:
	// 4·0.025·(ln 4000)^{3/2} = 0.1·23.886358 = 2.3886358461224213.
	wantRelClose(t, "LocalSGDAuthorsCodeSigma", LocalSGDAuthorsCodeSigma(0.025, 1, 1e-3), 2.3886358461224213)
}

// [Y21b] eq. (5) by hand for n = 1024, T = 2048, η = 0.1, ε = 1, δ = 1e-3,
// the hinge AUC loss with R = 1 (G = 2R = 2):
//
//	ln(eT) = 1 + ln 2048 = 8.624618986159398, ln(2/δ) = ln 2000 = 7.600902459542082
//	T + 3T²ln²(eT)ln²(2/δ)/n² = 2048 + 3·4·74.3840…·57.7737… = 53617.31956048194
//	σ² = 8·0.01·4·ln 2500·53617.31956 = 0.32·7.824046010856292·53617.31956 = 134241.4000703987
//	σ = 366.3896833569399
//	Δ_T (eq. (9), γ = δ/2) = √(4e·0.01·4·53617.31956) = 152.70729410316446
//	proof's σ = √(2 ln 2500)·Δ_T = 604.0744643156714 = σ·√e.
func TestSGDOutputSigmaMatchesEq5(t *testing.T) {
	wantRelClose(t, "proof σ / printed σ", OutputPerturbationProofSigma(2048, 1024, 0.1, 2, 1, 1e-3)/OutputPerturbationPrintedSigma(2048, 1024, 0.1, 2, 1, 1e-3), math.Sqrt(math.E))
	data := separableToyData(1024, 5, 2)
	obj := objectiveOf(t, data, pairwise.TaskAUC, "hinge", "l2", 1)
	noise := newYKNoise(4, true)
	res, err := runSeeded(t, "dp-sgd-output", obj, pairwise.RunConfig{Eta: 0.1, Steps: 2048,
		Privacy: &pairwise.Privacy{Epsilon: 1, Delta: 1e-3, FeatureRadius: 1, Noise: noise, Calibration: pairwise.CalibrationPaper}})
	if err != nil {
		t.Fatal(err)
	}
	if len(noise.scales) != 1 || noise.lens[0] != 5 || noise.kinds[0] != "gaussian" {
		t.Fatalf("noise draws %v %v %v, want one gaussian over 5 entries", noise.kinds, noise.scales, noise.lens)
	}
	rep := res.Privacy
	// --calibration paper draws the printed eq. (5) σ (factor 8) — which
	// the proof of Thm 4 does not support — only because the exact
	// accountant certifies it for the proven sensitivity (here the
	// diameter D = 2 of W, far below Δ_T).
	wantRelClose(t, "drawn σ", noise.scales[0], 366.3896833569399)
	wantRelClose(t, "reported σ", rep.Sigmas[0], 366.3896833569399)
	wantRelClose(t, "paper Δ_T", rep.PaperSensitivity[0], 152.70729410316446)
	wantRelClose(t, "proven Δ", rep.Sensitivity[0], 2)
	wantRelClose(t, "proof σ", OutputPerturbationProofSigma(2048, 1024, 0.1, 2, 1, 1e-3), 604.0744643156714)
	if rep.Releases != 1 || !strings.Contains(rep.Formula, "[Y21b] eq. (5)") || !strings.Contains(rep.Accountant, "δ/2") ||
		rep.G != 2 || rep.L != 0 || rep.Private != noise.Secure() || res.Steps != 2048 {
		t.Errorf("report fields: %+v", rep)
	}
	if n := pairwise.Norm2(res.W); n > 1+1e-12 {
		t.Errorf("w_priv = Π_W(w̄ + u) has ‖w‖ = %v > 1", n)
	}
}

// The refusals happen before any noise is drawn.
func TestLocalSGDAndSGDOutputRefuseUnmetAssumptions(t *testing.T) {
	data := separableToyData(64, 3, 5)
	priv := func(n pairwise.Noise) *pairwise.Privacy {
		return &pairwise.Privacy{Epsilon: 1, Delta: 1e-3, FeatureRadius: 1, Noise: n}
	}
	cases := []struct {
		name, algo, loss, constraint string
		radius                       float64
		cfg                          pairwise.RunConfig
		want                         string
	}{
		{"hinge not smooth", "dp-local-sgd", "hinge", "l2", 1, pairwise.RunConfig{Eta: 0.1}, "smooth"},
		{"unbounded W", "dp-local-sgd", "logistic", "none", 0, pairwise.RunConfig{Eta: 0.1}, "bounded"},
		{"η > 2/L", "dp-local-sgd", "logistic", "l2", 1, pairwise.RunConfig{Eta: 0.6}, "2/L"},
		{"steps fixed by Alg 3", "dp-local-sgd", "logistic", "l2", 1, pairwise.RunConfig{Steps: 100}, "Alg 3"},
		{"checkpoints", "dp-local-sgd", "logistic", "l2", 1, pairwise.RunConfig{Checkpoints: []int{1}, OnCheckpoint: func(int, []float64) {}}, "checkpoints"},
		{"square not Lipschitz without W radius", "dp-sgd-output", "square", "none", 0, pairwise.RunConfig{}, "Lipschitz"},
		{"T < n", "dp-sgd-output", "hinge", "l2", 1, pairwise.RunConfig{Steps: 10}, "T ≥ n"},
		{"schedule", "dp-sgd-output", "hinge", "l2", 1, pairwise.RunConfig{Steps: 64, Schedule: pairwise.InvSqrt}, "constant"},
		{"checkpoints", "dp-sgd-output", "hinge", "l2", 1, pairwise.RunConfig{Steps: 64, Checkpoints: []int{1}, OnCheckpoint: func(int, []float64) {}}, "checkpoints"},
	}
	for _, c := range cases {
		t.Run(c.algo+"/"+c.name, func(t *testing.T) {
			obj := objectiveOf(t, data, pairwise.TaskAUC, c.loss, c.constraint, c.radius)
			noise := newYKNoise(1, true)
			cfg := c.cfg
			cfg.Privacy = priv(noise)
			_, err := runSeeded(t, c.algo, obj, cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one mentioning %q", err, c.want)
			}
			if len(noise.scales) != 0 {
				t.Fatalf("%d noise draws before refusing", len(noise.scales))
			}
		})
	}
}

// Privacy requests every private algorithm of this file and [K22] refuses:
// no Privacy, δ = 0 (none of the three papers has a pure ε-DP variant) and a
// record outside the feature radius — with no noise drawn.
func TestGaussianOnlyAlgorithmsRefuseBadPrivacyRequests(t *testing.T) {
	data := separableToyData(64, 3, 6)
	for _, algo := range []string{"dp-local-sgd", "dp-sgd-output", "dp-gd-grad"} {
		a, err := pairwise.Lookup(algo)
		if err != nil {
			t.Fatal(err)
		}
		if !a.Private || a.PureDP || a.PrivacyModel == "" || a.Requires == (pairwise.Requirements{}) {
			t.Fatalf("%s registered as Private=%v PureDP=%v", algo, a.Private, a.PureDP)
		}
		obj := objectiveOf(t, data, pairwise.TaskAUC, "logistic", "l2", 1)
		cfg := pairwise.RunConfig{Eta: 0.1, Steps: 64}
		if algo == "dp-local-sgd" {
			cfg.Steps = 0
		}
		if _, err := runSeeded(t, algo, obj, cfg); err == nil || !strings.Contains(err.Error(), "epsilon") {
			t.Errorf("%s without Privacy: %v", algo, err)
		}
		noise := newYKNoise(1, true)
		cfg.Privacy = &pairwise.Privacy{Epsilon: 1, Delta: 0, FeatureRadius: 1, Noise: noise}
		if _, err := runSeeded(t, algo, obj, cfg); err == nil || !strings.Contains(err.Error(), "pure") {
			t.Errorf("%s with δ = 0: %v", algo, err)
		}
		// Records have ‖x‖ up to 1: R = 0.5 must be refused.
		cfg.Privacy = &pairwise.Privacy{Epsilon: 1, Delta: 1e-3, FeatureRadius: 0.5, Noise: noise}
		if _, err := runSeeded(t, algo, obj, cfg); err == nil || !strings.Contains(err.Error(), "clip") {
			t.Errorf("%s with records outside R: %v", algo, err)
		}
		if len(noise.scales) != 0 {
			t.Errorf("%s drew noise %d times before refusing", algo, len(noise.scales))
		}
	}
}

// At ε = 10⁶ the noise is negligible and the algorithms must learn: test AUC
// ≥ 0.85 on the nearly separable toy set, with the papers' default η and T.
// The default run checks dp-sgd-output; dp-local-sgd at n = 1 024 (7 s,
// far more under the race detector) runs under the build tag long
// (TestLongLocalSGDAndSGDOutputUtilityAtHugeEpsilon).
func TestLocalSGDAndSGDOutputUtilityAtHugeEpsilon(t *testing.T) {
	localSGDAndSGDOutputUtilityAtHugeEpsilon(t, false)
}

func localSGDAndSGDOutputUtilityAtHugeEpsilon(t *testing.T, full bool) {
	test := separableToyData(1000, 5, 99)
	for _, c := range []struct {
		algo, loss string
		n          int
	}{
		{"dp-local-sgd", "logistic", 1024},
		{"dp-sgd-output", "hinge", 200}, // default T = n² = 40 000
	} {
		if !full && c.algo == "dp-local-sgd" {
			continue
		}
		t.Run(c.algo, func(t *testing.T) {
			obj := objectiveOf(t, separableToyData(c.n, 5, 8), pairwise.TaskAUC, c.loss, "l2", 1)
			res, err := runSeeded(t, c.algo, obj, pairwise.RunConfig{
				Privacy: &pairwise.Privacy{Epsilon: 1e6, Delta: 1e-3, FeatureRadius: 1, Noise: newYKNoise(2, true)}})
			if err != nil {
				t.Fatal(err)
			}
			if auc := pairwise.LinearAUC(res.W, test); !(auc >= 0.85) {
				t.Fatalf("test AUC %.3f < 0.85 at ε = 1e6 (notes %v)", auc, res.Privacy.Notes)
			}
		})
	}
}

// At small ε the noise dominates, and ‖w‖² of the output must match the
// variance the report claims. With p = 200, ‖u‖²/σ² ~ χ²_p has mean p and
// sd √(2p) = 20; we allow 6 sd (plus the bounded signal), a false-failure
// rate below 1e-6 per check.
func TestLocalSGDAndSGDOutputNoiseNormMatchesSigma(t *testing.T) {
	const p = 200
	data := separableToyData(64, p, 9)
	tol := 6 * math.Sqrt(2.0/p)

	// dp-sgd-output over W = R^p (hinge is 2R-Lipschitz everywhere): the
	// output is w̄_T + u with ‖w̄_T‖ ≤ ηGT = 12.8.
	obj := objectiveOf(t, data, pairwise.TaskAUC, "hinge", "none", 0)
	res, err := runSeeded(t, "dp-sgd-output", obj, pairwise.RunConfig{Eta: 0.1, Steps: 64,
		Privacy: &pairwise.Privacy{Epsilon: 1e-3, Delta: 1e-3, FeatureRadius: 1, Noise: newYKNoise(5, true)}})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Privacy.Sigmas[0]
	if r := pairwise.Norm2(res.W) * pairwise.Norm2(res.W) / (s * s * p); math.Abs(r-1) > tol {
		t.Errorf("dp-sgd-output: ‖w‖²/(σ²p) = %.4f, want 1 ± %.3f (σ = %g)", r, tol, s)
	}

	// dp-local-sgd in a ball too large to bind: w_K = Σ_k u_k + a drift of
	// at most Σ_k η_k·G·T_k, so ‖w_K‖² ≈ p·Σσ_k² with sd ≤ √(2p)·Σσ_k².
	obj = objectiveOf(t, data, pairwise.TaskAUC, "logistic", "l2", 1e12)
	res, err = runSeeded(t, "dp-local-sgd", obj, pairwise.RunConfig{Eta: 0.1,
		Privacy: &pairwise.Privacy{Epsilon: 1e-3, Delta: 1e-3, FeatureRadius: 1, Noise: newYKNoise(6, true)}})
	if err != nil {
		t.Fatal(err)
	}
	var S float64
	for _, s := range res.Privacy.Sigmas {
		S += s * s
	}
	if r := pairwise.Norm2(res.W) * pairwise.Norm2(res.W) / (S * p); math.Abs(r-1) > tol {
		t.Errorf("dp-local-sgd: ‖w_K‖²/(pΣσ_k²) = %.4f, want 1 ± %.3f", r, tol)
	}
}

// Both algorithms run on metric learning: noise covers all d² entries and
// the output is a valid model (symmetric, PSD, in the Frobenius ball).
func TestLocalSGDAndSGDOutputMetricOutputsAreValid(t *testing.T) {
	data := separableToyData(32, 3, 10)
	for _, c := range []struct{ algo, loss string }{{"dp-local-sgd", "logistic"}, {"dp-sgd-output", "hinge"}} {
		t.Run(c.algo, func(t *testing.T) {
			obj := objectiveOf(t, data, pairwise.TaskMetric, c.loss, "frobenius-psd", 1)
			noise := newYKNoise(7, true)
			cfg := pairwise.RunConfig{Eta: 0.01, Privacy: &pairwise.Privacy{Epsilon: 1, Delta: 1e-3, FeatureRadius: 1, Noise: noise}}
			res, err := runSeeded(t, c.algo, obj, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range noise.lens {
				if l != 9 {
					t.Fatalf("noise over %d entries, want d² = 9", l)
				}
			}
			checkPSDBall(t, res.W, 3, 1)
		})
	}
}

// checkPSDBall checks that w is a symmetric PSD d×d matrix with ‖W‖_F ≤ r.
func checkPSDBall(t *testing.T, w []float64, d int, r float64) {
	t.Helper()
	for a := 0; a < d; a++ {
		for b := 0; b < d; b++ {
			if w[a*d+b] != w[b*d+a] || math.IsNaN(w[a*d+b]) {
				t.Fatalf("W not symmetric/finite: %v", w)
			}
		}
	}
	if n := pairwise.Norm2(w); n > r*(1+1e-9) {
		t.Fatalf("‖W‖_F = %v > %v", n, r)
	}
	// PSD: vᵀWv ≥ 0 on random directions (the projection guarantees it exactly).
	rng := rand.New(rand.NewPCG(1, 1))
	v := make([]float64, d)
	for k := 0; k < 100; k++ {
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		var q float64
		for a := 0; a < d; a++ {
			for b := 0; b < d; b++ {
				q += v[a] * w[a*d+b] * v[b]
			}
		}
		if q < -1e-9*pairwise.Norm2(v)*pairwise.Norm2(v) {
			t.Fatalf("vᵀWv = %v < 0: W not PSD", q)
		}
	}
}
