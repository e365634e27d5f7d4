package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A model trained with categorical schema columns scores a file in the
// training file's own layout — one text column per categorical feature
// (sex, admission), an ID column passed through, a missing value imputed
// as in training, no label — and refuses a file whose categorical column
// is renamed, naming it. (score once compared the header with the
// model's indicator features, sex=F, sex=M, and refused every such file.)
func TestScoreCategoricalColumns(t *testing.T) {
	dir := t.TempDir()
	m := filepath.Join(dir, "m.json")
	if out, err := runCLI(t, "train", "--data", "../../data/testdata/patients.csv", "--feature-bounds", "../../schemas/patients-example.json",
		"--impute", "schema", "--epsilon", "1", "--runs", "1", "--out-model", m); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	csv := func(name, header string) string {
		p := filepath.Join(dir, name)
		body := header + "\nN001,66,M,31.0,emergency,150\nN002,35,F,,elective,118\nN003,80,F,22.5,transfer,171\n"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out := filepath.Join(dir, "scores.csv")
	if msg, err := runCLI(t, "score", "--model", m, "--data", csv("new.csv", "patient_id,age,sex,bmi,admission,systolic_bp"), "--id-column", "patient_id", "--out", out); err != nil {
		t.Fatalf("score: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 4 || lines[0] != "patient_id,score" || !strings.HasPrefix(lines[1], "N001,") || !strings.HasPrefix(lines[3], "N003,") {
		t.Fatalf("scores:\n%s", b)
	}
	_, err = runCLI(t, "score", "--model", m, "--data", csv("renamed.csv", "patient_id,age,gender,bmi,admission,systolic_bp"), "--id-column", "patient_id", "--out", filepath.Join(dir, "x.csv"))
	if err == nil || !strings.Contains(err.Error(), `missing "sex"`) || !strings.Contains(err.Error(), `unexpected "gender"`) {
		t.Fatalf("renamed categorical column: %v", err)
	}
}
