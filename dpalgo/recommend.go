package dpalgo

import (
	"fmt"
	"math"
	"slices"

	"github.com/pairfed/pairfed/pairwise"
)

// The default private algorithm: a written rule from the public shape of
// the job — task, number of training records n, number of features d, the
// request (ε, δ) and the loss asked for — fixed before any record is read.
// Under replace-one neighbours n and d are public; nothing else of the data
// (class counts, feature values, spread) enters.
//
// # The rule (task auc)
//
// Let μ be the Gaussian-DP parameter of one Gaussian release calibrated to
// (ε, δ) (μ = Δ/σ; every mechanism below spends its whole budget as one
// μ-GDP release or a composition equivalent to one), R the records' norm
// bound, and
//
//	t = μ·n / √d.
//
//  0. A hinge or logistic loss asked for: dp-pair-sgd with that loss when
//     n ≥ RecommendLargeN (O(batch) per step), else dp-gd with it (the
//     one-shot mechanisms solve the square loss only).
//  1. d ≤ 2000 (the second-moment release's limit) and t ≥ RecommendCentre
//     (= 4/√(3/4 − 1/3) ≈ 6.2) → dp-lda, or dp-select when the records
//     could be enough for the logistic model: μ_b·(n/2)/(d + 1) (the
//     largest s₊ any class split allows) reaches dp-select's threshold T
//     and n(d + 1)² ≤ SelectMaxWork (see "dp-select" below).
//  2. d ≤ 2000 and t < RecommendCentre → dp-ssp-mean.
//  3. d > 2000 → dp-pair-sgd (hinge) when n ≥ RecommendLargeN and no square
//     loss is asked for, else dp-ssp-mean.
//
// # Why t, and why the threshold is where it is
//
// dp-lda releases a centre ĉ (release A, Δ = 2 on Σx/R, a quarter of μ²:
// μ_A = μ/2, σ_A = 4/μ) and then the class sums, count and second moment of
// the records' directions u = R(x − ĉ)/‖x − ĉ‖ (release B, Δ = 2, μ_B =
// √(3/4)·μ). Its error has two parts:
//
//   - the second moment: noise of spectral norm ≈ 2R²√d/(μ_B n) against a
//     covariance of eigenvalues ≈ R²/d — noise-to-signal ≈ 1/s with
//     s = μn/d^{3/2}. This is NOT a reason to leave dp-lda: its ridge λ is
//     that noise level, so when s ≪ 1 the eigenvalues of Σ̂₊ + λI lie in
//     ≈ [λ, 2λ] and the solve (Σ̂₊ + λI)⁻¹b̂ is within a factor ≈ 2 in
//     every eigendirection of b̂/λ — the class-mean
//     difference of the directions, which is what dp-ssp-mean would
//     release anyway. (The previous rule switched at s = 1; the synthetic
//     grid of scripts/regret and the data sets of issue 25 — digits, d =
//     256, s ≈ 0.1–0.4, dp-lda 0.92–0.96 vs dp-ssp-mean 0.89 — say it is
//     the wrong quantity.)
//   - the centre: ‖ĉ − c‖ ≈ σ_A·R·√d/n = 4R√d/(μn) = 4R/t. Around a wrong
//     centre the directions mix the records' offset from ĉ into every u.
//
// Compare dp-lda and dp-ssp-mean in the regime where both are class-mean
// differences. dp-ssp-mean releases the class sums of the records as they
// are (noise 2R/μ per coordinate, signal the mean difference b of records
// of spread ρ). dp-lda's directions have norm R whatever the records'
// spread: seen from ĉ, records at RMS distance √(ρ² + ‖ĉ − c‖²) are scaled
// to R, so its signal is b·R/√(ρ² + ‖ĉ − c‖²), under noise 2R/μ_B =
// 2R/(√(3/4)μ). dp-lda's signal-to-noise is the larger iff
//
//	ρ² + ‖ĉ − c‖² ≤ (3/4)·R².
//
// ρ is not public. Records inside the R-ball of a public schema (its box
// mapped onto the ball) spread at most as records uniform on the box do,
// ρ² ≤ R²/3 (uniform on [−a, a]^d: ρ² = da²/3, and the box's half-diagonal
// a√d is R); real records sit nearer their centre. So dp-lda is ahead for
// every such data set when ‖ĉ − c‖² ≤ (3/4 − 1/3)R², i.e.
//
//	4/t ≤ √(5/12)  ⇔  t ≥ 4/√(5/12) ≈ 6.2 = RecommendCentre.
//
// The threshold follows from the calibration (the ¼/¾ split, Δ = 2) and
// the box bound alone; nothing was fitted. Validation (docs/results/,
// `go run ./scripts/regret`; synthetic shapes only: n = 100…10⁵, d =
// 2…500, positive shares 1–50 %, ε ∈ {0.1, 1, 10}; a small-n block n =
// 256, d ≤ 1000, ε ∈ {0.1, 0.5, 1, 10}; d = 1000 at n = 10³, 10⁴; 219
// cells where the pick ran): the held-out regret (the best chosen on half
// of a cell's runs, the regret measured on the other half — the in-sample
// best is the largest of several noisy means and charges the rule its
// noise where every candidate is at chance) is ≤ 0.01 in 84.5 % of the
// cells against the five candidates it was validated with (the previous
// rule 70 %) and in 97 % of the cells where some private model reaches
// AUC 0.6; with dp-pair-gd added as a sixth candidate (below) 83.1 % and
// 95.5 %. The misses are near-chance cells and
// 1 %-positive cells, where the class balance — private — decides.
// They are the measure's noise more than the rule's: where every
// candidate is at chance, a label-permutation null expects 33 of the 108
// such cells to miss whatever is picked (the held-out regret's standard
// error there is ≈ 0.02 at 10 runs), and with the n = 100 and n = 256
// blocks re-run at 40 runs and n = 1000 and n = 256, d = 1000 at 20 the
// same rule scores 91.3 % (97.2 % where a model learns; with every
// cell at ≥ 20 runs, 92.2 % and 99.1 %;
// docs/results/regret-failing.md, with its caveats and what was tried to
// improve on dp-lda and why it did not).
// scripts/regret's TestRulePicksTheDecisiveWinner re-reads the recorded
// grids: where dp-lda and dp-ssp-mean differ decisively, the rule picks
// the winner (two listed exceptions, both with 1 % positives).
//
// Why not dp-pair-sgd from n = 10 000 any more (the previous rule 1): its
// hinge loss beats the Fisher direction on some large sets (ijcnn1 ε = 1:
// 0.913 vs dp-lda 0.888; a9a ties) and loses on others (issue 25: letter
// 0.785 vs 0.799, web pages 0.855 vs 0.911; the synthetic grid at n ≥ 10⁴:
// dp-lda within 0.01 of the best in 49 of the 54 cells where it ran), and
// which one happens depends on the data's shape, not on n, d or ε — a rule
// from the public shape cannot see it. dp-lda's error is the one the shape
// bounds, so it stays the default; a hinge or logistic loss asked for
// still gets dp-pair-sgd at n ≥ RecommendLargeN. Above d = 2000 dp-lda
// cannot run (d(d+1)/2 released moments); there the grid's d = 500 cells
// without dp-lda (n ≥ 10⁴: dp-pair-sgd up to 0.94 vs dp-ssp-mean 0.64
// where it learns, at most 0.05 below it where neither does) keep
// dp-pair-sgd for large n — measured at d = 500, not above 2000.
// Why not dp-pair-gd (the pooled form of fed-dp-pair-sgd's AUC sum
// release: noisy class-mean start, then T ≤ 16 noisy steps of the
// logistic pair loss; private_pairgd.go). Its per-round noise over the
// gradient is E₁ = κσ₁√(8(d+1))/n ≈ 4/t (σ₁ = 2√2/μ: half of μ² per
// phase), and its rule runs the rounds for a path τ = θ₀/E₁ ≈ t/40, at
// most 16 full steps. Where t < 6.2 the rounds barely move the start
// (τ < 0.16), so it is dp-ssp-mean with half the budget; above, its
// rounds are first-order steps on the sphere, which correct the
// class-mean direction towards the logistic optimum only as fast as the
// records' covariance is conditioned — at most 16 steps cannot whiten a
// spread with condition number in the tens, which dp-lda inverts in
// closed form, and that spectrum is private. On the grid (every cell,
// docs/results/regret-pairgd.md) it is behind the rule's pick by 0.027
// (6.2 ≤ t < 100), 0.057 (100 ≤ t < 640) and 0.063 (t ≥ 640) on
// average, decisively behind in 59 cells and decisively ahead in 2 (a 1
// %-positive cell and one at AUC 0.55); picking it in the saturated
// regime t ≥ 640 drops the held-out share to 64.9 %. Its wins are on
// data whose Fisher direction is far from the logistic one and whose
// spread is well conditioned — ijcnn1 at ε = 1: 0.915 against dp-lda's
// 0.890 (docs/results/privbench.md) — which n, d, ε and δ do not show;
// on diabetes (0.738 vs 0.808) and a9a (0.875 vs 0.895) it loses. So it
// is not a default; scripts/regret's TestPairGDIsNotTheDecisiveWinner
// keeps that evidence checked.
//
// # dp-select (rule 1's large-data branch)
//
// dp-objpert (private_objpert.go) fits the logistic model by objective
// perturbation, at the noise of one Gaussian vector: ahead of dp-lda
// where the logistic model describes the data better (ijcnn1 0.915 vs
// 0.891 at ε = 1; DP-SGD 0.911), behind it when the minority class is
// small for the dimension. On the synthetic grid and a held-out block
// (n = 3000 and 30 000; d = 5, 20, 50; π₊ = 3, 20, 50 %; ε = 0.5, 2) the
// quantity that separates the two is s₊ = μ·min(n₊, n₋)/(d + 1): every
// cell with s₊ ≥ 15 (SelectCrossover) has dp-objpert within 0.01 AUC of
// dp-lda or ahead (≥ 24: within 0.003), while below 15 it trails by up to
// 0.24 (docs/results/regret-objpert.md). The counts are private, so the
// rule cannot compute s₊; it picks dp-select, which releases a noisy
// positive count (2 % of ε, 1 % of δ) and runs dp-objpert when ŝ₊ ≥
// T = 15 + 2·μ_b·σ_c/(d + 1) (the crossover plus two standard deviations
// of the count's noise in ŝ₊), else dp-lda, on the rest — whenever the
// best case s₊ = μ_b·(n/2)/(d + 1) reaches T; elsewhere the count could
// never pick dp-objpert and dp-lda keeps the whole budget. dp-objpert's
// Newton steps cost ≈ 6 of dp-lda's passes; above n(d + 1)² = 2·10⁹
// (SelectMaxWork, about a minute on one core) the rule keeps dp-lda.
//
// dp-ssp (per-class second moments, the exact square-AUC optimum) is never
// the default: its class covariances carry noise ∝ √(1/n₊² + 1/n₋²)
// instead of 1/n, and the class counts are not public.
//
// Cost: dp-lda reads the records once at O(n·d²) and solves a d × d
// eigenproblem (O(d³)): a minute or so at n = 10⁵, d = 500 on one core.
//
// # Task metric
//
// The one-shot mechanisms are AUC-only. n ≤ 2000 → dp-gd (its full
// pairwise gradient costs O(n²d + nd²) per step, within budget below that
// n); above → dp-pair-sgd (O(batch) per step). Loss: the one asked for.
//
// # Non-private runs
//
// Without ε nothing changes: the default stays sgd-prev (the caller's).

