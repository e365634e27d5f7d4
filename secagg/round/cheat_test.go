package round

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg"
)

// Shares that decrypt but are inconsistent, over the codec (the
// secagg-level cases are secagg/cheat_test.go): a rogue site whose
// messages are altered as tamper says — with its own signing key, as a
// rogue member can. Every honest site answers every step.
func wireCheat(t *testing.T, k, th int, rogue string, tamper func(p Params, m protocol.Message) protocol.Message) (*secagg.Result, map[string][]uint64, Params, error) {
	t.Helper()
	res, in, p, _, err := wireCheatLie(t, k, th, rogue, tamper, nil, nil)
	return res, in, p, err
}

// wireCheatLie is wireCheat with a coordinator that reads what every site
// sends (observe) and alters what it sends to a site (lie); the sites'
// errors are returned instead of failing.
func wireCheatLie(t *testing.T, k, th int, rogue string, tamper func(p Params, m protocol.Message) protocol.Message,
	observe func(from string, m protocol.Message), lie func(to string, m protocol.Message) protocol.Message) (*secagg.Result, map[string][]uint64, Params, map[string]error, error) {
	t.Helper()
	siteErrs := map[string]error{}
	sites := make([]string, k)
	for i := range sites {
		sites[i] = fmt.Sprintf("site-%d", i)
	}
	p := Params{Federation: "f", Job: "job-cheat", Phase: 1, Sites: sites, Threshold: th, Bits: 24, Dim: 6}
	var signers = map[string][]byte{}
	roster, priv := testRoster(t, sites, 77)
	p.Roster = roster
	for s, k := range priv {
		signers[s] = k
	}
	srv, err := NewServer(p, 3)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	inputs := map[string][]uint64{}
	clients := map[string]*Site{}
	type msg struct {
		from string
		m    protocol.Message
	}
	var toServer []msg
	send := func(from string, m protocol.Message) {
		if from == rogue && tamper != nil {
			m = tamper(p, m)
		}
		m = wire(t, m)
		if observe != nil {
			observe(from, m)
		}
		toServer = append(toServer, msg{from, m})
	}
	for i, s := range sites {
		x := make([]uint64, p.Dim)
		for j := range x {
			x[j] = rng.Uint64() & (1<<24 - 1)
		}
		inputs[s] = x
		c, keys, err := NewSite(p, s, priv[s], x, rand.NewChaCha8([32]byte{9, byte(i)}))
		if err != nil {
			t.Fatal(err)
		}
		clients[s] = c
		send(s, keys)
	}
	for steps := 0; steps < 20; steps++ {
		var inbox []Outgoing
		if len(toServer) == 0 {
			// Nothing more arrives: the step closes at its timeout.
			for range 3 {
				out, res, err := srv.Tick()
				if err != nil && srv.Done() {
					return nil, inputs, p, siteErrs, err
				}
				if res != nil {
					return res, inputs, p, siteErrs, nil
				}
				inbox = append(inbox, out...)
			}
		}
		for _, in := range toServer {
			out, res, err := srv.Deliver(in.from, in.m)
			if res != nil { // even beside an error: an ignored answer that closed the round
				return res, inputs, p, siteErrs, nil
			}
			if err != nil && srv.Done() {
				return nil, inputs, p, siteErrs, err
			}
			inbox = append(inbox, out...)
		}
		toServer = nil
		for _, o := range inbox {
			for _, s := range sites {
				if o.To != "" && o.To != s {
					continue
				}
				m := wire(t, o.Msg)
				if lie != nil {
					m = lie(s, m)
				}
				reply, err := clients[s].Deliver(m)
				if err != nil && s != rogue {
					if lie == nil {
						t.Fatalf("site %s: %v", s, err)
					}
					siteErrs[s] = err
				}
				if reply != nil {
					send(s, reply)
				}
			}
		}
	}
	t.Fatal("the round does not end")
	return nil, nil, p, nil, nil
}

func sumOf(in map[string][]uint64, sites []string, dim int) []uint64 {
	out := make([]uint64, dim)
	for _, s := range sites {
		for i, w := range in[s] {
			out[i] = (out[i] + w) & (1<<24 - 1)
		}
	}
	return out
}

// resign re-signs the rogue's altered commitment list with its own key.
func resign(t *testing.T, p Params, rogue string, c *protocol.SecAggCommits) {
	t.Helper()
	_, priv := testRoster(t, p.Sites, 77)
	sc := fromWireCommits(c)
	id, _ := p.id(rogue)
	secagg.SignCommitments(p.RoundID(), id, sc, priv[rogue])
	c.Sig = sc.Sig
}

func TestWireCheatingDealerExpelled(t *testing.T) {
	const rogue = "site-1"
	// The rogue commits to another seed than the one its (consistent)
	// shares are of, and signs that list: at unmasking its verified
	// shares do not reconstruct its commitment — a proof every honest
	// responder checks before revealing its pairwise key with it.
	res, in, p, err := wireCheat(t, 6, 4, rogue, func(p Params, m protocol.Message) protocol.Message {
		if sh, ok := m.(*protocol.SecAggShares); ok {
			sh.Commits.Seed[0] ^= 1
			resign(t, p, rogue, sh.Commits)
		}
		return m
	})
	if err != nil {
		t.Fatalf("round aborted: %v", err)
	}
	honest := slices.DeleteFunc(slices.Clone(p.Sites), func(s string) bool { return s == rogue })
	if !slices.Equal(res.Sum, sumOf(in, honest, p.Dim)) || !slices.Equal(res.Cheated, []uint32{2}) || len(res.Included) != 5 {
		t.Fatalf("result %+v, want the exact sum of %v, site 2 expelled", res, honest)
	}
}

