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
}

// account composes the releases of a private run. The sensitivities are the
// paper's bounds (per release, as the algorithm reports them), so the
// accountants' ε is the privacy of the same mechanism accounted more (or
// less) tightly than its paper does.
func account(p *pairwise.PrivacyReport) (*dp.Report, error) {
	if p == nil || len(p.Sigmas) == 0 {
		return nil, nil
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
