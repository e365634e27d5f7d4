// Command speed regenerates the Speed table of docs/speed.md: today's figure (a
// binary built from -base, by default the branch main), the new one (this
// tree) and their ratio, measured in one run on this machine.
//
//	go run ./scripts/speed [-base main] [-reps 3] [-write]
//
// Every command is run -reps times, alternating old and new; the table shows
// medians of wall time and of CPU time (user + system, from the kernel's
// accounting of the child), since a shared, loaded machine inflates wall
// time by its load while CPU time measures the work. The per-step and
// objective rows come from `go test -bench` in this tree, where the general
// loop (today's code, kept as the reference) and the new one sit side by
// side. With -write the table replaces the text between the markers
// <!-- speed:begin --> and <!-- speed:end --> in docs/speed.md.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var (
	base     = flag.String("base", "main", "git ref of today's code")
	reps     = flag.Int("reps", 3, "repetitions of each timed command (medians are reported)")
	write    = flag.Bool("write", false, "rewrite the Speed table in docs/speed.md")
	datasets = flag.String("datasets", os.Getenv("PAIRFED_DATASETS"), "directory holding ijcnn1.trn.bz2 and a9a")
	timeout  = flag.Duration("timeout", 90*time.Second, "per-command limit (a command that hits it is reported as > limit)")
	gen      = flag.String("gen", "", "only write the seeded synthetic files (letter-shape.csv, w8a-shape) into this directory and exit")
)

type sample struct {
	wall, cpu time.Duration
	rssKB     int64
	timedOut  bool
	failed    bool
}