// Recommendation is the default private algorithm for a job and why.
type Recommendation struct {
	Algo   string `json:"algorithm"`
	Loss   string `json:"loss"`
	Reason string `json:"reason"`
	// Mu is the GDP parameter of (ε, δ) and Score t = μn/√d (AUC), the
	// quantity the rule compares with RecommendCentre.
	Mu    float64 `json:"mu"`
	Score float64 `json:"score,omitempty"`
}

// RecommendLargeN is the number of records from which the rule prefers
// DP-SGD when a hinge or logistic loss is asked for, or when d is too large
// for dp-lda; RecommendMetricGD the largest n for dp-gd on the metric task.
const (
	RecommendLargeN = 10000
	// RecommendFedScore is the s = μ√K·n_s/d^{3/2} from which fed-dp-ssp's
	// summed class second moments are released when fed-dp-lda is not
	// registered (federated rule 2): per-class moments carry noise ∝ 1/n±,
	// and dp-ssp has neither a private centre nor a ridge fallback.
	RecommendFedScore = 5.0
	RecommendMetricGD = 2000
)

// RecommendCentre is the t = μn/√d from which dp-lda is the default: its
// centre's error 4R/t is then at most √(3/4 − 1/3)·R, below which dp-lda's
// directions out-signal dp-ssp-mean's class sums for any records that
// spread no more than uniform records on the schema's box (ρ² ≤ R²/3); see
// the rule's comment above.
// (TestRecommendCentreIsDerived checks the constant against 4/√(3/4 − 1/3).)
const RecommendCentre = 6.196773353931867

