package pairwise

import (
	"fmt"
	"math"
	"slices"
)

// The default private algorithm: a written rule from the public shape of
// the job — task, number of training records n, number of features d, the
// request (ε, δ) and the loss asked for — fixed before any record is read.
// Under replace-one neighbours n and d are public; nothing else of the data
// (class counts, feature values) enters.
//
// # The rule (task auc)
//
// Let μ be the Gaussian-DP parameter that one Gaussian release calibrated to
// (ε, δ) has (μ = Δ/σ; every mechanism below spends its whole budget as
// one μ-GDP release or a composition equivalent to one), and
//
//	s = μ·n / d^{3/2}.
//
//  0. A hinge or logistic loss asked for explicitly: rule 1 if it applies,
//     else dp-gd with that loss (the one-shot mechanisms below solve the
//     square loss only). No loss or the square loss: rules 1–3.
//  1. n ≥ 10 000 (and no square loss asked for) → dp-pair-sgd with the
//     hinge loss (or the logistic loss if asked). With many records the
//     noise of every mechanism is small and the loss decides: the one-shot
//     mechanisms solve the square AUC loss, whose optimum ranks worse than
//     the hinge's on large sets (measured by the mechanisms' author at
//     ε = 1: a9a dp-pair-sgd 0.895 vs dp-ssp 0.882, ijcnn1 dp-pair-sgd
//     0.911 vs dp-gd 0.898), and subsampling amplification makes DP-SGD's
//     per-step noise small once batches of ≈ 4√n records average it.
//  2. otherwise, s ≥ 1 and d ≤ 2000 → dp-lda (private centre and spread,
//     then class sums, the label-free second moment and count of the
//     centred, clipped records in one release; ridge Fisher direction).
//  3. otherwise → dp-ssp-mean (the class-mean difference from noisy class
//     sums: d + 1 released numbers, the least noise per useful number).
//
// Why s: the second moment's noise is a symmetric Gaussian matrix with
// entries ≈ R²/(μn), of spectral norm ≈ 2R²√d/(μn), while a covariance of
// records of norm ≤ R spread over d directions has eigenvalues ≈ R²/d: the
// noise-to-signal ratio of the covariance is ≈ d^{3/2}/(μn) = 1/s. dp-lda's
// ridge λ is that noise level, so for small s it shrinks to the (centred)
// class-mean difference by itself; what it cannot undo below s ≈ 1 is the
// centre release, whose error √d·2R/(μ_A n) then approaches the records'
// spread, so the one release of dp-ssp-mean wastes least. Measured
// (README, "Private models that learn"; 20 runs): diabetes ε = 1
// (s ≈ 9) dp-lda 0.80 vs dp-ssp 0.75, dp-ssp-mean 0.75; diabetes ε = 0.1
// (s ≈ 1.1) 0.60 vs 0.55, 0.56; breast-cancer-wisconsin ε = 1 0.993 vs
// 0.992, 0.993; hepatitis (n = 124, d = 19, s ≈ 0.6) dp-ssp-mean 0.81 vs
// dp-lda 0.72. dp-ssp (per-class second moments, the exact square-AUC
// optimum) is never the default: its class covariances carry noise
// ∝ √(1/n₊² + 1/n₋²) instead of 1/n.
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
	// Mu is the GDP parameter of (ε, δ) and Score s = μn/d^{3/2} (AUC).
	Mu    float64 `json:"mu"`
	Score float64 `json:"score,omitempty"`
}

// RecommendLargeN is the number of records from which the rule prefers
// DP-SGD (rule 1); RecommendScore the s from which dp-lda's centre and
// second moment are released (rule 2); RecommendMetricGD the largest n for dp-gd on the
// metric task.
const (
	RecommendLargeN = 10000
	RecommendScore  = 1.0
	// RecommendFedScore is the s from which fed-dp-ssp's summed class
	// second moments are released (federated rule 1): per-class moments
	// carry noise ∝ 1/n± and need the larger s the single-site rule
	// measured for dp-ssp (diabetes n = 614 vs 256, german).
	RecommendFedScore = 5.0
	RecommendMetricGD = 2000
)

