package secagg

import (
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Shares that decrypt but are inconsistent (commit.go; issue 28): a rogue
// dealer whose shares are not points of one polynomial through the
// secret it committed to, a rogue responder returning another share than
// the one it was dealt, a coordinator presenting a forged proof. Every
// round that t allows completes without the rogue with the exact sum of
// the included sites' inputs; an honest site never reveals a pairwise key
// on a proof that does not hold.

// cheat describes one round of k sites, threshold th, with site rogue
// misbehaving as the hooks say.
type cheat struct {
	k, th int
	// degree, local: the sparse variant's (0: the complete graph).
	degree, local int
	seed          uint64
	rogue         uint32
	deal          func(key, seed []Share) // the rogue dealer's shares, before committing
	commit        func(*Commitments)      // its commitment list, before signing
	shares        func(*ShareKeys)        // its ShareKeys, as sent
	unmask        func(*UnmaskShares)     // its unmask answer, as sent
	expel         func(*UnmaskShares)     // every site's expel answer, as sent
	// falseAccuse: the rogue refuses these dealers' good shares (with a
	// genuine proof); masked alters its masked input as sent.
	falseAccuse []uint32
	masked      func(r *cheatRun, m *MaskedInput)
	dropAt      map[uint32]int
	pause       bool // stop at the expel request (run.req), before any answer
	// roundOff changes the round id, not the sites' keys (a replay).
	roundOff uint64
}

type cheatRun struct {
	cfg Config
	srv *Server
	cs  map[uint32]*Client
	in  map[uint32][]uint64
	tr  Transcript
	req *ExpelRequest
	res Result
	err error
	// maskedErr are the server's refusals of masked inputs.
	maskedErr []error
	signers   map[uint32]ed25519.PrivateKey
}

// bump returns y with its first field element increased by one: a share
// that is still a field element but no longer the one dealt.
func bump(y []byte) []byte {
	out := slices.Clone(y)
	binary.BigEndian.PutUint64(out, fadd(binary.BigEndian.Uint64(out), 1))
	return out
}

func runCheat(t *testing.T, o cheat) *cheatRun {
	t.Helper()
	base := testConfig(o.k, o.th, 24, 9, o.seed+o.roundOff)
	base.Degree, base.Local = o.degree, o.local
	if o.degree > 0 {
		base.Withheld = o.local / 2
	}
	cfg, signers := withSigners(t, base, o.seed)
	rnd := testRand(o.seed + 1)
	r := &cheatRun{cfg: cfg, signers: signers, cs: map[uint32]*Client{}, in: randomInputs(cfg, rand.New(rand.NewPCG(o.seed, 3)))}
	alive := func(id uint32, step int) bool {
		d, ok := o.dropAt[id]
		return !ok || d > step
	}
	// handle feeds a message to the server: an exclusion (ErrExcluded) is
	// the rogue's expected fate; any other refusal is a test failure.
	handle := func(err error) {
		t.Helper()
		if err != nil && !errors.Is(err, ErrExcluded) {
			t.Fatal(err)
		}
	}
	var err error
	if r.srv, err = NewServer(cfg); err != nil {
		t.Fatal(err)
	}
	for _, id := range cfg.Sites {
		c, err := NewClient(cfg, id, signers[id], rnd)
		if err != nil {
			t.Fatal(err)
		}
		if id == o.rogue {
			c.dealHook, c.commitHook, c.falseAccuse = o.deal, o.commit, o.falseAccuse
		}
		r.cs[id] = c
		m, err := c.Advertise()
		if err != nil {
			t.Fatal(err)
		}
		handle(r.srv.HandleAdvertise(m))
	}
	list, err := r.srv.EndAdvertise()
	if err != nil {
		r.err = err
		return r
	}
	for _, a := range list.Keys {
		m, err := r.cs[a.From].ShareKeys(list)
		if err != nil {
			t.Fatal(err)
		}
		if a.From == o.rogue && o.shares != nil {
			o.shares(&m)
		}
		r.tr.Shares = append(r.tr.Shares, m)
		handle(r.srv.HandleShares(m))
	}
	fwd, err := r.srv.EndShares()
	if err != nil {
		r.err = err
		return r
	}
	for _, id := range sortedKeys(fwd) {
		if !alive(id, DropMasked) {
			continue
		}
		m, err := r.cs[id].MaskedInput(fwd[id], r.in[id])
		if err != nil {
			t.Fatalf("site %d: %v", id, err)
		}
		if id == o.rogue && o.masked != nil {
			o.masked(r, &m)
		}
		r.tr.Masked = append(r.tr.Masked, m)
		herr := r.srv.HandleMasked(m)
		if herr != nil {
			r.maskedErr = append(r.maskedErr, herr)
		}
		handle(herr)
	}
	req, err := r.srv.EndMasked()
	if err != nil {
		r.err = err
		return r
	}
	for _, id := range req.Survivors {
		if !alive(id, DropUnmask) {
			continue
		}
		m, err := r.cs[id].ConsistencyCheck(req)
		if err != nil {
			t.Fatal(err)
		}
		handle(r.srv.HandleCheck(m))
	}
	sigs, err := r.srv.EndCheck()
	if err != nil {
		r.err = err
		return r
	}
	for _, s := range sigs.Sigs {
		if !alive(s.From, DropAfterCheck) {
			continue
		}
		m, err := r.cs[s.From].UnmaskSigned(sigs)
		if err != nil {
			t.Fatal(err)
		}
		if s.From == o.rogue && o.unmask != nil {
			o.unmask(&m)
		}
		r.tr.Unmask = append(r.tr.Unmask, m)
		handle(r.srv.HandleUnmask(m))
	}
	if r.res, r.err = r.srv.EndUnmask(); r.err != nil || r.res.Expel == nil {
		return r
	}
	r.req = r.res.Expel
	if o.pause {
		return r
	}
	for _, id := range r.srv.ExpelAsked() {
		m, err := r.cs[id].Expel(*r.req)
		if err != nil {
			t.Fatalf("site %d refused a genuine proof: %v", id, err)
		}
		if o.expel != nil {
			o.expel(&m)
		}
		r.tr.Expel = append(r.tr.Expel, m)
		handle(r.srv.HandleExpel(m))
	}
	r.res, r.err = r.srv.EndExpel()
	return r
}

// sumOf is Σ_{id∈ids} in[id] mod 2^b.
func (r *cheatRun) sumOf(ids []uint32) []uint64 {
	s := make([]uint64, r.cfg.Dim)
	for _, id := range ids {
		for i, w := range r.in[id] {
			s[i] = (s[i] + w) & r.cfg.mask()
		}
	}
	return s
}

// without returns the round's sites less drop.
func (r *cheatRun) without(drop ...uint32) []uint32 {
	var out []uint32
	for _, id := range r.cfg.Sites {
		if !slices.Contains(drop, id) {
			out = append(out, id)
		}
	}
	return out
}

// exact fails unless the round completed with exactly the inputs of want.
func (r *cheatRun) exact(t *testing.T, want []uint32) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("the round aborted: %v", r.err)
	}
	if r.res.Expel != nil || !slices.Equal(r.res.Included, want) {
		t.Fatalf("included %v (expel pending %v), want %v", r.res.Included, r.res.Expel != nil, want)
	}
	if !slices.Equal(r.res.Sum, r.sumOf(want)) {
		t.Fatalf("sum %v, want the exact sum of %v: %v", r.res.Sum, want, r.sumOf(want))
	}
}

