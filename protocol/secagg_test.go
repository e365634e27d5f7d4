package protocol

import (
	"bytes"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"filippo.io/edwards25519"
	"github.com/pairfed/pairfed/secagg"
)

func rep(b byte, n int) []byte { return bytes.Repeat([]byte{b}, n) }

// pt is the encoding of n·B, a point of edwards25519's prime-order
// subgroup (an encryption key, a revealed pair key).
func pt(n byte) []byte {
	k := make([]byte, 32)
	k[0] = n
	s, err := edwards25519.NewScalar().SetCanonicalBytes(k)
	if err != nil {
		panic(err)
	}
	return edwards25519.NewGeneratorPoint().ScalarBaseMult(s).Bytes()
}

// secAggSamples is one message of every secure aggregation kind; their
// encodings are the golden files testdata/<kind>.bin.
func secAggSamples() []Message {
	return []Message{
		&SecAggKeys{Job: "job-1", Phase: 2, Site: "site-1", C: pt(1), S: rep(2, 32)},
		&SecAggKeyList{Job: "job-1", Phase: 2, Round: rep(9, 32), Keys: []SecAggKey{{ID: 1, C: pt(3), S: rep(4, 32)}, {ID: 2, C: pt(1), S: rep(2, 32)}}},
		&SecAggShares{Job: "job-1", Phase: 2, Site: "site-1", Shares: []SecAggCipher{{Peer: 1, CT: rep(5, 108)}}},
		&SecAggSharesFor{Job: "job-1", Phase: 2, Shares: []SecAggCipher{{Peer: 2, CT: rep(6, 108)}}},
		&SecAggMasked{Job: "job-1", Phase: 2, Site: "site-1", Bits: 20, Len: 4, Y: PackWords([]uint64{0, 1, 1<<20 - 1, 12345}, 20)},
		&SecAggUnmaskRequest{Job: "job-1", Phase: 2, Survivors: []uint32{1, 2, 3}},
		&SecAggUnmask{Job: "job-1", Phase: 2, Site: "site-1", Keys: []SecAggShare{{ID: 3, Y: rep(7, 40)}}, Seeds: []SecAggShare{{ID: 1, Y: rep(8, 40)}, {ID: 2, Y: rep(9, 40)}}},
		&SecAggCheck{Job: "job-1", Phase: 2, Site: "site-1", Sig: rep(10, 64)},
		&SecAggCheckSigs{Job: "job-1", Phase: 2, Sigs: []SecAggSig{{ID: 1, Sig: rep(11, 64)}, {ID: 3, Sig: rep(12, 64)}}},
		&SecAggExpel{Job: "job-1", Phase: 2, Proofs: []SecAggProof{{ID: 2, Commits: sampleCommits(), Shares: []SecAggShare{{ID: 1, Y: rep(20, 40), Nonce: rep(21, 32)}, {ID: 3, Y: rep(22, 40), Nonce: rep(23, 32)}}}}},
	}
}

// sampleCommits is a valid commitment list of three entries.
func sampleCommits() SecAggCommits {
	return SecAggCommits{Seed: rep(16, 32), Sig: rep(17, 64), Shares: []SecAggCommit{{ID: 1, Key: rep(18, 32), Seed: rep(19, 32), CT: rep(28, 32)}, {ID: 2, Key: rep(24, 32), Seed: rep(25, 32), CT: rep(0, 32)}, {ID: 3, Key: rep(26, 32), Seed: rep(27, 32), CT: rep(29, 32)}}}
}

