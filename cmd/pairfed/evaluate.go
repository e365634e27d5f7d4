package main

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/model/modeldata"

	"github.com/pairfed/pairfed/pairwise"
	"github.com/urfave/cli/v2"
)

func evaluateCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:  "evaluate",
		Usage: "evaluate a model artefact on a labelled file: AUC with a DeLong 95 % interval and ROC points (metric models: KNN-3 accuracy)",
		Description: `Reads --data as score does (the model's loader options and preprocessing map, the code training
   used), scores every record and compares with its label. On the test file a run was evaluated on,
   the AUC is bit for bit the one train or simulate reported for that model.

   The interval is DeLong's (DeLong, DeLong & Clarke-Pearson 1988): AUC ± 1.96·√(V₁₀/n₊ + V₀₁/n₋),
   V the sample variances of the per-record placement values; clipped to [0, 1]. It is a statement
   about this file's records, computed without privacy: do not publish it as part of a private model.
   Metric models: KNN-3 accuracy with --reference (labelled, training layout) as the neighbours.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "model file"},
			trustKeyFlag(),
			&cli.StringFlag{Name: "data", Required: true, Usage: "labelled records, in the training file's layout"},
			&cli.StringFlag{Name: "reference", Usage: "task metric: the labelled neighbours of the KNN-3 vote"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object (with ROC points)"},
			&cli.StringFlag{Name: "max-memory", Usage: "memory budget of one data file (e.g. 512MiB)"},
		},
		Action: runEvaluate,
	})
}

// Evaluation is the `pairfed evaluate --json` object.
type Evaluation struct {
	Model    string     `json:"model"`
	Data     string     `json:"data"`
	Task     string     `json:"task"`
	N        int        `json:"n"`
	Positive int        `json:"n_positive,omitempty"`
	Negative int        `json:"n_negative,omitempty"`
	AUC      *float64   `json:"auc,omitempty"`
	CI95     []float64  `json:"auc_ci95,omitempty"`
	CIMethod string     `json:"ci_method,omitempty"`
	ROC      []ROCPoint `json:"roc,omitempty"`
	KNN3     *float64   `json:"knn3_accuracy,omitempty"`
	Note     string     `json:"note"`
}

// ROCPoint is one threshold of the ROC curve: records with score ≥
// Threshold are called positive.
type ROCPoint struct {
	Threshold float64 `json:"threshold"`
	FPR       float64 `json:"fpr"`
	TPR       float64 `json:"tpr"`
}

func runEvaluate(c *cli.Context) error {
	m, err := readTrustedModel(c)
	if err != nil {
		return err
	}
	mem, err := maxMemoryFlag(c)
	if err != nil {
		return err
	}
	if m.Task == "metric" && c.String("reference") == "" {
		return usageError{fmt.Errorf("evaluate: %s is a metric model: give --reference FILE (the labelled neighbours of the KNN-3 vote, e.g. the training file)", c.String("model"))}
	}
	t, ds, _, err := modeldata.Load(m, c.String("data"), "", mem, modeldata.NeedLabels)
	if err != nil {
		return err
	}
	if err := checkModelClasses(m, c.String("model"), t); err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	if w := extraClassesWarning(m, t); w != "" {
		fmt.Fprintf(c.App.ErrWriter, "pairfed: warning: %s\n", w)
	}
	ev := &Evaluation{Model: c.String("model"), Data: c.String("data"), Task: m.Task, N: ds.N,
		Note: "computed from the records of --data without privacy: not covered by the model's guarantee"}
	if m.Task == "metric" {
		_, ref, _, err := modeldata.Load(m, c.String("reference"), "", mem, modeldata.NeedLabels)
		if err != nil {
			return fmt.Errorf("--reference: %w", err)
		}
		acc := pairwise.KNN3Accuracy(m.Metric, ref, ds)
		ev.KNN3 = &acc
	} else {
		s := m.Scores(nil, ds)
		auc := pairwise.AUC(s, ds.Y) // LinearAUC's computation: bit for bit the training evaluation
		ev.AUC = &auc
		lo, hi, np, nn := delongCI(s, ds.Y)
		ev.Positive, ev.Negative = np, nn
		ev.CI95, ev.CIMethod = []float64{lo, hi}, "DeLong (1988), normal approximation, 95 %"
		ev.ROC = rocPoints(s, ds.Y, 101)
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, ev)
	}
	w := c.App.Writer
	if ev.AUC != nil {
		fmt.Fprintf(w, "AUC %.6f  95%% CI [%.4f, %.4f] (DeLong)  n = %d (%d positive, %d negative)\n", *ev.AUC, ev.CI95[0], ev.CI95[1], ev.N, ev.Positive, ev.Negative)
	} else {
		fmt.Fprintf(w, "KNN-3 accuracy %.6f  n = %d\n", *ev.KNN3, ev.N)
	}
	fmt.Fprintln(w, "note:", ev.Note)
	return nil
}

// delongCI returns DeLong's 95 % interval for the AUC of scores s with
// labels y (±1), and the class sizes. Placement values: V₁₀(i) is the
// share of negatives a positive i beats (ties ½), V₀₁(j) the share of
// positives that beat a negative j; Var(AUC) = s²₁₀/n₊ + s²₀₁/n₋ with
// sample variances. Sorting makes it O(n log n).
func delongCI(s, y []float64) (lo, hi float64, np, nn int) {
	var pos, neg []float64
	for i, v := range s {
		if y[i] > 0 {
			pos = append(pos, v)
		} else {
			neg = append(neg, v)
		}
	}
	np, nn = len(pos), len(neg)
	if np < 2 || nn < 2 {
		return math.NaN(), math.NaN(), np, nn
	}
	sp, sn := append([]float64(nil), pos...), append([]float64(nil), neg...)
	sort.Float64s(sp)
	sort.Float64s(sn)
	// below(v, xs): number of xs < v plus half the number equal.
	below := func(v float64, xs []float64) float64 {
		lt := sort.SearchFloat64s(xs, v)
		le := sort.Search(len(xs), func(i int) bool { return xs[i] > v })
		return float64(lt) + float64(le-lt)/2
	}
	v10 := make([]float64, np)
	var auc float64
	for i, v := range pos {
		v10[i] = below(v, sn) / float64(nn)
		auc += v10[i]
	}
	auc /= float64(np)
	v01 := make([]float64, nn)
	for j, v := range neg {
		// Positives above v, ties ½: the complement of below.
		v01[j] = (float64(np) - below(v, sp)) / float64(np)
	}
	variance := func(v []float64, mean float64) float64 {
		var q float64
		for _, x := range v {
			q += (x - mean) * (x - mean)
		}
		return q / float64(len(v)-1)
	}
	se := math.Sqrt(variance(v10, auc)/float64(np) + variance(v01, auc)/float64(nn))
	return max(0, auc-1.96*se), min(1, auc+1.96*se), np, nn
}

// rocPoints returns up to k points of the ROC curve (thresholds at
// evenly spaced ranks of the sorted distinct scores, plus both ends).
func rocPoints(s, y []float64, k int) []ROCPoint {
	type sc struct{ v, y float64 }
	v := make([]sc, len(s))
	var np, nn float64
	for i := range s {
		v[i] = sc{s[i], y[i]}
		if y[i] > 0 {
			np++
		} else {
			nn++
		}
	}
	sort.Slice(v, func(a, b int) bool { return v[a].v > v[b].v })
	var all []ROCPoint
	var tp, fp float64
	all = append(all, ROCPoint{Threshold: math.Inf(1)})
	for i := 0; i < len(v); {
		j := i
		for j < len(v) && v[j].v == v[i].v {
			if v[j].y > 0 {
				tp++
			} else {
				fp++
			}
			j++
		}
		all = append(all, ROCPoint{Threshold: v[i].v, FPR: fp / nn, TPR: tp / np})
		i = j
	}
	all[0].Threshold = math.MaxFloat64 // JSON has no +Inf
	if len(all) <= k {
		return all
	}
	out := make([]ROCPoint, 0, k)
	for i := 0; i < k; i++ {
		out = append(out, all[i*(len(all)-1)/(k-1)])
	}
	return out
}

// extraClassesWarning: with more than two labels in the evaluated file,
// every label outside the model's positive classes counts as negative,
// also one the training file never had (probe 4 of issue 28: a "maybe"
// was counted as negative without a word). A model that records its
// negative labels (train --negative-classes) refuses such a label instead
// (checkModelClasses); one that does not — its negative labels were not
// declared, and the labels present in private training records are not
// public — can only warn.
func extraClassesWarning(m *model.Model, t *data.Table) string {
	if t == nil || len(t.Classes) <= 2 || m.Preprocessing.Loader.NegativeClasses != nil {
		return ""
	}
	var neg []string
	for i, c := range t.Classes {
		if !slices.Contains(t.Positive, c) {
			neg = append(neg, fmt.Sprintf("%q (%d records)", c, t.Counts[i]))
		}
	}
	return fmt.Sprintf("%s has %d distinct labels; the model's positive classes are %q and every other label counts as negative: %s — if one of them is not a label of the training file (a typo, an unknown outcome), fix or drop those records",
		t.Source, len(t.Classes), m.Preprocessing.Loader.PositiveClasses, strings.Join(neg, ", "))
}
