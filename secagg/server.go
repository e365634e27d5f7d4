package secagg

import (
	"bytes"
	"crypto/ecdh"
	"fmt"
	"maps"
	"slices"
)

// Server is the coordinator's side of a round: a pure state machine. For
// each step the caller feeds the sites' messages as they arrive (Handle*)
// and closes the step (End*) when all invited sites answered or the step's
// timeout expired; the sites whose messages arrived before End* are the
// step's survivors. Any End* returns ErrTooFewSurvivors (wrapped) when
// fewer than t survive: the round is aborted and the server holds no
// unmasked information (it never held more than t − 1 shares of any
// secret, and every stored input is masked). A failed Handle* rejects that
// one message (wrong sender, duplicate, malformed) and leaves the state
// unchanged.
//
// In the active variant (the default) the server verifies what the sites
// will verify, so that an honest server never forwards what they would
// refuse: advertisements signed under the roster for this round (a bad one
// is rejected, excluding its site), and consistency signatures on the U3 it
// sent. None of this is the security: the sites check everything again.
type Server struct {
	cfg  Config
	step int // stepAdvertise … stepDone as Client (stepCheck: signatures in the active variant, unmask shares otherwise)

	keys   map[uint32]AdvertiseKeys
	g      *graph   // (graph.go) who holds whose shares and masks with whom
	u1     []uint32 // sorted
	shares map[uint32]ShareKeys
	u2     []uint32
	masked map[uint32][]uint64
	// rejectedBy[u] are the sites whose shares u refused (its masked
	// input's Rejected): u holds no share of their secrets and did not
	// mask with them.
	rejectedBy map[uint32][]uint32
	excluded   map[uint32][]uint32 // accused site → its accusers
	falseAcc   map[uint32][]uint32 // proven false accuser → the dealers it accused falsely (active)
	u3         []uint32
	checks     map[uint32]ConsistencySig
	u4         []uint32 // the sites whose unmask shares are awaited
	unmask     map[uint32]UnmaskShares
	// Active variant, shares that decrypt but are inconsistent (commit.go):
	// ignored are the responders whose answers held a share not matching
	// its dealer's signed commitment (with why); seeds the reconstructed
	// self-mask seeds of U3; cheats the survivors proven to have dealt
	// inconsistent seed shares, asked the sites their proofs go to, expel
	// their answers.
	ignored map[uint32]IgnoredShare
	seeds   map[uint32][]byte
	cheats  []uint32
	asked   []uint32
	expel   map[uint32]UnmaskShares
	lams    map[string][]uint64 // interpolation weights by holder set
}

// NewServer returns the server of the round cfg.
func NewServer(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g, err := cfg.newGraph()
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, g: g, keys: map[uint32]AdvertiseKeys{}}, nil
}

func (s *Server) expect(step int, what string) error {
	if s.step != step {
		return fmt.Errorf("secagg: server: %s out of order (step %d, want %d)", what, s.step, step)
	}
	return nil
}

// HandleAdvertise records a site's public keys.
func (s *Server) HandleAdvertise(m AdvertiseKeys) error {
	if err := s.expect(stepAdvertise, "advertisement"); err != nil {
		return err
	}
	if !s.cfg.invited(m.From) {
		return fmt.Errorf("secagg: server: advertisement from uninvited site %d", m.From)
	}
	if _, dup := s.keys[m.From]; dup {
		return fmt.Errorf("secagg: server: second advertisement from site %d", m.From)
	}
	if err := checkEncKey(m.C); err != nil {
		return fmt.Errorf("%w: secagg: server: site %d advertised a bad key: %w", ErrExcluded, m.From, err)
	}
	if err := checkPublicKey(m.S); err != nil {
		return fmt.Errorf("%w: secagg: server: site %d advertised a bad key: %w", ErrExcluded, m.From, err)
	}
	if s.cfg.Active() && !verifySig(s.cfg.Roster[m.From], advertSigned(s.cfg.RoundID, m.From, m.C, m.S), m.Sig) {
		return fmt.Errorf("%w: secagg: server: site %d's advertisement is not signed by its roster key for this round (unsigned, forged or replayed)", ErrExcluded, m.From)
	}
	s.keys[m.From] = m
	return nil
}

