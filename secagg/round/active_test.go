package round

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"filippo.io/edwards25519"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg"
)

// A coordinator that lies on the wire (kinds 32–40, through the codec):
// the honest Server runs the round and every message it sends passes
// through tamper, which may replace it (per site) — the malicious
// coordinator. Sites answer honestly; their errors are recorded.
type wireRound struct {
	p       Params
	srv     *Server
	sites   map[string]*Site
	inputs  map[string][]uint64
	siteErr map[string]error
	unmasks int // SecAggUnmask messages the sites produced
	res     *secagg.Result
	abort   error
}

func newWireRound(t *testing.T, k int, phase int) *wireRound {
	t.Helper()
	names := make([]string, k)
	for i := range names {
		names[i] = fmt.Sprintf("site-%d", i)
	}
	p := Params{Federation: "f", Job: "j", Phase: phase, Sites: names, Bits: 20, Dim: 6}
	p.Roster, _ = testRoster(t, names, 42)
	srv, err := NewServer(p, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := &wireRound{p: p, srv: srv, sites: map[string]*Site{}, inputs: map[string][]uint64{}, siteErr: map[string]error{}}
	rng := rand.New(rand.NewPCG(uint64(k), uint64(phase)))
	for _, s := range names {
		x := make([]uint64, p.Dim)
		for j := range x {
			x[j] = rng.Uint64() & (1<<20 - 1)
		}
		r.inputs[s] = x
	}
	return r
}

// start creates the sites (their keys drawn with testRoster's seed
// signersSeed) and returns their advertisements.
func (r *wireRound) start(t *testing.T, signersSeed byte) []protocol.Message {
	t.Helper()
	_, signers := testRoster(t, r.p.Sites, signersSeed)
	var out []protocol.Message
	for i, s := range r.p.Sites {
		c, keys, err := NewSite(r.p, s, signers[s], r.inputs[s], rand.NewChaCha8([32]byte{byte(i), byte(r.p.Phase), 1}))
		if err != nil {
			t.Fatal(err)
		}
		r.sites[s] = c
		out = append(out, keys)
	}
	return out
}

// run feeds the advertisements adv to the server, then relays every
// server message through tamper (nil: honest) until the round ends or
// nothing is left to send.
func (r *wireRound) run(t *testing.T, adv []protocol.Message, tamper func(o Outgoing) []Outgoing) {
	t.Helper()
	var out []Outgoing
	deliver := func(from string, m protocol.Message) {
		o, res, err := r.srv.Deliver(from, wire(t, m))
		switch {
		case err != nil && r.srv.Done():
			r.abort = err
		case err != nil:
			t.Logf("server rejected %v from %s: %v", m.Kind(), from, err)
		}
		if res != nil {
			r.res = res
		}
		out = append(out, o...)
	}
	for i, m := range adv {
		deliver(r.p.Sites[i], m)
	}
	for steps := 0; len(out) > 0 || (!r.srv.Done() && steps < 20); steps++ {
		if len(out) == 0 {
			o, res, err := r.srv.Tick()
			if err != nil {
				r.abort = err
			}
			if res != nil {
				r.res = res
			}
			out = o
			if len(out) == 0 {
				continue
			}
		}
		batch := out
		out = nil
		for _, o := range batch {
			sends := []Outgoing{o}
			if tamper != nil {
				sends = tamper(o)
			}
			for _, o := range sends {
				m := wire(t, o.Msg)
				for _, s := range r.p.Sites {
					if (o.To != "" && o.To != s) || r.siteErr[s] != nil {
						continue
					}
					ans, err := r.sites[s].Deliver(m)
					if err != nil {
						r.siteErr[s] = err
						continue
					}
					if ans == nil {
						continue
					}
					if _, ok := ans.(*protocol.SecAggUnmask); ok {
						r.unmasks++
					}
					deliver(s, ans)
				}
			}
		}
	}
}

func (r *wireRound) plainSum() []uint64 {
	want := make([]uint64, r.p.Dim)
	for _, s := range r.p.Sites {
		for j, w := range r.inputs[s] {
			want[j] = (want[j] + w) & (1<<20 - 1)
		}
	}
	return want
}

// nothingUnmasked checks that every site detected the lie and none sent
// an unmask share, and that the server got no sum.
func (r *wireRound) nothingUnmasked(t *testing.T, sites []string) {
	t.Helper()
	if r.unmasks != 0 || r.res != nil {
		t.Fatalf("%d unmask messages sent, result %v", r.unmasks, r.res)
	}
	for _, s := range sites {
		if !errors.Is(r.siteErr[s], secagg.ErrInconsistent) {
			t.Errorf("site %s did not detect the lie: %v", s, r.siteErr[s])
		}
	}
}

// The control: the honest coordinator over the wire gives the exact sum,
// with one extra round trip (kinds 39 and 40) before the unmask shares.
func TestActiveWireHonest(t *testing.T) {
	r := newWireRound(t, 4, 1)
	kinds := map[protocol.Kind]int{}
	r.run(t, r.start(t, 42), func(o Outgoing) []Outgoing { kinds[o.Msg.Kind()]++; return []Outgoing{o} })
	if r.res == nil || !slices.Equal(r.res.Sum, r.plainSum()) {
		t.Fatalf("honest round: %v (abort %v, site errors %v)", r.res, r.abort, r.siteErr)
	}
	if kinds[protocol.KindSecAggCheckSigs] != 1 || r.unmasks != 4 {
		t.Fatalf("coordinator messages %v, %d unmask answers", kinds, r.unmasks)
	}
}

// Equivocation: the coordinator sends U3 = all to sites 0 and 1 and
// U3 = {1, 2, 3} (site 0 "dropped") to sites 2 and 3, then forwards the
// signatures it got. Every site detects it; no unmask share is sent.
func TestActiveWireEquivocation(t *testing.T) {
	r := newWireRound(t, 4, 1)
	r.run(t, r.start(t, 42), func(o Outgoing) []Outgoing {
		req, ok := o.Msg.(*protocol.SecAggUnmaskRequest)
		if !ok {
			return []Outgoing{o}
		}
		b := *req
		b.Survivors = []uint32{2, 3, 4}
		return []Outgoing{{To: "site-0", Msg: req}, {To: "site-1", Msg: req}, {To: "site-2", Msg: &b}, {To: "site-3", Msg: &b}}
	})
	// The honest server itself rejects the signatures on the other set,
	// so it collects 2 < t and aborts: nothing is forwarded.
	if !errors.Is(r.abort, secagg.ErrTooFewSurvivors) || r.unmasks != 0 || r.res != nil {
		t.Fatalf("abort %v, %d unmask messages, result %v", r.abort, r.unmasks, r.res)
	}
}

// The same lie with a coordinator that forwards whatever signatures it got,
// unverified: an equivocating coordinator does exactly that.
func TestActiveWireEquivocationForwarded(t *testing.T) {
	r := newWireRound(t, 4, 1)
	adv := r.start(t, 42)
	// Play rounds 0–2 honestly, capturing U3.
	var req *protocol.SecAggUnmaskRequest
	r.run(t, adv, func(o Outgoing) []Outgoing {
		if m, ok := o.Msg.(*protocol.SecAggUnmaskRequest); ok {
			req = m
			return nil // the lying coordinator takes over
		}
		return []Outgoing{o}
	})
	if req == nil {
		t.Fatalf("no unmask request (abort %v)", r.abort)
	}
	b := *req
	b.Survivors = []uint32{2, 3, 4}
	view := map[string]*protocol.SecAggUnmaskRequest{"site-0": req, "site-1": req, "site-2": &b, "site-3": &b}
	fwd := &protocol.SecAggCheckSigs{Job: r.p.Job, Phase: r.p.Phase}
	for i, s := range r.p.Sites {
		ans, err := r.sites[s].Deliver(wire(t, view[s]))
		if err != nil {
			t.Fatalf("site %s refused to sign %v: %v", s, view[s].Survivors, err)
		}
		fwd.Sigs = append(fwd.Sigs, protocol.SecAggSig{ID: uint32(i + 1), Sig: ans.(*protocol.SecAggCheck).Sig})
	}
	// To the first group all four; to the second the signatures of its
	// own U3's members (site-0's is outside it).
	fwdB := &protocol.SecAggCheckSigs{Job: r.p.Job, Phase: r.p.Phase, Sigs: fwd.Sigs[1:]}
	for s, m := range map[string]*protocol.SecAggCheckSigs{"site-0": fwd, "site-1": fwd, "site-2": fwdB, "site-3": fwdB} {
		ans, err := r.sites[s].Deliver(wire(t, m))
		if ans != nil {
			r.unmasks++
		}
		r.siteErr[s] = err
		if !r.sites[s].MaskedSent() {
			t.Errorf("site %s: masked vector not recorded as sent", s)
		}
	}
	r.nothingUnmasked(t, r.p.Sites)
	t.Logf("site-0: %v", r.siteErr["site-0"])
	t.Logf("site-2: %v", r.siteErr["site-2"])
}

// A key list with a forged entry (the coordinator's keys in place of
// site-1's, the original signature kept) or an unsigned one is refused by
// every other site before it shares anything.
func TestActiveWireForgedAdvertisement(t *testing.T) {
	for name, tamper := range map[string]func(k *protocol.SecAggKey){
		"forged":   func(k *protocol.SecAggKey) { k.C = edwards25519.NewGeneratorPoint().Bytes() }, // a valid point, not site-1's
		"unsigned": func(k *protocol.SecAggKey) { k.Sig = nil },
	} {
		t.Run(name, func(t *testing.T) {
			r := newWireRound(t, 4, 1)
			r.run(t, r.start(t, 42), func(o Outgoing) []Outgoing {
				l, ok := o.Msg.(*protocol.SecAggKeyList)
				if !ok {
					return []Outgoing{o}
				}
				c := *l
				c.Keys = slices.Clone(l.Keys)
				tamper(&c.Keys[1])
				return []Outgoing{{Msg: &c}}
			})
			r.nothingUnmasked(t, []string{"site-0", "site-2", "site-3"})
			for _, s := range r.p.Sites {
				if r.sites[s].MaskedSent() {
					t.Errorf("site %s sent its masked vector", s)
				}
			}
		})
	}
}

// An advertisement replayed from another phase of the same job (the same
// sites and roster, another round id) is refused by the server (the site
// excluded) and, put into the key list by a lying coordinator, by the
// sites.
func TestActiveWireReplayedAdvertisement(t *testing.T) {
	old := newWireRound(t, 4, 1)
	oldAdv := old.start(t, 42)
	r := newWireRound(t, 4, 2)
	adv := r.start(t, 42)
	replay := *oldAdv[1].(*protocol.SecAggKeys)
	replay.Phase = 2 // the header names this round; the signature binds phase 1
	srv, err := NewServer(r.p, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := srv.Deliver("site-1", &replay); err == nil {
		t.Fatal("server accepted an advertisement replayed from phase 1")
	}
	r.run(t, adv, func(o Outgoing) []Outgoing {
		l, ok := o.Msg.(*protocol.SecAggKeyList)
		if !ok {
			return []Outgoing{o}
		}
		c := *l
		c.Keys = slices.Clone(l.Keys)
		c.Keys[1] = protocol.SecAggKey{ID: 2, C: replay.C, S: replay.S, Sig: replay.Sig}
		return []Outgoing{{Msg: &c}}
	})
	r.nothingUnmasked(t, []string{"site-0", "site-2", "site-3"})
}

// A survivor set of fewer than t (2 of 4, t = 3) is refused: nobody signs.
func TestActiveWireTooFewSurvivors(t *testing.T) {
	r := newWireRound(t, 4, 1)
	r.run(t, r.start(t, 42), func(o Outgoing) []Outgoing {
		req, ok := o.Msg.(*protocol.SecAggUnmaskRequest)
		if !ok {
			return []Outgoing{o}
		}
		c := *req
		c.Survivors = []uint32{1, 2}
		return []Outgoing{{Msg: &c}}
	})
	r.nothingUnmasked(t, []string{"site-0", "site-1"})
}
