package deploy

import (
	"bytes"
	"crypto/ed25519"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/secagg/round"
	"golang.org/x/crypto/bcrypt"
)

var testSites = []string{"a", "b", "c"}

func init() { bcryptCost = bcrypt.MinCost } // the race detector makes cost 10 take seconds

// generate writes a deployment whose install prefix is its own output
// directory (so that the configs can be run in place).
func generate(t *testing.T) (string, *Manifest) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "dep")
	m, err := Generate(Config{Federation: "fed1", Sites: testSites, HubHosts: []string{"hub.example.org", "192.0.2.10"}, Prefix: out}, out)
	if err != nil {
		t.Fatal(err)
	}
	return out, m
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var seedRE = regexp.MustCompile(`(?m)^SU[A-Z2-7]{56}$`)
var leafURLRE = regexp.MustCompile(`tls://(leaf-[A-Za-z0-9_-]+):([0-9a-f]+)@`)

// TestSecretsStayInTheirFiles: every secret is in a 0600 file marked
// secret in the manifest, in its own role's directory only, and no other
// file contains it.
func TestSecretsStayInTheirFiles(t *testing.T) {
	out, m := generate(t)
	type secret struct{ value, dir string }
	var secrets []secret
	for _, f := range m.Files {
		p := filepath.Join(out, f.Path)
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%04o", st.Mode().Perm()); got != f.Mode {
			t.Errorf("%s: mode %s, manifest says %s", f.Path, got, f.Mode)
		}
		name := filepath.Base(f.Path)
		wantSecret := strings.HasSuffix(name, "-key.pem") || strings.HasSuffix(name, ".nk") || name == "nats-server.conf" || name == "leaf.conf"
		if f.Secret != wantSecret || (f.Secret && f.Mode != "0600") {
			t.Errorf("%s: secret %v, mode %s", f.Path, f.Secret, f.Mode)
		}
		dir := filepath.Dir(f.Path)
		text := read(t, p)
		switch {
		case strings.HasSuffix(name, "-key.pem"):
			secrets = append(secrets, secret{strings.TrimSpace(text), dir})
		case strings.HasSuffix(name, ".nk"):
			seeds := seedRE.FindAllString(text, -1)
			if len(seeds) != 1 {
				t.Fatalf("%s: %d seeds", f.Path, len(seeds))
			}
			secrets = append(secrets, secret{seeds[0], dir})
		case name == "leaf.conf":
			mm := leafURLRE.FindStringSubmatch(text)
			if mm == nil || len(mm[2]) != 64 {
				t.Fatalf("%s: no leaf URL with a 256-bit password", f.Path)
			}
			secrets = append(secrets, secret{mm[2], dir})
		}
	}
	if len(secrets) != 4+5*len(testSites)+2 { // CA, hub, coordinator and client keys; per site: key, secure aggregation key, 2 seeds, password; coordinator and client seeds
		t.Errorf("%d secrets", len(secrets))
	}
	for _, f := range m.Files {
		text := read(t, filepath.Join(out, f.Path))
		for _, s := range secrets {
			if strings.Contains(text, s.value) && filepath.Dir(f.Path) != s.dir {
				t.Errorf("%s contains a secret of %s/", f.Path, s.dir)
			}
			if strings.Contains(text, s.value) && !f.Secret {
				t.Errorf("%s (not marked secret, mode %s) contains a secret", f.Path, f.Mode)
			}
		}
		if strings.Contains(text, "PRIVATE KEY") && !f.Secret {
			t.Errorf("%s holds a private key", f.Path)
		}
	}
}