// EndAdvertise closes round 0 and returns the key list U1 for every
// survivor.
func (s *Server) EndAdvertise() (KeyList, error) {
	if err := s.expect(stepAdvertise, "end of advertisement"); err != nil {
		return KeyList{}, err
	}
	s.step = stepDone
	if len(s.keys) < s.cfg.Threshold {
		return KeyList{}, fmt.Errorf("%w: %d of %d sites advertised keys, threshold %d", ErrTooFewSurvivors, len(s.keys), len(s.cfg.Sites), s.cfg.Threshold)
	}
	var l KeyList
	for _, id := range sortedKeys(s.keys) {
		l.Keys = append(l.Keys, s.keys[id])
	}
	s.u1 = sortedKeys(s.keys)
	s.shares = map[uint32]ShareKeys{}
	s.step = stepShare
	return l, nil
}

// HandleShares records a site's encrypted shares: one per other holder of
// its secrets (every other member of U1; its neighbours in U1 in the
// sparse variant), addressed correctly.
func (s *Server) HandleShares(m ShareKeys) error {
	if err := s.expect(stepShare, "shares"); err != nil {
		return err
	}
	if _, ok := s.keys[m.From]; !ok {
		return fmt.Errorf("secagg: server: shares from site %d, which is not in U1", m.From)
	}
	if _, dup := s.shares[m.From]; dup {
		return fmt.Errorf("secagg: server: second shares message from site %d", m.From)
	}
	hs := s.g.holders(m.From, s.u1)
	if len(m.Shares) != len(hs)-1 {
		return fmt.Errorf("secagg: server: site %d sent %d shares, want %d", m.From, len(m.Shares), len(hs)-1)
	}
	to := map[uint32]bool{}
	for _, e := range m.Shares {
		if e.From != m.From || e.To == m.From || to[e.To] {
			return fmt.Errorf("secagg: server: site %d sent a misaddressed share %d → %d", m.From, e.From, e.To)
		}
		if _, ok := s.keys[e.To]; !ok {
			return fmt.Errorf("secagg: server: site %d sent a share to site %d outside U1", m.From, e.To)
		}
		if !s.g.adjacent(m.From, e.To) {
			return fmt.Errorf("secagg: server: site %d sent a share to site %d, not its neighbour in the round's graph", m.From, e.To)
		}
		to[e.To] = true
	}
	if s.cfg.Active() {
		// The dealer's signed commitments to what it dealt (commit.go):
		// without a valid list its shares could not be checked by their
		// recipients nor at unmasking, so the dealer is left out of U2.
		if err := s.cfg.checkCommits(m.From, m.Commits, hs); err != nil {
			return fmt.Errorf("%w: secagg: server: %w", ErrExcluded, err)
		}
		// Each entry commits to the ciphertext sent (dleq.go: the
		// evidence a recipient's accusation rests on).
		cts := map[uint32][]byte{m.From: make([]byte, commitLen)}
		for _, e := range m.Shares {
			cts[e.To] = ctHash(e.CT)
		}
		for _, e := range m.Commits.Shares {
			if !bytes.Equal(e.CT, cts[e.To]) {
				return fmt.Errorf("%w: secagg: server: site %d's commitment to its ciphertext for site %d is not that ciphertext's hash", ErrExcluded, m.From, e.To)
			}
		}
		c := m.Commits.clone()
		m.Commits = &c
	} else if m.Commits != nil {
		return fmt.Errorf("secagg: server: site %d sent commitments in the honest-but-curious variant", m.From)
	}
	s.shares[m.From] = m
	return nil
}

// EndShares closes round 1 (its survivors are U2) and returns, for each
// member of U2, the ciphertexts addressed to it from the other members.
func (s *Server) EndShares() (map[uint32]SharesFor, error) {
	if err := s.expect(stepShare, "end of shares"); err != nil {
		return nil, err
	}
	s.step = stepDone
	if len(s.shares) < s.cfg.Threshold {
		return nil, fmt.Errorf("%w: %d sites shared keys, threshold %d", ErrTooFewSurvivors, len(s.shares), s.cfg.Threshold)
	}
	s.u2 = sortedKeys(s.shares)
	out := make(map[uint32]SharesFor, len(s.u2))
	for _, v := range s.u2 {
		out[v] = SharesFor{To: v}
	}
	for _, u := range s.u2 {
		var tree [][][]byte
		cm := s.shares[u].Commits
		if cm != nil {
			tree = merkleLevels(leaves(s.cfg.RoundID, u, *cm))
		}
		for _, e := range s.shares[u].Shares {
			if f, ok := out[e.To]; ok {
				if cm != nil {
					// The dealer's commitment to the recipient's shares and
					// the evidence that it signed it and the ciphertext.
					i, _ := slices.BinarySearchFunc(cm.Shares, e.To, func(c ShareCommit, t uint32) int { return cmpID(c.To, t) })
					c := cm.Shares[i].clone() // checkCommits: one per member of U1
					e.Commit = &c
					e.Path = merklePath(tree, i)
					e.Seed, e.Sig = slices.Clone(cm.Seed), slices.Clone(cm.Sig)
				}
				f.Shares = append(f.Shares, e)
				out[e.To] = f
			}
		}
	}
	s.masked = map[uint32][]uint64{}
	s.rejectedBy = map[uint32][]uint32{}
	s.step = stepMasked
	return out, nil
}

