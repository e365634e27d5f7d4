package dpalgo

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/pairwise"
)

// The rule's branches at shapes on both sides of each threshold.
func TestRecommendPrivateRule(t *testing.T) {
	mu, err := gaussianMu(1, 1e-4)
	if err != nil {
		t.Fatal(err)
	}
	// n at which t = μn/√d crosses RecommendCentre for d = 8.
	nCross := RecommendCentre * math.Sqrt(8) / mu
	cases := []struct {
		name   string
		task   pairwise.Task
		n, d   int
		loss   string
		want   string
		wantLs string
	}{
		{"small n, low t", pairwise.TaskAUC, int(nCross) - 1, 8, "", "dp-ssp-mean", "square"},
		{"small n, high t", pairwise.TaskAUC, int(nCross) + 2, 8, "", "dp-lda", "square"},
		// issue 25's digits: s = μn/d^1.5 ≈ 0.1 (the previous rule's
		// dp-ssp-mean, 0.889) but t ≈ 25: dp-lda (0.918).
		{"high d, low s, high t", pairwise.TaskAUC, 1284, 256, "", "dp-lda", "square"},
		{"many features", pairwise.TaskAUC, 5000, 3000, "", "dp-ssp-mean", "square"},
		{"many features, large n", pairwise.TaskAUC, 20000, 3000, "", "dp-pair-sgd", "hinge"},
		{"many features, large n, square asked", pairwise.TaskAUC, 20000, 3000, "square", "dp-ssp-mean", "square"},
		// issue 25's letter and web pages: dp-lda, not the previous rule's
		// dp-pair-sgd, from n = 10 000 when no loss is asked for.
		{"large n", pairwise.TaskAUC, 2000, 22, "", "dp-lda", "square"},
		// Large enough that the minority count per parameter could reach
		// dp-select's threshold T (μ_b(n/2)/(d + 1) ≈ 68 here, T ≈ 19):
		// dp-select, whose noisy count picks dp-objpert or dp-lda.
		{"large n, classes could be enough for the logistic model", pairwise.TaskAUC, RecommendLargeN, 22, "", "dp-select", "logistic"},
		// At d = 2 one count's noise is a large part of s₊ (T ≈ 48) but
		// 10 000 records reach it.
		{"large n, d = 2", pairwise.TaskAUC, RecommendLargeN, 2, "", "dp-select", "logistic"},
		// d = 123 at 8 000 records: μ_b(n/2)/(d + 1) ≈ 9 < T ≈ 16.
		{"large n, classes too few for d", pairwise.TaskAUC, 8000, 123, "", "dp-lda", "square"},
		// ... unless dp-objpert's Newton steps would cost too much.
		{"large n, too costly for dp-objpert", pairwise.TaskAUC, 100000, 200, "", "dp-lda", "square"},
		{"large n, hinge asked", pairwise.TaskAUC, 50000, 22, "hinge", "dp-pair-sgd", "hinge"},
		{"large n, logistic asked", pairwise.TaskAUC, 50000, 22, "logistic", "dp-pair-sgd", "logistic"},
		{"large n, square asked", pairwise.TaskAUC, 50000, 22, "square", "dp-lda", "square"},
		{"hinge asked, small n", pairwise.TaskAUC, 500, 8, "hinge", "dp-gd", "hinge"},
		{"metric small", pairwise.TaskMetric, RecommendMetricGD, 8, "", "dp-gd", "logistic"},
		{"metric large", pairwise.TaskMetric, RecommendMetricGD + 1, 8, "", "dp-pair-sgd", "logistic"},
	}
	for _, c := range cases {
		r, err := RecommendPrivate(c.task, c.n, c.d, 1, 1e-4, c.loss)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.Algo != c.want || r.Loss != c.wantLs {
			t.Errorf("%s (n = %d, d = %d): got %s/%s, want %s/%s (%s)", c.name, c.n, c.d, r.Algo, r.Loss, c.want, c.wantLs, r.Reason)
		}
		if r.Reason == "" {
			t.Errorf("%s: no reason", c.name)
		}
		if _, err := pairwise.Lookup(r.Algo); err != nil {
			t.Errorf("%s: recommends an unregistered algorithm: %v", c.name, err)
		}
	}
}

