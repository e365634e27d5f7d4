package secagg

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"filippo.io/edwards25519"
)

// Verifiable accusations (dleq.go): a refusal of a dealer's shares must
// carry the pair's key with a proof; the server re-opens the dealer's
// signed ciphertext with it. A false accusation expels the accuser and
// keeps the accused in; a true one excludes the dealer; a forged or
// missing proof refuses the accuser's masked input, and nothing is
// revealed about the accused.

// scalar returns the scalar n.
func scalar(n uint64) *edwards25519.Scalar {
	b := make([]byte, 32)
	for i := 0; i < 8; i++ {
		b[i] = byte(n >> (8 * i))
	}
	s, err := edwards25519.NewScalar().SetCanonicalBytes(b)
	if err != nil {
		panic(err)
	}
	return s
}

func TestDLEQ(t *testing.T) {
	rnd := testRand(70)
	x := scalar(0x1234567)
	X := edwards25519.NewGeneratorPoint().ScalarBaseMult(x)
	yk, _ := newEncKey(rnd)
	Y := yk.pub
	ctx := dleqContext(make([]byte, 32), 1, 2)
	z, proof, err := dleqProve(ctx, x, Y, rnd)
	if err != nil {
		t.Fatal(err)
	}
	// Completeness, and Z is the DH value both sides compute.
	if !dleqVerify(ctx, X, Y, z, proof) {
		t.Fatal("an honest proof does not verify")
	}
	if yk.dh(X).Equal(z) != 1 {
		t.Fatal("Z is not the pair's Diffie–Hellman value")
	}
	// Soundness against a wrong exponent: Z' = x'·Y with x' ≠ x, with the
	// proof for Z, or with a proof made with x' (for X' ≠ X).
	x2 := scalar(0x1234568)
	z2 := edwards25519.NewIdentityPoint().ScalarMult(x2, Y)
	if dleqVerify(ctx, X, Y, z2, proof) {
		t.Fatal("a wrong Z verifies with the proof for the right one")
	}
	_, proof2, _ := dleqProve(ctx, x2, Y, rnd)
	if dleqVerify(ctx, X, Y, z2, proof2) {
		t.Fatal("a proof with another exponent verifies for X")
	}
	// Transcript binding: another round, another pair, the pair reversed,
	// another Y, another X.
	for name, c := range map[string][]byte{
		"another round":    dleqContext(append([]byte{1}, make([]byte, 31)...), 1, 2),
		"another accuser":  dleqContext(make([]byte, 32), 3, 2),
		"another dealer":   dleqContext(make([]byte, 32), 1, 3),
		"the pair swapped": dleqContext(make([]byte, 32), 2, 1),
	} {
		if dleqVerify(c, X, Y, z, proof) {
			t.Errorf("%s: the proof verifies", name)
		}
	}
	if dleqVerify(ctx, X, X, z, proof) || dleqVerify(ctx, Y, Y, z, proof) {
		t.Fatal("the proof verifies for other keys")
	}
	// Every bit of the proof matters; non-canonical scalars are refused.
	for i := 0; i < proofLen; i += 7 {
		p := slices.Clone(proof)
		p[i] ^= 1
		if dleqVerify(ctx, X, Y, z, p) {
			t.Fatalf("proof with byte %d flipped verifies", i)
		}
	}
	// s + ℓ encodes the same residue: refused as non-canonical.
	p := slices.Clone(proof)
	var carry uint16
	ell := []byte{0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10}
	for i := 0; i < 32; i++ {
		v := uint16(p[32+i]) + uint16(ell[i]) + carry
		p[32+i], carry = byte(v), v>>8
	}
	if carry == 0 && dleqVerify(ctx, X, Y, z, p) {
		t.Fatal("a non-canonical response verifies")
	}
	if dleqVerify(ctx, X, Y, z, proof[:63]) {
		t.Fatal("a short proof verifies")
	}
}

// parsePoint refuses every encoding that is not a canonical point of the
// prime-order subgroup.
func TestParsePoint(t *testing.T) {
	k, _ := newEncKey(testRand(71))
	if _, err := parsePoint(k.Bytes()); err != nil {
		t.Fatal(err)
	}
	t2 := append([]byte{0xec}, append(slices.Repeat([]byte{0xff}, 30), 0x7f)...) // (0, −1): order 2
	tp, err := edwards25519.NewIdentityPoint().SetBytes(t2)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		b    []byte
		says string
	}{
		"short":         {k.Bytes()[:31], "bytes"},
		"off the curve": {append([]byte{2}, make([]byte, 31)...), "not a point"},
		"non-canonical": {append([]byte{0xee}, append(slices.Repeat([]byte{0xff}, 30), 0x7f)...), "non-canonical"},
		"identity":      {append([]byte{1}, make([]byte, 31)...), "identity"},
		"order 2":       {t2, "small order"},
		"mixed order":   {edwards25519.NewIdentityPoint().Add(k.pub, tp).Bytes(), "prime-order subgroup"},
	} {
		if _, err := parsePoint(c.b); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want %q", name, err, c.says)
		}
	}
}