// A responder's altered seed share is ignored; as the last answer awaited
// (site-5) it closes the round: Deliver returns the sum beside the
// rejection.
func TestWireLyingResponderIgnored(t *testing.T) {
	for _, rogue := range []string{"site-1", "site-5"} {
		res, in, p, err := wireCheat(t, 6, 4, rogue, func(p Params, m protocol.Message) protocol.Message {
			if u, ok := m.(*protocol.SecAggUnmask); ok {
				u.Seeds[0].Y[7] ^= 1 // still a field element (low byte)
			}
			return m
		})
		if err != nil {
			t.Fatalf("%s: round aborted: %v", rogue, err)
		}
		id, _ := p.id(rogue)
		if !slices.Equal(res.Sum, sumOf(in, p.Sites, p.Dim)) || res.Ignored[id].Of != "seed" || len(res.Ignored) != 1 {
			t.Fatalf("%s: result %+v, want the exact sum of all six sites, site %d's answer ignored", rogue, res, id)
		}
	}
}

func TestWireUncommittedSharesRefused(t *testing.T) {
	const rogue = "site-1"
	res, in, p, err := wireCheat(t, 6, 4, rogue, func(p Params, m protocol.Message) protocol.Message {
		if sh, ok := m.(*protocol.SecAggShares); ok {
			sh.Commits.Shares[0].Seed[0] ^= 1 // site-0's entry
			resign(t, p, rogue, sh.Commits)
		}
		return m
	})
	if err != nil {
		t.Fatalf("round aborted: %v", err)
	}
	honest := slices.DeleteFunc(slices.Clone(p.Sites), func(s string) bool { return s == rogue })
	if !slices.Equal(res.Sum, sumOf(in, honest, p.Dim)) || !slices.Equal(res.Excluded[2], []uint32{1}) {
		t.Fatalf("result %+v, want the exact sum of %v, site 2 refused by site 1", res, honest)
	}
	// A list that does not verify: the rogue is out of U2 at once.
	res, in, p, err = wireCheat(t, 6, 4, rogue, func(p Params, m protocol.Message) protocol.Message {
		if sh, ok := m.(*protocol.SecAggShares); ok {
			sh.Commits.Sig[0] ^= 1
		}
		return m
	})
	if err != nil || !slices.Equal(res.Sum, sumOf(in, honest, p.Dim)) || slices.Contains(res.Dropped, 2) {
		t.Fatalf("bad signature: %v, %+v", err, res)
	}
}

// A coordinator that turns the genuine proof against the rogue into one
// against an honest site (its genuine list and t of its genuine seed
// shares, which reconstruct its seed) gets nothing from the site it shows
// it to: ErrInconsistent, no reply. The others answer the genuine proof
// and the round completes without that site's answer.
func TestWireForgedProofRefused(t *testing.T) {
	const rogue, shown = "site-1", "site-0"
	const victim = uint32(4) // site-3
	var list *protocol.SecAggCommits
	var seeds []protocol.SecAggShare // the victim's seed shares, as revealed
	replied := map[string]int{}
	res, in, p, errs, err := wireCheatLie(t, 6, 4, rogue, func(p Params, m protocol.Message) protocol.Message {
		if sh, ok := m.(*protocol.SecAggShares); ok {
			sh.Commits.Seed[0] ^= 1
			resign(t, p, rogue, sh.Commits)
		}
		return m
	}, func(from string, m protocol.Message) {
		switch m := m.(type) {
		case *protocol.SecAggShares:
			if from == "site-3" {
				list = m.Commits
			}
		case *protocol.SecAggUnmask:
			replied[from]++
			for _, sh := range m.Seeds {
				if sh.ID == victim && from != rogue && len(seeds) < 4 {
					id, _ := (Params{Sites: []string{"site-0", "site-1", "site-2", "site-3", "site-4", "site-5"}}).id(from)
					seeds = append(seeds, protocol.SecAggShare{ID: id, Y: sh.Y, Nonce: sh.Nonce})
				}
			}
		}
	}, func(to string, m protocol.Message) protocol.Message {
		x, ok := m.(*protocol.SecAggExpel)
		if !ok || to != shown {
			return m
		}
		return &protocol.SecAggExpel{Job: x.Job, Phase: x.Phase, Proofs: []protocol.SecAggProof{{ID: victim, Commits: *list, Shares: seeds}}}
	})
	if !errors.Is(errs[shown], secagg.ErrInconsistent) || len(errs) != 1 {
		t.Fatalf("site errors %v, want ErrInconsistent at %s only", errs, shown)
	}
	if replied[shown] != 1 {
		t.Fatalf("%s sent %d unmask answers, want its first only", shown, replied[shown])
	}
	if err != nil {
		t.Fatalf("round aborted: %v", err)
	}
	honest := slices.DeleteFunc(slices.Clone(p.Sites), func(s string) bool { return s == rogue })
	if !slices.Equal(res.Sum, sumOf(in, honest, p.Dim)) || !slices.Equal(res.Cheated, []uint32{2}) {
		t.Fatalf("result %+v, want the exact sum of %v", res, honest)
	}
}
