package main

import (
	"strings"
	"testing"
)

// TestCostEstimate (issue 16 item 5): quadratic algorithms warn with the
// pair-gradient count of their rule once it is large; linear ones and
// small runs do not.
func TestCostEstimate(t *testing.T) {
	// pgd on n = 40000 balanced records: n₊·n₋ = 4·10⁸ per step, × (1 + 48)
	// with selection = 1.96·10¹⁰ ≥ 10⁹.
	w := costEstimate("pgd", "hinge", 40000, 20000, 16, 0, 0, true)
	for _, want := range []string{"O(n²)", "~4e+08 pair gradients per step", "n = 40000", "48×", "--eta"} {
		if !strings.Contains(w, want) {
			t.Errorf("pgd warning %q lacks %q", w, want)
		}
	}
	// 10 passes of an all-previous algorithm at n = 20000: 10·n²/2 = 2·10⁹.
	if w := costEstimate("sgd-all-prev", "hinge", 20000, 10000, 16, 0, 10, false); !strings.Contains(w, "~2e+09 pair gradients per 10 passes") {
		t.Errorf("sgd-all-prev warning %q", w)
	}
	for _, c := range []struct {
		algo, loss string
		n          int
	}{
		{"sgd-prev", "hinge", 1_000_000},  // linear: never
		{"dp-gd", "hinge", 1_000_000},     // O(n·d + n log n) form
		{"pgd", "hinge", 4000},            // 4·10⁶ × 49 < 10⁹
		{"sgd-all-prev", "hinge", 40_000}, // 8·10⁸ per pass < 10⁹
	} {
		if w := costEstimate(c.algo, c.loss, c.n, c.n/2, 16, 0, 0, c.algo == "pgd"); w != "" {
			t.Errorf("%s n=%d: unexpected warning %q", c.algo, c.n, w)
		}
	}
}
