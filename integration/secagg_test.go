//go:build integration

package integration

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pairfed/pairfed/secagg/round"
)

// secAggKeyFiles writes the secure aggregation signing keys of sites
// site-0 … site-(n−1) and their roster into dir, as pairfed deploy init
// does for a deployment, and returns the roster's path and the keys'.
func secAggKeyFiles(t *testing.T, dir string, n int) (string, []string) {
	t.Helper()
	roster := map[string]ed25519.PublicKey{}
	var keys []string
	for i := 0; i < n; i++ {
		pub, priv, err := ed25519.GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := round.MarshalSigningKey(priv)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("secagg-key-%d.pem", i))
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, p)
		roster[fmt.Sprintf("site-%d", i)] = pub
	}
	b, err := round.MarshalRoster(roster)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "secagg-roster.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, keys
}

// Secure aggregation across processes over nats-server: 20 trials of a
// fed-dp-ssp job over 3 sites (threshold 2) with one site killed
// with -9 at a random moment and restarted at once. Each job either
// completes with the survivors' sum (≥ 2 sites) or aborts with nothing
// unmasked; the ledgers satisfy checkLedgers (no site released a phase
// twice; the coordinator never under-counts).
func TestWorkerKill9SecAgg(t *testing.T) {
	kill9SecAgg(t, "sacrash", 20, 600*time.Millisecond, "--algo", "fed-dp-ssp", "--min-sites", "3")
}

// The same with a multi-phase job: fed-dp-gd-grad, 3 secure rounds, one
// site killed at a random moment of the whole job (10 trials). A killed
// site does not rejoin the job it released values for (its ledger says
// so), so the later rounds complete with the 2 others (quorum 2) or the
// job aborts with nothing more unmasked.
func TestWorkerKill9SecAggMultiPhase(t *testing.T) {
	kill9SecAgg(t, "samulti", 10, 800*time.Millisecond, "--algo", "fed-dp-gd-grad", "--rounds", "3", "--min-sites", "2")
}

func kill9SecAgg(t *testing.T, prefix string, trials int, within time.Duration, algo ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	f := newCrashFed(t, ctx)
	rng := rand.New(rand.NewPCG(2026, 14))
	completed, aborted, partial := 0, 0, 0
	for i := 0; i < trials; i++ {
		job := fmt.Sprintf("%s-%02d", prefix, i)
		victim := rng.IntN(3)
		done := make(chan *report, 1)
		go func() {
			args := append(append([]string{}, algo...), "--epsilon", "0.05", "--delta", "1e-3",
				"--secure-aggregation", "--secagg-threshold", "2", "--secagg-timeout", "25", "--job", job)
			r, _ := submit(t, ctx, &f.federation, args...)
			done <- r
		}()
		wait := time.Duration(rng.Int64N(int64(within)))
		time.Sleep(wait)
		f.workers[victim].kill()
		f.restartWorker(t, ctx, victim)
		var r *report
		select {
		case r = <-done:
		case <-ctx.Done():
			t.Fatalf("%s: no result", job)
		}
		// included: the sites whose noise share (σ) is in every unmasked
		// sum (one σ per round they were summed in).
		included, rounds := 0, 0
		if r != nil {
			for _, p := range r.Privacy {
				rounds = max(rounds, len(p.Sigmas))
			}
			for _, p := range r.Privacy {
				if rounds > 0 && len(p.Sigmas) == rounds {
					included++
				}
			}
		}
		switch {
		case r != nil && r.Status == "completed" && included >= 2:
			completed++
			if included < 3 {
				partial++
			}
		case r != nil && r.Status == "failed" && (strings.Contains(r.Reason, "nothing unmasked") || strings.Contains(r.Reason, "aborted")):
			aborted++
		default:
			t.Fatalf("%s (site-%d killed after %v): %+v", job, victim, wait, r)
		}
		checkLedgers(t, f)
		t.Logf("%s: site-%d killed %v after submission: %s, %d sites in the sum %s", job, victim, wait.Round(time.Millisecond), r.Status, included, r.Reason)
		waitFor(t, ctx, f.workers[victim].stderr, "ledger:", 1)
		time.Sleep(300 * time.Millisecond)
	}
	t.Logf("%d of %d jobs completed (%d with the victim's input left out of the sum), %d aborted cleanly", completed, trials, partial, aborted)
	if partial == 0 {
		t.Error("no round completed without its victim: the trials do not exercise a dropout mid-round")
	}
}
