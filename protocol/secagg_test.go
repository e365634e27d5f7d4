package protocol

import (
	"bytes"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/secagg"
)

func rep(b byte, n int) []byte { return bytes.Repeat([]byte{b}, n) }

// secAggSamples is one message of every secure aggregation kind; their
// encodings are the golden files testdata/<kind>.bin.
func secAggSamples() []Message {
	return []Message{
		&SecAggKeys{Job: "job-1", Phase: 2, Site: "site-1", C: rep(1, 32), S: rep(2, 32)},
		&SecAggKeyList{Job: "job-1", Phase: 2, Round: rep(9, 32), Keys: []SecAggKey{{ID: 1, C: rep(3, 32), S: rep(4, 32)}, {ID: 2, C: rep(1, 32), S: rep(2, 32)}}},
		&SecAggShares{Job: "job-1", Phase: 2, Site: "site-1", Shares: []SecAggCipher{{Peer: 1, CT: rep(5, 108)}}},
		&SecAggSharesFor{Job: "job-1", Phase: 2, Shares: []SecAggCipher{{Peer: 2, CT: rep(6, 108)}}},
		&SecAggMasked{Job: "job-1", Phase: 2, Site: "site-1", Bits: 20, Len: 4, Y: PackWords([]uint64{0, 1, 1<<20 - 1, 12345}, 20)},
		&SecAggUnmaskRequest{Job: "job-1", Phase: 2, Survivors: []uint32{1, 2, 3}},
		&SecAggUnmask{Job: "job-1", Phase: 2, Site: "site-1", Keys: []SecAggShare{{ID: 3, Y: rep(7, 40)}}, Seeds: []SecAggShare{{ID: 1, Y: rep(8, 40)}, {ID: 2, Y: rep(9, 40)}}},
		&SecAggCheck{Job: "job-1", Phase: 2, Site: "site-1", Sig: rep(10, 64)},
		&SecAggCheckSigs{Job: "job-1", Phase: 2, Sigs: []SecAggSig{{ID: 1, Sig: rep(11, 64)}, {ID: 3, Sig: rep(12, 64)}}},
	}
}

// secAggSeeds are the fuzz seeds: every sample, and the signed
// advertisement and key list of the active variant (the samples of kinds
// 32 and 33 are unsigned: their goldens predate the signatures, and the
// honest-but-curious encoding is unchanged).
func secAggSeeds() []Message {
	return append(secAggSamples(),
		&SecAggKeys{Job: "job-1", Phase: 2, Site: "site-1", C: rep(1, 32), S: rep(2, 32), Sig: rep(13, 64)},
		&SecAggKeyList{Job: "job-1", Phase: 2, Round: rep(9, 32), Keys: []SecAggKey{{ID: 1, C: rep(3, 32), S: rep(4, 32), Sig: rep(14, 64)}, {ID: 2, C: rep(1, 32), S: rep(2, 32), Sig: rep(15, 64)}}},
	)
}

func TestSecAggKindsPinned(t *testing.T) {
	want := map[Kind]byte{KindSecAggKeys: 32, KindSecAggKeyList: 33, KindSecAggShares: 34, KindSecAggSharesFor: 35,
		KindSecAggMasked: 36, KindSecAggUnmaskRequest: 37, KindSecAggUnmask: 38, KindSecAggCheck: 39, KindSecAggCheckSigs: 40}
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
		keys = append(keys, SecAggShare{ID: id, Y: s.Y})
	}
	for id, s := range u.SeedOf {
		seeds = append(seeds, SecAggShare{ID: id, Y: s.Y})
	}
	if err := (&SecAggUnmask{Job: "j", Phase: 1, Site: "s", Keys: keys, Seeds: seeds}).Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (&SecAggMasked{Job: "j", Phase: 1, Site: "s", Bits: 20, Len: len(tr.Masked[0].Y), Y: PackWords(tr.Masked[0].Y, 20)}).Validate(); err != nil {
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
	for name, m := range bad {
		if err := m.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
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
