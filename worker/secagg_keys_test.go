package worker

import (
	"context"
	"crypto/ed25519"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/protocol"
)

// testSecRoster is a fixed roster of sites s1..s4 (seeded keys).
func testSecRoster() (map[string]ed25519.PublicKey, map[string]ed25519.PrivateKey) {
	pub, priv := map[string]ed25519.PublicKey{}, map[string]ed25519.PrivateKey{}
	for i, s := range []string{"s1", "s2", "s3", "s4"} {
		k := ed25519.NewKeyFromSeed(append(make([]byte, 31), byte(i+1)))
		priv[s], pub[s] = k, k.Public().(ed25519.PublicKey)
	}
	return pub, priv
}

// The signing key and roster are checked at start; a site without them,
// or whose roster misses a participant, refuses a secure job before
// accepting it: nothing charged, nothing sent but the refusal.
func TestWorkerSecAggKeys(t *testing.T) {
	pub, priv := testSecRoster()
	base := Config{Federation: "f", Site: "s1", Data: toyData(64, 3), Rand: rand.New(rand.NewPCG(3, 4)), Noise: dp.NewSeededNoise(5)}
	for name, mut := range map[string]func(c *Config){
		"key without roster": func(c *Config) { c.SecAggKey, c.SecAggRoster = priv["s1"], nil },
		"roster without key": func(c *Config) { c.SecAggRoster = pub },
		"another site's key": func(c *Config) { c.SecAggKey, c.SecAggRoster = priv["s2"], pub },
		"short key":          func(c *Config) { c.SecAggKey, c.SecAggRoster = priv["s1"][:32], pub },
		"bad roster entry": func(c *Config) {
			c.SecAggKey, c.SecAggRoster = priv["s1"], maps.Clone(pub)
			c.SecAggRoster["s2"] = c.SecAggRoster["s2"][:8]
		},
	} {
		c := base
		mut(&c)
		if _, err := New(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	ctx := context.Background()
	for name, c := range map[string]Config{
		"no key": base,
		"roster misses s4": func() Config {
			c := base
			c.SecAggKey, c.SecAggRoster = priv["s1"], maps.Clone(pub)
			delete(c.SecAggRoster, "s4")
			return c
		}(),
	} {
		w, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		outs := w.Step(ctx, secAnnounce(t, 1))
		if len(outs) != 1 || len(w.Ledger()) != 0 {
			t.Fatalf("%s: %v, ledger %v", name, outs, w.Ledger())
		}
		if a, ok := outs[0].Msg.(*protocol.Abort); !ok || !strings.Contains(a.Reason, "secure aggregation") {
			t.Fatalf("%s: sent %+v, want a refusal naming secure aggregation", name, outs[0].Msg)
		}
	}
}
