package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/pairfed/pairfed/deploy"
)

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "127.0.0.1": true, "127.3.2.1": true, "::1": true, "0.0.0.0": true, "::": true, "": true,
		"10.0.0.1": false, "192.168.1.2": false, "hub.example.org": false, "localhost.example.org": false, "128.0.0.1": false, "::2": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// generated writes a one-site deployment (real nkey seeds and
// certificates) and returns its directory.
func generated(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := deploy.Generate(deploy.Config{Federation: "t", Sites: []string{"a"}, Prefix: dir}, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "out")
}

func TestConnPlaintextRule(t *testing.T) {
	out := generated(t)
	ca := filepath.Join(out, "client", "ca.pem")
	cases := []struct {
		url     string
		s       connSettings
		refused bool
	}{
		{"nats://127.0.0.1:4222", connSettings{}, false},
		{"nats://localhost:4222", connSettings{}, false},
		{"nats://[::1]:4222", connSettings{}, false},
		{"127.0.0.1:4222", connSettings{}, false}, // no scheme: nats://
		{"nats://0.0.0.0:4222", connSettings{}, false},
		{"nats://10.1.2.3:4222", connSettings{}, true},
		{"hub.example.org:4222", connSettings{}, true},
		{"ws://hub.example.org:80", connSettings{}, true},
		{"nats://127.0.0.1:4222,nats://hub.example.org:4222", connSettings{}, true}, // one remote plaintext URL is enough
		{"nats://10.1.2.3:4222", connSettings{Insecure: true}, false},
		{"tls://hub.example.org:4222", connSettings{}, false},
		{"wss://hub.example.org:443", connSettings{}, false},
		{"nats://hub.example.org:4222", connSettings{CA: ca}, false}, // --tls-ca forces TLS
		{"nats://user:secret@10.1.2.3:4222", connSettings{}, true},
	}
	for _, c := range cases {
		_, err := c.s.options(c.url)
		refused := err != nil && strings.Contains(err.Error(), "refusing a plaintext NATS connection")
		if refused != c.refused || (err != nil && !refused) {
			t.Errorf("%s %+v: err = %v, want refused = %v", c.url, c.s, err, c.refused)
		}
		if refused {
			if _, ok := err.(usageError); !ok {
				t.Errorf("%s: %T is not a usage error", c.url, err)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("%s: the error shows the password: %v", c.url, err)
			}
		}
	}
}

func TestConnFlagErrors(t *testing.T) {
	out := generated(t)
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("not a key\n"), 0o600)
	client := func(f string) string { return filepath.Join(out, "client", f) }
	url := "tls://127.0.0.1:4222"
	cases := []struct {
		name string
		url  string
		s    connSettings
		want string
	}{
		{"nkey and creds", url, connSettings{Nkey: client("client.nk"), Creds: client("client.nk")}, "at most one of --nkey and --creds"},
		{"cert without key", url, connSettings{Cert: client("client.pem")}, "--tls-cert and --tls-key go together"},
		{"key without cert", url, connSettings{Key: client("client-key.pem")}, "--tls-cert and --tls-key go together"},
		{"missing nkey file", url, connSettings{Nkey: filepath.Join(dir, "missing.nk")}, "--nkey"},
		{"not a seed", url, connSettings{Nkey: junk}, "--nkey"},
		{"seed as creds", url, connSettings{Creds: client("client.nk")}, "no user JWT"},
		{"missing creds", url, connSettings{Creds: filepath.Join(dir, "missing.creds")}, "--creds"},
		{"CA not PEM", url, connSettings{CA: junk}, "no PEM certificate"},
		{"missing CA", url, connSettings{CA: filepath.Join(dir, "missing.pem")}, "--tls-ca"},
		{"key of another cert", url, connSettings{Cert: client("client.pem"), Key: filepath.Join(out, "coordinator", "coordinator-key.pem")}, "--tls-cert/--tls-key"},
		{"bad scheme", "http://127.0.0.1:4222", connSettings{}, "unknown scheme"},
		{"no URL", " , ", connSettings{}, "no NATS URL"},
	}
	for _, c := range cases {
		_, err := c.s.options(c.url)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
			continue
		}
		if _, ok := err.(usageError); !ok {
			t.Errorf("%s: %T is not a usage error", c.name, err)
		}
	}
}

