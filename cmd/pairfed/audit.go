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
		Usage: "empirical lower bound on ε of a private algorithm (worst-case neighbouring datasets, likelihood-ratio test, Clopper–Pearson)",
		Description: `Runs the real mechanism many times on two datasets that differ in one
worst-case record and turns the best test's error rates into a lower bound
on ε. A correct (ε, δ)-DP mechanism gives epsilon_lower_bound ≤ ε except
with probability ≤ 1 − confidence (default 5%).

--mode whitebox (default) records every noisy release of the algorithm
(each dp.Noise call: the pre-noise vector and the σ actually used, before
any projection), replays the transcript on the neighbouring dataset and
applies the optimal (Neyman–Pearson) log-likelihood-ratio test. The
neighbouring datasets, canary row, loss, λ, parameter radius and sampling
seed are searched for the worst case (n ≤ 32, d = 2); δ defaults to 1e-5.
A subsampled mechanism (dp-pair-sgd) is audited white-box with its
sampling known to the test, which voids the amplification its claim rests
on: epsilon_lower_bound is then held to reference_epsilon, the ε its
releases certify without amplification (claimed_epsilon is kept as the
claim; the amplification accountant is tested in package dp).
--mode blackbox tests one coordinate of the final model only, on --data or
a small synthetic set (n = 16, d = 4); δ defaults to 1/(10·n).

A threshold chosen on a calibration round is evaluated on a fresh round of
--trials runs per side.

Example:
   pairfed audit --algo dpegd --epsilon 1 --json
   pairfed audit --algo dp-gd-grad --epsilon 1 --noise-scale 0.3`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "algo", Required: true, Usage: "private algorithm"},
			&cli.Float64Flag{Name: "epsilon", Required: true, Usage: "claimed ε"},
			&cli.StringFlag{Name: "task", Value: "auc", Usage: "whitebox: auc or metric (Mahalanobis W, d² noised entries)"},
			&cli.StringFlag{Name: "mode", Value: audit.WhiteBox, Usage: "whitebox (the noisy releases, likelihood-ratio test) or blackbox (the final model)"},
			&cli.Float64Flag{Name: "delta", Usage: "claimed δ", DefaultText: "1e-5 white-box, 1/(10·n) black-box"},
			&cli.StringFlag{Name: "data", Usage: "blackbox only: base dataset (default: a small synthetic one, n = 16, d = 4)"},
			&cli.Float64Flag{Name: "radius", Value: 1, Usage: "feature radius R (records are clipped to it)"},
			&cli.IntFlag{Name: "trials", Usage: "runs per dataset per round", DefaultText: "4000 white-box, 1000 black-box"},
			&cli.Float64Flag{Name: "confidence", Value: 0.95, Usage: "confidence of the lower bound"},
			&cli.BoolFlag{Name: "secure-noise", Usage: "whitebox: draw the noise from the production (crypto/rand) sampler instead of the seeded one (not reproducible)"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the audit's (non-private) randomness"},
			&cli.StringFlag{Name: "loss", Usage: "loss (default: white-box tries every supported one; black-box the first of logistic, hinge, square meeting the assumptions)"},
			&cli.Float64Flag{Name: "lambda", Usage: "regularization λ", DefaultText: "white-box searches; black-box 0.01 when strong convexity is required, else 0"},
			&cli.Float64Flag{Name: "noise-scale", Value: 1, Usage: "multiply every σ by this (only to demonstrate that too little noise is caught)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
			calibrationFlag(),
		}, dataFlags()...),
		Action: func(c *cli.Context) error {
			spec := audit.AuditSpec{Algo: c.String("algo"), Mode: c.String("mode"), Task: c.String("task"), Epsilon: c.Float64("epsilon"), Delta: c.Float64("delta"), DeltaSet: c.IsSet("delta"),
				R: c.Float64("radius"), Trials: c.Int("trials"), Seed: c.Uint64("seed"), Loss: c.String("loss"), Lambda: c.Float64("lambda"),
				NoiseScale: c.Float64("noise-scale"), Confidence: c.Float64("confidence"), SecureNoise: c.Bool("secure-noise"), Calibration: pairwise.Calibration(c.String("calibration"))}
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
			ref := ""
			if res.Reference != "" {
				ref = fmt.Sprintf(", reference ε = %.4g (%s)", res.ReferenceEpsilon, res.Reference)
				verdict = "consistent with the reference"
				if !res.Consistent {
					verdict = "VIOLATES the reference: the releases leak more than their stated sensitivity and σ allow"
				}
			}
			fmt.Fprintf(c.App.Writer, "%s (%s, noise ×%g): claimed ε = %g (δ = %.3g)%s; empirical ε lower bound = %.3f (confidence %g) from %d trials per side — %s\n",
				res.Algorithm, res.Mode, res.NoiseScale, res.ClaimedEpsilon, res.Delta, ref, res.EpsilonLowerBound, res.Confidence, res.Trials, verdict)
			fmt.Fprintf(c.App.Writer, "test: %s (threshold %.4g), FPR %.4f, FNR %.4f; loss %s, λ = %g; n = %d, d = %d; canary %s\n",
				res.Statistic, res.Threshold, res.FPR, res.FNR, res.Loss, res.Lambda, res.N, res.D, res.Canary)
			if res.Mode == audit.WhiteBox {
				fmt.Fprintf(c.App.Writer, "worst case realizes %.3f of the stated sensitivity\n", res.SensitivityAttained)
				for _, n := range res.Notes {
					fmt.Fprintf(c.App.Writer, "note: %s\n", n)
				}
			}
			return nil
		},
	}
}
