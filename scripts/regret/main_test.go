package main

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/pairwise"
)

// The recorded grids (docs/results/regret*.json, committed with the
// report) re-read with the rule as compiled now.
func loadGrid(t *testing.T, path string) []result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var saved struct{ Results []result }
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	return saved.Results
}

var grids = []string{"../../docs/results/regret.json", "../../docs/results/regret-d500.json", "../../docs/results/regret-small.json", "../../docs/results/regret-small-d1000.json", "../../docs/results/regret-d1000.json"}

// The default picks what the grid says where the grid is decisive: in
// every recorded cell where dp-lda and dp-ssp-mean (the rule's two
// branches) differ by more than 0.02 AUC and 3 paired standard errors
// (per cell a false "decisive" call has probability < 0.3 % under a
// normal approximation), RecommendPrivate picks the better of the two.
// Changing the rule's threshold or its statistic so that it contradicts a
// measured decisive cell fails here.
//
// Known exceptions, listed (and reported in docs/results/README.md), not
// hidden: cells the public shape cannot tell apart from their neighbours
// because what decides them is the class balance, which is private
// (replace-one neighbours fix n only).
func TestRulePicksTheDecisiveWinner(t *testing.T) {
	type cell struct {
		n, d int
		pos  float64
		eps  float64
	}
	known := map[cell]string{
		// 100 positives among 10⁴ at d = 500: dp-ssp-mean 0.031 ± 0.006
		// ahead of dp-lda (3 runs), t = 895.
		{10000, 500, 0.01, 10}: "1 % positives",
		// 3 positives among 256 at d = 1000: dp-ssp-mean 0.073 ± 0.017
		// ahead (4 runs), t = 19; every candidate below 0.6.
		{256, 1000, 0.01, 10}: "1 % positives",
	}
	decisive := 0
	for _, g := range grids {
		for _, r := range loadGrid(t, g) {
			a, b := r.AUC["dp-lda"], r.AUC["dp-ssp-mean"]
			if len(a) < 2 || len(a) != len(b) {
				continue
			}
			m := r.Mean["dp-lda"] - r.Mean["dp-ssp-mean"]
			se := pairedSE(a, b)
			if math.Abs(m) <= 0.02 || math.Abs(m) <= 3*se {
				continue
			}
			decisive++
			want := "dp-lda"
			if m < 0 {
				want = "dp-ssp-mean"
			}
			rec, err := dpalgo.RecommendPrivate(pairwise.TaskAUC, r.N, r.D, r.Eps, dp.DefaultDelta(r.N), "")
			if err != nil {
				t.Fatal(err)
			}
			if why, ok := known[cell{r.N, r.D, r.Pos, r.Eps}]; ok && rec.Algo != want {
				t.Logf("known exception (%s): n = %d, d = %d, π₊ = %g, ε = %g: the grid says %s by %.3f ± %.3f, the rule picks %s", why, r.N, r.D, r.Pos, r.Eps, want, math.Abs(m), se, rec.Algo)
				continue
			}
			// dp-select is dp-lda or, where the minority count per
			// parameter is large, dp-objpert (recommend.go): the rule's
			// dp-lda side of this comparison.
			if rec.Algo != want && !(want == "dp-lda" && rec.Algo == "dp-select") {
				t.Errorf("%s: n = %d, d = %d, π₊ = %g, ε = %g (t = %.3g): the grid says %s by %.3f ± %.3f, the rule picks %s",
					g, r.N, r.D, r.Pos, r.Eps, rec.Score, want, math.Abs(m), se, rec.Algo)
			}
		}
	}
	if decisive < 50 {
		t.Fatalf("only %d decisive cells in the recorded grids: the test has nothing to check", decisive)
	}
}

// pairGDGrids are dp-pair-gd's columns of the recorded grids: the same
// cells and data draws, run alone (`-algos dp-pair-gd` with each grid's
// other flags), merged by mergeCells.
var pairGDGrids = []string{"../../docs/results/regret-pairgd.json", "../../docs/results/regret-d500-pairgd.json", "../../docs/results/regret-small-pairgd.json", "../../docs/results/regret-small-d1000-pairgd.json", "../../docs/results/regret-d1000-pairgd.json"}

