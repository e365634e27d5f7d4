package protocol

import (
	"bytes"
	"fmt"

	"filippo.io/edwards25519"
)

// Secure aggregation messages (package secagg; one round per release of a
// job run with secure aggregation). Their kinds are numbered from 32, apart
// from the main list, so that kinds appended there by concurrent work
// (11 and up) never collide; like the main list they are frozen once
// released (TestSecAggKindsPinned) and ONLY APPENDED TO.
//
// Sites are named on the secagg wire by their 1-based index in the job's
// JobAnnounce.Sites (secagg needs non-zero integer ids: they are its
// Shamir evaluation points).
const (
	KindSecAggKeys          Kind = 32 // site → coordinator: round 0, two X25519 public keys
	KindSecAggKeyList       Kind = 33 // coordinator → sites: the keys of U1 and the round id
	KindSecAggShares        Kind = 34 // site → coordinator: round 1, encrypted shares for each peer
	KindSecAggSharesFor     Kind = 35 // coordinator → one site: the ciphertexts addressed to it (U2)
	KindSecAggMasked        Kind = 36 // site → coordinator: round 2, the masked encoded release
	KindSecAggUnmaskRequest Kind = 37 // coordinator → sites: the survivors U3
	KindSecAggUnmask        Kind = 38 // site → coordinator: round 3, key shares of dropped sites, seed shares of survivors
	// The active variant (secagg's default; [BIK+17] Fig. 5): after
	// KindSecAggUnmaskRequest (U3) each site signs U3, and the coordinator
	// forwards the signatures; a site sends KindSecAggUnmask only after
	// checking them.
	KindSecAggCheck     Kind = 39 // site → coordinator: its Ed25519 signature on (round, U3)
	KindSecAggCheckSigs Kind = 40 // coordinator → sites: the signatures of U4 ⊆ U3 (the active variant's unmask request)
	// Shares that decrypt but are inconsistent (secagg/commit.go): after
	// the unmasking, proofs that survivors dealt seed shares inconsistent
	// with their signed commitments; each site that answered checks them
	// and answers with a second KindSecAggUnmask holding, for each proven
	// cheater, its key share and their pairwise key.
	KindSecAggExpel Kind = 41 // coordinator → sites: proofs against cheating dealers
)

func init() {
	for k, n := range map[Kind]string{
		KindSecAggKeys: "secagg-keys", KindSecAggKeyList: "secagg-key-list", KindSecAggShares: "secagg-shares",
		KindSecAggSharesFor: "secagg-shares-for", KindSecAggMasked: "secagg-masked",
		KindSecAggUnmaskRequest: "secagg-unmask-request", KindSecAggUnmask: "secagg-unmask",
		KindSecAggCheck: "secagg-check", KindSecAggCheckSigs: "secagg-check-sigs",
		KindSecAggExpel: "secagg-expel",
	} {
		kindNames[k] = n
	}
}

// newSecAggMessage returns an empty secure aggregation message of kind k,
// or nil.
func newSecAggMessage(k Kind) Message {
	switch k {
	case KindSecAggKeys:
		return &SecAggKeys{}
	case KindSecAggKeyList:
		return &SecAggKeyList{}
	case KindSecAggShares:
		return &SecAggShares{}
	case KindSecAggSharesFor:
		return &SecAggSharesFor{}
	case KindSecAggMasked:
		return &SecAggMasked{}
	case KindSecAggUnmaskRequest:
		return &SecAggUnmaskRequest{}
	case KindSecAggUnmask:
		return &SecAggUnmask{}
	case KindSecAggCheck:
		return &SecAggCheck{}
	case KindSecAggCheckSigs:
		return &SecAggCheckSigs{}
	case KindSecAggExpel:
		return &SecAggExpel{}
	}
	return nil
}

// Sizes fixed by package secagg.
const (
	secAggKeyLen   = 32  // X25519 public key, round id
	secAggShareLen = 40  // a Shamir share: five elements of GF(2^61 − 1)
	secAggCTLen    = 108 // AES-GCM nonce (12) + two shares (80) + tag (16)
	// secAggCTLenActive: the active variant's plaintext also holds the
	// dealer's 32-byte commitment nonce for the recipient.
	secAggCTLenActive = secAggCTLen + secAggNonceLen
	secAggNonceLen    = 32 // a dealer's commitment nonce
	secAggCommitLen   = 32 // a SHA-256 commitment
	secAggSigLen      = 64 // Ed25519 signature
	// MaxSecAggDim bounds the encoded vector: a model of MaxParams
	// parameters padded to a power of two.
	MaxSecAggDim = 2 * MaxParams
)