// noReveal fails if any unmask or expel answer reveals a share of v's key
// or a pairwise key with v (v stayed a survivor: only its seed shares go).
func (r *cheatRun) noReveal(t *testing.T, v uint32) {
	t.Helper()
	for _, m := range append(slices.Clone(r.tr.Unmask), r.tr.Expel...) {
		if _, ok := m.KeyOf[v]; ok {
			t.Fatalf("site %d revealed its share of site %d's key", m.From, v)
		}
		if _, ok := m.PairOf[v]; ok {
			t.Fatalf("site %d revealed its pairwise key with site %d", m.From, v)
		}
	}
}

func TestFalseAccusationExpelsTheAccuser(t *testing.T) {
	// One honest dealer accused, then K − t of them: the accuser is
	// expelled, the accused stay, the sum is exact over the others.
	for _, accused := range [][]uint32{{16}, {10, 16}} {
		r := runCheat(t, cheat{k: 6, th: 4, seed: 61, rogue: rogueID, falseAccuse: accused})
		r.exact(t, r.without(rogueID))
		if !slices.Equal(r.res.FalseAccusers[rogueID], accused) || len(r.res.FalseAccusers) != 1 {
			t.Fatalf("false accusers %v, want %d accusing %v", r.res.FalseAccusers, rogueID, accused)
		}
		if r.res.Excluded != nil || !slices.Equal(r.res.Dropped, []uint32{rogueID}) {
			t.Fatalf("excluded %v, dropped %v: want only the accuser out", r.res.Excluded, r.res.Dropped)
		}
		for _, d := range accused {
			r.noReveal(t, d)
		}
		m := r.tr.Masked[slices.IndexFunc(r.tr.Masked, func(m MaskedInput) bool { return m.From == rogueID })]
		if len(m.Accusations) != len(accused) {
			t.Fatalf("the accusation carried %d proofs", len(m.Accusations))
		}
	}
	// With a dropout besides, the accuser's expulsion leaves fewer than
	// t: the round aborts before any unmask share (nothing revealed).
	r := runCheat(t, cheat{k: 5, th: 4, seed: 62, rogue: rogueID, falseAccuse: []uint32{16}, dropAt: map[uint32]int{19: DropMasked}})
	if !errors.Is(r.err, ErrTooFewSurvivors) || !strings.Contains(r.err.Error(), "false accusations ([13])") || len(r.tr.Unmask) != 0 {
		t.Fatalf("t = K: %v, %d unmask answers; want an abort naming 13", r.err, len(r.tr.Unmask))
	}
}

// A true accusation (a dealer whose shares do not match its commitments,
// or whose signed ciphertext is garbage) excludes the dealer, as before,
// and the accusers stay.
func TestTrueAccusationExcludesTheDealer(t *testing.T) {
	r := runCheat(t, cheat{k: 6, th: 4, seed: 63, rogue: rogueID, commit: func(c *Commitments) { c.Shares[0].Key = bump(c.Shares[0].Key) }})
	r.exact(t, r.without(rogueID))
	if !slices.Equal(r.res.Excluded[rogueID], []uint32{10}) || r.res.FalseAccusers != nil {
		t.Fatalf("excluded %v, false accusers %v: want 13 excluded on 10's proven accusation", r.res.Excluded, r.res.FalseAccusers)
	}
	// Garbage ciphertexts the dealer signs (a member can): every
	// recipient proves it, the dealer is excluded.
	cfg, signers := withSigners(t, testConfig(6, 4, 24, 9, 64), 64) // the round runCheat runs
	r = runCheat(t, cheat{k: 6, th: 4, seed: 64, rogue: rogueID, shares: func(m *ShareKeys) {
		for i := range m.Shares {
			m.Shares[i].CT = slices.Clone(m.Shares[i].CT)
			m.Shares[i].CT[20] ^= 1
		}
		resignCTs(m, cfg.RoundID, signers[rogueID])
	}})
	r.exact(t, r.without(rogueID))
	if !slices.Equal(r.res.Excluded[rogueID], []uint32{10, 16, 19, 22, 25}) || r.res.FalseAccusers != nil || len(r.maskedErr) != 0 {
		t.Fatalf("excluded %v, false accusers %v, refusals %v", r.res.Excluded, r.res.FalseAccusers, r.maskedErr)
	}
}

