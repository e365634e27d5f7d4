// Command metriccost measures the CPU of default metric learning (`pairfed
// train --task metric`: sgd-prev, hinge loss, frobenius-psd, honest
// selection of η and B, KNN-3 evaluation) against the training size n, for
// a base revision and this tree, alternating, and writes the ratios:
//
//	go run ./scripts/metriccost [-base 611805a] [-sizes 1000,2000,5000,10000] [-reps 1] [-out docs/results/metric-cost.md]
//	go run ./scripts/metriccost -gen DIR [-sizes …]   # the data files only
//
// The data are synthetic and seeded (metricShape): d = 20 standard normal
// features, the label the sign of x₀ + 0.7x₁ − 0.5x₂ plus N(0, 0.7²) noise,
// n records of which train keeps 80 %. Every command runs under
// GOMAXPROCS=1; CPU is user + system time of the process.
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
	oldBin, newBin := filepath.Join(tmp, "pairfed-old"), filepath.Join(tmp, "pairfed-new")
	wt := filepath.Join(tmp, "base")
	run("", "git", "worktree", "add", "--detach", wt, *base)
	defer run("", "git", "worktree", "remove", "--force", wt)
	run(wt, "go", "build", "-o", oldBin, "./cmd/pairfed")
	run("", "go", "build", "-o", newBin, "./cmd/pairfed")
	head, _ := exec.Command("git", "describe", "--always", "--dirty").Output()

	rows := []string{
		"| n (train) | CPU before | CPU after | before ÷ after | KNN-3 before | KNN-3 after | η, B before | η, B after |",
		"|---|---|---|---|---|---|---|---|",
	}
	var prevOld, prevNew time.Duration
	growth := []string{}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 10 {
			log.Fatalf("metriccost: bad size %q", s)
		}
		file := filepath.Join(tmp, fmt.Sprintf("metric-%d.libsvm", n))
		metricShape(file, n, 20)
		var olds, news []result
		for r := 0; r < *reps; r++ {
			olds = append(olds, train(oldBin, file))
			news = append(news, train(newBin, file))
		}
		o, nw := median(olds), median(news)
		rows = append(rows, fmt.Sprintf("| %d (%d) | %.1f s | %.1f s | %.1f× | %.4f | %.4f | %g, %g | %g, %g |",
			n, n*4/5, o.cpu.Seconds(), nw.cpu.Seconds(), o.cpu.Seconds()/nw.cpu.Seconds(), o.knn, nw.knn, o.eta, o.b, nw.eta, nw.b))
		if prevOld > 0 {
			growth = append(growth, fmt.Sprintf("→ %d: ×%.2f before, ×%.2f after", n, o.cpu.Seconds()/prevOld.Seconds(), nw.cpu.Seconds()/prevNew.Seconds()))
		}
		prevOld, prevNew = o.cpu, nw.cpu
		log.Print(rows[len(rows)-1])
	}
	load, _ := os.ReadFile("/proc/loadavg")
	text := "`go run ./scripts/metriccost -base " + *base + " -sizes " + *sizes + " -reps " + strconv.Itoa(*reps) + "`\n\n" +
		strings.Join(rows, "\n") + "\n\n" +
		fmt.Sprintf("CPU growth between sizes: %s.\n\n", strings.Join(growth, "; ")) +
		fmt.Sprintf("Measured %s on %d cores (load average %s); `pairfed train --data FILE --task metric --json` under GOMAXPROCS=1, medians of %d runs per binary, old and new alternating; CPU is user + system time. Before = %s, after = this tree (%s).\n",
			time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:3], " "), *reps, *base, strings.TrimSpace(string(head)))
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
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		log.Fatalf("metriccost: %s: report: %v", bin, err)
	}
	res.knn = rep.KNN3.Mean
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