// Every site gets its own secure aggregation signing key (not an nkey);
// the roster beside it and in the coordinator's directory is the same
// file and lists each site's public key.
func TestSecAggKeys(t *testing.T) {
	out, _ := generate(t)
	coord := read(t, filepath.Join(out, CoordinatorDir, SecAggRosterFile))
	roster, err := round.ParseRoster([]byte(coord))
	if err != nil {
		t.Fatal(err)
	}
	if len(roster) != len(testSites) {
		t.Fatalf("roster of %d sites, want %d", len(roster), len(testSites))
	}
	for _, s := range testSites {
		if got := read(t, filepath.Join(out, SiteDir(s), SecAggRosterFile)); got != coord {
			t.Errorf("site %s's roster differs from the coordinator's", s)
		}
		k, err := round.ParseSigningKey([]byte(read(t, filepath.Join(out, SiteDir(s), SecAggKeyFile))))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(k.Public().(ed25519.PublicKey), roster[s]) {
			t.Errorf("site %s: its key is not the roster's", s)
		}
	}
	unit := read(t, filepath.Join(out, SiteDir(testSites[0]), "pairfed-worker.service"))
	if !strings.Contains(unit, "--secagg-key "+out+"/"+SiteDir(testSites[0])+"/"+SecAggKeyFile) || !strings.Contains(unit, "--secagg-roster") {
		t.Errorf("worker unit without the secure aggregation keys:\n%s", unit)
	}
	if !strings.Contains(read(t, filepath.Join(out, CoordinatorDir, "pairfed-coordinator.service")), "--secagg-roster") {
		t.Error("coordinator unit without the roster")
	}
}

func TestCertificates(t *testing.T) {
	out, _ := generate(t)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(read(t, filepath.Join(out, "ca", "ca.pem")))) {
		t.Fatal("CA")
	}
	load := func(dir, name string) *x509.Certificate {
		pair, err := tls.LoadX509KeyPair(filepath.Join(out, dir, name+".pem"), filepath.Join(out, dir, name+"-key.pem"))
		if err != nil {
			t.Fatalf("%s/%s: %v", dir, name, err)
		}
		c, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	hub := load(HubDir, "server")
	for _, host := range []string{"hub.example.org", "192.0.2.10", "localhost", "127.0.0.1", "::1"} {
		if _, err := hub.Verify(x509.VerifyOptions{Roots: pool, DNSName: host}); err != nil {
			t.Errorf("hub certificate for %s: %v", host, err)
		}
	}
	if _, err := hub.Verify(x509.VerifyOptions{Roots: pool, DNSName: "evil.example.org"}); err == nil {
		t.Error("hub certificate valid for evil.example.org")
	}
	if _, err := hub.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("hub certificate usable as a client certificate")
	}
	clients := []*x509.Certificate{load(CoordinatorDir, "coordinator"), load(ClientDir, "client")}
	for _, s := range testSites {
		clients = append(clients, load(SiteDir(s), "site"))
	}
	for _, c := range clients {
		if _, err := c.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("%s: %v", c.Subject.CommonName, err)
		}
		if _, err := c.Verify(x509.VerifyOptions{Roots: pool}); err == nil {
			t.Errorf("%s is usable as a server certificate", c.Subject.CommonName)
		}
		if c.IsCA {
			t.Errorf("%s is a CA", c.Subject.CommonName)
		}
	}
	// The CA cannot sign intermediates, and a certificate another CA
	// issues does not verify.
	block, _ := pem.Decode([]byte(read(t, filepath.Join(out, "ca", "ca.pem"))))
	ca, _ := x509.ParseCertificate(block.Bytes)
	if !ca.IsCA || ca.MaxPathLen != 0 || !ca.MaxPathLenZero || ca.NotAfter.Before(clients[0].NotAfter) {
		t.Errorf("CA: IsCA %v, MaxPathLen %d, expires %v", ca.IsCA, ca.MaxPathLen, ca.NotAfter)
	}
	other, err := NewCA("other", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	intruder, err := other.Issue("intruder", false, nil, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := intruder.Cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("a certificate of another CA verifies")
	}
}