// SecAggKey is one site's advertised key pair, with its signature in the
// active variant (absent in the honest-but-curious one, whose encoding is
// unchanged).
type SecAggKey struct {
	ID  uint32 `msgpack:"id"`
	C   []byte `msgpack:"c"`
	S   []byte `msgpack:"s"`
	Sig []byte `msgpack:"sig,omitempty"`
}

// SecAggSig is one site's consistency signature (site ID's signature on
// the round's U3).
type SecAggSig struct {
	ID  uint32 `msgpack:"id"`
	Sig []byte `msgpack:"sig"`
}

// SecAggCipher is one encrypted share pair; Peer is the recipient in
// SecAggShares and the sender in SecAggSharesFor. In SecAggSharesFor of
// the active variant, Commit is the sender's signed commitment to the
// recipient's two shares (key share's ‖ seed share's, 64 bytes), taken
// from the sender's SecAggCommits; absent elsewhere.
//
// With Commit come the evidence that the sender signed it and this
// ciphertext (secagg/commit.go): Path, the Merkle path of the sender's
// entry for the recipient (1 to 10 hashes of 32 bytes, concatenated),
// Seed, the sender's seed commitment, and Sig, its signature on the
// list's root.
type SecAggCipher struct {
	Peer   uint32 `msgpack:"peer"`
	CT     []byte `msgpack:"ct"`
	Commit []byte `msgpack:"commit,omitempty"`
	Path   []byte `msgpack:"path,omitempty"`
	Seed   []byte `msgpack:"seed,omitempty"`
	Sig    []byte `msgpack:"sig,omitempty"`
}

// SecAggShare is one revealed Shamir share of site ID's secret; Nonce is
// the dealer's commitment nonce for it (active variant; absent for a
// pairwise key).
type SecAggShare struct {
	ID    uint32 `msgpack:"id"`
	Y     []byte `msgpack:"y"`
	Nonce []byte `msgpack:"nonce,omitempty"`
}

// SecAggCommit is a dealer's commitment to the shares it dealt to site ID
// and to the ciphertext that carries them (CT: its SHA-256; 32 zero bytes
// in the dealer's own entry).
type SecAggCommit struct {
	ID   uint32 `msgpack:"id"`
	Key  []byte `msgpack:"key"`
	Seed []byte `msgpack:"seed"`
	CT   []byte `msgpack:"ct"`
}

// SecAggAccusation proves a site's refusal of dealer ID's shares
// (secagg.Accusation): Key is the Diffie–Hellman value of the two sites'
// encryption keys (a point of edwards25519's prime-order subgroup), Proof
// the 64-byte Chaum–Pedersen proof of it.
type SecAggAccusation struct {
	ID    uint32 `msgpack:"id"`
	Key   []byte `msgpack:"key"`
	Proof []byte `msgpack:"proof"`
}

// SecAggCommits is a dealer's signed commitment list (secagg.Commitments):
// to its self-mask seed, and to the shares dealt to every member of U1
// (sorted by ID, the dealer included).
type SecAggCommits struct {
	Seed   []byte         `msgpack:"seed"`
	Shares []SecAggCommit `msgpack:"shares"`
	Sig    []byte         `msgpack:"sig"`
}

// SecAggProof proves that site ID dealt seed shares inconsistent with its
// signed commitments (secagg.CheatProof): its list and t shares (ID = the
// holder) that match it.
type SecAggProof struct {
	ID      uint32        `msgpack:"id"`
	Commits SecAggCommits `msgpack:"commits"`
	Shares  []SecAggShare `msgpack:"shares"`
}

// SecAggKeys is secagg round 0 for the release Phase of Job; Sig is the
// site's Ed25519 signature of its keys for this round (active variant).
type SecAggKeys struct {
	Job   string `msgpack:"job"`
	Phase int    `msgpack:"phase"`
	Site  string `msgpack:"site"`
	C     []byte `msgpack:"c"`
	S     []byte `msgpack:"s"`
	Sig   []byte `msgpack:"sig,omitempty"`
}

