// Command metriccost measures the CPU of default metric learning (`pairfed
// train --task metric`: sgd-prev, hinge loss, frobenius-psd, honest
// selection of η and B, KNN-3 evaluation) against the training size n, for
// a base revision (and optionally a second one, -mid) and this tree,
// alternating, and writes the ratios:
//
//	go run ./scripts/metriccost [-base 611805a] [-mid REV] [-sizes 1000,2000,5000,10000] [-reps 1] [-out docs/results/metric-cost.md]
//	go run ./scripts/metriccost -gen DIR [-sizes …]   # the data files only
//
// The data are synthetic and seeded (metricShape): d = 20 standard normal
// features, the label the sign of x₀ + 0.7x₁ − 0.5x₂ plus N(0, 0.7²) noise,
// n records of which train keeps 80 %. Every command runs under
// GOMAXPROCS=1; CPU is user + system time of the process. The table also
// says whether each revision's selection (η, B), KNN-3 accuracy and final
// objective (printed to 16 digits) are this tree's.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

var (
	base  = flag.String("base", "611805a", "revision to compare with (611805a: before the step fast path)")
	mid   = flag.String("mid", "", "a second revision to compare with (e.g. the main branch before this work)")
	sizes = flag.String("sizes", "1000,2000,5000,10000", "numbers of records")
	reps  = flag.Int("reps", 1, "runs per binary and size (medians)")
	out   = flag.String("out", "docs/results/metric-cost.md", "Markdown file to write (empty: stdout only)")
	gen   = flag.String("gen", "", "only write the data files metric-N.libsvm for -sizes into this folder")
)

// notesMarker starts the part of the output file a rerun keeps.
const notesMarker = "<!-- notes: kept by scripts/metriccost -->"

type result struct {
	cpu, wall time.Duration
	knn       float64
	eta, b    float64
	objective float64
}

