package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/pairwise"
)

// TestCostEstimate (issue 16 item 5): quadratic algorithms warn with the
// pair-gradient count of their rule once it is large; linear ones and
// small runs do not.
func TestCostEstimate(t *testing.T) {
	// logistic pgd on n = 60000 balanced records: n₊·n₋ = 9·10⁸ per step,
	// × (1 + 48) with selection = 4.4·10¹⁰ pairs ≈ 22 s at 2·10⁹/s.
	w := costEstimate("pgd", pairwise.TaskAUC, "logistic", 60000, 30000, 16, 0, 0, true)
	for _, want := range []string{"O(n²)", "~9e+08 pair gradients per step", "n = 60000", "48×", "--eta", "2e+09 pair gradients/s"} {
		if !strings.Contains(w, want) {
			t.Errorf("pgd warning %q lacks %q", w, want)
		}
	}
	// metric learning: every pair at 10⁸/s; 4000 records, n/2·n/2 = 4·10⁶
	// per step × 300 steps = 1.2·10⁹ ≥ 10 s.
	if w := costEstimate("dpgdc2", pairwise.TaskMetric, "logistic", 4000, 2000, 8, 300, 0, false); !strings.Contains(w, "~1.2e+09 pair gradients per 300 steps") {
		t.Errorf("dpgdc2 metric warning %q", w)
	}
	// 10 passes of an all-previous algorithm at n = 20000: 10·n²/2 = 2·10⁹.
	if w := costEstimate("sgd-all-prev", pairwise.TaskAUC, "hinge", 20000, 10000, 16, 0, 10, false); !strings.Contains(w, "~2e+09 pair gradients per 10 passes") {
		t.Errorf("sgd-all-prev warning %q", w)
	}
	for _, c := range []struct {
		algo, loss string
		n          int
	}{
		{"sgd-prev", "hinge", 1_000_000},  // linear: never
		{"dp-gd", "hinge", 1_000_000},     // O(n·d + n log n) form
		{"pgd", "square", 1_000_000},      // the same for every full-batch algorithm
		{"dpegd", "hinge", 1_000_000},     //
		{"pgd", "logistic", 40000},        // 4·10⁸ × 49 / 2·10⁹ ≈ 9.8 s < 10 s
		{"sgd-all-prev", "hinge", 40_000}, // 8·10⁸ per pass < 10⁹
	} {
		if w := costEstimate(c.algo, pairwise.TaskAUC, c.loss, c.n, c.n/2, 16, 0, 0, c.algo == "pgd"); w != "" {
			t.Errorf("%s %s n=%d: unexpected warning %q", c.algo, c.loss, c.n, w)
		}
	}
}

// TestPairCostProperties pins which registered algorithms declare a
// quadratic pair count (pairwise.Algorithm.PairCost; the cost warning
// reads it from the registry): the "all previous" pairings and the
// full-batch pairwise gradients, as their updates are written.
func TestPairCostProperties(t *testing.T) {
	got := map[pairwise.PairCost][]string{}
	for _, a := range pairwise.Algorithms() {
		if a.PairCost != pairwise.PairsPerStep {
			got[a.PairCost] = append(got[a.PairCost], a.Name)
		}
	}
	want := map[pairwise.PairCost][]string{
		pairwise.PairsAllPrevious: {"dp-sgd-output", "giga", "off-pair-c", "off-pair-strc", "on-pair-c", "on-pair-strc", "sgd-all-prev"},
		pairwise.PairsFullBatch:   {"dp-gd", "dp-gd-grad", "dpegd", "dpgdc", "dpgdc2", "dpgdsc", "pgd"},
	}
	for c, names := range want {
		g := slices.Sorted(slices.Values(got[c]))
		if !slices.Equal(g, names) {
			t.Errorf("PairCost %d: %v, want %v", c, g, names)
		}
	}
	if len(got) != len(want) {
		t.Errorf("PairCost classes %v, want only %v", got, want)
	}
}