// The generated files give a TLS configuration with the CA and the
// client certificate, and nkey authentication with the seed's public key.
func TestConnOptionsFromGeneratedFiles(t *testing.T) {
	out := generated(t)
	client := func(f string) string { return filepath.Join(out, "client", f) }
	opts, err := connSettings{Nkey: client("client.nk"), CA: client("ca.pem"), Cert: client("client.pem"), Key: client("client-key.pem")}.options("nats://hub.example.org:4222")
	if err != nil {
		t.Fatal(err)
	}
	o := nats.GetDefaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
	if !o.Secure || o.TLSConfig == nil || o.TLSConfig.RootCAs == nil || len(o.TLSConfig.Certificates) != 1 {
		t.Fatalf("TLS not configured: secure %v, config %+v", o.Secure, o.TLSConfig)
	}
	if o.Nkey == "" || o.SignatureCB == nil || !strings.Contains(string(b), o.Nkey) {
		t.Fatalf("nkey %q not the generated client's (manifest %s)", o.Nkey, b)
	}
	if o.AsyncErrorCB == nil || o.ReconnectErrCB == nil {
		t.Error("asynchronous NATS errors are not logged")
	}
	// Without TLS flags and with a tls:// URL nats.go uses the system roots;
	// nothing is forced here.
	opts, err = connSettings{Nkey: client("client.nk")}.options("tls://hub.example.org:4222")
	if err != nil {
		t.Fatal(err)
	}
	o = nats.GetDefaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if o.Secure || o.TLSConfig != nil {
		t.Errorf("TLS options set without TLS flags: %+v", o.TLSConfig)
	}
}

// The commands refuse before doing anything else.
func TestCommandsRefusePlaintextToRemote(t *testing.T) {
	dir := t.TempDir()
	cases := [][]string{
		{"worker", "--nats", "nats://10.9.8.7:4222", "--site", "a", "--data", filepath.Join(dir, "missing"), "--state", dir},
		{"job", "submit", "--nats", "nats://10.9.8.7:4222", "--algo", "fed-avg"},
		{"coordinator", "--nats", "nats://hub.example.org:4222", "--state", dir},
	}
	for _, args := range cases {
		_, err := runCLI(t, args...)
		if err == nil || !strings.Contains(err.Error(), "refusing a plaintext NATS connection") || exitCode(err) != 2 {
			t.Errorf("%v: err = %v (exit %d), want a plaintext refusal with exit status 2", args, err, exitCode(err))
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"coordinator", "--listen", "0.0.0.0:4222", "--state", dir}, "would serve plaintext NATS"},
		{[]string{"coordinator", "--listen", ":4222", "--state", dir}, "would serve plaintext NATS"},
		{[]string{"coordinator", "--listen", "10.0.0.1:4222", "--state", dir}, "would serve plaintext NATS"},
		{[]string{"coordinator", "--listen", "127.0.0.1:4222", "--nkey", "x.nk", "--state", dir}, "--nkey applies to --nats"},
		{[]string{"worker", "--nats", "tls://127.0.0.1:4222", "--nkey", "x.nk", "--creds", "y.creds", "--site", "a", "--data", "d", "--state", dir}, "at most one of --nkey and --creds"},
	} {
		_, err := runCLI(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || exitCode(err) != 2 {
			t.Errorf("%v: err = %v, want %q (exit status 2)", c.args, err, c.want)
		}
	}
}

func TestDeployInitCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "dep")
	text, err := runCLI(t, "deploy", "init", "--federation", "study", "--sites", "a, b,c", "--out", out, "--hub-host", "hub.example.org", "--prefix", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if !strings.Contains(text, "3 sites (a, b, c), hub tls://hub.example.org:4222") || !strings.Contains(text, "ca-key.pem offline") {
		t.Errorf("output:\n%s", text)
	}
	for _, f := range []string{"hub/nats-server.conf", "site-b/leaf.conf", "client/submit-job.sh", "docker-compose.yml", "INSTALL.md"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	// A second init into the same directory is refused (no overwrite).
	if _, err := runCLI(t, "deploy", "init", "--federation", "study", "--sites", "a", "--out", out); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("second init: %v", err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sites", "a,b.c"}, "not in [A-Za-z0-9_-]"},
		{[]string{"--sites", "a,a"}, "given twice"},
		{[]string{"--sites", " , "}, "name 1 is empty"}, // probe 4: an empty name is refused, not dropped
		{[]string{"--sites", "a,b", "--site-ports", "1,2,3"}, "3 site ports for 2 sites"},
		{[]string{"--sites", "a,b", "--site-ports", "5000,x"}, "is not a port"},
		{[]string{"--sites", "a", "--prefix", "relative/dir"}, "absolute path"},
		{[]string{"--sites", "a", "--prefix", "/etc/pair fed"}, "not allowed"},
		{[]string{"--sites", "a", "--hub-host", "bad_host!"}, "not a host name"},
		{[]string{"--sites", "a", "--leaf-port", "4222"}, "both 4222"},
		{[]string{"--sites", "a", "--cert-days", "0"}, "--cert-days"},
	} {
		args := append([]string{"deploy", "init", "--federation", "f", "--out", filepath.Join(dir, "x")}, c.args...)
		_, err := runCLI(t, args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || exitCode(err) != 2 {
			t.Errorf("%v: err = %v, want %q (exit status 2)", c.args, err, c.want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "x")); len(entries) != 0 {
		t.Errorf("refused inits wrote %d entries", len(entries))
	}
}