// HandleMasked records a site's masked input.
func (s *Server) HandleMasked(m MaskedInput) error {
	if err := s.expect(stepMasked, "masked input"); err != nil {
		return err
	}
	if !slices.Contains(s.u2, m.From) {
		return fmt.Errorf("secagg: server: masked input from site %d, which is not in U2", m.From)
	}
	if _, dup := s.masked[m.From]; dup {
		return fmt.Errorf("secagg: server: second masked input from site %d", m.From)
	}
	if len(m.Y) != s.cfg.Dim {
		return fmt.Errorf("secagg: server: site %d sent %d entries, dimension %d", m.From, len(m.Y), s.cfg.Dim)
	}
	mask := s.cfg.mask()
	for i, w := range m.Y {
		if w&^mask != 0 {
			return fmt.Errorf("secagg: server: site %d sent entry %d = %d outside ℤ/2^%d", m.From, i, w, s.cfg.Bits)
		}
	}
	seen := map[uint32]bool{}
	for _, v := range m.Rejected {
		if v == m.From || seen[v] || !slices.Contains(s.u2, v) || !s.g.adjacent(m.From, v) {
			return fmt.Errorf("secagg: server: site %d rejects the shares of site %d, which did not send it any (not in U2, itself or repeated)", m.From, v)
		}
		seen[v] = true
	}
	var falsely []uint32
	if s.cfg.Active() {
		// Every refusal must be proven (dleq.go). The server opens the
		// refused ciphertext — the one the dealer signed — with the
		// revealed pair key, as the accuser did: a bad share excludes the
		// dealer (EndMasked); a good one proves the accusation false.
		if len(m.Accusations) != len(m.Rejected) {
			return fmt.Errorf("%w: secagg: server: site %d refuses the shares of sites %v with %d proofs: an accusation without a proof is refused, and so is its masked input", ErrExcluded, m.From, m.Rejected, len(m.Accusations))
		}
		for i, a := range m.Accusations {
			d := m.Rejected[i]
			if a.Dealer != d {
				return fmt.Errorf("%w: secagg: server: site %d's accusation %d is against site %d, its refusal names site %d", ErrExcluded, m.From, i, a.Dealer, d)
			}
			key, err := s.cfg.checkAccusation(m.From, s.keys[m.From].C, s.keys[d].C, a)
			if err != nil {
				return fmt.Errorf("%w: secagg: server: site %d's accusation against site %d is refused, and so is its masked input: %w", ErrExcluded, m.From, d, err)
			}
			var ct []byte
			for _, e := range s.shares[d].Shares {
				if e.To == m.From {
					ct = e.CT
				}
			}
			entry, _ := s.shares[d].Commits.entry(m.From)
			if _, err := s.cfg.openDealt(key, d, m.From, ct, &entry); err == nil {
				falsely = append(falsely, d)
			}
		}
	} else if m.Accusations != nil {
		return fmt.Errorf("secagg: server: site %d sent accusations in the honest-but-curious variant", m.From)
	}
	s.masked[m.From] = slices.Clone(m.Y)
	if len(falsely) > 0 {
		// A proven false accusation: the accuser is expelled (EndMasked);
		// its refusals — of these dealers and any other — are void.
		if s.falseAcc == nil {
			s.falseAcc = map[uint32][]uint32{}
		}
		s.falseAcc[m.From] = falsely
		return nil
	}
	if len(m.Rejected) > 0 {
		s.rejectedBy[m.From] = slices.Sorted(maps.Keys(seen))
	}
	return nil
}

