//go:build integration

package integration

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The export tests check `pairfed export` against an implementation that
// shares no code with pairfed — ONNX Runtime (npm onnxruntime-node, CPU
// provider, installed by .ci/run into testdata/onnxruntime) — and render
// `pairfed card`'s HTML in headless Chromium.

// ortRunner returns node and the runner script; it fails the test when
// ONNX Runtime is not installed (CI installs it).
func ortRunner(t *testing.T) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("no node on PATH: the ONNX Runtime check needs Node.js (Debian: apt-get install -y nodejs npm)")
	}
	dir, _ := filepath.Abs("testdata/onnxruntime")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "onnxruntime-node", "package.json")); err != nil {
		t.Fatalf("onnxruntime-node is not installed: npm ci --ignore-scripts --prefix %s (.ci/run does)", dir)
	}
	return node, filepath.Join(dir, "run.mjs")
}

// run runs the pairfed binary and fails the test on an error.
func run(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, pairfed(t), args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pairfed %s: %v\n%s", strings.Join(args, " "), err, tail(string(out), 3000))
	}
	return string(out)
}

// diabetesRecords writes n random records in the layout of the bundled
// LIBSVM diabetes file, each value drawn 20 % beyond its range in
// schemas/diabetes.json on both sides, and returns the raw rows.
func diabetesRecords(t *testing.T, path string, n int) [][]float64 {
	t.Helper()
	ranges := [][2]float64{{0, 20}, {0, 300}, {0, 140}, {0, 80}, {0, 1000}, {0, 70}, {0, 2.5}, {21, 90}}
	rng := rand.New(rand.NewPCG(24, 5))
	var b strings.Builder
	rows := make([][]float64, n)
	for i := range rows {
		b.WriteString([]string{"+1", "-1"}[rng.IntN(2)])
		for j, r := range ranges {
			w := r[1] - r[0]
			v := r[0] - 0.2*w + rng.Float64()*1.4*w
			rows[i] = append(rows[i], v)
			fmt.Fprintf(&b, " %d:%s", j+1, strconv.FormatFloat(v, 'g', -1, 64))
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return rows
}

// The exported model run by ONNX Runtime gives `pairfed score`'s scores to
// 1e-9 on 1 000 records that cross every range (public schema with norm
// divide; DP-released ranges with the ℓ2 clip).
func TestExportONNXRuntime(t *testing.T) {
	node, script := ortRunner(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	gen := filepath.Join(dir, "records.libsvm")
	rows := diabetesRecords(t, gen, 1000)
	in := filepath.Join(dir, "in.json")
	b, _ := json.Marshal(map[string]any{"features": rows})
	os.WriteFile(in, b, 0o644)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"schema-divide", []string{"--feature-bounds", "../schemas/diabetes.json"}},
		{"private-ranges-clip", []string{"--scale", "private", "--algo", "dp-gd-grad", "--loss", "logistic", "--steps", "3", "--bounds-norm", "clip"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := filepath.Join(dir, c.name+".json")
			run(t, ctx, append([]string{"train", "--no-progress", "--data", "../datasets/diabetes", "--epsilon", "1", "--runs", "1", "--out-model", m}, c.args...)...)
			onx := filepath.Join(dir, c.name+".onnx")
			run(t, ctx, "export", "--model", m, "--out", onx)
			scores := filepath.Join(dir, c.name+"-scores.csv")
			run(t, ctx, "score", "--model", m, "--data", gen, "--out", scores)
			f, err := os.Open(scores)
			if err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(f).ReadAll()
			f.Close()
			if err != nil || len(recs) != 1001 {
				t.Fatalf("%d score rows: %v", len(recs), err)
			}
			cmd := exec.CommandContext(ctx, node, script, onx, in)
			cmd.Dir = filepath.Dir(script)
			out, err := cmd.Output()
			if err != nil {
				var stderr string
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = string(ee.Stderr)
				}
				t.Fatalf("onnxruntime: %v\n%s", err, tail(stderr, 3000))
			}
			var res struct {
				Outputs map[string][]float64
				Dims    map[string][]int
			}
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("onnxruntime output: %v\n%s", err, tail(string(out), 2000))
			}
			got := res.Outputs["score"]
			if len(got) != 1000 || len(res.Dims["prepared"]) != 2 || res.Dims["prepared"][1] != 8 {
				t.Fatalf("onnxruntime: %d scores, prepared dims %v", len(got), res.Dims["prepared"])
			}
			var worst float64
			for i, r := range recs[1:] {
				want, err := strconv.ParseFloat(r[1], 64)
				if err != nil {
					t.Fatal(err)
				}
				worst = max(worst, math.Abs(got[i]-want))
				if math.IsNaN(got[i]) {
					worst = math.Inf(1)
				}
			}
			t.Logf("max |onnxruntime − pairfed score| over 1000 records: %.3g", worst)
			if !(worst <= 1e-9) {
				t.Fatalf("ONNX Runtime's scores differ from pairfed score's by %g (> 1e-9)", worst)
			}
		})
	}
}

// `pairfed card` renders in headless Chromium: the DOM has the
// plain-language privacy paragraph, the certificate and the evaluation
// marked as computed on its file; a screenshot is saved and logged.
func TestModelCardChromium(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	m := filepath.Join(dir, "m.json")
	run(t, ctx, "train", "--no-progress", "--data", "../datasets/diabetes", "--feature-bounds", "../schemas/diabetes.json", "--epsilon", "1", "--runs", "1", "--out-model", m)
	ev := filepath.Join(dir, "eval.json")
	os.WriteFile(ev, []byte(run(t, ctx, "evaluate", "--model", m, "--data", "../datasets/diabetes", "--json")), 0o644)
	card := filepath.Join(dir, "card")
	run(t, ctx, "card", "--model", m, "--eval", ev, "--out", card)
	url := "file://" + filepath.Join(card, "card.html")
	dom := string(browse(t, ctx, url, "--dump-dom"))
	for _, want := range []string{
		"This model is protected by record-level differential privacy with ε = 1",
		"at most e^ε ≈ 2.72 times more (or less) likely whether or not any one patient's record was in the training data",
		"<td>Neighbouring relation</td>",
		"<td>glucose</td>",
		"<td>AUC</td>",
		"Computed by `pairfed evaluate` on the evaluation file",
		"NOT probabilities",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the card's DOM lacks %q", want)
		}
	}
	shot := screenshot(t, ctx, url, "model-card.png")
	t.Logf("model card screenshot: %s", shot)
}