// secAggSeeds are the fuzz seeds: every sample, and the signed
// advertisement and key list of the active variant (the samples of kinds
// 32 and 33 are unsigned: their goldens predate the signatures, and the
// honest-but-curious encoding is unchanged).
func secAggSeeds() []Message {
	return append(secAggSamples(),
		&SecAggKeys{Job: "job-1", Phase: 2, Site: "site-1", C: pt(1), S: rep(2, 32), Sig: rep(13, 64)},
		&SecAggKeyList{Job: "job-1", Phase: 2, Round: rep(9, 32), Keys: []SecAggKey{{ID: 1, C: pt(3), S: rep(4, 32), Sig: rep(14, 64)}, {ID: 2, C: pt(1), S: rep(2, 32), Sig: rep(15, 64)}}},
		// The active variant's commitments (secagg/commit.go): the
		// signed list, the forwarded entries, the revealed nonces.
		&SecAggShares{Job: "job-1", Phase: 2, Site: "site-1", Shares: []SecAggCipher{{Peer: 1, CT: rep(5, 140)}}, Commits: ptr(sampleCommits())},
		&SecAggSharesFor{Job: "job-1", Phase: 2, Shares: []SecAggCipher{{Peer: 2, CT: rep(6, 140), Commit: rep(7, 64), Path: rep(8, 64), Seed: rep(9, 32), Sig: rep(10, 64)}}},
		// A verifiable accusation (secagg/dleq.go).
		&SecAggMasked{Job: "job-1", Phase: 2, Site: "site-1", Bits: 8, Len: 1, Y: []byte{7}, Rejected: []uint32{2}, Accuse: []SecAggAccusation{{ID: 2, Key: pt(5), Proof: rep(1, 64)}}},
		&SecAggUnmask{Job: "job-1", Phase: 2, Site: "site-1", Keys: []SecAggShare{{ID: 3, Y: rep(7, 40), Nonce: rep(8, 32)}}, Seeds: []SecAggShare{{ID: 1, Y: rep(8, 40), Nonce: rep(9, 32)}}, Pairs: []SecAggShare{{ID: 3, Y: rep(10, 32)}}},
		&SecAggUnmask{Job: "job-1", Phase: 2, Site: "site-1", Seeds: []SecAggShare{{ID: 1, Y: rep(8, 40), Nonce: rep(9, 32)}}, Reveal: rep(11, 32)},
	)
}

func ptr[T any](v T) *T { return &v }

func TestSecAggKindsPinned(t *testing.T) {
	want := map[Kind]byte{KindSecAggKeys: 32, KindSecAggKeyList: 33, KindSecAggShares: 34, KindSecAggSharesFor: 35,
		KindSecAggMasked: 36, KindSecAggUnmaskRequest: 37, KindSecAggUnmask: 38, KindSecAggCheck: 39, KindSecAggCheckSigs: 40, KindSecAggExpel: 41}
	for k, v := range want {
		if byte(k) != v {
			t.Errorf("%v = %d, was %d: kinds are append-only", k, byte(k), v)
		}
		if strings.HasPrefix(k.String(), "kind(") {
			t.Errorf("kind %d has no name", v)
		}
	}
}

func TestSecAggGoldenAndRoundTrip(t *testing.T) {
	for _, m := range secAggSeeds()[len(secAggSamples()):] {
		b, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Decode(b); err != nil || !reflect.DeepEqual(got, m) {
			t.Fatalf("signed %v does not round-trip: %v", m.Kind(), err)
		}
	}
	for _, m := range secAggSamples() {
		if err := m.Validate(); err != nil {
			t.Fatalf("%v: sample invalid: %v", m.Kind(), err)
		}
		b, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", m.Kind().String()+".bin")
		if *rewrite {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./protocol -run Golden -rewrite to create it)", err)
		}
		if !bytes.Equal(b, want) {
			t.Errorf("%v: encoding changed\n got %x\nwant %x", m.Kind(), b, want)
		}
		got, err := Decode(want)
		if err != nil {
			t.Fatalf("%v: golden does not decode: %v", m.Kind(), err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%v: golden decodes to %#v", m.Kind(), got)
		}
	}
}