// EndMasked closes round 2 (its survivors are U3) and returns U3: the
// consistency check request in the active variant, the unmask request in
// the honest-but-curious one.
func (s *Server) EndMasked() (UnmaskRequest, error) {
	if err := s.expect(stepMasked, "end of masked inputs"); err != nil {
		return UnmaskRequest{}, err
	}
	s.step = stepDone
	// A site whose shares another site refused is excluded from U3: the
	// accuser holds no share of its secrets and did not mask with it, so
	// it is treated as a site that dropped after sharing (its pairwise
	// masks with the sites that accepted it are removed with its key,
	// reconstructed from their shares). The server cannot tell a rogue
	// sender from a rogue accuser; an accuser can exclude only sites, never
	// add one, and every exclusion shows in Result.Excluded.
	s.excluded = map[uint32][]uint32{}
	for _, u := range sortedKeys(s.rejectedBy) {
		for _, v := range s.rejectedBy[u] {
			s.excluded[v] = append(s.excluded[v], u)
		}
	}
	// A proven false accuser (HandleMasked) is expelled: out of U3, like
	// a site that dropped after sharing; the dealers it accused stay.
	var u3 []uint32
	for _, u := range sortedKeys(s.masked) {
		_, bad := s.excluded[u]
		_, liar := s.falseAcc[u]
		if !bad && !liar {
			u3 = append(u3, u)
		}
	}
	if len(u3) < s.cfg.Threshold {
		return UnmaskRequest{}, fmt.Errorf("%w: %d masked inputs, %d sites excluded for shares others refused (%v), %d expelled for false accusations (%v), threshold %d", ErrTooFewSurvivors, len(s.masked), len(s.excluded), sortedKeys(s.excluded), len(s.falseAcc), sortedKeys(s.falseAcc), s.cfg.Threshold)
	}
	s.u3 = u3
	if s.cfg.Active() {
		s.checks = map[uint32]ConsistencySig{}
		s.step = stepCheck
	} else {
		s.u4 = s.u3
		s.unmask = map[uint32]UnmaskShares{}
		s.step = stepUnmask
	}
	return UnmaskRequest{Survivors: slices.Clone(s.u3)}, nil
}

// HandleCheck (active variant) records a survivor's consistency signature:
// it must verify on the U3 this server sent, under the site's roster key.
func (s *Server) HandleCheck(m ConsistencySig) error {
	if err := s.expect(stepCheck, "consistency signature"); err != nil {
		return err
	}
	if !slices.Contains(s.u3, m.From) {
		return fmt.Errorf("secagg: server: consistency signature from site %d, which is not in U3", m.From)
	}
	if _, dup := s.checks[m.From]; dup {
		return fmt.Errorf("secagg: server: second consistency signature from site %d", m.From)
	}
	if !verifySig(s.cfg.Roster[m.From], checkSigned(s.cfg.RoundID, s.u3), m.Sig) {
		return fmt.Errorf("secagg: server: site %d's consistency signature is not on the survivor set %v", m.From, s.u3)
	}
	s.checks[m.From] = ConsistencySig{From: m.From, Sig: slices.Clone(m.Sig)}
	return nil
}

// EndCheck (active variant) closes round 3: with ≥ t signatures (their
// signers are U4) it returns them for every site — the sites' unmask
// request — and awaits the unmask shares of U4.
func (s *Server) EndCheck() (ConsistencySigs, error) {
	if err := s.expect(stepCheck, "end of consistency check"); err != nil {
		return ConsistencySigs{}, err
	}
	s.step = stepDone
	if len(s.checks) < s.cfg.Threshold {
		return ConsistencySigs{}, fmt.Errorf("%w: %d consistency signatures, threshold %d", ErrTooFewSurvivors, len(s.checks), s.cfg.Threshold)
	}
	var out ConsistencySigs
	s.u4 = sortedKeys(s.checks)
	for _, id := range s.u4 {
		out.Sigs = append(out.Sigs, s.checks[id])
	}
	s.unmask = map[uint32]UnmaskShares{}
	s.step = stepUnmask
	return out, nil
}

