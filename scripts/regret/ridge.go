package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math"
	"os"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/pairwise"
)

// swapLDA reads the dp-lda-c -raw files (-algos dp-lda-c over recorded
// grids: the same draws and dp-lda's noise seed, so each run is paired
// with the recorded dp-lda run of the same index), writes the paired
// table dp-lda-c − dp-lda per cell and per t band to pairedOut (stderr
// when ""), and returns all with dp-lda's runs replaced by dp-lda-c's
// where dp-lda-c ran, so that the report scores the rule with the scaled
// ridge (dpalgo.LDARidgeScaled). Cells where dp-lda-c was skipped because
// its multiplier is 1 (ldaSame) keep dp-lda's runs: they are the same
// computation. A dp-lda-c cell must match a recorded cell with dp-lda at
// the same or a larger run count; with fewer runs (a cell too costly to
// re-run in full) it is paired on the first runs and tabulated, and the
// report keeps the recorded dp-lda runs there.
func swapLDA(all []result, files []string, pairedOut string) []result {
	type row struct {
		n, d     int
		pos, eps float64
		t, c     float64
		runs     int
		partial  bool // fewer runs than recorded: not swapped into the report
		old, new float64
		diff, se float64
	}
	var rows []row
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			log.Fatal(err)
		}
		var saved struct{ Results []result }
		if err := json.Unmarshal(b, &saved); err != nil {
			log.Fatal(err)
		}
		for _, r := range saved.Results {
			nv, ok := r.AUC["dp-lda-c"]
			if !ok {
				continue
			}
			i := -1
			for k, a := range all {
				if a.N == r.N && a.D == r.D && a.Pos == r.Pos && a.Eps == r.Eps && a.Target == r.Target && len(a.AUC["dp-lda"]) >= len(nv) {
					i = k
					break
				}
			}
			if i < 0 {
				log.Fatalf("regret: -lda-c: cell n=%d d=%d π₊=%g ε=%g: no recorded dp-lda with ≥ %d runs", r.N, r.D, r.Pos, r.Eps, len(nv))
			}
			a := &all[i]
			// Fewer runs than recorded (a cell too costly to re-run in
			// full): paired on the first runs (the same draws), reported
			// in the table, but dp-lda's recorded runs stay in the report.
			old := a.AUC["dp-lda"][:len(nv)]
			partial := len(nv) < len(a.AUC["dp-lda"])
			d := make([]float64, len(nv))
			for k := range d {
				d[k] = nv[k] - old[k]
			}
			dm, dse := meanSE(d)
			delta := dp.DefaultDelta(r.N)
			rec, err := dpalgo.RecommendPrivate(pairwise.TaskAUC, r.N, r.D, r.Eps, delta, "")
			if err != nil {
				log.Fatal(err)
			}
			t := rec.Mu * float64(r.N) / math.Sqrt(float64(r.D))
			om, _ := meanSE(old)
			nm, nse := meanSE(nv)
			rows = append(rows, row{n: r.N, d: r.D, pos: r.Pos, eps: r.Eps, t: t, c: math.Min(1, math.Max(0.25, dpalgo.RecommendCentre/t)), runs: len(nv), old: om, new: nm, diff: dm, se: dse, partial: partial})
			if !partial {
				a.AUC["dp-lda"], a.Mean["dp-lda"], a.SE["dp-lda"] = nv, nm, nse
			}
		}
	}
	w := io.Writer(os.Stderr)
	if pairedOut != "" {
		f, err := os.Create(pairedOut)
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		w = f
	}
	fmt.Fprintf(w, "### Per t band: dp-lda-c − dp-lda (paired runs)\n\n")
	fmt.Fprintf(w, "c ≈ RecommendCentre/t clamped to [1/4, 1] (dpalgo.LDARidgeMultiplier). Mean over cells of the per-cell mean paired difference ± the standard error of that mean over cells; worse by > 0.01: cells whose mean paired difference is below −0.01.\n\n")
	fmt.Fprintf(w, "| t = μn/√d | cells | c | mean difference ± se | cells worse by > 0.01 | cells better by > 0.01 | worst cell | best cell |\n|---|---|---|---|---|---|---|---|\n")
	edges := []float64{dpalgo.RecommendCentre - 0.1, 30, 100, 640, math.Inf(1)}
	for b := 0; b+1 < len(edges); b++ {
		var ds []float64
		worse, better := 0, 0
		lo, hi := math.Inf(1), math.Inf(-1)
		cmin, cmax := 1.0, 0.0
		for _, x := range rows {
			if x.t < edges[b] || x.t >= edges[b+1] {
				continue
			}
			ds = append(ds, x.diff)
			if x.diff < -0.01 {
				worse++
			}
			if x.diff > 0.01 {
				better++
			}
			lo, hi = math.Min(lo, x.diff), math.Max(hi, x.diff)
			cmin, cmax = math.Min(cmin, x.c), math.Max(cmax, x.c)
		}
		if len(ds) == 0 {
			continue
		}
		m, se := meanSE(ds)
		fmt.Fprintf(w, "| [%.3g, %.3g) | %d | %.2f–%.2f | %+.4f ± %.4f | %d | %d | %+.4f | %+.4f |\n", edges[b], edges[b+1], len(ds), cmin, cmax, m, se, worse, better, lo, hi)
	}
	// The same by d and by π₊ (public and private shape, for the reading).
	by := func(title string, key func(x row) float64, keys []float64) {
		fmt.Fprintf(w, "\n### By %s\n\n| %s | cells | mean difference ± se | cells worse by > 0.01 | cells better by > 0.01 |\n|---|---|---|---|---|\n", title, title)
		for _, k := range keys {
			var ds []float64
			worse, better := 0, 0
			for _, x := range rows {
				if key(x) != k {
					continue
				}
				ds = append(ds, x.diff)
				if x.diff < -0.01 {
					worse++
				}
				if x.diff > 0.01 {
					better++
				}
			}
			if len(ds) == 0 {
				continue
			}
			m, se := meanSE(ds)
			fmt.Fprintf(w, "| %g | %d | %+.4f ± %.4f | %d | %d |\n", k, len(ds), m, se, worse, better)
		}
	}
	by("d", func(x row) float64 { return float64(x.d) }, []float64{2, 10, 16, 100, 256, 500, 1000})
	by("π₊", func(x row) float64 { return x.pos }, []float64{0.01, 0.1, 0.5})
	fmt.Fprintf(w, "\n### Per cell\n\n| n | d | π₊ | ε | t | c | runs | dp-lda | dp-lda-c | difference ± se |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, x := range rows {
		mark := ""
		if x.diff < -0.01 {
			mark = " **worse**"
		}
		if x.partial {
			mark += " (first runs only; not in the report)"
		}
		fmt.Fprintf(w, "| %d | %d | %g | %g | %.3g | %.2f | %d | %.4f | %.4f | %+.4f ± %.4f%s |\n", x.n, x.d, x.pos, x.eps, x.t, x.c, x.runs, x.old, x.new, x.diff, x.se, mark)
	}
	return all
}
