//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// binary is the pairfed built once for all tests.
var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

func pairfed(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pairfed-integration-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "pairfed")
		out, err := exec.Command("go", "build", "-o", binary, "../cmd/pairfed").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// proc is a started process whose output goes to files; it is killed at
// the end of the test and its stderr printed if the test failed.
type proc struct {
	name           string
	cmd            *exec.Cmd
	stdout, stderr string
	done           chan struct{}
}

func start(t *testing.T, ctx context.Context, dir, name, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, stdout: filepath.Join(dir, name+".out"), stderr: filepath.Join(dir, name+".err"), done: make(chan struct{})}
	so, err := os.Create(p.stdout)
	if err != nil {
		t.Fatal(err)
	}
	se, err := os.Create(p.stderr)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.CommandContext(ctx, bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = so, se
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); so.Close(); se.Close(); close(p.done) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			b, _ := os.ReadFile(p.stderr)
			t.Logf("--- %s stderr:\n%s", name, tail(string(b), 4000))
		}
	})
	return p
}

func (p *proc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Kill() // SIGKILL
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// waitFor polls file until it contains want at least count times.
func waitFor(t *testing.T, ctx context.Context, file, want string, count int) string {
	t.Helper()
	for {
		b, _ := os.ReadFile(file)
		if strings.Count(string(b), want) >= count {
			return string(b)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %d × %q not seen: %v", filepath.Base(file), count, want, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitForSpent polls a worker's log until it reports a ledger of
// `releases` releases whose spent ε is the request eps up to the exact
// accountant's rounding: the ledger charges the certified ε, which is at
// most the request and within 10⁻⁹ of it under exact calibration.
func waitForSpent(t *testing.T, ctx context.Context, file, releases string, eps float64) {
	t.Helper()
	re := regexp.MustCompile(regexp.QuoteMeta(releases) + ` spent \(ε, δ\) = \(([0-9.e+-]+),`)
	for {
		b, _ := os.ReadFile(file)
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			if v, err := strconv.ParseFloat(m[1], 64); err == nil && v <= eps && v >= eps*(1-1e-9) {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %q with spent ε ≈ %g (≤ it) not seen: %v", filepath.Base(file), releases, eps, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// shards writes a test file (154 records) and three training shards of
// datasets/diabetes, shuffled with a fixed seed.
func shards(t *testing.T, dir string) (test string, sites []string) {
	t.Helper()
	b, err := os.ReadFile("../datasets/diabetes")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			lines = append(lines, s)
		}
	}
	rng := rand.New(rand.NewPCG(7, 11))
	rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	write := func(name string, ls []string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(ls, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	test = write("test.libsvm", lines[:154])
	rest := lines[154:]
	for s := 0; s < 3; s++ {
		var part []string
		for i := s; i < len(rest); i += 3 {
			part = append(part, rest[i])
		}
		sites = append(sites, write(fmt.Sprintf("site-%d.libsvm", s), part))
	}
	return test, sites
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type federation struct {
	dir, url string
	coord    *proc
	workers  []*proc
}

// startFederation starts a NATS server (external nats-server when
// external, else the coordinator's embedded one), a coordinator and three
// workers, and waits until the three sites joined.
func startFederation(t *testing.T, ctx context.Context, external bool, coordArgs, workerArgs []string) *federation {
	t.Helper()
	bin := pairfed(t)
	f := &federation{dir: t.TempDir()}
	test, sites := shards(t, f.dir)
	args := []string{"coordinator", "--state", filepath.Join(f.dir, "coord"), "--test", test}
	if external {
		ns, err := exec.LookPath("nats-server")
		if err != nil {
			t.Skip("nats-server not on PATH")
		}
		port := freePort(t)
		start(t, ctx, f.dir, "nats-server", ns, "-a", "127.0.0.1", "-p", fmt.Sprint(port))
		f.url = fmt.Sprintf("nats://127.0.0.1:%d", port)
		for {
			c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("nats-server not listening: %v", err)
			case <-time.After(50 * time.Millisecond):
			}
		}
		args = append(args, "--nats", f.url)
	} else {
		args = append(args, "--listen", "127.0.0.1:0")
	}
	f.coord = start(t, ctx, f.dir, "coordinator", bin, append(args, coordArgs...)...)
	if !external {
		out := waitFor(t, ctx, f.coord.stdout, "listening on ", 1)
		f.url = strings.TrimSpace(strings.TrimPrefix(strings.SplitN(out, "\n", 2)[0], "listening on "))
	}
	if !slices.Contains(workerArgs, "--scale") {
		// Synthetic data without a schema: min-max scaling fitted on each
		// site's records, the explicit opt-in (private jobs reported NOT
		// private); a worker without a schema or --scale refuses them.
		workerArgs = append(workerArgs, "--scale", "minmax")
	}
	for i, data := range sites {
		name := fmt.Sprintf("site-%d", i)
		wargs := append([]string{"worker", "--nats", f.url, "--site", name, "--data", data, "--state", filepath.Join(f.dir, name)}, workerArgs...)
		f.workers = append(f.workers, start(t, ctx, f.dir, name, bin, wargs...))
	}
	waitFor(t, ctx, f.coord.stderr, "joined the federation", 3)
	return f
}

type report struct {
	Job     string   `json:"job"`
	Status  string   `json:"status"`
	Reason  string   `json:"reason"`
	Sites   []string `json:"sites"`
	Dropped []string `json:"dropped"`
	Refused []string `json:"refused"`
	AUC     *struct {
		Mean float64 `json:"mean"`
	} `json:"auc"`
	NTest   int `json:"n_test"`
	Privacy []struct {
		Site            string    `json:"site"`
		Epsilon         float64   `json:"epsilon"`
		Sigmas          []float64 `json:"sigmas"`
		ComposedEpsilon float64   `json:"composed_epsilon"`
		Private         bool      `json:"private"`
	} `json:"privacy"`
}

func submit(t *testing.T, ctx context.Context, f *federation, args ...string) (*report, error) {
	t.Helper()
	cmd := exec.CommandContext(ctx, pairfed(t), append([]string{"job", "submit", "--nats", f.url, "--wait", "--json", "--timeout", "90s"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	var r report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("job submit output %q (stderr %s): %v (exit: %v)", out, stderr.String(), err, runErr)
	}
	return &r, runErr
}

func TestFedAvgAcrossProcesses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := exec.LookPath("nats-server")
	f := startFederation(t, ctx, err == nil, []string{"--min-sites", "3"}, nil)
	r, err := submit(t, ctx, f, "--algo", "fed-avg", "--min-sites", "3", "--job", "avg-1")
	if err != nil || r.Status != "completed" {
		t.Fatalf("status %s (%s), err %v", r.Status, r.Reason, err)
	}
	if !slices.Equal(r.Sites, []string{"site-0", "site-1", "site-2"}) || r.AUC == nil || !(r.AUC.Mean > 0.7) || r.NTest != 154 {
		t.Fatalf("report %+v (auc %+v): want 3 sites and test AUC > 0.7", r, r.AUC)
	}
	t.Logf("fed-avg over %s: AUC %.4f with %v", f.url, r.AUC.Mean, r.Sites)
	// The result is durable in the coordinator's state directory.
	if _, err := os.Stat(filepath.Join(f.dir, "coord", "jobs", "avg-1.json")); err != nil {
		t.Fatal(err)
	}
	// A private job is charged to every site's ledger; a site whose budget
	// the next job would exceed refuses it after a restart (reloaded ledger).
	r, err = submit(t, ctx, f, "--algo", "fed-dp-local-sgd", "--epsilon", "1", "--min-sites", "3", "--job", "dp-1")
	// The workers run with the default --scale minmax, fitted on their own
	// records, which the DP guarantee does not cover: their updates must be
	// reported not private (they are still noised and charged).
	if err != nil || r.Status != "completed" || len(r.Privacy) != 3 || r.Privacy[0].Private {
		t.Fatalf("dp job: %+v, err %v", r, err)
	}
	f.workers[2].kill()
	bin := pairfed(t)
	f.workers[2] = start(t, ctx, f.dir, "site-2-restarted", bin, "worker", "--nats", f.url, "--site", "site-2",
		"--data", filepath.Join(f.dir, "site-2.libsvm"), "--state", filepath.Join(f.dir, "site-2"), "--budget-epsilon", "1.5", "--scale", "minmax")
	waitForSpent(t, ctx, f.workers[2].stderr, "8 releases,", 1)
	time.Sleep(300 * time.Millisecond) // its first Join (else the coordinator's phase retry reaches it)
	r, err = submit(t, ctx, f, "--algo", "fed-dp-local-sgd", "--epsilon", "1", "--min-sites", "3", "--job", "dp-2")
	if err == nil || r.Status != "refused" || !slices.Equal(r.Refused, []string{"site-2"}) || !strings.Contains(r.Reason, "budget") {
		t.Fatalf("over budget: %+v, err %v", r, err)
	}
	// fed-dp-gd-grad within the remaining budget (0.4 + 1 ≤ 1.5): every
	// site reports its T = --rounds σ, the paper's ε and the composed ε.
	r, err = submit(t, ctx, f, "--algo", "fed-dp-gd-grad", "--epsilon", "0.4", "--rounds", "3", "--min-sites", "3", "--job", "grad-1")
	if err != nil || r.Status != "completed" || len(r.Privacy) != 3 {
		t.Fatalf("fed-dp-gd-grad: %+v, err %v", r, err)
	}
	for _, p := range r.Privacy {
		if p.Epsilon != 0.4 || len(p.Sigmas) != 3 || !(p.ComposedEpsilon > 0) {
			t.Errorf("fed-dp-gd-grad privacy %+v", p)
		}
	}
	t.Logf("fed-dp-gd-grad over %s: AUC %.4f, %+v", f.url, r.AUC.Mean, r.Privacy)
}

func TestWorkerKilledMidJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := startFederation(t, ctx, false,
		[]string{"--min-sites", "2", "--phase-timeout", "1s", "--site-timeout", "1s"},
		[]string{"--update-delay", "100ms", "--heartbeat", "200ms"})
	type result struct {
		r   *report
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := submit(t, ctx, f, "--algo", "fed-avg", "--rounds", "50", "--min-sites", "2", "--job", "kill-1")
		done <- result{r, err}
	}()
	waitFor(t, ctx, f.coord.stderr, "starts with 3 sites", 1)
	// A few of the ≥ 5 s of rounds (50 × the 100 ms update delay): the
	// drop (1 s of silence) then comes ≥ 3 s before the job could end.
	time.Sleep(800 * time.Millisecond)
	f.workers[2].kill()
	var res result
	select {
	case res = <-done:
	case <-ctx.Done():
		t.Fatal("job submit did not return")
	}
	r := res.r
	if res.err != nil || r.Status != "completed" {
		t.Fatalf("status %s (%s), err %v", r.Status, r.Reason, res.err)
	}
	if !slices.Equal(r.Sites, []string{"site-0", "site-1"}) || !slices.Equal(r.Dropped, []string{"site-2"}) || r.AUC == nil || !(r.AUC.Mean > 0.7) {
		t.Fatalf("report %+v: want completion with site-0, site-1 after site-2 was dropped, AUC > 0.7", r)
	}
	t.Logf("killed site-2 mid-job: completed with %v, AUC %.4f", r.Sites, r.AUC.Mean)
}
