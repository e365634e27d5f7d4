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

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/deploy"
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
	// SiteLogins, with Listen, replaces the token by one login per site
	// (and one for job clients): each may publish and subscribe only to
	// its own subjects (deploy.SitePermissions, deploy.ClientPermissions).
	// The passwords are generated once into State/logins/NAME (0600).
	SiteLogins []string
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
	adminHash, adminPath, made, err := adminKey(state)
	if err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	cfg.AdminCancelHash = adminHash
	how := "kept from an earlier start"
	if made {
		how = "generated now"
	}
	logf("coordinator: the operator's admin key is %s (mode 0600, %s): `pairfed job cancel --cancel-key @%s JOB` cancels any job, whatever its cancel key; keep it on this host", adminPath, how, adminPath)
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
	switch {
	case len(c.SiteLogins) > 0 && c.Listen == "":
		return usage(errors.New("coordinator: --site-logins configures the embedded server of --listen; with --nats the hub's own accounts decide who may connect (pairfed deploy init)"))
	case len(c.SiteLogins) > 0 && c.Token != "":
		return usage(errors.New("coordinator: give --token or --site-logins, not both (the logins replace the shared token)"))
	}
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
		if token == "" && !bindsLoopbackOnly(host) && len(c.SiteLogins) == 0 {
			if token, tokenFile, err = listenToken(state); err != nil {
				return fmt.Errorf("coordinator: %w", err)
			}
		}
		if len(c.SiteLogins) == 0 {
			// Probe 5: a restart without --site-logins silently dropped
			// the logins an earlier run had set up.
			if ents, err := os.ReadDir(filepath.Join(state, loginsDir)); err == nil && len(ents) > 0 {
				logf("coordinator: warning: %s holds the logins of an earlier run with --site-logins, which this run ignores: without --site-logins the embedded server does not ask the sites to log in; give --site-logins again to keep them", filepath.Join(state, loginsDir))
			}
		}
		var srv *server.Server
		if len(c.SiteLogins) > 0 {
			// A state directory with a checkpoint, jobs or charges had
			// a run before: a login generated now replaces one.
			earlier := checkpoint != nil || len(finished) > 0 || len(ledger) > 0
			users, own, err := listenLogins(state, cfg.Federation, c.SiteLogins, earlier, logf)
			if err != nil {
				return fmt.Errorf("coordinator: %w", err)
			}
			if srv, err = transport.StartListeningUsers(host, port, users); err != nil {
				return err
			}
			natsOpts = append(append([]nats.Option(nil), natsOpts...), nats.UserInfo(coordinatorLogin, own))
		} else if srv, err = transport.StartListening(host, port, token); err != nil {
			return err
		}
		defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
		url = srv.ClientURL()
		if len(c.SiteLogins) > 0 {
			logf("coordinator: the embedded server requires a login per site: site S connects with --nats nats://S:PASSWORD@%s, PASSWORD in %s; job clients log in as %s (%s)",
				strings.TrimPrefix(url, "nats://"), filepath.Join(state, loginsDir, "S"), clientLogin, filepath.Join(state, loginsDir, clientLogin))
		}
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
	logf("coordinator: federation %s on %s (state %s, %d finished jobs and %d ledger charges reloaded)", cfg.Federation, RedactedServers(url), state, len(finished), len(ledger))
	if c.Listen != "" && c.Stdout != nil {
		// One line on stdout, for scripts and tests: where the sites connect.
		fmt.Fprintf(c.Stdout, "listening on %s\n", url)
		if len(c.SiteLogins) > 0 {
			fmt.Fprintf(c.Stdout, "clients must log in (one login per site, %s for job clients; passwords in %s): --nats nats://NAME:PASSWORD@HOST:PORT\n", clientLogin, filepath.Join(state, loginsDir))
		}
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
	if token, err = newSecretFile(path); err != nil {
		return "", "", err
	}
	return token, path, nil
}

// secretBytes is the size of a state directory's secret; an admin key is
// one, so it is a cancel key's size (the constant below fails to compile
// if the two ever differ).
const secretBytes = 32

const _ = uint(secretBytes-protocol.CancelKeyLen) + uint(protocol.CancelKeyLen-secretBytes)

