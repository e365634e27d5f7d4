// Package model is the artefact a trained pairfed model is handed over
// in: a versioned, self-describing JSON file (Format, Version) that holds
// the parameters (a linear scorer w for task auc, a d×d Mahalanobis matrix
// for task metric), the feature names in order, the full per-record
// preprocessing map needed to score a raw record (the loader options, the
// feature-bounds schema verbatim or the privately released ranges, the
// scaling mode, the norm bound R and its clip/divide rule), the algorithm
// and its parameters, the privacy certificate of exactly the release that
// produced the parameters, and provenance.
//
// The file holds nothing computed from the training records outside that
// release: no class counts, no test AUC, no loader notes. Such diagnostics
// go to a separate file (Diagnostics, written as <model>.diagnostics.json)
// whose Covered field is always false.
//
// The package is pure: Encode and Decode work on io.Writer and io.Reader,
// Decode is strict (unknown fields, a second value, a wrong format or
// version, inconsistent shapes and non-finite numbers are errors naming the
// field), and scoring (Model.Scores, Model.SqDistance) is arithmetic on
// records already prepared by the same code path training used
// (experiment.PrepareModelRecords builds the map from Preprocessing).
package model