func main() {
	log.SetFlags(0)
	flag.Parse()
	if *gen != "" {
		for _, s := range strings.Split(*sizes, ",") {
			n, err := strconv.Atoi(s)
			if err != nil || n < 10 {
				log.Fatalf("metriccost: bad size %q", s)
			}
			metricShape(filepath.Join(*gen, fmt.Sprintf("metric-%d.libsvm", n)), n, 20)
		}
		return
	}
	tmp, err := os.MkdirTemp("", "pfmetric-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	revs := []string{*base}
	if *mid != "" {
		revs = append(revs, *mid)
	}
	var bins []string
	for i, rev := range revs {
		bin := filepath.Join(tmp, fmt.Sprintf("pairfed-%d", i))
		wt := filepath.Join(tmp, fmt.Sprintf("rev-%d", i))
		run("", "git", "worktree", "add", "--detach", wt, rev)
		defer run("", "git", "worktree", "remove", "--force", wt)
		run(wt, "go", "build", "-o", bin, "./cmd/pairfed")
		bins = append(bins, bin)
	}
	newBin := filepath.Join(tmp, "pairfed-new")
	run("", "go", "build", "-o", newBin, "./cmd/pairfed")
	bins = append(bins, newBin)
	head, _ := exec.Command("git", "describe", "--always", "--dirty").Output()

	hdr := "| n (train) |"
	sep := "|---|"
	for _, rev := range revs {
		hdr += " CPU " + rev + " |"
		sep += "---|"
	}
	hdr += " CPU after |"
	sep += "---|"
	for _, rev := range revs {
		hdr += " " + rev + " ÷ after |"
		sep += "---|"
	}
	hdr += " KNN-3 | η, B | objective (after) | same as after |"
	sep += "---|---|---|---|"
	rows := []string{hdr, sep}
	prev := make([]time.Duration, len(bins))
	growth := []string{}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 10 {
			log.Fatalf("metriccost: bad size %q", s)
		}
		file := filepath.Join(tmp, fmt.Sprintf("metric-%d.libsvm", n))
		metricShape(file, n, 20)
		res := make([][]result, len(bins))
		for r := 0; r < *reps; r++ {
			for i, bin := range bins {
				res[i] = append(res[i], train(bin, file))
			}
		}
		med := make([]result, len(bins))
		for i := range bins {
			med[i] = median(res[i])
		}
		nw := med[len(bins)-1]
		row := fmt.Sprintf("| %d (%d) |", n, n*4/5)
		for _, m := range med {
			row += fmt.Sprintf(" %.1f s |", m.cpu.Seconds())
		}
		for _, m := range med[:len(revs)] {
			row += fmt.Sprintf(" %.1f× |", m.cpu.Seconds()/nw.cpu.Seconds())
		}
		same := []string{}
		for i, m := range med[:len(revs)] {
			diff := []string{}
			if m.knn != nw.knn {
				diff = append(diff, fmt.Sprintf("KNN-3 %.4f", m.knn))
			}
			if m.eta != nw.eta || m.b != nw.b {
				diff = append(diff, fmt.Sprintf("η, B %g, %g", m.eta, m.b))
			}
			if m.objective != nw.objective {
				diff = append(diff, fmt.Sprintf("objective %.16g", m.objective))
			}
			ok := "yes"
			if len(diff) > 0 {
				ok = "no: " + strings.Join(diff, ", ")
			}
			same = append(same, revs[i]+": "+ok)
		}
		row += fmt.Sprintf(" %.4f | %g, %g | %.16g | %s |", nw.knn, nw.eta, nw.b, nw.objective, strings.Join(same, "; "))
		rows = append(rows, row)
		if prev[0] > 0 {
			g := []string{}
			for i, m := range med {
				name := "after"
				if i < len(revs) {
					name = revs[i]
				}
				g = append(g, fmt.Sprintf("×%.2f %s", m.cpu.Seconds()/prev[i].Seconds(), name))
			}
			growth = append(growth, fmt.Sprintf("→ %d: %s", n, strings.Join(g, ", ")))
		}
		for i, m := range med {
			prev[i] = m.cpu
		}
		log.Print(rows[len(rows)-1])
	}
	load, _ := os.ReadFile("/proc/loadavg")
	midFlag := ""
	if *mid != "" {
		midFlag = " -mid " + *mid
	}
	text := "`go run ./scripts/metriccost -base " + *base + midFlag + " -sizes " + *sizes + " -reps " + strconv.Itoa(*reps) + "`\n\n" +
		strings.Join(rows, "\n") + "\n\n" +
		fmt.Sprintf("CPU growth between sizes: %s.\n\n", strings.Join(growth, "; ")) +
		fmt.Sprintf("Measured %s on %d cores (load average %s); `pairfed train --data FILE --task metric --json` under GOMAXPROCS=1, medians of %d runs per binary, the binaries alternating; CPU is user + system time. After = this tree (%s).\n",
			time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:3], " "), *reps, strings.TrimSpace(string(head)))
	fmt.Print(text)
	if *out != "" {
		// Keep the hand-written notes after the marker line.
		if old, err := os.ReadFile(*out); err == nil {
			if i := strings.Index(string(old), notesMarker); i >= 0 {
				text += "\n" + string(old[i:])
			}
		}
		if err := os.WriteFile(*out, []byte(text), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// train runs the default metric train on file and reads its report.
func train(bin, file string) result {
	cmd := exec.Command(bin, "train", "--data", file, "--task", "metric", "--json")
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	start := time.Now()
	b, err := cmd.Output()
	if err != nil {
		log.Fatalf("metriccost: %s: %v", bin, err)
	}
	res := result{wall: time.Since(start), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	var rep struct {
		KNN3 struct {
			Mean float64 `json:"mean"`
		} `json:"knn3_accuracy"`
		Eta         []float64 `json:"eta"`
		ParamRadius []float64 `json:"param_radius"`
		Objective   float64   `json:"objective"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		log.Fatalf("metriccost: %s: report: %v", bin, err)
	}
	res.knn, res.objective = rep.KNN3.Mean, rep.Objective
	if len(rep.Eta) > 0 {
		res.eta = rep.Eta[0]
	}
	if len(rep.ParamRadius) > 0 {
		res.b = rep.ParamRadius[0]
	}
	return res
}

func median(rs []result) result {
	best := rs[0]
	for _, r := range rs {
		c := 0
		for _, q := range rs {
			if q.cpu <= r.cpu {
				c++
			}
		}
		if 2*c >= len(rs) && r.cpu < best.cpu || len(rs) == 1 {
			best = r
		}
	}
	return best
}

// metricShape writes n seeded records of d standard normal features as
// LIBSVM, labelled by the sign of x₀ + 0.7x₁ − 0.5x₂ + N(0, 0.7²).
func metricShape(path string, n, d int) {
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(f)
	rng := rand.New(rand.NewPCG(27, uint64(n)))
	x := make([]float64, d)
	for i := 0; i < n; i++ {
		for j := range x {
			x[j] = rng.NormFloat64()
		}
		s := x[0] + 0.7*x[1] - 0.5*x[2] + 0.7*rng.NormFloat64()
		if s > 0 {
			w.WriteString("+1")
		} else {
			w.WriteString("-1")
		}
		for j, v := range x {
			fmt.Fprintf(w, " %d:%.6g", j+1, v)
		}
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

func run(dir, name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("metriccost: %s %v: %v", name, args, err)
	}
}
