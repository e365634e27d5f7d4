package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pairfed/pairfed/model"
	"github.com/urfave/cli/v2"
)

func cardCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:  "card",
		Usage: "write a model card (card.md and a self-contained card.html) describing a model artefact for clinicians and data stewards",
		Description: `Describes the model from what its file holds: what it predicts (task, positive class), the
   features with their public or privately released ranges and one-hot categories, the training
   data as released (the number of records, the sites and their guarantees — nothing else about
   the records), the privacy guarantee in plain words and its certificate (ε, δ, mechanism,
   accountant, neighbouring relation), and the limitations (ranking scores are not probabilities,
   range and norm clipping, population).

   Evaluation results are shown only from --eval (the JSON of pairfed evaluate --json), marked as
   computed on that file's records and not covered by the guarantee; without it the card says
   "not evaluated".

Examples:
   pairfed evaluate --model m.json --data test.csv --json > eval.json
   pairfed card --model m.json --eval eval.json --out card/`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "model file"},
			trustKeyFlag(),
			&cli.StringFlag{Name: "out", Required: true, Usage: "directory to write card.md and card.html to (created if absent)"},
			&cli.StringFlag{Name: "eval", Usage: "evaluation results: `FILE` holds the output of pairfed evaluate --json for this model"},
		},
		Action: runCard,
	})
}

func runCard(c *cli.Context) error {
	if err := checkOutputDir("--out", c.String("out")); err != nil {
		return err
	}
	// --out names a directory; a file name there would become one.
	if out := c.String("out"); !existingDir(out) {
		switch ext := strings.ToLower(filepath.Ext(out)); ext {
		case ".html", ".htm", ".md", ".json", ".txt":
			return fmt.Errorf("card: --out %s: --out is the directory card.md and card.html are written to, and %s is a file name; give a directory, e.g. --out %s", out, ext, strings.TrimSuffix(out, filepath.Ext(out))+"/")
		}
	}
	m, err := readTrustedModel(c)
	if err != nil {
		return err
	}
	var ev *model.CardEvaluation
	if p := c.String("eval"); p != "" {
		if ev, err = readCardEval(p, m); err != nil {
			return err
		}
	}
	card := model.NewCard(m, filepath.Base(c.String("model")), ev)
	html, err := card.HTML()
	if err != nil {
		return err
	}
	dir := c.String("out")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("card: --out: %w", err)
	}
	for name, body := range map[string]string{"card.md": card.Markdown(), "card.html": html} {
		if err := writeFileAtomic(filepath.Join(dir, name), []byte(body)); err != nil {
			return fmt.Errorf("card: %w", err)
		}
	}
	fmt.Fprintf(c.App.ErrWriter, "pairfed: wrote %s and %s (private: %v; evaluation: %v)\n",
		filepath.Join(dir, "card.md"), filepath.Join(dir, "card.html"), m.Certificate.Private, ev != nil)
	return nil
}

// readCardEval reads `pairfed evaluate --json` output strictly and checks
// that it is an evaluation of a model of m's task.
func readCardEval(path string, m *model.Model) (*model.CardEvaluation, error) {
	f, err := openInput("--eval", path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("--eval %s: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var e Evaluation
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("--eval %s: not the output of `pairfed evaluate --json`: %v", path, err)
	}
	if e.Task != m.Task {
		return nil, fmt.Errorf("--eval %s: an evaluation of a %q model, but the model is %q: give the evaluation of this model", path, e.Task, m.Task)
	}
	if (e.AUC == nil) == (e.KNN3 == nil) || e.N < 1 {
		return nil, fmt.Errorf("--eval %s: needs n ≥ 1 and exactly one of auc and knn3_accuracy (the output of `pairfed evaluate --json`)", path)
	}
	if e.AUC != nil && len(e.CI95) != 2 {
		return nil, fmt.Errorf("--eval %s: auc without its 95 %% interval (auc_ci95: [lo, hi])", path)
	}
	return &model.CardEvaluation{Data: e.Data, N: e.N, Positive: e.Positive, Negative: e.Negative, AUC: e.AUC,
		CI95: e.CI95, CIMethod: e.CIMethod, KNN3: e.KNN3, Note: e.Note}, nil
}

// existingDir reports whether path names a directory that exists.
func existingDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
