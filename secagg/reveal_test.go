package secagg

import (
	"bytes"
	"slices"
	"testing"
)

// The secret a site reveals only when every site is in the sum
// (Client.RevealWhenAll: its removable noise seed, dp/ddg_removable.go).

func revealOf(id uint32) []byte { return bytes.Repeat([]byte{byte(id)}, RevealLen) }

// runReveal runs an honest active round of k sites with threshold th in
// which every site set a secret to reveal and the sites of drop never send
// their masked input, and returns the result and the unmask answers.
func runReveal(t *testing.T, k, th int, drop []uint32) (Result, []UnmaskShares) {
	t.Helper()
	r := newActiveRound(t, k, th, 21)
	for _, id := range r.cfg.Sites {
		if err := r.cs[id].RevealWhenAll(revealOf(id)); err != nil {
			t.Fatal(err)
		}
	}
	req := r.toMaskedWithout(t, drop)
	return r.unmask(t, req, r.sign(t, req))
}

// Every site in the sum: each reveals its secret, and the result carries
// each included site's own. One site dropped (before its masked input):
// no site reveals anything, and the result carries nothing.
func TestRevealOnlyWhenEverySiteIsInTheSum(t *testing.T) {
	res, answers := runReveal(t, 5, 4, nil)
	if len(res.Revealed) != 5 {
		t.Fatalf("every site in the sum: %d secrets revealed, want 5", len(res.Revealed))
	}
	for _, id := range res.Included {
		if !bytes.Equal(res.Revealed[id], revealOf(id)) {
			t.Fatalf("site %d: revealed %x, want its own secret", id, res.Revealed[id])
		}
	}
	for _, a := range answers {
		if !bytes.Equal(a.Reveal, revealOf(a.From)) {
			t.Fatalf("site %d's answer reveals %x", a.From, a.Reveal)
		}
	}
	cfg := testConfig(5, 4, 32, 16, 21)
	res, answers = runReveal(t, 5, 4, []uint32{cfg.Sites[4]})
	if res.Revealed != nil || len(res.Included) != 4 {
		t.Fatalf("one site dropped: revealed %v, included %v", res.Revealed, res.Included)
	}
	for _, a := range answers {
		if len(a.Reveal) != 0 {
			t.Fatalf("one site dropped: site %d revealed %x", a.From, a.Reveal)
		}
	}
}

// The server takes a revealed secret only in an unmask answer of a round
// whose survivor set holds every site, and of the right length: a rogue
// site's other reveals are refused.
func TestServerRefusesMisplacedReveals(t *testing.T) {
	r := newActiveRound(t, 5, 4, 22)
	req := r.toMasked(t)
	sigs := r.sign(t, req)
	m, err := r.cs[req.Survivors[0]].UnmaskSigned(sigs)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Reveal) != 0 {
		t.Fatalf("a site that set no secret revealed %x", m.Reveal)
	}
	m.Reveal = make([]byte, RevealLen-1)
	if err := r.srv.HandleUnmask(m); err == nil {
		t.Fatalf("a %d-byte secret was accepted", len(m.Reveal))
	}
	m.Reveal = make([]byte, RevealLen)
	if err := r.srv.HandleUnmask(m); err != nil {
		t.Fatalf("a full survivor set refused a secret: %v", err)
	}

	// Survivor set without the last site: a reveal is refused.
	r = newActiveRound(t, 5, 4, 23)
	req = r.toMasked(t)
	req.Survivors = req.Survivors[:4]
	// Every masked input arrived, so the honest server's U3 holds all
	// five: play a server whose U3 leaves the fifth out (a legitimate
	// survivor set: it could have timed out).
	r.srv.u3 = slices.Clone(req.Survivors)
	m, err = r.cs[req.Survivors[0]].UnmaskSigned(r.sign(t, req))
	if err != nil {
		t.Fatal(err)
	}
	m.Reveal = make([]byte, RevealLen)
	if err := r.srv.HandleUnmask(m); err == nil {
		t.Fatal("a secret revealed while a site is outside the survivor set was accepted")
	}
}

// RevealWhenAll needs the active complete graph, 32 bytes, and a round not
// yet past its consistency check.
func TestRevealWhenAllRefusals(t *testing.T) {
	cfg := testConfig(5, 4, 32, 16, 24)
	hbc := cfg
	hbc.HonestButCurious = true
	c, err := NewClient(hbc, cfg.Sites[0], nil, testRand(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.RevealWhenAll(revealOf(1)); err == nil {
		t.Error("the honest-but-curious variant accepted a secret to reveal")
	}
	r := newActiveRound(t, 5, 4, 25)
	c = r.cs[r.cfg.Sites[0]]
	if err := c.RevealWhenAll(make([]byte, 16)); err == nil {
		t.Error("a 16-byte secret was accepted")
	}
	req := r.toMasked(t)
	if _, err := c.ConsistencyCheck(req); err != nil {
		t.Fatal(err)
	}
	if err := c.RevealWhenAll(revealOf(1)); err == nil {
		t.Error("a secret set after the consistency check was accepted")
	}
	sparse := testConfig(8, 6, 32, 16, 26)
	sparse.Degree, sparse.Local = 4, 3
	sparse, keys := withSigners(t, sparse, 27)
	c, err = NewClient(sparse, sparse.Sites[0], keys[sparse.Sites[0]], testRand(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.RevealWhenAll(revealOf(1)); err == nil {
		t.Error("the sparse variant accepted a secret to reveal")
	}
}
