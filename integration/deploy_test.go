//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	randv2 "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/deploy"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/simulate"
	"github.com/pairfed/pairfed/transport"
)

// The deployment tests run the configuration `pairfed deploy init`
// generates with real nats-server processes (Debian's, which .ci/run
// installs): a hub with TLS and per-identity permissions, and one
// leaf-node server per site.

const deployFed = "itest"

var deploySites = []string{"a", "b", "c"}

// deployNATSServer is the nats-server binary: on PATH, else Debian's.
func deployNATSServer(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/nats-server"); err == nil {
		return "/usr/sbin/nats-server"
	}
	t.Fatal("nats-server not found (apt-get install nats-server)")
	return ""
}

type deployment struct {
	dir, out          string // test directory; output of deploy init (also the install prefix)
	m                 deploy.Manifest
	ns                string
	hubPort, leafPort int
	sitePorts         []int
	hub               *proc
}

// waitListening polls a TCP port until it accepts connections.
func waitListening(t *testing.T, ctx context.Context, port int) {
	t.Helper()
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("port %d not listening: %v", port, err)
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// newDeployment runs `pairfed deploy init` for sites a, b, c on loopback
// (the install prefix is the output directory itself, each site's leaf
// server on its own port) and starts the hub.
func newDeployment(t *testing.T, ctx context.Context) *deployment {
	t.Helper()
	bin := pairfed(t)
	d := &deployment{dir: t.TempDir(), ns: deployNATSServer(t)}
	d.out = filepath.Join(d.dir, "deploy")
	d.hubPort, d.leafPort = freePort(t), freePort(t)
	var ports []string
	for range deploySites {
		p := freePort(t)
		d.sitePorts = append(d.sitePorts, p)
		ports = append(ports, fmt.Sprint(p))
	}
	out, err := exec.CommandContext(ctx, bin, "deploy", "init", "--federation", deployFed, "--sites", strings.Join(deploySites, ","),
		"--out", d.out, "--hub-host", "127.0.0.1", "--hub-bind", "127.0.0.1",
		"--client-port", fmt.Sprint(d.hubPort), "--leaf-port", fmt.Sprint(d.leafPort), "--site-ports", strings.Join(ports, ","),
		"--prefix", d.out, "--state-dir", filepath.Join(d.dir, "state"), "--pairfed-bin", bin, "--nats-server-bin", d.ns).CombinedOutput()
	if err != nil {
		t.Fatalf("deploy init: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(d.out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &d.m); err != nil {
		t.Fatal(err)
	}
	d.hub = start(t, ctx, d.dir, "hub", d.ns, "-c", filepath.Join(d.out, "hub", "nats-server.conf"))
	waitListening(t, ctx, d.hubPort)
	waitListening(t, ctx, d.leafPort)
	return d
}

// startLeaf starts site s's leaf-node server and waits until its link to
// the hub is up.
func (d *deployment) startLeaf(t *testing.T, ctx context.Context, i int) *proc {
	t.Helper()
	s := deploySites[i]
	p := start(t, ctx, d.dir, "leaf-"+s, d.ns, "-c", filepath.Join(d.out, deploy.SiteDir(s), "leaf.conf"))
	waitListening(t, ctx, d.sitePorts[i])
	waitFor(t, ctx, p.stderr, "Leafnode connection created", 1)
	return p
}

// tlsConfig is the TLS configuration of the identity whose certificate
// is dir/name.pem (no certificate when name is empty).
func (d *deployment) tlsConfig(t *testing.T, dir, name string) *tls.Config {
	t.Helper()
	pool := x509.NewCertPool()
	b, err := os.ReadFile(filepath.Join(d.out, dir, "ca.pem"))
	if err != nil || !pool.AppendCertsFromPEM(b) {
		t.Fatalf("CA of %s: %v", dir, err)
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if name != "" {
		pair, err := tls.LoadX509KeyPair(filepath.Join(d.out, dir, name+".pem"), filepath.Join(d.out, dir, name+"-key.pem"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg
}

// natsClient is a connection whose asynchronous errors (permission
// violations) are collected.
type natsClient struct {
	name string
	nc   *nats.Conn
	errs chan error
}

// dial connects to url as a test client: with the nkey seed file (if
// any) and TLS config (if any); it does not reconnect.
func dial(t *testing.T, name, url, nkeyFile string, tlsCfg *tls.Config) (*natsClient, error) {
	t.Helper()
	c := &natsClient{name: name, errs: make(chan error, 64)}
	opts := []nats.Option{nats.Name(name), nats.NoReconnect(), nats.Timeout(5 * time.Second),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case c.errs <- err:
			default:
			}
		})}
	if nkeyFile != "" {
		o, err := nats.NkeyOptionFromSeed(nkeyFile)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, o)
	}
	if tlsCfg != nil {
		opts = append(opts, nats.Secure(tlsCfg))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, err
	}
	c.nc = nc
	t.Cleanup(nc.Close)
	return c, nil
}

// identity connects to the hub as a generated identity: its nkey and its
// certificate from its role directory.
func (d *deployment) identity(t *testing.T, name, dir, nkey, cert string) *natsClient {
	t.Helper()
	c, err := dial(t, name, d.m.HubURL, filepath.Join(d.out, dir, nkey), d.tlsConfig(t, dir, cert))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return c
}

// subscribe subscribes and flushes (the server has processed the
// subscription, or reported a violation, when it returns).
func (c *natsClient) subscribe(t *testing.T, subject string) chan *nats.Msg {
	t.Helper()
	ch := make(chan *nats.Msg, 64)
	if _, err := c.nc.ChanSubscribe(subject, ch); err != nil {
		t.Fatalf("%s: subscribe %s: %v", c.name, subject, err)
	}
	if err := c.nc.Flush(); err != nil {
		t.Fatalf("%s: flush: %v", c.name, err)
	}
	return ch
}

func (c *natsClient) publish(t *testing.T, subject, payload string) {
	t.Helper()
	if err := c.nc.Publish(subject, []byte(payload)); err != nil {
		t.Fatalf("%s: publish %s: %v", c.name, subject, err)
	}
	if err := c.nc.Flush(); err != nil {
		t.Fatalf("%s: flush: %v", c.name, err)
	}
}

// expectViolation waits for the server's permissions violation of op
// ("Publish" or "Subscription") on subject.
func (c *natsClient) expectViolation(t *testing.T, op, subject string) {
	t.Helper()
	want := strings.ToLower(fmt.Sprintf("%s to %q", op, subject))
	deadline := time.After(3 * time.Second)
	for {
		select {
		case err := <-c.errs:
			if errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(strings.ToLower(err.Error()), want) {
				return
			}
			t.Logf("%s: other async error while waiting for a %s violation on %s: %v", c.name, op, subject, err)
		case <-deadline:
			t.Errorf("%s: no permissions violation for %s to %q", c.name, op, subject)
			return
		}
	}
}

// expectNoViolation checks that no asynchronous error was reported.
func (c *natsClient) expectNoViolation(t *testing.T) {
	t.Helper()
	if err := c.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.errs:
		t.Errorf("%s: unexpected async error: %v", c.name, err)
	default:
	}
}

// expectMsg waits for payload on ch, skipping other messages except
// forged ones: the tests give every message that must not be delivered a
// payload starting with "forged", and expectMsg reports any such message
// it skips. expectNone checks that nothing arrives on ch for a while.
func expectMsg(t *testing.T, who string, ch chan *nats.Msg, subject, payload string) {
	t.Helper()
	deadline := time.After(3 * time.Second)
	for {
		select {
		case m := <-ch:
			if m.Subject == subject && string(m.Data) == payload {
				return
			}
			if strings.HasPrefix(string(m.Data), "forged") {
				t.Errorf("%s received %q on %s, which must not be delivered", who, m.Data, m.Subject)
			}
		case <-deadline:
			t.Errorf("%s did not receive %q on %s", who, payload, subject)
			return
		}
	}
}

func expectNone(t *testing.T, who string, ch chan *nats.Msg, wait time.Duration) {
	t.Helper()
	select {
	case m := <-ch:
		t.Errorf("%s received %q on %s, which must not be delivered", who, m.Data, m.Subject)
	case <-time.After(wait):
	}
}

// TestDeployRefusesUnauthenticated: the hub refuses a client without
// credentials, a client without a certificate, a certificate from
// another CA, an unknown nkey, and plaintext (no TLS) on both ports; the
// pairfed commands refuse plaintext to a remote host themselves.
func TestDeployRefusesUnauthenticated(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d := newDeployment(t, ctx)
	coordNkey := filepath.Join(d.out, deploy.CoordinatorDir, "coordinator.nk")

	// A valid certificate, no credentials.
	if _, err := dial(t, "no-credentials", d.m.HubURL, "", d.tlsConfig(t, deploy.CoordinatorDir, "coordinator")); err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization violation") {
		t.Errorf("client without credentials: err = %v, want an authorization violation", err)
	}
	// Valid credentials, no client certificate.
	if _, err := dial(t, "no-certificate", d.m.HubURL, coordNkey, d.tlsConfig(t, deploy.CoordinatorDir, "")); err == nil || !strings.Contains(err.Error(), "tls") {
		t.Errorf("client without a certificate: err = %v, want a TLS failure", err)
	} else {
		t.Logf("client without a certificate: %v", err)
	}
	// Valid credentials, a certificate from another CA.
	other, err := deploy.NewCA("other", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := other.Issue("intruder", false, nil, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cfg := d.tlsConfig(t, deploy.CoordinatorDir, "")
	cfg.Certificates = []tls.Certificate{{Certificate: [][]byte{leaf.DER}, PrivateKey: leaf.Key}}
	if _, err := dial(t, "foreign-certificate", d.m.HubURL, coordNkey, cfg); err == nil || !strings.Contains(err.Error(), "tls") {
		t.Errorf("client with a certificate of another CA: err = %v, want a TLS failure", err)
	} else {
		t.Logf("client with a certificate of another CA: %v", err)
	}
	// The coordinator's identity is accepted (the refusals above are not
	// a broken hub).
	d.identity(t, "coordinator", deploy.CoordinatorDir, "coordinator.nk", "coordinator")

	// Plaintext: a client that speaks the NATS protocol without TLS, on
	// the client port and on the leaf-node port, is never answered.
	for _, port := range []int{d.hubPort, d.leafPort} {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		r := bufio.NewReader(c)
		info, err := r.ReadString('\n')
		if err != nil || !strings.HasPrefix(info, "INFO ") || !strings.Contains(info, `"tls_required":true`) {
			t.Errorf("port %d: first line %q (%v), want INFO with tls_required", port, info, err)
		}
		fmt.Fprintf(c, "CONNECT {\"verbose\":false,\"pedantic\":false,\"tls_required\":false,\"name\":\"plaintext\",\"lang\":\"go\",\"version\":\"1\",\"protocol\":1}\r\nPING\r\nSUB pairfed.%s.> 1\r\nPING\r\n", deployFed)
		var rest bytes.Buffer
		_, _ = rest.ReadFrom(r) // until the server closes (or the deadline)
		if strings.Contains(rest.String(), "PONG") || strings.Contains(rest.String(), "+OK") {
			t.Errorf("port %d: plaintext client answered: %q", port, rest.String())
		}
		c.Close()
	}
	// Through the pairfed CLI: a worker with a valid certificate but an
	// nkey the hub does not know is refused, says so and exits.
	w := exec.CommandContext(ctx, pairfed(t), "worker", "--nats", d.m.HubURL, "--federation", deployFed, "--site", "a",
		"--nkey", filepath.Join(d.out, deploy.SiteDir("a"), "worker.nk"), // known to a's leaf server only
		"--tls-ca", filepath.Join(d.out, deploy.SiteDir("a"), "ca.pem"), "--tls-cert", filepath.Join(d.out, deploy.SiteDir("a"), "site.pem"),
		"--tls-key", filepath.Join(d.out, deploy.SiteDir("a"), "site-key.pem"),
		"--data", "../datasets/diabetes", "--state", filepath.Join(d.dir, "worker-state"))
	out, err := w.CombinedOutput()
	if err == nil || !strings.Contains(strings.ToLower(string(out)), "authorization violation") {
		t.Errorf("worker with a wrong nkey: %v\n%s", err, out)
	}
	// A plaintext URL to a host that is not on loopback is refused before
	// any connection.
	out, err = exec.CommandContext(ctx, pairfed(t), "job", "submit", "--nats", "nats://192.0.2.1:4222", "--algo", "fed-avg").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "refusing a plaintext NATS connection") {
		t.Errorf("job submit over plaintext to a remote host: %v\n%s", err, out)
	}
}

// TestDeploySitePermissions: each identity can do exactly what the
// protocol needs it to; every other attempt is a permissions violation
// reported by the server. In particular a site cannot speak to the
// coordinator as another site: site S publishes only on its own subject
// pairfed.F.coord.S (protocol.SiteToCoordSubject), whether it connects
// directly, through its leaf server, or as a modified leaf server, and
// the coordinator's wildcard subscription pairfed.F.coord.* receives
// nothing a site sends on another site's subject.
func TestDeploySitePermissions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d := newDeployment(t, ctx)
	fed := "pairfed." + deployFed
	coord := d.identity(t, "coordinator", deploy.CoordinatorDir, "coordinator.nk", "coordinator")
	a := d.identity(t, "site a", deploy.SiteDir("a"), "site.nk", "site")
	b := d.identity(t, "site b", deploy.SiteDir("b"), "site.nk", "site")
	client := d.identity(t, "client", deploy.ClientDir, "client.nk", "client")

	// The coordinator subscribes to what it listens on
	// (protocol.CoordWildcard and the jobs subject) and to everything of
	// the federation (it may).
	coordIn := coord.subscribe(t, fed+".coord.*")
	coordJobs := coord.subscribe(t, fed+".jobs")
	coordAll := coord.subscribe(t, fed+".>")
	coord.expectNoViolation(t)
	// Sites subscribe to what the worker subscribes to.
	aSites, aOwn := a.subscribe(t, fed+".sites"), a.subscribe(t, fed+".site.a")
	bSites, bOwn := b.subscribe(t, fed+".sites"), b.subscribe(t, fed+".site.b")
	a.expectNoViolation(t)
	b.expectNoViolation(t)

	// Site a may publish to the coordinator (joins, updates) on its own
	// subject...
	a.publish(t, fed+".coord.a", "update from a")
	expectMsg(t, "coordinator", coordIn, fed+".coord.a", "update from a")
	a.expectNoViolation(t)
	// ...but not as site b (b's subject to the coordinator), nor on the
	// old shared subject or another site's, nor on site b's direct
	// subject, nor the broadcast subject (as if it were the coordinator),
	// nor jobs or client answers.
	for _, subj := range []string{fed + ".coord.b", fed + ".coord", fed + ".coord.x", fed + ".coord.a.x", fed + ".site.b", fed + ".sites", fed + ".jobs", fed + ".client.x", "other.subject"} {
		a.publish(t, subj, "forged by a")
		a.expectViolation(t, "Publish", subj)
	}
	expectNone(t, "coordinator (sites' subjects)", coordIn, 300*time.Millisecond)
	expectNone(t, "site b (direct)", bOwn, 0)
	expectNone(t, "site b (broadcast)", bSites, 0)
	expectNone(t, "coordinator (jobs)", coordJobs, 0)
	// Site a cannot subscribe to site b's subject, nor to the updates of
	// the other sites (the coordinator's subjects, not even its own), nor
	// to wildcards.
	var aSpy []chan *nats.Msg
	for _, subj := range []string{fed + ".site.b", fed + ".coord.b", fed + ".coord.*", fed + ".coord.a", fed + ".coord", fed + ".>", fed + ".site.*", fed + ".client.*", ">"} {
		aSpy = append(aSpy, a.subscribe(t, subj))
		a.expectViolation(t, "Subscription", subj)
	}
	// Traffic on those subjects does not reach site a.
	coord.publish(t, fed+".site.b", "for b only")
	expectMsg(t, "site b", bOwn, fed+".site.b", "for b only")
	b.publish(t, fed+".coord.b", "update from b")
	expectMsg(t, "coordinator", coordIn, fed+".coord.b", "update from b")
	for i, ch := range aSpy {
		expectNone(t, fmt.Sprintf("site a's forbidden subscription %d", i), ch, 100*time.Millisecond)
	}
	// The coordinator reaches every site, broadcast and direct.
	coord.publish(t, fed+".sites", "to all sites")
	expectMsg(t, "site a", aSites, fed+".sites", "to all sites")
	expectMsg(t, "site b", bSites, fed+".sites", "to all sites")
	coord.publish(t, fed+".site.a", "for a only")
	expectMsg(t, "site a", aOwn, fed+".site.a", "for a only")
	expectNone(t, "site b", bOwn, 100*time.Millisecond)
	coord.publish(t, fed+".client.c-1", "status")
	coord.expectNoViolation(t)
	// The coordinator's wildcard saw the sites' (permitted) updates.
	expectMsg(t, "coordinator (wildcard)", coordAll, fed+".coord.a", "update from a")

	// The job client submits jobs and reads answers, nothing else.
	clientIn := client.subscribe(t, fed+".client.c-2")
	client.publish(t, fed+".jobs", "job")
	expectMsg(t, "coordinator", coordJobs, fed+".jobs", "job")
	coord.publish(t, fed+".client.c-2", "answer")
	expectMsg(t, "client", clientIn, fed+".client.c-2", "answer")
	client.expectNoViolation(t)
	client.publish(t, fed+".coord.a", "forged update")
	client.expectViolation(t, "Publish", fed+".coord.a")
	client.subscribe(t, fed+".coord.*")
	client.expectViolation(t, "Subscription", fed+".coord.*")
	expectNone(t, "coordinator (sites' subjects)", coordIn, 100*time.Millisecond)

	// Through site a's leaf server: the worker's credential has the same
	// limits, enforced by the leaf server, and the hub enforces the leaf
	// link's.
	d.startLeaf(t, ctx, 0)
	wa, err := dial(t, "worker a", d.m.SiteURLs[0], filepath.Join(d.out, deploy.SiteDir("a"), "worker.nk"), nil)
	if err != nil {
		t.Fatal(err)
	}
	waOwn := wa.subscribe(t, fed+".site.a")
	wa.expectNoViolation(t)
	wa.subscribe(t, fed+".site.b")
	wa.expectViolation(t, "Subscription", fed+".site.b")
	wa.subscribe(t, fed+".coord.*")
	wa.expectViolation(t, "Subscription", fed+".coord.*")
	wa.publish(t, fed+".site.b", "forged by a's worker")
	wa.expectViolation(t, "Publish", fed+".site.b")
	wa.publish(t, fed+".coord.b", "forged by a's worker")
	wa.expectViolation(t, "Publish", fed+".coord.b")
	expectNone(t, "site b", bOwn, 300*time.Millisecond)
	waitInterest(t, ctx, coord, wa, fed+".site.a", waOwn)
	wa.publish(t, fed+".coord.a", "update from a's worker")
	// (expectMsg fails on any "forged" payload that arrives first.)
	expectMsg(t, "coordinator", coordIn, fed+".coord.a", "update from a's worker")
	// A worker without its nkey is refused by the leaf server.
	if _, err := dial(t, "anonymous at leaf a", d.m.SiteURLs[0], "", nil); err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization violation") {
		t.Errorf("anonymous client at the leaf server: err = %v, want an authorization violation", err)
	}

	// A modified leaf server (the site's operator controls it): speaking
	// the leaf-node protocol with site a's link credentials, it can
	// neither subscribe to site b's subject nor publish on it, nor send
	// to the coordinator as site b. (nats-server 2.9.10 does not check
	// the publish permissions of LMSGs: site a's account, which exports
	// only pairfed.F.coord.a to the coordinator, is what stops them.)
	password := leafPassword(t, d, "a")
	probe := dialLeaf(t, d, "a", deploy.LeafUser("a"), password)
	probe.send(t, "LS+ "+fed+".site.b\r\n")
	probe.expectErr(t, `Permissions Violation for Subscription to "`+fed+`.site.b"`)
	probe.close()
	probe = dialLeaf(t, d, "a", deploy.LeafUser("a"), password)
	probe.send(t, fmt.Sprintf("LMSG %s.site.b 6\r\nforged\r\n", fed))
	probe.send(t, fmt.Sprintf("LMSG %s.sites 6\r\nforged\r\n", fed))
	probe.send(t, fmt.Sprintf("LMSG %s.coord.b 6\r\nforged\r\n", fed))
	probe.send(t, fmt.Sprintf("LMSG %s.coord 6\r\nforged\r\n", fed))
	probe.send(t, fmt.Sprintf("LMSG %s.coord.a 7\r\ngenuine\r\n", fed))
	// The probe's permitted message arrives (after the forged ones, which
	// expectMsg would report)...
	expectMsg(t, "coordinator", coordIn, fed+".coord.a", "genuine")
	// ...its forged ones do not, on any subject.
	expectNone(t, "coordinator (sites' subjects)", coordIn, 300*time.Millisecond)
	expectNone(t, "site b", bOwn, 0)
	expectNone(t, "site b (broadcast)", bSites, 0)
	for {
		select {
		case m := <-coordAll:
			if strings.HasPrefix(string(m.Data), "forged") {
				t.Errorf("coordinator (wildcard) received %q on %s", m.Data, m.Subject)
			}
			continue
		default:
		}
		break
	}
	probe.close()
	// A wrong password on the leaf port is refused.
	bad := dialLeaf(t, d, "a", deploy.LeafUser("a"), strings.Repeat("0", len(password)))
	bad.expectErr(t, "Authorization Violation")
	bad.close()
}