// The fixed sizes Validate checks are the ones package secagg produces.
func TestSecAggSizesMatchThePackage(t *testing.T) {
	round := rep(1, 32)
	cfg := secagg.Config{RoundID: round, Sites: []uint32{1, 2, 3}, Threshold: 2, Bits: 20, Dim: 3}
	in := map[uint32][]uint64{1: {1, 2, 3}, 2: {4, 5, 6}, 3: {7, 8, 9}}
	_, tr, err := secagg.RunInMemory(cfg, in, map[uint32]int{3: secagg.DropMasked}, mrand.NewChaCha8([32]byte{42}))
	if err != nil {
		t.Fatal(err)
	}
	a := tr.Adverts[0]
	if err := (&SecAggKeys{Job: "j", Phase: 1, Site: "s", C: a.C, S: a.S, Sig: a.Sig}).Validate(); err != nil {
		t.Fatal(err)
	}
	if len(a.Sig) == 0 || len(tr.Checks) == 0 {
		t.Fatal("the default (active) round signed nothing")
	}
	if err := (&SecAggCheck{Job: "j", Phase: 1, Site: "s", Sig: tr.Checks[0].Sig}).Validate(); err != nil {
		t.Fatal(err)
	}
	sh := tr.Shares[0].Shares[0]
	if err := (&SecAggShares{Job: "j", Phase: 1, Site: "s", Shares: []SecAggCipher{{Peer: sh.To, CT: sh.CT}}}).Validate(); err != nil {
		t.Fatal(err)
	}
	u := tr.Unmask[0]
	var keys, seeds []SecAggShare
	for id, s := range u.KeyOf {
		keys = append(keys, SecAggShare{ID: id, Y: s.Y, Nonce: s.Nonce})
	}
	for id, s := range u.SeedOf {
		seeds = append(seeds, SecAggShare{ID: id, Y: s.Y, Nonce: s.Nonce})
	}
	if err := (&SecAggUnmask{Job: "j", Phase: 1, Site: "s", Keys: keys, Seeds: seeds}).Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (&SecAggMasked{Job: "j", Phase: 1, Site: "s", Bits: 20, Len: len(tr.Masked[0].Y), Y: PackWords(tr.Masked[0].Y, 20)}).Validate(); err != nil {
		t.Fatal(err)
	}
	// The active variant's commitments, nonces and ciphertexts.
	c := tr.Shares[0].Commits
	if c == nil {
		t.Fatal("the default (active) round committed to nothing")
	}
	cm := SecAggCommits{Seed: c.Seed, Sig: c.Sig}
	for _, e := range c.Shares {
		cm.Shares = append(cm.Shares, SecAggCommit{ID: e.To, Key: e.Key, Seed: e.Seed, CT: e.CT})
	}
	if len(sh.CT) != secAggCTLenActive {
		t.Fatalf("active ciphertext of %d bytes, protocol expects %d", len(sh.CT), secAggCTLenActive)
	}
	if err := (&SecAggShares{Job: "j", Phase: 1, Site: "s", Shares: []SecAggCipher{{Peer: sh.To, CT: sh.CT}}, Commits: &cm}).Validate(); err != nil {
		t.Fatal(err)
	}
	e := cm.Shares[0]
	if err := (&SecAggSharesFor{Job: "j", Phase: 1, Shares: []SecAggCipher{{Peer: 1, CT: sh.CT, Commit: append(append([]byte{}, e.Key...), e.Seed...), Path: rep(1, 64), Seed: c.Seed, Sig: c.Sig}}}).Validate(); err != nil {
		t.Fatal(err)
	}
	var proof []SecAggShare
	for _, s := range seeds {
		if s.Nonce == nil {
			t.Fatal("a revealed seed share without its nonce")
		}
		proof = append(proof, SecAggShare{ID: 1, Y: s.Y, Nonce: s.Nonce})
	}
	if err := (&SecAggExpel{Job: "j", Phase: 1, Proofs: []SecAggProof{{ID: 2, Commits: cm, Shares: proof[:1]}}}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestSecAggRejects(t *testing.T) {
	bad := map[string]Message{
		"short key":         &SecAggKeys{Job: "j", Phase: 1, Site: "s", C: rep(1, 31), S: rep(2, 32)},
		"phase 0":           &SecAggKeys{Job: "j", Phase: 0, Site: "s", C: rep(1, 32), S: rep(2, 32)},
		"no site":           &SecAggKeys{Job: "j", Phase: 1, C: rep(1, 32), S: rep(2, 32)},
		"short round":       &SecAggKeyList{Job: "j", Phase: 1, Round: rep(1, 8)},
		"key id 0":          &SecAggKeyList{Job: "j", Phase: 1, Round: rep(1, 32), Keys: []SecAggKey{{ID: 0, C: rep(1, 32), S: rep(1, 32)}}},
		"repeated peer":     &SecAggShares{Job: "j", Phase: 1, Site: "s", Shares: []SecAggCipher{{Peer: 1, CT: rep(1, 108)}, {Peer: 1, CT: rep(1, 108)}}},
		"short ciphertext":  &SecAggSharesFor{Job: "j", Phase: 1, Shares: []SecAggCipher{{Peer: 1, CT: rep(1, 100)}}},
		"entry above 2^b":   &SecAggMasked{Job: "j", Phase: 1, Site: "s", Bits: 12, Len: 1, Y: []byte{0, 0x10}},
		"short packing":     &SecAggMasked{Job: "j", Phase: 1, Site: "s", Bits: 12, Len: 2, Y: []byte{0, 0, 0}},
		"65 bits":           &SecAggMasked{Job: "j", Phase: 1, Site: "s", Bits: 65, Len: 1, Y: make([]byte, 9)},
		"empty vector":      &SecAggMasked{Job: "j", Phase: 1, Site: "s", Bits: 8},
		"repeated survivor": &SecAggUnmaskRequest{Job: "j", Phase: 1, Survivors: []uint32{1, 1}},
		"key and seed of 1": &SecAggUnmask{Job: "j", Phase: 1, Site: "s", Keys: []SecAggShare{{ID: 1, Y: rep(1, 40)}}, Seeds: []SecAggShare{{ID: 1, Y: rep(1, 40)}}},
		"short share":       &SecAggUnmask{Job: "j", Phase: 1, Site: "s", Seeds: []SecAggShare{{ID: 1, Y: rep(1, 65)}}},
		"site id above max": &SecAggUnmaskRequest{Job: "j", Phase: 1, Survivors: []uint32{MaxSites + 1}},
		"short key sig":     &SecAggKeys{Job: "j", Phase: 1, Site: "s", C: rep(1, 32), S: rep(2, 32), Sig: rep(1, 63)},
		"empty key sig":     &SecAggKeys{Job: "j", Phase: 1, Site: "s", C: rep(1, 32), S: rep(2, 32), Sig: []byte{}},
		"long list sig":     &SecAggKeyList{Job: "j", Phase: 1, Round: rep(1, 32), Keys: []SecAggKey{{ID: 1, C: rep(1, 32), S: rep(2, 32), Sig: rep(1, 65)}}},
		"no check sig":      &SecAggCheck{Job: "j", Phase: 1, Site: "s"},
		"check no site":     &SecAggCheck{Job: "j", Phase: 1, Sig: rep(1, 64)},
		"short check sig":   &SecAggCheck{Job: "j", Phase: 1, Site: "s", Sig: rep(1, 32)},
		"repeated signer":   &SecAggCheckSigs{Job: "j", Phase: 1, Sigs: []SecAggSig{{ID: 2, Sig: rep(1, 64)}, {ID: 2, Sig: rep(1, 64)}}},
		"signer 0":          &SecAggCheckSigs{Job: "j", Phase: 1, Sigs: []SecAggSig{{ID: 0, Sig: rep(1, 64)}}},
		"short forwarded":   &SecAggCheckSigs{Job: "j", Phase: 1, Sigs: []SecAggSig{{ID: 1, Sig: rep(1, 10)}}},
		"too many signers":  &SecAggCheckSigs{Job: "j", Phase: 1, Sigs: manySigs(MaxSites + 1)},
	}
	// The encryption key (a point of edwards25519's prime-order subgroup,
	// secagg/dleq.go), tampered: each case is refused naming the field.
	mixed := func() []byte { // B + T, T of order 2: mixed order
		t, _ := edwards25519.NewIdentityPoint().SetBytes(append([]byte{0xec}, append(rep(0xff, 30), 0x7f)...))
		return edwards25519.NewIdentityPoint().Add(edwards25519.NewGeneratorPoint(), t).Bytes()
	}()
	badPoints := map[string][]byte{
		"short":                     pt(1)[:31],
		"not on the curve":          append([]byte{2}, make([]byte, 31)...),
		"non-canonical (y = p + 1)": append([]byte{0xee}, append(rep(0xff, 30), 0x7f)...),
		"identity":                  append([]byte{1}, make([]byte, 31)...),
		"order 2":                   append([]byte{0xec}, append(rep(0xff, 30), 0x7f)...),
		"mixed order":               mixed,
	}
	for what, c := range badPoints {
		bad["encryption key "+what] = &SecAggKeys{Job: "j", Phase: 1, Site: "s", C: c, S: rep(2, 32)}
		bad["key list encryption key "+what] = &SecAggKeyList{Job: "j", Phase: 1, Round: rep(1, 32), Keys: []SecAggKey{{ID: 1, C: c, S: rep(2, 32)}}}
		bad["accusation key "+what] = &SecAggMasked{Job: "j", Phase: 1, Site: "s", Bits: 8, Len: 1, Y: []byte{1}, Rejected: []uint32{2}, Accuse: []SecAggAccusation{{ID: 2, Key: c, Proof: rep(1, 64)}}}
	}
	accuse := func(f func(*SecAggMasked)) Message {
		m := &SecAggMasked{Job: "j", Phase: 1, Site: "s", Bits: 8, Len: 1, Y: []byte{1}, Rejected: []uint32{2, 3}, Accuse: []SecAggAccusation{{ID: 2, Key: pt(2), Proof: rep(1, 64)}, {ID: 3, Key: pt(3), Proof: rep(1, 64)}}}
		f(m)
		return m
	}
	ell := append([]byte{0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14}, append(make([]byte, 15), 0x10)...) // ℓ, little-endian
	for name, m := range map[string]Message{
		"accusation missing":              accuse(func(m *SecAggMasked) { m.Accuse = m.Accuse[:1] }),
		"accusation list empty":           accuse(func(m *SecAggMasked) { m.Rejected, m.Accuse = nil, []SecAggAccusation{} }),
		"accusation for another peer":     accuse(func(m *SecAggMasked) { m.Accuse[1].ID = 4 }),
		"accusations out of order":        accuse(func(m *SecAggMasked) { m.Accuse[0], m.Accuse[1] = m.Accuse[1], m.Accuse[0] }),
		"accusation proof short":          accuse(func(m *SecAggMasked) { m.Accuse[0].Proof = rep(1, 63) }),
		"accusation proof challenge ℓ":    accuse(func(m *SecAggMasked) { m.Accuse[0].Proof = append(slices.Clone(ell), rep(1, 32)...) }),
		"accusation proof response high":  accuse(func(m *SecAggMasked) { m.Accuse[1].Proof = append(rep(1, 32), rep(0xff, 32)...) }),
		"forwarded path missing":          &SecAggSharesFor{Job: "j", Phase: 1, Shares: []SecAggCipher{{Peer: 1, CT: rep(1, 140), Commit: rep(1, 64), Seed: rep(1, 32), Sig: rep(1, 64)}}},
		"forwarded path ragged":           &SecAggSharesFor{Job: "j", Phase: 1, Shares: []SecAggCipher{{Peer: 1, CT: rep(1, 140), Commit: rep(1, 64), Path: rep(1, 33), Seed: rep(1, 32), Sig: rep(1, 64)}}},
		"forwarded path too long":         &SecAggSharesFor{Job: "j", Phase: 1, Shares: []SecAggCipher{{Peer: 1, CT: rep(1, 140), Commit: rep(1, 64), Path: rep(1, 11*32), Seed: rep(1, 32), Sig: rep(1, 64)}}},
		"forwarded seed commitment short": &SecAggSharesFor{Job: "j", Phase: 1, Shares: []SecAggCipher{{Peer: 1, CT: rep(1, 140), Commit: rep(1, 64), Path: rep(1, 32), Seed: rep(1, 31), Sig: rep(1, 64)}}},
		"forwarded signature missing":     &SecAggSharesFor{Job: "j", Phase: 1, Shares: []SecAggCipher{{Peer: 1, CT: rep(1, 140), Commit: rep(1, 64), Path: rep(1, 32), Seed: rep(1, 32)}}},
		"evidence without commitment":     &SecAggSharesFor{Job: "j", Phase: 1, Shares: []SecAggCipher{{Peer: 1, CT: rep(1, 140), Path: rep(1, 32)}}},
	} {
		bad[name] = m
	}
	// Every new field of the commitments (secagg/commit.go), tampered.
	withCommits := func(f func(*SecAggCommits)) Message {
		c := sampleCommits()
		c.Shares = append([]SecAggCommit(nil), c.Shares...)
		f(&c)
		return &SecAggShares{Job: "j", Phase: 1, Site: "s", Shares: []SecAggCipher{{Peer: 1, CT: rep(1, 140)}}, Commits: &c}
	}
	withProof := func(f func(*SecAggProof)) Message {
		p := SecAggProof{ID: 2, Commits: sampleCommits(), Shares: []SecAggShare{{ID: 1, Y: rep(1, 40), Nonce: rep(2, 32)}, {ID: 3, Y: rep(1, 40), Nonce: rep(2, 32)}}}
		f(&p)
		return &SecAggExpel{Job: "j", Phase: 1, Proofs: []SecAggProof{p}}
	}
	for name, m := range map[string]Message{
		"ciphertext of 120 bytes":      &SecAggShares{Job: "j", Phase: 1, Site: "s", Shares: []SecAggCipher{{Peer: 1, CT: rep(1, 120)}}},
		"commitment on a dealt cipher": &SecAggShares{Job: "j", Phase: 1, Site: "s", Shares: []SecAggCipher{{Peer: 1, CT: rep(1, 140), Commit: rep(1, 64)}}},
		"short forwarded commitment":   &SecAggSharesFor{Job: "j", Phase: 1, Shares: []SecAggCipher{{Peer: 1, CT: rep(1, 140), Commit: rep(1, 63)}}},
		"empty forwarded commitment":   &SecAggSharesFor{Job: "j", Phase: 1, Shares: []SecAggCipher{{Peer: 1, CT: rep(1, 140), Commit: []byte{}}}},
		"short seed commitment":        withCommits(func(c *SecAggCommits) { c.Seed = rep(1, 31) }),
		"no commitment signature":      withCommits(func(c *SecAggCommits) { c.Sig = nil }),
		"long commitment signature":    withCommits(func(c *SecAggCommits) { c.Sig = rep(1, 65) }),
		"empty commitment list":        withCommits(func(c *SecAggCommits) { c.Shares = nil }),
		"unsorted commitment list":     withCommits(func(c *SecAggCommits) { c.Shares[0], c.Shares[1] = c.Shares[1], c.Shares[0] }),
		"repeated commitment":          withCommits(func(c *SecAggCommits) { c.Shares[1].ID = 1 }),
		"commitment to site 0":         withCommits(func(c *SecAggCommits) { c.Shares[0].ID = 0 }),
		"short key commitment":         withCommits(func(c *SecAggCommits) { c.Shares[2].Key = rep(1, 16) }),
		"no seed share commitment":     withCommits(func(c *SecAggCommits) { c.Shares[2].Seed = nil }),
		"short ciphertext commitment":  withCommits(func(c *SecAggCommits) { c.Shares[1].CT = rep(1, 31) }),
		"no ciphertext commitment":     withCommits(func(c *SecAggCommits) { c.Shares[0].CT = nil }),
		"short nonce":                  &SecAggUnmask{Job: "j", Phase: 1, Site: "s", Seeds: []SecAggShare{{ID: 1, Y: rep(1, 40), Nonce: rep(1, 31)}}},
		"empty nonce":                  &SecAggUnmask{Job: "j", Phase: 1, Site: "s", Keys: []SecAggShare{{ID: 1, Y: rep(1, 40), Nonce: []byte{}}}},
		"nonce on a pairwise key":      &SecAggUnmask{Job: "j", Phase: 1, Site: "s", Keys: []SecAggShare{{ID: 1, Y: rep(1, 40)}}, Pairs: []SecAggShare{{ID: 1, Y: rep(1, 32), Nonce: rep(1, 32)}}},
		"short revealed seed":          &SecAggUnmask{Job: "j", Phase: 1, Site: "s", Seeds: []SecAggShare{{ID: 1, Y: rep(1, 40)}}, Reveal: rep(1, 31)},
		"long revealed seed":           &SecAggUnmask{Job: "j", Phase: 1, Site: "s", Seeds: []SecAggShare{{ID: 1, Y: rep(1, 40)}}, Reveal: rep(1, 33)},
		"empty revealed seed":          &SecAggUnmask{Job: "j", Phase: 1, Site: "s", Seeds: []SecAggShare{{ID: 1, Y: rep(1, 40)}}, Reveal: []byte{}},
		"expel without proofs":         &SecAggExpel{Job: "j", Phase: 1},
		"expel phase 0":                &SecAggExpel{Job: "j", Phase: 0, Proofs: []SecAggProof{{ID: 2, Commits: sampleCommits(), Shares: []SecAggShare{{ID: 1, Y: rep(1, 40), Nonce: rep(2, 32)}}}}},
		"proof against site 0":         withProof(func(p *SecAggProof) { p.ID = 0 }),
		"proof without shares":         withProof(func(p *SecAggProof) { p.Shares = nil }),
		"proof share without nonce":    withProof(func(p *SecAggProof) { p.Shares[1].Nonce = nil }),
		"proof share too short":        withProof(func(p *SecAggProof) { p.Shares[0].Y = rep(1, 39) }),
		"proof share holder repeated":  withProof(func(p *SecAggProof) { p.Shares[1].ID = 1 }),
		"proof with a bad list":        withProof(func(p *SecAggProof) { p.Commits.Seed = nil }),
		"two proofs against one site": &SecAggExpel{Job: "j", Phase: 1, Proofs: []SecAggProof{
			{ID: 2, Commits: sampleCommits(), Shares: []SecAggShare{{ID: 1, Y: rep(1, 40), Nonce: rep(2, 32)}}},
			{ID: 2, Commits: sampleCommits(), Shares: []SecAggShare{{ID: 3, Y: rep(1, 40), Nonce: rep(2, 32)}}}}},
	} {
		bad[name] = m
	}
	for name, m := range bad {
		err := m.Validate()
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
		// The new fields' errors name the field.
		for field, says := range map[string]string{"encryption key": "encryption key", "accusation": "accusation", "path": "path",
			"ciphertext commitment": "ciphertext commitment", "forwarded seed": "forwarded seed", "forwarded signature": "forwarded commitment signature", "evidence": "evidence"} {
			if strings.Contains(name, field) && err != nil && !strings.Contains(err.Error(), says) {
				t.Errorf("%s: %v does not name the %s", name, err, says)
			}
		}
		if b, err := Encode(m); err == nil {
			if _, err := Decode(b); err == nil {
				t.Errorf("%s: decoded", name)
			}
		}
	}
	// Site messages name their sender for CheckSender.
	for _, m := range secAggSamples() {
		_, isSite := Sender(m)
		want := m.Kind() == KindSecAggKeys || m.Kind() == KindSecAggShares || m.Kind() == KindSecAggMasked || m.Kind() == KindSecAggUnmask || m.Kind() == KindSecAggCheck
		if isSite != want {
			t.Errorf("%v: Sender reports %v", m.Kind(), isSite)
		}
	}
}

func manySigs(n int) []SecAggSig {
	out := make([]SecAggSig, n)
	for i := range out {
		out[i] = SecAggSig{ID: uint32(i + 1), Sig: rep(1, 64)}
	}
	return out
}

func TestPackWords(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(1, 2))
	for bits := 1; bits <= 64; bits++ {
		ws := make([]uint64, 17)
		for i := range ws {
			ws[i] = rng.Uint64()
			if bits < 64 {
				ws[i] &= 1<<bits - 1
			}
		}
		b := PackWords(ws, bits)
		if len(b) != 17*((bits+7)/8) {
			t.Fatalf("bits %d: %d bytes", bits, len(b))
		}
		if got := UnpackWords(b, bits, 17); !reflect.DeepEqual(got, ws) {
			t.Fatalf("bits %d: %v ≠ %v", bits, got, ws)
		}
		m := &SecAggMasked{Job: "j", Phase: 1, Site: "s", Bits: bits, Len: 17, Y: b}
		if err := m.Validate(); err != nil {
			t.Fatalf("bits %d: %v", bits, err)
		}
	}
}

// FuzzDecodeSecAgg is FuzzDecode seeded with the secure aggregation kinds.
func FuzzDecodeSecAgg(f *testing.F) {
	for _, m := range secAggSeeds() {
		b, _ := Encode(m)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = Decode(b[:len(b)/2])
		m, err := Decode(b)
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("accepted an invalid message: %v", err)
		}
		e1, err := Encode(m)
		if err != nil {
			t.Fatalf("accepted message does not re-encode: %v", err)
		}
		m2, err := Decode(e1)
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("re-encoding changed the message (%v):\n%#v\n%#v", err, m, m2)
		}
	})
}