// A refusal whose proof does not hold — the wrong key, a proof made for
// another round or another pair, one replayed from an earlier round, or
// none — refuses the accuser's masked input: it leaves the round as a
// dropout, the accused stays a survivor (nothing about it is revealed)
// and the sum is exact over the others.
func TestForgedAccusationRefused(t *testing.T) {
	const accused = 16
	// The rogue's genuine accusation against 16 in an earlier round
	// (other keys), for the replay.
	earlier := runCheat(t, cheat{k: 6, th: 4, seed: 65, rogue: rogueID, falseAccuse: []uint32{accused}, roundOff: 500})
	var replay Accusation
	for _, m := range earlier.tr.Masked {
		if m.From == rogueID {
			replay = m.Accusations[0]
		}
	}
	keyOf := func(r *cheatRun, id uint32) []byte {
		return r.cs[id].u1[id].C
	}
	for name, c := range map[string]struct {
		accuse []uint32
		forge  func(r *cheatRun, m *MaskedInput)
	}{
		"wrong key": {[]uint32{accused}, func(r *cheatRun, m *MaskedInput) {
			m.Accusations[0].Key = keyOf(r, 19) // a valid point, not the pair's DH value
		}},
		"the pair's key, another pair's proof": {[]uint32{accused}, func(r *cheatRun, m *MaskedInput) {
			y, _ := parsePoint(keyOf(r, 19))
			a, _ := r.cs[rogueID].cKey.accuse(r.cfg.RoundID, rogueID, 19, y, testRand(1))
			m.Accusations[0].Proof = a.Proof
		}},
		"another pair's key and proof": {[]uint32{accused}, func(r *cheatRun, m *MaskedInput) {
			y, _ := parsePoint(keyOf(r, 19))
			a, _ := r.cs[rogueID].cKey.accuse(r.cfg.RoundID, rogueID, 19, y, testRand(1))
			a.Dealer = accused
			m.Accusations[0] = a
		}},
		"proof for another round": {[]uint32{accused}, func(r *cheatRun, m *MaskedInput) {
			y, _ := parsePoint(keyOf(r, accused))
			other := slices.Clone(r.cfg.RoundID)
			other[5] ^= 1
			a, _ := r.cs[rogueID].cKey.accuse(other, rogueID, accused, y, testRand(1))
			m.Accusations[0] = a
		}},
		"replayed from an earlier round": {[]uint32{accused}, func(r *cheatRun, m *MaskedInput) { m.Accusations[0] = replay }},
		"no proof":                       {[]uint32{accused}, func(r *cheatRun, m *MaskedInput) { m.Accusations = nil }},
		"one proof for two refusals":     {[]uint32{10, accused}, func(r *cheatRun, m *MaskedInput) { m.Accusations = m.Accusations[:1] }},
		"proofs swapped": {[]uint32{10, accused}, func(r *cheatRun, m *MaskedInput) {
			m.Accusations[0], m.Accusations[1] = m.Accusations[1], m.Accusations[0]
		}},
		"proof bit flipped": {[]uint32{accused}, func(r *cheatRun, m *MaskedInput) { m.Accusations[0].Proof = bump(m.Accusations[0].Proof) }},
	} {
		r := runCheat(t, cheat{k: 6, th: 4, seed: 66, rogue: rogueID, falseAccuse: c.accuse, masked: c.forge})
		if len(r.maskedErr) != 1 || !errors.Is(r.maskedErr[0], ErrExcluded) || !strings.Contains(r.maskedErr[0].Error(), "accusation") {
			t.Fatalf("%s: the server's refusals %v, want the accuser's masked input refused", name, r.maskedErr)
		}
		r.exact(t, r.without(rogueID))
		if r.res.Excluded != nil || r.res.FalseAccusers != nil || !slices.Equal(r.res.Dropped, []uint32{rogueID}) {
			t.Fatalf("%s: excluded %v, false accusers %v, dropped %v: want the accuser dropped only", name, r.res.Excluded, r.res.FalseAccusers, r.res.Dropped)
		}
		for _, d := range c.accuse {
			r.noReveal(t, d)
		}
	}
	// The genuine accusation, for contrast: accepted and judged false.
	r := runCheat(t, cheat{k: 6, th: 4, seed: 66, rogue: rogueID, falseAccuse: []uint32{accused}})
	if len(r.maskedErr) != 0 || !slices.Equal(r.res.FalseAccusers[rogueID], []uint32{accused}) {
		t.Fatalf("genuine accusation: refusals %v, false accusers %v", r.maskedErr, r.res.FalseAccusers)
	}
}