// SelectMaxWork is the largest n(d + 1)² for which the rule picks
// dp-select (dp-objpert's Newton steps, ≈ 6 passes of O(n(d + 1)²)).
const SelectMaxWork = 2e9

// RecommendPrivate applies the rule above. loss is the loss asked for ("" =
// none: the rule picks). n is the number of training records the algorithm
// will see, d the number of features.
func RecommendPrivate(task pairwise.Task, n, d int, eps, delta float64, loss string) (Recommendation, error) {
	switch {
	case n < 2 || d < 1:
		return Recommendation{}, fmt.Errorf("dpalgo: the default private algorithm needs n ≥ 2 records and d ≥ 1 features, got n = %d, d = %d", n, d)
	case !(eps > 0) || math.IsInf(eps, 0):
		return Recommendation{}, fmt.Errorf("dpalgo: ε = %v must be finite and > 0", eps)
	case !(delta > 0 && delta < 1):
		return Recommendation{}, fmt.Errorf("dpalgo: the default private algorithm needs δ in (0, 1), got %v (δ = 0: name an algorithm with a Laplace variant, e.g. --algo dpegd)", delta)
	}
	mu, err := gaussianMu(eps, delta)
	if err != nil {
		return Recommendation{}, err
	}
	rec := Recommendation{Mu: mu}
	if task == pairwise.TaskMetric {
		rec.Loss = loss
		if rec.Loss == "" {
			rec.Loss = "logistic"
		}
		if n <= RecommendMetricGD {
			rec.Algo = "dp-gd"
			rec.Reason = fmt.Sprintf("metric learning with n = %d ≤ %d: full-batch dp-gd (one-shot mechanisms are AUC-only; its O(n²) gradient is affordable)", n, RecommendMetricGD)
		} else {
			rec.Algo = "dp-pair-sgd"
			rec.Reason = fmt.Sprintf("metric learning with n = %d > %d: dp-pair-sgd (O(batch) per step; full gradients would cost O(n²))", n, RecommendMetricGD)
		}
		return rec, nil
	}
	rec.Score = mu * float64(n) / math.Sqrt(float64(d))
	if loss == "hinge" || loss == "logistic" {
		rec.Loss = loss
		if n >= RecommendLargeN {
			rec.Algo = "dp-pair-sgd"
			rec.Reason = fmt.Sprintf("the %s loss was asked for and n = %d ≥ %d: dp-pair-sgd (the one-shot mechanisms solve the square loss only; O(batch) per step, subsampling amplification keeps the per-step noise low)", loss, n, RecommendLargeN)
		} else {
			rec.Algo = "dp-gd"
			rec.Reason = fmt.Sprintf("the %s loss was asked for and n = %d < %d: full-batch dp-gd (the one-shot mechanisms solve the square loss only)", loss, n, RecommendLargeN)
		}
		return rec, nil
	}
	shape := fmt.Sprintf("μ = %.3g at ε = %g, δ = %.3g; n = %d, d = %d", mu, eps, delta, n, d)
	if d > sspMaxDim {
		if n >= RecommendLargeN && loss != "square" {
			rec.Algo, rec.Loss = "dp-pair-sgd", "hinge"
			rec.Reason = fmt.Sprintf("d = %d > %d: no second-moment release (dp-lda cannot run), and n = %d ≥ %d: dp-pair-sgd with the hinge loss (learns a direction the class-mean difference misses; O(batch) per step)", d, sspMaxDim, n, RecommendLargeN)
			return rec, nil
		}
		rec.Algo, rec.Loss = "dp-ssp-mean", "square"
		rec.Reason = fmt.Sprintf("d = %d > %d: no second-moment release (dp-lda cannot run), so dp-ssp-mean (class-mean difference from one release of the noisy class sums and count)", d, sspMaxDim)
		return rec, nil
	}
	rec.Loss = "square"
	if loss == "" && rec.Score >= RecommendCentre && float64(n)*float64(d+1)*float64(d+1) <= SelectMaxWork {
		sp, err := NewSelectPlan(d, eps, delta)
		if err != nil {
			return Recommendation{}, err
		}
		if best := SelectScore(sp.MuB, float64(n)/2, n, d); best >= sp.Threshold {
			rec.Algo, rec.Loss = "dp-select", "logistic"
			rec.Reason = fmt.Sprintf("t = μn/√d = %.3g ≥ %.3g and the minority count per parameter could reach s₊ = μ_b·min(n₊, n₋)/(d + 1) ≥ T = %g + 2·%.3g = %.4g (%.3g with balanced classes; %s): dp-select — a noisy positive count (2 %% of ε) picks dp-objpert, the logistic model by objective perturbation, when ŝ₊ ≥ T, else dp-lda; the pick runs on the rest of the budget", rec.Score, RecommendCentre, SelectCrossover, sp.SD, sp.Threshold, best, shape)
			return rec, nil
		}
	}
	if rec.Score >= RecommendCentre {
		rec.Algo = "dp-lda"
		rec.Reason = fmt.Sprintf("t = μn/√d = %.3g ≥ %.3g (%s): dp-lda — its private centre is within 4R/t = %.2gR of the data's, close enough that the records' directions from it carry more signal per unit of noise than dp-ssp-mean's class sums; its ridge Fisher solve absorbs the second moment's noise (falling back towards the class-mean difference of the directions when d is large for n)", rec.Score, RecommendCentre, shape, 4/rec.Score)
		return rec, nil
	}
	rec.Algo = "dp-ssp-mean"
	rec.Reason = fmt.Sprintf("t = μn/√d = %.3g < %.3g (%s): dp-lda's private centre would be off by 4R/t = %.2gR, comparable to the records' spread, so dp-ssp-mean (class-mean difference from one release of the noisy class sums and count)", rec.Score, RecommendCentre, shape, 4/rec.Score)
	return rec, nil
}

