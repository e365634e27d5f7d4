package main

import (
	"math"

	"github.com/urfave/cli/v2"

	"github.com/pairfed/pairfed/store"
	"github.com/pairfed/pairfed/worker"
)

// siteBudgetSource re-reads the site's budgets.json when it changed (a
// `pairfed ledger budget set` while the worker runs) and returns the
// budget in force: the tighter of the file's entry for site and the
// --budget-epsilon/--budget-delta flags, as runWorker computes it at
// start (nil: no limit).
func siteBudgetSource(c *cli.Context, state, site string) func() (*worker.Budget, bool, error) {
	watch := store.WatchBudgets(state)
	return func() (*worker.Budget, bool, error) {
		budgets, changed, err := watch.Changed()
		if err != nil || !changed {
			return nil, false, err
		}
		var b *worker.Budget
		if fb, ok := budgets[site]; ok {
			b = &worker.Budget{Epsilon: fb.Epsilon, Delta: fb.Delta}
		}
		if c.IsSet("budget-epsilon") || c.IsSet("budget-delta") {
			if b == nil {
				b = &worker.Budget{Epsilon: math.Inf(1), Delta: math.Inf(1)}
			}
			if c.IsSet("budget-epsilon") {
				b.Epsilon = min(b.Epsilon, c.Float64("budget-epsilon"))
			}
			if c.IsSet("budget-delta") {
				b.Delta = min(b.Delta, c.Float64("budget-delta"))
			}
		}
		return b, true, nil
	}
}
