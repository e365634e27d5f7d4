package round

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg"
)

// testRoster draws a long-term signing key for each site (seeded).
func testRoster(t testing.TB, sites []string, seed byte) (map[string]ed25519.PublicKey, map[string]ed25519.PrivateKey) {
	t.Helper()
	pub, priv := map[string]ed25519.PublicKey{}, map[string]ed25519.PrivateKey{}
	for i, s := range sites {
		k := ed25519.NewKeyFromSeed(append(make([]byte, 30), seed, byte(i)))
		priv[s], pub[s] = k, k.Public().(ed25519.PublicKey)
	}
	return pub, priv
}

// wire round-trips a message through the codec, as the transport would.
func wire(t *testing.T, m protocol.Message) protocol.Message {
	t.Helper()
	b, err := protocol.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := protocol.Decode(b)
	if err != nil {
		t.Fatalf("%v: %v", m.Kind(), err)
	}
	return got
}

// A round over the codec with sites that crash (stop answering for good)
// after a random number of their own messages, and a coordinator that
// closes each step at the timeout: every round either ends with exactly
// the sum of the sites whose masked vectors arrived, or aborts with
// ErrTooFewSurvivors, and an aborted round never returns a sum.
func TestRoundOverTheWireWithCrashes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	completed, aborted := 0, 0
	for trial := 0; trial < 60; trial++ {
		k := 3 + rng.IntN(6)
		sites := make([]string, k)
		for i := range sites {
			sites[i] = fmt.Sprintf("site-%d", i)
		}
		p := Params{Federation: "f", Job: fmt.Sprintf("job-%d", trial), Phase: 1 + rng.IntN(3), Sites: sites, Bits: 24, Dim: 5}
		var signers map[string]ed25519.PrivateKey
		p.Roster, signers = testRoster(t, sites, byte(trial))
		srv, err := NewServer(p, 3)
		if err != nil {
			t.Fatal(err)
		}
		inputs := map[string][]uint64{}
		clients := map[string]*Site{}
		budget := map[string]int{} // messages a site sends before it crashes
		var inbox []Outgoing       // server → sites
		var toServer []struct {
			from string
			m    protocol.Message
		}
		send := func(from string, m protocol.Message) {
			if budget[from] == 0 {
				return // crashed
			}
			budget[from]--
			toServer = append(toServer, struct {
				from string
				m    protocol.Message
			}{from, wire(t, m)})
		}
		for _, s := range sites {
			budget[s] = 5 // keys, shares, masked, consistency signature, unmask shares
			if rng.Float64() < 0.3 {
				budget[s] = rng.IntN(5)
			}
			x := make([]uint64, p.Dim)
			for i := range x {
				x[i] = rng.Uint64() & (1<<24 - 1)
			}
			inputs[s] = x
			c, keys, err := NewSite(p, s, signers[s], x, rand.NewChaCha8([32]byte{byte(trial), byte(len(clients))}))
			if err != nil {
				t.Fatal(err)
			}
			clients[s] = c
			send(s, keys)
		}
		var res *secagg.Result
		var final error
		masked := map[string]bool{}
		for steps := 0; res == nil && final == nil; steps++ {
			if steps > 100 {
				t.Fatal("round does not end")
			}
			for len(toServer) > 0 && res == nil && final == nil {
				in := toServer[0]
				toServer = toServer[1:]
				if _, ok := in.m.(*protocol.SecAggMasked); ok {
					masked[in.from] = true
				}
				out, r, err := srv.Deliver(in.from, in.m)
				if err != nil && srv.Done() {
					final = err
				} else if err != nil {
					t.Fatalf("trial %d: message rejected: %v", trial, err)
				}
				res = r
				inbox = append(inbox, out...)
			}
			if res != nil || final != nil {
				break
			}
			out, r, err := srv.Tick()
			if err != nil {
				final = err
				break
			}
			res = r
			inbox = append(inbox, out...)
			for _, o := range inbox {
				m := wire(t, o.Msg)
				for _, s := range sites {
					if (o.To == "" || o.To == s) && budget[s] > 0 {
						ans, err := clients[s].Deliver(m)
						if err != nil {
							t.Fatalf("trial %d: site %s: %v", trial, s, err)
						}
						if ans != nil {
							send(s, ans)
						}
					}
				}
			}
			inbox = nil
		}
		if final != nil {
			if !errors.Is(final, secagg.ErrTooFewSurvivors) {
				t.Fatalf("trial %d: %v", trial, final)
			}
			if res != nil {
				t.Fatalf("trial %d: an aborted round returned a sum", trial)
			}
			aborted++
			continue
		}
		want := make([]uint64, p.Dim)
		var inc []uint32
		for i, s := range sites {
			if masked[s] {
				inc = append(inc, uint32(i+1))
				for j, w := range inputs[s] {
					want[j] += w
				}
			}
		}
		for j := range want {
			want[j] &= 1<<24 - 1
		}
		if !slices.Equal(res.Sum, want) || !slices.Equal(res.Included, inc) {
			t.Fatalf("trial %d: sum %v of %v, want %v of %v", trial, res.Sum, res.Included, want, inc)
		}
		completed++
	}
	if completed < 15 || aborted < 5 {
		t.Fatalf("trial mix too narrow: %d completed, %d aborted", completed, aborted)
	}
	t.Logf("%d rounds completed exactly, %d aborted cleanly", completed, aborted)
}

