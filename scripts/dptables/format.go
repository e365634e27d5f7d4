package main

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// cell is one table entry: the per-evaluation scores (%) of one spec, or
// why there are none.
type cell struct {
	vals    []float64 // AUC or KNN-3 accuracy, %, one per evaluation
	obj     float64   // mean training objective (shown when the table asks)
	refused string    // the ε the paper's printed σ certifies, when refused
	err     string    // any other error
	notRun  bool      // left out by -cols/-algos/-skip
}

func (c cell) ok() bool { return !c.notRun && c.refused == "" && c.err == "" && len(c.vals) > 0 }

// meanSE returns the mean and its standard error (sample standard
// deviation over √m; 0 for a single value).
func meanSE(v []float64) (mean, se float64) {
	m := float64(len(v))
	for _, x := range v {
		mean += x
	}
	mean /= m
	if len(v) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss/(m-1)) / math.Sqrt(m)
}

// String renders the cell for a markdown table.
func (c cell) String(objective bool) string {
	switch {
	case c.notRun:
		return "not run"
	case c.refused != "":
		return "refused: certifies ε = " + c.refused
	case c.err != "":
		return "error: " + strings.ReplaceAll(c.err, "|", "/")
	case len(c.vals) == 0:
		return "—"
	}
	m, se := meanSE(c.vals)
	s := fmt.Sprintf("%.1f ± %.1f", m, se)
	if objective {
		s += fmt.Sprintf(" / %.3f", c.obj)
	}
	return s
}

// refusedRE finds the certified ε in pairwise's refusal of a printed σ
// ("--calibration paper refused: the printed σ certifies only ε = 1.23 >
// 1 …", "… certifies only ε = +Inf > 50 …" beyond the discrete-noise cap,
// or "… Laplace scale certifies only ε = …").
var refusedRE = regexp.MustCompile(`calibration paper refused: .*?certifies only ε = ([^ ;]+)`)

// cellFromError classifies a failed run: a refused paper calibration is a
// result (its certified ε is kept), anything else an error.
func cellFromError(err error) cell {
	if m := refusedRE.FindStringSubmatch(err.Error()); m != nil {
		if v, perr := strconv.ParseFloat(m[1], 64); perr == nil {
			return cell{refused: strconv.FormatFloat(v, 'g', 3, 64)}
		}
		return cell{refused: m[1]}
	}
	return cell{err: err.Error()}
}

// result holds a table's cells: cells[row][calibration block][column].
type result struct {
	t     *table
	cals  []string // calibration blocks, in order ("paper", "exact")
	cells [][][]cell
}

// calHeader names a calibration block in the header.
func calHeader(cal string) string {
	if cal == "paper" {
		return "paper σ"
	}
	return "exact"
}

// markdown renders the table: label columns, then one column block per
// calibration, then the paper's printed numbers (when the table has any).
func (r *result) markdown() string {
	t := r.t
	var b strings.Builder
	head := []string{"dataset", "setting", "algorithm"}
	for _, cal := range r.cals {
		for _, c := range t.cols {
			head = append(head, calHeader(cal)+": "+c.label)
		}
	}
	if t.printedName != "" {
		for _, c := range t.cols {
			head = append(head, t.printedName+": "+c.label)
		}
	}
	ip, ie := r.calIndex()
	both := ip >= 0 && ie >= 0
	if both {
		head = append(head, "exact − paper")
	}
	b.WriteString("| " + strings.Join(head, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat("---|", len(head)) + "\n")
	for i, row := range t.rows {
		line := []string{shortName(row.dataset), row.setting, row.algo}
		for k := range r.cals {
			for j := range t.cols {
				line = append(line, r.cells[i][k][j].String(t.objective))
			}
		}
		if t.printedName != "" {
			for j := range t.cols {
				p := "—"
				if j < len(row.printed) && row.printed[j] != "" {
					p = row.printed[j]
				}
				line = append(line, p)
			}
		}
		if both {
			line = append(line, r.rowGain(i, ip, ie))
		}
		b.WriteString("| " + strings.Join(line, " | ") + " |\n")
	}
	return b.String()
}

// shortName drops the file suffixes of a dataset's name.
func shortName(ds string) string {
	for _, s := range []string{"_features.arff", ".data", ".numer"} {
		ds = strings.TrimSuffix(ds, s)
	}
	return ds
}

// gain summarizes exact − paper over the cells where both ran. Runs with
// the same index share the split and the training subsample (the seed is
// the same), so each cell's difference is paired; the noise draws are
// independent.
type gain struct {
	cells            int     // cells where both calibrations ran
	mean             float64 // mean over those cells of the mean paired difference (points)
	higher, lower    int     // cells where exact is above / below paper by > 2 s.e. of the difference
	refused          int     // cells where the paper σ was refused and exact ran
	minDiff, maxDiff float64
}

// calIndex returns the blocks of the paper and exact calibrations (−1
// when absent).
func (r *result) calIndex() (ip, ie int) {
	ip, ie = -1, -1
	for k, c := range r.cals {
		switch c {
		case "paper":
			ip = k
		case "exact":
			ie = k
		}
	}
	return ip, ie
}

// paired returns the per-run differences exact − paper of one cell, or
// false when either did not run or the runs do not pair up.
func paired(p, e cell) ([]float64, bool) {
	if !p.ok() || !e.ok() || len(p.vals) != len(e.vals) {
		return nil, false
	}
	d := make([]float64, len(p.vals))
	for k := range d {
		d[k] = e.vals[k] - p.vals[k]
	}
	return d, true
}

// rowGain is the row's last column: the mean over its columns of the
// mean paired difference exact − paper, in points ("—" when no column
// ran under both).
func (r *result) rowGain(i, ip, ie int) string {
	var sum float64
	var k int
	for j := range r.t.cols {
		if d, ok := paired(r.cells[i][ip][j], r.cells[i][ie][j]); ok {
			m, _ := meanSE(d)
			sum += m
			k++
		}
	}
	if k == 0 {
		return "—"
	}
	return fmt.Sprintf("%+.1f", sum/float64(k))
}

func (r *result) gain() (g gain, ok bool) {
	ip, ie := r.calIndex()
	if ip < 0 || ie < 0 {
		return g, false
	}
	g.minDiff, g.maxDiff = math.Inf(1), math.Inf(-1)
	for i := range r.t.rows {
		for j := range r.t.cols {
			p, e := r.cells[i][ip][j], r.cells[i][ie][j]
			if p.refused != "" && e.ok() {
				g.refused++
				continue
			}
			d, ok := paired(p, e)
			if !ok {
				continue
			}
			m, se := meanSE(d)
			g.cells++
			g.mean += m
			g.minDiff, g.maxDiff = math.Min(g.minDiff, m), math.Max(g.maxDiff, m)
			switch {
			case m > 2*se:
				g.higher++
			case m < -2*se:
				g.lower++
			}
		}
	}
	if g.cells > 0 {
		g.mean /= float64(g.cells)
	}
	return g, true
}

// String is the summary line printed under a table.
func (g gain) String() string {
	if g.cells == 0 {
		return fmt.Sprintf("exact − paper: no cell where both ran; paper σ refused in %d cells", g.refused)
	}
	return fmt.Sprintf("exact − paper (paired by split): mean %+.1f points over %d cells (range %+.1f … %+.1f); exact higher by > 2 s.e. in %d cells, lower in %d; paper σ refused in %d cells",
		g.mean, g.cells, g.minDiff, g.maxDiff, g.higher, g.lower, g.refused)
}
