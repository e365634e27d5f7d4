package main

import (
	"fmt"

	"github.com/pairfed/pairfed/audit"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/urfave/cli/v2"
)

func auditCommand() *cli.Command {
	return &cli.Command{
		Name:  "audit",
		Usage: "empirical lower bound on ε of a private algorithm (neighbouring datasets, canary record, Clopper–Pearson)",
		Description: `Runs the real mechanism many times on two datasets that differ in one
worst-case record, chooses a threshold test on the released model on a
calibration round, and bounds its error rates on a fresh round. A correct
(ε, δ)-DP mechanism gives epsilon_lower_bound ≤ ε except with probability ≤ 5%.

Example:
   pairfed audit --algo dpegd --epsilon 1 --json`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "algo", Required: true, Usage: "private algorithm"},
			&cli.Float64Flag{Name: "epsilon", Required: true, Usage: "claimed ε"},
			&cli.Float64Flag{Name: "delta", Usage: "claimed δ (default 1/n)"},
			&cli.StringFlag{Name: "data", Usage: "base dataset (default: a small synthetic one, n = 16, d = 4)"},
			&cli.Float64Flag{Name: "radius", Value: 1, Usage: "feature radius R (records are clipped to it)"},
			&cli.IntFlag{Name: "trials", Value: 1000, Usage: "runs per dataset per round"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the audit's (non-private) randomness"},
			&cli.StringFlag{Name: "loss", Usage: "loss (default: the first of logistic, hinge, square meeting the assumptions)"},
			&cli.Float64Flag{Name: "lambda", Usage: "regularization λ (default 0.01 when strong convexity is required)"},
			&cli.Float64Flag{Name: "noise-scale", Value: 1, Usage: "multiply every σ by this (only to demonstrate that too little noise is caught)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
			calibrationFlag(),
		}, dataFlags()...),
		Action: func(c *cli.Context) error {
			spec := audit.AuditSpec{Algo: c.String("algo"), Epsilon: c.Float64("epsilon"), Delta: c.Float64("delta"), DeltaSet: c.IsSet("delta"),
				R: c.Float64("radius"), Trials: c.Int("trials"), Seed: c.Uint64("seed"), Loss: c.String("loss"), Lambda: c.Float64("lambda"),
				NoiseScale: c.Float64("noise-scale"), Calibration: pairwise.Calibration(c.String("calibration"))}
			if p := c.String("data"); p != "" {
				tab, err := data.Load(p, dataOptions(c))
				if err != nil {
					return err
				}
				sc, err := data.FitScaler("minmax", tab.Dataset)
				if err != nil {
					return err
				}
				ds, _, err := data.Clip(sc.Apply(tab.Dataset), spec.R)
				if err != nil {
					return err
				}
				spec.Data = ds
			}
			res, err := audit.Audit(c.Context, spec)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, res)
			}
			verdict := "consistent with the claim"
			if !res.Consistent {
				verdict = "VIOLATES the claim: the mechanism leaks more than ε"
			}
			fmt.Fprintf(c.App.Writer, "%s: claimed ε = %g (δ = %.3g); empirical ε lower bound = %.3f from %d trials per side — %s\n",
				res.Algorithm, res.ClaimedEpsilon, res.Delta, res.EpsilonLowerBound, res.Trials, verdict)
			fmt.Fprintf(c.App.Writer, "test: %s (threshold %.4g), FPR %.4f, FNR %.4f; loss %s; n = %d, d = %d; canary %s\n",
				res.Statistic, res.Threshold, res.FPR, res.FNR, res.Loss, res.N, res.D, res.Canary)
			return nil
		},
	}
}