// HandleUnmask records a survivor's shares (a member of U4 in the active
// variant, of U3 otherwise): exactly a key share for every site of
// U2 \ U3 and a seed share for every site of U3.
func (s *Server) HandleUnmask(m UnmaskShares) error {
	if err := s.expect(stepUnmask, "unmask shares"); err != nil {
		return err
	}
	if !slices.Contains(s.u4, m.From) {
		return fmt.Errorf("secagg: server: unmask shares from site %d, which is not among the sites asked (%v)", m.From, s.u4)
	}
	if _, dup := s.unmask[m.From]; dup {
		return fmt.Errorf("secagg: server: second unmask message from site %d", m.From)
	}
	if _, dup := s.ignored[m.From]; dup {
		return fmt.Errorf("secagg: server: second unmask message from site %d", m.From)
	}
	rej := s.rejectedBy[m.From]
	want := 0 // the members of U2 whose shares it holds: its neighbours (all, in the complete graph) less those it refused
	for _, v := range s.u2 {
		if s.g.adjacent(m.From, v) && !slices.Contains(rej, v) {
			want++
		}
	}
	if len(m.KeyOf)+len(m.SeedOf) != want {
		return fmt.Errorf("secagg: server: site %d sent %d shares, want %d", m.From, len(m.KeyOf)+len(m.SeedOf), want)
	}
	for v, k := range m.PairOf {
		if _, ok := m.KeyOf[v]; !ok || len(k) != 32 {
			return fmt.Errorf("secagg: server: site %d sent a pairwise key for site %d without its key share, or of %d bytes", m.From, v, len(k))
		}
	}
	if len(m.Reveal) > 0 {
		switch {
		case len(m.Reveal) != RevealLen:
			return fmt.Errorf("secagg: server: site %d revealed a secret of %d bytes, want %d", m.From, len(m.Reveal), RevealLen)
		case !s.cfg.Active() || s.cfg.Degree > 0 || len(s.u3) != len(s.cfg.Sites):
			return fmt.Errorf("secagg: server: site %d revealed its secret although not every site is in the survivor set (%d of %d) or the variant is not the active complete graph", m.From, len(s.u3), len(s.cfg.Sites))
		}
	}
	for _, v := range s.u2 {
		if slices.Contains(rej, v) || !s.g.adjacent(m.From, v) {
			continue // it holds no share of v's secrets
		}
		_, k := m.KeyOf[v]
		sh, sd := m.SeedOf[v]
		if slices.Contains(s.u3, v) {
			if !sd || k || sh.X != m.From {
				return fmt.Errorf("secagg: server: site %d must send its share of survivor %d's seed (only)", m.From, v)
			}
		} else if sk := m.KeyOf[v]; !k || sd || sk.X != m.From {
			return fmt.Errorf("secagg: server: site %d must send its share of dropped site %d's key (only)", m.From, v)
		}
	}
	if s.cfg.Active() {
		// Every share must be the one its dealer committed to for this
		// responder (commit.go): a responder returning another is
		// ignored — none of its shares or pairwise keys is used.
		for _, v := range sortedKeys(m.SeedOf) {
			if !s.cfg.shareMatches(v, s.shares[v].Commits, m.SeedOf[v], true) {
				return s.ignore(m.From, IgnoredShare{Dealer: v, Of: "seed"})
			}
		}
		for _, v := range sortedKeys(m.KeyOf) {
			if !s.cfg.shareMatches(v, s.shares[v].Commits, m.KeyOf[v], false) {
				return s.ignore(m.From, IgnoredShare{Dealer: v, Of: "key"})
			}
		}
	}
	s.unmask[m.From] = m
	return nil
}

// IgnoredShare says why a site's answer was ignored: its share of
// Dealer's Of ("seed" or "key") does not match Dealer's signed
// commitment to the share dealt to it (in its answer to an ExpelRequest
// when Expel).
type IgnoredShare struct {
	Dealer uint32
	Of     string
	Expel  bool
}

func (g IgnoredShare) String() string {
	return fmt.Sprintf("its share of site %d's %s does not match site %d's signed commitment", g.Dealer, g.Of, g.Dealer)
}

// ignore records that from's answer is not used, and why.
func (s *Server) ignore(from uint32, why IgnoredShare) error {
	if s.ignored == nil {
		s.ignored = map[uint32]IgnoredShare{}
	}
	s.ignored[from] = why
	return fmt.Errorf("%w: secagg: server: site %d's answer is ignored: %v", ErrExcluded, from, why)
}

// Result is the output of a completed round.
type Result struct {
	// Sum is Σ_{u∈Included} x_u mod 2^b.
	Sum []uint64
	// Included is U3 less the expelled cheaters: the sites whose inputs
	// are in the sum.
	Included []uint32
	// Dropped are the sites that shared keys but whose inputs are not in
	// the sum (U2 \ U3, and the expelled cheaters; their pairwise masks
	// were removed).
	Dropped []uint32
	// Excluded are the members of Dropped whose shares another site
	// refused (garbage, replayed or altered ciphertexts, or shares that do
	// not match their signed commitments), with the sites that refused
	// them: dropped from the round instead of aborting it.
	Excluded map[uint32][]uint32
	// FalseAccusers (active variant) are the sites expelled for a false
	// accusation, with the dealers they accused: each revealed the pair's
	// key with a valid proof (dleq.go), and the dealer's signed ciphertext
	// opened under it to the shares the dealer committed to. They are in
	// Dropped (their inputs are not in the sum); the accused stay in. Nil
	// when none.
	FalseAccusers map[uint32][]uint32
	// Cheated are the survivors expelled on a proof that they dealt seed
	// shares inconsistent with their signed commitments (commit.go): their
	// inputs are not in the sum. Nil when none.
	Cheated []uint32
	// Ignored are the sites whose unmask answers held a share that does
	// not match its dealer's signed commitment, with the reason: their
	// answers were not used (their own inputs, if they survived, are in
	// the sum). Nil when none.
	Ignored map[uint32]IgnoredShare
	// Revealed are the secrets the included sites revealed with their
	// used unmask answers (Client.RevealWhenAll: every site was in the
	// survivor set), by site; nil when none.
	Revealed map[uint32][]byte
	// Expel, when not nil, means the round is not over: survivors dealt
	// inconsistent seed shares (Cheated). The request goes to the sites
	// that answered the unmasking (ExpelAsked); their answers are fed to
	// HandleExpel, and EndExpel returns the result. Sum is nil meanwhile.
	Expel *ExpelRequest
}

