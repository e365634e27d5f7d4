//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The dashboard tests load the --http page of a pairfed process in
// headless Chromium (Debian: apt-get install chromium), which runs its
// script: the DOM it dumps is what a person would see. Screenshots go to
// the test's artifact directory (kept with go test -artifacts).

// chromium returns the headless browser; it fails the test when there is
// none: CI installs it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "/usr/bin/chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium on PATH: the dashboard tests need headless Chromium (Debian: apt-get install -y chromium)")
	return ""
}

// browse runs headless Chromium on url with extra (e.g. --dump-dom) and
// returns its standard output. The page's script runs for up to 5 s of
// virtual time (it polls /api/state every second).
func browse(t *testing.T, ctx context.Context, url string, extra ...string) []byte {
	t.Helper()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=5000"}, extra...)
	cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, chromium(t), append(args, url)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", extra, err, tail(stderr.String(), 2000))
	}
	return out
}

// screenshot saves a 1200×900 PNG of url and checks that it is one.
func screenshot(t *testing.T, ctx context.Context, url, name string) string {
	t.Helper()
	file := filepath.Join(t.ArtifactDir(), name)
	browse(t, ctx, url, "--screenshot="+file, "--window-size=1200,900", "--hide-scrollbars")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot %s is not a PNG: %v", file, err)
	}
	if sz := img.Bounds().Size(); sz.X != 1200 || sz.Y != 900 || len(b) < 10_000 {
		t.Fatalf("screenshot %s: %v, %d bytes", file, sz, len(b))
	}
	t.Logf("dashboard screenshot: %s (%d bytes)", file, len(b))
	return file
}

// getJSON polls url until it answers 200 with a JSON body that ok accepts.
func getJSON(t *testing.T, ctx context.Context, url string, v any, ok func() bool) {
	t.Helper()
	var last string
	for {
		if resp, err := http.Get(url); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			last = fmt.Sprintf("%d %s", resp.StatusCode, b)
			if resp.StatusCode == http.StatusOK && json.Unmarshal(b, v) == nil && ok() {
				return
			}
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not as expected: %v; last answer: %s", url, ctx.Err(), tail(last, 2000))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// contains fails the test unless the DOM contains every pattern.
func domHas(t *testing.T, dom string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile(p).MatchString(dom) {
			t.Errorf("the dashboard's DOM lacks %s", p)
		}
	}
}

// A finished simulation (two runs of fed-dp-local-sgd over 4 sites) keeps
// its dashboard up with --hold: Chromium shows the four sites online, both
// jobs completed with all their phases, their AUC, and the ε each site
// spent.
func TestDashboardOfSimulation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	sim := start(t, ctx, dir, "simulate", pairfed(t), "--log-format", "json", "simulate", "--data", "../datasets/diabetes",
		"--feature-bounds", "../schemas/diabetes.json", "--sites", "4", "--algo", "fed-dp-local-sgd", "--epsilon", "1", "--runs", "2", "--http", addr, "--hold", "2m", "--json")
	base := "http://" + addr + "/"
	var health struct{ Status string }
	getJSON(t, ctx, base+"healthz", &health, func() bool { return health.Status == "finished" })
	b, err := os.ReadFile(sim.stdout)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Phases int `json:"phases"`
		AUC    struct {
			Values []float64 `json:"values"`
		} `json:"auc"`
	}
	if err := json.Unmarshal(b, &rep); err != nil || rep.Phases < 2 || len(rep.AUC.Values) != 2 {
		t.Fatalf("simulate report %s: %v", b, err)
	}
	// The log is JSON lines, one of which says where the dashboard is.
	logs, _ := os.ReadFile(sim.stderr)
	if !strings.Contains(string(logs), `"url":"`+base+`"`) {
		t.Errorf("no log line with the dashboard's URL:\n%s", tail(string(logs), 2000))
	}

	dom := string(browse(t, ctx, base, "--dump-dom"))
	phases := strconv.Itoa(rep.Phases)
	domHas(t, dom,
		`<span class="badge finished" id="health">finished</span>`,
		`<span class="count" id="sites-count">4</span>`,
		`<span class="count" id="finished-count">2</span>`,
	)
	for s := 0; s < 4; s++ {
		site := fmt.Sprintf("site-%d", s)
		domHas(t, dom,
			`<tr class="site" data-site="`+site+`"><td>`+site+`</td><td class="num">\d+</td><td class="num">8</td>`,
			// ε = 1 per site and run; the dashboard shows the last run's.
			`<tr class="spend" data-site="`+site+`"><td>`+site+`</td><td class="num">1</td><td class="num eps">1.000</td>`)
	}
	for r, auc := range rep.AUC.Values {
		job := fmt.Sprintf("run-%d", r)
		row := regexp.MustCompile(`<tr class="finished-job" data-job="` + job + `" data-status="completed">.*?</tr>`).FindString(dom)
		if row == "" {
			t.Errorf("no completed %s in the DOM", job)
			continue
		}
		domHas(t, row, `<span class="progress-text">`+phases+` / `+phases+` phases</span><div class="bar [^"]*" role="progressbar" aria-valuemin="0" aria-valuenow="`+phases+`" aria-valuemax="`+phases+`">`)
		// The AUC simulate measured, to the 4 decimals shown.
		m := regexp.MustCompile(`<td class="num">(0\.\d{4}) AUC</td>`).FindStringSubmatch(row)
		if m == nil {
			t.Errorf("%s: no AUC in %s", job, row)
		} else if shown, _ := strconv.ParseFloat(m[1], 64); math.Abs(shown-auc) > 0.51e-4 {
			t.Errorf("%s: AUC %v, shown %v", job, auc, shown)
		}
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", tail(dom, 6000))
	}
	screenshot(t, ctx, base, "dashboard-simulate.png")
	sim.kill()
}

