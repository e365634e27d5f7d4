// Command audittable regenerates the audit table of docs/privacy.md: for every
// private algorithm of the registry and noise scales ×1, ×0.5, ×0.3, ×0.1,
// the white-box audit's ε lower bound at claimed (ε, δ) = (1, 1e-5)
// (package audit: recorded noisy releases, worst-case neighbouring
// datasets, likelihood-ratio test, Clopper–Pearson at 95%), and at ×1 the
// share of the stated sensitivity the worst case realizes and the realized
// vs stated privacy loss. Fixed seeds: the table is reproducible.
//
//	go run ./scripts/audittable [-task auc|metric] [-trials 4000] [-seed 1]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"slices"
	"strings"

	_ "github.com/pairfed/pairfed/algo/all" // every single-site algorithm registered
	"github.com/pairfed/pairfed/audit"
	"github.com/pairfed/pairfed/pairwise"
)

func main() {
	trials := flag.Int("trials", 4000, "trials per side per round")
	seed := flag.Uint64("seed", 1, "audit seed")
	task := flag.String("task", "auc", "auc or metric")
	flag.Parse()
	scales := []float64{1, 0.5, 0.3, 0.1}
	head := []string{"algorithm"}
	for _, s := range scales {
		head = append(head, fmt.Sprintf("×%g", s))
	}
	head = append(head, "realized / stated sensitivity", "realized / stated privacy loss at ×1", "worst case found")
	fmt.Println("| " + strings.Join(head, " | ") + " |")
	fmt.Println("|" + strings.Repeat("---|", len(head)))
	for _, a := range pairwise.Algorithms() {
		if !a.Private || !slices.Contains(a.Tasks, pairwise.Task(*task)) {
			continue
		}
		row := []string{"`" + a.Name + "`"}
		var first *audit.AuditResult
		for _, s := range scales {
			res, err := audit.Audit(context.Background(), audit.AuditSpec{Algo: a.Name, Task: *task, Epsilon: 1, Trials: *trials, Seed: *seed, NoiseScale: s})
			if err != nil {
				log.Fatalf("%s ×%g: %v", a.Name, s, err)
			}
			cell := fmt.Sprintf("%.2f", res.EpsilonLowerBound)
			if !res.Consistent {
				cell = "**" + cell + "**"
			}
			row = append(row, cell)
			if first == nil {
				first = res
			}
		}
		con := first.Canary
		if i := strings.Index(con, ":"); i > 0 {
			con = con[:i]
		}
		row = append(row, fmt.Sprintf("%.3f", first.SensitivityAttained),
			fmt.Sprintf("%.3g / %.3g", first.RealizedLoss, first.StatedLoss),
			fmt.Sprintf("%s, %s, λ = %g, n = %d, %d %s release(s)%s", con, first.Loss, first.Lambda, first.N, first.Releases, first.Mechanism, steps(first.Canary)))
		fmt.Println("| " + strings.Join(row, " | ") + " |")
	}
}

// steps extracts ", T steps" from a canary description when the search
// chose a non-default iteration count.
func steps(canary string) string {
	for _, part := range strings.Split(canary, "; ") {
		if strings.HasSuffix(part, " steps") && !strings.HasPrefix(part, "default") {
			return ", " + part
		}
	}
	return ""
}
