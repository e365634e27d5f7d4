package secagg

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"
)

// ErrTooFewSurvivors aborts a round: fewer than the threshold of sites
// answered a step. Nothing about any input has been released when it is
// returned (the server has at most masked vectors, and fewer than t shares
// of any secret).
var ErrTooFewSurvivors = errors.New("secagg: too few surviving sites")

// ErrInconsistent ends a site's round in the active variant: the server's
// messages contradict each other or the roster — a key advertisement
// whose signature does not verify, a survivor set that is not a subset of
// the sites that shared keys, a consistency signature on another survivor
// set than the one this site received (the server showed different sets
// to different sites), too few signatures. An honest server never sends
// such a message (it checks the same signatures first), so the site sends
// nothing more: no unmask share leaves it.
var ErrInconsistent = errors.New("secagg: the server's messages are inconsistent or forged")

// Config is the public description of one aggregation round, known to the
// server and every site before the round starts.
type Config struct {
	// RoundID is a fresh public 32-byte identifier (the coordinator draws it
	// per round); every derived key and every AEAD tag binds to it.
	RoundID []byte
	// Sites are the ids of the K sites invited to the round (distinct,
	// non-zero; they are also the Shamir evaluation points).
	Sites []uint32
	// Threshold t: the minimum number of sites that must survive every
	// step, and the number of shares that reconstruct a secret. Validate
	// requires t > K/2, so that two disjoint sets of survivors cannot both
	// reach t (a server cannot obtain both shares of one site's pairwise key
	// and of its self mask from disjoint honest majorities).
	Threshold int
	// Bits b: inputs and the sum are vectors over ℤ/2^b, 1 ≤ b ≤ 64.
	Bits int
	// Dim is the length of every input vector.
	Dim int
	// Roster holds the long-term Ed25519 public key of every invited site
	// (by id): the active variant ([BIK+17] Fig. 5, the default) signs
	// each key advertisement and each site's view of the survivors with
	// them, so that a malicious server can neither substitute keys nor
	// show different survivor sets to different sites. Required unless
	// HonestButCurious; the keys must be distinct.
	Roster map[uint32]ed25519.PublicKey
	// HonestButCurious selects the variant of [BIK+17] Fig. 4 WITHOUT
	// signatures and without the ConsistencyCheck round: secure only
	// against a server that follows the protocol (it relays whatever key
	// list and survivor set the server sends). It is NOT the default and
	// no deployment path sets it; it is kept for comparison and the
	// benchmarks. Roster must be nil with it.
	HonestButCurious bool
	// Degree selects the sparse variant (SecAgg+, graph.go) when > 0: the
	// expected number of neighbours of a site in the round's random graph,
	// at most K − 2. 0, the default, is the complete graph of [BIK+17].
	Degree int
	// Local is the sparse variant's share threshold ℓ: a site's secrets
	// are shared among its neighbours in U1 and itself, and ℓ of those
	// shares rebuild them (2 ≤ ℓ ≤ Degree). 0 with the complete graph,
	// whose share threshold is Threshold.
	Local int
	// Withheld is the sparse variant's w: a site sends its masked input
	// only if at most w of the neighbours it dealt shares to sent it none
	// (0 ≤ w < Local; 0 with the complete graph, whose sites need t
	// shares). sparsefloor.go says why the floor needs it.
	Withheld int
}

// Active reports whether the round runs the active (malicious-server)
// variant: signatures and the consistency check.
func (c Config) Active() bool { return !c.HonestButCurious }

// DefaultThreshold is the rule for t when none is given: ⌊2K/3⌋ + 1, the
// SecAgg paper's choice that tolerates up to a third of the sites
// dropping and stays above the majority bound of Validate.
func DefaultThreshold(k int) int { return 2*k/3 + 1 }

