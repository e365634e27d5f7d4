package sweep

import (
	"bytes"
	"context"
	"encoding/csv"
	"flag"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/internal/golden"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden sweep outputs in testdata/")

func diabetes(t *testing.T) *data.Table {
	t.Helper()
	// Dim declared: a LIBSVM file's inferred dimension is data-dependent.
	tab, err := data.Load("../datasets/diabetes", data.Options{Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// goldenConfig is a small seeded sweep over both paths and both grids:
// a non-private and two private single-machine algorithms, a non-private
// and a private federated one over 2 sites, 3 budgets, 2 sizes, 2 runs,
// half of diabetes for testing (to keep the full-batch runs short).
func goldenConfig(tab *data.Table) Config {
	return Config{Train: tab, Algos: []string{"sgd-prev", "dp-local-sgd", "dp-gd-grad", "fed-avg", "fed-dp-local-sgd"},
		Epsilons: []float64{0.5, 1, 2}, Sizes: []int{64, 128}, Runs: 2, Seed: 11, Seeded: true,
		Sites: 2, Transport: "mem", TestFraction: 0.5}
}

// checkGolden compares got with testdata/name, or writes it with -rewrite.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	golden.Check(t, path, got, *rewrite)
}

// The seeded sweep's CSV and Markdown are byte-for-byte the golden files;
// the PNG plots exist, decode and have the documented size; progress
// reaches the total exactly once per run, in order.
func TestGoldenSeededSweep(t *testing.T) {
	cfg := goldenConfig(diabetes(t))
	total, err := Validate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// ε grid: sgd-prev 1 cell, dp-local-sgd 3, dp-gd-grad 3, fed-avg 1,
	// fed-dp-local-sgd 3; size grid: 5 algorithms × 2 sizes; 2 runs each.
	if want := (1 + 3 + 3 + 1 + 3 + 5*2) * 2; total != want {
		t.Fatalf("Validate: %d runs, want %d", total, want)
	}
	var calls []int
	cfg.OnRun = func(done, tot int) {
		if tot != total {
			t.Errorf("OnRun total %d, want %d", tot, total)
		}
		calls = append(calls, done)
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != total {
		t.Fatalf("OnRun called %d times, want %d", len(calls), total)
	}
	for i, d := range calls {
		if d != i+1 {
			t.Fatalf("OnRun sequence %v is not 1..%d", calls, total)
		}
	}

	var csvOut, md bytes.Buffer
	if err := res.WriteCSV(&csvOut); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "golden.csv", csvOut.Bytes())
	checkGolden(t, "golden.md", md.Bytes())

	dir := t.TempDir()
	files, err := res.WriteDir(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{CSVFile, MarkdownFile, "auc_vs_epsilon.png", "auc_vs_n.png"}
	if len(files) != len(want) {
		t.Fatalf("wrote %v, want %v", files, want)
	}
	for i, f := range files {
		if filepath.Base(f) != want[i] {
			t.Fatalf("wrote %v, want %v", files, want)
		}
	}
	b, err := os.ReadFile(files[0])
	if err != nil || !bytes.Equal(b, csvOut.Bytes()) {
		t.Errorf("results.csv differs from WriteCSV (%v)", err)
	}
	for _, f := range files[2:] {
		checkPNG(t, f)
	}
}

// checkPNG asserts that path is a non-empty PNG of PlotWidth × PlotHeight
// pixels that is not blank.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() == 0 {
		t.Fatalf("%s: empty (%v)", path, err)
	}
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != PlotWidth || b.Dy() != PlotHeight {
		t.Fatalf("%s: %dx%d pixels, want %dx%d", path, b.Dx(), b.Dy(), PlotWidth, PlotHeight)
	}
	// Something was drawn: many non-white pixels, some of them coloured.
	var dark, coloured int
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xc000 || g < 0xc000 || bl < 0xc000 {
				dark++
			}
			if max(r, g, bl)-min(r, g, bl) > 0x4000 {
				coloured++
			}
		}
	}
	if dark < 2000 || coloured < 200 {
		t.Fatalf("%s looks blank: %d dark, %d coloured pixels", path, dark, coloured)
	}
}