const rogueID = 13 // testConfig's second site

// bumpSeedShare and bumpKeyShare deal one share (to the lowest id, which
// every reconstruction uses) off the polynomial.
func bumpSeedShare(key, seed []Share) { seed[0].Y = bump(seed[0].Y) }
func bumpKeyShare(key, seed []Share)  { key[0].Y = bump(key[0].Y) }

func TestCheatSeedSharesExpelled(t *testing.T) {
	r := runCheat(t, cheat{k: 6, th: 4, seed: 40, rogue: rogueID, deal: bumpSeedShare})
	r.exact(t, r.without(rogueID))
	if !slices.Equal(r.res.Cheated, []uint32{rogueID}) || !slices.Contains(r.res.Dropped, rogueID) {
		t.Fatalf("cheated %v, dropped %v: want the rogue", r.res.Cheated, r.res.Dropped)
	}
	if len(r.tr.Expel) != 5 {
		t.Fatalf("%d expel answers, want the 5 honest responders'", len(r.tr.Expel))
	}
	for _, m := range r.tr.Expel {
		if len(m.PairOf) != 1 || m.PairOf[rogueID] == nil || len(m.SeedOf) != 0 {
			t.Fatalf("site %d revealed %v pairwise keys and %d seed shares, want its key with the rogue only", m.From, len(m.PairOf), len(m.SeedOf))
		}
	}
	// Every t-subset of the rogue's shares is off its seed, too: all of
	// its shares shifted by the same amount still interpolate, to the
	// wrong seed.
	r = runCheat(t, cheat{k: 6, th: 4, seed: 41, rogue: rogueID, deal: func(key, seed []Share) {
		for i := range seed {
			seed[i].Y = bump(seed[i].Y)
		}
	}})
	r.exact(t, r.without(rogueID))
}