// While a job runs on a federation of processes (a coordinator with
// --http and three workers that hold their updates back), Chromium shows
// the sites taking part and the job's progress bar part-way; the page
// re-renders in place from its polls (no reload).
func TestDashboardOfRunningJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	f := startFederation(t, ctx, false, []string{"--min-sites", "3", "--http", addr},
		[]string{"--update-delay", "200ms", "--heartbeat", "200ms"})
	base := "http://" + addr + "/"
	done := make(chan error, 1)
	go func() {
		r, err := submit(t, ctx, f, "--algo", "fed-avg", "--rounds", "40", "--min-sites", "3", "--job", "dash-1")
		if err == nil && r.Status != "completed" {
			err = fmt.Errorf("status %s (%s)", r.Status, r.Reason)
		}
		done <- err
	}()
	type job struct {
		Job        string   `json:"job"`
		Phase      int      `json:"phase"`
		PhasesDone int      `json:"phases_done"`
		Phases     int      `json:"phases"`
		Sites      []string `json:"sites"`
	}
	var st struct {
		Running *job `json:"running"`
	}
	getJSON(t, ctx, base+"api/state", &st, func() bool { return st.Running != nil && st.Running.PhasesDone >= 2 })
	if st.Running.Job != "dash-1" || st.Running.Phases != 40 || len(st.Running.Sites) != 3 {
		t.Fatalf("running %+v", st.Running)
	}

	dom := string(browse(t, ctx, base, "--dump-dom"))
	domHas(t, dom,
		`<body data-renders="([3-9]|\d\d+)">`, // ≥ 3 polls rendered in one page load
		`<span class="badge ok" id="health">ok</span>`,
		`<div class="job" data-job="dash-1" data-status="running">`,
		`<span class="badge running">running</span>`,
	)
	for s := 0; s < 3; s++ {
		site := fmt.Sprintf("site-%d", s)
		domHas(t, dom, `<tr class="site" data-site="`+site+`"><td>`+site+`</td>.*?<td>dash-1</td></tr>`)
	}
	progress := regexp.MustCompile(`phase (\d+) of 40 · (\d+) done · \d of 3 updates</div><div class="bar ?" role="progressbar" aria-valuemin="0" aria-valuenow="(\d+)" aria-valuemax="40">`)
	m := progress.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no progress of the running job in the DOM:\n%s", tail(dom, 6000))
	}
	phase, _ := strconv.Atoi(m[1])
	doneN, _ := strconv.Atoi(m[3])
	if phase < 3 || phase > 40 || doneN != phase-1 || m[2] != m[3] {
		t.Errorf("progress %q: want phase ≥ 3 of 40 with phase−1 done", m[0])
	}
	t.Logf("dashboard: %s", m[0][:strings.Index(m[0], "</div>")])
	screenshot(t, ctx, base, "dashboard-running.png")
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("job submit did not return")
	}
	// /metrics, scraped after the job: 40 phases, no running job.
	resp, err := http.Get(base + "metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"pairfed_phases_completed_total 40\n", "pairfed_sites_online 3\n", `pairfed_jobs{status="completed"} 1` + "\n"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
}
