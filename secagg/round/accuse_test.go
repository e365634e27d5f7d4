package round

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg"
)

// Verifiable accusations over the codec (secagg/dleq.go; the secagg-level
// cases are secagg/accuse_test.go). The rogue site-1 (wire id 2) falsely
// accuses site-3 (id 4): it adds a refusal of site-3's shares to its
// masked input, proven with the pair's genuine key — a member knows its
// own encryption key: wireCheat's sites draw it from the first 64 bytes
// of their randomness (rand.NewChaCha8([32]byte{9, i})).
const accuser, accused = "site-1", "site-3"

// accuserSeed is the rogue's encryption key seed.
func accuserSeed() []byte {
	b := make([]byte, 64)
	rand.NewChaCha8([32]byte{9, 1}).Read(b)
	return b
}

// accuseOnWire runs the round with the rogue's masked input carrying a
// genuine accusation of site-3, altered by forge (given site-3's key;
// returning false drops the proof).
func accuseOnWire(t *testing.T, forge func(p Params, accusedKey []byte, a *protocol.SecAggAccusation) bool) (*secagg.Result, map[string][]uint64, Params, error) {
	t.Helper()
	var accusedKey []byte
	res, in, p, _, err := wireCheatLie(t, 6, 4, accuser, func(p Params, m protocol.Message) protocol.Message {
		mi, ok := m.(*protocol.SecAggMasked)
		if !ok {
			return m
		}
		a, err := secagg.Accuse(p.RoundID(), 2, 4, accuserSeed(), accusedKey, rand.NewChaCha8([32]byte{3}))
		if err != nil {
			t.Fatal(err)
		}
		w := protocol.SecAggAccusation{ID: a.Dealer, Key: a.Key, Proof: a.Proof}
		mi.Rejected = []uint32{4}
		mi.Accuse = []protocol.SecAggAccusation{w}
		if forge != nil && !forge(p, accusedKey, &mi.Accuse[0]) {
			mi.Accuse = nil
		}
		return mi
	}, func(from string, m protocol.Message) {
		if k, ok := m.(*protocol.SecAggKeys); ok && from == accused {
			accusedKey = k.C
		}
	}, nil)
	return res, in, p, err
}

func TestWireFalseAccusationExpelsTheAccuser(t *testing.T) {
	res, in, p, err := accuseOnWire(t, nil)
	if err != nil {
		t.Fatalf("round aborted: %v", err)
	}
	others := slices.DeleteFunc(slices.Clone(p.Sites), func(s string) bool { return s == accuser })
	if !slices.Equal(res.Sum, sumOf(in, others, p.Dim)) || !slices.Equal(res.FalseAccusers[2], []uint32{4}) || res.Excluded != nil || !slices.Contains(res.Included, 4) {
		t.Fatalf("result %+v, want the exact sum of %v, site 2 expelled for accusing site 4, site 4 in", res, others)
	}
}

// A forged proof, or none, refuses the accuser's masked input: it drops,
// site-3 stays in, no one is named a cheater.
func TestWireForgedAccusationRefused(t *testing.T) {
	for name, forge := range map[string]func(p Params, accusedKey []byte, a *protocol.SecAggAccusation) bool{
		"wrong key": func(p Params, accusedKey []byte, a *protocol.SecAggAccusation) bool {
			a.Key = accusedKey // a valid point, not the pair's DH value
			return true
		},
		"another round's proof": func(p Params, accusedKey []byte, a *protocol.SecAggAccusation) bool {
			q := p
			q.Phase++
			x, err := secagg.Accuse(q.RoundID(), 2, 4, accuserSeed(), accusedKey, rand.NewChaCha8([32]byte{4}))
			if err != nil {
				t.Fatal(err)
			}
			a.Key, a.Proof = x.Key, x.Proof // the same keys, the same Z: only the transcript differs
			return true
		},
		"no proof": func(Params, []byte, *protocol.SecAggAccusation) bool { return false },
	} {
		res, in, p, err := accuseOnWire(t, forge)
		if err != nil {
			t.Fatalf("%s: round aborted: %v", name, err)
		}
		others := slices.DeleteFunc(slices.Clone(p.Sites), func(s string) bool { return s == accuser })
		if !slices.Equal(res.Sum, sumOf(in, others, p.Dim)) || res.FalseAccusers != nil || res.Excluded != nil || !slices.Equal(res.Dropped, []uint32{2}) {
			t.Fatalf("%s: result %+v, want the exact sum of %v, site 2 dropped, no verdict", name, res, others)
		}
	}
}
