package audit

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
)

// Every private algorithm of the registry passes its own white-box audit
// at the real noise: ε_lb ≤ claimed ε = 1 (δ = 1e-5), or, for a
// subsampled mechanism (dp-pair-sgd), ε_lb ≤ its reference ε: the ε its
// releases certify without amplification, which an attacker who knows the
// sampling is held to (whitebox.go, statedReleases). The audit's bound
// holds with probability ≥ Confidence = 0.999 for a correct mechanism, so a
// correct algorithm fails here with probability ≤ 0.1% (≤ 2.9% for the 29
// algorithm × task audits of today); the seeds are fixed, so the outcome is
// deterministic — a failure after a change means the change made a release
// leak more than its claim (or moved the seeds into that tail, which a
// rerun with another Seed tells apart). New algorithms are picked up from
// the registry and get the same worst-case search. Both tasks: AUC (1000
// trials per side) and metric learning (300); see subsampledSpec for
// dp-pair-sgd's smaller audit.
//
// The default `go test` audits the smokeAlgos of each task (the same
// audit, trials and assertion per algorithm: ≤ 0.1% false failure each);
// TestLongWhiteBoxRespectsTheClaimAtFullNoise (audit_long_test.go, build
// tag long, run by .ci/run without -race) audits every one.
func TestWhiteBoxRespectsTheClaimAtFullNoise(t *testing.T) {
	t.Parallel()
	whiteBoxRespects(t, smokeOnly(t, smokeAlgos))
}

// whiteBoxRespects runs the audit at the real noise (above) for every
// private algorithm × task that pick accepts.
func whiteBoxRespects(t *testing.T, pick func(task, name string) bool) {
	for _, task := range []struct {
		name   string
		trials int
	}{{"auc", 1000}, {"metric", 300}} {
		for _, a := range pairwise.Algorithms() {
			// NoiseInObjective algorithms are audited black-box
			// (TestBlackBoxObjectivePerturbation).
			if !a.Private || a.NoiseInObjective || !slices.Contains(a.Tasks, pairwise.Task(task.name)) || !pick(task.name, a.Name) {
				continue
			}
			t.Run(task.name+"/"+a.Name, func(t *testing.T) {
				fullNoise(t, a, task.name, task.trials)
			})
		}
	}
}

// smokeAlgos are the private algorithms the default `go test` audits per
// task (the long suite audits all of them): one of each kind of release
// and calibration — noisy full gradients (dp-gd-grad), Laplace/Gaussian
// averaged PGD iterates (dpgdc, dpgdc2), the subsampled reference ε
// (dp-pair-sgd), a one-shot statistic (dp-lda), [H20]'s GIGA iterates
// (on-pair-strc, off-pair-c) — each of which costs ≤ 0.4 s without
// -race. The rest (dp-gd, dp-ssp, dp-sgd-output, dp-local-sgd, …) spend
// 1–3.5 s each in their worst-case search, 5–10× that under -race.
var smokeAlgos = map[string]map[string]bool{
	"auc":    {"dp-gd-grad": true, "dpgdc": true, "dpgdc2": true, "dp-pair-sgd": true, "dp-lda": true, "on-pair-strc": true, "off-pair-c": true},
	"metric": {"dp-gd-grad": true, "dpgdc": true, "dp-pair-sgd": true, "off-pair-strc": true, "on-pair-c": true},
}

// smokeOnly returns a pick that accepts the names of set[task] and
// checks, when the test ends, that each of them was registered and
// picked: a renamed or removed algorithm fails the smoke test instead of
// shrinking it silently.
func smokeOnly(t *testing.T, set map[string]map[string]bool) func(task, name string) bool {
	t.Helper()
	seen := map[string]bool{}
	t.Cleanup(func() {
		for task, names := range set {
			for name := range names {
				if !seen[task+"/"+name] {
					t.Errorf("smoke set: %s (%s) is not a registered private algorithm of the task", name, task)
				}
			}
		}
	})
	return func(task, name string) bool {
		if set[task][name] {
			seen[task+"/"+name] = true
			return true
		}
		return false
	}
}