func main() {
	log.SetFlags(0)
	flag.Parse()
	if *gen != "" {
		writeLetterShape(filepath.Join(*gen, "letter-shape.csv"))
		writeW8aShape(filepath.Join(*gen, "w8a-shape"))
		return
	}
	tmp, err := os.MkdirTemp("", "pfspeed-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	oldBin, newBin := filepath.Join(tmp, "pairfed-old"), filepath.Join(tmp, "pairfed-new")
	wt := filepath.Join(tmp, "base")
	run("git", "worktree", "add", "--detach", wt, *base)
	defer run("git", "worktree", "remove", "--force", wt)
	runIn(wt, "go", "build", "-o", oldBin, "./cmd/pairfed")
	run("go", "build", "-o", newBin, "./cmd/pairfed")

	ijcnn1 := filepath.Join(tmp, "ijcnn1.trn")
	sh("bzcat " + filepath.Join(*datasets, "ijcnn1.trn.bz2") + " > " + ijcnn1)
	a9a := filepath.Join(*datasets, "a9a")
	letter := filepath.Join(tmp, "letter-shape.csv")
	writeLetterShape(letter)
	w8a := filepath.Join(tmp, "w8a-shape")
	writeW8aShape(w8a)

	var rows []string
	add := func(s string) { rows = append(rows, s); log.Print(s) }
	add("| measurement | today (main) | new | ratio |")
	add("|---|---|---|---|")

	// Per-step and objective: go test benchmarks, CPU ns per op.
	bench := benchmarks()
	for _, c := range []struct{ label, old, new string }{
		{"sgd-prev ns/draw, ijcnn1 shape (n 49 990, d 22, 9.7 % positive)", "PrevStep/general/ijcnn1-shape", "PrevStep/fast/ijcnn1-shape"},
		{"sgd-prev ns/draw, dense d 256", "PrevStep/general/dense-d256", "PrevStep/fast/dense-d256"},
		{"sgd-prev ns/draw, a9a shape (CSR, d 123, 14 nonzeros)", "PrevStep/general/a9a-shape", "PrevStep/fast/a9a-shape"},
		{"sgd-prev ns/draw, window averaging (the paper protocol's output), ijcnn1 shape", "PrevStep/general-window/ijcnn1-shape", "PrevStep/fast-window/ijcnn1-shape"},
		{"sgd-prev ns/draw, window averaging, a9a shape", "PrevStep/general-window/a9a-shape", "PrevStep/fast-window/a9a-shape"},
		{"objective F_S(w), hinge, ijcnn1 shape, ms", "Objective/pairs/hinge", "Objective/scores/hinge"},
		{"objective F_S(w), square, ijcnn1 shape, ms", "Objective/pairs/square", "Objective/scores/square"},
	} {
		o, n := bench[c.old], bench[c.new]
		unit := 1.0
		if strings.Contains(c.label, ", ms") {
			unit = 1e6
		}
		add(fmt.Sprintf("| %s | %s | %s | %s |", c.label, num(o/unit), num(n/unit), ratio(o, n)))
	}

	// Whole commands, old and new binaries alternating.
	cmds := []struct {
		label string
		args  []string
		reps  int
	}{
		{"`pairfed train` ijcnn1 (honest selection)", []string{"train", "--data", ijcnn1, "--json"}, *reps},
		{"`pairfed train` ijcnn1.trn.bz2 (bzip2 decoding included)", []string{"train", "--data", filepath.Join(*datasets, "ijcnn1.trn.bz2"), "--json"}, *reps},
		{"`pairfed train` ijcnn1, η and B given", []string{"train", "--data", ijcnn1, "--eta", "100", "--param-radius", "100", "--json"}, *reps},
		{"`pairfed train --protocol paper` ijcnn1", []string{"train", "--data", ijcnn1, "--protocol", "paper", "--json"}, 1},
		{"`pairfed train` a9a (11 % dense)", []string{"train", "--data", a9a, "--json"}, *reps},
		{"`pairfed train --protocol paper` a9a", []string{"train", "--data", a9a, "--protocol", "paper", "--json"}, 1},
		{"`pairfed train` w8a shape (n 49 749, d 300, 3.9 % dense)", []string{"train", "--data", w8a, "--json"}, *reps},
		{"`pairfed train --protocol paper` w8a shape", []string{"train", "--data", w8a, "--protocol", "paper", "--json"}, 1},
		{"`pairfed simulate --sites 1 --transport mem` ijcnn1", []string{"simulate", "--data", ijcnn1, "--sites", "1", "--transport", "mem", "--json"}, 1},
		{"`pairfed simulate --sites 256 --transport mem` ijcnn1", []string{"simulate", "--data", ijcnn1, "--sites", "256", "--transport", "mem", "--json"}, 1},
		{"`pairfed train --algo dpegd` letter shape (n 10 500, d 16, ε 1)", []string{"train", "--data", letter, "--algo", "dpegd", "--loss", "logistic", "--epsilon", "1", "--eta", "0.5", "--param-radius", "1", "--scale", "none", "--json"}, 1},
		{"`pairfed train --algo dpgdc` letter shape (ε 1: T = n = 8 400 full logistic gradients)", []string{"train", "--data", letter, "--algo", "dpgdc", "--loss", "logistic", "--epsilon", "1", "--eta", "0.5", "--param-radius", "1", "--scale", "none", "--json"}, 1},
	}
	for _, c := range cmds {
		var olds, news []sample
		for r := 0; r < c.reps; r++ {
			olds = append(olds, timeCmd(oldBin, c.args))
			news = append(news, timeCmd(newBin, c.args))
		}
		o, n := median(olds), median(news)
		add(fmt.Sprintf("| %s | %s | %s | %s |", c.label, fmtSample(o), fmtSample(n), sampleRatio(o, n)))
	}
	load, _ := os.ReadFile("/proc/loadavg")
	foot := fmt.Sprintf("\nMeasured %s on %d cores (load average %s) by `go run ./scripts/speed -write`; medians of %d runs (1 for the paper protocols, simulate, dpegd and dpgdc), old and new alternating. Times are wall / CPU (user + system); ratios are old ÷ new of CPU time, then of wall time. Benchmark rows are CPU ns per op at GOMAXPROCS=1.\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:3], " "), *reps)
	table := strings.Join(rows, "\n") + "\n" + foot
	fmt.Print(table)
	if *write {
		readme, err := os.ReadFile("docs/speed.md")
		if err != nil {
			log.Fatal(err)
		}
		re := regexp.MustCompile(`(?s)<!-- speed:begin -->.*<!-- speed:end -->`)
		if !re.Match(readme) {
			log.Fatal("speed: docs/speed.md has no <!-- speed:begin --> … <!-- speed:end --> markers")
		}
		out := re.ReplaceAllLiteral(readme, []byte("<!-- speed:begin -->\n"+table+"<!-- speed:end -->"))
		if err := os.WriteFile("docs/speed.md", out, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// benchmarks runs the pairwise benchmarks and returns CPU ns per op by name.
func benchmarks() map[string]float64 {
	var out []byte
	for _, b := range [][2]string{{"PrevStep", "2000000x"}, {"Objective", "2x"}} {
		cmd := exec.Command("go", "test", "./pairwise", "-run", "^$", "-bench", b[0], "-benchtime", b[1], "-count", strconv.Itoa(*reps))
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
		o, err := cmd.CombinedOutput()
		if err != nil {
			log.Fatalf("speed: benchmarks: %v\n%s", err, o)
		}
		out = append(out, o...)
	}
	vals := map[string][]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		name = regexp.MustCompile(`-\d+$`).ReplaceAllString(name, "")
		v := 0.0
		for k := 2; k+1 < len(f); k += 2 {
			if f[k+1] == "ns/op" {
				v, _ = strconv.ParseFloat(f[k], 64)
			}
			if f[k+1] == "cpu-ns/op" {
				v, _ = strconv.ParseFloat(f[k], 64)
				break
			}
		}
		vals[name] = append(vals[name], v)
	}
	med := map[string]float64{}
	for k, v := range vals {
		slices.Sort(v)
		med[k] = v[len(v)/2]
	}
	return med
}

// timeCmd runs bin with args and returns its wall and CPU time.
func timeCmd(bin string, args []string) sample {
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = nil, nil
	start := time.Now()
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var s sample
	select {
	case err := <-done:
		if err != nil {
			log.Printf("speed: %s %v: %v", filepath.Base(bin), args, err)
			s.failed = true
		}
	case <-time.After(*timeout):
		_ = cmd.Process.Kill()
		<-done
		s.timedOut = true
	}
	s.wall = time.Since(start)
	if ps := cmd.ProcessState; ps != nil {
		s.cpu = ps.UserTime() + ps.SystemTime()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			s.rssKB = ru.Maxrss
		}
	}
	return s
}

func median(s []sample) sample {
	out := s[0]
	if out.timedOut {
		return out
	}
	w := make([]time.Duration, len(s))
	c := make([]time.Duration, len(s))
	r := make([]int64, len(s))
	for k, v := range s {
		w[k], c[k], r[k] = v.wall, v.cpu, v.rssKB
		out.timedOut = out.timedOut || v.timedOut
		out.failed = out.failed || v.failed
	}
	slices.Sort(w)
	slices.Sort(c)
	slices.Sort(r)
	out.wall, out.cpu, out.rssKB = w[len(w)/2], c[len(c)/2], r[len(r)/2]
	return out
}

func fmtSample(s sample) string {
	if s.failed {
		return "failed (see the script's log)"
	}
	if s.timedOut {
		return fmt.Sprintf("> %s (stopped)", *timeout)
	}
	return fmt.Sprintf("%.2f s / %.2f s, %d MB", s.wall.Seconds(), s.cpu.Seconds(), s.rssKB/1024)
}

func sampleRatio(o, n sample) string {
	switch {
	case o.failed || n.failed, n.timedOut:
		return "—"
	case o.timedOut:
		return fmt.Sprintf("> %.0f× (wall)", o.wall.Seconds()/n.wall.Seconds())
	}
	return fmt.Sprintf("%.1f× / %.1f×", o.cpu.Seconds()/n.cpu.Seconds(), o.wall.Seconds()/n.wall.Seconds())
}

func num(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func ratio(o, n float64) string { return fmt.Sprintf("%.1f×", o/n) }

// writeLetterShape writes a seeded CSV of letter's shape: 10 500 records,
// 16 features in [0, 15] (integers, as letter's), label column last, about
// 4 % positive (one letter against the rest); clipped to the unit ball by
// pairfed's --radius.
func writeLetterShape(path string) {
	rng := rand.New(rand.NewPCG(26, 16))
	var b strings.Builder
	for k := 0; k < 16; k++ {
		fmt.Fprintf(&b, "f%d,", k)
	}
	b.WriteString("label\n")
	for i := 0; i < 10500; i++ {
		pos := rng.IntN(26) == 0
		for k := 0; k < 16; k++ {
			v := rng.IntN(16)
			if pos && k < 4 {
				v = min(15, v+4)
			}
			fmt.Fprintf(&b, "%d,", v)
		}
		if pos {
			b.WriteString("1\n")
		} else {
			b.WriteString("0\n")
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		log.Fatal(err)
	}
}

// writeW8aShape writes a seeded LIBSVM file of w8a's shape: 49 749 records,
// 300 binary features, about 3.9 % of the cells nonzero (≈ 11.7 per record),
// about 3 % positive. Feature j is on with probability proportional to
// 1/(1 + j/30) (a few common features, a long tail of rare ones, as in
// w8a); a positive record turns the first 30 features on at 2.5 times that
// rate, so the classes are separable in part and AUC means something.
func writeW8aShape(path string) {
	const n, d, density = 49749, 300, 0.039
	rng := rand.New(rand.NewPCG(8, 300))
	p := make([]float64, d)
	var sum float64
	for j := range p {
		p[j] = 1 / (1 + float64(j)/30)
		sum += p[j]
	}
	for j := range p {
		p[j] *= density * d / sum
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		pos := rng.Float64() < 0.03
		if pos {
			b.WriteString("+1")
		} else {
			b.WriteString("-1")
		}
		for j := range p {
			q := p[j]
			if pos && j < 30 {
				q = min(1, 2.5*q)
			}
			if rng.Float64() < q {
				fmt.Fprintf(&b, " %d:1", j+1)
			}
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		log.Fatal(err)
	}
}

func run(name string, args ...string) { runIn("", name, args...) }

func runIn(dir, name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		log.Fatalf("speed: %s %v: %v\n%s", name, args, err, out)
	}
}

func sh(s string) { run("sh", "-c", s) }
