//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pairfed/pairfed/deploy"
)

// freeRun returns a base port p such that p, p+1, ..., p+n-1 are free on
// loopback (nodes on one host listen on the base ports plus their index).
func freeRun(t *testing.T, n int, taken map[int]bool) int {
	t.Helper()
	for try := 0; try < 200; try++ {
		p := 20000 + (os.Getpid()*7+try*37)%30000
		ok := true
		for i := range n {
			if taken[p+i] {
				ok = false
				break
			}
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+i))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			for i := range n {
				taken[p+i] = true
			}
			return p
		}
	}
	t.Fatal("no run of free ports")
	return 0
}

// TestDeployHubCluster (issue 28, finding 14: "deploy init offers no
// cluster"): `pairfed deploy init --hub-nodes` generates a 3-node hub
// cluster; the three nats-server processes (Debian's binary) start from
// the generated configs and route to each other over TLS; a leaf server
// per site, the coordinator and three workers started from the generated
// units (every node's URL in their configs) run a private job; then the
// hub node that site a's leaf link is on is stopped (SIGINT) while a
// second job runs, and a third job is submitted with the node still down:
// both complete with all 3 sites, site a's link on another node.
func TestDeployHubCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	bin := pairfed(t)
	ns := deployNATSServer(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "deploy")
	taken := map[int]bool{}
	client, leaf, cluster := freeRun(t, 3, taken), freeRun(t, 3, taken), freeRun(t, 3, taken)
	var sitePorts []string
	for range deploySites {
		sitePorts = append(sitePorts, fmt.Sprint(freeRun(t, 1, taken)))
	}
	gen, err := exec.CommandContext(ctx, bin, "deploy", "init", "--federation", deployFed, "--sites", strings.Join(deploySites, ","),
		"--out", out, "--hub-nodes", "127.0.0.1,127.0.0.1,127.0.0.1", "--hub-bind", "127.0.0.1",
		"--client-port", fmt.Sprint(client), "--leaf-port", fmt.Sprint(leaf), "--cluster-port", fmt.Sprint(cluster),
		"--site-ports", strings.Join(sitePorts, ","),
		"--prefix", out, "--state-dir", filepath.Join(dir, "state"), "--pairfed-bin", bin, "--nats-server-bin", ns).CombinedOutput()
	if err != nil {
		t.Fatalf("deploy init: %v\n%s", err, gen)
	}
	if !strings.Contains(string(gen), "the hub is a cluster of 3 nodes: hub-1, hub-2, hub-3") {
		t.Errorf("deploy init says:\n%s", gen)
	}
	var m deploy.Manifest
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("manifest: %v", err)
	}
	if want := fmt.Sprintf("tls://127.0.0.1:%d,tls://127.0.0.1:%d,tls://127.0.0.1:%d", client, client+1, client+2); m.HubURL != want {
		t.Fatalf("hub URL %q, want %q", m.HubURL, want)
	}
	// The configs parse (nats-server -t), then the nodes run.
	var nodes []*proc
	for i := range 3 {
		conf := filepath.Join(out, deploy.HubNodeDir(i), "nats-server.conf")
		if b, err := exec.CommandContext(ctx, ns, "-t", "-c", conf).CombinedOutput(); err != nil || !strings.Contains(string(b), "is valid") {
			t.Fatalf("nats-server -t -c %s: %v\n%s", conf, err, b)
		}
		nodes = append(nodes, start(t, ctx, dir, deploy.HubNodeDir(i), ns, "-c", conf))
	}
	for i := range 3 {
		waitListening(t, ctx, client+i)
		waitListening(t, ctx, leaf+i)
	}
	// Every node routes to the two others.
	for i, n := range nodes {
		waitFor(t, ctx, n.stderr, "Route connection created", 2)
		if b, _ := os.ReadFile(n.stderr); strings.Contains(string(b), "Authentication Failure") {
			t.Errorf("node %d refused a route:\n%s", i+1, tail(string(b), 3000))
		}
	}
	for i, s := range deploySites {
		state := filepath.Join(dir, "state", deploy.SiteDir(s))
		if err := os.MkdirAll(state, 0o700); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile("../datasets/diabetes")
		if err != nil {
			t.Fatal(err)
		}
		var shard []string
		for k, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			if k%3 == i {
				shard = append(shard, l)
			}
		}
		if err := os.WriteFile(filepath.Join(state, "train.libsvm"), []byte(strings.Join(shard, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		p := start(t, ctx, dir, "leaf-"+s, ns, "-c", filepath.Join(out, deploy.SiteDir(s), "leaf.conf"))
		waitFor(t, ctx, p.stderr, "Leafnode connection created", 1)
	}
	if err := os.MkdirAll(filepath.Join(dir, "state", "coordinator"), 0o700); err != nil {
		t.Fatal(err)
	}
	cargs := unitArgs(t, filepath.Join(out, deploy.CoordinatorDir, "pairfed-coordinator.service"))
	coord := start(t, ctx, dir, "coordinator", cargs[0], cargs[1:]...)
	for _, s := range deploySites {
		wargs := unitArgs(t, filepath.Join(out, deploy.SiteDir(s), "pairfed-worker.service"))
		start(t, ctx, dir, "worker-"+s, wargs[0], wargs[1:]...)
	}
	waitFor(t, ctx, coord.stderr, "joined the federation", 3)

	submit := func(job string, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, filepath.Join(out, deploy.ClientDir, "submit-job.sh"),
			append([]string{"--min-sites", "3", "--job", job, "--json", "--timeout", "90s"}, args...)...)
		cmd.Env = append(os.Environ(), "PAIRFED="+bin)
		return cmd
	}
	check := func(job string, cmd *exec.Cmd, stdout, stderr *bytes.Buffer) {
		t.Helper()
		var rep struct {
			Status string   `json:"status"`
			Reason string   `json:"reason"`
			Sites  []string `json:"sites"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Status != "completed" || len(rep.Sites) != 3 {
			t.Fatalf("job %s: %v %+v\n%s\n%s", job, err, rep, stdout, stderr)
		}
	}
	run := func(job string, args ...string) {
		t.Helper()
		cmd := submit(job, args...)
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		cmd.Run()
		check(job, cmd, &so, &se)
	}
	run("cluster-1", "--algo", "fed-dp-local-sgd", "--epsilon", "1", "--delta", "1e-5")

	// Node 1 stops while a job runs.
	cmd := submit("cluster-2", "--algo", "fed-dp-pair-sgd", "--epsilon", "1", "--delta", "1e-5", "--rounds", "40")
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, coord.stderr, "job cluster-2 (fed-dp-pair-sgd) starts", 1)
	// The node site a's leaf link is on ("127.0.0.1:PORT - lid:N -
	// Leafnode connection created").
	la, _ := os.ReadFile(filepath.Join(dir, "leaf-a.err"))
	victim := -1
	for _, l := range strings.Split(string(la), "\n") {
		if i := strings.Index(l, "127.0.0.1:"); i >= 0 && strings.Contains(l, "Leafnode connection created") {
			var port int
			fmt.Sscanf(l[i+len("127.0.0.1:"):], "%d", &port)
			victim = port - leaf
		}
	}
	if victim < 0 || victim > 2 {
		t.Fatalf("site a's leaf link is on no node:\n%s", la)
	}
	if err := nodes[victim].cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-nodes[victim].done:
	case <-ctx.Done():
		t.Fatalf("node %d did not stop", victim+1)
	}
	cmd.Wait()
	check("cluster-2", cmd, &so, &se)
	// Site a's leaf link moved to another node.
	waitFor(t, ctx, filepath.Join(dir, "leaf-a.err"), "Leafnode connection created", 2)
	// And a job submitted with node 1 down.
	run("cluster-3", "--algo", "fed-dp-lda", "--epsilon", "1", "--delta", "1e-5")
	t.Logf("3 jobs completed with 3 sites; node %d (site a's) stopped during the second", victim+1)
}