// A survivor that did not answer the unmasking holds a pairwise mask with
// the cheater no answer reveals: it is removed with the cheater's key,
// reconstructed from the expel answers' verified key shares.
func TestCheatSeedSharesExpelledWithASilentSurvivor(t *testing.T) {
	const silent = 22 // testConfig's fifth site
	r := runCheat(t, cheat{k: 7, th: 4, seed: 42, rogue: rogueID, deal: bumpSeedShare, dropAt: map[uint32]int{silent: DropUnmask}})
	r.exact(t, r.without(rogueID))
	// The same with the cheater's key shares inconsistent too: its key
	// cannot be reconstructed, the silent survivor's mask with it cannot
	// be removed, and the round aborts naming it.
	r = runCheat(t, cheat{k: 7, th: 4, seed: 43, rogue: rogueID, dropAt: map[uint32]int{silent: DropUnmask}, deal: func(key, seed []Share) {
		bumpSeedShare(key, seed)
		bumpKeyShare(key, seed)
	}})
	if !errors.Is(r.err, ErrTooFewSurvivors) || !strings.Contains(r.err.Error(), "site 13 dealt key shares") {
		t.Fatalf("round: %v, want an abort naming site 13's key shares", r.err)
	}
}

// With fewer than t survivors without the cheater the round aborts at
// once: no expel request, no pairwise key revealed.
func TestCheatSeedSharesAbortWhenTDoesNotAllow(t *testing.T) {
	r := runCheat(t, cheat{k: 4, th: 4, seed: 44, rogue: rogueID, deal: bumpSeedShare})
	if !errors.Is(r.err, ErrTooFewSurvivors) || !strings.Contains(r.err.Error(), "[13]") || r.req != nil {
		t.Fatalf("round: %v (expel request %v), want an abort naming 13", r.err, r.req != nil)
	}
}

// Inconsistent key shares of a site dropped after sharing: every survivor
// reveals its pairwise key with it, so its key is not needed and the round
// completes exactly; with a silent survivor the key is needed and proven
// inconsistent: the round aborts naming the dealer.
func TestCheatKeyShares(t *testing.T) {
	r := runCheat(t, cheat{k: 6, th: 4, seed: 45, rogue: rogueID, deal: bumpKeyShare, dropAt: map[uint32]int{rogueID: DropMasked}})
	r.exact(t, r.without(rogueID))
	r = runCheat(t, cheat{k: 7, th: 4, seed: 46, rogue: rogueID, deal: bumpKeyShare, dropAt: map[uint32]int{rogueID: DropMasked, 22: DropUnmask}})
	if !errors.Is(r.err, ErrTooFewSurvivors) || !strings.Contains(r.err.Error(), "site 13 dealt key shares inconsistent") {
		t.Fatalf("round: %v, want an abort naming site 13", r.err)
	}
	// A survivor's inconsistent key shares are never revealed: harmless.
	r = runCheat(t, cheat{k: 6, th: 4, seed: 47, rogue: rogueID, deal: bumpKeyShare})
	r.exact(t, r.cfg.Sites)
}