// EndUnmask closes the unmasking round: with ≥ t unmask answers (whose
// shares all match their dealers' signed commitments: HandleUnmask) it
// reconstructs each survivor's self-mask seed, checked against its
// commitment, and each dropped site's mask key where a survivor's pairwise
// key with it is missing (checked against its advertised public key), and
// returns the sum of U3's inputs. A survivor whose verified seed shares do
// not reconstruct its committed seed is a proven cheater (commit.go): the
// result then carries an ExpelRequest instead of a sum, and the round
// goes on with HandleExpel and EndExpel.
func (s *Server) EndUnmask() (Result, error) {
	if err := s.expect(stepUnmask, "end of unmasking"); err != nil {
		return Result{}, err
	}
	s.step = stepDone
	if len(s.unmask) < s.cfg.Threshold {
		return Result{}, fmt.Errorf("%w: %d unmask answers, threshold %d%s", ErrTooFewSurvivors, len(s.unmask), s.cfg.Threshold, s.ignoredNote())
	}
	s.seeds = map[uint32][]byte{}
	var proofs []CheatProof
	for _, v := range s.u3 {
		hs, lam, err := s.holders(s.unmask, v)
		if err != nil {
			return Result{}, err
		}
		shares := make([]Share, 0, len(hs))
		for _, r := range hs {
			sh := s.unmask[r].SeedOf[v]
			if sh.X != r {
				return Result{}, fmt.Errorf("secagg: server: site %d's share of site %d is labelled for point %d", r, v, sh.X)
			}
			shares = append(shares, sh)
		}
		secret, err := combineWith(lam, shares)
		if s.cfg.Active() && (err != nil || !bytes.Equal(seedCommit(s.cfg.RoundID, v, secret), s.shares[v].Commits.Seed)) {
			// t shares that match v's signed commitments and are not of
			// its committed seed: v dealt inconsistent shares.
			p := CheatProof{Dealer: v, Commits: s.shares[v].Commits.clone()}
			for _, sh := range shares {
				p.Shares = append(p.Shares, Share{X: sh.X, Y: slices.Clone(sh.Y), Nonce: slices.Clone(sh.Nonce)})
			}
			proofs = append(proofs, p)
			continue
		}
		if err != nil {
			return Result{}, fmt.Errorf("secagg: server: reconstructing site %d's secret: %w", v, err)
		}
		s.seeds[v] = secret
	}
	if len(proofs) == 0 {
		return s.finish(nil)
	}
	var cheats []uint32
	for _, p := range proofs {
		cheats = append(cheats, p.Dealer)
	}
	if left := len(s.u3) - len(cheats); left < s.cfg.Threshold {
		return Result{}, fmt.Errorf("%w: sites %v dealt seed shares inconsistent with their signed commitments (proven); without them %d survivors are left, threshold %d", ErrTooFewSurvivors, cheats, left, s.cfg.Threshold)
	}
	s.cheats = cheats
	s.asked = nil
	for _, r := range sortedKeys(s.unmask) {
		if !slices.Contains(cheats, r) {
			s.asked = append(s.asked, r)
		}
	}
	s.expel = map[uint32]UnmaskShares{}
	s.step = stepExpel
	return Result{Cheated: slices.Clone(cheats), Ignored: s.ignoredCopy(), Expel: &ExpelRequest{Proofs: proofs}}, nil
}

// ExpelAsked returns the sites an ExpelRequest is for: those whose unmask
// answers were used, less the cheaters.
func (s *Server) ExpelAsked() []uint32 { return slices.Clone(s.asked) }

