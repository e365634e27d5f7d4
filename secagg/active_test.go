package secagg

import (
	"crypto/ed25519"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// The active variant against a malicious server. Each test plays the
// server itself (the honest Server checks what the sites check, so it
// cannot be made to misbehave): it runs the first rounds honestly, then
// lies. Every lie must be detected by the sites (ErrInconsistent), and no
// site may produce an unmask share; the honest completion of the same
// round (the control) must return the exact sum.

// activeRound is a round run honestly up to the masked inputs.
type activeRound struct {
	cfg    Config
	keys   map[uint32]ed25519.PrivateKey
	cs     map[uint32]*Client
	srv    *Server
	inputs map[uint32][]uint64
	list   KeyList
}

func newActiveRound(t *testing.T, k, th int, seed uint64) *activeRound {
	t.Helper()
	cfg, keys := withSigners(t, testConfig(k, th, 32, 16, seed), seed+1000)
	r := &activeRound{cfg: cfg, keys: keys, cs: map[uint32]*Client{}, inputs: randomInputs(cfg, rand.New(rand.NewPCG(seed, 1)))}
	rnd := testRand(seed)
	var err error
	if r.srv, err = NewServer(cfg); err != nil {
		t.Fatal(err)
	}
	for _, id := range cfg.Sites {
		if r.cs[id], err = NewClient(cfg, id, keys[id], rnd); err != nil {
			t.Fatal(err)
		}
		m, err := r.cs[id].Advertise()
		if err != nil {
			t.Fatal(err)
		}
		if err := r.srv.HandleAdvertise(m); err != nil {
			t.Fatal(err)
		}
	}
	if r.list, err = r.srv.EndAdvertise(); err != nil {
		t.Fatal(err)
	}
	return r
}

// toMasked runs rounds 1 and 2 honestly with every site.
func (r *activeRound) toMasked(t *testing.T) UnmaskRequest {
	t.Helper()
	return r.toMaskedWithout(t, nil)
}

// toMaskedWithout runs rounds 1 and 2 honestly, every site sharing its
// keys and the sites of drop never sending their masked input.
func (r *activeRound) toMaskedWithout(t *testing.T, drop []uint32) UnmaskRequest {
	t.Helper()
	for _, id := range r.cfg.Sites {
		m, err := r.cs[id].ShareKeys(r.list)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.srv.HandleShares(m); err != nil {
			t.Fatal(err)
		}
	}
	fwd, err := r.srv.EndShares()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range r.cfg.Sites {
		if slices.Contains(drop, id) {
			continue
		}
		m, err := r.cs[id].MaskedInput(fwd[id], r.inputs[id])
		if err != nil {
			t.Fatal(err)
		}
		if err := r.srv.HandleMasked(m); err != nil {
			t.Fatal(err)
		}
	}
	req, err := r.srv.EndMasked()
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func (r *activeRound) plainSum(sites []uint32) []uint64 {
	want := make([]uint64, r.cfg.Dim)
	for _, id := range sites {
		for i, w := range r.inputs[id] {
			want[i] += w
		}
	}
	for i := range want {
		want[i] &= r.cfg.mask()
	}
	return want
}

// finish completes the round honestly from U3 = req and checks the sum.
func (r *activeRound) finish(t *testing.T, req UnmaskRequest) {
	t.Helper()
	r.unmask(t, req, r.sign(t, req))
}

// sign has every member of U3 = req sign it and returns the server's
// forwarded signatures.
func (r *activeRound) sign(t *testing.T, req UnmaskRequest) ConsistencySigs {
	t.Helper()
	for _, id := range req.Survivors {
		m, err := r.cs[id].ConsistencyCheck(req)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.srv.HandleCheck(m); err != nil {
			t.Fatal(err)
		}
	}
	sigs, err := r.srv.EndCheck()
	if err != nil {
		t.Fatal(err)
	}
	return sigs
}

// unmask has every member of U3 = req answer sigs, checks that the sum is
// the survivors' plain sum, and returns the result and the answers.
func (r *activeRound) unmask(t *testing.T, req UnmaskRequest, sigs ConsistencySigs) (Result, []UnmaskShares) {
	t.Helper()
	var answers []UnmaskShares
	for _, id := range req.Survivors {
		m, err := r.cs[id].UnmaskSigned(sigs)
		if err != nil {
			t.Fatal(err)
		}
		answers = append(answers, m)
		if err := r.srv.HandleUnmask(m); err != nil {
			t.Fatal(err)
		}
	}
	res, err := r.srv.EndUnmask()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Sum, r.plainSum(req.Survivors)) {
		t.Fatalf("sum %v, want the survivors' %v", res.Sum, r.plainSum(req.Survivors))
	}
	return res, answers
}

// The control: an honest round of the active variant returns the exact sum.
func TestActiveHonestRoundExactSum(t *testing.T) {
	r := newActiveRound(t, 5, 3, 1)
	r.finish(t, r.toMasked(t))
}

// A key list with an entry whose signature does not verify — forged (the
// server substitutes its own keys for a site's: the man-in-the-middle that
// would let it decrypt that site's shares), unsigned, or replayed from
// another round — is refused by every site before it shares anything; the
// honest server rejects such an advertisement itself (the site excluded).
func TestActiveRejectsForgedUnsignedReplayedAdvertisements(t *testing.T) {
	other := newActiveRound(t, 5, 3, 2) // another round: same sites, another round id
	for name, tamper := range map[string]func(r *activeRound, k *AdvertiseKeys){
		"forged": func(r *activeRound, k *AdvertiseKeys) {
			mitm, _ := newEncKey(testRand(77))
			k.C = mitm.Bytes()
		},
		"signed by the server's own key": func(r *activeRound, k *AdvertiseKeys) {
			_, sk, _ := ed25519.GenerateKey(nil)
			k.Sig = ed25519.Sign(sk, advertSigned(r.cfg.RoundID, k.From, k.C, k.S))
		},
		"unsigned": func(r *activeRound, k *AdvertiseKeys) { k.Sig = nil },
		"replayed from another round": func(r *activeRound, k *AdvertiseKeys) {
			for _, o := range other.list.Keys {
				if o.From == k.From {
					*k = o
				}
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := newActiveRound(t, 5, 3, 3)
			// The replay is a valid signature of the right site (its
			// roster key), on another round's keys.
			victim := r.cfg.Sites[2]
			for i := range other.list.Keys {
				k := &other.list.Keys[i]
				k.Sig = ed25519.Sign(r.keys[k.From], advertSigned(other.cfg.RoundID, k.From, k.C, k.S))
			}
			bad := KeyList{Keys: slices.Clone(r.list.Keys)}
			for i := range bad.Keys {
				if bad.Keys[i].From == victim {
					tamper(r, &bad.Keys[i])
					// The honest server refuses it.
					srv, _ := NewServer(r.cfg)
					if err := srv.HandleAdvertise(bad.Keys[i]); err == nil {
						t.Fatal("server accepted the advertisement")
					}
				}
			}
			for _, id := range r.cfg.Sites {
				if id == victim {
					continue // its own entry changed: refused anyway
				}
				if _, err := r.cs[id].ShareKeys(bad); !errors.Is(err, ErrInconsistent) {
					t.Fatalf("site %d shared keys over the list: %v", id, err)
				}
			}
		})
	}
	// Control: the untampered list goes through to the exact sum.
	r := newActiveRound(t, 5, 3, 3)
	r.finish(t, r.toMasked(t))
}

// The server shows different survivor sets to two groups of sites (it
// claims site x dropped to one group and survived to the other: the key
// shares of x from the first and the seed shares from the second would
// unmask x's input). Whatever signatures it then forwards — everything it
// collected, or to each group only the signatures on its own set — every
// site detects it, and no site sends an unmask share.
func TestActiveDetectsEquivocation(t *testing.T) {
	for _, forward := range []string{"all signatures", "each group its own"} {
		t.Run(forward, func(t *testing.T) {
			// K = 4, t = 3: two groups of two, neither reaches t alone.
			r := newActiveRound(t, 4, 3, 4)
			req := r.toMasked(t)
			s := r.cfg.Sites
			groupA := []uint32{s[0], s[1]} // told: everyone survived
			groupB := []uint32{s[2], s[3]} // told: x = s[0] dropped
			u3A := UnmaskRequest{Survivors: slices.Clone(req.Survivors)}
			u3B := UnmaskRequest{Survivors: []uint32{s[1], s[2], s[3]}}
			for _, id := range s {
				// Group A is shown a survivor set holding every site: its
				// removable-noise seed must not leave either.
				if err := r.cs[id].RevealWhenAll(revealOf(id)); err != nil {
					t.Fatal(err)
				}
			}
			sigs := map[uint32]ConsistencySig{}
			for _, id := range groupA {
				m, err := r.cs[id].ConsistencyCheck(u3A)
				if err != nil {
					t.Fatal(err)
				}
				sigs[id] = m
			}
			for _, id := range groupB {
				m, err := r.cs[id].ConsistencyCheck(u3B)
				if err != nil {
					t.Fatal(err)
				}
				sigs[id] = m
			}
			pick := func(ids []uint32) ConsistencySigs {
				var out ConsistencySigs
				for _, id := range ids {
					out.Sigs = append(out.Sigs, sigs[id])
				}
				return out
			}
			for _, group := range [][]uint32{groupA, groupB} {
				in := pick(s)
				if forward != "all signatures" {
					in = pick(group)
				}
				if slices.Equal(group, groupB) && forward == "all signatures" {
					// Signatures must come from members of B's U3 (x is not).
					in = pick(u3B.Survivors)
				}
				for _, id := range group {
					out, err := r.cs[id].UnmaskSigned(in)
					if !errors.Is(err, ErrInconsistent) {
						t.Fatalf("site %d (U3 %v) unmasked: %+v, %v", id, group, out, err)
					}
					if len(out.KeyOf)+len(out.SeedOf)+len(out.Reveal) != 0 {
						t.Fatalf("site %d returned shares or its secret with its error", id)
					}
					t.Logf("site %d: %v", id, err)
				}
			}
		})
	}
	// Control: the same round with one survivor set to all.
	r := newActiveRound(t, 4, 3, 4)
	r.finish(t, r.toMasked(t))
}

// A survivor set of fewer than t sites, one not within U2, one omitting
// the site, or a repeated one is refused at the check: nothing is signed.
func TestActiveRefusesBadSurvivorSets(t *testing.T) {
	r := newActiveRound(t, 5, 3, 5)
	req := r.toMasked(t)
	s := r.cfg.Sites
	for name, c := range map[string]struct {
		site uint32
		u3   []uint32
	}{
		"fewer than t":  {s[0], []uint32{s[0], s[1]}},
		"not within U2": {s[1], []uint32{s[0], s[1], 999}},
		"repeated":      {s[3], []uint32{s[3], s[3], s[4]}},
	} {
		if _, err := r.cs[c.site].ConsistencyCheck(UnmaskRequest{Survivors: c.u3}); !errors.Is(err, ErrInconsistent) {
			t.Errorf("%s: signed (%v)", name, err)
		}
	}
	// A set without the site: its masked input was late (the request is
	// broadcast); it leaves without signing, and without crying wolf.
	if _, err := r.cs[s[2]].ConsistencyCheck(UnmaskRequest{Survivors: []uint32{s[0], s[1], s[3]}}); err == nil || errors.Is(err, ErrInconsistent) {
		t.Errorf("a set without the site: %v", err)
	}
	// Each refusal ended that site's round; the last site still signs the
	// honest set.
	if _, err := r.cs[s[4]].ConsistencyCheck(req); err != nil {
		t.Fatal(err)
	}
}

// The server tries to get both secrets of one site x from one site a: a
// seed share of x (x survived) and then, by a second request in which x
// dropped, a key share; or the key share at once by skipping the check.
// The second request, a replayed signature list and the skipped check are
// all refused: a site answers one survivor set, once.
func TestActiveRefusesBothSharesOfOneSite(t *testing.T) {
	r := newActiveRound(t, 5, 3, 6)
	req := r.toMasked(t)
	s := r.cfg.Sites
	a, x := s[0], s[4]
	// Skipping the check: the honest-but-curious entry point is closed.
	r2 := newActiveRound(t, 5, 3, 6)
	req2 := r2.toMasked(t)
	if _, err := r2.cs[a].Unmask(req2); err == nil {
		t.Fatal("unmasked without the consistency check")
	}
	var sigs ConsistencySigs
	for _, id := range s {
		m, err := r.cs[id].ConsistencyCheck(req)
		if err != nil {
			t.Fatal(err)
		}
		sigs.Sigs = append(sigs.Sigs, m)
	}
	first, err := r.cs[a].UnmaskSigned(sigs)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := first.SeedOf[x]; !ok || len(first.KeyOf) != 0 {
		t.Fatalf("first answer %+v", first)
	}
	dropX := UnmaskRequest{Survivors: s[:4]}
	if _, err := r.cs[a].ConsistencyCheck(dropX); err == nil {
		t.Fatal("a second survivor set was signed")
	}
	if out, err := r.cs[a].UnmaskSigned(sigs); err == nil {
		t.Fatalf("a replayed signature list was answered again: %+v", out)
	}
	// And a forged signature (not x's key) among the list is refused.
	b := s[1]
	forged := ConsistencySigs{Sigs: slices.Clone(sigs.Sigs)}
	forged.Sigs[4] = ConsistencySig{From: x, Sig: ed25519.Sign(r.keys[s[3]], checkSigned(r.cfg.RoundID, req.Survivors))}
	if _, err := r.cs[b].UnmaskSigned(forged); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("a forged consistency signature was accepted: %v", err)
	}
	// Control: the same round, honestly to the end.
	r3 := newActiveRound(t, 5, 3, 6)
	r3.finish(t, r3.toMasked(t))
}

// The server verifies what it forwards: a consistency signature on another
// set, or from outside U3, is rejected, so an honest server never makes
// its sites abort.
func TestActiveServerChecksSignatures(t *testing.T) {
	r := newActiveRound(t, 4, 3, 7)
	req := r.toMasked(t)
	s := r.cfg.Sites
	other := ConsistencySig{From: s[0], Sig: ed25519.Sign(r.keys[s[0]], checkSigned(r.cfg.RoundID, s[:3]))}
	if err := r.srv.HandleCheck(other); err == nil {
		t.Fatal("server accepted a signature on another survivor set")
	}
	m, err := r.cs[s[0]].ConsistencyCheck(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.srv.HandleCheck(m); err != nil {
		t.Fatal(err)
	}
	if err := r.srv.HandleCheck(m); err == nil {
		t.Fatal("server accepted a repeated signature")
	}
	if _, err := r.srv.EndCheck(); !errors.Is(err, ErrTooFewSurvivors) {
		t.Fatalf("1 of t = 3 signatures: %v", err)
	}
}
