// Command kcost measures how the CPU of a federation grows with its number
// of sites K on the same records (the same total data split over more
// sites; issue 27): it runs the built `pairfed simulate --algo A --sites K
// --transport T` (T: mem, the in-process hub, or nats, the embedded NATS
// server) for each case and K, alternating, and prints a Markdown table of
// each K's median CPU, its spread and the ratio K sites ÷ 1 site.
//
// Usage (from the repository root):
//
//	go run ./scripts/kcost                                  # diabetes cases only
//	go run ./scripts/kcost -data DIR                        # also a9a and ijcnn1.trn.bz2 from DIR
//	go run ./scripts/kcost -data DIR -reps 5 -out docs/results/kcost.md
//	go run ./scripts/kcost -base REV                        # also REV's binary, alternating: before ÷ after
//	go run ./scripts/kcost -cases 'fed-dp-pair-sgd:diabetes:1,16,64' -transport mem,nats
//
// A case is ALGO:DATASET:K,K,…; DATASET is diabetes (the bundled
// datasets/diabetes), a9a or ijcnn1 (from -data: a9a and ijcnn1.trn.bz2,
// each with the test split simulate draws). Private algorithms (every one
// but fed-avg) run at --epsilon 1 with the dataset's schemas/NAME.json
// feature bounds, as the README's quick start does, and with the secure
// noise source (the cost of a real run; -noise-seed seeds it instead).
// Every command runs under GOMAXPROCS=1 (-gomaxprocs) and `nice -n 19`
// when -nice; CPU is user + system time of the process from its rusage
// (os.ProcessState), which includes the process's start, the data file's
// parsing and the report, the same at every K. One repetition runs every
// K of a case once, in order, then the next repetition (alternating); the
// ratio's spread is that of the per-repetition ratios (K's run ÷ the
// 1-site run of the same repetition). With -base the two binaries run
// each K back to back, in turn first.
//
// The per-site column is (CPU(K) − CPU(1)) ÷ (K − 1): the CPU one more
// site adds, the site's fixed cost plus its share of the coordinator's
// per-site work.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// defaultCases are issue 27's: fed-dp-pair-sgd at 64 sites, fed-avg at 256,
// fed-dp-lda beside them. Cases whose data file is absent are skipped.
const defaultCases = "fed-dp-pair-sgd:diabetes:1,64;fed-dp-pair-sgd:a9a:1,64;fed-dp-pair-sgd:ijcnn1:1,64;" +
	"fed-avg:diabetes:1,64;fed-avg:a9a:1,64,256;fed-avg:ijcnn1:1,64,256;" +
	"fed-dp-lda:diabetes:1,64;fed-dp-lda:a9a:1,64;fed-dp-lda:ijcnn1:1,64"

var (
	flagData   = flag.String("data", os.Getenv("PAIRFED_DATASETS"), "folder with a9a and ijcnn1.trn.bz2 (empty: the diabetes cases only)")
	flagCases  = flag.String("cases", defaultCases, "semicolon-separated ALGO:DATASET:K,K,… (the first K of each is the base of its ratios)")
	flagReps   = flag.Int("reps", 3, "alternating repetitions (medians)")
	flagRuns   = flag.Int("runs", 1, "simulate --runs (splits per process)")
	flagBase   = flag.String("base", "", "also build this git revision and run it alternating with this tree (before ÷ after)")
	flagBin    = flag.String("bin", "", "a built pairfed to measure instead of building this tree")
	flagProcs  = flag.Int("gomaxprocs", 1, "GOMAXPROCS of every run (0: unset)")
	flagNice   = flag.Bool("nice", true, "run every command under nice -n 19 (the machine is shared)")
	flagNoise  = flag.Uint64("noise-seed", 0, "simulate --noise-seed (0: the secure source, a real run's cost)")
	flagOut    = flag.String("out", "", "also write the table to this Markdown file, keeping its notes after the marker line")
	flagVerify = flag.Bool("same", false, "with -base and -noise-seed: require both binaries to report the same AUCs")
	flagTrans  = flag.String("transport", "mem", "comma-separated simulate transports: mem (the in-process hub), nats (the embedded NATS server)")
)