// Why the rule never picks dp-pair-gd (dpalgo/recommend.go): over the
// recorded grids it is decisively ahead of the rule's pick (by more than
// 0.02 AUC and 3 paired standard errors) in only the two cells listed —
// one with 1 % positives, one where every candidate is below AUC 0.56 —
// and decisively behind it in at least 50 (59 when recorded). A rule that
// picked it in some regime of the public shape would have to win there;
// if a change of dp-pair-gd (re-recorded) makes it the decisive winner
// elsewhere, this test fails and the rule must be revisited.
func TestPairGDIsNotTheDecisiveWinner(t *testing.T) {
	type cell struct {
		n, d int
		pos  float64
		eps  float64
	}
	known := map[cell]string{
		{10000, 100, 0.01, 1}: "1 % positives: dp-pair-gd 0.565 vs dp-lda 0.517",
		{256, 256, 0.5, 0.5}:  "near chance: dp-pair-gd 0.550 vs dp-ssp-mean 0.504",
	}
	ahead, behind := 0, 0
	for i, g := range grids {
		all := mergeCells(loadGrid(t, g), loadGrid(t, pairGDGrids[i]))
		for _, r := range all {
			rec, err := dpalgo.RecommendPrivate(pairwise.TaskAUC, r.N, r.D, r.Eps, dp.DefaultDelta(r.N), "")
			if err != nil {
				t.Fatal(err)
			}
			pick := rec.Algo
			if pick == "dp-select" {
				// Not in these grids (recorded before it); its count
				// picks dp-lda, or dp-objpert where that is within
				// 0.01 of dp-lda (TestSelectOnTheReRuns).
				pick = "dp-lda"
			}
			a, b := r.AUC[pick], r.AUC["dp-pair-gd"]
			if len(b) == 0 {
				t.Fatalf("%s: n = %d, d = %d, π₊ = %g, ε = %g has no dp-pair-gd column", pairGDGrids[i], r.N, r.D, r.Pos, r.Eps)
			}
			if len(a) < 2 || len(a) != len(b) {
				continue
			}
			m, se := mean(b)-mean(a), pairedSE(a, b)
			switch {
			case m > 0.02 && m > 3*se:
				ahead++
				if why, ok := known[cell{r.N, r.D, r.Pos, r.Eps}]; ok {
					t.Logf("known: n = %d, d = %d, π₊ = %g, ε = %g (%s)", r.N, r.D, r.Pos, r.Eps, why)
					continue
				}
				t.Errorf("n = %d, d = %d, π₊ = %g, ε = %g (t = %.3g): dp-pair-gd is ahead of the rule's %s by %.3f ± %.3f", r.N, r.D, r.Pos, r.Eps, rec.Score, rec.Algo, m, se)
			case -m > 0.02 && -m > 3*se:
				behind++
			}
		}
	}
	if ahead != len(known) || behind < 50 {
		t.Errorf("dp-pair-gd decisively ahead of the rule's pick in %d cells (listed %d), behind in %d (want ≥ 50)", ahead, len(known), behind)
	}
}

// The held-out regret does not charge the rule the winner's noise: in
// simulated cells where all 5 candidates have the same expected AUC
// (per-run AUCs i.i.d. N(0.5, s²), 10 runs, s = 0.05), the in-sample
// regret averages s/√10·E[max of 5 standard normals] ≈ 0.0184 while the
// held-out one averages 0. With 4000 cells the held-out mean has standard
// error ≈ s·√(2/10)·(1/√4000)·√(1 + 1) ≈ 0.0005 (each per-run difference
// is of two independent draws); the test allows 5 of those (false failure
// < 10⁻⁶) and asks the in-sample mean to be above 0.012.
func TestHeldOutRegretAtChance(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	names := []string{"a", "b", "c", "d", "e"}
	const cells, runs, s = 4000, 10, 0.05
	var held, ins float64
	for range cells {
		auc := map[string][]float64{}
		for _, nm := range names {
			v := make([]float64, runs)
			for i := range v {
				v[i] = 0.5 + s*rng.NormFloat64()
			}
			auc[nm] = v
		}
		h, _, ok := heldOutRegret(auc, "c")
		if !ok {
			t.Fatal("held-out regret not computed")
		}
		held += h
		best := math.Inf(-1)
		for _, nm := range names {
			best = math.Max(best, mean(auc[nm]))
		}
		ins += best - mean(auc["c"])
	}
	held /= cells
	ins /= cells
	if math.Abs(held) > 5*0.0005 {
		t.Errorf("held-out regret at chance averages %.4f, want ≈ 0", held)
	}
	if ins < 0.012 {
		t.Errorf("in-sample regret at chance averages %.4f, want ≈ 0.018 (the bias the held-out estimate removes)", ins)
	}
}

// Where one candidate is truly ahead by far more than the noise, the
// held-out regret recovers the true gap.
func TestHeldOutRegretFindsARealGap(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	auc := map[string][]float64{}
	for _, c := range []struct {
		name string
		m    float64
	}{{"good", 0.8}, {"pick", 0.7}, {"other", 0.6}} {
		v := make([]float64, 20)
		for i := range v {
			v[i] = c.m + 0.01*rng.NormFloat64()
		}
		auc[c.name] = v
	}
	h, se, ok := heldOutRegret(auc, "pick")
	if !ok || math.Abs(h-0.1) > 5*se || se > 0.01 {
		t.Fatalf("held-out regret %.4f ± %.4f (%v), want 0.1", h, se, ok)
	}
}