func TestCredentialsMatchTheHub(t *testing.T) {
	out, m := generate(t)
	hub := read(t, filepath.Join(out, HubDir, "nats-server.conf"))
	seedPub := func(path string) string {
		kp, err := nkeys.ParseDecoratedNKey([]byte(read(t, path)))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		pub, _ := kp.PublicKey()
		return pub
	}
	want := map[string]string{"coordinator": seedPub(filepath.Join(out, CoordinatorDir, "coordinator.nk")), "client": seedPub(filepath.Join(out, ClientDir, "client.nk"))}
	for _, s := range testSites {
		want["site "+s] = seedPub(filepath.Join(out, SiteDir(s), "site.nk"))
		want["worker "+s] = seedPub(filepath.Join(out, SiteDir(s), "worker.nk"))
	}
	for _, id := range m.Identities {
		if id.Role == "leaf" {
			continue
		}
		key := id.Role
		if id.Site != "" {
			key += " " + id.Site
		}
		if id.Nkey != want[key] {
			t.Errorf("%s: manifest nkey %s, seed file %s", key, id.Nkey, want[key])
		}
		delete(want, key)
		conf := hub
		if id.Server != HubDir {
			conf = read(t, filepath.Join(out, id.Server, "leaf.conf"))
		}
		if !strings.Contains(conf, `nkey: "`+id.Nkey+`"`) {
			t.Errorf("%s: nkey not in %s's config", key, id.Server)
		}
	}
	if len(want) != 0 {
		t.Errorf("identities missing from the manifest: %v", want)
	}
	// Each leaf link's password matches its bcrypt hash at the hub, and
	// no other site's.
	hashes := map[string]string{}
	for _, mm := range regexp.MustCompile(`user: "(leaf-[a-z]+)", password: "(\$2a\$[^"]+)"`).FindAllStringSubmatch(hub, -1) {
		hashes[mm[1]] = mm[2]
	}
	if len(hashes) != len(testSites) {
		t.Fatalf("%d leaf users at the hub", len(hashes))
	}
	for _, s := range testSites {
		mm := leafURLRE.FindStringSubmatch(read(t, filepath.Join(out, SiteDir(s), "leaf.conf")))
		for user, hash := range hashes {
			err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(mm[2]))
			if (user == LeafUser(s)) != (err == nil) || mm[1] != LeafUser(s) {
				t.Errorf("site %s's password against %s: %v", s, user, err)
			}
		}
	}
}

func TestPermissions(t *testing.T) {
	if p := SitePermissions("f", "a"); strings.Join(p.Publish, " ") != "pairfed.f.coord.a" || strings.Join(p.Subscribe, " ") != "pairfed.f.sites pairfed.f.site.a" {
		t.Errorf("site: %+v", p)
	}
	if p := ClientPermissions("f"); strings.Join(p.Publish, " ") != "pairfed.f.jobs" || strings.Join(p.Subscribe, " ") != "pairfed.f.client.*" {
		t.Errorf("client: %+v", p)
	}
	if p := CoordinatorPermissions("f"); strings.Join(p.Publish, " ") != "pairfed.f.>" || strings.Join(p.Subscribe, " ") != "pairfed.f.>" {
		t.Errorf("coordinator: %+v", p)
	}
	// Accounts: a site's account imports only the broadcasts and its own
	// subject from the coordinator, and exports only its own subject to
	// the coordinator, to the coordinator only; the coordinator imports
	// each site's subject from that site's account only.
	accounts := hubAccounts("f", []string{"a", "b"})
	seen := 0
	for _, a := range accounts {
		switch a.Name {
		case SiteAccount("a"), SiteAccount("b"):
			s := strings.TrimPrefix(a.Name, "site-")
			seen++
			if len(a.Exports) != 1 || a.Exports[0].Subject != "pairfed.f.coord."+s || strings.Join(a.Exports[0].Accounts, ",") != CoordinatorAccount {
				t.Errorf("site %s exports %+v", s, a.Exports)
			}
			if fmt.Sprint(a.Imports) != "[{coordinator pairfed.f.sites} {coordinator pairfed.f.site."+s+"}]" {
				t.Errorf("site %s imports %+v", s, a.Imports)
			}
		}
	}
	if seen != 2 {
		t.Errorf("%d site accounts", seen)
	}
	if accounts[0].Name != CoordinatorAccount {
		t.Fatalf("first account %s", accounts[0].Name)
	}
	if fmt.Sprint(accounts[0].Exports) != "[{pairfed.f.sites [site-a site-b]} {pairfed.f.site.a [site-a]} {pairfed.f.site.b [site-b]} {pairfed.f.client.* [client]}]" {
		t.Errorf("coordinator exports %+v", accounts[0].Exports)
	}
	if fmt.Sprint(accounts[0].Imports) != "[{site-a pairfed.f.coord.a} {site-b pairfed.f.coord.b} {client pairfed.f.jobs}]" {
		t.Errorf("coordinator imports %+v", accounts[0].Imports)
	}
}