// SecAggKeyList broadcasts U1's keys and the round's public id.
type SecAggKeyList struct {
	Job   string      `msgpack:"job"`
	Phase int         `msgpack:"phase"`
	Round []byte      `msgpack:"round"`
	Keys  []SecAggKey `msgpack:"keys"`
}

// SecAggShares is secagg round 1; Commits is the site's signed
// commitment list (active variant; absent in the honest-but-curious one,
// whose encoding is unchanged).
type SecAggShares struct {
	Job     string         `msgpack:"job"`
	Phase   int            `msgpack:"phase"`
	Site    string         `msgpack:"site"`
	Shares  []SecAggCipher `msgpack:"shares"`
	Commits *SecAggCommits `msgpack:"commits,omitempty"`
}

// SecAggSharesFor forwards to one site the ciphertexts addressed to it.
type SecAggSharesFor struct {
	Job    string         `msgpack:"job"`
	Phase  int            `msgpack:"phase"`
	Shares []SecAggCipher `msgpack:"shares"`
}

// SecAggMasked is secagg round 2: the masked vector over ℤ/2^Bits, its
// Len entries packed little-endian in ⌈Bits/8⌉ bytes each (PackWords):
// masked entries are uniform, so this is the whole information, and 2 to
// 8 times shorter than msgpack's 9 bytes per uint64.
//
// Rejected names the peers whose forwarded share ciphertexts the site
// refused (they did not authenticate: garbage, replayed or altered): it
// did not mask with them, and the coordinator drops them from the round
// (absent when none: the encoding of a clean round is unchanged).
//
// Accuse (active variant) proves each refusal, in the order of Rejected
// (secagg/dleq.go).
type SecAggMasked struct {
	Job      string             `msgpack:"job"`
	Phase    int                `msgpack:"phase"`
	Site     string             `msgpack:"site"`
	Bits     int                `msgpack:"bits"`
	Len      int                `msgpack:"len"`
	Y        []byte             `msgpack:"y"`
	Rejected []uint32           `msgpack:"rejected,omitempty"`
	Accuse   []SecAggAccusation `msgpack:"accuse,omitempty"`
}

// PackWords packs ws (each < 2^bits, 1 ≤ bits ≤ 64) little-endian in
// ⌈bits/8⌉ bytes per word.
func PackWords(ws []uint64, bits int) []byte {
	w := (bits + 7) / 8
	out := make([]byte, 0, w*len(ws))
	for _, x := range ws {
		for i := 0; i < w; i++ {
			out = append(out, byte(x>>(8*i)))
		}
	}
	return out
}

// UnpackWords inverts PackWords for n words (len(b) must be n·⌈bits/8⌉).
func UnpackWords(b []byte, bits, n int) []uint64 {
	w := (bits + 7) / 8
	out := make([]uint64, n)
	for j := range out {
		var x uint64
		for i := w - 1; i >= 0; i-- {
			x = x<<8 | uint64(b[j*w+i])
		}
		out[j] = x
	}
	return out
}

// SecAggUnmaskRequest names the survivors U3.
type SecAggUnmaskRequest struct {
	Job       string   `msgpack:"job"`
	Phase     int      `msgpack:"phase"`
	Survivors []uint32 `msgpack:"survivors"`
}

// SecAggUnmask is secagg round 3. Pairs holds, for sites of Keys (dropped
// after sharing), the 32-byte pairwise mask key the site derived with
// each (secagg.UnmaskShares.PairOf; absent when none).
type SecAggUnmask struct {
	Job   string        `msgpack:"job"`
	Phase int           `msgpack:"phase"`
	Site  string        `msgpack:"site"`
	Keys  []SecAggShare `msgpack:"keys"`
	Seeds []SecAggShare `msgpack:"seeds"`
	Pairs []SecAggShare `msgpack:"pairs,omitempty"`
	// Reveal is the site's removable noise seed (32 bytes), sent only
	// when the survivor set it signed holds every participant
	// (secagg.UnmaskShares.Reveal); absent otherwise.
	Reveal []byte `msgpack:"reveal,omitempty"`
}

// SecAggCheck is the active variant's round 3: the site's signature on
// the survivor set U3 it received.
type SecAggCheck struct {
	Job   string `msgpack:"job"`
	Phase int    `msgpack:"phase"`
	Site  string `msgpack:"site"`
	Sig   []byte `msgpack:"sig"`
}