// waitInterest waits until a message from pub on subject reaches ch
// (interest across a leaf link propagates asynchronously).
func waitInterest(t *testing.T, ctx context.Context, pub, sub *natsClient, subject string, ch chan *nats.Msg) {
	t.Helper()
	for i := 0; ; i++ {
		payload := fmt.Sprintf("interest probe %d", i)
		pub.publish(t, subject, payload)
		select {
		case m := <-ch:
			if string(m.Data) == payload {
				return
			}
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			t.Fatalf("no interest of %s on %s across the leaf link", sub.name, subject)
		}
	}
}

// leafPassword reads site s's leaf-link password from its leaf.conf.
func leafPassword(t *testing.T, d *deployment, s string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.out, deploy.SiteDir(s), "leaf.conf"))
	if err != nil {
		t.Fatal(err)
	}
	prefix := "tls://" + deploy.LeafUser(s) + ":"
	i := strings.Index(string(b), prefix)
	if i < 0 {
		t.Fatalf("no leaf URL in %s's leaf.conf", s)
	}
	rest := string(b[i+len(prefix):])
	return rest[:strings.Index(rest, "@")]
}

// leafProbe is a raw leaf-node protocol connection to the hub.
type leafProbe struct {
	c     net.Conn
	r     *bufio.Reader
	lines chan string
}

