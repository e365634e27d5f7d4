package experiment

import "github.com/pairfed/pairfed/pairwise"

// DefaultFeatureRadius is the clipping radius R of a run that gives none:
// 1 for a private algorithm, whose sensitivity argument needs a per-record
// bound (the papers' ‖x‖ ≤ R = 1), and 0 — no clipping — for every other
// one. Clipping only serves a privacy proof: on min-max scaled data a
// record of d features has norm up to √d, so R = 1 shrinks most records by
// different factors, reorders their scores and costs AUC for nothing.
func DefaultFeatureRadius(algo string) float64 {
	if a, err := pairwise.Lookup(algo); err == nil && a.Private {
		return 1
	}
	return 0
}
