package sweep

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Number formats: fixed precision so that the files are byte-for-byte the
// same on every platform for the same results.
const (
	scoreFmt = "%.4f" // mean and std of AUC / KNN-3 accuracy
	deltaFmt = "%.4g"
)

// CSVHeader is the first line of results.csv.
var CSVHeader = []string{"sweep", "algorithm", "sites", "task", "metric", "loss", "lambda", "epsilon", "delta", "n", "count", "mean", "std", "private"}

// WriteCSV writes one line per row: the grid (epsilon or size), the
// algorithm, the sites (0: single machine), task, metric (auc or knn3),
// loss, λ, ε (inf for non-private algorithms), δ (empty for them), n,
// the number of runs, the mean and population standard deviation of the
// metric, and the end-to-end private label.
func (r *Result) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, row := range r.Rows {
		delta := ""
		if !row.NonPrivate() {
			delta = fmt.Sprintf(deltaFmt, row.Delta)
		}
		rec := []string{row.Sweep, row.Algorithm, strconv.Itoa(row.Sites), row.Task, row.Metric, row.Loss, fmtG(row.Lambda),
			fmtEps(row.Epsilon), delta, strconv.Itoa(row.N), strconv.Itoa(len(row.Values)),
			fmt.Sprintf(scoreFmt, row.Mean), fmt.Sprintf(scoreFmt, row.Std), strconv.FormatBool(row.Private)}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// privateText is the Markdown private column of an algorithm's rows.
func privateText(row Row) string {
	switch {
	case row.NonPrivate():
		return "no (non-private algorithm)"
	case row.Private:
		return "yes"
	}
	return "**no** (" + row.NotPrivateBecause + ")"
}

func sitesText(row Row) string {
	if row.Sites == 0 {
		return "—"
	}
	return strconv.Itoa(row.Sites)
}

func scoreText(row Row) string {
	return fmt.Sprintf(scoreFmt+" ± "+scoreFmt, row.Mean, row.Std)
}

// mdEscape keeps a value from breaking a table cell.
func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// WriteMarkdown writes the sweep as Markdown: a header with the set-up,
// one table per grid (algorithms × ε, algorithms × n; mean ± population
// std over the runs) and the notes.
func (r *Result) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	m := r.MetricLabel()
	fmt.Fprintf(bw, "# pairfed experiment sweep: %s\n\n", mdEscape(r.Dataset))
	fmt.Fprintf(bw, "- task: %s, metric: %s (mean ± population std over the runs)\n", r.Task, m)
	fmt.Fprintf(bw, "- data: %s, d = %d; test set: %s\n", mdEscape(r.Dataset), r.D, mdEscape(r.TestSet))
	noise := "secure noise"
	if r.Seeded {
		noise = "seeded noise: reproducible, **NOT private**"
	}
	fmt.Fprintf(bw, "- %d runs per cell, seed %d, %s\n", r.Runs, r.Seed, noise)
	if r.Sites > 0 {
		fmt.Fprintf(bw, "- federated algorithms: %d sites, %s partition\n", r.Sites, r.Partition)
	}
	if algos, by := r.rowsOf(GridEpsilon); len(algos) > 0 {
		fmt.Fprintf(bw, "\n## %s vs ε\n\nAll training records of each run (n).\n\n", m)
		head := []string{"algorithm", "sites", "loss", "private", "n"}
		for _, e := range r.Epsilons {
			head = append(head, "ε = "+fmtG(e))
		}
		head = append(head, "non-private")
		writeTableHead(bw, head)
		for _, a := range algos {
			rows := by[a]
			cells := []string{mdEscape(a), sitesText(rows[0]), rows[0].Loss, privateText(rows[0]), strconv.Itoa(rows[0].N)}
			for _, e := range r.Epsilons {
				cells = append(cells, lookup(rows, func(row Row) bool { return row.Epsilon == e }))
			}
			cells = append(cells, lookup(rows, Row.NonPrivate))
			writeTableRow(bw, cells)
		}
	}
	if algos, by := r.rowsOf(GridSize); len(algos) > 0 {
		fmt.Fprintf(bw, "\n## %s vs n\n\n", m)
		if r.SizeEpsilon > 0 {
			fmt.Fprintf(bw, "Private algorithms at ε = %s; n training records drawn at random from each run's training split.\n\n", fmtG(r.SizeEpsilon))
		} else {
			fmt.Fprintf(bw, "n training records drawn at random from each run's training split.\n\n")
		}
		head := []string{"algorithm", "sites", "loss", "private", "ε"}
		for _, n := range r.Sizes {
			head = append(head, "n = "+strconv.Itoa(n))
		}
		writeTableHead(bw, head)
		for _, a := range algos {
			rows := by[a]
			cells := []string{mdEscape(a), sitesText(rows[0]), rows[0].Loss, privateText(rows[0]), fmtEps(rows[0].Epsilon)}
			for _, n := range r.Sizes {
				cells = append(cells, lookup(rows, func(row Row) bool { return row.N == n }))
			}
			writeTableRow(bw, cells)
		}
	}
	if len(r.Notes) > 0 {
		fmt.Fprintf(bw, "\n## Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(bw, "- %s\n", mdEscape(n))
		}
	}
	return bw.Flush()
}

func lookup(rows []Row, match func(Row) bool) string {
	for _, row := range rows {
		if match(row) {
			return scoreText(row)
		}
	}
	return "—"
}

func writeTableHead(w io.Writer, head []string) {
	writeTableRow(w, head)
	sep := make([]string, len(head))
	for i := range sep {
		sep[i] = "---"
	}
	writeTableRow(w, sep)
}

func writeTableRow(w io.Writer, cells []string) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
}

// Output file names in the --out directory.
const (
	CSVFile      = "results.csv"
	MarkdownFile = "results.md"
)

// PlotFiles returns the names of the PNG plots WriteDir writes:
// <metric>_vs_epsilon.png when the ε grid has a private algorithm's row or
// ε values to draw reference lines over, <metric>_vs_n.png when sizes were
// given.
func (r *Result) PlotFiles() []string {
	var out []string
	if len(r.Epsilons) > 0 {
		if algos, _ := r.rowsOf(GridEpsilon); len(algos) > 0 {
			out = append(out, r.Metric+"_vs_epsilon.png")
		}
	}
	if algos, _ := r.rowsOf(GridSize); len(algos) > 0 {
		out = append(out, r.Metric+"_vs_n.png")
	}
	return out
}

// WriteDir writes results.csv, results.md and the plots into dir (created
// if needed) and returns the paths written.
func (r *Result) WriteDir(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	write := func(name string, f func(io.Writer) error) error {
		p := filepath.Join(dir, name)
		if err := writeFile(p, f); err != nil {
			return err
		}
		paths = append(paths, p)
		return nil
	}
	if err := write(CSVFile, r.WriteCSV); err != nil {
		return nil, err
	}
	if err := write(MarkdownFile, r.WriteMarkdown); err != nil {
		return nil, err
	}
	for _, name := range r.PlotFiles() {
		grid := GridEpsilon
		if strings.HasSuffix(name, "_vs_n.png") {
			grid = GridSize
		}
		if err := write(name, func(w io.Writer) error { return r.WritePlot(w, grid) }); err != nil {
			return nil, err
		}
	}
	return paths, nil
}

// writeFile writes path through a temporary file renamed into place, so a
// failed sweep never leaves a truncated result behind.
func writeFile(path string, f func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := f(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
