package dpalgo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
	"gonum.org/v1/gonum/mat"
)

// recCall is one call to a Noise method.
type recCall struct {
	kind  string // "gaussian", "laplace", "l2-laplace"
	scale float64
	n     int
}

// recNoise is a recording fake Noise for the [H20]/[X21] tests: it
// records every call and, when rng is set, adds real seeded noise (else
// nothing), plus shift to every coordinate. secure is what Secure reports.
type recNoise struct {
	calls  []recCall
	rng    *rand.Rand
	shift  float64
	secure bool
}

func (r *recNoise) AddGaussian(dst []float64, sigma float64) {
	r.calls = append(r.calls, recCall{"gaussian", sigma, len(dst)})
	for i := range dst {
		if r.rng != nil {
			dst[i] += sigma * r.rng.NormFloat64()
		}
		dst[i] += r.shift
	}
}

func (r *recNoise) AddLaplace(dst []float64, b float64) {
	r.calls = append(r.calls, recCall{"laplace", b, len(dst)})
	for i := range dst {
		if r.rng != nil {
			z := b * r.rng.ExpFloat64()
			if r.rng.IntN(2) == 0 {
				z = -z
			}
			dst[i] += z
		}
		dst[i] += r.shift
	}
}

func (r *recNoise) AddL2Laplace(dst []float64, b float64) {
	r.calls = append(r.calls, recCall{"l2-laplace", b, len(dst)})
}
func (r *recNoise) Secure() bool { return r.secure }
func (r *recNoise) Name() string { return "x21 test recorder" }

var _ pairwise.Noise = (*recNoise)(nil)

// scaledToyAUC returns toyAUC(n, d, 3, seed) with every record multiplied by s
// (so ‖x‖ ≤ s).
func scaledToyAUC(n, d int, s float64, seed uint64) *pairwise.Dataset {
	ds := toyAUC(n, d, 3, seed)
	for k := range ds.X {
		ds.X[k] *= s
	}
	return ds
}

// lossObjective builds the objective of the tests: the given loss, λ and an
// ℓ2 ball (AUC) or Frobenius-PSD ball (metric) of radius B.
func lossObjective(t *testing.T, ds *pairwise.Dataset, loss pairwise.Loss, lambda, B float64) pairwise.Objective {
	t.Helper()
	obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Loss: loss, Lambda: lambda, Radius: B})
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// runPrivate runs the named algorithm with privacy (ε, δ), radius R and noise.
func runPrivate(t *testing.T, name string, obj pairwise.Objective, cfg pairwise.RunConfig, eps, delta, R float64, noise pairwise.Noise) (*pairwise.Result, error) {
	t.Helper()
	return runPrivateCal(t, name, obj, cfg, eps, delta, R, noise, "")
}

// runPrivateCal is runPrivate with a calibration.
func runPrivateCal(t *testing.T, name string, obj pairwise.Objective, cfg pairwise.RunConfig, eps, delta, R float64, noise pairwise.Noise, cal pairwise.Calibration) (*pairwise.Result, error) {
	t.Helper()
	a, err := pairwise.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Privacy = &pairwise.Privacy{Epsilon: eps, Delta: delta, FeatureRadius: R, Noise: noise, Calibration: cal}
	return a.Run(context.Background(), obj, cfg, rand.New(rand.NewPCG(1, 2)))
}

func wantClose(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
		t.Fatalf("%s = %.17g, want %.17g", what, got, want)
	}
}

func hasNote(rep *pairwise.PrivacyReport, parts ...string) bool {
	for _, n := range rep.Notes {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(n, p)
		}
		if ok {
			return true
		}
	}
	return false
}

// The setting of the σ tests: n = 256, d = 8, ε = 0.5, δ = 1/256, R = 1,
// logistic AUC loss ([X21] Example 2) over the unit ℓ2 ball (B = 1).
// Objective.Props: G = 4R + λB, L = 4R² + λ, α = λ (loss.go AUCLogistic,
// objective.go regProps).
const (
	x21N     = 256
	x21D     = 8
	x21Eps   = 0.5
	x21Delta = 1.0 / 256
)

func sigmaTestData() *pairwise.Dataset { return toyAUC(x21N, x21D, 3, 5) }