// The threshold is the derivation's number, not a fitted one.
func TestRecommendCentreIsDerived(t *testing.T) {
	if want := 4 / math.Sqrt(3.0/4-1.0/3); math.Abs(RecommendCentre-want) > 1e-12 {
		t.Fatalf("RecommendCentre = %v, want 4/√(3/4 − 1/3) = %v", RecommendCentre, want)
	}
	// The quarter of μ² spent on the centre sets the 4 (σ_A = 2/(μ/2)).
	if ldaCentreShare != 0.25 {
		t.Fatalf("ldaCentreShare = %v: RecommendCentre's derivation assumes 1/4", ldaCentreShare)
	}
}

// The scores grow with ε (μ grows), so a larger budget can only move the
// choice from dp-ssp-mean to dp-lda to dp-select, never back.
func TestRecommendPrivateMonotoneInEpsilon(t *testing.T) {
	rank := map[string]int{"dp-ssp-mean": 0, "dp-lda": 1, "dp-select": 2}
	for _, n := range []int{400, 4000} {
		prev, seen := -1, map[string]bool{}
		for _, eps := range []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10} {
			r, err := RecommendPrivate(pairwise.TaskAUC, n, 8, eps, 1e-4, "")
			if err != nil {
				t.Fatal(err)
			}
			k, ok := rank[r.Algo]
			if !ok || k < prev {
				t.Fatalf("n = %d, ε = %g: %s after rank %d", n, eps, r.Algo, prev)
			}
			prev = k
			seen[r.Algo] = true
		}
		if len(seen) < 2 {
			t.Errorf("n = %d: the rule never changed its pick over ε (%v): the test does not exercise the thresholds", n, seen)
		}
	}
}

func TestRecommendPrivateBadInput(t *testing.T) {
	for _, c := range []struct {
		n, d       int
		eps, delta float64
		want       string
	}{
		{1, 8, 1, 1e-3, "n ≥ 2"},
		{100, 0, 1, 1e-3, "d ≥ 1"},
		{100, 8, 0, 1e-3, "ε = 0"},
		{100, 8, math.Inf(1), 1e-3, "ε = +Inf"},
		{100, 8, 1, 0, "Laplace variant"},
	} {
		_, err := RecommendPrivate(pairwise.TaskAUC, c.n, c.d, c.eps, c.delta, "")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("n=%d d=%d ε=%v δ=%v: error %v, want one mentioning %q", c.n, c.d, c.eps, c.delta, err, c.want)
		}
	}
}

