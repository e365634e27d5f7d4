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
	shares map[uint32]ShareKeys
	u2     []uint32
	masked map[uint32][]uint64
	// rejectedBy[u] are the sites whose shares u refused (its masked
	// input's Rejected): u holds no share of their secrets and did not
	// mask with them.
	rejectedBy map[uint32][]uint32
	excluded   map[uint32][]uint32 // accused site → its accusers
	u3         []uint32
	checks     map[uint32]ConsistencySig
	u4         []uint32 // the sites whose unmask shares are awaited
	unmask     map[uint32]UnmaskShares
}

// NewServer returns the server of the round cfg.
func NewServer(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, keys: map[uint32]AdvertiseKeys{}}, nil
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
	for _, k := range [][]byte{m.C, m.S} {
		if err := checkPublicKey(k); err != nil {
			return fmt.Errorf("secagg: server: site %d advertised a bad key (excluded): %w", m.From, err)
		}
	}
	if s.cfg.Active() && !verifySig(s.cfg.Roster[m.From], advertSigned(s.cfg.RoundID, m.From, m.C, m.S), m.Sig) {
		return fmt.Errorf("secagg: server: site %d's advertisement is not signed by its roster key for this round (unsigned, forged or replayed): excluded", m.From)
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
	s.shares = map[uint32]ShareKeys{}
	s.step = stepShare
	return l, nil
}