// FedRecommendation is the default private federated algorithm.
type FedRecommendation struct {
	Algo      string `json:"algorithm"`
	LocalAlgo string `json:"local_algorithm,omitempty"`
	Loss      string `json:"loss,omitempty"`
	Reason    string `json:"reason"`
}

// RecommendFederated picks the default private federated algorithm among
// the registered ones (names), for `sites` sites of nSite records each (the
// smallest site; 0 when unknown, e.g. at job submission) and d features.
// It is RecommendPrivate's principle on what a federated job knows before
// any record is read — K, d, ε, δ, and n_s only when public — applied to
// the summed releases: K sites each adding noise σ to statistics of n_s
// records give noise σ√K on statistics of K·n_s records, one release at
// μ/√K, so
//
//	t = (μ/√K)·K·n_s/√d = μ√K·n_s/√d.
//
// More generally the sum carries ς times one central release's noise
// (sumNoise: √K plain; under secure aggregation ≈ 1 when no site drops,
// fedalgo.SumNoiseFactor; 0 means √K), and t = μ·K·n_s/(ς√d), s likewise.
//
//  0. "fed-dp-pair-sgd" registered, sites of n_s ≥ RecommendLargeN, and
//     the logistic loss asked for (AUC: its AUC form's only loss; a
//     hinge loss goes to fed-oneshot's dp-pair-sgd), any loss but the square one
//     (metric), or d > 1000 (AUC, no square loss: fed-dp-lda's limit) →
//     fed-dp-pair-sgd (rules 0 and 3 of RecommendPrivate at a site's n).
//  1. AUC, no loss or the square loss, d ≤ 1000, "fed-dp-lda" registered →
//     fed-dp-lda (the federated form of the single-site default), or
//     fed-dp-ssp-mean when it is registered, the site sizes are known and
//     t < RecommendCentre (its summed centre would be off by 4R/t; rules
//     1–2 of RecommendPrivate). Site sizes unknown → fed-dp-lda: t is
//     then unknown, and dp-lda is the mechanism whose error the grid of
//     scripts/regret bounds best (issue 25: zip, d = 256, fed-dp-lda
//     ≈ 0.96 where fed-dp-ssp-mean gave 0.889 at every site count).
//  2. otherwise AUC, no loss or the square loss, "fed-dp-ssp" registered
//     → fed-dp-ssp: one release of noisy sufficient statistics per site,
//     summed by the coordinator (any label split, a single class per site
//     included). With "fed-dp-ssp-mean" also registered and the site
//     sizes known, fed-dp-ssp-mean when s = μ√K·n_s/d^{3/2} <
//     RecommendFedScore: fed-dp-ssp has no private centre and no ridge
//     fallback to the mean difference, so its per-class moments must be
//     resolved (s is their noise-to-signal, see RecommendPrivate).
//  3. otherwise, "fed-oneshot" registered → fed-oneshot with the local
//     algorithm RecommendPrivate picks at n = nSite (dp-ssp-mean when nSite
//     is unknown: it works at every n and d): each site releases one
//     private model, averaged by record count.
//  4. otherwise the first registered private algorithm of a fixed
//     preference list (fed-dp-gd-grad, fed-dpegd, fed-dp-local-sgd).
func RecommendFederated(task pairwise.Task, names []string, sites, nSite, d int, eps, delta float64, loss string, sumNoise float64) (FedRecommendation, error) {
	has := func(n string) bool { return slices.Contains(names, n) }
	const fedLDAMaxDim = 1000
	sgd := nSite >= RecommendLargeN && has("fed-dp-pair-sgd")
	switch {
	case task == pairwise.TaskMetric:
		sgd = sgd && loss != "square"
	case loss == "logistic": // fed-dp-pair-sgd's AUC form: the logistic pair loss only
	case loss == "":
		sgd = sgd && d > fedLDAMaxDim
	default:
		sgd = false
	}
	if sgd {
		l := loss
		if l == "" {
			l = "logistic"
		}
		why := fmt.Sprintf("the %s loss was asked for", l)
		switch {
		case loss == "" && task == pairwise.TaskMetric:
			why = "metric learning"
		case loss == "":
			why = fmt.Sprintf("d = %d > %d: no summed second moment (fed-dp-lda cannot run)", d, fedLDAMaxDim)
		}
		return FedRecommendation{Algo: "fed-dp-pair-sgd", Loss: l, Reason: fmt.Sprintf("%s and sites of n_s = %d ≥ %d records: fed-dp-pair-sgd (noisy pair gradients summed over the sites)", why, nSite, RecommendLargeN)}, nil
	}
	if task == pairwise.TaskAUC && (loss == "" || loss == "square") {
		known := nSite >= 2 && sites >= 1
		var mu float64
		if known {
			var err error
			if mu, err = gaussianMu(eps, delta); err != nil {
				return FedRecommendation{}, err
			}
		}
		k := float64(sites)
		// ς, the summed noise over one central release's: √K plain.
		vs := sumNoise
		if !(vs > 0) || math.IsInf(vs, 0) {
			vs = math.Sqrt(k)
		}
		eff := k / vs // μ·eff·n_s: t's and s's numerator (√K plain, ≈ K secure)
		mean := "each site releases its noisy class sums and count once, the coordinator sums them"
		if has("fed-dp-lda") && d <= fedLDAMaxDim {
			why := "each site releases the sum of its records (the coordinator broadcasts the centre), then the class sums, label-free second moment and count of its records' directions from it; the coordinator sums them (noise ς·σ on all n records: σ√K plain, ≈ σ under secure aggregation; any label split, single-class sites included)"
			if known {
				t := mu * eff * float64(nSite) / math.Sqrt(float64(d))
				if t < RecommendCentre && has("fed-dp-ssp-mean") {
					return FedRecommendation{Algo: "fed-dp-ssp-mean", Loss: "square", Reason: fmt.Sprintf("fed-dp-ssp-mean: t = μK·n_s/(ς√d) = %.3g < %.3g (K = %d sites of n_s = %d, d = %d, ς = %.3g): fed-dp-lda's summed centre would be off by 4R/t = %.2gR, comparable to the records' spread; %s", t, RecommendCentre, sites, nSite, d, vs, 4/t, mean)}, nil
				}
				why = fmt.Sprintf("t = μK·n_s/(ς√d) = %.3g ≥ %.3g (K = %d sites of n_s = %d, d = %d, ς = %.3g): the summed centre is within 4R/t = %.2gR; ", t, RecommendCentre, sites, nSite, d, vs, 4/t) + why
			} else {
				why = "site sizes unknown (t = μK·n_s/(ς√d) cannot be computed): fed-dp-lda, the default whose error falls back to the class-mean difference of the records' directions; " + why
			}
			return FedRecommendation{Algo: "fed-dp-lda", Loss: "square", Reason: "fed-dp-lda: " + why}, nil
		}
		if has("fed-dp-ssp") {
			why := "each site releases its noisy class sums, second moments and count once; the coordinator sums them (noise ς·σ on all n records: σ√K plain, ≈ σ under secure aggregation; any label split, single-class sites included)"
			if known && has("fed-dp-ssp-mean") {
				sc := mu * eff * float64(nSite) / math.Pow(float64(d), 1.5)
				if sc < RecommendFedScore || d > sspMaxDim {
					return FedRecommendation{Algo: "fed-dp-ssp-mean", Loss: "square", Reason: fmt.Sprintf("fed-dp-ssp-mean: s = μK·n_s/(ς·d^1.5) = %.3g < %g (K = %d sites of n_s = %d, d = %d, ς = %.3g): summed per-class second moments would be below their noise; %s", sc, RecommendFedScore, sites, nSite, d, vs, mean)}, nil
				}
				why = fmt.Sprintf("s = μK·n_s/(ς·d^1.5) = %.3g ≥ %g (K = %d sites of n_s = %d, d = %d, ς = %.3g); ", sc, RecommendFedScore, sites, nSite, d, vs) + why
			}
			return FedRecommendation{Algo: "fed-dp-ssp", Loss: "square", Reason: "fed-dp-ssp: " + why}, nil
		}
	}
	if has("fed-oneshot") {
		local, lossOut := "dp-ssp-mean", "square"
		why := "site sizes unknown: dp-ssp-mean works at every n and d"
		if task == pairwise.TaskMetric {
			local, lossOut, why = "dp-gd", loss, "metric learning: dp-gd"
			if lossOut == "" {
				lossOut = "logistic"
			}
		}
		if nSite >= 2 {
			r, err := RecommendPrivate(task, nSite, d, eps, delta, loss)
			if err != nil {
				return FedRecommendation{}, err
			}
			local, lossOut, why = r.Algo, r.Loss, "the single-site rule at the smallest site: "+r.Reason
		}
		return FedRecommendation{Algo: "fed-oneshot", LocalAlgo: local, Loss: lossOut,
			Reason: fmt.Sprintf("fed-oneshot --local-algo %s (no federated one-shot statistics algorithm registered for this task and loss): each site releases one private model, averaged by record count; %s", local, why)}, nil
	}
	for _, n := range []string{"fed-dp-gd-grad", "fed-dpegd", "fed-dp-local-sgd"} {
		if has(n) && (task == pairwise.TaskAUC || n != "fed-dp-gd-grad") {
			return FedRecommendation{Algo: n, Loss: loss, Reason: n + ": the first registered private federated algorithm of the fallback list"}, nil
		}
	}
	return FedRecommendation{}, fmt.Errorf("dpalgo: no private federated algorithm registered for task %s (registered: %v)", task, names)
}
