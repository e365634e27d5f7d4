package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// train --negative-classes declares the negative labels; train refuses
// records outside the declaration, and the model records it, so that
// evaluate and score refuse a label training never had (probe 4 of issue
// 28, row 61), naming the label, its count, the recorded set and the fix.
// A model without the declaration keeps the warning.
func TestModelRecordsDeclaredClasses(t *testing.T) {
	dir := t.TempDir()
	train, test := diabetesCSV(t, dir, nil, "")
	args := []string{"--data", train, "--test", test, "--ignore-columns", "patient_id", "--epsilon", "1", "--feature-bounds", "../../schemas/diabetes.json"}
	declared, plain := filepath.Join(dir, "declared.json"), filepath.Join(dir, "plain.json")
	trainModel(t, declared, append(args, "--negative-classes=-1")...)
	trainModel(t, plain, args...)
	if raw := string(mustRead(t, declared)); !strings.Contains(raw, `"negative_classes": [`) {
		t.Fatalf("the model does not record its negative classes:\n%.2000s", raw)
	}
	// Three records of the test file relabelled "maybe".
	lines := strings.Split(strings.TrimSpace(string(mustRead(t, test))), "\n")
	for i := 1; i <= 3; i++ {
		f := strings.Split(lines[i], ",")
		f[len(f)-1] = "maybe"
		lines[i] = strings.Join(f, ",")
	}
	maybe := filepath.Join(dir, "maybe.csv")
	if err := os.WriteFile(maybe, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"evaluate", "score"} {
		o, err := runCLI(t, cmd, "--model", declared, "--data", maybe)
		if err == nil {
			t.Fatalf("%s accepted a label training never had:\n%s", cmd, o)
		}
		for _, want := range []string{`"maybe" (3 records)`, `negative classes "-1"`, `positive classes are "1"`, "--negative-classes", maybe} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not say %q", cmd, err, want)
			}
		}
		if o, err := runCLI(t, cmd, "--model", declared, "--data", test); err != nil {
			t.Errorf("%s of the clean test file: %v\n%s", cmd, err, o)
		}
	}
	// Without a recorded set: the warning, as before.
	if o, err := runCLI(t, "evaluate", "--model", plain, "--data", maybe); err != nil || !strings.Contains(o, "warning") || !strings.Contains(o, `"maybe" (3 records)`) {
		t.Fatalf("evaluate of a model without negative classes: %v\n%s", err, o)
	}
	// train refuses a declaration the records contradict, and a label
	// declared both ways — before the run, writing nothing.
	out := filepath.Join(dir, "refused.json")
	for flag, want := range map[string]string{
		"--negative-classes=0":     `"-1" (`,
		"--negative-classes=1":     "which the positive classes make positive",
		"--negative-classes=-1,-1": "given twice",
		"--negative-classes=-1,":   "empty item",
	} {
		_, _, err := runCLITTY(t, false, append([]string{"train", "--no-progress", "--out-model", out, flag}, args...)...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", flag, err, want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a refused run wrote a model")
	}
	// The --test file is held to the declaration too.
	_, _, err := runCLITTY(t, false, "train", "--no-progress", "--data", train, "--test", maybe, "--ignore-columns", "patient_id", "--epsilon", "1", "--feature-bounds", "../../schemas/diabetes.json", "--negative-classes=-1", "--positive-classes", "1")
	if err == nil || !strings.Contains(err.Error(), `--test `+maybe+` has labels "maybe" (3 records)`) {
		t.Errorf("train --test with an undeclared label: %v", err)
	}
}
