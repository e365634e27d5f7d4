package protocol

import (
	"fmt"
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
)

func init() {
	for k, n := range map[Kind]string{
		KindSecAggKeys: "secagg-keys", KindSecAggKeyList: "secagg-key-list", KindSecAggShares: "secagg-shares",
		KindSecAggSharesFor: "secagg-shares-for", KindSecAggMasked: "secagg-masked",
		KindSecAggUnmaskRequest: "secagg-unmask-request", KindSecAggUnmask: "secagg-unmask",
		KindSecAggCheck: "secagg-check", KindSecAggCheckSigs: "secagg-check-sigs",
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
	}
	return nil
}

// Sizes fixed by package secagg.
const (
	secAggKeyLen   = 32  // X25519 public key, round id
	secAggShareLen = 40  // a Shamir share: five elements of GF(2^61 − 1)
	secAggCTLen    = 108 // AES-GCM nonce (12) + two shares (80) + tag (16)
	secAggSigLen   = 64  // Ed25519 signature
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
// SecAggShares and the sender in SecAggSharesFor.
type SecAggCipher struct {
	Peer uint32 `msgpack:"peer"`
	CT   []byte `msgpack:"ct"`
}

// SecAggShare is one revealed Shamir share of site ID's secret.
type SecAggShare struct {
	ID uint32 `msgpack:"id"`
	Y  []byte `msgpack:"y"`
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

// SecAggShares is secagg round 1.
type SecAggShares struct {
	Job    string         `msgpack:"job"`
	Phase  int            `msgpack:"phase"`
	Site   string         `msgpack:"site"`
	Shares []SecAggCipher `msgpack:"shares"`
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
type SecAggMasked struct {
	Job      string   `msgpack:"job"`
	Phase    int      `msgpack:"phase"`
	Site     string   `msgpack:"site"`
	Bits     int      `msgpack:"bits"`
	Len      int      `msgpack:"len"`
	Y        []byte   `msgpack:"y"`
	Rejected []uint32 `msgpack:"rejected,omitempty"`
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
)

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
	if err := fixedLen("encryption key", m.C, secAggKeyLen); err != nil {
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
		if err := fixedLen("encryption key", k.C, secAggKeyLen); err != nil {
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

func validCiphers(cs []SecAggCipher) error {
	if len(cs) > MaxSites {
		return fmt.Errorf("protocol: %d ciphertexts exceed %d sites", len(cs), MaxSites)
	}
	seen := map[uint32]bool{}
	for _, c := range cs {
		if err := secAggID("peer", c.Peer, seen); err != nil {
			return err
		}
		if err := fixedLen("ciphertext", c.CT, secAggCTLen); err != nil {
			return err
		}
	}
	return nil
}

func (m *SecAggShares) Validate() error {
	if err := secAggHead(m.Job, m.Phase, m.Site); err != nil {
		return err
	}
	if err := ValidName("site", m.Site); err != nil {
		return err
	}
	return validCiphers(m.Shares)
}

func (m *SecAggSharesFor) Validate() error {
	if err := secAggHead(m.Job, m.Phase, ""); err != nil {
		return err
	}
	return validCiphers(m.Shares)
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
