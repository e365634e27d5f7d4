package experiment

import (
	"fmt"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// Privacy is the privacy section of a report: the algorithm's own statement
// (the paper's formula, constants and every σ) and, beside it, what pairfed's
// accountants give for the same noisy releases.
type Privacy struct {
	*pairwise.PrivacyReport
	// Accounting composes the run's releases with every accountant
	// (exact Gaussian DP, RDP with the CKS conversion, zCDP, basic and
	// advanced composition; disjoint releases in parallel) at
	// δ − failure_delta. Nil when the run has no noisy release.
	Accounting *dp.Report `json:"accounting,omitempty"`
	// Preprocessing is the data preparation's part of the statement:
	// scaling, the DP feature-range release if any (its own entry, not
	// in Accounting, which covers the algorithm's releases), the total
	// (ε, δ), and why the run is not private end to end if it is not.
	Preprocessing *Preprocessing `json:"preprocessing,omitempty"`
	// Neighbours states the neighbouring relation the guarantee is
	// stated in (replace-one within the training split, n public).
	Neighbours string `json:"neighbours,omitempty"`
}

// account composes the releases of a private run. The sensitivities are the
// paper's bounds (per release, as the algorithm reports them), so the
// accountants' ε is the privacy of the same mechanism accounted more (or
// less) tightly than its paper does.
func account(p *pairwise.PrivacyReport) (*dp.Report, error) {
	if p == nil || len(p.Sigmas) == 0 {
		return nil, nil
	}
	if p.Mechanism == "subsampled-gaussian" {
		return accountSubsampled(p)
	}
	if len(p.Sigmas) != len(p.Sensitivity) {
		return nil, fmt.Errorf("experiment: %d noise scales but %d sensitivities", len(p.Sigmas), len(p.Sensitivity))
	}
	var rels []dp.Release
	for i, s := range p.Sigmas {
		r := dp.Release{Sensitivity: p.Sensitivity[i], Label: fmt.Sprintf("release %d", i+1)}
		switch p.Mechanism {
		case "gaussian":
			r.Mechanism, r.Sigma = dp.MechanismGaussian, s
		case "laplace":
			r.Mechanism, r.Scale = dp.MechanismLaplace, s
		default:
			return nil, nil // no accountant for this mechanism
		}
		if r.Sensitivity == 0 {
			continue // a release that reads no record (e.g. a data-independent point)
		}
		if p.Disjoint {
			r.Partition = fmt.Sprintf("subset %d", i+1)
		}
		rels = append(rels, r)
	}
	if len(rels) == 0 {
		return nil, nil
	}
	delta := p.Delta - p.FailureDelta
	rep, err := dp.Compose(rels, delta)
	if err != nil {
		return &rep, err
	}
	return &rep, nil
}

// accountSubsampled accounts a run of Releases Poisson-subsampled Gaussian
// steps (pairwise dp-pair-sgd) with the subsampled-Gaussian RDP accountant,
// the only one here that models subsampling.
func accountSubsampled(p *pairwise.PrivacyReport) (*dp.Report, error) {
	if len(p.Sigmas) != 1 || len(p.Sensitivity) != 1 || !(p.SampleRate > 0) || p.Releases < 1 {
		return nil, fmt.Errorf("experiment: a subsampled-gaussian report needs one σ, one sensitivity, q > 0 and ≥ 1 release")
	}
	rel := dp.Neighbouring(p.Neighbouring)
	if rel == "" {
		rel = dp.ReplaceOne
	}
	delta := p.Delta - p.FailureDelta
	eps, order, err := dp.SubsampledGaussianEpsilon(p.SampleRate, p.Sigmas[0]/p.Sensitivity[0], p.Releases, delta, rel)
	if err != nil {
		return nil, err
	}
	e := dp.Estimate{Method: dp.MethodRDP, OK: true, Epsilon: eps, Delta: delta, Order: float64(order),
		Description: fmt.Sprintf("Rényi DP of the Poisson-subsampled Gaussian (Mironov, Talwar & Zhang 2019): %d steps at q = %.4g, noise multiplier %.6g, %s neighbours, converted by Canonne, Kamath & Steinke 2020 Prop 12 at α = %d",
			p.Releases, p.SampleRate, p.Sigmas[0]/p.Sensitivity[0], rel, order)}
	return &dp.Report{Delta: delta, Releases: p.Releases, Methods: []dp.Estimate{e}, Best: e}, nil
}
