package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"image/png"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/report"
	"github.com/pairfed/pairfed/store"
)

// writeLinearLIBSVM writes n records of dimension d in [−1, 1]^d whose
// labels follow a noisy linear rule (fixed across files), with both
// classes present.
func writeLinearLIBSVM(t *testing.T, path string, n, d int, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 99))
	var b strings.Builder
	for i := range n {
		x := make([]float64, d)
		var s float64
		for j := range x {
			x[j] = 2*r.Float64() - 1
			s += x[j] * float64(j+1) / float64(d)
		}
		label := "-1"
		if s+0.3*r.NormFloat64() > 0 || i == 0 {
			label = "+1"
		}
		if i == 1 {
			label = "-1"
		}
		b.WriteString(label)
		for j, v := range x {
			fmt.Fprintf(&b, " %d:%.6f", j+1, v)
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

var (
	dataURIRE = regexp.MustCompile(`src="data:image/png;base64,([A-Za-z0-9+/=]+)"`)
	rocAUCRE  = regexp.MustCompile(`id="roc-auc">([^<]+)<`)
)

// checkReportPNG asserts that b is a PNG of w × h pixels with something
// drawn on it (many dark pixels, some coloured).
func checkReportPNG(t *testing.T, name string, b []byte, w, h int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	bd := img.Bounds()
	if bd.Dx() != w || bd.Dy() != h {
		t.Fatalf("%s: %dx%d pixels, want %dx%d", name, bd.Dx(), bd.Dy(), w, h)
	}
	var dark, coloured int
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
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
		t.Fatalf("%s looks blank: %d dark, %d coloured pixels", name, dark, coloured)
	}
}

// checkReportImages asserts that index.html in out embeds exactly the PNG
// files written next to it, each of its expected size and not blank, and
// returns their names.
func checkReportImages(t *testing.T, out string, page []byte) []string {
	t.Helper()
	sizes := map[string][2]int{report.ImagePhaseAUC: {report.PlotWidth, report.PlotHeight},
		report.ImageSpent: {report.PlotWidth, report.PlotHeight}, report.ImageROC: {report.ROCSize, report.ROCSize}}
	embedded := map[string]bool{}
	for _, m := range dataURIRE.FindAllSubmatch(page, -1) {
		b, err := base64.StdEncoding.DecodeString(string(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		embedded[string(b)] = true
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if name == "index.html" {
			continue
		}
		size, ok := sizes[name]
		if !ok {
			t.Errorf("unexpected file %s in %s (temporary file left?)", name, out)
			continue
		}
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		checkReportPNG(t, name, b, size[0], size[1])
		if !embedded[string(b)] {
			t.Errorf("%s is not the image embedded in index.html", name)
		}
		names = append(names, name)
	}
	if len(names) != len(embedded) {
		t.Errorf("%d PNG files, %d embedded images", len(names), len(embedded))
	}
	return names
}

// A real federation in this process — `pairfed coordinator --listen
// --test`, two `pairfed worker`s, budgets at the coordinator — runs two
// private jobs; `pairfed report` then renders the second one from the
// coordinator's state directory without changing it.
func TestReportEndToEnd(t *testing.T) {
	root := t.TempDir()
	coordDir, out := filepath.Join(root, "coord"), filepath.Join(root, "report")
	test := filepath.Join(root, "test.libsvm")
	writeLinearLIBSVM(t, test, 150, 4, 1)
	siteData := map[string]string{"a": filepath.Join(root, "a.libsvm"), "b": filepath.Join(root, "b.libsvm")}
	writeLinearLIBSVM(t, siteData["a"], 60, 4, 2)
	writeLinearLIBSVM(t, siteData["b"], 70, 4, 3)
	// Budgets set before the coordinator's first start: the operator
	// creates its state directory (a typo must not create one).
	if err := os.Mkdir(coordDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "ledger", "budget", "set", "--state", coordDir, "--site", "a", "--epsilon", "3", "--delta", "0.1"); err != nil {
		t.Fatal(err)
	}

	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	var procs []*proc
	stop := func() {
		cancel()
		for _, p := range procs {
			select {
			case <-p.done:
				if p.err != nil {
					t.Errorf("a coordinator or worker failed: %v", p.err)
				}
			case <-time.After(20 * time.Second):
				t.Error("a coordinator or worker did not stop")
			}
		}
		procs = nil
	}
	defer func() {
		stop()
		if t.Failed() {
			t.Logf("log:\n%s", logs.String())
		}
	}()
	coord := startPairfed(ctx, &logs, "coordinator", "--listen", "127.0.0.1:0", "--federation", "rep", "--state", coordDir,
		"--test", test, "--min-sites", "2", "--tick", "10ms")
	procs = append(procs, coord)
	urlRE := regexp.MustCompile(`listening on (nats://\S+)`)
	waitFor(t, 15*time.Second, "the coordinator's URL", func() bool { return urlRE.MatchString(coord.stdout.String()) })
	url := urlRE.FindStringSubmatch(coord.stdout.String())[1]
	for _, s := range []string{"a", "b"} {
		procs = append(procs, startPairfed(ctx, &logs, "worker", "--nats", url, "--federation", "rep", "--site", s, "--data", siteData[s],
			"--state", filepath.Join(root, "site-"+s), "--scale", "none", "--dim", "4", "--tick", "10ms", "--heartbeat", "50ms"))
	}
	waitFor(t, 15*time.Second, "sites a and b to join", func() bool {
		l := logs.String()
		return strings.Contains(l, "site a joined the federation") && strings.Contains(l, "site b joined the federation")
	})
	submitted := map[string]submitReport{}
	for _, job := range []struct{ id, eps string }{{"job-first", "0.5"}, {"job-second", "1"}} {
		p, code := runPairfed(t, &logs, 90*time.Second, "job", "submit", "--nats", url, "--federation", "rep", "--job", job.id,
			"--algo", "fed-dp-local-sgd", "--epsilon", job.eps, "--delta", "0.001", "--min-sites", "2", "--wait", "--json")
		if code != 0 || !strings.Contains(p.stdout.String(), `"status": "completed"`) {
			t.Fatalf("job %s: exit %d: %v\n%s", job.id, code, p.err, p.stdout.String())
		}
		var rep submitReport
		if err := json.Unmarshal([]byte(p.stdout.String()), &rep); err != nil {
			t.Fatalf("job %s: --json output: %v\n%s", job.id, err, p.stdout.String())
		}
		submitted[job.id] = rep
	}
	stop()

	// What the coordinator recorded.
	b, err := os.ReadFile(filepath.Join(coordDir, "jobs", "job-second.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st protocol.JobStatus
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if st.TestRecords != 150 || len(st.PhaseAUC) == 0 || len(st.Privacy) != 2 || st.Announce == nil {
		t.Fatalf("job status lacks the evaluation, phase AUCs, privacy or announcement: %s", b)
	}
	charges, err := store.ReadCharges(coordDir)
	if err != nil {
		t.Fatal(err)
	}
	spent := map[string]coordinator.Spend{}
	for _, sp := range coordinator.Spent(charges) {
		spent[sp.Site] = sp
	}
	if math.Abs(spent["a"].Epsilon-1.5) > 1e-12 || math.Abs(spent["b"].Epsilon-1.5) > 1e-12 {
		t.Fatalf("ledger: %+v", spent)
	}
	// `job submit --json` shows, per site, what the coordinator's ledger
	// charged it for the job (the largest of the job's charges of the
	// site), within the request.
	for id, rep := range submitted {
		var ledger []coordinator.Charge
		for _, c := range charges {
			if c.Job == id {
				ledger = append(ledger, c)
			}
		}
		charged := map[string]coordinator.Spend{}
		for _, sp := range coordinator.Spent(ledger) {
			charged[sp.Site] = sp
		}
		if len(rep.Privacy) != 2 || len(charged) != 2 {
			t.Fatalf("job %s: privacy %+v, charges %+v", id, rep.Privacy, ledger)
		}
		for _, p := range rep.Privacy {
			if c := charged[p.Site]; p.CertifiedEpsilon != c.Epsilon || p.CertifiedDelta != c.Delta || !(p.CertifiedEpsilon > 0) ||
				p.CertifiedEpsilon > p.Epsilon || p.CertifiedDelta > p.Delta {
				t.Errorf("job %s site %s: --json certifies (%v, %v) of the request (%v, %v), the ledger charged (%v, %v)",
					id, p.Site, p.CertifiedEpsilon, p.CertifiedDelta, p.Epsilon, p.Delta, c.Epsilon, c.Delta)
			}
		}
	}

	before := hashTree(t, coordDir)
	stdout, err := runCLI(t, "report", "--job", "job-second", "--state", coordDir, "--test", test, "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if after := hashTree(t, coordDir); !maps.Equal(before, after) {
		t.Errorf("report changed the state directory:\nbefore %v\nafter  %v", before, after)
	}
	if !strings.Contains(stdout, filepath.Join(out, "index.html")) {
		t.Errorf("stdout: %s", stdout)
	}
	page, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	want := []string{
		"<!DOCTYPE html>", `id="job">job-second</span>`, `id="status">completed</span>`, `id="verdict">private</span>`,
		`<td id="sites">a, b</td>`,
		`<td id="test-auc">` + strconv.FormatFloat(st.AUC, 'f', 4, 64) + ` (n_test = 150)</td>`,
		`<span id="accountant">` + html.EscapeString(coordinator.AccountantRule) + `</span>`,
		`<td><code>epsilon</code></td><td class="mono">1</td>`, `<td><code>delta</code></td><td class="mono">0.001</td>`,
		`<td><code>algo</code></td><td class="mono">fed-dp-local-sgd</td>`,
		`<td><code>phases</code></td><td class="mono">` + strconv.Itoa(st.Announce.Phases) + `</td>`,
		// a: ε 1 in this job, 1.5 spent over both, budget 3, 1.5 remaining; b: no budget
		`<tr><td>a</td><td class="num">1</td><td class="num">1.5</td><td class="num">0.002</td><td class="num">3</td><td class="num">0.1</td><td class="num">1.5</td>`,
		`<tr><td>b</td><td class="num">1</td><td class="num">1.5</td><td class="num">0.002</td><td class="num">none</td>`,
	}
	for i, auc := range st.PhaseAUC {
		want = append(want, fmt.Sprintf(`<tr><td class="num">%d</td><td class="num">%s</td></tr>`, i+1, strconv.FormatFloat(auc, 'f', 4, 64)))
	}
	for _, p := range st.Privacy {
		want = append(want, fmt.Sprintf(`<tr><td>%s</td><td class="num">%d</td><td class="num">1</td><td class="num">0.001</td>`, p.Site, p.Records))
		sig := `<tr><td>` + p.Site + `</td>`
		for _, x := range p.Sigmas {
			sig += `<td class="num">` + strconv.FormatFloat(x, 'g', 6, 64) + `</td>`
		}
		want = append(want, sig+"</tr>")
	}
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("index.html lacks %q", w)
		}
	}
	if strings.Contains(s, "roc-mismatch") || strings.Contains(s, `id="no-roc"`) {
		t.Error("the ROC curve is missing or disagrees with the coordinator")
	}
	m := rocAUCRE.FindStringSubmatch(s)
	if m == nil {
		t.Fatal("no ROC AUC in the page")
	}
	rocAUC, err := strconv.ParseFloat(m[1], 64)
	if err != nil || math.Abs(rocAUC-st.AUC) > 1e-12 {
		t.Errorf("ROC AUC %q, the coordinator's %v", m[1], st.AUC)
	}
	if names := checkReportImages(t, out, page); len(names) != 3 {
		t.Errorf("images %v, want the AUC, privacy and ROC plots", names)
	}

	if fi, err := os.Stat(filepath.Join(out, "index.html")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("index.html: %v, mode %v", err, fi.Mode())
	}

	// The first job without --test, into the same directory: the page is
	// replaced, the ROC curve is missing and said why, and the earlier
	// report's roc.png is gone.
	stdout, err = runCLI(t, "report", "--job", "job-first", "--state", coordDir, "--out", out)
	if err != nil || !strings.Contains(stdout, "needs the coordinator") {
		t.Fatalf("%v\n%s", err, stdout)
	}
	page, _ = os.ReadFile(filepath.Join(out, "index.html"))
	if !strings.Contains(string(page), `id="no-roc">The ROC curve needs the coordinator&#39;s test file`) || !strings.Contains(string(page), `id="job">job-first</span>`) {
		t.Errorf("report of job-first:\n%.3000s", page)
	}
	if names := checkReportImages(t, out, page); len(names) != 2 || !fileAbsent(filepath.Join(out, report.ImageROC)) {
		t.Errorf("images %v, want the AUC and privacy plots only", names)
	}
	if after := hashTree(t, coordDir); !maps.Equal(before, after) {
		t.Error("report changed the state directory")
	}
}

// reportState writes a coordinator state directory by hand: a completed
// job "done" (d = 3), a refused job "refused" with a reason, a queued job in
// the checkpoint, a ledger and a budget.
func reportState(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "coord")
	jobs, err := store.OpenJobs(dir)
	if err != nil {
		t.Fatal(err)
	}
	ann := &protocol.JobAnnounce{Job: "done", Algo: "fed-avg", Task: "auc", Loss: "hinge", Params: 3, Phases: 2, LocalPasses: 1, Eta: 10,
		ParamRadius: 100, FeatureRadius: 1, Sites: []string{"a", "b"}}
	for _, st := range []*protocol.JobStatus{
		{Job: "done", Status: protocol.StatusCompleted, Algo: "fed-avg", Phases: 2, Sites: []string{"a", "b"}, Model: []float64{0.5, -0.25, 1},
			AUC: 0.6125, TestRecords: 20, PhaseAUC: []float64{0.7, 0.75}, Announce: ann},
		{Job: "refused", Status: protocol.StatusRefused, Algo: "fed-dp-local-sgd", Refused: []string{"a", "b"},
			Reason: "a refused: <budget> exceeded; b refused: budget & more"},
	} {
		if err := jobs.Save(st); err != nil {
			t.Fatal(err)
		}
	}
	ch, _, _, err := store.OpenCharges(dir)
	if err != nil {
		t.Fatal(err)
	}
	var cs []coordinator.Charge
	for _, s := range []string{"a", "b"} {
		cs = append(cs, coordinator.Charge{Key: coordinator.ChargeKey("done", s, 0), Site: s, Job: "done", Algo: "fed-avg", Mechanism: "none", Records: 10,
			Accountant: coordinator.AccountantRule})
	}
	if err := ch.Append(cs); err != nil {
		t.Fatal(err)
	}
	ch.Close()
	run := *ann
	run.Job, run.Phases = "busy", 4
	cp := &coordinator.Checkpoint{Version: coordinator.CheckpointVersion, Status: map[string]*protocol.JobStatus{
		"waiting": {Job: "waiting", Status: protocol.StatusQueued, Algo: "fed-avg"},
		"busy":    {Job: "busy", Status: protocol.StatusRunning, Algo: "fed-avg", Sites: []string{"a", "b"}}},
		Running: &coordinator.RunningJob{Announce: &run, Phase: 3, PhaseAUC: []float64{0.625, 0.6875}}}
	if err := store.SaveCheckpoint(dir, cp); err != nil {
		t.Fatal(err)
	}
	if err := store.SaveBudgets(dir, map[string]coordinator.Budget{"a": {Epsilon: 2, Delta: 0.01}}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func fileAbsent(path string) bool {
	_, err := os.Stat(path)
	return os.IsNotExist(err)
}

func TestReportErrorsAndIncompleteJobs(t *testing.T) {
	state := reportState(t)
	root := t.TempDir()
	test3, test5 := filepath.Join(root, "t3.libsvm"), filepath.Join(root, "t5.libsvm")
	writeLinearLIBSVM(t, test3, 20, 3, 5)
	writeLinearLIBSVM(t, test5, 20, 5, 6)
	before := hashTree(t, state)
	out := func(name string) string { return filepath.Join(root, name) }

	for _, c := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"unknown job", []string{"--job", "nope", "--state", state, "--out", out("x1")}, 1,
			[]string{`unknown job "nope"`, "known jobs: busy (running), done, refused, waiting (queued)"}},
		{"no jobs dir", []string{"--job", "done", "--state", t.TempDir(), "--out", out("x2")}, 1, []string{"has no jobs/ directory", "not a coordinator's state directory"}},
		{"missing state", []string{"--job", "done", "--state", filepath.Join(root, "absent"), "--out", out("x3")}, 1, []string{"state directory", "no such file"}},
		{"path in job id", []string{"--job", "../done", "--state", state, "--out", out("x4")}, 2, []string{"--job", "not in [A-Za-z0-9_-]"}},
		{"wrong dimension", []string{"--job", "done", "--state", state, "--test", test5, "--out", out("x5")}, 1,
			[]string{"has d = 5 features", "job done has 3 parameters", "not the coordinator's test file"}},
		{"bad scale", []string{"--job", "done", "--state", state, "--test", test3, "--scale", "log", "--out", out("x6")}, 2, []string{"--scale \"log\""}},
		{"out in state", []string{"--job", "done", "--state", state, "--out", filepath.Join(state, "rep")}, 2, []string{"inside the state directory"}},
		{"missing flag", []string{"--job", "done", "--out", out("x7")}, 2, []string{"--state"}},
	} {
		_, err := runCLI(t, append([]string{"report"}, c.args...)...)
		if err == nil || exitCode(err) != c.code {
			t.Errorf("%s: err %v (exit %d), want exit %d", c.name, err, exitCode(err), c.code)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", c.name, err, w)
			}
		}
		if o := c.args[len(c.args)-1]; !fileAbsent(o) {
			t.Errorf("%s: created %s", c.name, o)
		}
	}

	// A refused job: status, escaped reason, no parameters, said so.
	stdout, err := runCLI(t, "report", "--job", "refused", "--state", state, "--test", test3, "--out", out("refused"))
	if err != nil || !strings.Contains(stdout, "did not complete") {
		t.Fatalf("%v\n%s", err, stdout)
	}
	page, _ := os.ReadFile(filepath.Join(out("refused"), "index.html"))
	for _, w := range []string{`id="status">refused</span>`, "did not complete (status refused)", "a refused: &lt;budget&gt; exceeded; b refused: budget &amp; more",
		"no parameters were recorded", "--test " + test3 + " was not used", `id="no-roc">No ROC curve: job refused did not complete`, `<td id="refused">a, b</td>`} {
		if !strings.Contains(string(page), w) {
			t.Errorf("refused job: page lacks %q", w)
		}
	}
	// A queued job of the checkpoint.
	if _, err := runCLI(t, "report", "--job", "waiting", "--state", state, "--out", out("waiting")); err != nil {
		t.Fatal(err)
	}
	page, _ = os.ReadFile(filepath.Join(out("waiting"), "index.html"))
	if !strings.Contains(string(page), "has not finished: it is queued in the coordinator&#39;s checkpoint") {
		t.Errorf("queued job:\n%.2000s", page)
	}
	// The running job: its announced parameters and AUC so far.
	if _, err := runCLI(t, "report", "--job", "busy", "--state", state, "--out", out("busy")); err != nil {
		t.Fatal(err)
	}
	page, _ = os.ReadFile(filepath.Join(out("busy"), "index.html"))
	for _, w := range []string{"has not finished: it is running in the coordinator&#39;s checkpoint (at phase 3 of 4)",
		`<td class="num">2</td><td class="num">0.6875</td>`, `<td><code>eta</code></td><td class="mono">10</td>`} {
		if !strings.Contains(string(page), w) {
			t.Errorf("running job: page lacks %q", w)
		}
	}
	checkReportImages(t, out("busy"), page)
	// A completed non-private job with a test file of the right dimension.
	if stdout, err := runCLI(t, "report", "--job", "done", "--state", state, "--test", test3, "--out", out("done")); err != nil || !strings.Contains(stdout, "warning: the ROC curve's AUC") {
		t.Fatalf("%v\n%s", err, stdout)
	}
	page, _ = os.ReadFile(filepath.Join(out("done"), "index.html"))
	for _, w := range []string{`id="verdict">NOT private</span>`, "fed-avg adds no noise", `id="roc-auc">`,
		// this fixture's AUC (0.6125) was not computed on t3: the page says so
		`id="roc-mismatch"`, `<tr><td>a</td><td class="num">0</td><td class="num">0</td><td class="num">0</td><td class="num">2</td>`} {
		if !strings.Contains(string(page), w) {
			t.Errorf("done: page lacks %q", w)
		}
	}
	checkReportImages(t, out("done"), page)
	if after := hashTree(t, state); !maps.Equal(before, after) {
		t.Errorf("report changed the state directory:\nbefore %v\nafter  %v", before, after)
	}
}
