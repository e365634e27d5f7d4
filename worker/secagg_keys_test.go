package worker

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg"
	"github.com/pairfed/pairfed/secagg/round"
)

// testSecRoster is a fixed roster of sites s1..s64 (seeded keys).
func testSecRoster() (map[string]ed25519.PublicKey, map[string]ed25519.PrivateKey) {
	pub, priv := secRosterKeys()
	return maps.Clone(pub), maps.Clone(priv) // callers may add or replace entries
}

// secRosterKeys derives the 64 key pairs once per test binary: every
// runJob of the tamper table asks for the roster, and the derivation
// (64 scalar multiplications per call) was most of its time under -race
// (TestTamperTable: 27 s before, 2 s after).
var secRosterKeys = sync.OnceValues(func() (map[string]ed25519.PublicKey, map[string]ed25519.PrivateKey) {
	pub, priv := map[string]ed25519.PublicKey{}, map[string]ed25519.PrivateKey{}
	for i := range 64 { // s1 … s64: the tamper table's four and the sparse tests' forty
		s := fmt.Sprintf("s%d", i+1)
		k := ed25519.NewKeyFromSeed(append(make([]byte, 31), byte(i+1)))
		priv[s], pub[s] = k, k.Public().(ed25519.PublicKey)
	}
	return pub, priv
})

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

// A coordinator that forges a key list entry (its own keys in place of
// s2's, s2's signature kept): the site refuses it, aborts the job, sends
// no shares, and nothing is charged (the masked vector never left).
func TestWorkerSecAggForgedKeyList(t *testing.T) {
	ctx := context.Background()
	w := newWorker(t)
	if outs := w.Step(ctx, secAnnounce(t, 1)); len(outs) != 1 {
		t.Fatalf("announcement: %v (%v)", outs, w.Err())
	}
	outs := w.Step(ctx, &protocol.PhaseStart{Job: "j", Phase: 1, Model: []float64{0, 0, 0}})
	mine, ok := outs[0].Msg.(*protocol.SecAggKeys)
	if len(outs) != 1 || !ok {
		t.Fatalf("phase: %v (%v)", outs, w.Err())
	}
	pub, priv := testSecRoster()
	p := round.Params{Federation: "f", Job: "j", Phase: 1, Sites: []string{"s1", "s2", "s3", "s4"}, Threshold: 3, Bits: 16, Dim: 4, Roster: pub}
	list := &protocol.SecAggKeyList{Job: "j", Phase: 1, Round: p.RoundID(), Keys: []protocol.SecAggKey{{ID: 1, C: mine.C, S: mine.S, Sig: mine.Sig}}}
	for i, s := range p.Sites[1:] {
		_, m, err := round.NewSite(p, s, priv[s], make([]uint64, 4), rand.NewChaCha8([32]byte{byte(i)}))
		if err != nil {
			t.Fatal(err)
		}
		k := m.(*protocol.SecAggKeys)
		list.Keys = append(list.Keys, protocol.SecAggKey{ID: uint32(i + 2), C: k.C, S: k.S, Sig: k.Sig})
	}
	list.Keys[1].C = slices.Clone(list.Keys[2].S) // the coordinator's "own" key for s2
	outs = w.Step(ctx, list)
	if len(outs) != 1 {
		t.Fatalf("forged key list answered with %v", outs)
	}
	if a, ok := outs[0].Msg.(*protocol.Abort); !ok || !strings.Contains(a.Reason, "not signed by site 2") {
		t.Fatalf("sent %+v, want an abort naming the forged entry", outs[0].Msg)
	}
	if !errors.Is(w.Err(), secagg.ErrInconsistent) {
		t.Fatalf("worker error %v", w.Err())
	}
	if l := w.Ledger(); len(l) != 0 {
		t.Fatalf("charged for a round that released nothing: %+v", l)
	}
}