func TestGenerateRefuses(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	cases := []struct {
		cfg  Config
		out  string
		want string
	}{
		{Config{Federation: "f", Sites: []string{"a"}}, dir, "not empty"},
		{Config{Federation: "f.g", Sites: []string{"a"}}, "", "federation"},
		{Config{Federation: "f"}, "", "no sites"},
		{Config{Federation: "f", Sites: []string{"a", "a"}}, "", "twice"},
		// Probe 4 (issue 28): names equal up to case were accepted.
		{Config{Federation: "f", Sites: []string{"A", "a"}}, "", `sites "A" and "a" differ only in case`},
		{Config{Federation: "f", Sites: []string{"a*"}}, "", "site"},
		{Config{Federation: "f", Sites: []string{"a", "b"}, SitePorts: []int{1, 1}}, "", "not distinct"},
		{Config{Federation: "f", Sites: []string{"a"}, SitePorts: []int{70000}}, "", "outside"},
		{Config{Federation: "f", Sites: []string{"a"}, HubHosts: []string{"-bad-.org"}}, "", "not a host name"},
		{Config{Federation: "f", Sites: []string{"a"}, HubBind: "example.org"}, "", "not an IP"},
		{Config{Federation: "f", Sites: []string{"a"}, StateDir: "/var/lib/$(reboot)"}, "", "not allowed"},
		{Config{Federation: "f", Sites: []string{"a"}, Pairfed: "pairfed"}, "", "absolute"},
	}
	for _, c := range cases {
		out := c.out
		if out == "" {
			out = filepath.Join(t.TempDir(), "out")
		}
		_, err := Generate(c.cfg, out)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.cfg, err, c.want)
		}
	}
}

