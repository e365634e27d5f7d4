package experiment

import (
	"fmt"
	"math"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/pairwise"
)

// SiteFacts are the public facts of a federated job that decide how a
// site prepares its records: every site, the simulation of a federation
// and the coordinator's evaluator read them from the job (and the schema
// it or the site carries), so that they all map a record the same way.
// Whether the job is private is not one of them: a non-private job is
// prepared as a private one (SiteMap).
type SiteFacts struct {
	// CentresPrivately: the algorithm centres the records privately
	// itself (fedalgo.CentresPrivately) and needs them by a linear map.
	CentresPrivately bool
	// Schema is the public feature-bounds schema the sites apply (with
	// every feature bounded); nil: Scale.
	Schema *data.Schema
	// Scale is the map without a schema: "none" (or ""), "minmax" or
	// "standard" (fitted on the records given to SiteMap: data-dependent).
	Scale string
	// Radius is R: every prepared record has ‖x‖ ≤ R (0: no clip).
	Radius float64
}

// The two ways box-scaled records meet ‖x‖ ≤ R (model.Preprocessing.Norm).
const (
	NormClip   = "clip"
	NormDivide = "divide"
)

// BoundsNorm is the one rule for how box-scaled records (a schema's box
// map, or feature ranges estimated under DP) meet ‖x‖ ≤ R, in a federated
// job (SiteMap) and in single-site `pairfed train` (Spec.BoundsNorm's
// default) alike: NormDivide when R > 0 and the algorithm centres
// privately (it needs the records by a linear map), NormClip for every
// other, private or not (see SiteMap for why a non-private job clips too;
// single-site: docs/results/site-prep.md, "Single-site pairfed train").
func BoundsNorm(centresPrivately bool, R float64) string {
	if R > 0 && centresPrivately {
		return NormDivide
	}
	return NormClip
}

// SiteMap is the one rule for preparing a site's records in a federated
// job: it returns the per-record map (the model artefact's
// model.Preprocessing, without the loader) that PrepareModelRecords
// applies. With a schema: the schema's box map, then
//
//   - an algorithm that centres privately reads the records multiplied
//     by R/M, M the box's largest norm: linear, ‖x‖ ≤ R by construction
//     (the clip only absorbs rounding), nothing shrunk towards the box's
//     centre, which is not the data's;
//   - every other job's records are clipped to R. For a private job the
//     clip is part of its sensitivity argument (every record has ‖x‖ ≤ R
//     whatever it holds). A non-private job is clipped too, by
//     measurement (docs/results/site-prep.md: fed-avg, 4 sites, 10
//     seeds — clip ahead by 0.016–0.028 AUC on messidor and ijcnn1 in
//     every seed, divide by 0.003–0.014 on diabetes, level on a9a; M
//     grows as √d, so R/M shrinks every record of a wide box well below
//     R at a fixed step size) and so that a site's map depends on one
//     fact only (centring or not): the simulation, the workers, the
//     evaluator and the artefacts agree by construction.
//
// Single-site `pairfed train` applies the same rule (BoundsNorm) to its
// box-scaled records (Spec.BoundsNorm's default).
//
// Without a schema: f.Scale (minmax and standard fitted on fit), then the
// clip to R. With R = 0 nothing is clipped nor divided.
func SiteMap(f SiteFacts, fit *pairwise.Dataset) (*model.Preprocessing, error) {
	R := f.Radius
	if R < 0 || math.IsNaN(R) || math.IsInf(R, 0) {
		// data.Clip's words: the workers' --radius reached it first.
		return nil, fmt.Errorf("data: clipping radius %v must be positive and finite (0 disables clipping)", R)
	}
	m := &model.Preprocessing{Scale: f.Scale, Norm: NormClip, Radius: R}
	if f.Schema != nil {
		m.Scale, m.Schema = "bounds", f.Schema
		m.Norm = BoundsNorm(f.CentresPrivately, R)
		return m, nil
	}
	switch f.Scale {
	case "", "none":
		m.Scale = "none"
	default:
		sc, err := data.FitScaler(f.Scale, fit)
		if err != nil {
			return nil, err
		}
		m.Fitted = &model.Fitted{Kind: sc.Kind, Shift: sc.Shift, Scale: sc.Scale}
	}
	return m, nil
}