// SecAggCheckSigs forwards the consistency signatures of U4 (sorted by
// id): each site checks them against its own U3 before unmasking.
type SecAggCheckSigs struct {
	Job   string      `msgpack:"job"`
	Phase int         `msgpack:"phase"`
	Sigs  []SecAggSig `msgpack:"sigs"`
}

func (*SecAggKeys) Kind() Kind          { return KindSecAggKeys }
func (*SecAggKeyList) Kind() Kind       { return KindSecAggKeyList }
func (*SecAggShares) Kind() Kind        { return KindSecAggShares }
func (*SecAggSharesFor) Kind() Kind     { return KindSecAggSharesFor }
func (*SecAggMasked) Kind() Kind        { return KindSecAggMasked }
func (*SecAggUnmaskRequest) Kind() Kind { return KindSecAggUnmaskRequest }
func (*SecAggUnmask) Kind() Kind        { return KindSecAggUnmask }
func (*SecAggCheck) Kind() Kind         { return KindSecAggCheck }
func (*SecAggCheckSigs) Kind() Kind     { return KindSecAggCheckSigs }
func (*SecAggExpel) Kind() Kind         { return KindSecAggExpel }

var (
	_ Message = (*SecAggKeys)(nil)
	_ Message = (*SecAggKeyList)(nil)
	_ Message = (*SecAggShares)(nil)
	_ Message = (*SecAggSharesFor)(nil)
	_ Message = (*SecAggMasked)(nil)
	_ Message = (*SecAggUnmaskRequest)(nil)
	_ Message = (*SecAggUnmask)(nil)
	_ Message = (*SecAggCheck)(nil)
	_ Message = (*SecAggCheckSigs)(nil)
	_ Message = (*SecAggExpel)(nil)
)

// SecAggExpel carries the proofs against survivors that dealt
// inconsistent seed shares, for the sites that answered the unmasking.
type SecAggExpel struct {
	Job    string        `msgpack:"job"`
	Phase  int           `msgpack:"phase"`
	Proofs []SecAggProof `msgpack:"proofs"`
}

func secAggHead(job string, phase int, site string) error {
	if err := ValidName("job", job); err != nil {
		return err
	}
	if phase < 1 || phase > MaxPhases {
		return fmt.Errorf("protocol: secure aggregation phase %d out of [1, %d]", phase, MaxPhases)
	}
	if site != "" {
		return ValidName("site", site)
	}
	return nil
}

func fixedLen(what string, b []byte, n int) error {
	if len(b) != n {
		return fmt.Errorf("protocol: %s is %d bytes, want %d", what, len(b), n)
	}
	return nil
}

// optionalSig checks a signature field that is absent (nil: the
// honest-but-curious variant) or an Ed25519 signature. A present but
// empty one is refused: it would not survive re-encoding (omitempty).
func optionalSig(what string, b []byte) error {
	if b == nil {
		return nil
	}
	return fixedLen(what, b, secAggSigLen)
}

func secAggID(what string, id uint32, seen map[uint32]bool) error {
	if id == 0 || id > MaxSites {
		return fmt.Errorf("protocol: %s id %d out of [1, %d]", what, id, MaxSites)
	}
	if seen[id] {
		return fmt.Errorf("protocol: %s id %d repeated", what, id)
	}
	seen[id] = true
	return nil
}

func (m *SecAggKeys) Validate() error {
	if err := secAggHead(m.Job, m.Phase, m.Site); err != nil {
		return err
	}
	if err := ValidName("site", m.Site); err != nil {
		return err
	}
	if err := validPoint("encryption key", m.C); err != nil {
		return err
	}
	if err := fixedLen("mask key", m.S, secAggKeyLen); err != nil {
		return err
	}
	return optionalSig("key signature", m.Sig)
}

func (m *SecAggKeyList) Validate() error {
	if err := secAggHead(m.Job, m.Phase, ""); err != nil {
		return err
	}
	if err := fixedLen("round id", m.Round, secAggKeyLen); err != nil {
		return err
	}
	if len(m.Keys) > MaxSites {
		return fmt.Errorf("protocol: %d keys exceed %d sites", len(m.Keys), MaxSites)
	}
	seen := map[uint32]bool{}
	for _, k := range m.Keys {
		if err := secAggID("key", k.ID, seen); err != nil {
			return err
		}
		if err := validPoint("encryption key", k.C); err != nil {
			return err
		}
		if err := fixedLen("mask key", k.S, secAggKeyLen); err != nil {
			return err
		}
		if err := optionalSig("key signature", k.Sig); err != nil {
			return err
		}
	}
	return nil
}

