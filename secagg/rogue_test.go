package secagg

import (
	"crypto/ed25519"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// A rogue site (one member of the federation, not the server) must not be
// able to abort a round that the honest sites can complete: the honest
// server excludes a site whose advertisement does not verify or carries
// an unusable key, and a site whose share ciphertexts another site refuses
// (garbage, replayed from another round) is dropped from U3 — the round
// completes with the honest sites' exact sum when at least t of them
// remain, and otherwise every honest site stops before its masked input
// leaves (nothing derived from its data sent: nothing to charge).

type rogueKind int

const (
	rogueBadSig       rogueKind = iota // advertisement signed for another round (a replay)
	rogueLowOrder                      // a validly signed low-order key
	rogueGarbageAll                    // random share ciphertexts to every peer
	rogueGarbageSome                   // garbage to two peers, valid shares to the others
	rogueReplayShares                  // share ciphertexts replayed from the previous round
)

// rogueRound runs one round of k sites, threshold th, in which the site
// rogue misbehaves as kind says (and otherwise follows the protocol as far
// as it can), and returns the result, the honest sites' masked inputs and
// their Rejected lists.
type rogueOutcome struct {
	res      Result
	err      error
	masked   map[uint32]bool // honest sites whose masked input left
	rejected map[uint32][]uint32
	want     []uint64 // the honest sites' plain sum
}

func rogueRound(t *testing.T, k, th int, kind rogueKind, seed uint64) rogueOutcome {
	t.Helper()
	cfg, signers := withSigners(t, testConfig(k, th, 24, 7, seed), seed)
	rnd := testRand(seed + 1)
	rng := rand.New(rand.NewPCG(seed, 9))
	in := randomInputs(cfg, rng)
	rogue := cfg.Sites[1]
	out := rogueOutcome{masked: map[uint32]bool{}, rejected: map[uint32][]uint32{}, want: make([]uint64, cfg.Dim)}
	for _, id := range cfg.Sites {
		if id != rogue {
			for i, w := range in[id] {
				out.want[i] = (out.want[i] + w) & cfg.mask()
			}
		}
	}
	// A previous round between the same sites, for replays.
	prev := cfg
	prev.RoundID = slices.Clone(cfg.RoundID)
	prev.RoundID[0] ^= 1
	var prevShares ShareKeys
	{
		ps, _ := NewServer(prev)
		pcs := map[uint32]*Client{}
		for _, id := range cfg.Sites {
			pcs[id], _ = NewClient(prev, id, signers[id], rnd)
			m, _ := pcs[id].Advertise()
			ps.HandleAdvertise(m)
		}
		l, _ := ps.EndAdvertise()
		prevShares, _ = pcs[rogue].ShareKeys(l)
	}

	srv, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cs := map[uint32]*Client{}
	for _, id := range cfg.Sites {
		cs[id], _ = NewClient(cfg, id, signers[id], rnd)
		m, err := cs[id].Advertise()
		if err != nil {
			t.Fatal(err)
		}
		if id == rogue {
			switch kind {
			case rogueBadSig:
				m.Sig = ed25519.Sign(signers[id], advertSigned(prev.RoundID, id, m.C, m.S))
			case rogueLowOrder:
				m.C = make([]byte, 32) // the identity: a low-order point
				m.Sig = ed25519.Sign(signers[id], advertSigned(cfg.RoundID, id, m.C, m.S))
			}
		}
		err = srv.HandleAdvertise(m)
		if id == rogue && (kind == rogueBadSig || kind == rogueLowOrder) {
			if err == nil {
				t.Fatalf("kind %d: the server accepted the rogue advertisement", kind)
			}
		} else if err != nil {
			t.Fatal(err)
		}
	}
	list, err := srv.EndAdvertise()
	if err != nil {
		out.err = err
		return out
	}
	for _, a := range list.Keys {
		m, err := cs[a.From].ShareKeys(list)
		if err != nil {
			t.Fatal(err)
		}
		if a.From == rogue {
			for i := range m.Shares {
				switch {
				case kind == rogueGarbageAll, kind == rogueGarbageSome && i < 2:
					ct := make([]byte, len(m.Shares[i].CT))
					testRand(uint64(i) + seed).Read(ct)
					m.Shares[i].CT = ct
				case kind == rogueReplayShares:
					for _, p := range prevShares.Shares {
						if p.To == m.Shares[i].To {
							m.Shares[i].CT = p.CT
						}
					}
				}
			}
			// A member signs what it sends: its commitments to the
			// ciphertexts it altered (else the server excludes it at once,
			// TestRogueUnsignedCiphertexts).
			resignCTs(&m, cfg.RoundID, signers[rogue])
		}
		if err := srv.HandleShares(m); err != nil {
			t.Fatal(err)
		}
	}
	fwd, err := srv.EndShares()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range sortedKeys(fwd) {
		m, err := cs[id].MaskedInput(fwd[id], in[id])
		if err != nil {
			if id != rogue && !errors.Is(err, ErrTooFewSurvivors) {
				t.Fatalf("site %d: %v", id, err)
			}
			continue
		}
		if id != rogue {
			out.masked[id] = true
			if len(m.Rejected) > 0 {
				out.rejected[id] = m.Rejected
			}
		}
		if err := srv.HandleMasked(m); err != nil {
			t.Fatal(err)
		}
	}
	req, err := srv.EndMasked()
	if err != nil {
		out.err = err
		return out
	}
	for _, id := range req.Survivors {
		m, err := cs[id].ConsistencyCheck(req)
		if err != nil {
			t.Fatal(err)
		}
		srv.HandleCheck(m)
	}
	if slices.Contains(req.Survivors, rogue) {
		t.Fatalf("the rogue site %d is among the survivors %v", rogue, req.Survivors)
	}
	sigs, err := srv.EndCheck()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range req.Survivors {
		m, err := cs[id].UnmaskSigned(sigs)
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.HandleUnmask(m); err != nil {
			t.Fatal(err)
		}
	}
	out.res, out.err = srv.EndUnmask()
	return out
}

// resignCTs recommits m's list to the ciphertexts m carries and re-signs
// it with the dealer's own key (what a rogue member can do).
func resignCTs(m *ShareKeys, roundID []byte, key ed25519.PrivateKey) {
	for i, e := range m.Commits.Shares {
		for _, c := range m.Shares {
			if c.To == e.To {
				m.Commits.Shares[i].CT = ctHash(c.CT)
			}
		}
	}
	SignCommitments(roundID, m.From, m.Commits, key)
}

// A rogue whose ciphertexts are not the ones its signed list commits to
// is excluded by the server when it shares (no recipient sees them).
func TestRogueUnsignedCiphertexts(t *testing.T) {
	r := runCheat(t, cheat{k: 6, th: 4, seed: 60, rogue: rogueID, shares: func(m *ShareKeys) { m.Shares[0].CT[3] ^= 1 }})
	r.exact(t, r.without(rogueID))
	if r.res.Excluded != nil || r.res.FalseAccusers != nil || slices.Contains(r.res.Dropped, rogueID) {
		t.Fatalf("result %+v: want the rogue left out of U2 silently", r.res)
	}
}

func TestRogueSiteIsExcluded(t *testing.T) {
	for _, kind := range []rogueKind{rogueBadSig, rogueLowOrder, rogueGarbageAll, rogueGarbageSome, rogueReplayShares} {
		o := rogueRound(t, 6, 4, kind, uint64(20+kind))
		if o.err != nil {
			t.Fatalf("kind %d: the round aborted: %v", kind, o.err)
		}
		if !slices.Equal(o.res.Sum, o.want) {
			t.Fatalf("kind %d: sum %v, want the honest sites' %v", kind, o.res.Sum, o.want)
		}
		if len(o.res.Included) != 5 || len(o.masked) != 5 {
			t.Fatalf("kind %d: included %v, honest masked %v", kind, o.res.Included, o.masked)
		}
		const rogue = 13 // testConfig's second site
		var accusers []uint32
		for id, r := range o.rejected {
			if !slices.Equal(r, []uint32{rogue}) {
				t.Fatalf("kind %d: site %d rejected %v", kind, id, r)
			}
			accusers = append(accusers, id)
		}
		slices.Sort(accusers)
		switch kind {
		case rogueBadSig, rogueLowOrder:
			if len(accusers) != 0 || o.res.Excluded != nil || len(o.res.Dropped) != 0 {
				t.Fatalf("kind %d: excluded at the advertisement, yet accusers %v, result %+v", kind, accusers, o.res)
			}
		case rogueGarbageSome:
			if len(accusers) != 2 || !slices.Equal(o.res.Excluded[rogue], accusers) {
				t.Fatalf("kind %d: accusers %v, excluded %v", kind, accusers, o.res.Excluded)
			}
		default:
			if len(accusers) != 5 || !slices.Equal(o.res.Excluded[rogue], accusers) || !slices.Equal(o.res.Dropped, []uint32{rogue}) {
				t.Fatalf("kind %d: accusers %v, result excluded %v dropped %v", kind, accusers, o.res.Excluded, o.res.Dropped)
			}
		}
	}
}

// With t = K every honest site needs every peer's shares: after the
// rogue's garbage it stops before its masked input (ErrTooFewSurvivors),
// so nothing derived from its data left it, and the round aborts.
func TestRogueSiteAbortsBeforeAnyMaskedInputWhenTDoesNotAllow(t *testing.T) {
	o := rogueRound(t, 4, 4, rogueGarbageAll, 31)
	if !errors.Is(o.err, ErrTooFewSurvivors) {
		t.Fatalf("round: %v, want an abort", o.err)
	}
	if len(o.masked) != 0 {
		t.Fatalf("honest sites %v sent their masked inputs", o.masked)
	}
}
