package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/internal/onnxeval"
)

// diabetesRanges are the ranges of schemas/diabetes.json, in column order.
var diabetesRanges = [][2]float64{{0, 20}, {0, 300}, {0, 140}, {0, 80}, {0, 1000}, {0, 70}, {0, 2.5}, {21, 90}}

// randomDiabetesCSV writes n random records in diabetesCSV's layout
// (patient_id, the 8 features, outcome) with values drawn 20 % beyond
// each schema range on both sides (so the box clip acts), and an empty
// field (a missing value) in 1 of 25 when missing is set. It returns the
// raw feature rows, NaN where a value is missing.
func randomDiabetesCSV(t *testing.T, path string, n int, missing bool) [][]float64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(24, 3))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := csv.NewWriter(f)
	w.Write([]string{"patient_id", "pregnancies", "glucose", "blood_pressure", "skin_thickness", "insulin", "bmi", "pedigree", "age", "outcome"})
	rows := make([][]float64, n)
	for i := range rows {
		rec := []string{"R" + strconv.Itoa(i)}
		for _, r := range diabetesRanges {
			w := r[1] - r[0]
			v := r[0] - 0.2*w + rng.Float64()*1.4*w
			if missing && rng.IntN(25) == 0 {
				rows[i] = append(rows[i], math.NaN())
				rec = append(rec, "")
				continue
			}
			rows[i] = append(rows[i], v)
			rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
		}
		w.Write(append(rec, strconv.Itoa(1-2*rng.IntN(2))))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// `pairfed export` of a trained model, run by the independent evaluator
// (internal/onnxeval) on the raw columns of 1 000 records, gives the
// scores `pairfed score` writes for the same file to 1e-9: with the public
// schema (norm divide), with DP-released ranges (norm clip), and with the
// schema's imputation constants on a file with missing values.
func TestExportONNXMatchesScoreCommand(t *testing.T) {
	dir := t.TempDir()
	train, _ := diabetesCSV(t, dir, nil, "")
	for name, extra := range map[string][]string{
		"schema-divide":  {"--epsilon", "1", "--feature-bounds", "../../schemas/diabetes.json"},
		"private-clip":   {"--epsilon", "1", "--scale", "private", "--algo", "dp-gd-grad", "--loss", "logistic", "--steps", "3", "--bounds-norm", "clip"},
		"schema-impute":  {"--epsilon", "1", "--feature-bounds", "../../schemas/diabetes.json", "--impute", "schema"},
		"not-private-mm": {"--scale", "minmax", "--algo", "pgd"},
	} {
		t.Run(name, func(t *testing.T) {
			m := filepath.Join(dir, name+".json")
			args := append([]string{"--data", train, "--ignore-columns", "patient_id", "--runs", "1"}, extra...)
			trainModel(t, m, args...)
			onx := filepath.Join(dir, name+".onnx")
			out, err := runCLI(t, "export", "--model", m, "--out", onx)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !strings.Contains(out, `input "features" [N, 8] float64 = raw pregnancies, glucose`) {
				t.Errorf("export does not name the input layout:\n%s", out)
			}
			gen := filepath.Join(dir, name+"-records.csv")
			rows := randomDiabetesCSV(t, gen, 1000, name == "schema-impute")
			scores := filepath.Join(dir, name+"-scores.csv")
			if out, err := runCLI(t, "score", "--model", m, "--data", gen, "--id-column", "patient_id", "--out", scores); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			want := readScoreColumn(t, scores)
			b, err := os.ReadFile(onx)
			if err != nil {
				t.Fatal(err)
			}
			g, err := onnxeval.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			res, err := g.Run(map[string]*onnxeval.Tensor{"features": onnxeval.Matrix(rows)})
			if err != nil {
				t.Fatal(err)
			}
			got := res["score"].F
			if len(got) != 1000 || len(want) != 1000 {
				t.Fatalf("%d ONNX scores, %d pairfed scores", len(got), len(want))
			}
			var worst float64
			for i := range got {
				d := math.Abs(got[i] - want[i])
				if math.IsNaN(d) {
					d = math.Inf(1)
				}
				worst = max(worst, d)
			}
			t.Logf("max |ONNX − pairfed score| over 1000 records: %.3g", worst)
			if !(worst <= 1e-9) {
				t.Fatalf("the export's scores differ from pairfed score's by %g (> 1e-9)", worst)
			}
			if g.Metadata["pairfed.feature_names"] != `["pregnancies","glucose","blood_pressure","skin_thickness","insulin","bmi","pedigree","age"]` {
				t.Errorf("feature names %s", g.Metadata["pairfed.feature_names"])
			}
			if name == "not-private-mm" {
				if g.Metadata["privacy.private"] != "false" {
					t.Errorf("a non-private model's export says private = %s", g.Metadata["privacy.private"])
				}
			} else if e, _ := strconv.ParseFloat(g.Metadata["privacy.epsilon"], 64); g.Metadata["privacy.private"] != "true" || !(e > 0.99 && e <= 1) {
				t.Errorf("certificate metadata private %s ε %s", g.Metadata["privacy.private"], g.Metadata["privacy.epsilon"])
			}
		})
	}
}

// readScoreColumn reads the score column of a `pairfed score` CSV.
func readScoreColumn(t *testing.T, path string) []float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	for _, r := range recs[1:] {
		v, err := strconv.ParseFloat(r[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// Other formats are refused with the way out named; so is a model file
// that is not one.
func TestExportRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "pmml"}, "pmml is not implemented: use --format onnx"},
		{[]string{"--format", "tflite"}, `"tflite" is not a known format`},
	} {
		out, err := runCLI(t, append([]string{"export", "--model", "x.json", "--out", filepath.Join(dir, "m.onnx")}, c.args...)...)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err %v (exit %d), want %q\n%s", c.args, err, exitCode(err), c.want, out)
		}
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"format": "other"}`), 0o644)
	if _, err := runCLI(t, "export", "--model", bad, "--out", filepath.Join(dir, "m.onnx")); err == nil || !strings.Contains(err.Error(), "not a pairfed model file") {
		t.Errorf("err %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "m.onnx")); err == nil {
		t.Error("a refused export wrote a file")
	}
}

// `pairfed card` writes card.md and card.html with the plain-language
// guarantee; with --eval the evaluation's AUC and interval, marked as
// computed on the evaluation file; an evaluation of another task is
// refused.
func TestCardCommand(t *testing.T) {
	dir := t.TempDir()
	train, test := diabetesCSV(t, dir, nil, "")
	m := filepath.Join(dir, "m.json")
	trainModel(t, m, "--data", train, "--ignore-columns", "patient_id", "--epsilon", "1", "--runs", "1", "--feature-bounds", "../../schemas/diabetes.json")
	evOut, err := runCLI(t, "evaluate", "--model", m, "--data", test, "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, evOut)
	}
	evFile := filepath.Join(dir, "eval.json")
	os.WriteFile(evFile, []byte(evOut), 0o644)
	var ev Evaluation
	if err := json.Unmarshal([]byte(evOut), &ev); err != nil {
		t.Fatal(err)
	}
	// --out is a directory: a file name there is refused, nothing written.
	asFile := filepath.Join(dir, "card.html")
	if out, err := runCLI(t, "card", "--model", m, "--out", asFile); err == nil || !strings.Contains(out+err.Error(), "give a directory, e.g. --out "+filepath.Join(dir, "card")+"/") {
		t.Errorf("card --out card.html: %v\n%s", err, out)
	}
	if _, err := os.Stat(asFile); !os.IsNotExist(err) {
		t.Errorf("card --out card.html created %s (%v)", asFile, err)
	}
	cardDir := filepath.Join(dir, "card")
	if out, err := runCLI(t, "card", "--model", m, "--eval", evFile, "--out", cardDir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	md, err := os.ReadFile(filepath.Join(cardDir, "card.md"))
	if err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(cardDir, "card.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"at most e^ε ≈ 2.72 times more (or less) likely",
		"| 2 | glucose | [0, 300] |",
		"| AUC | " + strconv.FormatFloat(*ev.AUC, 'f', 4, 64) + " |",
		"computed by `pairfed evaluate` on the evaluation file " + test,
		"| ε | 1 |",
	} {
		if !strings.Contains(strings.ToLower(string(md)), strings.ToLower(want)) {
			t.Errorf("card.md lacks %q", want)
		}
	}
	if !strings.Contains(string(html), "at most e^ε ≈ 2.72 times more (or less) likely") || !strings.HasPrefix(string(html), "<!DOCTYPE html>") {
		t.Error("card.html lacks the privacy paragraph")
	}
	// The card holds no class count of the training records.
	if strings.Contains(string(md), "positive, ") && !strings.Contains(string(md), "("+strconv.Itoa(ev.Positive)+" positive") {
		t.Error("the card quotes class counts that are not the evaluation's")
	}
	// Another task's evaluation, and a file that is not an evaluation.
	wrong := filepath.Join(dir, "wrong.json")
	os.WriteFile(wrong, []byte(strings.Replace(evOut, `"task": "auc"`, `"task": "metric"`, 1)), 0o644)
	if _, err := runCLI(t, "card", "--model", m, "--eval", wrong, "--out", cardDir); err == nil || !strings.Contains(err.Error(), "an evaluation of a \"metric\" model") {
		t.Errorf("a metric evaluation for an auc model: %v", err)
	}
	if _, err := runCLI(t, "card", "--model", m, "--eval", m, "--out", cardDir); err == nil || !strings.Contains(err.Error(), "not the output of `pairfed evaluate --json`") {
		t.Errorf("a model file as --eval: %v", err)
	}
}