// Validate checks the configuration.
func (c Config) Validate() error {
	if len(c.RoundID) != roundIDLen {
		return fmt.Errorf("secagg: round id is %d bytes, want %d (draw it with crypto/rand per round)", len(c.RoundID), roundIDLen)
	}
	if len(c.Sites) < 2 {
		return fmt.Errorf("secagg: %d sites; secure aggregation needs at least 2 (with 1 the sum is the input)", len(c.Sites))
	}
	if err := checkXs(c.Sites); err != nil {
		return fmt.Errorf("%w (site ids must be distinct and non-zero)", err)
	}
	k := len(c.Sites)
	if c.Threshold <= k/2 || c.Threshold > k {
		return fmt.Errorf("secagg: threshold %d for %d sites must be in [%d, %d] (more than half; default %d)",
			c.Threshold, k, k/2+1, k, DefaultThreshold(k))
	}
	if c.Bits < 1 || c.Bits > 64 {
		return fmt.Errorf("secagg: modulus bits %d must be in [1, 64]", c.Bits)
	}
	if c.Dim < 1 {
		return fmt.Errorf("secagg: dimension %d must be ≥ 1", c.Dim)
	}
	if err := c.validateSparse(); err != nil {
		return err
	}
	if c.HonestButCurious {
		if c.Roster != nil {
			return fmt.Errorf("secagg: a roster with the honest-but-curious variant (which signs nothing): drop HonestButCurious to run the active variant")
		}
		return nil
	}
	if len(c.Roster) != len(c.Sites) {
		return fmt.Errorf("secagg: the roster holds %d signing keys for %d sites: the active variant (the default) needs every site's long-term Ed25519 public key", len(c.Roster), len(c.Sites))
	}
	owner := make(map[string]uint32, len(c.Sites)) // O(K), not K² compares: every site validates it (1024 sites: 15 s of a simulation's CPU)
	for _, id := range c.Sites {
		pk, ok := c.Roster[id]
		if !ok || len(pk) != ed25519.PublicKeySize {
			return fmt.Errorf("secagg: the roster has no %d-byte Ed25519 key for site %d (it has %d bytes)", ed25519.PublicKeySize, id, len(pk))
		}
		if other, dup := owner[string(pk)]; dup {
			return fmt.Errorf("secagg: sites %d and %d have the same signing key in the roster: each site needs its own", min(other, id), max(other, id))
		}
		owner[string(pk)] = id
	}
	return nil
}

func (c Config) mask() uint64 {
	if c.Bits == 64 {
		return ^uint64(0)
	}
	return 1<<c.Bits - 1
}

func (c Config) invited(id uint32) bool { return slices.Contains(c.Sites, id) }

// Messages. Site → server messages carry the sender's id; the transport
// authenticates senders (deploy/README.md). Server → site messages are the
// server's claims: sites check them against what they know.

// AdvertiseKeys (round 0, site → server): the site's two fresh public
// keys: C for encrypting shares (a point of the prime-order subgroup of
// edwards25519, dleq.go), S for pairwise masks (X25519); in the
// active variant Sig signs (round id, From, C, S) under From's long-term
// key (advertSigned), so the keys cannot be substituted by the server nor
// replayed into another round.
type AdvertiseKeys struct {
	From uint32 `msgpack:"from"`
	C    []byte `msgpack:"c"`
	S    []byte `msgpack:"s"`
	Sig  []byte `msgpack:"sig,omitempty"`
}

// KeyList (server → sites): every advertisement the server received in
// time (U1), sorted by id.
type KeyList struct {
	Keys []AdvertiseKeys `msgpack:"keys"`
}

// EncryptedShare is one AEAD ciphertext of (share of s_u^SK, share of b_u)
// from site From to site To.
//
// In the active variant the plaintext also holds the dealer's nonce for
// To's commitments, and the server, forwarding it (SharesFor), attaches
// Commit: the dealer's signed commitment to To's shares (commit.go), which
// To checks its decrypted shares against.
//
// With the commitment the server forwards the evidence that the dealer
// signed both the commitment and this very ciphertext (commit.go): Path,
// the Merkle path of the entry (with the ciphertext's hash) in the
// dealer's list, Seed, the list's seed commitment, and Sig, the dealer's
// signature of the list's root. A recipient checks it before anything
// else, and refuses the shares only with a proof (MaskedInput).
type EncryptedShare struct {
	From   uint32       `msgpack:"from"`
	To     uint32       `msgpack:"to"`
	CT     []byte       `msgpack:"ct"`
	Commit *ShareCommit `msgpack:"commit,omitempty"`
	Path   [][]byte     `msgpack:"path,omitempty"`
	Seed   []byte       `msgpack:"seed,omitempty"`
	Sig    []byte       `msgpack:"sig,omitempty"`
}