func TestDPGDSCSigmaIsAlg1Step4(t *testing.T) {
	// --calibration paper: the printed σ (certified here by the exact
	// accountant for the proven sensitivity) and the paper's Δ.
	// λ = 1e-3: G = 4·1 + 1e-3·1 = 4.001, α = 1e-3.
	// [X21] Alg 1 step 4: σ = 8√(2 ln(1.25/δ))·G/(αnε)
	//   = 8·√(2 ln 320)·4.001/(1e-3·256·0.5) = 849.35310066041814.
	// Lemma 1 eq. (3): Δ₂ = 8G/(αn) = 8·4.001/(1e-3·256) = 125.03125.
	obj := lossObjective(t, sigmaTestData(), pairwise.AUCLogistic{}, 1e-3, 1)
	rec := &recNoise{}
	res, err := runPrivateCal(t, "dpgdsc", obj, pairwise.RunConfig{Steps: 3}, x21Eps, x21Delta, 1, rec, pairwise.CalibrationPaper)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 1 || rec.calls[0].kind != "gaussian" || rec.calls[0].n != x21D {
		t.Fatalf("noise calls %+v, want one Gaussian draw of %d values", rec.calls, x21D)
	}
	wantClose(t, "σ", rec.calls[0].scale, 849.35310066041814)
	wantClose(t, "σ = 8√(2 ln 320)·4.001/0.128", rec.calls[0].scale, 8*math.Sqrt(2*math.Log(320))*4.001/(1e-3*256*0.5))
	rep := res.Privacy
	wantClose(t, "report σ", rep.PaperSigmas[0], 849.35310066041814)
	wantClose(t, "Δ₂", rep.PaperSensitivity[0], 125.03125)
	if rep.Releases != 1 || !strings.Contains(rep.Formula, "Alg 1 step 4") || !strings.Contains(rep.Accountant, "single Gaussian release") {
		t.Fatalf("report %+v", rep)
	}
	// Default η = 2/(L+α) = 2/4.002 (Lemma 1's bound).
	if !hasNote(rep, "η = 2/(L+α) = 0.49975") {
		t.Fatalf("notes %q lack the default η", rep.Notes)
	}
}

func TestDPGDSCLaplaceIsAlg1Step5(t *testing.T) {
	// --calibration paper: the printed σ (certified here by the exact
	// accountant for the proven sensitivity) and the paper's Δ.
	// [X21] Alg 1 step 5: λ = 8G√d/(αnε) = 8·4.001·√8/(1e-3·256·0.5) = 707.28355788184422,
	// i.i.d. per coordinate; ℓ1 sensitivity √8·125.03125.
	obj := lossObjective(t, sigmaTestData(), pairwise.AUCLogistic{}, 1e-3, 1)
	rec := &recNoise{}
	res, err := runPrivateCal(t, "dpgdsc", obj, pairwise.RunConfig{Steps: 3}, x21Eps, 0, 1, rec, pairwise.CalibrationPaper)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 1 || rec.calls[0].kind != "laplace" || rec.calls[0].n != x21D {
		t.Fatalf("noise calls %+v, want one Laplace draw of %d values", rec.calls, x21D)
	}
	wantClose(t, "λ", rec.calls[0].scale, 707.28355788184422)
	rep := res.Privacy
	wantClose(t, "Δ₁", rep.PaperSensitivity[0], math.Sqrt(8)*125.03125)
	if rep.Mechanism != "laplace" || rep.Model != "record-level ε-DP" || !strings.Contains(rep.Formula, "Alg 1 step 5") {
		t.Fatalf("report %+v", rep)
	}
}

