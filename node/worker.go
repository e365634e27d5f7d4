package node

import (
	"context"
	"crypto/ed25519"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/store"
	"github.com/pairfed/pairfed/worker"
)

// Worker is one site's process: its records and how it prepares them for
// each job, its state directory (the privacy ledger, the saved jobs, the
// budget), its NATS connection and the run loop of a worker.Service.
// Plain values: the command line fills them from its flags (`pairfed
// worker`) and has checked them (names, budgets, the scaling).
type Worker struct {
	// NATS is the federation's server URL; NATSOptions the connection's
	// options (credentials, TLS, logging).
	NATS        string
	NATSOptions []nats.Option
	// Federation and Site are the federation's and this site's names.
	Federation, Site string
	// State is the state directory (package store).
	State string
	// Path is the training file; Options its loader options before any
	// schema (a job's schema is applied to these); Table the file as
	// loaded with the site's own options and Schema.
	Path    string
	Options data.Options
	Table   *data.Table
	// Schema is the site's own feature-bounds schema (nil: none), Notes
	// what applying it to the loader said; Scale the effective scaling:
	// "bounds" with a schema, "none", "minmax" or "standard" when given,
	// "" when neither (private jobs then need the job's schema).
	Schema *data.Schema
	Notes  []string
	Scale  string
	// Radius is R, the per-record clipping radius after scaling.
	Radius float64
	// BudgetEpsilon and BudgetDelta, when set, cap what the site spends
	// over all jobs (the tighter of them and the state directory's
	// budgets.json; +Inf: no cap on that half).
	BudgetEpsilon, BudgetDelta *float64
	// Heartbeat, JobTimeout and Tick are the run loop's intervals;
	// UpdateDelay (testing) holds every update back this long.
	Heartbeat, JobTimeout, Tick, UpdateDelay time.Duration
	// SecAggKey and SecAggRoster are the site's secure-aggregation
	// signing key and the federation's roster (nil: none).
	SecAggKey    ed25519.PrivateKey
	SecAggRoster map[string]ed25519.PublicKey
	// TestRand and TestNoise, when set, replace the secret sampling
	// generator and every job's noise (reproducible, NOT private).
	TestRand  *rand.Rand
	TestNoise pairwise.Noise
	// Logf receives the log lines; nil discards them.
	Logf func(string, ...any)
}