// ShareKeys (round 1, site → server): the site's encrypted shares, one
// per other member of U1, and in the active variant its signed
// commitments to every share it dealt and to its seed (commit.go).
type ShareKeys struct {
	From    uint32           `msgpack:"from"`
	Shares  []EncryptedShare `msgpack:"shares"`
	Commits *Commitments     `msgpack:"commits,omitempty"`
}

// SharesFor (server → site To): the ciphertexts addressed to To from the
// sites whose ShareKeys arrived in time (U2).
type SharesFor struct {
	To     uint32           `msgpack:"to"`
	Shares []EncryptedShare `msgpack:"shares"`
}

// MaskedInput (round 2, site → server): y_u = x_u + PRG(b_u) +
// Σ_{v∈U2(u), v≠u} ±PRG(s_uv) mod 2^b, where U2(u) is U2 less Rejected:
// the sites whose forwarded share ciphertexts did not open under the pair's
// key or did not hold two shares (a rogue peer's garbage or a replay from
// another round or pair). Their pairwise masks are not in y_u, this site
// holds no share of their secrets, and the server excludes them from U3
// (a rogue member is dropped from the round instead of aborting it).
//
// In the active variant every refusal is proven: Accusations holds, in
// the order of Rejected, the pair's revealed encryption key with its
// proof (dleq.go). The server opens the refused ciphertext with it: if it
// is good, the accuser is expelled instead (a false accusation).
type MaskedInput struct {
	From        uint32       `msgpack:"from"`
	Y           []uint64     `msgpack:"y"`
	Rejected    []uint32     `msgpack:"rejected,omitempty"`
	Accusations []Accusation `msgpack:"accusations,omitempty"`
}

// UnmaskRequest (server → sites): the sites whose masked input arrived
// (U3, sorted). In the active variant it opens the ConsistencyCheck round
// (each site signs the set it received); in the honest-but-curious one it
// asks for the unmask shares directly.
type UnmaskRequest struct {
	Survivors []uint32 `msgpack:"survivors"`
}

// ConsistencySig (active variant, round 3 ConsistencyCheck, site →
// server): From's signature on (round id, U3) as From received it
// (checkSigned).
type ConsistencySig struct {
	From uint32 `msgpack:"from"`
	Sig  []byte `msgpack:"sig"`
}

// ConsistencySigs (active variant, server → sites): the signatures of the
// sites that answered the check (U4 ⊆ U3, ≥ t), sorted by id; the
// unmask request of the active variant.
type ConsistencySigs struct {
	Sigs []ConsistencySig `msgpack:"sigs"`
}

// UnmaskShares (round 3, site → server): for each site of U2 \ U3 the
// site's share of its mask key s_v^SK; for each site of U3 its share of
// the self-mask seed b_v. Never both for one site.
type UnmaskShares struct {
	From   uint32           `msgpack:"from"`
	KeyOf  map[uint32]Share `msgpack:"key_of"`
	SeedOf map[uint32]Share `msgpack:"seed_of"`
	// PairOf holds, for each site v of KeyOf (dropped after sharing), the
	// pairwise mask key s_uv this site derived with it: what the server
	// could compute from v's reconstructed key anyway, and all it needs to
	// remove the pair's mask from y_u. It lets the server drop a site whose
	// key it cannot reconstruct (fewer than t holders accepted its shares).
	// Revealing it is safe for the same reason as revealing v's key: v's
	// input stays masked by its self mask, whose seed shares no honest
	// site reveals for a site outside U3.
	PairOf map[uint32][]byte `msgpack:"pair_of,omitempty"`
	// Reveal is the secret the site set with Client.RevealWhenAll (its
	// removable noise copies' seed, dp/ddg_removable.go), sent only in
	// the active complete-graph variant's unmask answer and only when
	// the signed survivor set U3 holds every site of the round; empty
	// otherwise.
	Reveal []byte `msgpack:"reveal,omitempty"`
}