// HandleExpel records a site's answer to the ExpelRequest: for every
// proven cheater j exactly its share of j's mask key (matching j's signed
// commitment) and its pairwise key with j. An answer with a share that
// does not match is ignored (ErrExcluded).
func (s *Server) HandleExpel(m UnmaskShares) error {
	if err := s.expect(stepExpel, "expel answer"); err != nil {
		return err
	}
	if !slices.Contains(s.asked, m.From) {
		return fmt.Errorf("secagg: server: expel answer from site %d, which was not asked (%v)", m.From, s.asked)
	}
	if _, dup := s.expel[m.From]; dup {
		return fmt.Errorf("secagg: server: second expel answer from site %d", m.From)
	}
	if _, dup := s.ignored[m.From]; dup {
		return fmt.Errorf("secagg: server: second expel answer from site %d", m.From)
	}
	var near []uint32 // the cheaters it holds shares of: all of them, or its neighbours among them
	for _, j := range s.cheats {
		if s.g.adjacent(m.From, j) {
			near = append(near, j)
		}
	}
	if len(m.Reveal) != 0 {
		return fmt.Errorf("secagg: server: site %d's expel answer reveals a secret (only an unmask answer may)", m.From)
	}
	if len(m.SeedOf) != 0 || len(m.KeyOf) != len(near) || len(m.PairOf) != len(near) {
		return fmt.Errorf("secagg: server: site %d's expel answer holds %d seed shares, %d key shares and %d pairwise keys, want 0, %d and %d", m.From, len(m.SeedOf), len(m.KeyOf), len(m.PairOf), len(near), len(near))
	}
	for _, j := range near {
		sh, ok := m.KeyOf[j]
		if k := m.PairOf[j]; !ok || len(k) != 32 || sh.X != m.From {
			return fmt.Errorf("secagg: server: site %d's expel answer lacks its share of site %d's key or their pairwise key", m.From, j)
		}
		if !s.cfg.shareMatches(j, s.shares[j].Commits, sh, false) {
			return s.ignore(m.From, IgnoredShare{Dealer: j, Of: "key", Expel: true})
		}
	}
	s.expel[m.From] = m
	return nil
}

// EndExpel closes the expel step: the cheaters' inputs leave the sum, and
// their pairwise masks are removed from the other survivors' inputs with
// the pairwise keys the survivors revealed (or, for a survivor that did
// not answer, from the cheater's key reconstructed from t verified key
// shares).
func (s *Server) EndExpel() (Result, error) {
	if err := s.expect(stepExpel, "end of expel"); err != nil {
		return Result{}, err
	}
	s.step = stepDone
	return s.finish(s.cheats)
}

// holders returns t (ℓ in the sparse variant) sites of answers that hold
// a share of v's secrets (they are its neighbours, or v itself, and did
// not refuse its shares) and their interpolation weights.
func (s *Server) holders(answers map[uint32]UnmaskShares, v uint32) ([]uint32, []uint64, error) {
	var hs []uint32
	th := s.cfg.shareThreshold()
	for _, r := range sortedKeys(answers) {
		if s.g.adjacent(r, v) && !slices.Contains(s.rejectedBy[r], v) {
			hs = append(hs, r)
		}
		if len(hs) == th {
			break
		}
	}
	if len(hs) < th {
		return nil, nil, fmt.Errorf("%w: %d answers hold a share of site %d's secrets, threshold %d (the others refused its shares, did not answer, were ignored or are not its neighbours)%s", ErrTooFewSurvivors, len(hs), v, th, s.ignoredNote())
	}
	key := fmt.Sprint(hs)
	if lam, ok := s.lams[key]; ok {
		return hs, lam, nil
	}
	lam, err := lagrangeAtZero(hs)
	if s.lams == nil {
		s.lams = map[string][]uint64{}
	}
	s.lams[key] = lam
	return hs, lam, err
}