// fullNoise audits one algorithm at its real noise (see above).
func fullNoise(t *testing.T, a *pairwise.Algorithm, task string, trials int) {
	spec := AuditSpec{Algo: a.Name, Task: task, Epsilon: 1, Trials: trials, Seed: 1, Confidence: 0.999}
	subsampledSpec(&spec)
	res, err := Audit(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ε_lb = %.3f (reference %.3f); %d %s releases; realized loss %.4g vs stated %.4g (attained %.3f); %s", res.EpsilonLowerBound, res.ReferenceEpsilon,
		res.Releases, res.Mechanism, res.RealizedLoss, res.StatedLoss, res.SensitivityAttained, res.Canary)
	if res.Mode != WhiteBox || res.Delta != 1e-5 || res.NoiseScale != 1 {
		t.Errorf("mode %q, δ = %g, noise scale %g: want whitebox, 1e-5, 1", res.Mode, res.Delta, res.NoiseScale)
	}
	if res.ClaimedEpsilon != 1 {
		t.Errorf("claimed ε = %g, want the request 1", res.ClaimedEpsilon)
	}
	bar := auditBar(t, a, res)
	if res.EpsilonLowerBound > bar || !res.Consistent {
		t.Fatalf("white-box ε_lb = %.3f exceeds %.3f (%s): a release leaks more than claimed", res.EpsilonLowerBound, bar, barName(res))
	}
	// A stated sensitivity below what the worst case realizes is
	// a false claim even when the test lacks the power to show it.
	if res.SensitivityAttained > 1+1e-6 {
		t.Fatalf("a release differs by %.3f× its stated sensitivity between D and D'", res.SensitivityAttained)
	}
}

// subsampledAlgorithms are audited against the un-amplified reference ε
// (whitebox.go, statedReleases): the white-box test knows the sampling.
var subsampledAlgorithms = map[string]bool{"dp-pair-sgd": true}

// subsampledSpec shrinks the audit of a subsampled algorithm to fit the
// tests' time: every dp-pair-sgd run certifies its T steps with the
// subsampled-RDP accountant (≈ 30 ms, the whole cost of a run at n ≤ 32),
// so the search (≈ 700 runs over three losses) and each trial (two runs)
// cost ~100× more than for the other algorithms. The tests search the
// hinge loss only — for AUC the worst case of the full search (`pairfed
// audit --algo dp-pair-sgd`, every loss: opposed, hinge, λ = 40, n = 32,
// whose clipped pair gradients have norm C with opposite signs in D and
// D', so a step realizes 4C = 2Δ, the whole replace-one sensitivity;
// logistic pairs reach only C/2 at w = 0); for metric learning replacing
// a record changes only its two pairs, ≤ 4C of the 2Δ = 6C bound (0.667,
// realized by the label-flip case with the logistic loss in the full
// search and with the hinge here). Trials per side: 100 at reduced noise (ε_lb
// can reach ≈ ln(100/3.7) = 3.3 > the reference 1.94) and 50 at ×1 (a
// pass test: fewer trials weaken the test's power, not its false-failure
// rate, since Clopper–Pearson holds at every n).
func subsampledSpec(spec *AuditSpec) {
	if !subsampledAlgorithms[spec.Algo] {
		return
	}
	spec.Loss = "hinge"
	if spec.NoiseScale != 0 && spec.NoiseScale < 1 {
		spec.Trials = min(spec.Trials, 100)
	} else {
		spec.Trials = min(spec.Trials, 50)
	}
}

// auditBar is the ε the audit holds the algorithm to: the reference ε of
// a subsampled algorithm (which must be reported, above the claim: the
// amplification makes the claim smaller), the claim otherwise.
func auditBar(t *testing.T, a *pairwise.Algorithm, res *AuditResult) float64 {
	t.Helper()
	if !subsampledAlgorithms[a.Name] {
		if res.ReferenceEpsilon != 0 || res.Reference != "" {
			t.Errorf("%s is not subsampled but reports a reference ε = %g (%q)", a.Name, res.ReferenceEpsilon, res.Reference)
		}
		return res.ClaimedEpsilon
	}
	if res.Reference != ReferenceKnownSampling || !(res.ReferenceEpsilon > res.ClaimedEpsilon) || math.IsInf(res.ReferenceEpsilon, 0) {
		t.Fatalf("%s: reference ε = %g (%q), want finite, above the claimed %g, with the known-sampling reference", a.Name, res.ReferenceEpsilon, res.Reference, res.ClaimedEpsilon)
	}
	return res.ReferenceEpsilon
}

func barName(res *AuditResult) string {
	if res.Reference != "" {
		return "reference ε of the un-amplified releases"
	}
	return "the claimed ε"
}