// notesMarker starts the part of the -out file a rerun keeps.
const notesMarker = "<!-- notes: kept by scripts/kcost -->"

type kcase struct {
	algo, dataset, transport string
	sites                    []int
}

type result struct {
	cpu time.Duration
	auc float64
}

func main() {
	log.SetFlags(0)
	flag.Parse()
	if *flagReps < 1 || *flagRuns < 1 {
		log.Fatal("kcost: -reps and -runs must be ≥ 1")
	}
	cases, err := parseCases(*flagCases, *flagTrans)
	if err != nil {
		log.Fatal("kcost: ", err)
	}
	tmp, err := os.MkdirTemp("", "pfkcost-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)

	type binary struct{ name, path string }
	var bins []binary
	if *flagBase != "" {
		wt := filepath.Join(tmp, "base")
		bin := filepath.Join(tmp, "pairfed-base")
		mustRun("", "git", "worktree", "add", "--detach", wt, *flagBase)
		defer mustRun("", "git", "worktree", "remove", "--force", wt)
		mustRun(wt, "go", "build", "-o", bin, "./cmd/pairfed")
		bins = append(bins, binary{*flagBase, bin})
	}
	newBin := *flagBin
	if newBin == "" {
		newBin = filepath.Join(tmp, "pairfed")
		mustRun("", "go", "build", "-o", newBin, "./cmd/pairfed")
	}
	head, _ := exec.Command("git", "describe", "--always", "--dirty").Output()
	bins = append(bins, binary{"this tree", newBin})

	hdr := "| algorithm | data | transport | K | records per site |"
	sep := "|---|---|---|---|---|"
	for _, b := range bins {
		p := ""
		if len(bins) > 1 {
			p = b.name + ": "
		}
		hdr += " " + p + "CPU median (min–max) | " + p + "K ÷ 1 site (min–max) | " + p + "CPU per added site |"
		sep += "---|---|---|"
	}
	if len(bins) > 1 {
		hdr += " " + bins[0].name + " ÷ this tree |"
		sep += "---|"
	}
	rows := []string{hdr, sep}
	var skipped []string
	for _, c := range cases {
		file, test, schema, ok := dataFiles(c.dataset)
		if !ok {
			if name := c.algo + ":" + c.dataset; !slices.Contains(skipped, name) {
				skipped = append(skipped, name)
			}
			continue
		}
		// res[b][k][rep]
		res := make([][][]result, len(bins))
		for b := range bins {
			res[b] = make([][]result, len(c.sites))
		}
		var siteRecords [][]int
		for rep := 0; rep < *flagReps; rep++ {
			for ki, k := range c.sites {
				for j := range bins {
					// With -base, odd repetitions run this tree first: a
					// fixed order would favour the second binary (warm
					// caches).
					b := j
					if rep%2 == 1 {
						b = len(bins) - 1 - j
					}
					bin := bins[b]
					r, recs, err := simulate(bin.path, c, file, test, schema, k)
					if err != nil {
						log.Fatalf("kcost: %s %s %s K=%d (%s): %v", c.algo, c.dataset, c.transport, k, bin.name, err)
					}
					res[b][ki] = append(res[b][ki], r)
					if rep == 0 && b == len(bins)-1 {
						siteRecords = append(siteRecords, recs)
					}
				}
			}
		}
		for ki, k := range c.sites {
			row := fmt.Sprintf("| %s | %s | %s | %d | %s |", c.algo, c.dataset, c.transport, k, recordsPerSite(siteRecords[ki]))
			var meds []time.Duration
			for b := range bins {
				cpus := cpuOf(res[b][ki])
				med := median(cpus)
				meds = append(meds, med)
				row += fmt.Sprintf(" %s (%s–%s) |", ms(med), ms(minOf(cpus)), ms(maxOf(cpus)))
				if ki == 0 {
					row += " 1 | — |"
					continue
				}
				ratios := make([]float64, *flagReps)
				for rep := range ratios {
					ratios[rep] = res[b][ki][rep].cpu.Seconds() / res[b][0][rep].cpu.Seconds()
				}
				sort.Float64s(ratios)
				base := median(cpuOf(res[b][0]))
				perSite := (med - base) / time.Duration(k-c.sites[0])
				row += fmt.Sprintf(" %.2f× (%.2f–%.2f) | %s |", ratios[(len(ratios)-1)/2], ratios[0], ratios[len(ratios)-1], ms(perSite))
			}
			if len(bins) > 1 {
				row += fmt.Sprintf(" %.2f× |", meds[0].Seconds()/meds[len(meds)-1].Seconds())
			}
			if *flagVerify && len(bins) > 1 {
				for rep := range res[0][ki] {
					if res[0][ki][rep].auc != res[len(bins)-1][ki][rep].auc {
						log.Fatalf("kcost: %s %s K=%d: AUC %v (%s) ≠ %v (this tree)", c.algo, c.dataset, k,
							res[0][ki][rep].auc, bins[0].name, res[len(bins)-1][ki][rep].auc)
					}
				}
			}
			rows = append(rows, row)
			log.Print(row)
		}
	}

	load, _ := os.ReadFile("/proc/loadavg")
	cmd := "go run ./scripts/kcost"
	if *flagData != "" {
		cmd += " -data DIR"
	}
	if *flagCases != defaultCases {
		cmd += " -cases '" + *flagCases + "'"
	}
	cmd += " -reps " + strconv.Itoa(*flagReps)
	if *flagRuns != 1 {
		cmd += " -runs " + strconv.Itoa(*flagRuns)
	}
	if *flagBase != "" {
		cmd += " -base " + *flagBase
	}
	if *flagNoise != 0 {
		cmd += " -noise-seed " + strconv.FormatUint(*flagNoise, 10)
	}
	if *flagTrans != "mem" {
		cmd += " -transport " + *flagTrans
	}
	if *flagProcs != 1 {
		cmd += " -gomaxprocs " + strconv.Itoa(*flagProcs)
	}
	text := "# CPU vs the number of sites K, on the same records (issue 27)\n\n`" + cmd + "`\n\n" + strings.Join(rows, "\n") + "\n\n"
	if len(skipped) > 0 {
		text += "Skipped (data file absent; pass -data): " + strings.Join(skipped, ", ") + ".\n\n"
	}
	procs := "GOMAXPROCS=" + strconv.Itoa(*flagProcs)
	if *flagProcs == 0 {
		procs = "GOMAXPROCS unset"
	}
	noise := "the secure noise source"
	if *flagNoise != 0 {
		noise = fmt.Sprintf("--noise-seed %d (seeded, NOT private)", *flagNoise)
	}
	text += fmt.Sprintf("Measured %s on %d cores (load average %s); `pairfed simulate --runs %d` under %s, private algorithms at --epsilon 1 with schemas/NAME.json and %s; medians of %d alternating repetitions; CPU is user + system time of the process (its start and the data file's parsing included). This tree: %s.\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:3], " "),
		*flagRuns, procs, noise, *flagReps, strings.TrimSpace(string(head)))
	fmt.Print(text)
	if *flagOut != "" {
		if old, err := os.ReadFile(*flagOut); err == nil {
			if i := strings.Index(string(old), notesMarker); i >= 0 {
				text += "\n" + string(old[i:])
			}
		}
		if err := os.WriteFile(*flagOut, []byte(text), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// parseCases reads ALGO:DATASET:K,K,…;… and repeats each case for every
// transport.
func parseCases(s, transports string) ([]kcase, error) {
	var trs []string
	for _, t := range strings.Split(transports, ",") {
		switch t = strings.TrimSpace(t); t {
		case "mem", "nats":
			trs = append(trs, t)
		default:
			return nil, fmt.Errorf("-transport %q: want mem or nats", t)
		}
	}
	var out []kcase
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		f := strings.Split(part, ":")
		if len(f) != 3 {
			return nil, fmt.Errorf("case %q: want ALGO:DATASET:K,K,…", part)
		}
		c := kcase{algo: f[0], dataset: f[1]}
		for _, ks := range strings.Split(f[2], ",") {
			k, err := strconv.Atoi(strings.TrimSpace(ks))
			if err != nil || k < 1 {
				return nil, fmt.Errorf("case %q: bad site count %q", part, ks)
			}
			if len(c.sites) > 0 && k <= c.sites[len(c.sites)-1] {
				return nil, fmt.Errorf("case %q: site counts must increase", part)
			}
			c.sites = append(c.sites, k)
		}
		if len(c.sites) < 2 {
			return nil, fmt.Errorf("case %q: give at least two site counts (the first is the base)", part)
		}
		switch c.dataset {
		case "diabetes", "a9a", "ijcnn1":
		default:
			return nil, fmt.Errorf("case %q: dataset %q: want diabetes, a9a or ijcnn1", part, c.dataset)
		}
		for _, t := range trs {
			c.transport = t
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no cases")
	}
	return out, nil
}

// dataFiles names a case's data file, its test file (empty: simulate's
// split) and its schema; ok is false when the file is absent.
func dataFiles(name string) (file, test, schema string, ok bool) {
	schema = filepath.Join("schemas", name+".json")
	switch name {
	case "diabetes":
		file = filepath.Join("datasets", "diabetes")
	case "a9a":
		if *flagData == "" {
			return "", "", "", false
		}
		file = filepath.Join(*flagData, "a9a")
	case "ijcnn1":
		if *flagData == "" {
			return "", "", "", false
		}
		file = filepath.Join(*flagData, "ijcnn1.trn.bz2")
	}
	if _, err := os.Stat(file); err != nil {
		return "", "", "", false
	}
	return file, test, schema, true
}

// simulate runs one federation and returns its process CPU, its AUC and
// the records per site.
func simulate(bin string, c kcase, file, test, schema string, k int) (result, []int, error) {
	args := []string{"simulate", "--algo", c.algo, "--data", file, "--sites", strconv.Itoa(k),
		"--transport", c.transport, "--runs", strconv.Itoa(*flagRuns), "--json", "--no-progress"}
	if test != "" {
		args = append(args, "--test", test)
	}
	if c.algo != "fed-avg" {
		args = append(args, "--epsilon", "1", "--feature-bounds", schema)
	}
	if *flagNoise != 0 {
		args = append(args, "--noise-seed", strconv.FormatUint(*flagNoise, 10))
	}
	name := bin
	if *flagNice {
		args = append([]string{"-n", "19", bin}, args...)
		name = "nice"
	}
	cmd := exec.Command(name, args...)
	cmd.Env = os.Environ()
	if *flagProcs > 0 {
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(*flagProcs))
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return result{}, nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	// nice execs the binary in the same process: its rusage is the run's.
	r := result{cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	var rep struct {
		AUC struct {
			Mean float64 `json:"mean"`
		} `json:"auc"`
		SiteRecords []int `json:"site_records"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return result{}, nil, fmt.Errorf("report: %v", err)
	}
	r.auc = rep.AUC.Mean
	return r, rep.SiteRecords, nil
}

// recordsPerSite says the range of the sites' training records.
func recordsPerSite(recs []int) string {
	if len(recs) == 0 {
		return "?"
	}
	lo, hi := recs[0], recs[0]
	for _, n := range recs {
		lo, hi = min(lo, n), max(hi, n)
	}
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

func cpuOf(rs []result) []time.Duration {
	out := make([]time.Duration, len(rs))
	for i, r := range rs {
		out[i] = r.cpu
	}
	return out
}

// median is the middle value (the lower middle of an even count).
func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)/2]
}

func minOf(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = min(m, d)
	}
	return m
}

func maxOf(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// ms formats a duration in milliseconds (one decimal below 10 ms).
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	if v < 10 && v > -10 {
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

func mustRun(dir, name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("kcost: %s %v: %v", name, args, err)
	}
}