// TestUnitsAndScripts: the units run the right binaries on the right
// files, and the job script is valid sh.
func TestUnitsAndScripts(t *testing.T) {
	out, m := generate(t)
	coord := read(t, filepath.Join(out, CoordinatorDir, "pairfed-coordinator.service"))
	for _, want := range []string{"ExecStart=" + DefaultPairfed + " coordinator --nats tls://hub.example.org:4222 --federation fed1 --nkey " + out + "/coordinator/coordinator.nk",
		"--tls-cert " + out + "/coordinator/coordinator.pem", "EnvironmentFile=" + out + "/coordinator/coordinator.env", "$PAIRFED_ARGS"} {
		if !strings.Contains(coord, want) {
			t.Errorf("coordinator unit lacks %q", want)
		}
	}
	w := read(t, filepath.Join(out, SiteDir("b"), "pairfed-worker.service"))
	for _, want := range []string{"worker --nats nats://127.0.0.1:4222 --federation fed1 --site b --nkey " + out + "/site-b/worker.nk", "Requires=pairfed-nats-leaf.service", "--data ${PAIRFED_DATA}"} {
		if !strings.Contains(w, want) {
			t.Errorf("worker unit lacks %q", want)
		}
	}
	if l := read(t, filepath.Join(out, SiteDir("b"), "pairfed-nats-leaf.service")); !strings.Contains(l, "ExecStart="+DefaultNATSServer+" -c "+out+"/site-b/leaf.conf") {
		t.Errorf("leaf unit:\n%s", l)
	}
	compose := read(t, filepath.Join(out, "docker-compose.yml"))
	for _, s := range testSites {
		if !strings.Contains(compose, "  leaf-"+s+":") || !strings.Contains(compose, `network_mode: "service:leaf-`+s+`"`) {
			t.Errorf("compose file lacks site %s", s)
		}
	}
	if !strings.Contains(compose, "aliases: [hub.example.org]") || strings.Contains(compose, "\t") {
		t.Error("compose file: no hub alias, or tabs")
	}
	script := filepath.Join(out, ClientDir, "submit-job.sh")
	if st, _ := os.Stat(script); st.Mode().Perm() != 0o755 {
		t.Errorf("submit-job.sh mode %v", st.Mode())
	}
	if sh, err := exec.LookPath("sh"); err == nil {
		if b, err := exec.Command(sh, "-n", script).CombinedOutput(); err != nil {
			t.Errorf("sh -n submit-job.sh: %v %s", err, b)
		}
	}
	if m.HubURL != "tls://hub.example.org:4222" || m.LeafURL != "tls://hub.example.org:7422" || len(m.SiteURLs) != 3 {
		t.Errorf("manifest %+v", m)
	}
}

