package experiment

import (
	"fmt"
	"math"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/pairwise"
)

// FittedModel is one model a run fitted, with everything a model artefact
// (package model) needs from the run: the parameters, the per-record
// preprocessing map that prepared its records, and the privacy statement
// of exactly this release. Spec.OnModel receives one per fit that Run
// evaluates (per run, or per fold).
type FittedModel struct {
	// Run and Fold are 0-based (Fold 0 without --folds).
	Run, Fold int
	// W is the model: d weights (auc) or a d×d row-major metric.
	W []float64
	// Algorithm is the algorithm that produced W (tune: the chosen one).
	Algorithm string
	// Eta and ParamRadius are the step size and parameter radius used
	// (Eta 0 for a private algorithm without one constant η).
	Eta, ParamRadius float64
	// NTrain is the number of records W was fitted on; Full is true when
	// they are every record of the training table (a --test file run).
	NTrain int
	Full   bool
	// Preprocessing is the map (without the loader, which the caller
	// knows): experiment.ModelScaler and PrepareModelRecords rebuild it.
	Preprocessing *model.Preprocessing
	// Privacy is the statement of this release (nil: not private).
	Privacy *Privacy
	// Private is true when the release is private end to end.
	Private bool
}

// ModelScaler builds the per-record scaler of a stored preprocessing map
// over d features with the functions training uses (Schema.ScalerWith,
// data.NewBoundsScaler, data.FitScaler, Scaler.Divide): prepare builds its
// scaler through it, so a model scores records exactly as its run
// evaluated them. p must be valid (model.Model.Validate).
func ModelScaler(p *model.Preprocessing, d int) (*data.Scaler, error) {
	var sc *data.Scaler
	switch p.Scale {
	case "bounds":
		var lo, hi []float64
		if p.Ranges != nil {
			lo, hi = p.Ranges.Lo, p.Ranges.Hi
		}
		sc = p.Schema.ScalerWith(lo, hi)
	case "private":
		sc = data.NewBoundsScaler(p.Ranges.Lo, p.Ranges.Hi)
	case "none":
		var err error
		if sc, err = data.FitScaler("none", &pairwise.Dataset{D: d}); err != nil {
			return nil, err
		}
	case "minmax", "standard":
		f := p.Fitted
		sc = &data.Scaler{Kind: f.Kind, Shift: append([]float64(nil), f.Shift...), Scale: append([]float64(nil), f.Scale...)}
	default:
		return nil, fmt.Errorf("experiment: unknown scaling %q in the model", p.Scale)
	}
	if p.Norm == "divide" && sc.Kind == "bounds" {
		sc = sc.Divide(p.Radius)
	}
	return sc, nil
}

// PrepareModelRecords applies a stored preprocessing map to raw records
// (loaded with the model's loader options): the scaler of ModelScaler,
// without the shift when the run kept sparse data unshifted, then the ℓ2
// clip to R — prepare's steps, in its order, with its functions.
func PrepareModelRecords(p *model.Preprocessing, ds *pairwise.Dataset) (*pairwise.Dataset, error) {
	sc, err := ModelScaler(p, ds.D)
	if err != nil {
		return nil, err
	}
	if err := sc.CheckApply(ds); err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	return applyMap(sc, p.Unshifted, p.Radius, ds, false)
}

// applyMap scales ds with sc (unshifted: ApplyUnshifted) and clips every
// record to ‖x‖ ≤ R (R = 0: no clip). With own set, ds is the caller's
// to overwrite (a gathered split read by nobody else): it is scaled in
// place (bit-identical values) instead of copied.
func applyMap(sc *data.Scaler, unshifted bool, R float64, ds *pairwise.Dataset, own bool) (*pairwise.Dataset, error) {
	var out *pairwise.Dataset
	switch {
	case unshifted && own:
		out = sc.ApplyUnshiftedInPlace(ds)
	case unshifted:
		out = sc.ApplyUnshifted(ds)
	case own:
		out = sc.ApplyInPlace(ds)
	default:
		out = sc.Apply(ds)
	}
	if R > 0 {
		if math.IsInf(R, 0) {
			return nil, fmt.Errorf("data: clipping radius %v must be positive and finite (0 disables clipping)", R)
		}
		// out is the scaler's fresh copy or the caller's own: clip it in
		// place (data.Clip would copy the matrix once more)
		data.ClipNormsInPlace(out, R)
	}
	return out, nil
}
