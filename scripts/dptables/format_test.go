package main

import (
	"errors"
	"strings"
	"testing"
)

// TestMarkdownLayout checks the table's shape: one column block per
// calibration, then the printed block and the exact − paper column; every
// row has as many cells as the header; a refused paper σ prints its
// certified ε; the row's gain is the mean paired difference.
func TestMarkdownLayout(t *testing.T) {
	tab := &table{cols: []col{{"ε = 0.5", 0.5, 0}, {"2", 2, 0}}, printedName: "[X21]",
		rows: []trow{{dataset: "messidor_features.arff", setting: "s", algo: "dpegd", printed: []string{"66.19"}}}}
	refused := cellFromError(errors.New("pairwise: dpegd: --calibration paper refused: the printed σ certifies only ε = 2.3456 > 2 at δ = 0.004 (exact Gaussian-DP accountant, proven sensitivity x)"))
	res := &result{t: tab, cals: []string{"paper", "exact"}, cells: [][][]cell{{
		{{vals: []float64{50, 60}}, refused},
		{{vals: []float64{60, 66}}, {vals: []float64{70, 71}}},
	}}}
	lines := strings.Split(strings.TrimSuffix(res.markdown(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want header, rule and 1 row:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	want := "| dataset | setting | algorithm | paper σ: ε = 0.5 | paper σ: 2 | exact: ε = 0.5 | exact: 2 | [X21]: ε = 0.5 | [X21]: 2 | exact − paper |"
	if lines[0] != want {
		t.Errorf("header\n got %s\nwant %s", lines[0], want)
	}
	for i, l := range lines {
		if n := strings.Count(l, "|"); n != 11 {
			t.Errorf("line %d has %d bars, want 11: %s", i, n, l)
		}
	}
	row := strings.Split(strings.Trim(lines[2], "| "), " | ")
	wantRow := []string{"messidor", "s", "dpegd", "55.0 ± 5.0", "refused: certifies ε = 2.35", "63.0 ± 3.0", "70.5 ± 0.5", "66.19", "—", "+8.0"}
	if strings.Join(row, "|") != strings.Join(wantRow, "|") {
		t.Errorf("row\n got %q\nwant %q", row, wantRow)
	}
	g, ok := res.gain()
	if !ok || g.cells != 1 || g.refused != 1 || g.mean != 8 || g.higher != 1 || g.lower != 0 {
		// paired differences 10 and 6: mean 8, s.e. 2, so > 2 s.e.
		t.Errorf("gain = %+v, want 1 paired cell of mean 8 (higher by > 2 s.e.) and 1 refused", g)
	}
}

// TestCellFromError keeps errors that are not refusals as errors, with
// the table separator escaped.
func TestCellFromError(t *testing.T) {
	c := cellFromError(errors.New("experiment: bad | thing"))
	if c.refused != "" || c.String(false) != "error: experiment: bad / thing" {
		t.Errorf("got %+v → %q", c, c.String(false))
	}
	c = cellFromError(errors.New("pairwise: dpegd: --calibration paper refused: the printed Laplace scale certifies only ε = 0.61 > 0.5; use --calibration exact"))
	if c.String(false) != "refused: certifies ε = 0.61" {
		t.Errorf("Laplace refusal → %q", c.String(false))
	}
	c = cellFromError(errors.New("pairwise: dpgdc2: --calibration paper refused: the printed σ certifies only ε = +Inf > 50 at δ = 0.003906 (…)"))
	if c.String(false) != "refused: certifies ε = +Inf" {
		t.Errorf("infinite refusal → %q", c.String(false))
	}
}