func TestDPGDSCDefaultsFromThm1(t *testing.T) {
	// n = 16, λ = 0.5: G = L = 4 + 0.5 = 4.5, α = 0.5.
	// Thm 1: T = ⌈(L/α)·ln n⌉ = ⌈9·ln 16⌉ = ⌈24.95⌉ = 25; η = 2/(L+α) = 0.4.
	obj := lossObjective(t, toyAUC(16, 3, 3, 1), pairwise.AUCLogistic{}, 0.5, 1)
	res, err := runPrivate(t, "dpgdsc", obj, pairwise.RunConfig{}, 1, 1.0/16, 1, &recNoise{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 25 {
		t.Fatalf("T = %d, want 25", res.Steps)
	}
	if !hasNote(res.Privacy, "η = 2/(L+α) = 0.4") {
		t.Fatalf("notes %q", res.Privacy.Notes)
	}
}

func TestDPGDC2SigmaIsAlg2(t *testing.T) {
	// --calibration paper: the printed σ (certified here by the exact
	// accountant for the proven sensitivity) and the paper's Δ.
	// λ = 0: G = 4, L = 4. Thm 2: T = min{n, n²ε²/(d ln(1/δ))}
	//   = min{256, 65536·0.25/(8·ln 256)} = min{256, 369.4} = 256;
	// η = G/(‖C‖₂√T) = 4/(2·16) = 0.125 (‖C‖₂ = 2, the unit ball's diameter).
	// [X21] Alg 2 step 2: σ = 4G√(1.25·T·ln(1/δ))/(nε)
	//   = 16·√(1.25·256·ln 256)/128 = 5.2655376954683186, at each of the T steps.
	obj := lossObjective(t, sigmaTestData(), pairwise.AUCLogistic{}, 0, 1)
	rec := &recNoise{}
	res, err := runPrivateCal(t, "dpgdc2", obj, pairwise.RunConfig{}, x21Eps, x21Delta, 1, rec, pairwise.CalibrationPaper)
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 256 || len(rec.calls) != 256 {
		t.Fatalf("T = %d with %d draws, want 256", res.Steps, len(rec.calls))
	}
	for _, c := range rec.calls {
		if c.kind != "gaussian" || c.n != x21D {
			t.Fatalf("call %+v", c)
		}
		wantClose(t, "σ", c.scale, 5.2655376954683186)
	}
	rep := res.Privacy
	if rep.Releases != 256 || len(rep.Sigmas) != 256 || len(rep.Sensitivity) != 256 {
		t.Fatalf("report releases %d, %d σ, %d Δ", rep.Releases, len(rep.Sigmas), len(rep.Sensitivity))
	}
	wantClose(t, "Δ (4G/n)", rep.PaperSensitivity[0], 4.0*4/256)
	if !hasNote(rep, "η = G/(‖C‖₂√T) = 0.125") || !strings.Contains(rep.Formula, "Alg 2 step 2") {
		t.Fatalf("report %+v", rep)
	}
	// --steps 10: σ follows the T actually run: 16·√(1.25·10·ln 256)/128.
	rec = &recNoise{}
	if _, err := runPrivateCal(t, "dpgdc2", obj, pairwise.RunConfig{Steps: 10}, x21Eps, x21Delta, 1, rec, pairwise.CalibrationPaper); err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 10 {
		t.Fatalf("%d draws, want 10", len(rec.calls))
	}
	wantClose(t, "σ(T = 10)", rec.calls[0].scale, 16*math.Sqrt(1.25*10*math.Log(256))/128)
}

func TestDPEGDSigmasAreAlg3(t *testing.T) {
	// --calibration paper: the printed σ (certified here by the exact
	// accountant for the proven sensitivity) and the paper's Δ.
	// λ = 0: G = 4, L = 4; n = 256 = 2^8: k = 8 epochs of n_i = 128, 64, …, 2 and D_8 = 2.
	// Thm 3 (δ > 0): η = (‖C‖₂/G)·min{4/√n, ε/√(d ln(1/δ))}
	//   = (2/4)·min{0.25, 0.5/√(8 ln 256)} = 0.037535075274576557.
	// Alg 3 step 5: σ_i = 4√(2 ln(1.25/δ))·G·η_i/ε, η_i = 4^{−i}η:
	//   σ_1 = 1.0199220616600664, σ_2 = 0.2549805154150166, …, σ_8 = 6.2251102396244286e-05.
	obj := lossObjective(t, sigmaTestData(), pairwise.AUCLogistic{}, 0, 1)
	rec := &recNoise{}
	res, err := runPrivateCal(t, "dpegd", obj, pairwise.RunConfig{}, x21Eps, x21Delta, 1, rec, pairwise.CalibrationPaper)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1.0199220616600664, 0.2549805154150166, 0.063745128853754149, 0.015936282213438537,
		0.0039840705533596343, 0.00099601763833990858, 0.00024900440958497714, 6.2251102396244286e-05}
	if len(rec.calls) != len(want) {
		t.Fatalf("%d draws, want %d", len(rec.calls), len(want))
	}
	eta := 0.037535075274576557
	for i, c := range rec.calls {
		if c.kind != "gaussian" || c.n != x21D {
			t.Fatalf("call %+v", c)
		}
		wantClose(t, "σ_i", c.scale, want[i])
		wantClose(t, "Δ_i = 4Gη_i", res.Privacy.PaperSensitivity[i], 4*4*eta*math.Pow(4, -float64(i+1)))
	}
	if res.Steps != 256 || res.Privacy.Releases != 8 || !strings.Contains(res.Privacy.Accountant, "parallel composition") {
		t.Fatalf("steps %d, report %+v", res.Steps, res.Privacy)
	}

	// δ = 0: η = (2/4)·min{0.25, ε/d = 0.0625} = 0.03125; Alg 3 step 6:
	// λ_i = 4Gη_i√d/ε: λ_1 = 16·0.03125·√8/(4·0.5) = 0.70710678118654757,
	// λ_8 = 4.3158372875155492e-05.
	rec = &recNoise{}
	if _, err := runPrivateCal(t, "dpegd", obj, pairwise.RunConfig{}, x21Eps, 0, 1, rec, pairwise.CalibrationPaper); err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 8 || rec.calls[0].kind != "laplace" {
		t.Fatalf("calls %+v", rec.calls)
	}
	wantClose(t, "λ_1", rec.calls[0].scale, 0.70710678118654757)
	wantClose(t, "λ_8", rec.calls[7].scale, 4.3158372875155492e-05)
}

func TestDPEGDSplitsNonPowerOfTwo(t *testing.T) {
	// n = 100: k = ⌊log₂ 100⌋ = 6, n_i = 50, 25, 12, 6, 3 and D_6 = the other 4.
	obj := lossObjective(t, toyAUC(100, 3, 3, 2), pairwise.AUCLogistic{}, 0, 1)
	rec := &recNoise{}
	res, err := runPrivate(t, "dpegd", obj, pairwise.RunConfig{}, 1, 0.01, 1, rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 6 || res.Steps != 100 {
		t.Fatalf("%d releases over %d steps, want 6 over 100", len(rec.calls), res.Steps)
	}
	// epoch i runs n_i full gradients of n_i(n_i − 1) pairs each
	if want := int64(50*50*49 + 25*25*24 + 12*12*11 + 6*6*5 + 3*3*2 + 4*4*3); res.PairGrads != want {
		t.Fatalf("pair gradients %d, want %d", res.PairGrads, want)
	}
	if !hasNote(res.Privacy, "not a power of 2") {
		t.Fatalf("notes %q", res.Privacy.Notes)
	}
}

func TestDPGDCSigmaIsAlg4(t *testing.T) {
	// --calibration paper: the printed σ (certified here by the exact
	// accountant for the proven sensitivity) and the paper's Δ.
	// λ = 0: G = L = 4. Defaults (Thm 2's, Thm 4 gives none): T = 256, η = 0.125.
	// Alg 4 step 5: σ = 4√(2 ln(1.25/δ))·G·T·η/(nε) = 4√(2 ln 320)·4·256·0.125/128 = 13.586253047304863.
	// Lemma 7: Δ₂ = 4ηGT/n = 4·0.125·4·256/256 = 2.
	obj := lossObjective(t, sigmaTestData(), pairwise.AUCLogistic{}, 0, 1)
	rec := &recNoise{}
	res, err := runPrivateCal(t, "dpgdc", obj, pairwise.RunConfig{}, x21Eps, x21Delta, 1, rec, pairwise.CalibrationPaper)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 1 || rec.calls[0].kind != "gaussian" || res.Steps != 256 {
		t.Fatalf("calls %+v, T = %d", rec.calls, res.Steps)
	}
	wantClose(t, "σ", rec.calls[0].scale, 13.586253047304863)
	wantClose(t, "Δ₂", res.Privacy.PaperSensitivity[0], 2)
	// δ = 0: T = min{n, n²ε²/d²} = min{256, 65536·0.25/64} = 256, η = 0.125;
	// Alg 4 step 6 (read as w_avg + ζ): λ = 4GηT√d/(nε) = 4·4·0.125·256·√8/128 = 11.313708498984761.
	rec = &recNoise{}
	_, err = runPrivateCal(t, "dpgdc", obj, pairwise.RunConfig{}, x21Eps, 0, 1, rec, pairwise.CalibrationPaper)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 1 || rec.calls[0].kind != "laplace" {
		t.Fatalf("calls %+v", rec.calls)
	}
	wantClose(t, "λ", rec.calls[0].scale, 11.313708498984761)
}

func TestDPGDSCRefusesNonSmoothHinge(t *testing.T) {
	obj := lossObjective(t, sigmaTestData(), pairwise.AUCHinge{}, 1e-3, 1)
	rec := &recNoise{}
	_, err := runPrivate(t, "dpgdsc", obj, pairwise.RunConfig{Steps: 1}, 1, x21Delta, 1, rec)
	if err == nil || !strings.Contains(err.Error(), "smooth") {
		t.Fatalf("err = %v, want a refusal mentioning smooth", err)
	}
	if len(rec.calls) != 0 {
		t.Fatal("noise drawn before the refusal")
	}
}

func TestPGDStronglyConvexAlgorithmsNeedLambda(t *testing.T) {
	obj := lossObjective(t, sigmaTestData(), pairwise.AUCLogistic{}, 0, 1)
	for _, name := range []string{"dpgdsc", "on-pair-strc", "off-pair-strc"} {
		_, err := runPrivate(t, name, obj, pairwise.RunConfig{}, 1, x21Delta, 1, &recNoise{})
		if err == nil || !strings.Contains(err.Error(), "--lambda") {
			t.Fatalf("%s: err = %v, want a refusal mentioning --lambda", name, err)
		}
	}
}

func TestPGDPureDPOnlyWhereThePaperHasLaplace(t *testing.T) {
	for _, c := range []struct {
		name   string
		lambda float64
		pure   bool
	}{
		{"dpgdsc", 0.5, true}, {"dpegd", 0, true}, {"dpgdc", 0, true}, {"dpgdc2", 0, false},
		{"on-pair-strc", 0.5, false}, {"on-pair-c", 0, false}, {"off-pair-strc", 0.5, false}, {"off-pair-c", 0, false},
	} {
		a, _ := pairwise.Lookup(c.name)
		if a.PureDP != c.pure {
			t.Fatalf("%s: PureDP = %v", c.name, a.PureDP)
		}
		obj := lossObjective(t, toyAUC(16, 3, 3, 1), pairwise.AUCLogistic{}, c.lambda, 1)
		rec := &recNoise{}
		_, err := runPrivate(t, c.name, obj, pairwise.RunConfig{}, 1, 0, 1, rec)
		if c.pure && err != nil {
			t.Fatalf("%s with δ = 0: %v", c.name, err)
		}
		if !c.pure && (err == nil || !strings.Contains(err.Error(), "δ = 0")) {
			t.Fatalf("%s with δ = 0: err = %v, want a refusal", c.name, err)
		}
		if !c.pure && len(rec.calls) != 0 {
			t.Fatalf("%s: noise drawn before the refusal", c.name)
		}
	}
}

func TestPGDRecordsOutsideRadiusRefusedBeforeNoise(t *testing.T) {
	ds := toyAUC(32, 3, 3, 3)
	for k := 0; k < ds.D; k++ {
		ds.X[5*ds.D+k] = 0
	}
	ds.X[5*ds.D] = 2 // ‖x_5‖ = 2 > R = 1
	for _, name := range []string{"dpgdsc", "dpgdc2", "dpegd", "dpgdc", "on-pair-strc", "on-pair-c", "off-pair-strc", "off-pair-c"} {
		obj := lossObjective(t, ds, pairwise.AUCLogistic{}, 0.5, 1)
		rec := &recNoise{}
		cfg := pairwise.RunConfig{}
		if name == "dpgdsc" {
			cfg.Steps = 2
		}
		_, err := runPrivate(t, name, obj, cfg, 1, 0.01, 1, rec)
		if err == nil || !strings.Contains(err.Error(), "record 5") {
			t.Fatalf("%s: err = %v, want the radius refusal", name, err)
		}
		if len(rec.calls) != 0 {
			t.Fatalf("%s: %d noise draws before the refusal", name, len(rec.calls))
		}
	}
}

func TestPGDStepSizeAboveLemmaBoundRefused(t *testing.T) {
	// dpgdsc: λ = 1e-3 gives 2/(L+α) = 2/4.002 = 0.49975… (Lemma 1); the
	// convex algorithms need η ≤ 2/L = 0.5 (Lemma 7, and Alg 2's box).
	for _, c := range []struct {
		name   string
		lambda float64
		cfg    pairwise.RunConfig
		want   string // "" = accepted
	}{
		{"dpgdsc", 1e-3, pairwise.RunConfig{Eta: 0.4999, Steps: 2}, "2/(L+α)"},
		{"dpgdsc", 1e-3, pairwise.RunConfig{Eta: 0.4997, Steps: 2}, ""},
		{"dpgdc", 0, pairwise.RunConfig{Eta: 0.6, Steps: 2}, "Lemma 7"},
		{"dpgdc", 0, pairwise.RunConfig{Eta: 0.5, Steps: 2}, ""},
		{"dpegd", 0, pairwise.RunConfig{Eta: 0.6}, "Lemma 7"},
		{"dpgdc2", 0, pairwise.RunConfig{Eta: 0.6, Steps: 2}, "2/L"},
	} {
		obj := lossObjective(t, toyAUC(16, 3, 3, 1), pairwise.AUCLogistic{}, c.lambda, 1)
		rec := &recNoise{}
		_, err := runPrivate(t, c.name, obj, c.cfg, 1, 0.01, 1, rec)
		if c.want == "" {
			if err != nil {
				t.Fatalf("%s η = %g refused: %v", c.name, c.cfg.Eta, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s η = %g: err = %v, want a refusal mentioning %q", c.name, c.cfg.Eta, err, c.want)
		}
		if len(rec.calls) != 0 {
			t.Fatalf("%s: noise drawn before the refusal", c.name)
		}
	}
}

func TestPGDRefusesUnboundedParameterSet(t *testing.T) {
	obj, err := pairwise.NewObjective(toyAUC(16, 3, 3, 1), pairwise.ObjectiveConfig{Loss: pairwise.AUCLogistic{}, Constraint: "none"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"dpgdc2", "dpegd", "dpgdc", "on-pair-c", "off-pair-c"} {
		if _, err := runPrivate(t, name, obj, pairwise.RunConfig{}, 1, 0.01, 1, &recNoise{}); err == nil || !strings.Contains(err.Error(), "bounded") {
			t.Fatalf("%s over R^d: err = %v", name, err)
		}
	}
}

func TestPGDRefusesKnobsThatWouldChangeThePaper(t *testing.T) {
	obj := lossObjective(t, toyAUC(16, 3, 3, 1), pairwise.AUCLogistic{}, 0.5, 1)
	for _, c := range []struct {
		name string
		cfg  pairwise.RunConfig
		want string
	}{
		{"dpgdsc", pairwise.RunConfig{Steps: 4, Checkpoints: []int{2}, OnCheckpoint: func(int, []float64) {}}, "checkpoints"},
		{"dpgdc2", pairwise.RunConfig{Schedule: pairwise.InvSqrt}, "schedule"},
		{"dpgdc", pairwise.RunConfig{Averaging: pairwise.AvgLast}, "averaging"},
		{"dpegd", pairwise.RunConfig{Steps: 10}, "--steps"},
		{"on-pair-strc", pairwise.RunConfig{Eta: 0.1}, "--eta"},
		{"off-pair-c", pairwise.RunConfig{Steps: 10}, "--steps"},
		{"dpgdsc", pairwise.RunConfig{Eta: math.NaN()}, "finite"},
	} {
		rec := &recNoise{}
		_, err := runPrivate(t, c.name, obj, c.cfg, 1, 0.01, 1, rec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s %+v: err = %v, want %q", c.name, c.cfg, err, c.want)
		}
		if len(rec.calls) != 0 {
			t.Fatalf("%s: noise drawn before the refusal", c.name)
		}
	}
}

// dp.GaussianDPDelta (which replaced the duplicate x21ExactDelta) against
// values computed independently (Python, 0.5·erfc(−x/√2) for Φ):
// δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).
func TestPGDExactDeltaMatchesReference(t *testing.T) {
	for _, c := range []struct{ mu, eps, want float64 }{
		// Alg 2's printed σ gives μ = ε/√(1.25 ln(1/δ)) whatever T and n.
		{0.5 / math.Sqrt(1.25*math.Log(256)), 0.5, 0.0003202380381950214},
		{1 / math.Sqrt(1.25*math.Log(1e6)), 1, 1.3970157052911126e-06},
		{2 / math.Sqrt(1.25*math.Log(1e5)), 2, 2.4299186455240955e-05},
		// the classical σ = √(2 ln(1.25/δ))Δ/ε gives μ = ε/√(2 ln(1.25/δ)).
		{0.5 / math.Sqrt(2*math.Log(1.25*256)), 0.5, 1.65607162413813e-05},
		{10 / math.Sqrt(2*math.Log(1.25*256)), 10, 0.014771300243272195},
	} {
		got := dp.GaussianDPDelta(c.mu, c.eps)
		if math.Abs(got-c.want) > 1e-9*c.want || got < c.want*(1-1e-12) {
			t.Fatalf("δ(μ = %g, ε = %g) = %.17g, want %.17g", c.mu, c.eps, got, c.want)
		}
	}
	// the zCDP conversion of [H20] Alg 1 is valid: μ = √(2ρ) meets δ.
	rho := zcdpRho(0.5, 1.0/256)
	if d := dp.GaussianDPDelta(math.Sqrt(2*rho), 0.5); d > 1.0/256 {
		t.Fatalf("zCDP calibration: δ' = %v > δ", d)
	}
}

// --calibration paper is refused, before any noise is drawn and whatever
// the noise source, when the printed σ is not certified (the classical
// calibration at ε = 1e6); the default exact calibration runs there and
// certifies the request.
func TestPGDPaperCalibrationRefusedWhenNotCertified(t *testing.T) {
	sc := lossObjective(t, toyAUC(32, 3, 3, 4), pairwise.AUCLogistic{}, 0.5, 1)
	for _, secure := range []bool{true, false} {
		rec := &recNoise{secure: secure}
		_, err := runPrivateCal(t, "dpgdsc", sc, pairwise.RunConfig{Steps: 2}, 1e6, 0.01, 1, rec, pairwise.CalibrationPaper)
		if err == nil || !strings.Contains(err.Error(), "certifies only ε") {
			t.Fatalf("secure=%v: err = %v, want the paper-calibration refusal naming the certified ε", secure, err)
		}
		if len(rec.calls) != 0 {
			t.Fatal("noise drawn before the refusal")
		}
	}
	res, err := runPrivateCal(t, "dpgdsc", sc, pairwise.RunConfig{Steps: 2}, 1e6, 0.01, 1, &recNoise{secure: true}, pairwise.CalibrationExact)
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Privacy; !(p.CertifiedEpsilon <= 1e6 && p.CertifiedDelta <= 0.01) || p.Calibration != "exact" {
		t.Fatalf("exact calibration certified (%v, %v), calibration %q", p.CertifiedEpsilon, p.CertifiedDelta, p.Calibration)
	}
}

// pgdSetups are, per private algorithm, a non-inert AUC setting at
// R = 0.1 (so that [H20]'s T₁ < n) for the report and utility tests.
var pgdSetups = []struct {
	name   string
	lambda float64
	steps  int
}{
	{"dpgdsc", 0.1, 200}, {"dpgdc2", 0, 0}, {"dpegd", 0, 0}, {"dpgdc", 0, 0},
	{"on-pair-strc", 0.1, 0}, {"on-pair-c", 0, 0}, {"off-pair-strc", 0.1, 0}, {"off-pair-c", 0, 0},
}

func TestPGDPrivacyReportFilledAndPrivateMirrorsSecure(t *testing.T) {
	ds := scaledToyAUC(128, 4, 0.1, 6)
	for _, s := range pgdSetups {
		for _, secure := range []bool{false, true} {
			obj := lossObjective(t, ds, pairwise.AUCLogistic{}, s.lambda, 1)
			rec := &recNoise{secure: secure}
			res, err := runPrivate(t, s.name, obj, pairwise.RunConfig{Steps: s.steps}, 0.5, 1.0/128, 0.1, rec)
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			rep := res.Privacy
			switch {
			case rep == nil:
				t.Fatalf("%s: no privacy report", s.name)
			case rep.Private != secure:
				t.Fatalf("%s: Private = %v with Secure() = %v", s.name, rep.Private, secure)
			case rep.Model != "record-level (ε, δ)-DP" || rep.Mechanism != "gaussian" || rep.Epsilon != 0.5 || rep.Delta != 1.0/128:
				t.Fatalf("%s: model fields %+v", s.name, rep)
			case !(rep.G > 0 && rep.L > 0 && rep.R == 0.1 && rep.Noise == "x21 test recorder" && rep.Assumptions != ""):
				t.Fatalf("%s: constants %+v", s.name, rep)
			case !strings.Contains(rep.Formula, "[H20]") && !strings.Contains(rep.Formula, "[X21]"):
				t.Fatalf("%s: formula %q cites no paper", s.name, rep.Formula)
			case rep.Accountant == "" || rep.Releases < 1 || len(rep.Sigmas) != rep.Releases || len(rep.Sensitivity) != rep.Releases:
				t.Fatalf("%s: releases %d, σ %v, Δ %v, accountant %q", s.name, rep.Releases, len(rep.Sigmas), len(rep.Sensitivity), rep.Accountant)
			case len(rec.calls) != rep.Releases:
				t.Fatalf("%s: %d noise draws for %d releases", s.name, len(rec.calls), rep.Releases)
			}
			for k, c := range rec.calls {
				if c.scale != rep.Sigmas[k] {
					t.Fatalf("%s: draw %d used σ = %g, report says %g", s.name, k, c.scale, rep.Sigmas[k])
				}
			}
			if a, _ := pairwise.Lookup(s.name); !a.Private || a.PrivacyModel == "" || a.Ref == "" || a.Setting == "" || !strings.HasPrefix(a.Paper, "[") {
				t.Fatalf("%s: registry entry %+v", s.name, a)
			}
		}
	}
}

// With tiny noise (ε = 1e6, seeded, not secure) every private algorithm
// ranks the nearly separable toy set well; [H20]'s need R = 0.1 so that
// T₁ = max{⌈16L²/α²⌉, 7} < n (the inert case is tested in private_h20_test.go).
//
// The default run leaves out dpegd (its ⌊log₂ n⌋ epochs at ε = 1e6 took
// 4 s, far more under the race detector); the build tag long runs every
// setup (TestLongPrivatePGDLearnsToyAUCWithTinyNoise).
func TestPrivatePGDLearnsToyAUCWithTinyNoise(t *testing.T) {
	privatePGDLearnsToyAUCWithTinyNoise(t, false)
}

func privatePGDLearnsToyAUCWithTinyNoise(t *testing.T, full bool) {
	train := scaledToyAUC(200, 5, 0.1, 21)
	test := scaledToyAUC(400, 5, 0.1, 22)
	for _, s := range pgdSetups {
		if !full && s.name == "dpegd" {
			continue
		}
		for _, delta := range []float64{1.0 / float64(train.N), 0} {
			a, _ := pairwise.Lookup(s.name)
			if delta == 0 && !a.PureDP {
				continue
			}
			t.Run(s.name+map[bool]string{true: "/pure", false: "/approx"}[delta == 0], func(t *testing.T) {
				obj := lossObjective(t, train, pairwise.AUCLogistic{}, s.lambda, 1)
				noise := &recNoise{rng: rand.New(rand.NewPCG(9, 9))}
				res, err := runPrivate(t, s.name, obj, pairwise.RunConfig{Steps: s.steps}, 1e6, delta, 0.1, noise)
				if err != nil {
					t.Fatal(err)
				}
				if auc := pairwise.LinearAUC(res.W, test); auc < 0.85 {
					t.Fatalf("test AUC %.3f < 0.85 (notes %q)", auc, res.Privacy.Notes)
				}
			})
		}
	}
}

// Example 1 (metric learning) is supported: the output is a metric in C.
// The default run leaves out dpegd; the build tag long runs every setup
// (TestLongPrivatePGDSupportsMetricLearning).
func TestPrivatePGDSupportsMetricLearning(t *testing.T) { privatePGDSupportsMetricLearning(t, false) }

func privatePGDSupportsMetricLearning(t *testing.T, full bool) {
	ds := scaledToyAUC(80, 3, 0.3, 31)
	for _, s := range pgdSetups {
		if !full && s.name == "dpegd" {
			continue
		}
		lambda := s.lambda
		if lambda > 0 {
			lambda = 0.05 // L = 4R⁴ + λ = 0.0824: T₁ = ⌈16·(0.0824/0.05)²⌉ = 44 < 80
		}
		obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Task: pairwise.TaskMetric, Loss: pairwise.MetricLogistic{}, Lambda: lambda, Radius: 1})
		if err != nil {
			t.Fatal(err)
		}
		noise := &recNoise{rng: rand.New(rand.NewPCG(3, 3))}
		res, err := runPrivate(t, s.name, obj, pairwise.RunConfig{Steps: s.steps}, 1e6, 1.0/80, 0.3, noise)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if len(res.W) != 9 || noise.calls[0].n != 9 {
			t.Fatalf("%s: %d parameters, noise on %d, want 9", s.name, len(res.W), noise.calls[0].n)
		}
		W := mat.NewDense(3, 3, res.W)
		if !mat.EqualApprox(W, W.T(), 1e-12) {
			t.Fatalf("%s: W not symmetric: %v", s.name, res.W)
		}
		var eig mat.EigenSym
		if !eig.Factorize(mat.NewSymDense(3, append([]float64(nil), res.W...)), false) {
			t.Fatal("eigendecomposition failed")
		}
		for _, v := range eig.Values(nil) {
			if v < -1e-9 {
				t.Fatalf("%s: W has eigenvalue %g < 0", s.name, v)
			}
		}
		if nrm := pairwise.Norm2(res.W); nrm > 1+1e-9 {
			t.Fatalf("%s: ‖W‖_F = %g > 1", s.name, nrm)
		}
		before, _ := pairwise.EmpiricalRisk(obj, make([]float64, 9), math.MaxInt, nil)
		after, _ := pairwise.EmpiricalRisk(obj, res.W, math.MaxInt, nil)
		if !(after < before) {
			t.Fatalf("%s: metric objective %v → %v", s.name, before, after)
		}
		if strings.HasPrefix(s.name, "dp") && !hasNote(res.Privacy, "projected onto C") {
			t.Fatalf("%s: notes %q lack the projection", s.name, res.Privacy.Notes)
		}
	}
}

// TestPGDFixedPointBitIdentical: noisyPGDSteps, which stops computing
// gradients once the iterates repeat bit for bit (a fixed point, or a cycle
// of up to pgdMaxPeriod values), returns the same iterate and the same sum
// of iterates, bit for bit, as the loop that computes every step, on
// strongly convex AUC and metric objectives that get there well before T
// (checked, so that the comparison is not vacuous; one case is a cycle of
// period 2), and counts the pair gradients of all T steps.
func TestPGDFixedPointBitIdentical(t *testing.T) {
	ds := toyAUC(40, 3, 2, 5)
	for _, c := range []struct {
		loss        pairwise.Loss
		lambda, eta float64
		period      int // 0: any
	}{
		{pairwise.AUCLogistic{}, 0.5, 0.5, 0},
		{pairwise.AUCLogistic{}, 0.001, 0.3, 2},
		{pairwise.AUCSquare{}, 0.5, 0.2, 0},
		{pairwise.MetricLogistic{}, 1, 0.2, 0},
	} {
		obj := lossObjective(t, ds, c.loss, c.lambda, 1)
		for _, T := range []int{3000, 3001} { // both parities of the remaining steps
			p := obj.NumParams()
			ref, refSum, g := make([]float64, p), make([]float64, p), make([]float64, p)
			w := make([]float64, p)
			for t := 1; t <= T; t++ { // the loop that never skips
				pairwise.FullGradient(obj, ref, g)
				pairwise.Axpy(-c.eta, g, ref)
				obj.Project(ref)
				pairwise.Axpy(1, ref, refSum)
			}
			for _, withSum := range []bool{true, false} {
				var sum []float64
				if withSum {
					sum = make([]float64, p)
				}
				clear(w)
				grads, from, period, err := noisyPGDSteps(context.Background(), obj, w, g, T, c.eta, nil, sum)
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%s λ=%g η=%g", c.loss.Name(), c.lambda, c.eta)
				if !(from > 0 && from < T/2) || (c.period > 0 && period != c.period) {
					t.Fatalf("%s: repetition from step %d of %d with period %d: the test needs one well before T (period %d)", name, from, T, period, c.period)
				}
				if !sameFloatBits(w, ref) || (withSum && !sameFloatBits(sum, refSum)) {
					t.Fatalf("%s: skipping after step %d (period %d) changed the result:\nw   %v\nref %v\nsum %v\nref %v", name, from, period, w, ref, sum, refSum)
				}
				if want := int64(T) * 40 * 39; grads != want {
					t.Fatalf("%s: %d pair gradients, want %d", name, grads, want)
				}
			}
		}
	}
}