// newSecretFile draws secretBytes random bytes (crypto/rand) and writes their hex,
// one line, to a new file at path, mode 0600, never over an existing file
// (O_EXCL); a file it could not finish is removed. It returns the hex.
// The state directory's secrets (listen-token, the logins' passwords,
// admin.key) are all made by it.
func newSecretFile(path string) (string, error) {
	var b [secretBytes]byte
	if _, err := crand.Read(b[:]); err != nil {
		return "", err
	}
	secret := hex.EncodeToString(b[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(secret + "\n"); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", err
	}
	return secret, nil
}

// loginsDir holds, in a coordinator's state directory, the passwords of
// the embedded server's logins (Coordinator.SiteLogins): one file per
// site and one for job clients, each 0600.
const loginsDir = "logins"

// The logins that are not sites: job clients, and the coordinator's own
// connection (its password is drawn at every start and kept nowhere).
const (
	clientLogin      = "client"
	coordinatorLogin = "coordinator"
)

// MaxSiteLogins bounds Coordinator.SiteLogins.
const MaxSiteLogins = 4096

// CheckSiteLogins checks a --site-logins list: valid site names (the
// protocol's), none twice, none of the reserved names client and
// coordinator, at most MaxSiteLogins.
func CheckSiteLogins(sites []string) error {
	if len(sites) > MaxSiteLogins {
		return fmt.Errorf("--site-logins names %d sites, more than %d", len(sites), MaxSiteLogins)
	}
	seen := map[string]bool{}
	for i, s := range sites {
		if s == "" {
			return fmt.Errorf("--site-logins: name %d of %d is empty (two commas in a row, or one at an end): give the site names separated by single commas, e.g. --site-logins site-a,site-b", i+1, len(sites))
		}
		if err := protocol.ValidName("site", s); err != nil {
			return fmt.Errorf("--site-logins: %s: the names are the sites' --site names", strings.TrimPrefix(err.Error(), "protocol: "))
		}
		if s == clientLogin || s == coordinatorLogin {
			return fmt.Errorf("--site-logins: %q is reserved for the %s's own login: rename the site", s, s)
		}
		if seen[s] {
			return fmt.Errorf("--site-logins: site %q is named twice", s)
		}
		// Probe 5 (issue 28): "A,a" gave two logins whose password files
		// are one file on a case-insensitive file system (as deploy init
		// refuses).
		for p := range seen {
			if strings.EqualFold(p, s) {
				return fmt.Errorf("--site-logins: sites %q and %q differ only in case: their password files in STATE/%s would collide on a case-insensitive file system; rename one of them", p, s, loginsDir)
			}
		}
		seen[s] = true
	}
	return nil
}

// listenLogins returns the embedded server's users for the sites: each
// site's login with deploy.SitePermissions, the job clients' with
// deploy.ClientPermissions, and the coordinator's own (every subject of
// the federation) with a fresh password, returned as own. The sites' and
// the clients' passwords are read from State/logins or generated there
// once (32 random bytes, hex, 0600), so that the sites' URLs survive
// restarts.
func listenLogins(state, fed string, sites []string, earlier bool, logf func(string, ...any)) (users []transport.ListenUser, own string, err error) {
	if err := CheckSiteLogins(sites); err != nil {
		return nil, "", err
	}
	dir := filepath.Join(state, loginsDir)
	_, statErr := os.Stat(dir)
	restart := earlier || statErr == nil
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", err
	}
	add := func(name string, p deploy.Permissions) error {
		pw, made, err := loginPassword(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if made && restart {
			// Probe 5: a deleted password file was replaced without a
			// word, and the login's holder was then refused.
			who := "site " + name
			if name == clientLogin {
				who = "the job clients"
			}
			logf("coordinator: generated the password of login %s in %s: give it to %s (a password this login had before no longer works)", name, filepath.Join(dir, name), who)
		}
		users = append(users, transport.ListenUser{Name: name, Password: pw, Publish: p.Publish, Subscribe: p.Subscribe})
		return nil
	}
	for _, s := range sites {
		if err := add(s, deploy.SitePermissions(fed, s)); err != nil {
			return nil, "", err
		}
	}
	if err := add(clientLogin, deploy.ClientPermissions(fed)); err != nil {
		return nil, "", err
	}
	var b [32]byte
	if _, err := crand.Read(b[:]); err != nil {
		return nil, "", err
	}
	own = hex.EncodeToString(b[:])
	cp := deploy.CoordinatorPermissions(fed)
	users = append(users, transport.ListenUser{Name: coordinatorLogin, Password: own, Publish: cp.Publish, Subscribe: cp.Subscribe})
	return users, own, nil
}

// loginPassword reads the password kept in path, or generates one there
// (made). The file must be a regular file that only its owner can read:
// a password others on the host can read lets them log in as the site.
func loginPassword(path string) (pw string, made bool, err error) {
	if fi, err := os.Stat(path); err == nil {
		switch {
		case !fi.Mode().IsRegular():
			what := "a directory"
			if !fi.IsDir() {
				what = "of mode " + fi.Mode().String()
			}
			return "", false, fmt.Errorf("%s is not a regular file (%s): delete it to generate a new password (the login's holder must then use the new one)", path, what)
		case fi.Mode().Perm()&0o077 != 0:
			return "", false, fmt.Errorf("%s has mode %#o: other users of this host can read the password: chmod 600 %s", path, fi.Mode().Perm(), path)
		}
	}
	if b, err := os.ReadFile(path); err == nil {
		if t := strings.TrimSpace(string(b)); len(t) >= 32 && !strings.ContainsAny(t, ":@/ ") {
			return t, false, nil
		}
		return "", false, fmt.Errorf("%s holds no usable password (want ≥ 32 characters, none of : @ / or space): delete it to generate a new one (the site must then use the new one)", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", false, err
	}
	if pw, err = newSecretFile(path); err != nil {
		return "", false, err
	}
	return pw, true, nil
}

// bindsLoopbackOnly reports whether a server bound to host is reachable
// from this machine only (0.0.0.0, "" and :: bind every interface).
func bindsLoopbackOnly(host string) bool {
	ip := net.ParseIP(host)
	return strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback()
}

// AdminKeyFile holds, in a coordinator's state directory, the operator's
// admin key: CancelKeyLen random bytes (hex, one line, mode 0600)
// generated on the coordinator's first start. A JobCancel carrying it
// cancels any job (coordinator.ServiceConfig.AdminCancelHash), so that a
// job whose submitter lost its cancel key is not uncancellable.
//
// Why a file in the state directory: whoever can read it already owns
// the coordinator (its ledger, checkpoint and models are there), so it
// adds no new party to trust; it travels in the JobCancel message that
// `pairfed job cancel` already sends (no new transport, no new port),
// and only its SHA-256 is held in memory. Rotating it: stop the
// coordinator, delete the file, start it again (a new key is drawn).
const AdminKeyFile = "admin.key"

// adminKey returns the SHA-256 of the state directory's admin key and
// the file's path, generating the key on first use (made). The file must
// be a regular file that only its owner can read and hold the hex of
// CancelKeyLen bytes.
func adminKey(state string) (hash []byte, path string, made bool, err error) {
	path = filepath.Join(state, AdminKeyFile)
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		text, err := newSecretFile(path) // secretBytes = CancelKeyLen random bytes
		if err != nil {
			return nil, path, false, err
		}
		key, _ := hex.DecodeString(text)
		return coordinator.CancelHash(key), path, true, nil
	case err != nil:
		return nil, path, false, err
	case !fi.Mode().IsRegular():
		kind := data.FileKind(fi.Mode())
		if fi.Mode()&os.ModeSymlink != 0 {
			kind = "symbolic link (the key must be the file itself: a link may point anywhere)"
		}
		return nil, path, false, fmt.Errorf("%s is a %s, not a regular file: delete it to generate a new admin key (or put the key's file itself there, mode 0600)", path, kind)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, path, false, fmt.Errorf("%s has mode %#o: other users of this host can read the admin key, which cancels any job: chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, path, false, err
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != protocol.CancelKeyLen {
		return nil, path, false, fmt.Errorf("%s holds no admin key (want the hex of %d bytes on one line): delete it to generate a new one", path, protocol.CancelKeyLen)
	}
	return coordinator.CancelHash(key), path, false, nil
}