// validCiphers checks ciphertexts: withCommit says whether each may
// carry its sender's commitment (SecAggSharesFor) or none (SecAggShares).
// A ciphertext of the active variant (with the commitment nonce) is
// secAggCTLenActive bytes, one of the honest-but-curious variant
// secAggCTLen.
func validCiphers(cs []SecAggCipher, withCommit bool) error {
	if len(cs) > MaxSites {
		return fmt.Errorf("protocol: %d ciphertexts exceed %d sites", len(cs), MaxSites)
	}
	seen := map[uint32]bool{}
	for _, c := range cs {
		if err := secAggID("peer", c.Peer, seen); err != nil {
			return err
		}
		if len(c.CT) != secAggCTLen && len(c.CT) != secAggCTLenActive {
			return fmt.Errorf("protocol: ciphertext is %d bytes, want %d (or %d with a commitment nonce)", len(c.CT), secAggCTLen, secAggCTLenActive)
		}
		if c.Commit == nil {
			continue
		}
		if !withCommit {
			return fmt.Errorf("protocol: a ciphertext to peer %d carries a commitment: a dealer sends its commitments in its signed list", c.Peer)
		}
		if err := fixedLen("share commitment", c.Commit, 2*secAggCommitLen); err != nil {
			return err
		}
		if len(c.Path) < secAggCommitLen || len(c.Path) > secAggMaxPath*secAggCommitLen || len(c.Path)%secAggCommitLen != 0 {
			return fmt.Errorf("protocol: commitment path from peer %d is %d bytes, want 1 to %d hashes of %d bytes", c.Peer, len(c.Path), secAggMaxPath, secAggCommitLen)
		}
		if err := fixedLen("forwarded seed commitment", c.Seed, secAggCommitLen); err != nil {
			return err
		}
		if err := fixedLen("forwarded commitment signature", c.Sig, secAggSigLen); err != nil {
			return err
		}
	}
	for _, c := range cs {
		if c.Commit == nil && (c.Path != nil || c.Seed != nil || c.Sig != nil) {
			return fmt.Errorf("protocol: a ciphertext from peer %d carries commitment evidence without the commitment", c.Peer)
		}
	}
	return nil
}

// secAggMaxPath is the longest Merkle path: ⌈log2 MaxSites⌉.
const secAggMaxPath = 10

// validPoint checks an encryption key or a revealed pair key: a point of
// edwards25519 in its canonical 32-byte encoding, on the curve, of the
// prime order ℓ (not the identity, no small-order component).
func validPoint(what string, b []byte) error {
	if err := fixedLen(what, b, secAggKeyLen); err != nil {
		return err
	}
	p, err := edwards25519.NewIdentityPoint().SetBytes(b)
	if err != nil {
		return fmt.Errorf("protocol: %s is not a point of edwards25519", what)
	}
	if !bytes.Equal(p.Bytes(), b) {
		return fmt.Errorf("protocol: %s is a non-canonical encoding of a point", what)
	}
	id := edwards25519.NewIdentityPoint()
	if edwards25519.NewIdentityPoint().MultByCofactor(p).Equal(id) == 1 {
		return fmt.Errorf("protocol: %s is a point of small order", what)
	}
	q := edwards25519.NewIdentityPoint().VarTimeDoubleScalarBaseMult(scalarLMinus1, p, edwards25519.NewScalar()) // P is public
	if q.Add(q, p).Equal(id) != 1 {
		return fmt.Errorf("protocol: %s is not in the prime-order subgroup", what)
	}
	return nil
}

// scalarLMinus1 is ℓ − 1: (ℓ − 1)·P = −P iff P's order divides ℓ.
var scalarLMinus1 = func() *edwards25519.Scalar {
	one := make([]byte, 32)
	one[0] = 1
	s, _ := edwards25519.NewScalar().SetCanonicalBytes(one)
	return edwards25519.NewScalar().Negate(s)
}()

