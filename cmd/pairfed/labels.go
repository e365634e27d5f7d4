package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/model"
	"github.com/urfave/cli/v2"
)

// The label set of a model (probe 4 of issue 28, row 61): a label the
// training file never had (a typo, "maybe") counts as negative in
// evaluate and score. A model can refuse it only if it records its label
// set, and that set must be public: the labels present in a private
// training file are a statistic of it. So the set is declared — the
// positive classes (--positive-classes or the schema's positive_class)
// and the negative ones (--negative-classes) — train checks the records
// against the declaration before any release, and the model records it
// (model.Loader.NegativeClasses). Without the declaration the readers
// warn, as before.

// negativeClassesFlag is train's --negative-classes.
func negativeClassesFlag() cli.Flag {
	return &cli.StringFlag{Name: "negative-classes", Usage: "declare the negative labels (`LIST`, comma-separated, e.g. 0 or healthy,unknown; numbers compare as numbers): train refuses a record whose label is neither positive nor listed, and the model records the list so that evaluate and score refuse a label training never had (without it they only warn)"}
}

// parseNegativeClasses parses --negative-classes: non-empty items, no
// duplicate, at most model.MaxClasses.
func parseNegativeClasses(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("--negative-classes %q: an empty item (give labels separated by commas)", s)
		}
		if slices.ContainsFunc(out, func(o string) bool { return sameLabel(o, f) }) {
			return nil, fmt.Errorf("--negative-classes %q: %s is given twice", s, f)
		}
		out = append(out, f)
	}
	if len(out) > model.MaxClasses {
		return nil, fmt.Errorf("--negative-classes: %d labels, more than %d", len(out), model.MaxClasses)
	}
	return out, nil
}

// sameLabel compares labels as the loader does: numerically when both are
// finite numbers (1, 1.0 and 1e0 are one label), else as spelled.
func sameLabel(a, b string) bool {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	if errA == nil && errB == nil && !math.IsInf(x, 0) && !math.IsInf(y, 0) && !math.IsNaN(x) && !math.IsNaN(y) {
		return x == y
	}
	return a == b
}

// undeclaredLabels returns, for a table read with a model's (or a run's)
// loader options, the labels that are neither positive (t.Positive: the
// loader matched the positive classes) nor in neg, with their counts.
func undeclaredLabels(t *data.Table, neg []string) []string {
	var bad []string
	for i, c := range t.Classes {
		if slices.Contains(t.Positive, c) || slices.ContainsFunc(neg, func(n string) bool { return sameLabel(n, c) }) {
			continue
		}
		bad = append(bad, fmt.Sprintf("%q (%d records)", c, t.Counts[i]))
	}
	return bad
}

// checkTrainClasses refuses, before any release, a training (or --test)
// table with a label outside the declared classes, and a declared
// negative class the loader made positive.
func checkTrainClasses(t *data.Table, flag string, neg []string) error {
	if t == nil || neg == nil {
		return nil
	}
	for _, n := range neg {
		for _, p := range t.Positive {
			if sameLabel(n, p) {
				return usageError{fmt.Errorf("train: --negative-classes lists %s, which the positive classes make positive: a label is one or the other", n)}
			}
		}
	}
	if bad := undeclaredLabels(t, neg); len(bad) > 0 {
		return fmt.Errorf("train: %s %s has labels %s that are neither positive (%s) nor declared negative (--negative-classes %s): fix or drop those records, or declare them in --negative-classes (or --positive-classes)",
			flag, t.Source, strings.Join(bad, ", "), strings.Join(t.Positive, ","), strings.Join(neg, ","))
	}
	return nil
}

// checkModelClasses refuses labels of t outside m's recorded label set
// (a model that records one); who is the command, for the message.
func checkModelClasses(m *model.Model, modelPath string, t *data.Table) error {
	neg := m.Preprocessing.Loader.NegativeClasses
	if t == nil || neg == nil {
		return nil
	}
	if bad := undeclaredLabels(t, neg); len(bad) > 0 {
		return fmt.Errorf("%s has labels %s that the model %s was not trained with: its positive classes are %q and its negative classes %q, and any other label would be counted as negative — fix or drop those records (a typo? an unknown outcome?), or train a model that declares them (train --positive-classes / --negative-classes)",
			t.Source, strings.Join(bad, ", "), modelPath, m.Preprocessing.Loader.PositiveClasses, strings.Join(neg, ","))
	}
	return nil
}