// replaceCells takes a re-measured cell only when it extends the recorded
// one (the rule's candidates reproduce bit for bit on the shared runs).
func TestReplaceCellsExtendsOnly(t *testing.T) {
	rec := []result{{N: 100, D: 2, Pos: 0.1, Eps: 1, Target: 0.85, AUC: map[string][]float64{"dp-lda": {0.6, 0.7}, "dp-ssp-mean": {0.5, 0.55}}}}
	more := []result{{N: 100, D: 2, Pos: 0.1, Eps: 1, Target: 0.85, AUC: map[string][]float64{"dp-lda": {0.6, 0.7, 0.65, 0.66}, "dp-ssp-mean": {0.5, 0.55, 0.52, 0.51}}}}
	got := replaceCells(slices.Clone(rec), more)
	if len(got) != 1 || len(got[0].AUC["dp-lda"]) != 4 {
		t.Fatalf("an extending cell was not taken: %+v", got)
	}
	other := []result{{N: 1000, D: 2, Pos: 0.1, Eps: 1, Target: 0.85, AUC: map[string][]float64{"dp-lda": {0.7}}}}
	if got := replaceCells(slices.Clone(rec), other); len(got) != 2 {
		t.Fatalf("a new cell was not appended: %d cells", len(got))
	}
}

// nullMiss: candidates identical run by run can never miss (every shuffle
// is the same table, held-out regret 0); candidates that differ only by
// noise of standard deviation 0.05 over 10 runs miss often — the held-out
// regret's standard error is then ≈ 0.05·√2/√10 ≈ 0.022, and a regret
// above 0.01 has probability ≈ 0.3 (the bounds 0.1–0.6 are ≈ 4 standard
// errors of a 400-shuffle share around that value, with room for the
// approximation; the seeds are fixed, so the test is deterministic).
func TestNullMiss(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	same := map[string][]float64{}
	for _, name := range []string{"a", "b", "c"} {
		same[name] = []float64{0.5, 0.6, 0.55, 0.52, 0.58, 0.51}
	}
	if p := nullMiss(same, "a", 100, rng); p != 0 {
		t.Fatalf("identical candidates: null miss %v, want 0", p)
	}
	noisy := map[string][]float64{}
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		v := make([]float64, 10)
		for i := range v {
			v[i] = 0.5 + 0.05*rng.NormFloat64()
		}
		noisy[name] = v
	}
	if p := nullMiss(noisy, "a", 400, rng); p < 0.1 || p > 0.6 {
		t.Fatalf("candidates equal up to noise: null miss %v, want ≈ 0.3", p)
	}
}

// replaceCells: where two recorded blocks hold a cell of the same key
// (the d = 500 supplement and the main grid's d = 500 column), a re-run
// replaces the one whose rule candidates it extends, not the first.
func TestReplaceCellsPicksTheExtendedCell(t *testing.T) {
	cell := func(lda, mean []float64) result {
		return result{N: 10000, D: 500, Pos: 0.01, Eps: 0.1, Target: 0.75,
			AUC: map[string][]float64{"dp-lda": lda, "dp-ssp-mean": mean}}
	}
	main := cell(nil, []float64{0.51, 0.52})
	supp := cell([]float64{0.61}, []float64{0.55})
	rerun := cell([]float64{0.61, 0.62}, []float64{0.55, 0.56})
	got := replaceCells([]result{main, supp}, []result{rerun})
	if len(got) != 2 || len(got[0].AUC["dp-ssp-mean"]) != 2 || got[0].AUC["dp-ssp-mean"][0] != 0.51 || len(got[1].AUC["dp-lda"]) != 2 {
		t.Fatalf("replaced the wrong cell: %+v", got)
	}
}

// The re-run blocks (every cell at ≥ 20 runs) and dp-select's columns
// over them (`-algos dp-select` with each block's flags; the same draws).
var (
	reRuns = []string{"../../docs/results/regret-large-r20.json", "../../docs/results/regret-n1000-rest-r20.json", "../../docs/results/regret-n1000-d100-r20.json",
		"../../docs/results/regret-n100-r40.json", "../../docs/results/regret-small-r40.json", "../../docs/results/regret-d500-r20.json",
		"../../docs/results/regret-d1000-r20.json", "../../docs/results/regret-small-d1000-r20.json"}
	selectRuns = []string{"../../docs/results/regret-select-large-r20.json", "../../docs/results/regret-select-n1000-rest-r20.json", "../../docs/results/regret-select-n1000-d100-r20.json",
		"../../docs/results/regret-select-n100-r40.json", "../../docs/results/regret-select-small-r40.json", "../../docs/results/regret-select-d500-r20.json",
		"../../docs/results/regret-select-d1000-r20.json", "../../docs/results/regret-select-small-d1000-r20.json"}
)