// validCommits checks a commitment list: a seed commitment, 1 to
// MaxSites entries in increasing id order (the order they are signed in)
// of two commitments each, a signature.
func validCommits(c *SecAggCommits) error {
	if err := fixedLen("seed commitment", c.Seed, secAggCommitLen); err != nil {
		return err
	}
	if err := fixedLen("commitment signature", c.Sig, secAggSigLen); err != nil {
		return err
	}
	if len(c.Shares) < 1 || len(c.Shares) > MaxSites {
		return fmt.Errorf("protocol: a commitment list of %d entries (1 to %d)", len(c.Shares), MaxSites)
	}
	seen := map[uint32]bool{}
	for i, e := range c.Shares {
		if err := secAggID("commitment", e.ID, seen); err != nil {
			return err
		}
		if i > 0 && e.ID < c.Shares[i-1].ID {
			return fmt.Errorf("protocol: commitment list not sorted by id (%d after %d)", e.ID, c.Shares[i-1].ID)
		}
		if err := fixedLen("key share commitment", e.Key, secAggCommitLen); err != nil {
			return err
		}
		if err := fixedLen("seed share commitment", e.Seed, secAggCommitLen); err != nil {
			return err
		}
		if err := fixedLen("ciphertext commitment", e.CT, secAggCommitLen); err != nil {
			return err
		}
	}
	return nil
}

// optionalNonce checks a commitment nonce: absent or 32 bytes (a present
// empty one would not survive re-encoding).
func optionalNonce(b []byte) error {
	if b == nil {
		return nil
	}
	return fixedLen("commitment nonce", b, secAggNonceLen)
}

func (m *SecAggShares) Validate() error {
	if err := secAggHead(m.Job, m.Phase, m.Site); err != nil {
		return err
	}
	if err := ValidName("site", m.Site); err != nil {
		return err
	}
	if err := validCiphers(m.Shares, false); err != nil {
		return err
	}
	if m.Commits != nil {
		return validCommits(m.Commits)
	}
	return nil
}

func (m *SecAggSharesFor) Validate() error {
	if err := secAggHead(m.Job, m.Phase, ""); err != nil {
		return err
	}
	return validCiphers(m.Shares, true)
}

func (m *SecAggMasked) Validate() error {
	if err := secAggHead(m.Job, m.Phase, m.Site); err != nil {
		return err
	}
	if err := ValidName("site", m.Site); err != nil {
		return err
	}
	if m.Bits < 1 || m.Bits > 64 {
		return fmt.Errorf("protocol: secure aggregation modulus bits %d out of [1, 64]", m.Bits)
	}
	if m.Len < 1 || m.Len > MaxSecAggDim {
		return fmt.Errorf("%w: masked vector of %d entries (1 to %d)", ErrTooLarge, m.Len, MaxSecAggDim)
	}
	w := (m.Bits + 7) / 8
	if len(m.Y) != w*m.Len {
		return fmt.Errorf("protocol: masked vector of %d entries over 2^%d packs into %d bytes, got %d", m.Len, m.Bits, w*m.Len, len(m.Y))
	}
	if r := m.Bits % 8; r != 0 {
		for i := 0; i < m.Len; i++ {
			if m.Y[i*w+w-1]>>r != 0 {
				return fmt.Errorf("protocol: masked entry %d is outside ℤ/2^%d", i, m.Bits)
			}
		}
	}
	if len(m.Rejected) > MaxSites {
		return fmt.Errorf("protocol: %d rejected peers exceed %d sites", len(m.Rejected), MaxSites)
	}
	seen := map[uint32]bool{}
	for _, id := range m.Rejected {
		if err := secAggID("rejected peer", id, seen); err != nil {
			return err
		}
	}
	if m.Accuse == nil {
		return nil
	}
	if len(m.Accuse) == 0 {
		return fmt.Errorf("protocol: an empty accusation list (absent when there is none)")
	}
	if len(m.Accuse) != len(m.Rejected) {
		return fmt.Errorf("protocol: %d accusations for %d rejected peers", len(m.Accuse), len(m.Rejected))
	}
	for i, a := range m.Accuse {
		if a.ID != m.Rejected[i] {
			return fmt.Errorf("protocol: accusation %d is against peer %d, the rejection names %d", i, a.ID, m.Rejected[i])
		}
		if err := validPoint("accusation key", a.Key); err != nil {
			return err
		}
		if err := fixedLen("accusation proof", a.Proof, 2*secAggKeyLen); err != nil {
			return err
		}
		for j, what := range []string{"challenge", "response"} {
			if _, err := edwards25519.NewScalar().SetCanonicalBytes(a.Proof[32*j : 32*j+32]); err != nil {
				return fmt.Errorf("protocol: accusation proof's %s is not a canonical scalar", what)
			}
		}
	}
	return nil
}