// RecommendPrivate applies the rule above. loss is the loss asked for ("" =
// none: the rule picks). n is the number of training records the algorithm
// will see, d the number of features.
func RecommendPrivate(task Task, n, d int, eps, delta float64, loss string) (Recommendation, error) {
	switch {
	case n < 2 || d < 1:
		return Recommendation{}, fmt.Errorf("pairwise: the default private algorithm needs n ≥ 2 records and d ≥ 1 features, got n = %d, d = %d", n, d)
	case !(eps > 0) || math.IsInf(eps, 0):
		return Recommendation{}, fmt.Errorf("pairwise: ε = %v must be finite and > 0", eps)
	case !(delta > 0 && delta < 1):
		return Recommendation{}, fmt.Errorf("pairwise: the default private algorithm needs δ in (0, 1), got %v (δ = 0: name an algorithm with a Laplace variant, e.g. --algo dpegd)", delta)
	}
	mu, err := gdMu(eps, delta)
	if err != nil {
		return Recommendation{}, err
	}
	rec := Recommendation{Mu: mu}
	if task == TaskMetric {
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
	rec.Score = mu * float64(n) / math.Pow(float64(d), 1.5)
	if n >= RecommendLargeN && loss != "square" {
		rec.Algo, rec.Loss = "dp-pair-sgd", "hinge"
		if loss == "logistic" {
			rec.Loss = "logistic"
		}
		rec.Reason = fmt.Sprintf("n = %d ≥ %d: dp-pair-sgd with the %s loss (with many records the noise is small and the loss decides; subsampling amplification keeps the per-step noise low)", n, RecommendLargeN, rec.Loss)
		return rec, nil
	}
	if loss == "hinge" || loss == "logistic" {
		rec.Algo, rec.Loss = "dp-gd", loss
		rec.Reason = fmt.Sprintf("the %s loss was asked for and n = %d < %d: full-batch dp-gd (the one-shot mechanisms solve the square loss only)", loss, n, RecommendLargeN)
		return rec, nil
	}
	rec.Loss = "square"
	if rec.Score >= RecommendScore && d <= sspMaxDim {
		rec.Algo = "dp-lda"
		rec.Reason = fmt.Sprintf("n = %d < %d and s = μn/d^1.5 = %.3g ≥ %g (μ = %.3g at ε = %g, δ = %.3g; d = %d): dp-lda (private centre and spread, then class sums, pooled second moment and count of the centred records; ridge Fisher direction)", n, RecommendLargeN, rec.Score, RecommendScore, mu, eps, delta, d)
		return rec, nil
	}
	rec.Algo = "dp-ssp-mean"
	why := fmt.Sprintf("s = μn/d^1.5 = %.3g < %g (μ = %.3g at ε = %g, δ = %.3g; n = %d, d = %d): a released centre and second moment would be below their noise", rec.Score, RecommendScore, mu, eps, delta, n, d)
	if d > sspMaxDim {
		why = fmt.Sprintf("d = %d > %d: no second-moment release", d, sspMaxDim)
	}
	rec.Reason = why + ", so dp-ssp-mean (class-mean difference from one release of the noisy class sums and count)"
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
// smallest site; 0 when unknown, e.g. at job submission) and d features:
//
//  0. sites of n_s ≥ RecommendLargeN, no square loss asked, and
//     "fed-dp-pair-sgd" registered → fed-dp-pair-sgd (rule 1 of
//     RecommendPrivate at a site's n).
//  1. AUC, no loss or the square loss asked for, d ≤ 1000, "fed-dp-lda"
//     registered → fed-dp-lda (the federated form of the single-site
//     default dp-lda), or fed-dp-ssp-mean when the site sizes are known
//     and s = (μ/√K)·K·n_s/d^{3/2} < RecommendScore (as rules 2–3 of
//     RecommendPrivate, on the summed releases). Measured on diabetes at
//     ε = 1, 4 iid sites: fed-dp-lda 0.779 vs fed-dp-ssp 0.693.
//  2. otherwise AUC, no loss or the square loss, "fed-dp-ssp" registered
//     → fed-dp-ssp: one release of noisy
//     sufficient statistics per site, summed by the coordinator. The sum
//     of K sites' statistics has noise σ√K on statistics of n = Σ n_s
//     records — close to one pooled release — and works for any label
//     split, a single class per site included (no pairs need to be formed
//     within a site). With "fed-dp-ssp-mean" also registered and the site
//     sizes known, rules 2–3 of RecommendPrivate decide between the two
//     on the summed release: K sites' noise σ√K on K·n_s records is one
//     release at μ/√K, so s = (μ/√K)·K·n_s/d^{3/2}.
//  3. otherwise, "fed-oneshot" registered → fed-oneshot with the local
//     algorithm RecommendPrivate picks at n = nSite (dp-ssp-mean when nSite
//     is unknown: it works at every n and d): each site releases one
//     private model, averaged by record count.
//  4. otherwise the first registered private algorithm of a fixed
//     preference list (fed-dp-gd-grad, fed-dpegd, fed-dp-local-sgd).
func RecommendFederated(task Task, names []string, sites, nSite, d int, eps, delta float64, loss string) (FedRecommendation, error) {
	has := func(n string) bool { return slices.Contains(names, n) }
	// Rule 1 of RecommendPrivate at a site's n: with many records the loss
	// decides (ijcnn1, 4 sites of 12 500, ε = 1: fed-dp-pair-sgd 0.906 vs
	// fed-dp-lda 0.891), unless the square loss is asked for.
	if has("fed-dp-pair-sgd") && nSite >= RecommendLargeN && loss != "square" {
		l := loss
		if l == "" {
			l = "hinge"
			if task == TaskMetric {
				l = "logistic"
			}
		}
		return FedRecommendation{Algo: "fed-dp-pair-sgd", Loss: l, Reason: fmt.Sprintf("sites of n ≥ %d records: fed-dp-pair-sgd (with many records the loss decides; subsampled DP-SGD at each site)", RecommendLargeN)}, nil
	}
	if task == TaskAUC && (loss == "" || loss == "square") {
		// The summed one-shot statistics: fed-dp-lda, else fed-dp-ssp,
		// each against fed-dp-ssp-mean by the s-rule on the summed release
		// (rules 2–3 of RecommendPrivate: K sites' noise σ√K on K·n_s
		// records is one release at μ/√K).
		type oneShot struct {
			algo, why, below string
			threshold        float64
			maxDim           int
		}
		for _, o := range []oneShot{
			{"fed-dp-lda", "each site releases the sum of its records (the coordinator broadcasts the centre), then the class sums, label-free second moment and count of its records' directions from it; the coordinator sums them (noise σ√K on all n records, any label split, single-class sites included)",
				"a summed centre and second moment would be below their noise", RecommendScore, 1000},
			{"fed-dp-ssp", "each site releases its noisy class sums, second moments and count once; the coordinator sums them (noise σ√K on all n records, any label split, single-class sites included)",
				"summed second moments would be below their noise", RecommendFedScore, math.MaxInt},
		} {
			if !has(o.algo) || d > o.maxDim {
				continue
			}
			why := o.why
			if nSite >= 2 && sites >= 1 && has("fed-dp-ssp-mean") {
				mu, err := gdMu(eps, delta)
				if err != nil {
					return FedRecommendation{}, err
				}
				k := float64(sites)
				sc := mu / math.Sqrt(k) * k * float64(nSite) / math.Pow(float64(d), 1.5)
				if sc < o.threshold || d > min(o.maxDim, sspMaxDim) {
					return FedRecommendation{Algo: "fed-dp-ssp-mean", Loss: "square", Reason: fmt.Sprintf("fed-dp-ssp-mean: s = (μ/√K)·K·n_s/d^1.5 = %.3g < %g (K = %d sites of n_s = %d, d = %d): %s; each site releases its noisy class sums and count once, the coordinator sums them", sc, o.threshold, sites, nSite, d, o.below)}, nil
				}
				why = fmt.Sprintf("s = (μ/√K)·K·n_s/d^1.5 = %.3g ≥ %g (K = %d sites of n_s = %d, d = %d); ", sc, o.threshold, sites, nSite, d) + why
			}
			return FedRecommendation{Algo: o.algo, Loss: "square", Reason: o.algo + ": " + why}, nil
		}
	}
	if has("fed-oneshot") {
		local, lossOut := "dp-ssp-mean", "square"
		why := "site sizes unknown: dp-ssp-mean works at every n and d"
		if task == TaskMetric {
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
		if has(n) && (task == TaskAUC || n != "fed-dp-gd-grad") {
			return FedRecommendation{Algo: n, Loss: loss, Reason: n + ": the first registered private federated algorithm of the fallback list"}, nil
		}
	}
	return FedRecommendation{}, fmt.Errorf("pairwise: no private federated algorithm registered for task %s (registered: %v)", task, names)
}