// dialLeaf connects to the hub's leaf-node port over TLS with site s's
// certificate, sends CONNECT with user and password, and waits for the
// hub's answer to a PING (or its error).
func dialLeaf(t *testing.T, d *deployment, s, user, password string) *leafProbe {
	t.Helper()
	raw, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", d.leafPort), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	raw.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(raw)
	info, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(info, "INFO ") {
		t.Fatalf("leaf port: %q, %v", info, err)
	}
	cfg := d.tlsConfig(t, deploy.SiteDir(s), "site")
	cfg.ServerName = "127.0.0.1"
	tc := tls.Client(raw, cfg)
	if err := tc.Handshake(); err != nil {
		t.Fatalf("leaf TLS handshake: %v", err)
	}
	p := &leafProbe{c: tc, r: bufio.NewReader(tc), lines: make(chan string, 256)}
	connect, _ := json.Marshal(map[string]any{"user": user, "pass": password, "tls_required": true, "name": "probe-" + s, "headers": true})
	p.send(t, "CONNECT "+string(connect)+"\r\nPING\r\n")
	go func() {
		defer close(p.lines)
		for {
			l, err := p.r.ReadString('\n')
			if err != nil {
				return
			}
			l = strings.TrimRight(l, "\r\n")
			if l == "PING" {
				fmt.Fprint(p.c, "PONG\r\n")
			}
			p.lines <- l
		}
	}()
	return p
}

