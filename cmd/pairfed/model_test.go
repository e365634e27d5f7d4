package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/pairwise"
)

// diabetesCSV writes the bundled diabetes data as CSV files with a header
// that names the features as schemas/diabetes.json does and an ID column:
// records 1–600 for training, 601–768 for testing. cols reorders or
// renames the header of the test file (nil: as the schema).
func diabetesCSV(t *testing.T, dir string, testHeader func([]string) []string, dropCol string) (train, test string) {
	t.Helper()
	tab, err := data.Load("../../datasets/diabetes", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"pregnancies", "glucose", "blood_pressure", "skin_thickness", "insulin", "bmi", "pedigree", "age"}
	// write writes records [lo, hi) under header: a name of the schema
	// gets its feature's values, another name (a renamed column) those of
	// the feature at its position.
	write := func(path string, lo, hi int, header []string) {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		w := csv.NewWriter(f)
		w.Write(append(append([]string{"patient_id"}, header...), "outcome"))
		row := make([]float64, tab.D)
		for i := lo; i < hi; i++ {
			tab.DenseRowTo(row, i)
			rec := []string{"P" + strconv.Itoa(1000+i)}
			for pos, h := range header {
				k := pos
				for kk, n := range names {
					if n == h {
						k = kk
					}
				}
				rec = append(rec, strconv.FormatFloat(row[k], 'g', -1, 64))
			}
			rec = append(rec, strconv.FormatFloat(tab.Y[i], 'g', -1, 64))
			w.Write(rec)
		}
		w.Flush()
		if err := w.Error(); err != nil {
			t.Fatal(err)
		}
	}
	train, test = filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	write(train, 0, 600, names)
	h := names
	if testHeader != nil {
		h = testHeader(append([]string(nil), names...))
	}
	if dropCol != "" {
		var kept []string
		for _, n := range h {
			if n != dropCol {
				kept = append(kept, n)
			}
		}
		h = kept
	}
	write(test, 600, 768, h)
	return train, test
}

