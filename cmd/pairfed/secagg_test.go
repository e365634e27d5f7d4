package main

import (
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/secagg/round"
)

// Bad secure aggregation key files stop the worker and the coordinator
// with an error naming the flag, before anything is written to the state
// directory.
func TestSecAggKeyFlags(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	roster := map[string]ed25519.PublicKey{}
	keys := map[string]string{}
	for i, s := range []string{"a", "b"} {
		k := ed25519.NewKeyFromSeed(append(make([]byte, 31), byte(i+1)))
		roster[s] = k.Public().(ed25519.PublicKey)
		b, err := round.MarshalSigningKey(k)
		if err != nil {
			t.Fatal(err)
		}
		keys[s] = write(s+".pem", b)
	}
	rb, err := round.MarshalRoster(roster)
	if err != nil {
		t.Fatal(err)
	}
	rosterFile := write("roster.json", rb)
	badRoster := write("bad-roster.json", []byte(`{"sites": {"a": "AAAA"}}`))
	state := filepath.Join(dir, "state")
	worker := func(extra ...string) []string {
		return append([]string{"worker", "--nats", "nats://127.0.0.1:1", "--site", "a", "--data", filepath.Join("testdata", "bad", "site-a.libsvm"), "--state", state}, extra...)
	}
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"key without roster":      {worker("--secagg-key", keys["a"]), "go together"},
		"another site's key":      {worker("--secagg-key", keys["b"], "--secagg-roster", rosterFile), "does not list"},
		"bad roster":              {worker("--secagg-key", keys["a"], "--secagg-roster", badRoster), "--secagg-roster"},
		"roster as key":           {worker("--secagg-key", rosterFile, "--secagg-roster", rosterFile), "--secagg-key"},
		"missing key file":        {worker("--secagg-key", filepath.Join(dir, "none.pem"), "--secagg-roster", rosterFile), "--secagg-key"},
		"coordinator, bad roster": {[]string{"coordinator", "--listen", "127.0.0.1:0", "--state", state, "--secagg-roster", badRoster}, "--secagg-roster"},
	} {
		out, err := runCLI(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v (want an error with %q)\n%s", name, err, c.want, out)
		}
		if _, err := os.Stat(state); err == nil {
			t.Fatalf("%s: the state directory was created", name)
		}
	}
}
