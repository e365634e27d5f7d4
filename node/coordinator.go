package node

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/store"
	"github.com/pairfed/pairfed/transport"
)

// Coordinator is a coordinator process: its state directory, its NATS
// connection (to an existing server, or an embedded one it runs), its
// monitor and the run loop of a coordinator.Service. Plain values: the
// command line fills them from its flags (`pairfed coordinator`).
type Coordinator struct {
	// Listen is HOST:PORT on which to run an embedded nats-server (port
	// 0: any free port; checked by CheckListen); NATS is the URL of an
	// existing server instead. Exactly one is set.
	Listen, NATS string
	// Token is the token every client of the embedded server must
	// present; "" beyond loopback: one is generated once into
	// State/listen-token.
	Token string
	// NATSOptions are the connection's options (credentials, TLS, logging).
	NATSOptions []nats.Option
	// State is the state directory (package store): finished jobs, the
	// privacy ledger, budgets and the checkpoint a restart resumes from.
	State string
	// Service is the coordinator's configuration (validated); Run fills
	// Finished, Ledger, Budgets and BudgetSource from State.
	Service coordinator.ServiceConfig
	// Tick is the run loop's clock.
	Tick time.Duration
	// HTTP, when set, is HOST:PORT of the monitor (/healthz, /metrics,
	// /api/state and the dashboard).
	HTTP string
	// Version is the pairfed version recorded in the model artefacts.
	Version string
	// Signer, when set, signs the model artefacts written to State/jobs
	// (model.EncodeSigned).
	Signer *model.Signer
	// Stdout receives the line scripts read ("listening on URL") with
	// Listen; nil discards it.
	Stdout io.Writer
	// Logf receives the log lines; nil discards them.
	Logf func(string, ...any)
}

// CheckListen checks a Coordinator.Listen address: HOST:PORT, a port in
// [0, 65535], and free unless 0 (so that a busy port is named before any
// state is touched, not later by the embedded server in vaguer words).
func CheckListen(listen string) error {
	host, portStr, err := net.SplitHostPort(listen)
	if err != nil {
		return usage(fmt.Errorf("coordinator: --listen %q: %w", listen, err))
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return usage(fmt.Errorf("coordinator: --listen %q: bad port", listen))
	}
	if port != 0 {
		l, err := net.Listen("tcp", net.JoinHostPort(host, portStr))
		if err != nil {
			return fmt.Errorf("coordinator: --listen %s: cannot listen (%v): another process uses the port — stop it, pick another port, or give port 0 for any free one", listen, err)
		}
		l.Close()
	}
	return nil
}