// finish returns the sum of the inputs of U3 less cheats: every such
// input's self mask is removed with its reconstructed seed (s.seeds), and
// its pairwise masks with the dropped sites (U2 \ U3, then cheats) with
// the pairwise keys revealed (unmask answers for the first, expel answers
// for the second) or the dropped site's reconstructed key.
func (s *Server) finish(cheats []uint32) (Result, error) {
	var incl []uint32
	for _, u := range s.u3 {
		if !slices.Contains(cheats, u) {
			incl = append(incl, u)
		}
	}
	sum := make([]uint64, s.cfg.Dim)
	for _, u := range incl {
		for i, w := range s.masked[u] {
			sum[i] += w
		}
		k, err := selfKey(s.seeds[u], s.cfg.RoundID)
		if err != nil {
			return Result{}, err
		}
		addMask(sum, k, -1)
	}
	var dropped []uint32
	removePairs := func(v uint32, answers map[uint32]UnmaskShares) error {
		// The pairwise masks v shares with the included sites that
		// accepted it are removed with the pairwise keys they revealed,
		// or, for one that revealed none (it did not answer), from v's
		// key reconstructed from t verified holders' shares.
		var missing []uint32
		for _, u := range incl {
			if !s.g.adjacent(u, v) || slices.Contains(s.rejectedBy[u], v) {
				continue // u is not v's neighbour, or refused v's shares: it did not mask with it
			}
			k, ok := answers[u].PairOf[v]
			if !ok {
				missing = append(missing, u)
				continue
			}
			addMask(sum, k, -pairSign(u, v))
		}
		dropped = append(dropped, v)
		if len(missing) == 0 {
			return nil
		}
		hs, lam, err := s.holders(answers, v)
		if err != nil {
			return fmt.Errorf("%w (and survivors %v revealed no pairwise key with it)", err, missing)
		}
		priv, err := reconstructKey(v, hs, lam, answers, s.keys[v].S)
		if err != nil {
			if s.cfg.Active() {
				// Every share used matches v's signed commitments: v dealt
				// them inconsistently. It is out of the sum already, but
				// the masks of the silent survivors with it cannot be
				// removed without its key.
				err = fmt.Errorf("%w: site %d dealt key shares inconsistent with its signed commitments and its advertised key (proven), and survivors %v revealed no pairwise key with it: their masks with it cannot be removed", ErrTooFewSurvivors, v, missing)
			}
			return err
		}
		for _, u := range missing {
			k, err := agree(priv, s.keys[u].S, s.cfg.RoundID, labelMask)
			if err != nil {
				return err
			}
			// y_u holds pairSign(u, v)·PRG(s_uv): remove it.
			addMask(sum, k, -pairSign(u, v))
		}
		return nil
	}
	for _, v := range s.u2 {
		if slices.Contains(s.u3, v) {
			continue
		}
		if err := removePairs(v, s.unmask); err != nil {
			return Result{}, err
		}
	}
	for _, j := range cheats {
		if err := removePairs(j, s.expel); err != nil {
			return Result{}, err
		}
	}
	m := s.cfg.mask()
	for i := range sum {
		sum[i] &= m
	}
	var excluded map[uint32][]uint32
	if len(s.excluded) > 0 {
		excluded = s.excluded
	}
	var liars map[uint32][]uint32
	if len(s.falseAcc) > 0 {
		liars = maps.Clone(s.falseAcc)
	}
	var revealed map[uint32][]byte
	for _, u := range incl {
		if r := s.unmask[u].Reveal; len(r) > 0 {
			if revealed == nil {
				revealed = map[uint32][]byte{}
			}
			revealed[u] = bytes.Clone(r)
		}
	}
	return Result{Sum: sum, Included: incl, Dropped: dropped, Excluded: excluded, FalseAccusers: liars, Cheated: slices.Clone(cheats), Ignored: s.ignoredCopy(), Revealed: revealed}, nil
}

func (s *Server) ignoredCopy() map[uint32]IgnoredShare {
	if len(s.ignored) == 0 {
		return nil
	}
	return maps.Clone(s.ignored)
}

func (s *Server) ignoredNote() string {
	if len(s.ignored) == 0 {
		return ""
	}
	return fmt.Sprintf("; answers ignored (shares not matching their dealers' commitments): %v", sortedKeys(s.ignored))
}

// reconstructKey returns dropped site v's mask key from the key shares of
// holders hs (interpolation weights lam), checked against its advertised
// public key.
func reconstructKey(v uint32, hs []uint32, lam []uint64, unmask map[uint32]UnmaskShares, pub []byte) (*ecdh.PrivateKey, error) {
	shares := make([]Share, 0, len(hs))
	for i, r := range hs {
		sh := unmask[r].KeyOf[v]
		if sh.X != hs[i] {
			return nil, fmt.Errorf("secagg: server: site %d's share of site %d is labelled for point %d", hs[i], v, sh.X)
		}
		shares = append(shares, sh)
	}
	secret, err := combineWith(lam, shares)
	if err != nil {
		return nil, fmt.Errorf("secagg: server: reconstructing site %d's key: %w", v, err)
	}
	priv, err := ecdh.X25519().NewPrivateKey(secret)
	if err != nil {
		return nil, fmt.Errorf("secagg: server: site %d's reconstructed key: %w", v, err)
	}
	if !bytes.Equal(priv.PublicKey().Bytes(), pub) {
		return nil, fmt.Errorf("secagg: server: site %d's reconstructed key does not match its advertised key (inconsistent shares)", v)
	}
	return priv, nil
}

func sortedKeys[V any](m map[uint32]V) []uint32 {
	ks := make([]uint32, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