// The CSV is well-formed: every row has the header's fields, non-private
// algorithms have ε = inf and no δ, private rows carry their δ, seeded
// rows are labelled private = false, and the sizes are the n of the size
// grid.
func TestCSVContract(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "golden.csv"))
	if err != nil {
		t.Skip("no golden file yet")
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(recs[0], ",") != strings.Join(CSVHeader, ",") {
		t.Fatalf("header %v", recs[0])
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, r := range recs[1:] {
		algo, eps, delta := r[col["algorithm"]], r[col["epsilon"]], r[col["delta"]]
		nonPrivate := algo == "sgd-prev" || algo == "fed-avg"
		if nonPrivate != (eps == "inf") || nonPrivate != (delta == "") {
			t.Errorf("row %v: ε %q δ %q for a non-private=%v algorithm", r, eps, delta, nonPrivate)
		}
		if r[col["private"]] != "false" {
			t.Errorf("seeded row %v not labelled private=false", r)
		}
		if r[col["count"]] != "2" || r[col["metric"]] != "auc" {
			t.Errorf("row %v: count/metric", r)
		}
		n, _ := strconv.Atoi(r[col["n"]])
		if r[col["sweep"]] == GridSize && n != 64 && n != 128 {
			t.Errorf("size row with n = %d", n)
		}
		mean, err := strconv.ParseFloat(r[col["mean"]], 64)
		if err != nil || mean < 0 || mean > 1 || len(r[col["mean"]]) != len("0.0000") {
			t.Errorf("row %v: mean %q", r, r[col["mean"]])
		}
		if nonPrivate && r[col["sweep"]] == GridEpsilon && mean < 0.75 {
			t.Errorf("%s AUC %v: the non-private reference should be well above chance", algo, mean)
		}
	}
}

// Without a seeded noise source, private rows are private end to end
// (DP feature ranges by default) and say so in the CSV and the Markdown.
func TestSecureNoiseRowsArePrivate(t *testing.T) {
	res, err := Run(context.Background(), Config{Train: diabetes(t), Algos: []string{"dp-local-sgd"}, Epsilons: []float64{1}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || !res.Rows[0].Private || res.Rows[0].NotPrivateBecause != "" {
		t.Fatalf("rows %+v", res.Rows)
	}
	var c, md bytes.Buffer
	res.WriteCSV(&c)
	res.WriteMarkdown(&md)
	if !strings.HasSuffix(strings.TrimSpace(c.String()), ",true") {
		t.Errorf("CSV does not say private:\n%s", c.String())
	}
	if !strings.Contains(md.String(), "| yes |") || strings.Contains(md.String(), "NOT private") {
		t.Errorf("Markdown does not say private:\n%s", md.String())
	}
	// A data-fitted scaler makes the same algorithm not private.
	res, err = Run(context.Background(), Config{Train: diabetes(t), Algos: []string{"dp-local-sgd"}, Epsilons: []float64{1}, Scale: "minmax"})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Rows[0]; r.Private || !strings.Contains(r.NotPrivateBecause, "minmax") {
		t.Fatalf("minmax row %+v", r)
	}
}

func TestConfigErrors(t *testing.T) {
	tab := diabetes(t)
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Train: tab}, "no algorithms"},
		{Config{Train: tab, Algos: []string{"nope"}}, "unknown algorithm"},
		{Config{Train: tab, Algos: []string{"dpegd"}}, "--epsilons"},
		{Config{Train: tab, Algos: []string{"fed-avg"}}, "--sites"},
		{Config{Train: tab, Algos: []string{"sgd-prev", "sgd-prev"}}, "twice"},
		{Config{Train: tab, Algos: []string{"dpegd"}, Epsilons: []float64{0}}, "ε"},
		{Config{Train: tab, Algos: []string{"dpegd"}, Epsilons: []float64{1, 1}}, "twice"},
		{Config{Train: tab, Algos: []string{"dpegd"}, Epsilons: []float64{math.Inf(1)}}, "accepted range"},
		{Config{Train: tab, Algos: []string{"sgd-prev"}, Sizes: []int{1}}, "≥ 2"},
		{Config{Train: tab, Algos: []string{"sgd-prev"}, Sizes: []int{700}}, "exceeds the 614"},
		{Config{Train: tab, Algos: []string{"spauc"}, Loss: "hinge"}, "square"},
		{Config{Train: tab, Algos: []string{"fed-dp-gd-grad"}, Sites: 2, Task: "metric", Epsilons: []float64{1}}, "AUC only"},
		{Config{Train: tab, Algos: []string{"fed-oneshot"}, Sites: 2, Epsilons: []float64{1}}, "--local-algo"},
		{Config{Train: tab, Algos: []string{"fed-avg"}, Sites: 40, Sizes: []int{64}}, "2 records each"},
	}
	for _, c := range cases {
		_, err := Validate(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one mentioning %q", c.cfg.Algos, err, c.want)
		}
	}
}

// Algorithms get the loss and λ their proofs need unless told otherwise.
func TestDefaultsPerAlgorithm(t *testing.T) {
	tab := diabetes(t)
	cfg := Config{Train: tab, Algos: []string{"sgd-prev", "spauc", "dpegd", "dpgdsc"}, Epsilons: []float64{1}}
	if err := cfg.defaults(); err != nil {
		t.Fatal(err)
	}
	cells, err := plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range cells {
		got[c.algo] = c.exp.Loss + " " + strconv.FormatFloat(c.exp.Lambda, 'g', -1, 64)
	}
	want := map[string]string{"sgd-prev": "hinge 0", "spauc": "square 0", "dpegd": "logistic 0", "dpgdsc": "logistic 0.001"}
	for a, w := range want {
		if got[a] != w {
			t.Errorf("%s: loss/λ %q, want %q", a, got[a], w)
		}
	}
}

func TestStepTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{0.42, 0.83, "0.45 0.50 0.55 0.60 0.65 0.70 0.75 0.80"},
		{0.5, 0.6, "0.50 0.51 0.52 0.53 0.54 0.55 0.56 0.57 0.58 0.59 0.60"},
		{0, 1, "0.0 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1.0"},
		{60, 75, "60 62 64 66 68 70 72 74"},
	} {
		var labels []string
		for _, tk := range (stepTicks{}).Ticks(c.lo, c.hi) {
			labels = append(labels, tk.Label)
		}
		if got := strings.Join(labels, " "); got != c.want {
			t.Errorf("ticks(%v, %v) = %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}