func (p *leafProbe) send(t *testing.T, s string) {
	t.Helper()
	if _, err := p.c.Write([]byte(s)); err != nil {
		t.Fatalf("leaf probe write: %v", err)
	}
}

// expectErr waits for an -ERR line containing want.
func (p *leafProbe) expectErr(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	var seen []string
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Errorf("leaf probe closed without -ERR %q; saw %q", want, seen)
				return
			}
			if strings.HasPrefix(l, "-ERR") && strings.Contains(l, want) {
				return
			}
			seen = append(seen, l)
		case <-deadline:
			t.Errorf("no -ERR %q from the hub; saw %q", want, seen)
			return
		}
	}
}

func (p *leafProbe) close() { p.c.Close() }

// unitArgs reads the ExecStart command line of a generated systemd unit
// and expands $VAR / ${VAR} from its EnvironmentFile as systemd does
// ($VAR splits on whitespace, ${VAR} is one word).
func unitArgs(t *testing.T, unit string) []string {
	t.Helper()
	b, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	var exec string
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "EnvironmentFile="); ok {
			eb, err := os.ReadFile(v)
			if err != nil {
				t.Fatal(err)
			}
			for _, el := range strings.Split(string(eb), "\n") {
				if k, v, ok := strings.Cut(el, "="); ok && !strings.HasPrefix(el, "#") {
					env[k] = strings.Trim(v, `"`)
				}
			}
		}
		if v, ok := strings.CutPrefix(l, "ExecStart="); ok {
			exec = v
		}
	}
	var args []string
	for _, w := range strings.Fields(exec) {
		switch {
		case strings.HasPrefix(w, "${") && strings.HasSuffix(w, "}"):
			args = append(args, env[w[2:len(w)-1]])
		case strings.HasPrefix(w, "$"):
			args = append(args, strings.Fields(env[w[1:]])...)
		default:
			args = append(args, w)
		}
	}
	return args
}

