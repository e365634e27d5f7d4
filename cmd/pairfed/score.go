package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/model/modeldata"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/urfave/cli/v2"
)

func scoreCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:  "score",
		Usage: "score the records of a file with a model artefact (ranking scores, not probabilities)",
		Description: `Reads --data as the model's training file was read (its stored loader options: format, separator,
   label and ignored columns, missing values) and prepares every record with the model's stored map
   (the feature-bounds schema or released ranges, scaling, norm bound R) — the code training used, so
   the scores are bit for bit those training evaluated. A file whose feature columns differ from the
   model's (missing, renamed, reordered) is refused with the difference named.

   Task auc: one ranking score wᵀx' per record — higher means more likely positive. It is NOT a
   probability (no calibration is stored); compare scores of one model only.
   Task metric: the squared Mahalanobis distance to the nearest record of --reference (prepared the
   same way) and that record's label (+1/−1).

   The file has the training file's columns; the label column may be absent (CSV: records whose
   outcome is unknown are read with placeholder labels, never used). Records are written in file
   order, with the --id-column value or the 1-based record number.

Examples:
   pairfed score --model m.json --data new.csv --id-column patient_id --out scores.csv
   pairfed score --model metric.json --data new.csv --reference train.csv --out near.jsonl`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "model file (pairfed train/simulate --out-model, pairfed job model)"},
			trustKeyFlag(),
			&cli.StringFlag{Name: "data", Required: true, Usage: "records to score, in the training file's layout"},
			&cli.StringFlag{Name: "out", Usage: "output file: .jsonl for JSON lines, else CSV (default: CSV on stdout)"},
			&cli.StringFlag{Name: "id-column", Usage: "CSV column (name or 1-based index) passed through as the record ID (not a feature)"},
			&cli.StringFlag{Name: "reference", Usage: "task metric: labelled records (training layout) to measure distances to"},
			&cli.StringFlag{Name: "max-memory", Usage: "memory budget of one data file (e.g. 512MiB)"},
		},
		Action: runScore,
	})
}

// maxMemoryFlag parses --max-memory (0: the default).
func maxMemoryFlag(c *cli.Context) (int64, error) {
	s := c.String("max-memory")
	if s == "" {
		setMemoryLimit(0)
		return 0, nil
	}
	v, err := data.ParseSize(s)
	if err != nil {
		return 0, usageError{fmt.Errorf("--max-memory: %w", err)}
	}
	setMemoryLimit(v)
	return v, nil
}

func runScore(c *cli.Context) error {
	if err := checkOutput("--out", c.String("out"), namedPath{"--model", c.String("model")}, namedPath{"--data", c.String("data")}, namedPath{"--reference", c.String("reference")}); err != nil {
		return err
	}
	m, err := readTrustedModel(c)
	if err != nil {
		return err
	}
	mem, err := maxMemoryFlag(c)
	if err != nil {
		return err
	}
	if m.Task == "metric" && c.String("reference") == "" {
		return usageError{fmt.Errorf("score: %s is a metric model: give --reference FILE (labelled records to measure distances to)", c.String("model"))}
	}
	if m.Task != "metric" && c.IsSet("reference") {
		return usageError{fmt.Errorf("score: --reference applies to metric models; %s is an %s model", c.String("model"), m.Task)}
	}
	idCol := c.String("id-column")
	if idCol != "" && m.Preprocessing.Loader.Format != data.FormatCSV {
		return usageError{fmt.Errorf("score: --id-column reads CSV files; the model was trained on a %s file", m.Preprocessing.Loader.Format)}
	}
	if idCol != "" && modeldata.ContainsFold(m.Features, idCol) {
		return usageError{fmt.Errorf("score: --id-column %s is one of the model's features (%s): the ID column must be a column the model does not use", idCol, strings.Join(m.Features, ", "))}
	}
	t, ds, placeholders, err := modeldata.Load(m, c.String("data"), idCol, mem, modeldata.LabelsOptional)
	if err != nil {
		return err
	}
	if placeholders == "" {
		if err := checkModelClasses(m, c.String("model"), t); err != nil {
			return fmt.Errorf("score: %w", err)
		}
	}
	var ids []string
	if idCol != "" {
		if ids, err = modeldata.ReadIDs(c.String("data"), m.Preprocessing.Loader.Sep, idCol, t.FeatureNames != nil, t.N); err != nil {
			return err
		}
	}
	cols := []string{"score"}
	var rows [][]float64
	if m.Task == "metric" {
		_, ref, _, err := modeldata.Load(m, c.String("reference"), "", mem, modeldata.NeedLabels)
		if err != nil {
			return fmt.Errorf("--reference: %w", err)
		}
		cols = []string{"sq_distance", "nearest_label"}
		rows = nearest(m, ds, ref)
	} else {
		s := m.Scores(nil, ds)
		rows = make([][]float64, len(s))
		for i, v := range s {
			rows[i] = []float64{v}
		}
	}
	var w io.Writer = c.App.Writer
	out := c.String("out")
	if out == "-" {
		// Probe 5 (issue 28): --out - wrote a file named "-"; it means
		// standard output, as without --out.
		out = ""
	}
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return fmt.Errorf("score: %w", err)
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriter(w)
	if err := writeScores(bw, strings.HasSuffix(out, ".jsonl"), idCol, ids, cols, rows); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("score: %w", err)
	}
	if placeholders != "" {
		fmt.Fprintf(c.App.ErrWriter, "pairfed: %s: %s: read with placeholder labels, which score does not use\n", c.String("data"), placeholders)
	}
	if out != "" {
		fmt.Fprintf(c.App.ErrWriter, "pairfed: wrote %d scores to %s (%s)\n", len(rows), out, m.ScoreMeaning)
	} else {
		fmt.Fprintf(c.App.ErrWriter, "pairfed: %d scores: %s\n", len(rows), m.ScoreMeaning)
	}
	return nil
}

// writeScores writes one row per record: the ID (or 1-based record
// number) and the values, as CSV or JSON lines. Floats are written in
// their shortest exact form, so the file holds the scores bit for bit.
func writeScores(w io.Writer, jsonl bool, idCol string, ids []string, cols []string, rows [][]float64) error {
	idName := "record"
	if idCol != "" {
		idName = idCol
	}
	id := func(i int) string {
		if ids != nil {
			return ids[i]
		}
		return strconv.Itoa(i + 1)
	}
	if jsonl {
		enc := json.NewEncoder(w)
		for i, r := range rows {
			obj := make(map[string]any, len(cols)+1)
			obj[idName] = id(i)
			for k, c := range cols {
				obj[c] = r[k]
			}
			if err := enc.Encode(obj); err != nil {
				return err
			}
		}
		return nil
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(append([]string{idName}, cols...)); err != nil {
		return err
	}
	for i, r := range rows {
		rec := []string{id(i)}
		for _, v := range r {
			rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// nearest returns, per record of ds, the squared Mahalanobis distance to
// the nearest reference record and that record's label (ties: the lower
// reference index).
func nearest(m *model.Model, ds, ref *pairwise.Dataset) [][]float64 {
	x, r := make([]float64, m.D), make([]float64, m.D)
	scratch := make([]float64, m.D)
	out := make([][]float64, ds.N)
	for i := 0; i < ds.N; i++ {
		ds.DenseRowTo(x, i)
		best, lab := math.Inf(1), 0.0
		for k := 0; k < ref.N; k++ {
			ref.DenseRowTo(r, k)
			if d := m.SqDistance(x, r, scratch); d < best {
				best, lab = d, ref.Y[k]
			}
		}
		out[i] = []float64{best, lab}
	}
	return out
}