// Run recovers the state directory, starts the embedded server (with
// Listen), connects and serves until ctx ends (nil then) or the loop
// fails. Everything in the state directory is read and checked before
// anything is written to it: a bad file stops the coordinator with the
// directory as it was.
func (c *Coordinator) Run(ctx context.Context) error {
	logf := c.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	cfg, state, url, natsOpts := c.Service, c.State, c.NATS, c.NATSOptions
	lock, err := store.LockDir(state)
	if err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	defer lock.Unlock()
	finished, err := store.ReadJobs(state)
	if err != nil {
		return err
	}
	prior, err := store.ReadCharges(state)
	if err != nil {
		return err
	}
	budgets, err := store.LoadBudgets(state)
	if err != nil {
		return err
	}
	checkpoint, err := store.LoadCheckpoint(state)
	if err != nil {
		return err
	}
	if err := coordinator.CheckLedger(finished, checkpoint, prior); err != nil {
		return fmt.Errorf("%w; %s/%s must hold every charge: restore it from a backup (never delete it), then start the coordinator again", err, state, store.ChargesFile)
	}
	if _, err := coordinator.RestoreService(cfg, checkpoint); err != nil {
		return err
	}
	jobs, err := store.OpenJobs(state)
	if err != nil {
		return err
	}
	charges, ledger, notes, err := store.OpenCharges(state)
	if err != nil {
		return err
	}
	defer charges.Close()
	for _, n := range notes {
		logf("coordinator: %s", n)
	}
	cfg.Finished, cfg.Ledger, cfg.Budgets = finished, ledger, budgets
	// `pairfed ledger budget set` on this directory takes effect at the
	// next job admission (budgets.json is re-read when it changed).
	cfg.BudgetSource = store.WatchBudgets(state).Changed
	svc, err := coordinator.RestoreService(cfg, checkpoint)
	if err != nil {
		return err
	}
	token := c.Token
	if c.Listen != "" {
		host, portStr, err := net.SplitHostPort(c.Listen)
		if err != nil {
			return usage(fmt.Errorf("coordinator: --listen %q: %w", c.Listen, err))
		}
		port, _ := strconv.Atoi(portStr)
		// Beyond loopback the embedded server requires a token: Token,
		// or one generated once and kept in the state directory (so that
		// the sites' URLs survive restarts).
		tokenFile := ""
		if token == "" && !bindsLoopbackOnly(host) {
			if token, tokenFile, err = listenToken(state); err != nil {
				return fmt.Errorf("coordinator: %w", err)
			}
		}
		srv, err := transport.StartListening(host, port, token)
		if err != nil {
			return err
		}
		defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
		url = srv.ClientURL()
		if token != "" {
			natsOpts = append(append([]nats.Option(nil), natsOpts...), nats.Token(token))
			where := "the --token value"
			if tokenFile != "" {
				where = tokenFile + " (mode 0600)"
			}
			logf("coordinator: the embedded server requires a token, stored in %s: sites and clients connect with --nats nats://TOKEN@%s", where, strings.TrimPrefix(url, "nats://"))
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	t, err := Connect(cctx, url, "pairfed-coordinator", true, natsOpts...)
	cancel()
	if err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	defer t.Close()
	logf("coordinator: federation %s on %s (state %s, %d finished jobs and %d ledger charges reloaded)", cfg.Federation, url, state, len(finished), len(ledger))
	if c.Listen != "" && c.Stdout != nil {
		// One line on stdout, for scripts and tests: where the sites connect.
		fmt.Fprintf(c.Stdout, "listening on %s\n", url)
		if token != "" {
			where := "given by --token"
			if f := filepath.Join(state, listenTokenFile); c.Token == "" {
				where = "stored in " + f
			}
			fmt.Fprintf(c.Stdout, "clients must present a token (%s): --nats nats://TOKEN@HOST:PORT\n", where)
		}
	}
	observe, stopHTTP, err := coordinatorHTTP(c.HTTP, svc, t, c.Tick)
	if err != nil {
		return err
	}
	defer stopHTTP()
	err = coordinator.Serve(ctx, svc, t, c.Tick, coordinator.ServeOptions{
		Persist: persistJob(jobs, c.Version, c.Signer, logf), Ledger: charges.Append, Observe: observe,
		Checkpoint: func(cp *coordinator.Checkpoint) error { return store.SaveCheckpoint(state, cp) },
	})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// persistJob saves a finished job's status and, for a completed job, its
// model artefact next to it (coordinator.StatusModel). A model that cannot
// be built is logged and skipped (the status is what the coordinator
// needs); a file that cannot be written is an error, as for the status.
func persistJob(jobs *store.Jobs, version string, signer *model.Signer, logf func(string, ...any)) func(*protocol.JobStatus) error {
	return func(st *protocol.JobStatus) error {
		if err := jobs.Save(st); err != nil {
			return err
		}
		if st.Status != protocol.StatusCompleted {
			return nil
		}
		if err := writeJobArtefact(jobs, st, coordinator.StatusModel, coordinator.ModelFileSuffix, version, signer, logf); err != nil {
			return err
		}
		if st.BestPhase == 0 {
			return nil
		}
		return writeJobArtefact(jobs, st, coordinator.BestModel, coordinator.BestModelFileSuffix, version, signer, logf)
	}
}

// writeJobArtefact writes build(st) to STATE/jobs/<job><suffix>; a model
// that cannot be built is logged and skipped.
func writeJobArtefact(jobs *store.Jobs, st *protocol.JobStatus, build func(*protocol.JobStatus) (*model.Model, error), suffix, version string, signer *model.Signer, logf func(string, ...any)) error {
	m, err := build(st)
	if err != nil {
		logf("coordinator: job %s: no %s artefact: %v", st.Job, suffix, err)
		return nil
	}
	m.Provenance.Pairfed, m.Provenance.Created = version, time.Now().UTC().Format(time.RFC3339)
	var buf bytes.Buffer
	if err := model.EncodeSigned(&buf, m, signer); err != nil {
		logf("coordinator: job %s: no %s artefact: %v", st.Job, suffix, err)
		return nil
	}
	return store.WriteFileAtomic(strings.TrimSuffix(jobs.Path(st.Job), ".json")+suffix, buf.Bytes())
}

// listenTokenFile holds, in a coordinator's state directory, the token its
// embedded server requires when Listen binds beyond loopback.
const listenTokenFile = "listen-token"

// listenToken returns the token of the coordinator's state directory,
// generating it (32 random bytes, hex, file mode 0600) on first use.
func listenToken(state string) (token, path string, err error) {
	path = filepath.Join(state, listenTokenFile)
	if b, err := os.ReadFile(path); err == nil {
		if t := strings.TrimSpace(string(b)); len(t) >= 32 {
			return t, path, nil
		}
		return "", "", fmt.Errorf("%s holds no usable token (want ≥ 32 characters): delete it to generate a new one", path)
	}
	var b [32]byte
	if _, err := crand.Read(b[:]); err != nil {
		return "", "", err
	}
	token = hex.EncodeToString(b[:])
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		return "", "", err
	}
	return token, path, nil
}

// bindsLoopbackOnly reports whether a server bound to host is reachable
// from this machine only (0.0.0.0, "" and :: bind every interface).
func bindsLoopbackOnly(host string) bool {
	ip := net.ParseIP(host)
	return strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback()
}
