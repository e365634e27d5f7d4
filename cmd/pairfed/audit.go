package main

import (
	"fmt"
	"strings"

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

Federated algorithms (--algo fed-…): a white-box audit of one site's
release over the whole job — the algorithm's own site code (fedalgo), the
site's every noisy release recorded and replayed on the neighbouring site
dataset, the broadcast being the algorithm's combination of that site's
updates — held to the job's per-site ε. With --secure-aggregation, the
distributed discrete Gaussian instead: the site's vector encoded with the
DDG its announcement defines, summed with t − κ honest shares and decoded
(held to the job's ε), and the site's share alone (held to the local-only
ε the same DDG certifies with one share). --tamper sensitivity replays a
coordinator that divides the announced DDG sensitivity and γ by 1000 (the
site built its DDG from them): the audit must catch it. --sites K sites
of --records n records each; δ defaults to 1e-5; 2000 trials per side.
--federated-table prints docs/privacy.md's table of every federated algorithm
× secure aggregation off/on × noise ×1 and ×0.1.

Example:
   pairfed audit --algo dpegd --epsilon 1 --json
   pairfed audit --algo dp-gd-grad --epsilon 1 --noise-scale 0.3
   pairfed audit --algo fed-dp-lda --epsilon 1 --secure-aggregation --json
   pairfed audit --algo fed-dp-lda --epsilon 1 --secure-aggregation --tamper sensitivity`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "algo", Usage: "private algorithm (single-site, or a federated fed-… one)"},
			&cli.Float64Flag{Name: "epsilon", Usage: "claimed ε (required for single-site algorithms; 1 for federated audits and --federated-table when not given)", DefaultText: "none"},
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
			&cli.BoolFlag{Name: "secure-aggregation", Usage: "federated: audit the distributed discrete Gaussian sum of secure aggregation (and one share alone)"},
			&cli.IntFlag{Name: "sites", Usage: "federated: number of sites K", DefaultText: "4"},
			&cli.IntFlag{Name: "records", Usage: "federated: records per site", DefaultText: "8"},
			&cli.IntFlag{Name: "threshold", Usage: "federated, secure aggregation: threshold t", DefaultText: "⌊2K/3⌋ + 1"},
			&cli.IntFlag{Name: "colluders", Usage: "federated, secure aggregation: κ sites colluding with the coordinator"},
			&cli.IntFlag{Name: "degree", Usage: "federated, secure aggregation: SecAgg+'s expected degree (the audited sum holds its floor of honest shares); 0: the complete graph"},
			&cli.IntFlag{Name: "rounds", Usage: "federated: the job's rounds where the algorithm takes them", DefaultText: "the algorithm's own"},
			&cli.StringFlag{Name: "local-algo", Usage: "federated: fed-oneshot's local algorithm (default dpegd)"},
			&cli.StringFlag{Name: "tamper", Usage: "federated, secure aggregation: \"sensitivity\" replays a coordinator that divides the announced DDG sensitivity and γ by 1000"},
			&cli.BoolFlag{Name: "federated-table", Usage: "print docs/privacy.md's table of federated audits (every federated algorithm × secure aggregation off/on × noise ×1, ×0.1)"},
			calibrationFlag(),
		}, dataFlags()...),
		Action: func(c *cli.Context) error {
			// Probe 6 (issue 28): the audit reads 0 as "the default", so an
			// explicit --noise-scale 0 ran with noise ×1 and --confidence 0
			// at 0.95 (while -1 and 1 were refused).
			for _, f := range []struct{ name, want string }{{"trials", "≥ 10"}, {"confidence", "in (0, 1), e.g. 0.95"}, {"noise-scale", "> 0 (1: the algorithm's own σ)"}} {
				if c.IsSet(f.name) && c.Float64(f.name) == 0 && c.Int(f.name) == 0 {
					return usageError{fmt.Errorf("audit: --%s 0 is not a valid value: give --%s %s, or leave it out for the default", f.name, f.name, f.want)}
				}
			}
			if c.Bool("federated-table") {
				return fedAuditTable(c)
			}
			if c.String("algo") == "" {
				return fmt.Errorf("audit: give --algo (a private algorithm, or a federated fed-… one) or --federated-table")
			}
			if audit.IsFederated(c.String("algo")) {
				return fedAudit(c)
			}
			if !c.IsSet("epsilon") {
				return fmt.Errorf("audit: give --epsilon, the claimed ε")
			}
			for _, f := range []string{"secure-aggregation", "sites", "records", "threshold", "colluders", "degree", "rounds", "local-algo", "tamper"} {
				if c.IsSet(f) {
					return fmt.Errorf("audit: --%s applies to federated algorithms (fed-…); %s is a single-site algorithm", f, c.String("algo"))
				}
			}
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

// fedSpec is the federated audit the flags ask for.
func fedSpec(c *cli.Context) audit.FedSpec {
	return audit.FedSpec{Algo: c.String("algo"), LocalAlgo: c.String("local-algo"), SecureAggregation: c.Bool("secure-aggregation"),
		Sites: c.Int("sites"), Records: c.Int("records"), Threshold: c.Int("threshold"), Colluders: c.Int("colluders"), Degree: c.Int("degree"), Rounds: c.Int("rounds"),
		Lambda: c.Float64("lambda"), Epsilon: fedEpsilon(c), Delta: c.Float64("delta"), DeltaSet: c.IsSet("delta"), R: c.Float64("radius"),
		Trials: c.Int("trials"), Seed: c.Uint64("seed"), NoiseScale: c.Float64("noise-scale"), Confidence: c.Float64("confidence"), Tamper: c.String("tamper")}
}

// fedEpsilon is the claimed ε of a federated audit: --epsilon, default 1.
func fedEpsilon(c *cli.Context) float64 {
	if !c.IsSet("epsilon") {
		return 1
	}
	return c.Float64("epsilon")
}

// fedAudit runs and prints the audit of a federated algorithm.
func fedAudit(c *cli.Context) error {
	for _, f := range []string{"mode", "task", "data", "loss", "steps", "secure-noise", "calibration"} {
		if c.IsSet(f) {
			return fmt.Errorf("audit: --%s applies to single-site algorithms; the federated audit (%s) builds its own jobs and worst-case site datasets", f, c.String("algo"))
		}
	}
	res, err := audit.AuditFederated(c.Context, fedSpec(c))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, res)
	}
	agg := "plain site release"
	if res.SecureAggregation {
		agg = fmt.Sprintf("secure aggregation, t = %d, κ = %d", res.Threshold, res.Colluders)
	}
	if res.Tamper != "" {
		agg += ", tampered announcement (" + res.Tamper + ")"
	}
	verdict := "consistent with the claims"
	if !res.Consistent {
		verdict = "VIOLATES a claim"
	}
	fmt.Fprintf(c.App.Writer, "%s (%s; %d sites of %d records, %d phase(s), noise ×%g): claimed ε = %g (δ = %.3g), confidence %g, %d trials per side — %s\n",
		res.Algorithm, agg, res.Sites, res.Records, res.Phases, res.NoiseScale, res.ClaimedEpsilon, res.Delta, res.Confidence, res.Trials, verdict)
	for _, v := range res.Views {
		fmt.Fprintf(c.App.Writer, "  %s\n", v.Summary())
		for _, n := range v.Notes {
			fmt.Fprintf(c.App.Writer, "    note: %s\n", n)
		}
	}
	fmt.Fprintf(c.App.Writer, "  worst case: loss %s; %s\n", res.Loss, res.Canary)
	return nil
}

// fedAuditTable prints docs/privacy.md's table of the federated audits: every
// registered federated algorithm × secure aggregation off/on, the view's
// claimed ε and ε_lb at noise ×1 and ×0.1 (refused combinations named).
func fedAuditTable(c *cli.Context) error {
	w := c.App.Writer
	fmt.Fprintln(w, "| algorithm | secure aggregation | view | ε claimed | ε_lb ×1 | ε_lb ×0.1 | realized / stated μ at ×1 |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, cov := range audit.FederatedCoverage() {
		for _, secure := range []bool{false, true} {
			on := map[bool]string{false: "off", true: "on"}[secure]
			if (!secure && !cov.Plain) || (secure && !cov.SecAgg) {
				why := cov.Refusal
				if i := strings.Index(why, ": "); i > 0 {
					why = why[i+2:]
				}
				if i := strings.Index(why, ", so"); i > 0 {
					why = why[:i]
				}
				fmt.Fprintf(w, "| `%s` | %s | refused: %s | | | | |\n", cov.Algo, on, why)
				continue
			}
			var res [2]*audit.FedAuditResult
			for k, scale := range []float64{1, 0.1} {
				s := fedSpec(c)
				s.Algo, s.SecureAggregation, s.NoiseScale, s.Tamper = cov.Algo, secure, scale, ""
				r, err := audit.AuditFederated(c.Context, s)
				if err != nil {
					return fmt.Errorf("%s (secure aggregation %s, ×%g): %w", cov.Algo, on, scale, err)
				}
				res[k] = r
			}
			for i, v := range res[0].Views {
				v1 := res[1].Views[i]
				claim := fmt.Sprintf("%.3g", v.ClaimedEpsilon)
				if v.Reference != "" {
					claim += fmt.Sprintf(" (reference %.3g)", v.ReferenceEpsilon)
				}
				stated := "—"
				if v.StatedLoss > 0 {
					stated = fmt.Sprintf("%.3g", v.StatedLoss)
				}
				fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s | %s | %.3g / %s |\n", cov.Algo, on, v.View, claim, fedCell(v), fedCell(v1), v.RealizedLoss, stated)
			}
		}
	}
	return nil
}

// fedCell is ε_lb, bold when it violates the view's claim.
func fedCell(v audit.FedView) string {
	if !v.Consistent {
		return fmt.Sprintf("**%.2f**", v.EpsilonLowerBound)
	}
	return fmt.Sprintf("%.2f", v.EpsilonLowerBound)
}
