package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/internal/golden"
)

// JSON and error goldens of the main commands: seeded `train`,
// `simulate` and `audit` runs with --json (timings masked), and the
// messages of ten bad invocations, pinned in testdata/cli so that a
// behaviour-preserving refactor of cmd/pairfed can be diffed. Recorded
// again with `go test ./cmd/pairfed -run GoldenCLI -rewrite`.

// timingKey names the JSON fields that hold wall-clock measurements.
var timingKey = regexp.MustCompile(`(?i)(seconds|per_second|elapsed|duration|time)`)

// maskTimings replaces every timing field's value with "masked".
func maskTimings(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if timingKey.MatchString(k) {
				x[k] = "masked"
			} else {
				x[k] = maskTimings(e)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = maskTimings(e)
		}
	}
	return v
}

func TestGoldenCLIJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("seeded runs of train, simulate and audit: not in -short")
	}
	const dia = "../../datasets/diabetes"
	cases := []struct {
		name string
		args []string
	}{
		{"train-default", []string{"train", "--data", dia, "--runs", "1", "--seed", "3", "--json"}},
		{"train-private", []string{"train", "--data", dia, "--runs", "1", "--seed", "3", "--epsilon", "1", "--noise-seed", "5", "--json"}},
		{"train-metric", []string{"train", "--data", "../../datasets/messidor_features.arff", "--task", "metric", "--loss", "logistic",
			"--eta", "1", "--param-radius", "1", "--train-size", "64", "--runs", "1", "--seed", "3", "--json"}},
		{"simulate-fed-avg", []string{"simulate", "--data", dia, "--sites", "3", "--algo", "fed-avg", "--rounds", "2", "--transport", "mem", "--seed", "3", "--json"}},
		{"simulate-private", []string{"simulate", "--data", dia, "--sites", "3", "--algo", "fed-dpegd", "--epsilon", "1", "--feature-bounds", "../../schemas/diabetes.json", "--transport", "mem", "--seed", "3", "--noise-seed", "5", "--json"}},
		{"audit-dpegd", []string{"audit", "--algo", "dpegd", "--epsilon", "1", "--trials", "50", "--seed", "3", "--json"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := runCLI(t, c.args...)
			if err != nil {
				t.Fatalf("pairfed %s: %v\n%s", strings.Join(c.args, " "), err, out)
			}
			var v any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("not one JSON value: %v\n%s", err, out)
			}
			got, err := json.MarshalIndent(maskTimings(v), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			compareCLIGolden(t, "json_"+c.name+".json", append(got, '\n'))
		})
	}
}

func TestGoldenCLIErrors(t *testing.T) {
	const dia = "../../datasets/diabetes"
	cases := [][]string{
		{"train", "--data", "no-such-file.csv"},
		{"train", "--data", dia, "--algo", "no-such-algo"},
		{"train", "--data", dia, "--epsilon", "-1"},
		{"train", "--data", dia, "--epsilon", "1", "--delta", "2"},
		{"train", "--data", dia, "--task", "ranking"},
		{"train", "--data", dia, "--loss", "cubic"},
		{"train", "--data", dia, "--runs", "0"},
		{"simulate", "--data", dia, "--sites", "0", "--transport", "mem"},
		{"simulate", "--data", dia, "--algo", "fed-dpegd", "--epsilon", "1", "--rounds", "3", "--transport", "mem"},
		{"no-such-command"},
	}
	var buf bytes.Buffer
	for _, args := range cases {
		out, err := runCLI(t, args...)
		buf.WriteString("$ pairfed " + strings.Join(args, " ") + "\n")
		if err == nil {
			buf.WriteString("(no error)\n")
		} else {
			buf.WriteString("error: " + err.Error() + "\n")
		}
		if len(out) > 0 && len(out) < 2000 {
			buf.WriteString(out)
		}
		buf.WriteString("\n")
	}
	compareCLIGolden(t, "errors.txt", buf.Bytes())
}

// compareCLIGolden compares got with testdata/cli/name (or records it
// under -rewrite).
func compareCLIGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "cli", name)
	golden.Check(t, path, got, *rewrite)
}
