// Package round runs one secure aggregation round (package secagg) over
// pairfed's wire messages (protocol kinds 32–40): the layer the
// coordinator's job state machine and the worker call when a job releases
// a sum with secure aggregation. It is pure like secagg: messages in,
// messages out, time as abstract ticks owned by the caller, randomness
// injected. Sites are named as in the job's announcement; on the secagg
// wire a site is its 1-based index in JobAnnounce.Sites.
//
// By default the round is secagg's active variant: Params.Roster holds
// every participant's long-term public key, each Site signs with its own.
//
// Wiring (coordinator/coordinator.go, worker/secure.go): the coordinator creates a Server when
// a phase's release is due, feeds it every SecAgg* message from a site
// (after protocol.CheckSender) and calls Tick on its timer; the worker
// creates a Site when asked to release (after charging its ledger: the
// masked vector is the release), answers each coordinator message with
// Site.Deliver, and forgets the Site when the round ends or aborts.
package round

import (
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg"
)

// Params are the public parameters of a round, known to every party.
type Params struct {
	Federation, Job string
	Phase           int
	Sites           []string // the job's participants, in announcement order
	Threshold       int      // t (secagg.DefaultThreshold(len(Sites)) when 0)
	// Degree, Local and Withheld select secagg's sparse variant
	// (SecAgg+: secagg.Config's fields); all 0 for the complete graph.
	Degree, Local, Withheld int
	Bits, Dim               int // the modulus 2^Bits and the encoded length
	// Roster is every participant's long-term Ed25519 public key, by site
	// name (entries for other sites are ignored): the active variant of
	// secagg (the default) verifies every key advertisement and every
	// consistency signature against it. Required unless HonestButCurious.
	Roster map[string]ed25519.PublicKey
	// HonestButCurious runs secagg's variant without signatures nor
	// consistency check (secagg.Config.HonestButCurious): secure only
	// against a coordinator that follows the protocol. Not the default;
	// neither the coordinator nor the worker sets it.
	HonestButCurious bool
}

// RoundID derives the round's public identifier from (federation, job,
// phase): unique because a job id is never reused (ledgers) and a phase is
// released at most once; every key and AEAD tag of the round binds to it.
//
// With the sparse variant the id also binds its degree, ℓ, w and t (t as
// given; 0 for the default): the graph, and each site's floor of honest
// shares, follow from them, so a coordinator that announced different
// values to different sites gets rounds whose keys, signatures and masks
// do not match — no mixed graph whose floor no site computed. (The
// complete graph's id is unchanged.)
func (p Params) RoundID() []byte {
	h := sha256.New()
	fmt.Fprintf(h, "pairfed/secagg/v1\x00%s\x00%s\x00%d", p.Federation, p.Job, p.Phase)
	if p.Degree > 0 {
		fmt.Fprintf(h, "\x00sparse\x00%d\x00%d\x00%d\x00%d", p.Degree, p.Local, p.Withheld, p.Threshold)
	}
	return h.Sum(nil)
}