// TestConfigsRunInProcess runs the generated hub and one leaf config with
// the nats-server library this module builds with (the integration tests
// run Debian's nats-server binary): the configs parse, a site's worker
// reaches the coordinator through its leaf server, and forbidden
// subjects are refused.
func TestConfigsRunInProcess(t *testing.T) {
	out, m := generate(t)
	hubOpts, err := server.ProcessConfigFile(filepath.Join(out, HubDir, "nats-server.conf"))
	if err != nil {
		t.Fatal(err)
	}
	leafPort := freePort(t)
	hubOpts.Host, hubOpts.Port, hubOpts.LeafNode.Host, hubOpts.LeafNode.Port = "127.0.0.1", -1, "127.0.0.1", leafPort
	hubOpts.NoLog, hubOpts.NoSigs = true, true
	hub := runServer(t, hubOpts)
	leafOpts, err := server.ProcessConfigFile(filepath.Join(out, SiteDir("a"), "leaf.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if len(leafOpts.LeafNode.Remotes) != 1 || leafOpts.LeafNode.Remotes[0].URLs[0].User.Username() != "leaf-a" {
		t.Fatalf("leaf remotes %+v", leafOpts.LeafNode.Remotes)
	}
	// The hub's certificate also names 127.0.0.1.
	leafOpts.LeafNode.Remotes[0].URLs[0].Host = fmt.Sprintf("127.0.0.1:%d", leafPort)
	leafOpts.Port, leafOpts.NoLog, leafOpts.NoSigs = -1, true, true
	leaf := runServer(t, leafOpts)
	deadline := time.Now().Add(10 * time.Second)
	for leaf.NumLeafNodes() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("leaf link not up")
		}
		time.Sleep(20 * time.Millisecond)
	}

	connect := func(url, dir, nkey, cert string, errs chan error) *nats.Conn {
		opts := []nats.Option{nats.NoReconnect(), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err })}
		o, err := nats.NkeyOptionFromSeed(filepath.Join(out, dir, nkey))
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, o)
		if cert != "" {
			opts = append(opts, nats.RootCAs(filepath.Join(out, dir, "ca.pem")), nats.ClientCert(filepath.Join(out, dir, cert+".pem"), filepath.Join(out, dir, cert+"-key.pem")))
		}
		nc, err := nats.Connect(url, opts...)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	coordErrs, workerErrs := make(chan error, 16), make(chan error, 16)
	coord := connect(hub.ClientURL(), CoordinatorDir, "coordinator.nk", "coordinator", coordErrs)
	worker := connect(leaf.ClientURL(), SiteDir("a"), "worker.nk", "", workerErrs)
	coordIn, _ := coord.SubscribeSync("pairfed.fed1.coord.*") // protocol.CoordWildcard
	workerIn, _ := worker.SubscribeSync("pairfed.fed1.site.a")
	coord.Flush()
	worker.Flush()
	// Interest crosses the leaf link asynchronously: retry until a
	// message gets through each way.
	got := func(sub *nats.Subscription, pub *nats.Conn, subject string) bool {
		for i := 0; i < 100; i++ {
			pub.Publish(subject, []byte("x"))
			pub.Flush()
			if _, err := sub.NextMsg(50 * time.Millisecond); err == nil {
				return true
			}
		}
		return false
	}
	if !got(coordIn, worker, "pairfed.fed1.coord.a") {
		t.Error("worker a's update did not reach the coordinator")
	}
	if !got(workerIn, coord, "pairfed.fed1.site.a") {
		t.Error("the coordinator's message did not reach worker a")
	}
	// Worker a can neither publish on site b's direct subject nor speak
	// to the coordinator on site b's subject (nor on the old shared
	// subject).
	for _, subj := range []string{"pairfed.fed1.site.b", "pairfed.fed1.coord.b", "pairfed.fed1.coord"} {
		worker.Publish(subj, []byte("forged"))
		worker.Flush()
		select {
		case err := <-workerErrs:
			if !errors.Is(err, nats.ErrPermissionViolation) || !strings.Contains(err.Error(), `"`+subj+`"`) {
				t.Errorf("worker a publishing on %s: %v", subj, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("worker a published on %s without a violation", subj)
		}
	}
	for {
		msg, err := coordIn.NextMsg(200 * time.Millisecond)
		if err != nil {
			break
		}
		if string(msg.Data) == "forged" { // (late "x" probes are fine)
			t.Errorf("the coordinator received %q on %s", msg.Data, msg.Subject)
		}
	}
	if len(m.Identities) != 2+3*len(testSites) { // coordinator, client; per site: direct, leaf link, worker
		t.Errorf("%d identities", len(m.Identities))
	}
}

func runServer(t *testing.T, opts *server.Options) *server.Server {
	t.Helper()
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
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

// The generated job is the private path: submit-job.sh with no argument
// asks the recommended private algorithm (no --algo), sends the shipped
// schema (a valid public schema) and a δ within the generated site
// budget; its arguments keep those two unless they give them; worker.env
// sets no --scale (sites apply the job's schema). Checked by running the
// script with a stand-in binary that prints its arguments.
func TestGeneratedJobIsPrivate(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	out, _ := generate(t)
	schemaPath := filepath.Join(out, ClientDir, "schema.json")
	s, err := data.LoadSchema(schemaPath)
	if err != nil {
		t.Fatalf("the shipped schema: %v", err)
	}
	if s.D() != 8 || len(s.Unknown()) != 0 || !strings.Contains(s.Description, "PLACEHOLDER") {
		t.Errorf("the shipped schema: d = %d, %d unknown, description %q", s.D(), len(s.Unknown()), s.Description)
	}
	fake := filepath.Join(t.TempDir(), "pairfed")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		cmd := exec.Command(sh, append([]string{filepath.Join(out, ClientDir, "submit-job.sh")}, args...)...)
		cmd.Env = append(os.Environ(), "PAIRFED="+fake)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("submit-job.sh %v: %v %s", args, err, b)
		}
		return string(b)
	}
	got := run()
	for _, want := range []string{"job submit ", "--feature-bounds " + schemaPath, "--delta 1e-5", "--epsilon 1 --min-sites 3", "--wait"} {
		if !strings.Contains(got, want) {
			t.Errorf("default job %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "--algo") {
		t.Errorf("default job names an algorithm (want the default rule): %q", got)
	}
	got = run("--algo", "fed-dp-gd-grad", "--epsilon", "0.5", "--delta", "1e-6", "--feature-bounds", "/x.json")
	if strings.Contains(got, schemaPath) || strings.Contains(got, "1e-5") || !strings.Contains(got, "--delta 1e-6") {
		t.Errorf("given --delta and --feature-bounds must be kept: %q", got)
	}
	if got = run("--epsilon", "0.5"); !strings.Contains(got, "--feature-bounds "+schemaPath) || !strings.Contains(got, "--delta 1e-5") {
		t.Errorf("arguments without --delta/--feature-bounds: %q", got)
	}
	env := read(t, filepath.Join(out, SiteDir("a"), "worker.env"))
	var args string
	for _, l := range strings.Split(env, "\n") {
		if strings.HasPrefix(l, "PAIRFED_ARGS=") {
			args = l
		}
	}
	if strings.Contains(args, "--scale") || !strings.Contains(args, "--budget-delta 1e-4") || !strings.Contains(args, "--budget-epsilon 4") {
		t.Errorf("worker.env: %s (want no --scale; a δ budget of 1e-4 ≥ 10 jobs of the script's 1e-5)", args)
	}
}

// TestGenerateHubCluster: with HubNodes, every node's config parses with
// the nats-server library, names the node's own files and ports, routes
// to the other nodes (TLS, verified both ways, the route credential);
// every node holds the same accounts; every site's leaf link and every
// client lists all nodes; a node's certificate serves and dials routes.
// Bad cluster shapes are refused.
func TestGenerateHubCluster(t *testing.T) {
	out := filepath.Join(t.TempDir(), "dep")
	hosts := []string{"hub1.example.org", "hub2.example.org", "192.0.2.13"}
	m, err := Generate(Config{Federation: "fed1", Sites: testSites, HubNodes: hosts, Prefix: out}, out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "tls://hub1.example.org:4222,tls://hub2.example.org:4222,tls://192.0.2.13:4222"; m.HubURL != want {
		t.Errorf("hub URL %q, want %q", m.HubURL, want)
	}
	if !slices.Equal(m.HubNodes, []string{"hub-1", "hub-2", "hub-3"}) {
		t.Errorf("hub nodes %q", m.HubNodes)
	}
	if _, err := os.Stat(filepath.Join(out, HubDir)); err == nil {
		t.Error("a single hub's directory beside the cluster's")
	}
	if _, err := os.Stat(filepath.Join(out, "docker-compose.yml")); err == nil {
		t.Error("docker-compose.yml (single hub only) written for a cluster")
	}
	var users []int
	for i := range hosts {
		dir := HubNodeDir(i)
		opts, err := server.ProcessConfigFile(filepath.Join(out, dir, "nats-server.conf"))
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if opts.Cluster.Name != "pairfed-fed1" || opts.Cluster.Port != DefaultClusterPort || opts.Cluster.TLSConfig == nil || opts.Cluster.Username != "route" || opts.Cluster.Password == "" {
			t.Errorf("%s: cluster %+v", dir, opts.Cluster)
		}
		if opts.Cluster.TLSConfig != nil && opts.Cluster.TLSConfig.ClientAuth != tls.RequireAndVerifyClientCert {
			t.Errorf("%s: routes do not verify the dialing node's certificate", dir)
		}
		if len(opts.Routes) != 2 {
			t.Fatalf("%s: routes %v", dir, opts.Routes)
		}
		for _, r := range opts.Routes {
			if r.Host == net.JoinHostPort(hosts[i], "6222") || r.User.Username() != "route" {
				t.Errorf("%s: route %v", dir, r)
			}
			if p, _ := r.User.Password(); p != opts.Cluster.Password {
				t.Errorf("%s: route password differs from the cluster's", dir)
			}
		}
		if opts.ServerName != "pairfed-fed1-hub-"+fmt.Sprint(i+1) || opts.TLSConfig == nil || opts.LeafNode.Port != DefaultLeafPort {
			t.Errorf("%s: server %q, leaf port %d", dir, opts.ServerName, opts.LeafNode.Port)
		}
		conf := read(t, filepath.Join(out, dir, "nats-server.conf"))
		if strings.Contains(conf, "/hub/") || !strings.Contains(conf, out+"/"+dir+"/server.pem") {
			t.Errorf("%s: paths not the node's own", dir)
		}
		users = append(users, len(opts.Nkeys)+len(opts.Users))
		// The node's certificate: server and client, for every node host.
		b, _ := pem.Decode([]byte(read(t, filepath.Join(out, dir, "server.pem"))))
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageClientAuth) || !slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageServerAuth) {
			t.Errorf("%s: certificate usages %v", dir, cert.ExtKeyUsage)
		}
		for _, h := range hosts {
			if cert.VerifyHostname(h) != nil {
				t.Errorf("%s: certificate does not name %s", dir, h)
			}
		}
	}
	if users[0] == 0 || users[1] != users[0] || users[2] != users[0] {
		t.Errorf("users per node %v", users)
	}
	leafOpts, err := server.ProcessConfigFile(filepath.Join(out, SiteDir(testSites[0]), "leaf.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if len(leafOpts.LeafNode.Remotes) != 1 || len(leafOpts.LeafNode.Remotes[0].URLs) != 3 {
		t.Fatalf("leaf remotes %+v", leafOpts.LeafNode.Remotes)
	}
	coordUnit := read(t, filepath.Join(out, CoordinatorDir, "pairfed-coordinator.service"))
	if !strings.Contains(coordUnit, "--nats "+m.HubURL+" ") {
		t.Errorf("the coordinator's unit does not list every node")
	}
	// The single hub is unchanged: no cluster block.
	single, _ := generate(t)
	if strings.Contains(read(t, filepath.Join(single, HubDir, "nats-server.conf")), "cluster {") {
		t.Error("a single hub has a cluster block")
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{HubNodes: []string{"h1"}}, "a hub cluster of 1 nodes: give 2 to 9"},
		{Config{HubNodes: []string{"h", "h", "h"}, ClientPort: 4222, LeafPort: 4223}, "overlap over 3 nodes"},
		{Config{HubNodes: []string{"h1", "h2"}, ClusterPort: 4222}, "two of the client, leaf-node and cluster ports are 4222"},
		{Config{HubNodes: []string{"h1", "bad host"}}, "bad host"},
	} {
		c.cfg.Federation, c.cfg.Sites = "fed1", testSites
		if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg.HubNodes, err, c.want)
		}
	}
}

// TestHubNodePortsNearTheTop (probe 6, issue 28): nodes on one host listen
// on the base ports plus their index; a base port whose last node's port
// passes 65535 names the flag, the sum and the largest base that works, and
// nodes on distinct hosts (which listen on the base ports) may use 65535.
func TestHubNodePortsNearTheTop(t *testing.T) {
	c := Config{Federation: "f", Sites: []string{"a", "b"}, HubNodes: []string{"h", "h", "h"}, ClientPort: 65534}
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "node 3 would listen on --client-port 65534 + 2 = 65536, outside 1..65535; give --client-port ≤ 65533") {
		t.Errorf("nodes on one host: %v", err)
	}
	c = Config{Federation: "f", Sites: []string{"a", "b"}, HubNodes: []string{"h1", "h2", "h3"}, ClientPort: 65535}
	if err := c.Validate(); err != nil {
		t.Errorf("nodes on distinct hosts, client port 65535: %v", err)
	}
}