// TestDeployFederatedJobOverLeafNodes runs the generated deployment: the
// hub, a leaf server per site, the coordinator and three workers started
// with the command lines of the generated systemd units (budgets, --scale
// none and all), and the generated client script's private job
// (fed-dp-local-sgd, (ε, δ) = (1, 1e-5)), all over TLS, each worker
// through its site's leaf server.
//
// Exact equality with `pairfed simulate` is possible and required: the
// workers hold the records of the simulation's sites in the same order
// and draw sampling and noise as the simulation's sites do (hidden
// --test-sources SEED:INDEX, i.e. seeded noise: reproducible, reported
// not private), the coordinator aggregates in sorted site order (a < b <
// c as site-0 < site-1 < site-2), and msgpack carries float64s exactly;
// nothing but the transport differs. A deployed worker's noise comes from
// crypto/rand, so a real private job is never reproducible.
func TestDeployFederatedJobOverLeafNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const seed = 7
	d := newDeployment(t, ctx)
	bin := pairfed(t)

	// The simulation: `pairfed simulate --data datasets/diabetes --sites 3
	// --algo fed-dp-local-sgd --epsilon 1 --delta 1e-5 --seed 7
	// --noise-seed 0 --feature-bounds client/schema.json` (seeded noise;
	// the generated example schema, which submit-job.sh sends with the job
	// and every worker applies).
	schema, err := data.LoadSchema(filepath.Join(d.out, deploy.ClientDir, "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var opt data.Options
	if _, err := schema.Apply(&opt); err != nil {
		t.Fatal(err)
	}
	train, err := data.Load("../datasets/diabetes", opt)
	if err != nil {
		t.Fatal(err)
	}
	spec := simulate.Spec{Sites: 3, Job: coordinator.JobConfig{Algo: "fed-dp-local-sgd", Epsilon: 1, Delta: 1e-5}, Seed: seed, Seeded: true, Bounds: schema}
	sim, err := simulate.Run(ctx, spec, train, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Its split and partition, as simulate.Run draws them from
	// PCG(seed, 0): the sites' training files hold the same records in
	// the same order (the original lines of the file).
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	split := func() (*randv2.Rand, []int, *pairwise.Dataset, *pairwise.Dataset) {
		rng := randv2.New(randv2.NewPCG(seed, 0))
		// A private job's split has sizes from n alone (as simulate.Run
		// draws it: experiment.PublicSizeSplit).
		trIdx, teIdx, err := experiment.PublicSizeSplit(train.Y, spec.TestFraction, rng)
		if err != nil {
			t.Fatal(err)
		}
		return rng, trIdx, train.Subset(trIdx), train.Subset(teIdx)
	}
	rng, trIdx, tr, _ := split()
	parts, err := simulate.PartitionIID(tr.N, 3, rng) // what Prepare draws next
	if err != nil {
		t.Fatal(err)
	}
	rng, _, tr, te := split()
	simSites, testPrep, err := simulate.Prepare(spec, tr, te, rng)
	if err != nil {
		t.Fatal(err)
	}
	lines := diabetesLines(t)
	if len(lines) != train.N {
		t.Fatalf("%d lines for %d records", len(lines), train.N)
	}

	// The deployment.
	for i, s := range deploySites {
		state := filepath.Join(d.dir, "state", deploy.SiteDir(s))
		if err := os.MkdirAll(state, 0o700); err != nil {
			t.Fatal(err)
		}
		var shard []string
		for _, k := range parts[i] {
			shard = append(shard, lines[trIdx[k]])
		}
		if err := os.WriteFile(filepath.Join(state, "train.libsvm"), []byte(strings.Join(shard, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		d.startLeaf(t, ctx, i)
	}
	if err := os.MkdirAll(filepath.Join(d.dir, "state", "coordinator"), 0o700); err != nil {
		t.Fatal(err)
	}
	cargs := unitArgs(t, filepath.Join(d.out, deploy.CoordinatorDir, "pairfed-coordinator.service"))
	if cargs[0] != bin || !slices.Contains(cargs, "--tls-cert") || !slices.Contains(cargs, d.m.HubURL) {
		t.Fatalf("coordinator unit runs %q", cargs)
	}
	coord := start(t, ctx, d.dir, "coordinator", cargs[0], cargs[1:]...)
	for i, s := range deploySites {
		wargs := unitArgs(t, filepath.Join(d.out, deploy.SiteDir(s), "pairfed-worker.service"))
		if !slices.Contains(wargs, d.m.SiteURLs[i]) || !slices.Contains(wargs, "--nkey") {
			t.Fatalf("worker unit of %s runs %q", s, wargs)
		}
		wargs = append(wargs, "--test-sources", fmt.Sprintf("%d:%d", seed, i))
		start(t, ctx, d.dir, "worker-"+s, wargs[0], wargs[1:]...)
	}
	waitFor(t, ctx, coord.stderr, "joined the federation", 3)

	cmd := exec.CommandContext(ctx, filepath.Join(d.out, deploy.ClientDir, "submit-job.sh"),
		"--algo", "fed-dp-local-sgd", "--epsilon", "1", "--delta", "1e-5", "--min-sites", "3", "--job", "deploy-1", "--json", "--timeout", "60s")
	cmd.Env = append(os.Environ(), "PAIRFED="+bin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("submit-job.sh: %v\n%s\n%s", err, out, stderr.String())
	}
	var rep struct {
		Status  string    `json:"status"`
		Sites   []string  `json:"sites"`
		Model   []float64 `json:"model"`
		Private bool      `json:"private"`
		Privacy []struct {
			Site    string  `json:"site"`
			Epsilon float64 `json:"epsilon"`
			Delta   float64 `json:"delta"`
			Secure  bool    `json:"private"`
		} `json:"privacy"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rep.Status != "completed" || !slices.Equal(rep.Sites, deploySites) || len(rep.Model) != train.D || len(rep.Privacy) != 3 || rep.Private {
		t.Fatalf("job: %s", out)
	}
	for _, p := range rep.Privacy {
		if p.Epsilon != 1 || p.Delta != 1e-5 || p.Secure {
			t.Errorf("site %s reports %+v: want (1, 1e-5) with seeded (not secure) noise", p.Site, p)
		}
	}
	got := pairwise.LinearAUC(rep.Model, testPrep)
	if got != sim.AUC.Mean {
		t.Errorf("deployed job: test AUC %.17g, simulation %.17g", got, sim.AUC.Mean)
	}
	// The model itself, against the simulation's federation of the same
	// sites (what simulate.Run does for its run 0).
	srv, err := transport.StartEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	job := spec.Job
	job.ID = "run-0"
	fo, err := simulate.Federate(ctx, simulate.FederationConfig{Name: "sim0", Job: job, Sites: simSites, Seed: seed,
		Connect: func(name string) (transport.Transport, error) { return transport.ConnectInProcess(srv, name) }})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fo.Result.Model, rep.Model) {
		t.Errorf("deployed model %v\nsimulated model %v", rep.Model, fo.Result.Model)
	}
	if auc := pairwise.LinearAUC(fo.Result.Model, testPrep); auc != sim.AUC.Mean {
		t.Errorf("simulate.Federate AUC %.17g, simulate.Run %.17g: the reconstruction of the run is wrong", auc, sim.AUC.Mean)
	}
	t.Logf("fed-dp-local-sgd over TLS through 3 leaf nodes: AUC %.6f, simulation %.6f, models equal", got, sim.AUC.Mean)

	// A job with secure aggregation over the same units: the sites sign
	// their rounds with the keys deploy init issued and check each other
	// against its roster (--secagg-key, --secagg-roster in the units).
	cmd = exec.CommandContext(ctx, filepath.Join(d.out, deploy.ClientDir, "submit-job.sh"),
		"--algo", "fed-dp-ssp", "--epsilon", "1", "--delta", "1e-5", "--min-sites", "3", "--secure-aggregation", "--job", "deploy-2", "--json", "--timeout", "60s")
	cmd.Env = append(os.Environ(), "PAIRFED="+bin)
	stderr.Reset()
	cmd.Stderr = &stderr
	if out, err = cmd.Output(); err != nil {
		t.Fatalf("submit-job.sh (secure aggregation): %v\n%s\n%s", err, out, stderr.String())
	}
	var srep struct {
		Status string `json:"status"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal(out, &srep); err != nil || srep.Status != "completed" {
		t.Fatalf("secure aggregation job over the deployment: %v: %s", err, out)
	}
	waitFor(t, ctx, coord.stderr, "secure sum of 3 sites", 1)
	// The generated client script with no argument: the recommended
	// private algorithm (default rule), δ = 1e-5 within the generated
	// site budget, the schema shipped in client/: every site takes it
	// (these workers draw seeded noise for the comparison above, so the
	// report says NOT private and why; a deployed worker's noise is
	// secure — cmd/pairfed TestJobCarriesSchema runs the same path with
	// secure noise: private).
	def := exec.CommandContext(ctx, filepath.Join(d.out, deploy.ClientDir, "submit-job.sh"))
	def.Env = append(os.Environ(), "PAIRFED="+bin)
	var defErr bytes.Buffer
	def.Stderr = &defErr
	defOut, err := def.Output()
	if err != nil {
		t.Fatalf("./submit-job.sh with no argument: %v\n%s\n%s", err, defOut, defErr.String())
	}
	for _, want := range []string{"(fed-dp-lda): completed", "sites: a b c", "NOT private: site(s) a, b, c reported not-private releases", "record-level (ε, δ) = (1, 1e-05)"} {
		if !strings.Contains(string(defOut), want) {
			t.Errorf("./submit-job.sh: output lacks %q:\n%s\n%s", want, defOut, defErr.String())
		}
	}
	// The budget the workers enforce is what `ledger show` reports.
	show, err := exec.CommandContext(ctx, bin, "ledger", "show", "--state", filepath.Join(d.dir, "state", deploy.SiteDir("a")), "--json").Output()
	if err != nil || !strings.Contains(string(show), `"epsilon_budget": 4`) || !strings.Contains(string(show), `"delta_budget": 0.0001`) {
		t.Errorf("ledger show of site a: %v\n%s", err, show)
	}

	// Site a speaking for site b on its own subject (the only one the hub
	// lets it use): the coordinator drops the message (the body's site is
	// not the subject's). A join of a's own on the same subject, sent
	// after it, is processed: the path works, and the forged join was
	// handled before it.
	direct := d.identity(t, "site a (direct)", deploy.SiteDir("a"), "site.nk", "site")
	siteA := transport.NewNATS(direct.nc, false)
	for _, m := range []protocol.Message{&protocol.Join{Site: "b", Records: 1, Dim: train.D}, &protocol.Join{Site: "a", Records: 1, Dim: train.D}} {
		b, err := protocol.Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := siteA.Publish(protocol.SiteToCoordSubject(deployFed, "a"), b); err != nil {
			t.Fatal(err)
		}
	}
	direct.expectNoViolation(t)
	log := waitFor(t, ctx, coord.stderr, "site a rejoined with n = 1,", 1)
	forged := "dropped message on " + protocol.SiteToCoordSubject(deployFed, "a")
	if !strings.Contains(log, forged) || !strings.Contains(log, "claims to come from") || strings.Contains(log, "site b rejoined") {
		t.Errorf("the coordinator did not drop site a's join as site b (want %q ... claims to come from):\n%s", forged, tail(log, 4000))
	}
}

// diabetesLines returns the non-blank lines of the bundled diabetes file,
// one record each, in file order (the tests give sites shards of them).
func diabetesLines(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../datasets/diabetes")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