// A responder returning another share than the one dealt to it (or the
// right share with another nonce) is ignored; the sum is exact (its own
// input is in it: its self mask is reconstructed from the others).
func TestCheatResponderWrongShare(t *testing.T) {
	for name, tamper := range map[string]func(*UnmaskShares){
		"seed share": func(m *UnmaskShares) { sh := m.SeedOf[10]; sh.Y = bump(sh.Y); m.SeedOf[10] = sh },
		"own seed share": func(m *UnmaskShares) {
			sh := m.SeedOf[rogueID]
			sh.Y = bump(sh.Y)
			m.SeedOf[rogueID] = sh
		},
		"nonce": func(m *UnmaskShares) {
			sh := m.SeedOf[16]
			sh.Nonce = bump(sh.Nonce)
			m.SeedOf[16] = sh
		},
	} {
		r := runCheat(t, cheat{k: 6, th: 4, seed: 48, rogue: rogueID, unmask: tamper})
		r.exact(t, r.cfg.Sites)
		if _, ok := r.res.Ignored[rogueID]; !ok || len(r.res.Ignored) != 1 {
			t.Fatalf("%s: ignored %v, want the rogue", name, r.res.Ignored)
		}
	}
	// A wrong share of a dropped site's key, where the key is needed (a
	// silent survivor): reconstructed from the verified shares only.
	const dropped, silent = 10, 22
	r := runCheat(t, cheat{k: 7, th: 4, seed: 49, rogue: rogueID, dropAt: map[uint32]int{dropped: DropMasked, silent: DropUnmask},
		unmask: func(m *UnmaskShares) { sh := m.KeyOf[dropped]; sh.Y = bump(sh.Y); m.KeyOf[dropped] = sh }})
	r.exact(t, r.without(dropped))
	if _, ok := r.res.Ignored[rogueID]; !ok {
		t.Fatalf("ignored %v, want the rogue", r.res.Ignored)
	}
	// Before: the wrong share was used. Without the commitment check the
	// reconstruction above fails (the test can fail).
	if len(r.tr.Unmask) != 5 {
		t.Fatalf("%d unmask answers", len(r.tr.Unmask))
	}
}

// A dealer whose ciphertexts decrypt to other shares than those it signed
// commitments to is refused by their recipients (the unopenable-share
// path); one whose list is not validly signed is refused by the server.
func TestCheatRecipientsRefuseUncommittedShares(t *testing.T) {
	r := runCheat(t, cheat{k: 6, th: 4, seed: 50, rogue: rogueID, commit: func(c *Commitments) {
		for _, i := range []int{0, 2} { // sites 10 and 16
			c.Shares[i].Seed = bump(c.Shares[i].Seed)
		}
	}})
	r.exact(t, r.without(rogueID))
	if !slices.Equal(r.res.Excluded[rogueID], []uint32{10, 16}) {
		t.Fatalf("excluded %v, want 13 refused by 10 and 16", r.res.Excluded)
	}
	for name, tamper := range map[string]func(*ShareKeys){
		"signature":   func(m *ShareKeys) { m.Commits.Sig[0] ^= 1 },
		"no list":     func(m *ShareKeys) { m.Commits = nil },
		"short list":  func(m *ShareKeys) { m.Commits.Shares = m.Commits.Shares[1:] },
		"seed commit": func(m *ShareKeys) { m.Commits.Seed = bump(m.Commits.Seed) },
	} {
		r := runCheat(t, cheat{k: 6, th: 4, seed: 51, rogue: rogueID, shares: tamper})
		r.exact(t, r.without(rogueID))
		if r.res.Excluded != nil || slices.Contains(r.res.Dropped, rogueID) {
			t.Fatalf("%s: %+v", name, r.res)
		}
	}
}