// trainModel runs `pairfed train --json --out-model` and returns the
// reported AUC of its (single) run.
func trainModel(t *testing.T, out string, args ...string) float64 {
	t.Helper()
	stdout, stderr, err := runCLITTY(t, false, append([]string{"train", "--no-progress", "--json", "--out-model", out}, args...)...)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	var rep struct {
		AUC struct{ Values []float64 } `json:"auc"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.AUC.Values) != 1 {
		t.Fatalf("%v: %s", err, stdout)
	}
	if !strings.Contains(stderr, "wrote "+out) {
		t.Errorf("stderr does not say which model it wrote:\n%s", stderr)
	}
	return rep.AUC.Values[0]
}

// `train --epsilon 1 --out-model M` on a --test file, then `evaluate` and
// `score` on that file: the AUC is the reported one bit for bit (the same
// loader options, preprocessing map and scoring code), with a public
// schema, with privately released ranges and with the schema's ranges
// refined under DP (the model stores the refined schema and its ranges).
func TestModelScoreEvaluateReproduceTrainAUC(t *testing.T) {
	dir := t.TempDir()
	train, test := diabetesCSV(t, dir, nil, "")
	// The shipped schema with insulin's range unknown: estimated under DP.
	raw, err := os.ReadFile("../../schemas/diabetes.json")
	if err != nil {
		t.Fatal(err)
	}
	unknown := filepath.Join(dir, "unknown.json")
	edited := regexp.MustCompile(`\{"name": "insulin", "lo": 0, "hi": 1000,`).ReplaceAllString(string(raw), `{"name": "insulin", "unknown": true,`)
	if edited == string(raw) {
		t.Fatal("the schema edit changed nothing")
	}
	os.WriteFile(unknown, []byte(edited), 0o644)
	for name, extra := range map[string][]string{
		"schema":         {"--feature-bounds", "../../schemas/diabetes.json"},
		"unknown-ranges": {"--feature-bounds", unknown, "--algo", "dp-gd-grad", "--loss", "logistic", "--steps", "3"},
		"private-ranges": {"--scale", "private", "--algo", "dp-gd-grad", "--loss", "logistic", "--steps", "3"},
		"refined-ranges": {"--feature-bounds", "../../schemas/diabetes.json", "--refine-bounds", "on", "--algo", "dp-gd-grad", "--loss", "logistic", "--steps", "3"},
	} {
		t.Run(name, func(t *testing.T) {
			m := filepath.Join(dir, name+".json")
			args := append([]string{"--data", train, "--test", test, "--ignore-columns", "patient_id", "--epsilon", "1"}, extra...)
			reported := trainModel(t, m, args...)
			out, err := runCLI(t, "evaluate", "--model", m, "--data", test, "--json")
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			var ev Evaluation
			if err := json.Unmarshal([]byte(out), &ev); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if ev.AUC == nil || *ev.AUC != reported {
				t.Fatalf("evaluate AUC %v, train reported %v (want bit for bit)", ev.AUC, reported)
			}
			// Placement values lie in [0, 1], so each sample variance is at
			// most n/(n−1)·¼ and the interval at most 2·1.96·√(¼/(n₊−1) + ¼/(n₋−1)) wide.
			maxWidth := 2 * 1.96 * math.Sqrt(0.25/float64(ev.Positive-1)+0.25/float64(ev.Negative-1))
			if ev.Positive+ev.Negative != 168 || ev.CI95[0] > reported || ev.CI95[1] < reported || ev.CI95[1]-ev.CI95[0] > maxWidth {
				t.Errorf("CI %v around %v (n %d + %d, width at most %v)", ev.CI95, reported, ev.Positive, ev.Negative, maxWidth)
			}
			scores := filepath.Join(dir, name+"-scores.csv")
			if out, err := runCLI(t, "score", "--model", m, "--data", test, "--id-column", "patient_id", "--out", scores); err != nil {
				t.Fatalf("%v\n%s", err, out)
			} else if !strings.Contains(out, "NOT a probability") {
				t.Errorf("score does not say scores are not probabilities:\n%s", out)
			}
			f, err := os.Open(scores)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			recs, err := csv.NewReader(bufio.NewReader(f)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(recs[0], ",") != "patient_id,score" || len(recs) != 169 || recs[1][0] != "P1600" || recs[168][0] != "P1767" {
				t.Fatalf("scores file header %v, %d rows, first ID %v", recs[0], len(recs), recs[1])
			}
			tab, err := data.Load(test, data.Options{IgnoreColumns: []string{"patient_id"}})
			if err != nil {
				t.Fatal(err)
			}
			s := make([]float64, len(recs)-1)
			for i, r := range recs[1:] {
				if s[i], err = strconv.ParseFloat(r[1], 64); err != nil {
					t.Fatal(err)
				}
			}
			if auc := pairwise.AUC(s, tab.Y); auc != reported {
				t.Fatalf("AUC of the written scores %v, train reported %v", auc, reported)
			}
		})
	}
}

// The model file carries the certificate of its release and no statistic
// of the records outside it: no class count, no evaluation AUC, no loader
// notes; those are in the diagnostics file, marked as not covered.
func TestModelFileHasCertificateAndNoDataStatistics(t *testing.T) {
	dir := t.TempDir()
	train, test := diabetesCSV(t, dir, nil, "")
	m := filepath.Join(dir, "m.json")
	// dp-gd-grad: its statement prints σ's and parameters only. (dp-lda's
	// notes print its noisy class counts to 0.1: part of its DP release,
	// but one that matches a true count by chance about once in 180 runs (σ ≈ 7),
	// which this exact scan would flag.)
	reported := trainModel(t, m, "--data", train, "--test", test, "--ignore-columns", "patient_id", "--epsilon", "1",
		"--feature-bounds", "../../schemas/diabetes.json", "--algo", "dp-gd-grad", "--loss", "logistic", "--steps", "3")
	raw, err := os.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Certificate struct {
			Private      bool            `json:"private"`
			Epsilon      float64         `json:"epsilon"`
			Delta        float64         `json:"delta"`
			Mechanism    string          `json:"mechanism"`
			Accountant   string          `json:"accountant"`
			Neighbouring string          `json:"neighbouring"`
			N            int             `json:"n"`
			Statement    json.RawMessage `json:"statement"`
		} `json:"certificate"`
		Preprocessing struct {
			Schema json.RawMessage `json:"schema"`
			Radius float64         `json:"radius"`
			Norm   string          `json:"norm"`
		} `json:"preprocessing"`
		Provenance struct {
			DataSHA256 string `json:"data_sha256"`
		} `json:"provenance"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	c := doc.Certificate
	if !c.Private || c.Epsilon != 1 || !(c.Delta > 0) || c.Mechanism != "gaussian" || c.Accountant == "" || !strings.Contains(c.Neighbouring, "replace-one") || c.N != 600 || len(c.Statement) == 0 {
		t.Fatalf("certificate %+v", c)
	}
	if len(doc.Preprocessing.Schema) == 0 || doc.Preprocessing.Radius != 1 || doc.Preprocessing.Norm == "" || len(doc.Provenance.DataSHA256) != 64 {
		t.Fatalf("preprocessing/provenance %+v %+v", doc.Preprocessing, doc.Provenance)
	}
	// Exact statistics of the records: class counts of both files, n_test, the AUC.
	var forbidden []float64
	for _, p := range []string{train, test} {
		tab, err := data.Load(p, data.Options{IgnoreColumns: []string{"patient_id"}})
		if err != nil {
			t.Fatal(err)
		}
		forbidden = append(forbidden, float64(tab.Counts[0]), float64(tab.Counts[1]))
	}
	forbidden = append(forbidden, 168, reported)
	// Hashes are hex: a run like "6e1" in them is not a number.
	text := regexp.MustCompile(`"(checksum|data_sha256)": "[^"]*"`).ReplaceAllString(string(raw), `"hash": ""`)
	holds := func(text string) (found []string) {
		for _, tok := range regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?`).FindAllString(text, -1) {
			v, err := strconv.ParseFloat(tok, 64)
			if err != nil {
				continue
			}
			for _, f := range forbidden {
				if v == f {
					found = append(found, tok)
				}
			}
		}
		return found
	}
	if f := holds(text); len(f) > 0 {
		t.Errorf("the model file holds %v, statistics of the records (class counts, n_test or AUC)", f)
	}
	for _, key := range []string{`"auc":`, `"counts":`, `"classes":`, `"n_test":`, `"objective":`, `"imputed":`, `"dropped":`} {
		if strings.Contains(text, key) {
			t.Errorf("the model file has a %s field", key)
		}
	}
	diag, err := os.ReadFile(filepath.Join(dir, "m.diagnostics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Covered *bool `json:"covered_by_privacy_guarantee"`
		Report  struct {
			AUC struct{ Values []float64 } `json:"auc"`
		} `json:"report"`
	}
	// The scan finds them where they are: the diagnostics file.
	if f := holds(string(diag)); len(f) < 3 {
		t.Errorf("the scan found only %v in the diagnostics file (want the class counts and the AUC): the scan is broken", f)
	}
	if err := json.Unmarshal(diag, &d); err != nil || d.Covered == nil || *d.Covered || len(d.Report.AUC.Values) != 1 || d.Report.AUC.Values[0] != reported {
		t.Fatalf("diagnostics %v: %s", err, diag)
	}
}

// A changed, truncated or foreign model file is refused with a clear error.
func TestModelFileTamperedTruncatedRefused(t *testing.T) {
	dir := t.TempDir()
	train, test := diabetesCSV(t, dir, nil, "")
	m := filepath.Join(dir, "m.json")
	trainModel(t, m, "--data", train, "--test", test, "--ignore-columns", "patient_id", "--epsilon", "1", "--feature-bounds", "../../schemas/diabetes.json")
	raw, err := os.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	// Another ε in the certificate.
	epsAt := strings.Index(string(raw), `"epsilon": 1,`)
	if epsAt < 0 {
		t.Fatalf("no epsilon in %s", raw)
	}
	cases := map[string]struct {
		content []byte
		want    string
	}{
		"tampered-epsilon": {[]byte(strings.Replace(string(raw), `"epsilon": 1,`, `"epsilon": 0.5,`, 1)), "checksum mismatch"},
		"tampered-weight":  {[]byte(regexp.MustCompile(`("weights": \[\s*-?)0\.`).ReplaceAllString(string(raw), "${1}1.")), "checksum mismatch"},
		"truncated":        {raw[:len(raw)/2], "truncated"},
		"unknown-field":    {[]byte(strings.Replace(string(raw), `"task":`, `"calibrated": true, "task":`, 1)), `unknown field "calibrated"`},
		"other-json":       {[]byte(`{"features": []}`), "not a pairfed model file"},
		"future-version":   {[]byte(strings.Replace(string(raw), `"version": 1,`, `"version": 2,`, 1)), "version 2 is not supported"},
	}
	for name, tc := range cases {
		if string(tc.content) == string(raw) {
			t.Fatalf("%s: the edit changed nothing", name)
		}
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, tc.content, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{"score", "evaluate"} {
			out, err := runCLI(t, cmd, "--model", p, "--data", test)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s %s: error %v, want %q\n%s", cmd, name, err, tc.want, out)
			}
		}
	}
}

// A data file whose feature columns differ from the model's is refused,
// and the error names the difference.
func TestModelScoreRefusesDifferentColumns(t *testing.T) {
	cases := map[string]struct {
		header func([]string) []string
		drop   string
		want   []string
	}{
		"renamed":   {func(h []string) []string { h[1] = "glucoze"; return h }, "", []string{`missing "glucose"`, `unexpected "glucoze"`, "renamed?"}},
		"missing":   {nil, "insulin", []string{`missing "insulin"`}},
		"reordered": {func(h []string) []string { h[5], h[7] = h[7], h[5]; return h }, "", []string{"reordered", `column "age" is feature 6`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			train, _ := diabetesCSV(t, dir, nil, "")
			m := filepath.Join(dir, "m.json")
			trainModel(t, m, "--data", train, "--ignore-columns", "patient_id", "--epsilon", "1", "--feature-bounds", "../../schemas/diabetes.json")
			_, test := diabetesCSV(t, t.TempDir(), tc.header, tc.drop)
			for _, cmd := range []string{"score", "evaluate"} {
				out, err := runCLI(t, cmd, "--model", m, "--data", test)
				if err == nil {
					t.Fatalf("%s accepted %s:\n%s", cmd, name, out)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: error %q lacks %q", cmd, err, w)
					}
				}
			}
		})
	}
}

// DeLong's interval against a hand-computed case and the AUC itself.
func TestDeLongCI(t *testing.T) {
	s := []float64{0.9, 0.8, 0.7, 0.6, 0.55, 0.5, 0.4, 0.3, 0.2, 0.1}
	y := []float64{1, 1, -1, 1, 1, -1, -1, 1, -1, -1}
	lo, hi, np, nn := delongCI(s, y)
	// By hand: AUC = 0.8; placements V10 = (1, 1, .8, .8, .4) and
	// V01 = (.4, .8, .8, 1, 1), sample variances .06 each, so
	// SE = √(.06/5 + .06/5) = √.024 and the interval 0.8 ± 1.96·SE,
	// clipped to 1 above.
	if auc := pairwise.AUC(s, y); auc != 0.8 && math.Abs(auc-0.8) > 1e-15 {
		t.Fatalf("AUC %v", auc)
	}
	wantLo := 0.8 - 1.96*math.Sqrt(0.024)
	if np != 5 || nn != 5 || math.Abs(lo-wantLo) > 1e-12 || hi != 1 {
		t.Fatalf("CI [%v, %v] (n %d, %d), want [%v, 1]", lo, hi, np, nn, wantLo)
	}
}

// `simulate --out-model` writes the federated job's global model with the
// evaluator's map: `evaluate` on the --test file gives the simulated AUC
// bit for bit, and the certificate lists every site's guarantee.
func TestSimulateOutModelEvaluate(t *testing.T) {
	dir := t.TempDir()
	train, test := diabetesCSV(t, dir, nil, "")
	for name, extra := range map[string][]string{
		"private-schema": {"--algo", "fed-dp-gd-grad", "--epsilon", "1", "--rounds", "2", "--feature-bounds", "../../schemas/diabetes.json"},
		"fedavg-minmax":  {"--algo", "fed-avg", "--rounds", "2"},
	} {
		t.Run(name, func(t *testing.T) {
			m := filepath.Join(dir, name+".json")
			args := append([]string{"simulate", "--data", train, "--test", test, "--ignore-columns", "patient_id", "--sites", "3",
				"--transport", "mem", "--json", "--no-progress", "--out-model", m}, extra...)
			stdout, stderr, err := runCLITTY(t, false, args...)
			if err != nil {
				t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
			}
			var rep struct {
				AUC     struct{ Values []float64 } `json:"auc"`
				Private bool                       `json:"private"`
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.AUC.Values) != 1 {
				t.Fatalf("%v\n%s", err, stdout)
			}
			out, err := runCLI(t, "evaluate", "--model", m, "--data", test, "--json")
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			var ev Evaluation
			if err := json.Unmarshal([]byte(out), &ev); err != nil {
				t.Fatal(err)
			}
			if ev.AUC == nil || *ev.AUC != rep.AUC.Values[0] {
				t.Fatalf("evaluate AUC %v, simulate reported %v (want bit for bit)", ev.AUC, rep.AUC.Values[0])
			}
			f, err := os.Open(m)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var doc struct {
				Certificate struct {
					Private bool
					Sites   []struct{ Site string }
					Reasons []string
				}
				Algorithm struct{ Federated bool }
			}
			if err := json.NewDecoder(f).Decode(&doc); err != nil {
				t.Fatal(err)
			}
			if doc.Certificate.Private != rep.Private || !doc.Algorithm.Federated {
				t.Fatalf("certificate private %v, simulate private %v; federated %v", doc.Certificate.Private, rep.Private, doc.Algorithm.Federated)
			}
			if rep.Private && len(doc.Certificate.Sites) != 3 || !rep.Private && len(doc.Certificate.Reasons) == 0 {
				t.Fatalf("certificate %+v", doc.Certificate)
			}
		})
	}
}

// Records whose outcome is unknown: `score` reads a file without the label
// column (placeholder labels, never used) and writes exactly the scores of
// the same records with labels — also for a one-record file; `evaluate`
// refuses it, saying it needs labels.
func TestModelScoreUnlabeled(t *testing.T) {
	dir := t.TempDir()
	train, test := diabetesCSV(t, dir, nil, "")
	m := filepath.Join(dir, "m.json")
	trainModel(t, m, "--data", train, "--test", test, "--ignore-columns", "patient_id", "--epsilon", "1", "--feature-bounds", "../../schemas/diabetes.json")
	// The test file without its last column (outcome).
	raw, err := os.ReadFile(test)
	if err != nil {
		t.Fatal(err)
	}
	var all, one []string
	for i, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		line = line[:strings.LastIndexByte(line, ',')]
		all = append(all, line)
		if i < 2 {
			one = append(one, line)
		}
	}
	unl, single := filepath.Join(dir, "unlabeled.csv"), filepath.Join(dir, "one.csv")
	os.WriteFile(unl, []byte(strings.Join(all, "\n")+"\n"), 0o644)
	os.WriteFile(single, []byte(strings.Join(one, "\n")+"\n"), 0o644)
	scores := func(data string) string {
		t.Helper()
		out := filepath.Join(t.TempDir(), "s.csv")
		if o, err := runCLI(t, "score", "--model", m, "--data", data, "--id-column", "patient_id", "--out", out); err != nil {
			t.Fatalf("score %s: %v\n%s", data, err, o)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	labelled, unlabelled := scores(test), scores(unl)
	if labelled != unlabelled || strings.Count(labelled, "\n") != 169 {
		t.Fatalf("scores differ without the label column:\n%.300s\n---\n%.300s", labelled, unlabelled)
	}
	if s := scores(single); s != strings.Join(strings.SplitN(labelled, "\n", 3)[:2], "\n")+"\n" {
		t.Fatalf("one-record file: %q, want the first row of %.200q", s, labelled)
	}
	if o, err := runCLI(t, "evaluate", "--model", m, "--data", unl); err == nil || !strings.Contains(err.Error(), "no label column") {
		t.Fatalf("evaluate of an unlabeled file: %v\n%s", err, o)
	}
}

// A run that is not private end to end says why in the certificate, but
// the loader's counts of records (values imputed) stay in the diagnostics.
func TestModelNotPrivateReasonsWithoutCounts(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "imp.csv")
	os.WriteFile(csv, []byte("a,b,y\n1,?,0\n2,3,1\n3,4,0\n?,5,1\n5,6,0\n6,7,1\n"), 0o644)
	m := filepath.Join(dir, "m.json")
	trainModel(t, m, "--data", csv, "--test", csv, "--algo", "dp-gd-grad", "--loss", "logistic", "--epsilon", "1", "--steps", "2",
		"--impute", "mean", "--scale", "none")
	raw, _ := os.ReadFile(m)
	diag, _ := os.ReadFile(filepath.Join(dir, "m.diagnostics.json"))
	if !strings.Contains(string(raw), `"private": false`) || !strings.Contains(string(raw), "--impute mean replaces a missing value") {
		t.Fatalf("certificate lacks the reason:\n%s", raw)
	}
	if strings.Contains(string(raw), "values imputed") || !strings.Contains(string(diag), "(2 values imputed)") {
		t.Fatalf("record counts: in the model %v, in the diagnostics %v", strings.Contains(string(raw), "values imputed"), strings.Contains(string(diag), "(2 values imputed)"))
	}
}