func (p Params) config() (secagg.Config, error) {
	ids := make([]uint32, len(p.Sites))
	for i := range p.Sites {
		ids[i] = uint32(i + 1)
	}
	t := p.Threshold
	if t == 0 {
		t = secagg.DefaultThreshold(len(p.Sites))
	}
	cfg := secagg.Config{RoundID: p.RoundID(), Sites: ids, Threshold: t, Bits: p.Bits, Dim: p.Dim, HonestButCurious: p.HonestButCurious, Degree: p.Degree, Local: p.Local, Withheld: p.Withheld}
	if !p.HonestButCurious {
		var missing []string
		cfg.Roster = map[uint32]ed25519.PublicKey{}
		for i, name := range p.Sites {
			if k, ok := p.Roster[name]; ok {
				cfg.Roster[ids[i]] = k
			} else {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			return cfg, fmt.Errorf("round: the secure aggregation roster has no signing key for %v: every participant needs one (pairfed deploy init issues them; --secagg-roster)", missing)
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("round: %w", err)
	}
	if len(p.Sites) > protocol.MaxSites || p.Dim > protocol.MaxSecAggDim {
		return cfg, fmt.Errorf("round: %d sites and dimension %d exceed the protocol's %d and %d", len(p.Sites), p.Dim, protocol.MaxSites, protocol.MaxSecAggDim)
	}
	return cfg, nil
}

func (p Params) id(site string) (uint32, bool) {
	i := slices.Index(p.Sites, site)
	return uint32(i + 1), i >= 0
}

// Outgoing is a message for one site (To) or, To empty, for every
// participant.
type Outgoing struct {
	To  string
	Msg protocol.Message
}

// Server is the coordinator's side of one round.
type Server struct {
	p       Params
	srv     *secagg.Server
	step    int // 0 keys, 1 shares, 2 masked, 3 consistency check (active), 4 unmask, 5 expel (active: proven cheaters)
	active  bool
	timeout int // ticks per step
	ticks   int
	waiting map[string]bool // sites whose answer to the current step is awaited
	done    bool
}

// NewServer starts a round: every participant is expected to send its
// keys within timeout ticks (as for every later step).
func NewServer(p Params, timeout int) (*Server, error) {
	cfg, err := p.config()
	if err != nil {
		return nil, err
	}
	if timeout < 1 {
		return nil, fmt.Errorf("round: step timeout %d ticks must be ≥ 1", timeout)
	}
	srv, err := secagg.NewServer(cfg)
	if err != nil {
		return nil, err
	}
	w := map[string]bool{}
	for _, s := range p.Sites {
		w[s] = true
	}
	return &Server{p: p, srv: srv, timeout: timeout, waiting: w, active: cfg.Active()}, nil
}

// ErrWrongRound is returned for a message of another job or phase (the
// caller routes messages by job and phase; this one is ignored).
var ErrWrongRound = errors.New("round: message for another round")

// Deliver feeds a site's message (its sender checked by the caller). When
// it completes the current step the step is closed at once; the returned
// messages are to be sent, and a non-nil Result (its Sum to be decoded)
// ends the round. An error rejects the message only, unless the round
// ended (Done) without a Result; a rejected message can still close the
// step (a refused advertisement, or an ignored unmask answer, that was the
// last one awaited), so messages — and a Result — returned beside an
// error are to be used too.
func (s *Server) Deliver(from string, m protocol.Message) ([]Outgoing, *secagg.Result, error) {
	if s.done {
		return nil, nil, fmt.Errorf("round: round %s/%d is over", s.p.Job, s.p.Phase)
	}
	id, ok := s.p.id(from)
	if !ok {
		return nil, nil, fmt.Errorf("round: %s is not a participant", from)
	}
	var err error
	switch m := m.(type) {
	case *protocol.SecAggKeys:
		if m.Job != s.p.Job || m.Phase != s.p.Phase {
			return nil, nil, ErrWrongRound
		}
		if !s.waiting[from] {
			return nil, nil, fmt.Errorf("%w: %s's keys for %s phase %d", errDuplicate, from, s.p.Job, s.p.Phase)
		}
		err = s.srv.HandleAdvertise(secagg.AdvertiseKeys{From: id, C: m.C, S: m.S, Sig: m.Sig})
	case *protocol.SecAggShares:
		if m.Job != s.p.Job || m.Phase != s.p.Phase {
			return nil, nil, ErrWrongRound
		}
		sk := secagg.ShareKeys{From: id, Commits: fromWireCommits(m.Commits)}
		for _, c := range m.Shares {
			sk.Shares = append(sk.Shares, secagg.EncryptedShare{From: id, To: c.Peer, CT: c.CT})
		}
		err = s.srv.HandleShares(sk)
	case *protocol.SecAggMasked:
		if m.Job != s.p.Job || m.Phase != s.p.Phase {
			return nil, nil, ErrWrongRound
		}
		if m.Bits != s.p.Bits {
			return nil, nil, fmt.Errorf("round: %s masked over 2^%d, the round's modulus is 2^%d", from, m.Bits, s.p.Bits)
		}
		if m.Len != s.p.Dim {
			return nil, nil, fmt.Errorf("round: %s sent %d entries, the round's dimension is %d", from, m.Len, s.p.Dim)
		}
		mi := secagg.MaskedInput{From: id, Y: protocol.UnpackWords(m.Y, m.Bits, m.Len), Rejected: m.Rejected}
		for _, a := range m.Accuse {
			mi.Accusations = append(mi.Accusations, secagg.Accusation{Dealer: a.ID, Key: a.Key, Proof: a.Proof})
		}
		err = s.srv.HandleMasked(mi)
	case *protocol.SecAggUnmask:
		if m.Job != s.p.Job || m.Phase != s.p.Phase {
			return nil, nil, ErrWrongRound
		}
		u := secagg.UnmaskShares{From: id, KeyOf: map[uint32]secagg.Share{}, SeedOf: map[uint32]secagg.Share{}}
		for _, sh := range m.Keys {
			u.KeyOf[sh.ID] = secagg.Share{X: id, Y: sh.Y, Nonce: sh.Nonce}
		}
		for _, sh := range m.Seeds {
			u.SeedOf[sh.ID] = secagg.Share{X: id, Y: sh.Y, Nonce: sh.Nonce}
		}
		if len(m.Pairs) > 0 {
			u.PairOf = map[uint32][]byte{}
			for _, sh := range m.Pairs {
				u.PairOf[sh.ID] = sh.Y
			}
		}
		u.Reveal = m.Reveal
		if s.step == 5 {
			// The answer to the proofs against cheating survivors.
			err = s.srv.HandleExpel(u)
		} else {
			err = s.srv.HandleUnmask(u)
		}
	case *protocol.SecAggCheck:
		if m.Job != s.p.Job || m.Phase != s.p.Phase {
			return nil, nil, ErrWrongRound
		}
		err = s.srv.HandleCheck(secagg.ConsistencySig{From: id, Sig: m.Sig})
	default:
		return nil, nil, fmt.Errorf("round: %v is not a site's secure aggregation message", m.Kind())
	}
	if err != nil {
		if errors.Is(err, secagg.ErrExcluded) && s.waiting[from] {
			// A rogue or broken site's message (an advertisement whose
			// signature is not for this round or whose key is unusable, a
			// commitment list that does not verify, an unmask answer with
			// a share its dealer did not commit to): it is out of the
			// step, so the step does not wait its timeout for it.
			delete(s.waiting, from)
			if len(s.waiting) == 0 {
				outs, res, e := s.endStep()
				if e != nil {
					return outs, res, e
				}
				return outs, res, err
			}
		}
		return nil, nil, err
	}
	delete(s.waiting, from)
	s.ticks = 0 // progress: the step's clock restarts (StepTimeout)
	if len(s.waiting) > 0 {
		return nil, nil, nil
	}
	return s.endStep()
}

// errDuplicate marks a message of a site the step does not await.
var errDuplicate = errors.New("round: message not awaited (repeated, or from a site the round forgot)")

// StepTimeout is the number of ticks a round step of k sites waits with no
// answer before it closes with the sites that answered: base for up to 16
// sites, and base per 16 sites beyond — a site's work in a step (K − 1 key
// agreements, signature checks and share encryptions) and the server's
// (forwarding K·(K − 1) ciphertexts) grow with K, and on a shared host
// the sites' steps run side by side. Every answer restarts the clock, so a
// step ends at most base·⌈k/16⌉ ticks after its last answer (a step in
// which sites keep answering is never cut short by its size).
func StepTimeout(base, k int) int { return base * max(1, (k+15)/16) }

// Tick advances the step's clock by one tick; at the timeout the step
// closes with the sites that answered.
func (s *Server) Tick() ([]Outgoing, *secagg.Result, error) {
	if s.done {
		return nil, nil, nil
	}
	s.ticks++
	if s.ticks < s.timeout {
		return nil, nil, nil
	}
	return s.endStep()
}

// Forget stops waiting for site in this round: the coordinator knows it
// will not answer (it left the job, or was dropped as silent). A step
// whose other awaited sites all answered closes at once, as its timeout
// would have closed it later; the secure aggregation protocol treats the
// site as any dropout of that step. A site not awaited changes nothing.
func (s *Server) Forget(site string) ([]Outgoing, *secagg.Result, error) {
	if s.done || !s.waiting[site] {
		return nil, nil, nil
	}
	delete(s.waiting, site)
	if len(s.waiting) > 0 {
		return nil, nil, nil
	}
	return s.endStep()
}

// UnmaskAsked reports whether the round reached its unmasking step: the
// request for unmask shares (the consistency signatures in the active
// variant, the survivor set in the honest-but-curious one) left the
// server. Before it no site sends a share of any self-mask seed, so the
// server holds masked vectors and at most t − 1 shares of nothing: its
// view does not depend on the sites' inputs (the coordinator returns a
// job's reservation only when none of its rounds got this far).
func (s *Server) UnmaskAsked() bool { return s.step >= 4 }

// Done reports whether the round completed or aborted.
func (s *Server) Done() bool { return s.done }

func (s *Server) name(id uint32) string { return s.p.Sites[id-1] }

// endStep closes the current step. An error wrapping
// secagg.ErrTooFewSurvivors aborts the round with nothing released.
func (s *Server) endStep() ([]Outgoing, *secagg.Result, error) {
	s.ticks = 0
	s.waiting = map[string]bool{}
	fail := func(err error) ([]Outgoing, *secagg.Result, error) {
		s.done = true
		return nil, nil, fmt.Errorf("round: %s phase %d aborted: %w", s.p.Job, s.p.Phase, err)
	}
	switch s.step {
	case 0:
		list, err := s.srv.EndAdvertise()
		if err != nil {
			return fail(err)
		}
		msg := &protocol.SecAggKeyList{Job: s.p.Job, Phase: s.p.Phase, Round: s.p.RoundID()}
		for _, k := range list.Keys {
			msg.Keys = append(msg.Keys, protocol.SecAggKey{ID: k.From, C: k.C, S: k.S, Sig: k.Sig})
			s.waiting[s.name(k.From)] = true
		}
		s.step = 1
		return []Outgoing{{Msg: msg}}, nil, nil
	case 1:
		fwd, err := s.srv.EndShares()
		if err != nil {
			return fail(err)
		}
		var out []Outgoing
		for _, id := range slices.Sorted(maps.Keys(fwd)) {
			msg := &protocol.SecAggSharesFor{Job: s.p.Job, Phase: s.p.Phase}
			for _, e := range fwd[id].Shares {
				c := protocol.SecAggCipher{Peer: e.From, CT: e.CT}
				if e.Commit != nil { // the dealer's commitment to the recipient's shares, and the evidence it signed it
					c.Commit = append(append([]byte{}, e.Commit.Key...), e.Commit.Seed...)
					for _, h := range e.Path {
						c.Path = append(c.Path, h...)
					}
					c.Seed, c.Sig = e.Seed, e.Sig
				}
				msg.Shares = append(msg.Shares, c)
			}
			out = append(out, Outgoing{To: s.name(id), Msg: msg})
			s.waiting[s.name(id)] = true
		}
		s.step = 2
		return out, nil, nil
	case 2:
		req, err := s.srv.EndMasked()
		if err != nil {
			return fail(err)
		}
		for _, id := range req.Survivors {
			s.waiting[s.name(id)] = true
		}
		s.step = 4
		if s.active {
			s.step = 3
		}
		return []Outgoing{{Msg: &protocol.SecAggUnmaskRequest{Job: s.p.Job, Phase: s.p.Phase, Survivors: req.Survivors}}}, nil, nil
	case 3:
		sigs, err := s.srv.EndCheck()
		if err != nil {
			return fail(err)
		}
		msg := &protocol.SecAggCheckSigs{Job: s.p.Job, Phase: s.p.Phase}
		for _, c := range sigs.Sigs {
			msg.Sigs = append(msg.Sigs, protocol.SecAggSig{ID: c.From, Sig: c.Sig})
			s.waiting[s.name(c.From)] = true
		}
		s.step = 4
		return []Outgoing{{Msg: msg}}, nil, nil
	case 4:
		res, err := s.srv.EndUnmask()
		if err != nil {
			return fail(err)
		}
		if res.Expel != nil {
			// Survivors proven to have dealt inconsistent seed shares:
			// the sites that answered check the proofs and reveal their
			// pairwise keys with the cheaters (secagg/commit.go).
			msg := &protocol.SecAggExpel{Job: s.p.Job, Phase: s.p.Phase}
			for _, pr := range res.Expel.Proofs {
				wp := protocol.SecAggProof{ID: pr.Dealer, Commits: *toWireCommits(&pr.Commits)}
				for _, sh := range pr.Shares {
					wp.Shares = append(wp.Shares, protocol.SecAggShare{ID: sh.X, Y: sh.Y, Nonce: sh.Nonce})
				}
				msg.Proofs = append(msg.Proofs, wp)
			}
			// Sent to the sites asked only: a cheater is not asked (it
			// would read a proof against itself as a lie of the
			// coordinator's).
			var out []Outgoing
			for _, id := range s.srv.ExpelAsked() {
				s.waiting[s.name(id)] = true
				out = append(out, Outgoing{To: s.name(id), Msg: msg})
			}
			s.step = 5
			return out, nil, nil
		}
		s.done = true
		return nil, &res, nil
	default:
		res, err := s.srv.EndExpel()
		if err != nil {
			return fail(err)
		}
		s.done = true
		return nil, &res, nil
	}
}

// toWireCommits and fromWireCommits convert a dealer's commitment list
// (nil stays nil: the honest-but-curious variant has none).
func toWireCommits(c *secagg.Commitments) *protocol.SecAggCommits {
	if c == nil {
		return nil
	}
	out := &protocol.SecAggCommits{Seed: c.Seed, Sig: c.Sig}
	for _, e := range c.Shares {
		out.Shares = append(out.Shares, protocol.SecAggCommit{ID: e.To, Key: e.Key, Seed: e.Seed, CT: e.CT})
	}
	return out
}

func fromWireCommits(c *protocol.SecAggCommits) *secagg.Commitments {
	if c == nil {
		return nil
	}
	out := &secagg.Commitments{Seed: c.Seed, Sig: c.Sig}
	for _, e := range c.Shares {
		out.Shares = append(out.Shares, secagg.ShareCommit{To: e.ID, Key: e.Key, Seed: e.Seed, CT: e.CT})
	}
	return out
}

// Site is one site's side of one round.
type Site struct {
	p      Params
	site   string
	c      *secagg.Client
	input  []uint64
	masked bool // the masked vector was handed out
	// expelled: the cheaters whose proofs this site checked (Expelled).
	expelled []string
}

// NewSite starts the site's round with its encoded (noisy) vector; the
// caller must have charged its ledger for the release before calling it
// (the masked vector leaves the site in the third message). sign is the
// site's long-term Ed25519 key (its public half is p.Roster[site]; nil
// only with p.HonestButCurious). It returns the site's keys to send.
func NewSite(p Params, site string, sign ed25519.PrivateKey, input []uint64, rnd io.Reader) (*Site, protocol.Message, error) {
	cfg, err := p.config()
	if err != nil {
		return nil, nil, err
	}
	id, ok := p.id(site)
	if !ok {
		return nil, nil, fmt.Errorf("round: %s is not a participant of %s", site, p.Job)
	}
	c, err := secagg.NewClient(cfg, id, sign, rnd)
	if err != nil {
		return nil, nil, err
	}
	adv, err := c.Advertise()
	if err != nil {
		return nil, nil, err
	}
	return &Site{p: p, site: site, c: c, input: slices.Clone(input)},
		&protocol.SecAggKeys{Job: p.Job, Phase: p.Phase, Site: site, C: adv.C, S: adv.S, Sig: adv.Sig}, nil
}

// Phase is the release (phase) of the round.
func (s *Site) Phase() int { return s.p.Phase }

// MaskedSent reports whether the site's masked vector was handed out (its
// release left, masked): a round that ends after it and before the
// unmask shares leaves that release masked forever.
func (s *Site) MaskedSent() bool { return s.masked }

// Rejected names the peers whose share ciphertexts this site refused in
// the round (they did not authenticate: garbage, replayed or altered), with
// the reason, as "site: reason": the site did not mask with them, and the
// coordinator drops them from the round.
func (s *Site) Rejected() []string {
	var out []string
	for _, r := range s.c.Rejected {
		name := fmt.Sprint(r.Site)
		if r.Site >= 1 && int(r.Site) <= len(s.p.Sites) {
			name = s.p.Sites[r.Site-1]
		}
		out = append(out, name+": "+r.Reason)
	}
	return out
}

// Deliver answers a coordinator message of the round (nil, nil for a
// message it does not concern). An error ends the site's round: it sends
// nothing more, and its input stays masked (or unsent); an error wrapping
// secagg.ErrInconsistent means the coordinator lied (a forged or replayed
// key, a survivor set outside U2, signatures on another survivor set:
// equivocation).
func (s *Site) Deliver(m protocol.Message) (protocol.Message, error) {
	switch m := m.(type) {
	case *protocol.SecAggKeyList:
		if m.Job != s.p.Job || m.Phase != s.p.Phase {
			return nil, nil
		}
		if string(m.Round) != string(s.p.RoundID()) {
			return nil, fmt.Errorf("round: key list for round %x, expected %x", m.Round, s.p.RoundID())
		}
		var list secagg.KeyList
		for _, k := range m.Keys {
			list.Keys = append(list.Keys, secagg.AdvertiseKeys{From: k.ID, C: k.C, S: k.S, Sig: k.Sig})
		}
		sk, err := s.c.ShareKeys(list)
		if err != nil {
			return nil, err
		}
		out := &protocol.SecAggShares{Job: s.p.Job, Phase: s.p.Phase, Site: s.site, Commits: toWireCommits(sk.Commits)}
		for _, e := range sk.Shares {
			out.Shares = append(out.Shares, protocol.SecAggCipher{Peer: e.To, CT: e.CT})
		}
		return out, nil
	case *protocol.SecAggSharesFor:
		if m.Job != s.p.Job || m.Phase != s.p.Phase {
			return nil, nil
		}
		id, _ := s.p.id(s.site)
		in := secagg.SharesFor{To: id}
		for _, c := range m.Shares {
			e := secagg.EncryptedShare{From: c.Peer, To: id, CT: c.CT}
			if len(c.Commit) == 64 { // validated: absent or 64 bytes, with its evidence
				e.Commit = &secagg.ShareCommit{To: id, Key: c.Commit[:32], Seed: c.Commit[32:]}
				for i := 0; i+32 <= len(c.Path); i += 32 {
					e.Path = append(e.Path, c.Path[i:i+32])
				}
				e.Seed, e.Sig = c.Seed, c.Sig
			}
			in.Shares = append(in.Shares, e)
		}
		mi, err := s.c.MaskedInput(in, s.input)
		if err != nil {
			return nil, err
		}
		s.masked = true
		out := &protocol.SecAggMasked{Job: s.p.Job, Phase: s.p.Phase, Site: s.site, Bits: s.p.Bits, Len: len(mi.Y), Y: protocol.PackWords(mi.Y, s.p.Bits), Rejected: mi.Rejected}
		for _, a := range mi.Accusations {
			out.Accuse = append(out.Accuse, protocol.SecAggAccusation{ID: a.Dealer, Key: a.Key, Proof: a.Proof})
		}
		return out, nil
	case *protocol.SecAggUnmaskRequest:
		if m.Job != s.p.Job || m.Phase != s.p.Phase {
			return nil, nil
		}
		req := secagg.UnmaskRequest{Survivors: m.Survivors}
		if !s.p.HonestButCurious {
			c, err := s.c.ConsistencyCheck(req)
			if err != nil {
				return nil, err
			}
			return &protocol.SecAggCheck{Job: s.p.Job, Phase: s.p.Phase, Site: s.site, Sig: c.Sig}, nil
		}
		us, err := s.c.Unmask(req)
		if err != nil {
			return nil, err
		}
		return s.unmaskMsg(us), nil
	case *protocol.SecAggCheckSigs:
		if m.Job != s.p.Job || m.Phase != s.p.Phase {
			return nil, nil
		}
		var in secagg.ConsistencySigs
		for _, c := range m.Sigs {
			in.Sigs = append(in.Sigs, secagg.ConsistencySig{From: c.ID, Sig: c.Sig})
		}
		us, err := s.c.UnmaskSigned(in)
		if err != nil {
			return nil, err
		}
		return s.unmaskMsg(us), nil
	case *protocol.SecAggExpel:
		if m.Job != s.p.Job || m.Phase != s.p.Phase {
			return nil, nil
		}
		var req secagg.ExpelRequest
		for _, wp := range m.Proofs {
			p := secagg.CheatProof{Dealer: wp.ID, Commits: *fromWireCommits(&wp.Commits)}
			for _, sh := range wp.Shares {
				p.Shares = append(p.Shares, secagg.Share{X: sh.ID, Y: sh.Y, Nonce: sh.Nonce})
			}
			req.Proofs = append(req.Proofs, p)
			s.expelled = append(s.expelled, s.nameOf(wp.ID))
		}
		us, err := s.c.Expel(req)
		if err != nil {
			s.expelled = nil
			return nil, err
		}
		return s.unmaskMsg(us), nil
	}
	return nil, nil
}

// Expelled names the survivors this site verified proofs against (they
// dealt seed shares inconsistent with their signed commitments) and
// revealed its pairwise keys with: nil when none.
func (s *Site) Expelled() []string { return slices.Clone(s.expelled) }

func (s *Site) nameOf(id uint32) string {
	if id >= 1 && int(id) <= len(s.p.Sites) {
		return s.p.Sites[id-1]
	}
	return fmt.Sprint(id)
}

func (s *Site) unmaskMsg(us secagg.UnmaskShares) *protocol.SecAggUnmask {
	out := &protocol.SecAggUnmask{Job: s.p.Job, Phase: s.p.Phase, Site: s.site}
	for _, id := range slices.Sorted(maps.Keys(us.KeyOf)) {
		out.Keys = append(out.Keys, protocol.SecAggShare{ID: id, Y: us.KeyOf[id].Y, Nonce: us.KeyOf[id].Nonce})
	}
	for _, id := range slices.Sorted(maps.Keys(us.SeedOf)) {
		out.Seeds = append(out.Seeds, protocol.SecAggShare{ID: id, Y: us.SeedOf[id].Y, Nonce: us.SeedOf[id].Nonce})
	}
	for _, id := range slices.Sorted(maps.Keys(us.PairOf)) {
		out.Pairs = append(out.Pairs, protocol.SecAggShare{ID: id, Y: us.PairOf[id]})
	}
	out.Reveal = us.Reveal
	return out
}

// RevealWhenAll sets the secret this site sends with its unmask shares
// only if every participant is in the survivor set it signs
// (secagg.Client.RevealWhenAll): its removable noise seed.
func (s *Site) RevealWhenAll(secret []byte) error { return s.c.RevealWhenAll(secret) }