// dp-select where the rule picks it: over every re-run cell, dp-select has
// a column exactly where RecommendPrivate picks it (the recorded columns
// cover the rule as compiled), and there it is never decisively behind
// dp-lda — the rule's alternative — by more than 0.01 AUC and 3 paired
// standard errors (its count picks dp-lda or dp-objpert, the latter only
// from ŝ₊ ≥ T = 15 + 2·μ_b·σ_c/(d + 1), where the grid has dp-objpert
// within 0.01 of dp-lda). A threshold or count share that made dp-select
// lose there fails here.
func TestSelectOnTheReRuns(t *testing.T) {
	picked, ahead := 0, 0
	for i, g := range reRuns {
		all := mergeCells(loadGrid(t, g), loadGrid(t, selectRuns[i]))
		for _, r := range all {
			rec, err := dpalgo.RecommendPrivate(pairwise.TaskAUC, r.N, r.D, r.Eps, dp.DefaultDelta(r.N), "")
			if err != nil {
				t.Fatal(err)
			}
			s, l := r.AUC["dp-select"], r.AUC["dp-lda"]
			if (rec.Algo == "dp-select") != (len(s) > 0) {
				t.Errorf("%s: n = %d, d = %d, π₊ = %g, ε = %g: the rule picks %s but dp-select has %d runs", selectRuns[i], r.N, r.D, r.Pos, r.Eps, rec.Algo, len(s))
				continue
			}
			if len(s) == 0 {
				continue
			}
			picked++
			if len(l) != len(s) {
				t.Fatalf("n = %d, d = %d, π₊ = %g, ε = %g: dp-lda %d runs, dp-select %d", r.N, r.D, r.Pos, r.Eps, len(l), len(s))
			}
			m, se := mean(s)-mean(l), pairedSE(l, s)
			if -m > 0.01 && -m > 3*se {
				t.Errorf("n = %d, d = %d, π₊ = %g, ε = %g: dp-select %.4f behind dp-lda by %.4f ± %.4f", r.N, r.D, r.Pos, r.Eps, mean(s), -m, se)
			}
			if m > 3*se {
				ahead++
			}
		}
	}
	t.Logf("dp-select picked in %d re-run cells, ahead of dp-lda (3 s.e.) in %d", picked, ahead)
	if picked < 20 {
		t.Errorf("dp-select picked in only %d cells: the test checks little", picked)
	}
}

// The non-Gaussian families (family.go): a training draw has exactly its
// class counts and records in the unit ball (one-hot: on the sphere, one
// level per attribute), and the label model's own score reaches the
// target separation on a fresh 4 000-record test draw within 0.03 (the
// calibration sample's AUC standard error is ≈ 0.007 at 6 000 records
// and the test draw's ≈ 0.008: 0.03 is > 2.5 s.e. of their difference;
// seeded, so deterministic). An unknown family is refused.
func TestFamilies(t *testing.T) {
	for _, fam := range []string{"logit", "onehot"} {
		for _, c := range []struct {
			d           int
			target, pos float64
		}{{2, 0.75, 0.5}, {10, 0.85, 0.1}, {100, 0.95, 0.1}} {
			if fam == "onehot" && c.d < 10 {
				if _, err := newFamily(fam, c.d, c.target, c.pos, rand.New(rand.NewPCG(1, 1))); err == nil {
					t.Errorf("onehot at d = %d was accepted", c.d)
				}
				continue
			}
			rng := rand.New(rand.NewPCG(uint64(c.d), 7))
			f, err := newFamily(fam, c.d, c.target, c.pos, rng)
			if err != nil {
				t.Fatal(err)
			}
			tr := f.draw(500, 37, rng)
			npos := 0
			for i := range tr.N {
				x := tr.Row(i)
				if n := math.Sqrt(dot(x, x)); n > 1+1e-12 || (fam == "onehot" && math.Abs(n-1) > 1e-12) {
					t.Fatalf("%s d=%d: record %d has norm %v", fam, c.d, i, n)
				}
				if tr.Y[i] > 0 {
					npos++
				}
			}
			if npos != 37 || tr.N != 500 {
				t.Fatalf("%s d=%d: %d positives of %d, want 37 of 500", fam, c.d, npos, tr.N)
			}
			te := f.draw(4000, 2000, rng)
			if a := pairwise.LinearAUC(f.oracle(), te); math.Abs(a-c.target) > 0.03 {
				t.Errorf("%s d=%d: the label model's score has AUC %.3f, target %.2f", fam, c.d, a, c.target)
			}
		}
	}
	if _, err := newFamily("cauchy", 3, 0.8, 0.5, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("an unknown family was accepted")
	}
}