// tightAlgorithms are the algorithms whose (tight) sensitivity bound the
// audit's worst case attains, so that noise ×0.3 must be caught:
//
//   - dp-gd-grad ([K22]) and dpgdc2 ([X21] Alg 2) release noisy full
//     gradients. In the aligned construction only the canary's 2(n−1)
//     ordered pairs have a gradient in D, each of norm ≈ G (logistic factor
//     σ(4RB) ≈ 1 at B = 4) and all along e₁, and none in D': the gradient
//     difference is ≈ 2G/n, the replace-one bound.
//   - dpgdc ([X21] Alg 4) and dpegd (Alg 3) release noisy averages of
//     noise-free PGD iterates. With only the canary's pairs moving w in D
//     and nothing moving it in D', the iterate difference grows by exactly
//     η·2G/n per step (no contraction, no projection inside the ball of
//     radius 4): Lemma 7's average, with the tight per-pair G, is attained.
//   - on-pair-*, off-pair-* ([H20] Algs 1–4) release noise-free Pairwise
//     GIGA iterates (or their average) with the sensitivity of
//     gigaSensitivities: at t = j the canary's pairs all change by Γ
//     (square loss, 2RB ≤ 1, aligned canary: the coefficient −2(1 − h) at
//     h = −2RB gives exactly Γ = 4R(1 + 2RB)), and each later step adds the
//     partner term Γ/(t − 1) along the same direction with the contraction
//     1 − η_tα of the strongly convex step: the recursion is attained (0.99
//     of μ at n = 32, λ = 40, B = 0.1, where T₁ = 17 < n). (Lemma 4's
//     8G/(αt), with G including λB, realized only 0.01–0.14.)
//   - dp-pair-gd (the single-site form of fed-dp-pair-sgd's AUC mechanism)
//     releases the class sums x/R first: an antipodal canary of the same
//     class (x = ∓R·e₁, "opposed" or "similar") moves that sum by exactly
//     2 = Δ. Its later, clipped gradient rounds realize less, but the
//     first release carries half of μ², enough for ×0.3 to be caught
//     (ε_lb 1.71 with the test's seed).
//
// Every other private algorithm must be caught at ×0.1; why their bounds
// are not (fully) attained:
//
//   - dpgdsc ([X21] Alg 1) and dp-sgd-output ([Y21b] Alg 2): output
//     perturbation whose tight bound is the diameter of the parameter set;
//     the opposed construction pulls the two runs towards opposite ends but
//     (strong convexity, or 1/t-weighted updates) not all the way: 83–91%.
//   - dp-local-sgd ([Y21a] Alg 3): the bound holds on a high-probability
//     event over how often the canary is drawn; the worst of 64 seeds draws
//     it about a third as often as the bound allows for.
//   - dp-pair-sgd: held to its reference ε (≈ 1.94 at ε = 1: T = 20
//     steps at q = 1/2 for n ≤ 32), each step attains 2Δ when the canary
//     is sampled at an interior slot, which the worst of 64 sampling seeds
//     does in ≈ 2/3 of the steps (realized μ 0.81 of the reference's).
//
// These statements assume the exact calibration and tight sensitivities of
// issue 10 (items 1 and 3): with the classical calibration and the papers'
// looser bounds every algorithm keeps 2–250× more noise than its worst
// case needs and none of them is caught at its scale.
var tightAlgorithms = map[string]bool{"dp-gd-grad": true, "dpgdc2": true, "dpgdc": true, "dpegd": true,
	"on-pair-strc": true, "on-pair-c": true, "off-pair-strc": true, "off-pair-c": true, "dp-pair-gd": true}

// With too little noise the white-box audit must fail the claim. For a
// Gaussian release whose sensitivity is attained and whose σ is exactly
// calibrated, μ = 0.268 at (ε, δ) = (1, 1e-5) and μ/0.3 = 0.89; with
// classical calibration μ = 0.206 and 0.69 at ×0.3. With 4000 trials per
// side the expected ε_lb is then ≈ 1.6 (exact) or ≈ 1.15 (classical), so a
// failure means the stated sensitivity is not attained (the log shows
// realized vs stated) or σ is larger than the claim needs — the test
// catches loose calibration as well as the audit's own weakness. A
// subsampled algorithm (dp-pair-sgd) must fail its reference ε ≈ 1.94
// instead: at ×0.1 its worst case realizes μ ≈ 4 (0.81 of the reference
// μ/0.1 = 4.9), expected ε_lb ≈ 2.3 with its 100 trials per side. The
// trials are seeded: the outcome is deterministic.
//
// The default `go test` runs smokeCatch (same trials, scale and
// assertions); TestLongWhiteBoxCatchesTooLittleNoise every private
// algorithm.
func TestWhiteBoxCatchesTooLittleNoise(t *testing.T) {
	t.Parallel()
	whiteBoxCatches(t, smokeOnly(t, map[string]map[string]bool{"auc": smokeCatch}))
}