func (m *SecAggUnmaskRequest) Validate() error {
	if err := secAggHead(m.Job, m.Phase, ""); err != nil {
		return err
	}
	if len(m.Survivors) > MaxSites {
		return fmt.Errorf("protocol: %d survivors exceed %d sites", len(m.Survivors), MaxSites)
	}
	seen := map[uint32]bool{}
	for _, id := range m.Survivors {
		if err := secAggID("survivor", id, seen); err != nil {
			return err
		}
	}
	return nil
}

func (m *SecAggUnmask) Validate() error {
	if err := secAggHead(m.Job, m.Phase, m.Site); err != nil {
		return err
	}
	if err := ValidName("site", m.Site); err != nil {
		return err
	}
	if len(m.Keys)+len(m.Seeds) > MaxSites {
		return fmt.Errorf("protocol: %d shares exceed %d sites", len(m.Keys)+len(m.Seeds), MaxSites)
	}
	seen := map[uint32]bool{} // one share per site, key or seed, never both
	for _, list := range [][]SecAggShare{m.Keys, m.Seeds} {
		for _, s := range list {
			if err := secAggID("share", s.ID, seen); err != nil {
				return err
			}
			if err := fixedLen("share", s.Y, secAggShareLen); err != nil {
				return err
			}
			if err := optionalNonce(s.Nonce); err != nil {
				return err
			}
		}
	}
	if len(m.Pairs) > len(m.Keys) {
		return fmt.Errorf("protocol: %d pairwise keys for %d key shares", len(m.Pairs), len(m.Keys))
	}
	pairs := map[uint32]bool{}
	for _, s := range m.Pairs {
		if err := secAggID("pairwise key", s.ID, pairs); err != nil {
			return err
		}
		if err := fixedLen("pairwise key", s.Y, secAggKeyLen); err != nil {
			return err
		}
		if s.Nonce != nil {
			return fmt.Errorf("protocol: pairwise key with site %d carries a commitment nonce", s.ID)
		}
	}
	if m.Reveal != nil {
		if err := fixedLen("revealed noise seed", m.Reveal, secAggKeyLen); err != nil {
			return err
		}
	}
	return nil
}

func (m *SecAggCheck) Validate() error {
	if err := secAggHead(m.Job, m.Phase, m.Site); err != nil {
		return err
	}
	if err := ValidName("site", m.Site); err != nil {
		return err
	}
	return fixedLen("consistency signature", m.Sig, secAggSigLen)
}

func (m *SecAggCheckSigs) Validate() error {
	if err := secAggHead(m.Job, m.Phase, ""); err != nil {
		return err
	}
	if len(m.Sigs) > MaxSites {
		return fmt.Errorf("protocol: %d consistency signatures exceed %d sites", len(m.Sigs), MaxSites)
	}
	seen := map[uint32]bool{}
	for _, s := range m.Sigs {
		if err := secAggID("signer", s.ID, seen); err != nil {
			return err
		}
		if err := fixedLen("consistency signature", s.Sig, secAggSigLen); err != nil {
			return err
		}
	}
	return nil
}

func (m *SecAggExpel) Validate() error {
	if err := secAggHead(m.Job, m.Phase, ""); err != nil {
		return err
	}
	if len(m.Proofs) < 1 || len(m.Proofs) > MaxSites {
		return fmt.Errorf("protocol: %d proofs (1 to %d)", len(m.Proofs), MaxSites)
	}
	dealers := map[uint32]bool{}
	for _, p := range m.Proofs {
		if err := secAggID("cheating dealer", p.ID, dealers); err != nil {
			return err
		}
		if err := validCommits(&p.Commits); err != nil {
			return err
		}
		if len(p.Shares) < 1 || len(p.Shares) > MaxSites {
			return fmt.Errorf("protocol: a proof with %d shares (1 to %d)", len(p.Shares), MaxSites)
		}
		holders := map[uint32]bool{}
		for _, s := range p.Shares {
			if err := secAggID("share holder", s.ID, holders); err != nil {
				return err
			}
			if err := fixedLen("share", s.Y, secAggShareLen); err != nil {
				return err
			}
			if err := fixedLen("commitment nonce", s.Nonce, secAggNonceLen); err != nil {
				return err
			}
		}
	}
	return nil
}