func TestServerRejectsStrangers(t *testing.T) {
	p := Params{Federation: "f", Job: "j", Phase: 1, Sites: []string{"a", "b", "c"}, Bits: 16, Dim: 2}
	roster, signers := testRoster(t, p.Sites, 1)
	p.Roster = roster
	srv, err := NewServer(p, 2)
	if err != nil {
		t.Fatal(err)
	}
	_, keys, _ := NewSite(p, "a", signers["a"], []uint64{1, 2}, rand.NewChaCha8([32]byte{1}))
	if _, _, err := srv.Deliver("x", keys); err == nil {
		t.Fatal("non-participant accepted")
	}
	other := *keys.(*protocol.SecAggKeys)
	other.Phase = 2
	if _, _, err := srv.Deliver("a", &other); !errors.Is(err, ErrWrongRound) {
		t.Fatalf("other phase: %v", err)
	}
	if _, _, err := srv.Deliver("a", keys); err != nil {
		t.Fatal(err)
	}
	if _, _, err := srv.Deliver("a", keys); err == nil {
		t.Fatal("duplicate accepted")
	}
	if _, err := NewServer(Params{Federation: "f", Job: "j", Phase: 1, Sites: []string{"a"}, Bits: 16, Dim: 2, HonestButCurious: true}, 2); err == nil {
		t.Fatal("one-site round accepted")
	}
}

// The sparse variant's parameters are bound into the round id: a site told
// another degree, ℓ, w or t than its peers is in another round (its keys,
// signatures and masks match none of theirs); the complete graph's id does
// not depend on them.
func TestRoundIDBindsSparseParameters(t *testing.T) {
	base := Params{Federation: "f", Job: "j", Phase: 1, Sites: []string{"a", "b", "c"}}
	complete := string(base.RoundID())
	withT := base
	withT.Threshold = 3
	if string(withT.RoundID()) != complete {
		t.Fatal("the complete graph's round id changed with t")
	}
	sparse := base
	sparse.Degree, sparse.Local, sparse.Withheld, sparse.Threshold = 24, 9, 3, 27
	seen := map[string]string{complete: "complete", string(sparse.RoundID()): "sparse"}
	for name, mut := range map[string]func(*Params){
		"degree": func(p *Params) { p.Degree++ }, "ℓ": func(p *Params) { p.Local++ },
		"w": func(p *Params) { p.Withheld++ }, "t": func(p *Params) { p.Threshold++ },
	} {
		q := sparse
		mut(&q)
		id := string(q.RoundID())
		if prev, dup := seen[id]; dup {
			t.Fatalf("changing %s gives the round id of %s", name, prev)
		}
		seen[id] = name
	}
}
