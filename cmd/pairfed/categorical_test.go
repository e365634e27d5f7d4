package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// The hospital export of issue 24 (an ID column, text categories, missing
// values, text labels) trains privately with its public schema: the
// categorical columns are one-hot encoded by the loader, the missing
// values take the schema's constants, and the run stays private.
func TestCategoricalTrainPrivate(t *testing.T) {
	args := []string{"train", "--data", "../../data/testdata/patients.csv", "--feature-bounds", "../../schemas/patients-example.json", "--epsilon", "1"}
	out, err := runCLI(t, append(args, "--impute", "schema", "--json")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var m struct {
		Private       bool
		D             int
		Notes         []string
		DataDependent []string `json:"data_dependent"`
		Diagnostics   struct {
			Data []string
		}
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !m.Private || m.D != 9 || len(m.DataDependent) != 0 {
		t.Errorf("private %v, d %d (want true, 9: 3 numeric + 2 sex + 4 admission indicators), data-dependent %q", m.Private, m.D, m.DataDependent)
	}
	// The loader's counts are exact statistics of the records: a private
	// run reports them among the diagnostics, outside the guarantee.
	if notes := strings.Join(append(m.Notes, m.Diagnostics.Data...), "\n"); !strings.Contains(notes, "2 categorical columns one-hot encoded") || !strings.Contains(notes, "imputed 6 missing values") {
		t.Errorf("notes do not say what was encoded and imputed:\n%s", notes)
	}
	// Without --impute the missing value is refused with the fix.
	out, err = runCLI(t, args...)
	if err == nil || !strings.Contains(err.Error(), `patients.csv:3:4: missing value in column 4 "bmi" (use --impute constant:V or schema`) {
		t.Errorf("without --impute: %v\n%s", err, out)
	}
}