// smokeCatch are the algorithms whose ×0.1 / ×0.3 audits the default `go
// test` runs (≤ 0.3 s each without -race): the four kinds of tight
// bound (noisy gradient, averaged PGD iterate, GIGA iterate), a one-shot
// statistic and the subsampled reference.
var smokeCatch = map[string]bool{"dp-gd-grad": true, "dpgdc2": true, "off-pair-strc": true, "dp-lda": true, "dp-pair-sgd": true}

// whiteBoxCatches audits at too little noise (above) every private
// algorithm that pick("auc", name) accepts.
func whiteBoxCatches(t *testing.T, pick func(task, name string) bool) {
	for _, a := range pairwise.Algorithms() {
		if !a.Private || !pick("auc", a.Name) {
			continue
		}
		scale, trials := 0.1, 4000
		if tightAlgorithms[a.Name] {
			scale, trials = 0.3, 4000
		}
		t.Run(fmt.Sprintf("%s×%g", a.Name, scale), func(t *testing.T) {
			spec := AuditSpec{Algo: a.Name, Epsilon: 1, Trials: trials, Seed: 2, NoiseScale: scale}
			subsampledSpec(&spec)
			res, err := Audit(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("ε_lb = %.3f (reference %.3f); realized loss %.4g vs stated %.4g at ×%g (attained %.3f); %s", res.EpsilonLowerBound, res.ReferenceEpsilon,
				res.RealizedLoss, res.StatedLoss, scale, res.SensitivityAttained, res.Canary)
			bar := auditBar(t, a, res)
			caught := res.EpsilonLowerBound > bar
			if caught == res.Consistent {
				t.Errorf("ε_lb = %.3f against %.3f (%s) but consistent = %v", res.EpsilonLowerBound, bar, barName(res), res.Consistent)
			}
			if !caught {
				t.Fatalf("noise ×%g not caught: ε_lb = %.3f ≤ %.3f (%s); the worst case realizes %.3f of the stated sensitivity (privacy loss %.4g of the %.4g allowed)",
					scale, res.EpsilonLowerBound, bar, barName(res), res.SensitivityAttained, res.RealizedLoss, res.StatedLoss)
			}
			if tightAlgorithms[a.Name] && res.SensitivityAttained < 0.9 {
				t.Errorf("%s is listed as attaining its sensitivity bound, but the worst case realizes only %.3f of it", a.Name, res.SensitivityAttained)
			}
		})
	}
}

// metricGaps are the metric-learning audits that do not catch noise ×0.1,
// with the reason; the test asserts each stays uncaught, so the list stays
// true (a change that closes one fails with "remove it").
var metricGaps = map[string]string{
	"dp-local-sgd": "its phase sensitivity holds on a Binomial high-probability event over the canary's draws, which the worst of the sampling seeds reaches only about a quarter of (ε_lb ≈ 0.95 at ×0.1)",
}

// The same in metric learning, at ×0.1 for every private algorithm of the
// task (1000 trials per side, 300 for dpgdc2; the logistic pair-gradient gap Γ = 1.381G at
// R = B = 1 and ≈ 1.03G at B = 0.1 is what the label-flip and similar
// canaries approach). Deterministic seeds.
//
// The default `go test` runs smokeCatchMetric; the long
// TestLongWhiteBoxCatchesTooLittleNoiseMetric every algorithm of the task.
func TestWhiteBoxCatchesTooLittleNoiseMetric(t *testing.T) {
	t.Parallel()
	whiteBoxCatchesMetric(t, smokeOnly(t, map[string]map[string]bool{"metric": smokeCatchMetric}))
}

// smokeCatchMetric: ≤ 0.25 s each without -race.
var smokeCatchMetric = map[string]bool{"dpgdc": true, "off-pair-strc": true, "dp-pair-sgd": true}

// whiteBoxCatchesMetric audits metric learning at ×0.1 (above) every
// private algorithm of the task that pick("metric", name) accepts.
func whiteBoxCatchesMetric(t *testing.T, pick func(task, name string) bool) {
	for _, a := range pairwise.Algorithms() {
		if !a.Private || !slices.Contains(a.Tasks, pairwise.TaskMetric) || !pick("metric", a.Name) {
			continue
		}
		t.Run(a.Name, func(t *testing.T) {
			trials := 1000
			if a.Name == "dpgdc2" {
				trials = 300 // 22 releases of d² values per run; ε_lb ≈ 3 leaves a wide margin
			}
			spec := AuditSpec{Algo: a.Name, Task: "metric", Epsilon: 1, Trials: trials, Seed: 2, NoiseScale: 0.1}
			subsampledSpec(&spec)
			res, err := Audit(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			bar := auditBar(t, a, res)
			caught := res.EpsilonLowerBound > bar
			t.Logf("ε_lb = %.3f against %.3f (%s); attained %.3f; %s", res.EpsilonLowerBound, bar, barName(res), res.SensitivityAttained, res.Canary)
			if gap, ok := metricGaps[a.Name]; ok {
				if caught {
					t.Fatalf("noise ×0.1 is now caught (ε_lb = %.3f): the gap (%s) is closed — remove %s from metricGaps", res.EpsilonLowerBound, gap, a.Name)
				}
				return
			}
			if !caught {
				t.Fatalf("noise ×0.1 not caught in metric learning: ε_lb = %.3f ≤ %.3f; the worst case realizes %.3f of the stated sensitivity", res.EpsilonLowerBound, bar, res.SensitivityAttained)
			}
		})
	}
}

// meanRelease is a toy private algorithm for testing the audit itself: it
// releases the mean of the first coordinate plus Gaussian noise calibrated
// exactly for the claimed (ε, δ) and a *stated* sensitivity, which tests
// set wrong on purpose. The true replace-one sensitivity is 2R/n.
func meanRelease(stated float64, dataSigma bool) *pairwise.Algorithm {
	return meanReleaseLeaky(stated, dataSigma, false)
}

// meanReleaseLeaky is meanRelease that, when leak is set, returns the
// un-noised mean instead of the release: a bug outside the noise calls.
func meanReleaseLeaky(stated float64, dataSigma, leak bool) *pairwise.Algorithm {
	a := &pairwise.Algorithm{Name: "mean-release", Private: true, Tasks: []pairwise.Task{pairwise.TaskAUC},
		Requires: pairwise.Requirements{Convex: true}}
	a.Run = func(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
		ds, p := obj.Data(), cfg.Privacy
		n := float64(ds.N)
		out := make([]float64, obj.NumParams())
		for i := 0; i < ds.N; i++ {
			out[0] += ds.Row(i)[0] / n
		}
		sens := stated * 2 * p.FeatureRadius / n
		sigma := sens / gaussianMu(p.Epsilon, p.Delta)
		if dataSigma {
			sigma *= 2 + out[0] // a data-dependent σ: a bug
		}
		clean := append([]float64(nil), out...)
		p.Noise.AddGaussian(out, sigma)
		if leak {
			out = clean
		}
		return &pairwise.Result{W: out, Privacy: &pairwise.PrivacyReport{Sensitivity: []float64{sens}, Sigmas: []float64{sigma}}}, nil
	}
	return a
}

// gaussianMu is the μ with δ_μ(ε) = δ (Balle & Wang 2018), by bisection.
func gaussianMu(eps, delta float64) float64 {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	lo, hi := 1e-3, 20.0
	for i := 0; i < 100; i++ {
		m := (lo + hi) / 2
		if phi(-eps/m+m/2)-math.Exp(eps)*phi(-eps/m-m/2) > delta {
			hi = m
		} else {
			lo = m
		}
	}
	return lo
}

// The audit fails a real bug, not only a scaled σ: a mechanism that states
// a third of its true sensitivity (σ exactly calibrated for the wrong Δ, so
// the release is 3μ-GDP with 3μ = 0.80 instead of μ = 0.268) is caught at
// ε = 1 (expected ε_lb ≈ 1.4 with 4000 trials per side), and the same
// mechanism with the right sensitivity passes (false failure ≤ 5%; seeded,
// so deterministic). The realized/stated ratio shows the bug directly.
func TestWhiteBoxCatchesUnderstatedSensitivity(t *testing.T) {
	spec := AuditSpec{Algo: "mean-release", Epsilon: 1, Trials: 4000, Seed: 3, R: 1, NoiseScale: 1, Confidence: 0.95}
	good, err := whiteBox(context.Background(), meanRelease(1, false), spec)
	if err != nil {
		t.Fatal(err)
	}
	if good.EpsilonLowerBound > 1 || math.Abs(good.SensitivityAttained-1) > 1e-6 {
		t.Errorf("correct mean release: ε_lb = %.3f (want ≤ 1), attained %.6f (want 1)", good.EpsilonLowerBound, good.SensitivityAttained)
	}
	bad, err := whiteBox(context.Background(), meanRelease(1.0/3, false), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("correct: ε_lb = %.3f; a third of the sensitivity stated: ε_lb = %.3f, attained %.3f", good.EpsilonLowerBound, bad.EpsilonLowerBound, bad.SensitivityAttained)
	if math.Abs(bad.SensitivityAttained-3) > 1e-6 {
		t.Errorf("understated sensitivity: attained %.6f, want 3", bad.SensitivityAttained)
	}
	if bad.EpsilonLowerBound <= 1 {
		t.Errorf("understated sensitivity not caught: ε_lb = %.3f ≤ 1", bad.EpsilonLowerBound)
	}
}

// A noise scale that depends on the data is refused by the replay.
func TestWhiteBoxRefusesDataDependentNoise(t *testing.T) {
	spec := AuditSpec{Algo: "mean-release", Epsilon: 1, Trials: 10, Seed: 1, R: 1, NoiseScale: 1, Confidence: 0.95}
	if _, err := whiteBox(context.Background(), meanRelease(1, true), spec); err == nil {
		t.Fatal("a data-dependent σ was audited as if it were a fixed mechanism")
	}
}

// A model returned outside the noisy releases (here the un-noised mean) is
// refused: the same transcript gives different models on D and D'.
func TestWhiteBoxRefusesOutputBeyondTheReleases(t *testing.T) {
	spec := AuditSpec{Algo: "mean-release", Epsilon: 1, Trials: 10, Seed: 1, R: 1, NoiseScale: 1, Confidence: 0.95}
	_, err := whiteBox(context.Background(), meanReleaseLeaky(1, false, true), spec)
	if err == nil || !strings.Contains(err.Error(), "beyond its releases") {
		t.Fatalf("an un-noised returned model was not refused: %v", err)
	}
}

// The recorder sees the scale actually drawn, after dp.ScaleNoise, and
// the replayer substitutes the recorded output.
func TestRecorderAndReplay(t *testing.T) {
	rec := &recorder{inner: dp.NewSeededNoise(1)}
	noise := dp.ScaleNoise(rec, 0.5)
	x := []float64{1, 2}
	noise.AddGaussian(x, 4)
	if len(rec.rel) != 1 || rec.rel[0].scale != 2 || rec.rel[0].pre[0] != 1 || rec.rel[0].out[0] != x[0] {
		t.Fatalf("recorded %+v for σ = 4 ×0.5 on [1 2] → %v", rec.rel, x)
	}
	rep := &replayer{script: rec.rel}
	y := []float64{5, 6}
	dp.ScaleNoise(rep, 0.5).AddGaussian(y, 4)
	if rep.err != nil || y[0] != x[0] || y[1] != x[1] || rep.got[0].pre[0] != 5 {
		t.Fatalf("replay gave %v (err %v), want %v and pre 5", y, rep.err, x)
	}
	dp.ScaleNoise(rep, 0.5).AddLaplace(y, 4)
	if rep.err == nil {
		t.Fatal("an extra release was replayed without error")
	}
}

// The sorted-sample threshold counts agree with a direct count.
func TestThresholdErrorsMatchDirectCount(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	s0, s1 := make([]float64, 200), make([]float64, 150)
	for i := range s0 {
		s0[i] = float64(r.IntN(20))
	}
	for i := range s1 {
		s1[i] = float64(r.IntN(20)) + 3
	}
	sort.Float64s(s0)
	sort.Float64s(s1)
	for thr := -1.0; thr < 25; thr += 0.5 {
		for _, flip := range []bool{false, true} {
			fp, fn := thresholdTest{thr, flip}.errors(s0, s1)
			var wfp, wfn int
			say1 := func(v float64) bool { return (!flip && v > thr) || (flip && v < thr) }
			for _, v := range s0 {
				if say1(v) {
					wfp++
				}
			}
			for _, v := range s1 {
				if !say1(v) {
					wfn++
				}
			}
			if fp != wfp || fn != wfn {
				t.Fatalf("thr %g flip %v: (%d, %d), direct (%d, %d)", thr, flip, fp, fn, wfp, wfn)
			}
		}
	}
}

// The black-box mode still works and catches ×0.1 noise on the canonical
// full-gradient algorithm (its release is a sum of noisy full gradients
// and the final model moves along e₁, where the black-box test looks).
func TestBlackBoxCatchesTenfoldTooLittleNoise(t *testing.T) {
	res, err := Audit(context.Background(), AuditSpec{Algo: "dp-gd-grad", Mode: BlackBox, Epsilon: 1, Trials: 1000, Seed: 2, NoiseScale: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != BlackBox || res.Delta != dp.DefaultDelta(16) {
		t.Errorf("mode %q δ = %g, want blackbox and δ = 1/(10·16)", res.Mode, res.Delta)
	}
	if res.EpsilonLowerBound <= 1 {
		t.Fatalf("black-box with σ/10: ε_lb = %.3f, want > 1", res.EpsilonLowerBound)
	}
}

// dp-objpert's noise is an input of the objective it minimizes, so it —
// and dp-select, which may run it — is audited black-box (the default for
// them; whitebox is refused): consistent at its own noise, caught at a
// twentieth (dp-objpert) or a tenth (dp-select) of it. At ×1 the bound is
// the audit's own (ε_lb ≤ ε except with probability ≤ 1 − Confidence =
// 10⁻³). The statistic w₁ of the final model has less power on
// dp-objpert, whose records are directions from a noisy centre (ε_lb 0.19,
// 0.81, 1.98, 3.15 at ×0.3, 0.1, 0.05, 0.03 with its records' intercept
// share b = 1/2: seed 3, 1000 trials; `pairfed audit --mode blackbox`); on the
// audit's 16 records dp-select's count picks dp-lda (4.0 at ×0.1).
func TestBlackBoxObjectivePerturbation(t *testing.T) {
	for algo, low := range map[string]float64{"dp-objpert": 0.05, "dp-select": 0.1} {
		if _, err := Audit(context.Background(), AuditSpec{Algo: algo, Mode: WhiteBox, Epsilon: 1, Trials: 100}); err == nil || !strings.Contains(err.Error(), "--mode blackbox") {
			t.Fatalf("white-box audit of %s: err = %v, want a refusal naming --mode blackbox", algo, err)
		}
		for _, c := range []struct {
			scale  float64
			caught bool
		}{{1, false}, {low, true}} {
			res, err := Audit(context.Background(), AuditSpec{Algo: algo, Epsilon: 1, Trials: 1000, Seed: 3, NoiseScale: c.scale, Confidence: 0.999})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s, noise ×%g: ε_lb = %.3f (FPR %.3f, FNR %.3f)", algo, c.scale, res.EpsilonLowerBound, res.FPR, res.FNR)
			if res.Mode != BlackBox {
				t.Errorf("%s: mode %q, want its default, blackbox", algo, res.Mode)
			}
			if caught := res.EpsilonLowerBound > 1; caught != c.caught {
				t.Errorf("%s, noise ×%g: ε_lb = %.3f, want caught = %v", algo, c.scale, res.EpsilonLowerBound, c.caught)
			}
		}
	}
}

func TestAuditRejectsBadRequests(t *testing.T) {
	for _, s := range []AuditSpec{
		{Algo: "sgd-prev", Epsilon: 1}, {Algo: "dp-gd-grad", Epsilon: 0}, {Algo: "nope", Epsilon: 1},
		{Algo: "dp-gd-grad", Epsilon: 1, Trials: 3}, {Algo: "dp-gd-grad", Epsilon: 1, Mode: "grey"},
		{Algo: "dp-gd-grad", Epsilon: 1, NoiseScale: -1}, {Algo: "dp-gd-grad", Epsilon: 1, Confidence: 1},
		{Algo: "dp-gd-grad", Epsilon: 1, Data: pairwise.NewDense([]float64{1, 0}, []float64{1, -1}, 1)},
		{Algo: "dp-gd-grad", Epsilon: 1, Delta: 1, DeltaSet: true},
	} {
		if _, err := Audit(context.Background(), s); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
}

// An audit's claimed ε is held to a private run's range (the one the
// calibrations are proved to terminate and stay finite over), and the
// refusal names the flag, the value and the range — for the single-site
// and the federated audit alike.
func TestAuditEpsilonRange(t *testing.T) {
	for _, eps := range []float64{1e-300, 1e-7, 2e4} {
		want := fmt.Sprintf("--epsilon = %v is outside the accepted range [1e-06, 10000]", eps)
		if _, err := Audit(context.Background(), AuditSpec{Algo: "dp-gd-grad", Epsilon: eps}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("audit ε = %g: %v, want %q", eps, err, want)
		}
		if _, err := AuditFederated(context.Background(), FedSpec{Algo: fedalgo.FedDPLDA, Epsilon: eps}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("federated audit ε = %g: %v, want %q", eps, err, want)
		}
	}
}

// The Laplace (δ = 0) releases of the [X21] algorithms are audited with the
// ℓ1 likelihood ratio: within the pure-ε claim at full noise (false
// failure ≤ 5%, seeded), caught at ×0.1 — dpgdc realizes Σ‖a − b‖₁/b ≈ 0.2
// of ε = 1 at ×1, so ≈ 2 at ×0.1 (expected ε_lb ≈ 1.8).
func TestWhiteBoxLaplace(t *testing.T) {
	for _, c := range []struct {
		scale  float64
		caught bool
	}{{1, false}, {0.1, true}} {
		res, err := Audit(context.Background(), AuditSpec{Algo: "dpgdc", Epsilon: 1, Delta: 0, DeltaSet: true, Trials: 1000, Seed: 4, NoiseScale: c.scale})
		if err != nil {
			t.Fatal(err)
		}
		if res.Mechanism != "laplace" || res.Delta != 0 {
			t.Fatalf("mechanism %q δ = %g, want laplace and 0", res.Mechanism, res.Delta)
		}
		if got := res.EpsilonLowerBound > 1; got != c.caught {
			t.Errorf("×%g: ε_lb = %.3f (realized loss %.3f), caught %v, want %v", c.scale, res.EpsilonLowerBound, res.RealizedLoss, got, c.caught)
		}
	}
}

// The production sampler can be audited too (not reproducible, so only a
// smoke test: it runs and reports).
func TestWhiteBoxSecureNoiseRuns(t *testing.T) {
	res, err := Audit(context.Background(), AuditSpec{Algo: "dpgdc2", Epsilon: 1, Trials: 20, Seed: 1, SecureNoise: true})
	if err != nil || res.Releases == 0 {
		t.Fatalf("secure-noise audit: %+v, %v", res, err)
	}
}

// A subsampled report (one add/remove Δ' and one σ for its T steps) is
// expanded to T releases of replace-one sensitivity 2Δ' with the sampling
// known, and the reference ε is the exact Gaussian-DP ε of their
// sequential composition, μ = 2Δ'√T/σ, plus only the discrete sampler's
// tiny δ term; a report that does not state one Δ' and one σ for its
// steps gets no reference (an error, not a silent claim).
func TestSubsampledReference(t *testing.T) {
	const T, sens, sigma, delta = 20, 2.0, 37.0, 1e-5
	rep := &pairwise.PrivacyReport{Mechanism: "subsampled-gaussian", SampleRate: 0.5, Sensitivity: []float64{sens}, Sigmas: []float64{sigma}, Releases: T}
	s, sig, sub := statedReleases(rep, T)
	if !sub || len(s) != T || len(sig) != T || s[T-1] != 2*sens || sig[0] != sigma {
		t.Fatalf("expanded to %v, %v (subsampled %v)", s, sig, sub)
	}
	tr := trialResult{subsampled: true, releases: T, refSens: s, refSigmas: sig, coords: 2 * T}
	ref, mu, err := referenceEpsilon(tr, 1, delta)
	if err != nil {
		t.Fatal(err)
	}
	wantMu := 2 * sens * math.Sqrt(T) / sigma
	want, err := dp.GaussianDPEpsilon(wantMu, delta)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("μ = %.6g (want %.6g), reference ε = %.6g, continuous GDP ε = %.6g", mu, wantMu, ref, want)
	if math.Abs(mu-wantMu) > 1e-9*wantMu || ref < want || ref > want+1e-6 {
		t.Errorf("reference ε = %.9g (μ = %.9g), want the GDP ε %.9g of μ = %.9g", ref, mu, want, wantMu)
	}
	if s, _, sub := statedReleases(&pairwise.PrivacyReport{Mechanism: "gaussian", Sensitivity: []float64{1, 2}, Sigmas: []float64{3, 4}}, 2); sub || len(s) != 2 || s[1] != 2 {
		t.Errorf("a plain Gaussian report was changed: %v (subsampled %v)", s, sub)
	}
	rep.Releases = T + 1 // the report does not describe the releases drawn
	s, sig, sub = statedReleases(rep, T)
	if !sub || s != nil {
		t.Fatalf("a mismatched subsampled report was expanded: %v", s)
	}
	if _, _, err := referenceEpsilon(trialResult{subsampled: true, releases: T, refSens: s, refSigmas: sig}, 1, delta); err == nil {
		t.Error("a reference ε was computed without one sensitivity per release")
	}
}