// A lying server cannot make an honest site reveal a pair key: a
// forwarded ciphertext, commitment or path that is not what the dealer
// signed ends the site's round (ErrInconsistent) with no accusation.
func TestLyingServerGetsNoAccusation(t *testing.T) {
	for name, tamper := range map[string]func(e *EncryptedShare){
		"ciphertext":       func(e *EncryptedShare) { e.CT = bump(e.CT) },
		"commitment":       func(e *EncryptedShare) { c := e.Commit.clone(); c.Seed = bump(c.Seed); e.Commit = &c },
		"path":             func(e *EncryptedShare) { e.Path = slices.Clone(e.Path); e.Path[0] = bump(e.Path[0]) },
		"seed commitment":  func(e *EncryptedShare) { e.Seed = bump(e.Seed) },
		"no evidence":      func(e *EncryptedShare) { e.Path, e.Sig = nil, nil },
		"short path":       func(e *EncryptedShare) { e.Path = e.Path[1:] },
		"list signature":   func(e *EncryptedShare) { e.Sig = bump(e.Sig) },
		"another's commit": func(e *EncryptedShare) { c := e.Commit.clone(); c.To++; e.Commit = &c },
	} {
		cfg, keys := withSigners(t, testConfig(5, 3, 16, 2, 67), 67)
		rnd := testRand(67)
		srv, _ := NewServer(cfg)
		cs := map[uint32]*Client{}
		for _, id := range cfg.Sites {
			cs[id], _ = NewClient(cfg, id, keys[id], rnd)
			m, _ := cs[id].Advertise()
			srv.HandleAdvertise(m)
		}
		list, _ := srv.EndAdvertise()
		for _, id := range cfg.Sites {
			m, _ := cs[id].ShareKeys(list)
			if err := srv.HandleShares(m); err != nil {
				t.Fatal(err)
			}
		}
		fwd, _ := srv.EndShares()
		to := cfg.Sites[0]
		in := fwd[to]
		in.Shares = slices.Clone(in.Shares)
		tamper(&in.Shares[1])
		mi, err := cs[to].MaskedInput(in, make([]uint64, cfg.Dim))
		if !errors.Is(err, ErrInconsistent) || mi.Accusations != nil || mi.Y != nil {
			t.Fatalf("%s altered by the server: %v, accusations %v; want ErrInconsistent and nothing sent", name, err, mi.Accusations)
		}
	}
}

// Every leaf's path recomputes the root, for every tree size; a path of
// another leaf or position, or with one hash altered, added or missing,
// does not. (The root does not encode the number of leaves — a left leaf's
// path can be the same in a tree one leaf larger: the dealer signs the
// count with the root, rootSigned.)
func TestMerklePaths(t *testing.T) {
	for n := 1; n <= 17; n++ {
		ls := make([][]byte, n)
		for i := range ls {
			ls[i] = ctHash([]byte{byte(n), byte(i)})
		}
		levels := merkleLevels(ls)
		root := merkleRoot(ls)
		for i := range ls {
			p := merklePath(levels, i)
			if got := merkleFromPath(ls[i], i, n, p); string(got) != string(root) {
				t.Fatalf("n = %d, leaf %d: the path does not give the root", n, i)
			}
			if n > 1 {
				j := (i + 1) % n
				if got := merkleFromPath(ls[j], i, n, p); string(got) == string(root) {
					t.Fatalf("n = %d: leaf %d verifies at %d", n, j, i)
				}
				if got := merkleFromPath(ls[i], j, n, p); string(got) == string(root) {
					t.Fatalf("n = %d: leaf %d verifies at position %d", n, i, j)
				}
				q := slices.Clone(p)
				q[0] = bump(q[0])
				if got := merkleFromPath(ls[i], i, n, q); string(got) == string(root) {
					t.Fatalf("n = %d, leaf %d: an altered path verifies", n, i)
				}
				if merkleFromPath(ls[i], i, n, p[1:]) != nil || merkleFromPath(ls[i], i, n, append(slices.Clone(p), root)) != nil {
					t.Fatalf("n = %d, leaf %d: a path of the wrong length is accepted", n, i)
				}
			}
		}
	}
}