// HandleShares records a site's encrypted shares: one per other member of
// U1, addressed correctly.
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
	if len(m.Shares) != len(s.keys)-1 {
		return fmt.Errorf("secagg: server: site %d sent %d shares, want %d", m.From, len(m.Shares), len(s.keys)-1)
	}
	to := map[uint32]bool{}
	for _, e := range m.Shares {
		if e.From != m.From || e.To == m.From || to[e.To] {
			return fmt.Errorf("secagg: server: site %d sent a misaddressed share %d → %d", m.From, e.From, e.To)
		}
		if _, ok := s.keys[e.To]; !ok {
			return fmt.Errorf("secagg: server: site %d sent a share to site %d outside U1", m.From, e.To)
		}
		to[e.To] = true
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
		for _, e := range s.shares[u].Shares {
			if f, ok := out[e.To]; ok {
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
		if v == m.From || seen[v] || !slices.Contains(s.u2, v) {
			return fmt.Errorf("secagg: server: site %d rejects the shares of site %d, which did not send it any (not in U2, itself or repeated)", m.From, v)
		}
		seen[v] = true
	}
	s.masked[m.From] = slices.Clone(m.Y)
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
	var u3 []uint32
	for _, u := range sortedKeys(s.masked) {
		if _, bad := s.excluded[u]; !bad {
			u3 = append(u3, u)
		}
	}
	if len(u3) < s.cfg.Threshold {
		return UnmaskRequest{}, fmt.Errorf("%w: %d masked inputs, %d sites excluded for shares others refused (%v), threshold %d", ErrTooFewSurvivors, len(s.masked), len(s.excluded), sortedKeys(s.excluded), s.cfg.Threshold)
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
	rej := s.rejectedBy[m.From]
	if len(m.KeyOf)+len(m.SeedOf) != len(s.u2)-len(rej) {
		return fmt.Errorf("secagg: server: site %d sent %d shares, want %d", m.From, len(m.KeyOf)+len(m.SeedOf), len(s.u2)-len(rej))
	}
	for v, k := range m.PairOf {
		if _, ok := m.KeyOf[v]; !ok || len(k) != 32 {
			return fmt.Errorf("secagg: server: site %d sent a pairwise key for site %d without its key share, or of %d bytes", m.From, v, len(k))
		}
	}
	for _, v := range s.u2 {
		if slices.Contains(rej, v) {
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
	s.unmask[m.From] = m
	return nil
}

// Result is the output of a completed round.
type Result struct {
	// Sum is Σ_{u∈U3} x_u mod 2^b.
	Sum []uint64
	// Included is U3: the sites whose inputs are in the sum.
	Included []uint32
	// Dropped is U2 \ U3: sites that shared keys but whose inputs are not
	// in the sum (their pairwise masks were removed).
	Dropped []uint32
	// Excluded are the members of Dropped whose shares another site
	// refused (garbage, replayed or altered ciphertexts), with the sites
	// that refused them: dropped from the round instead of aborting it.
	Excluded map[uint32][]uint32
}

// EndUnmask closes the unmasking round: with ≥ t unmask answers it reconstructs each
// dropped site's mask key (checked against its advertised public key) and
// each survivor's self-mask seed, and returns the sum of U3's inputs.
func (s *Server) EndUnmask() (Result, error) {
	if err := s.expect(stepUnmask, "end of unmasking"); err != nil {
		return Result{}, err
	}
	s.step = stepDone
	if len(s.unmask) < s.cfg.Threshold {
		return Result{}, fmt.Errorf("%w: %d unmask answers, threshold %d", ErrTooFewSurvivors, len(s.unmask), s.cfg.Threshold)
	}
	responders := sortedKeys(s.unmask)
	// Interpolation weights by set of share holders: every responder for a
	// survivor's seed (no one refused a member of U3), the responders that
	// accepted an excluded site's shares for its key.
	lams := map[string][]uint64{}
	holders := func(v uint32) ([]uint32, []uint64, error) {
		var hs []uint32
		for _, r := range responders {
			if !slices.Contains(s.rejectedBy[r], v) {
				hs = append(hs, r)
			}
			if len(hs) == s.cfg.Threshold {
				break
			}
		}
		if len(hs) < s.cfg.Threshold {
			return nil, nil, fmt.Errorf("%w: %d unmask answers hold a share of site %d's secrets, threshold %d (the others refused its shares)", ErrTooFewSurvivors, len(hs), v, s.cfg.Threshold)
		}
		key := fmt.Sprint(hs)
		if lam, ok := lams[key]; ok {
			return hs, lam, nil
		}
		lam, err := lagrangeAtZero(hs)
		lams[key] = lam
		return hs, lam, err
	}
	sum := make([]uint64, s.cfg.Dim)
	for _, u := range s.u3 {
		for i, w := range s.masked[u] {
			sum[i] += w
		}
	}
	var dropped []uint32
	for _, v := range s.u2 {
		inU3 := slices.Contains(s.u3, v)
		hs, lam, err := holders(v)
		if !inU3 {
			// A site dropped after sharing: the pairwise masks it shares
			// with the survivors that accepted it are removed with the
			// pairwise keys the survivors revealed, or, for a survivor that
			// revealed none (it did not answer the unmask step), from v's
			// key reconstructed from t holders' shares.
			var missing []uint32
			for _, u := range s.u3 {
				if slices.Contains(s.rejectedBy[u], v) {
					continue // u refused v's shares and did not mask with it
				}
				k, ok := s.unmask[u].PairOf[v]
				if !ok {
					missing = append(missing, u)
					continue
				}
				addMask(sum, k, -pairSign(u, v))
			}
			dropped = append(dropped, v)
			if len(missing) == 0 {
				continue
			}
			if err != nil {
				return Result{}, fmt.Errorf("%w (and survivors %v revealed no pairwise key with it)", err, missing)
			}
			priv, err := reconstructKey(v, hs, lam, s.unmask, s.keys[v].S)
			if err != nil {
				return Result{}, err
			}
			for _, u := range missing {
				k, err := agree(priv, s.keys[u].S, s.cfg.RoundID, labelMask)
				if err != nil {
					return Result{}, err
				}
				// y_u holds pairSign(u, v)·PRG(s_uv): remove it.
				addMask(sum, k, -pairSign(u, v))
			}
			continue
		}
		if err != nil {
			return Result{}, err
		}
		shares := make([]Share, 0, len(hs))
		for _, r := range hs {
			shares = append(shares, s.unmask[r].SeedOf[v])
		}
		for i, sh := range shares {
			if sh.X != hs[i] {
				return Result{}, fmt.Errorf("secagg: server: site %d's share of site %d is labelled for point %d", hs[i], v, sh.X)
			}
		}
		secret, err := combineWith(lam, shares)
		if err != nil {
			return Result{}, fmt.Errorf("secagg: server: reconstructing site %d's secret: %w", v, err)
		}
		k, err := selfKey(secret, s.cfg.RoundID)
		if err != nil {
			return Result{}, err
		}
		addMask(sum, k, -1)
	}
	m := s.cfg.mask()
	for i := range sum {
		sum[i] &= m
	}
	var excluded map[uint32][]uint32
	if len(s.excluded) > 0 {
		excluded = s.excluded
	}
	return Result{Sum: sum, Included: slices.Clone(s.u3), Dropped: dropped, Excluded: excluded}, nil
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