// Run prepares the site's records, recovers the state directory, connects
// and serves until ctx ends (nil then) or the loop fails. The state
// directory is read and checked before anything is written to it.
func (w *Worker) Run(ctx context.Context) error {
	logf := w.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	site, state, table, scale := w.Site, w.State, w.Table, w.Scale
	if w.Schema != nil {
		if err := w.Schema.Check(table); err != nil {
			return err
		}
	}
	def := &siteRecords{table: table, schema: w.Schema, scale: scale, radius: w.Radius}
	if w.Schema == nil {
		// The scaling is fitted now: a data set it cannot take is a
		// usage error of its flags.
		f := def.facts(false)
		f.Radius = 0 // the radius is checked with the records, below
		if _, err := experiment.SiteMap(f, table.Dataset); err != nil {
			return usage(err)
		}
	}
	for _, n := range append(append([]string(nil), w.Notes...), table.Notes...) {
		logf("worker %s: %s", site, n)
	}
	switch {
	case scale == "":
		logf("worker %s: no --feature-bounds: private jobs are taken only when they carry a feature-bounds schema (`pairfed job submit --feature-bounds SCHEMA.json`), and refused otherwise; non-private jobs use min-max scaling fitted on this site's records", site)
	case scale == "none":
		logf("worker %s: warning: --scale none: records are used on their raw scale and clipped to ‖x‖ ≤ %g — private, but a feature far beyond ±R (an age of 62, a glucose of 150) dominates or is clipped away and private jobs learn little; give --feature-bounds SCHEMA.json (schemas/README.md)", site, w.Radius)
	}
	// Without a schema or a scaling the start-up preparation serves
	// non-private jobs only; a private job's records are read again with
	// its schema, and prepare says then what is data-dependent.
	if why := siteNotPrivate(scale, table.DataDependent); len(why) > 0 && scale != "" {
		logf("worker %s: this site's private updates will be reported NOT private: %s", site, strings.Join(why, "; "))
	}
	// The worker's secret sampling generator and noise (dp.SecretSources).
	secretRand, secretNoise, err := dp.SecretSources()
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	def.noise = labelSiteNoise(secretNoise, scale, table.DataDependent)
	if w.TestNoise != nil {
		def.noise = w.TestNoise
	}
	// The records Join reports: the clipped map's.
	start, err := def.dataFor(false)
	if err != nil {
		return err
	}
	prep := &siteData{site: site, path: w.Path, opt: w.Options, radius: w.Radius, local: w.Schema, scale: scale, logf: logf, def: def, testNoise: w.TestNoise}
	// The budget is the tighter of `pairfed ledger budget set` (the state
	// directory's budgets.json) and the caps.
	budgets, err := store.LoadBudgets(state)
	if err != nil {
		return err
	}
	// One live owner per state directory (held until the process ends).
	lock, err := store.LockDir(state)
	if err != nil {
		return fmt.Errorf("worker %s: %w", site, err)
	}
	defer lock.Unlock()
	// The state directory is read and checked before anything is written
	// to it: its owner, the ledger (strictly), the saved jobs, and that
	// the ledger holds every release the saved jobs record.
	if owner := DirSite(state); owner != "" && owner != site {
		return fmt.Errorf("worker %s: state directory %s belongs to site %q, not %q: each site needs its own ledger", site, state, owner, site)
	}
	prior, err := store.ReadLedger(state)
	if err != nil {
		return err
	}
	priorJobs, err := store.ReadJobStates(state)
	if err != nil {
		return err
	}
	if err := worker.CheckLedger(prior, priorJobs); err != nil {
		return fmt.Errorf("worker %s: %w; %s/%s must hold every release: restore it from a backup (never delete it), then start the site again", site, err, state, store.LedgerFile)
	}
	if err := ClaimSiteDir(state, site); err != nil {
		return fmt.Errorf("worker %s: %w", site, err)
	}
	ledger, releases, notes, err := store.OpenLedger(state)
	if err != nil {
		return err
	}
	defer ledger.Close()
	jobStates, saved, err := store.OpenJobStates(state)
	if err != nil {
		return err
	}
	for _, n := range notes {
		logf("worker %s: %s", site, n)
	}
	if err := worker.CheckLedger(releases, saved); err != nil {
		return fmt.Errorf("worker %s: %w; %s/%s must hold every release: restore it from a backup (never delete it), then start the site again", site, err, state, store.LedgerFile)
	}
	every := ticks(w.Heartbeat, w.Tick)
	cfg := worker.ServiceConfig{
		Worker: worker.Config{Federation: w.Federation, Site: site, Instance: randomToken("i-"), Data: start.Data, Noise: start.Noise,
			Rand: secretRand, JoinEvery: every, HeartbeatEvery: every, Store: ledger, Jobs: jobStates, Logf: logf},
		Ledger: releases, Jobs: saved, JobTimeout: ticks(w.JobTimeout, w.Tick), Prepare: prep.prepare,
	}
	cfg.Worker.SecAggKey, cfg.Worker.SecAggRoster = w.SecAggKey, w.SecAggRoster
	if fb, ok := budgets[site]; ok {
		cfg.Budget = &worker.Budget{Epsilon: fb.Epsilon, Delta: fb.Delta}
	}
	if w.BudgetEpsilon != nil || w.BudgetDelta != nil {
		b := &worker.Budget{Epsilon: math.Inf(1), Delta: math.Inf(1)}
		if cfg.Budget != nil {
			b = cfg.Budget
		}
		if w.BudgetEpsilon != nil {
			b.Epsilon = min(b.Epsilon, *w.BudgetEpsilon)
		}
		if w.BudgetDelta != nil {
			b.Delta = min(b.Delta, *w.BudgetDelta)
		}
		cfg.Budget = b
		// One source of truth: the budget this worker enforces is recorded
		// in the state directory's budgets.json, which `pairfed ledger
		// show` reads (the caps only ever tighten it; `pairfed ledger
		// budget set` sets it). A half the caps leave unlimited is
		// recorded as the largest finite value (shown "unlimited").
		rec := coordinator.Budget{Epsilon: b.Epsilon, Delta: b.Delta}
		if math.IsInf(rec.Epsilon, 1) {
			rec.Epsilon = math.MaxFloat64
		}
		if math.IsInf(rec.Delta, 1) {
			rec.Delta = math.Nextafter(1, 0)
		}
		if old, ok := budgets[site]; !ok || old != rec {
			budgets[site] = rec
			if err := store.SaveBudgets(state, budgets); err != nil {
				return fmt.Errorf("worker %s: recording the budget: %w", site, err)
			}
			logf("worker %s: budget (ε, δ) = (%s, %s) recorded in %s (what `pairfed ledger show --state %s` reports; the flags only tighten it, `pairfed ledger budget set` changes it)",
				site, BudgetText(rec.Epsilon), BudgetText(rec.Delta), filepath.Join(state, store.BudgetsFile), state)
		}
	}
	// `pairfed ledger budget set` on this directory takes effect at the
	// next job (budgets.json is re-read when it changed).
	cfg.BudgetSource = siteBudgetSource(state, site, w.BudgetEpsilon, w.BudgetDelta)
	if w.TestRand != nil {
		cfg.Worker.Rand = w.TestRand
	}
	svc, err := worker.NewService(cfg)
	if err != nil {
		return usage(err)
	}
	e, d := worker.Spent(releases)
	logf("worker %s: n = %d, d = %d, ledger: %d releases, spent (ε, δ) = (%g, %g)", site, start.Data.N, start.Data.D, len(releases), e, d)
	// Probe 5 (issue 28): a worker connected with another login (another
	// site's, or the job clients') was refused its own subjects, logged
	// the permission violations and ran on, never taking part. The
	// server refuses nothing a site's own login needs: any violation
	// ends the run, saying which login to use.
	sctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	opts := append(append([]nats.Option(nil), w.NATSOptions...), func(o *nats.Options) error {
		prev := o.AsyncErrorCB
		o.AsyncErrorCB = func(nc *nats.Conn, sub *nats.Subscription, err error) {
			if prev != nil {
				prev(nc, sub, err)
			}
			if errors.Is(err, nats.ErrPermissionViolation) {
				stop(permissionError(site, err))
			}
		}
		return nil
	})
	t, err := Connect(ctx, w.NATS, "pairfed-worker-"+site, true, opts...)
	if err != nil {
		return fmt.Errorf("worker %s: %w", site, err)
	}
	defer t.Close()
	err = worker.Serve(sctx, svc, t, w.Tick, worker.ServeOptions{UpdateDelay: w.UpdateDelay})
	if cause := context.Cause(sctx); ctx.Err() == nil && cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// permissionError explains a permission violation of a site's own
// subjects: the process logged in as someone else.
func permissionError(site string, err error) error {
	return fmt.Errorf("worker %s: the NATS server does not let this login use site %s's subjects (%v): the --nats login (or --creds/--nkey) is not site %s's — with coordinator --site-logins, site %s connects as nats://%s:PASSWORD@HOST:PORT with the password in the coordinator's STATE/logins/%s (the client login is for job commands); with pairfed deploy init, use the files of site %s", site, site, err, site, site, site, site, site)
}

// siteBudgetSource re-reads the site's budgets.json when it changed (a
// `pairfed ledger budget set` while the worker runs) and returns the
// budget in force: the tighter of the file's entry for site and the caps
// eps and delta (nil: none), as Worker.Run computes it at start (nil: no
// limit).
func siteBudgetSource(state, site string, eps, delta *float64) func() (*worker.Budget, bool, error) {
	watch := store.WatchBudgets(state)
	return func() (*worker.Budget, bool, error) {
		budgets, changed, err := watch.Changed()
		if err != nil || !changed {
			return nil, false, err
		}
		var b *worker.Budget
		if fb, ok := budgets[site]; ok {
			b = &worker.Budget{Epsilon: fb.Epsilon, Delta: fb.Delta}
		}
		if eps != nil || delta != nil {
			if b == nil {
				b = &worker.Budget{Epsilon: math.Inf(1), Delta: math.Inf(1)}
			}
			if eps != nil {
				b.Epsilon = min(b.Epsilon, *eps)
			}
			if delta != nil {
				b.Delta = min(b.Delta, *delta)
			}
		}
		return b, true, nil
	}
}

// BudgetText prints one half of a recorded budget: "unlimited" for the
// value a worker records when its caps leave that half unset.
func BudgetText(v float64) string {
	if v == math.MaxFloat64 || v == math.Nextafter(1, 0) {
		return "unlimited"
	}
	return fmt.Sprintf("%g", v)
}

// siteNameFile records, in a site's state directory, the site it belongs
// to, so that one ledger is never used by two sites.
const siteNameFile = "site"

// ClaimSiteDir records site as the owner of dir, or checks that it is.
func ClaimSiteDir(dir, site string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, siteNameFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return store.WriteFileAtomic(path, []byte(site+"\n"))
	}
	if err != nil {
		return err
	}
	if owner := strings.TrimSpace(string(b)); owner != site {
		return fmt.Errorf("state directory %s belongs to site %q, not %q: each site needs its own ledger", dir, owner, site)
	}
	return nil
}

// DirSite is the site that owns state directory dir ("" when none does).
func DirSite(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, siteNameFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// ticks is d in ticks of length tick, rounded up (0 for d ≤ 0, else ≥ 1).
func ticks(d, tick time.Duration) int {
	if d <= 0 {
		return 0
	}
	return max(1, int(math.Ceil(float64(d)/float64(tick))))
}

// Ticks is ticks, for the command line's other loops.
func Ticks(d, tick time.Duration) int { return ticks(d, tick) }

func randomToken(prefix string) string {
	var b [6]byte
	_, _ = crand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