func TestRecommendFederated(t *testing.T) {
	base := []string{"fed-avg", "fed-dp-gd-grad", "fed-dp-local-sgd", "fed-dpegd", "fed-oneshot"}
	with := append(append([]string{}, base...), "fed-dp-ssp", "fed-dp-pair-sgd")
	plus := func(names ...string) []string { return slices.Concat(with, names) } // a fresh slice each time
	cases := []struct {
		name        string
		names       []string
		task        pairwise.Task
		nSite       int
		loss        string
		want, local string
	}{
		{"ssp registered", with, pairwise.TaskAUC, 150, "", "fed-dp-ssp", ""},
		{"ssp and ssp-mean registered, small sites", plus("fed-dp-ssp-mean"), pairwise.TaskAUC, 40, "", "fed-dp-ssp-mean", ""},
		{"ssp and ssp-mean registered, large sites", plus("fed-dp-ssp-mean"), pairwise.TaskAUC, 5000, "", "fed-dp-ssp", ""},
		{"ssp registered, logistic asked, large sites", with, pairwise.TaskAUC, 20000, "logistic", "fed-dp-pair-sgd", ""},
		{"ssp registered, hinge asked, large sites", with, pairwise.TaskAUC, 20000, "hinge", "fed-oneshot", "dp-pair-sgd"},
		{"not registered, small sites", base, pairwise.TaskAUC, 150, "", "fed-oneshot", "dp-lda"},
		{"not registered, unknown sites", base, pairwise.TaskAUC, 0, "", "fed-oneshot", "dp-ssp-mean"},
		{"not registered, large sites", base, pairwise.TaskAUC, 20000, "", "fed-oneshot", "dp-select"},
		{"not registered, large sites, hinge asked", base, pairwise.TaskAUC, 20000, "hinge", "fed-oneshot", "dp-pair-sgd"},
		{"metric", with, pairwise.TaskMetric, 150, "", "fed-oneshot", "dp-gd"},
		{"lda registered", plus("fed-dp-lda", "fed-dp-ssp-mean"), pairwise.TaskAUC, 150, "", "fed-dp-lda", ""},
		{"lda registered, unknown sites", plus("fed-dp-lda"), pairwise.TaskAUC, 0, "", "fed-dp-lda", ""},
		{"lda registered, tiny sites", plus("fed-dp-lda", "fed-dp-ssp-mean"), pairwise.TaskAUC, 5, "", "fed-dp-ssp-mean", ""},
		{"lda registered, logistic asked, large sites", plus("fed-dp-lda"), pairwise.TaskAUC, 20000, "logistic", "fed-dp-pair-sgd", ""},
		{"lda registered, no loss, large sites", plus("fed-dp-lda"), pairwise.TaskAUC, 20000, "", "fed-dp-lda", ""},
		{"metric, large sites", plus("fed-dp-lda"), pairwise.TaskMetric, 20000, "", "fed-dp-pair-sgd", ""},
		{"lda registered, square asked, large sites", plus("fed-dp-lda"), pairwise.TaskAUC, 20000, "square", "fed-dp-lda", ""},
		{"no oneshot", []string{"fed-avg", "fed-dpegd"}, pairwise.TaskAUC, 150, "", "fed-dpegd", ""},
	}
	for _, c := range cases {
		r, err := RecommendFederated(c.task, c.names, 4, c.nSite, 8, 1, 1e-3, c.loss, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.Algo != c.want || r.LocalAlgo != c.local {
			t.Errorf("%s: got %s/%s, want %s/%s (%s)", c.name, r.Algo, r.LocalAlgo, c.want, c.local, r.Reason)
		}
	}
	// Issue 25's zip digits (d = 256, 5833 records over K sites): the
	// previous rule's s = μ√K·n_s/d^1.5 < 1 gave fed-dp-ssp-mean (0.889);
	// t = μ√K·n_s/√d ≥ RecommendCentre up to hundreds of sites.
	lda := plus("fed-dp-lda", "fed-dp-ssp-mean")
	for _, k := range []int{2, 4, 16, 64} {
		r, err := RecommendFederated(pairwise.TaskAUC, lda, k, 5833/k, 256, 1, 1e-4, "", 0)
		if err != nil || r.Algo != "fed-dp-lda" {
			t.Errorf("zip shape, K = %d: got %+v, %v; want fed-dp-lda", k, r, err)
		}
	}
	// Too many features for fed-dp-lda: fed-dp-pair-sgd at large sites.
	if r, _ := RecommendFederated(pairwise.TaskAUC, lda, 4, 20000, 1500, 1, 1e-4, "", 0); r.Algo != "fed-dp-pair-sgd" {
		t.Errorf("d = 1500, sites of 20 000: got %+v, want fed-dp-pair-sgd", r)
	}
	if _, err := RecommendFederated(pairwise.TaskAUC, []string{"fed-avg"}, 4, 100, 8, 1, 1e-3, "", 0); err == nil {
		t.Error("no private algorithm registered: want an error")
	}
	// The summed noise ς: 0 is √K (plain); under secure aggregation with
	// removable copies ς ≈ 1, so t = μK·n_s/(ς√d) is √K larger. 16 sites of
	// 12 records, d = 100: plain t = μ·4·12/10 is below the centre's 6.2
	// (fed-dp-ssp-mean), secure t = μ·16·12/10 above it (fed-dp-lda).
	plain, err := RecommendFederated(pairwise.TaskAUC, lda, 16, 12, 100, 1, 1e-3, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	explicit, _ := RecommendFederated(pairwise.TaskAUC, lda, 16, 12, 100, 1, 1e-3, "", 4)
	secure, _ := RecommendFederated(pairwise.TaskAUC, lda, 16, 12, 100, 1, 1e-3, "", 1)
	if plain.Algo != "fed-dp-ssp-mean" || explicit != plain || secure.Algo != "fed-dp-lda" {
		t.Errorf("ς: plain %s, ς = √K %s, ς = 1 %s; want fed-dp-ssp-mean, the same, fed-dp-lda", plain.Algo, explicit.Algo, secure.Algo)
	}
}
