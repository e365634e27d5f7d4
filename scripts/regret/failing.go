package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/pairwise"
)

// The failing cells (-failing, with -from): where the rule's held-out
// regret exceeds 0.01, which candidate wins there and by how much, the
// regrets per t band, and how many of those misses the measurement's own
// noise produces.
//
// # The null count (what no rule can remove)
//
// Where every candidate's expected AUC is the same (all at chance, say),
// which one is picked does not change the expected AUC, yet the held-out
// regret of any pick is a noisy number that exceeds 0.01 with some
// probability. nullMiss estimates that probability for a cell by
// permutation: under the null the candidates' AUCs in one run are
// exchangeable (same records, same test set, the same distribution), so
// shuffling the candidate labels within each run draws from the null
// distribution of the held-out regret of the rule's pick; the share of
// -failing-perms shuffles whose held-out regret exceeds 0.01 is the
// cell's null miss probability. Summed over the near-chance cells (best
// mean AUC < 0.6) it is the expected number of misses there that ANY
// pick among these candidates would have: the noise floor of the
// measure. (In cells where a model learns the null is false and the sum
// is not a floor; it is printed for scale only.)
func failingReport(w io.Writer, res []result, cands []candidate, args string, perms int) {
	type row struct {
		r               result
		pick, best      string
		t, held, se     float64
		bestV, pNull    float64
		heldOf          map[string]float64
		ldaMinusSSPMean float64
		hasLDA, hasMean bool
	}
	rng := rand.New(rand.NewPCG(25, 1))
	var rows []row
	notRun := 0
	for _, r := range res {
		rec, err := dpalgo.RecommendPrivate(pairwise.TaskAUC, r.N, r.D, r.Eps, dp.DefaultDelta(r.N), "")
		if err != nil {
			panic(err)
		}
		if _, ok := r.Mean[rec.Algo]; !ok {
			notRun++
			continue
		}
		h, se, ok := heldOutRegret(r.AUC, rec.Algo)
		if !ok {
			notRun++
			continue
		}
		x := row{r: r, pick: rec.Algo, t: rec.Score, held: h, se: se, bestV: -1, heldOf: map[string]float64{}}
		for _, c := range cands {
			if v, ok := r.Mean[c.name]; ok && v > x.bestV {
				x.best, x.bestV = c.name, v
			}
			if _, ok := r.Mean[c.name]; ok {
				if v, _, ok := heldOutRegret(r.AUC, c.name); ok {
					x.heldOf[c.name] = v
				}
			}
		}
		l, okL := r.Mean["dp-lda"]
		m, okM := r.Mean["dp-ssp-mean"]
		x.hasLDA, x.hasMean = okL, okM
		x.ldaMinusSSPMean = l - m
		x.pNull = nullMiss(r.AUC, rec.Algo, perms, rng)
		rows = append(rows, x)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i].r, rows[j].r
		if a.N != b.N {
			return a.N < b.N
		}
		if a.D != b.D {
			return a.D < b.D
		}
		if a.Pos != b.Pos {
			return a.Pos < b.Pos
		}
		return a.Eps < b.Eps
	})
	fmt.Fprintf(w, "```\n")
	for _, a := range strings.Split(args, "\n") {
		fmt.Fprintf(w, "%s\n", a)
	}
	fmt.Fprintf(w, "```\n\n")
	ok, near, nearMiss, learnMiss := 0, 0, 0, 0
	var nullNear, nullLearn float64
	for _, x := range rows {
		if x.held <= 0.01 {
			ok++
		}
		if x.bestV < 0.6 {
			near++
			nullNear += x.pNull
			if x.held > 0.01 {
				nearMiss++
			}
		} else {
			nullLearn += x.pNull
			if x.held > 0.01 {
				learnMiss++
			}
		}
	}
	fmt.Fprintf(w, "%d cells with the rule's pick run (%d without), held-out regret ≤ 0.01 in %d (%.1f %%). ", len(rows), notRun, ok, 100*float64(ok)/float64(len(rows)))
	fmt.Fprintf(w, "Near-chance cells (best mean AUC < 0.6): %d, misses %d; expected misses of ANY pick under the null that the candidates are equal there (permutation, %d shuffles per cell): %.1f. Cells where a model learns: %d, misses %d.\n\n", near, nearMiss, perms, nullNear, len(rows)-near, learnMiss)
	// fixed picks, for scale
	fmt.Fprintf(w, "Always the same candidate (cells where it ran): ")
	var parts []string
	for _, c := range cands {
		k, n := 0, 0
		for _, x := range rows {
			if v, okc := x.heldOf[c.name]; okc {
				n++
				if v <= 0.01 {
					k++
				}
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d of %d (%.1f %%)", c.name, k, n, 100*float64(k)/float64(n)))
		}
	}
	fmt.Fprintf(w, "%s.\n\n", strings.Join(parts, "; "))
	fmt.Fprintf(w, "### Per t band\n\n")
	fmt.Fprintf(w, "| t = μn/√d | cells | of which a model learns (best ≥ 0.6) | rule ≤ 0.01 | always dp-lda ≤ 0.01 | always dp-ssp-mean ≤ 0.01 | rule's mean held-out regret | its 90th pct | dp-lda − dp-ssp-mean, mean AUC ± se over cells | expected null misses |\n|---|---|---|---|---|---|---|---|---|---|\n")
	edges := []float64{0, 1, 3, dpalgo.RecommendCentre, 30, 100, 640, math.Inf(1)}
	for b := 0; b+1 < len(edges); b++ {
		var in []row
		for _, x := range rows {
			if x.t >= edges[b] && x.t < edges[b+1] {
				in = append(in, x)
			}
		}
		if len(in) == 0 {
			continue
		}
		learn, okR, okL, okM := 0, 0, 0, 0
		var held, diff []float64
		var pn float64
		for _, x := range in {
			if x.bestV >= 0.6 {
				learn++
			}
			if x.held <= 0.01 {
				okR++
			}
			if v, o := x.heldOf["dp-lda"]; o && v <= 0.01 {
				okL++
			}
			if v, o := x.heldOf["dp-ssp-mean"]; o && v <= 0.01 {
				okM++
			}
			held = append(held, x.held)
			if x.hasLDA && x.hasMean {
				diff = append(diff, x.ldaMinusSSPMean)
			}
			pn += x.pNull
		}
		sort.Float64s(held)
		dm, dse := meanSE(diff)
		hi := fmt.Sprintf("%.3g", edges[b+1])
		if math.IsInf(edges[b+1], 1) {
			hi = "∞"
		}
		fmt.Fprintf(w, "| [%.3g, %s) | %d | %d | %d | %d | %d | %+.4f | %.3f | %+.4f ± %.4f (%d) | %.1f |\n", edges[b], hi, len(in), learn, okR, okL, okM, mean(held), held[min(len(held)-1, int(0.9*float64(len(held))))], dm, dse, len(diff), pn)
	}
	fmt.Fprintf(w, "\n### The failing cells (held-out regret > 0.01)\n\n")
	fmt.Fprintf(w, "| n | d | π₊ | ε | runs | t | rule's pick | its AUC | best (in hindsight) | best AUC | held-out regret ± se | null miss probability | dp-lda | dp-ssp-mean |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, x := range rows {
		if x.held <= 0.01 {
			continue
		}
		runs := len(x.r.AUC[x.pick])
		cell := func(name string) string {
			if v, ok := x.r.Mean[name]; ok {
				return fmt.Sprintf("%.3f ± %.3f", v, x.r.SE[name])
			}
			return "—"
		}
		fmt.Fprintf(w, "| %d | %d | %g | %g | %d | %.3g | %s | %.3f | %s | %.3f | %.3f ± %.3f | %.2f | %s | %s |\n", x.r.N, x.r.D, x.r.Pos, x.r.Eps, runs, x.t, x.pick, x.r.Mean[x.pick], x.best, x.bestV, x.held, x.se, x.pNull, cell("dp-lda"), cell("dp-ssp-mean"))
	}
}

// nullMiss is the share of perms within-run shuffles of the candidate
// labels for which the held-out regret of pick exceeds 0.01 (see
// failingReport). Only candidates run on every run take part.
func nullMiss(auc map[string][]float64, pick string, perms int, rng *rand.Rand) float64 {
	n := len(auc[pick])
	var names []string
	for name, v := range auc {
		if len(v) == n {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	shuf := make(map[string][]float64, len(names))
	for _, name := range names {
		shuf[name] = make([]float64, n)
	}
	vals := make([]float64, len(names))
	miss := 0
	for range perms {
		for i := 0; i < n; i++ {
			for k, name := range names {
				vals[k] = auc[name][i]
			}
			rng.Shuffle(len(vals), func(a, b int) { vals[a], vals[b] = vals[b], vals[a] })
			for k, name := range names {
				shuf[name][i] = vals[k]
			}
		}
		if v, _, ok := heldOutRegret(shuf, pick); ok && v > 0.01 {
			miss++
		}
	}
	return float64(miss) / float64(perms)
}