// A proof that does not hold (against an honest survivor, with a share or
// a list entry altered, relabelled to another dealer, replayed from
// another round) makes an honest site refuse the expel request
// (ErrInconsistent) and reveal nothing; the genuine proof is accepted.
func TestCheatForgedProofRefused(t *testing.T) {
	o := cheat{k: 6, th: 4, seed: 52, rogue: rogueID, deal: bumpSeedShare, pause: true}
	const asked = 16
	genuineFor := func(r *cheatRun) CheatProof { return r.req.Proofs[0] }
	// A "proof" against honest site 19 from its genuine commitments and
	// t of its genuine seed shares (they reconstruct its seed).
	honest := func(r *cheatRun) CheatProof {
		var p CheatProof
		for _, m := range r.tr.Shares {
			if m.From == 19 {
				p = CheatProof{Dealer: 19, Commits: m.Commits.clone()}
			}
		}
		for _, m := range r.tr.Unmask[:4] {
			p.Shares = append(p.Shares, m.SeedOf[19])
		}
		return p
	}
	for name, forge := range map[string]func(r *cheatRun) ExpelRequest{
		"honest dealer": func(r *cheatRun) ExpelRequest { return ExpelRequest{Proofs: []CheatProof{honest(r)}} },
		"honest dealer beside the genuine proof": func(r *cheatRun) ExpelRequest {
			return ExpelRequest{Proofs: []CheatProof{genuineFor(r), honest(r)}}
		},
		"altered share": func(r *cheatRun) ExpelRequest {
			p := genuineFor(r)
			p.Shares = slices.Clone(p.Shares)
			p.Shares[1].Y = bump(p.Shares[1].Y)
			return ExpelRequest{Proofs: []CheatProof{p}}
		},
		"altered list entry": func(r *cheatRun) ExpelRequest {
			p := genuineFor(r)
			p.Commits = p.Commits.clone()
			p.Commits.Shares[0].Seed = shareCommit(labelCommitSeed, r.cfg.RoundID, rogueID, p.Shares[0].X, p.Shares[0].Nonce, bump(p.Shares[0].Y))
			p.Shares = slices.Clone(p.Shares)
			p.Shares[0].Y = bump(p.Shares[0].Y)
			return ExpelRequest{Proofs: []CheatProof{p}}
		},
		"relabelled dealer": func(r *cheatRun) ExpelRequest {
			p := genuineFor(r)
			p.Dealer = 19
			return ExpelRequest{Proofs: []CheatProof{p}}
		},
		"t − 1 shares": func(r *cheatRun) ExpelRequest {
			p := genuineFor(r)
			p.Shares = p.Shares[:len(p.Shares)-1]
			return ExpelRequest{Proofs: []CheatProof{p}}
		},
		"repeated proof": func(r *cheatRun) ExpelRequest {
			return ExpelRequest{Proofs: []CheatProof{genuineFor(r), genuineFor(r)}}
		},
		"no proof": func(r *cheatRun) ExpelRequest { return ExpelRequest{} },
	} {
		r := runCheat(t, o)
		if r.req == nil || len(r.req.Proofs) != 1 {
			t.Fatalf("%s: no genuine expel request (%v)", name, r.err)
		}
		out, err := r.cs[asked].Expel(forge(r))
		if !errors.Is(err, ErrInconsistent) || len(out.PairOf) != 0 || len(out.KeyOf) != 0 {
			t.Fatalf("%s: Expel = %d pairwise keys, %v; want ErrInconsistent and nothing revealed", name, len(out.PairOf), err)
		}
		// Answered once: not even the genuine request is answered after.
		if _, err := r.cs[asked].Expel(*r.req); err == nil {
			t.Fatalf("%s: a second expel answer", name)
		}
	}
	// Replayed from another round: the same rogue's genuine proof of a
	// round with another id does not verify in this one.
	oo := o
	oo.roundOff = 1000
	other := runCheat(t, oo)
	r := runCheat(t, o)
	if _, err := r.cs[asked].Expel(*other.req); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("replayed proof: %v", err)
	}
	// The genuine proof is accepted.
	r = runCheat(t, o)
	out, err := r.cs[asked].Expel(*r.req)
	if err != nil || len(out.PairOf) != 1 || out.KeyOf[rogueID].Nonce == nil {
		t.Fatalf("genuine proof: %v, %+v", err, out)
	}
}

// A site answering the expel request with a wrong share of the cheater's
// key is ignored too: with a silent survivor whose mask with the cheater
// must be removed, the cheater's key comes from the t verified answers.
func TestCheatWrongShareInExpelAnswer(t *testing.T) {
	const liar, silent = 10, 22
	r := runCheat(t, cheat{k: 7, th: 4, seed: 54, rogue: rogueID, deal: bumpSeedShare, dropAt: map[uint32]int{silent: DropUnmask},
		expel: func(m *UnmaskShares) {
			if m.From == liar {
				sh := m.KeyOf[rogueID]
				sh.Y = bump(sh.Y)
				m.KeyOf[rogueID] = sh
			}
		}})
	r.exact(t, r.without(rogueID))
	if g, ok := r.res.Ignored[liar]; !ok || !g.Expel || g.Dealer != rogueID || g.Of != "key" {
		t.Fatalf("ignored %+v, want site %d's expel answer", r.res.Ignored, liar)
	}
}
