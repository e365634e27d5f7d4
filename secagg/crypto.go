package secagg

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"sync"

	"golang.org/x/crypto/chacha20"
)

// Primitives, all from the Go standard library or golang.org/x/crypto:
//   - key agreement: X25519 (crypto/ecdh) for the pairwise mask keys S;
//     Diffie–Hellman in the prime-order subgroup of edwards25519
//     (filippo.io/edwards25519) for the share-encryption keys C, whose
//     group operations a verifiable accusation needs (dleq.go);
//   - key derivation: HKDF-SHA256 (crypto/hkdf), salted with the round id
//     and labelled by purpose, so the masking key and the share-encryption
//     key are independent even if a site reused a key pair;
//   - PRG: the ChaCha20 keystream (x/crypto/chacha20) under a derived 256-bit
//     key and a zero nonce (each key is used for one stream only);
//   - authenticated encryption of shares: AES-256-GCM (crypto/cipher) with
//     the (round, sender, recipient) triple as associated data, so a share
//     cannot be replayed to another recipient, round or claimed sender;
//   - signatures (active variant): Ed25519 (crypto/ed25519) under each
//     site's long-term key, over a purpose label, the round id and the
//     signed content (advertSigned, checkSigned): a signature of one round
//     or purpose never verifies in another.

const (
	labelMask  = "pairfed/secagg/v1 pairwise mask"
	labelEnc   = "pairfed/secagg/v1 share encryption"
	labelSelf  = "pairfed/secagg/v1 self mask"
	labelAdv   = "pairfed/secagg/v1 key advertisement\x00"
	labelCheck = "pairfed/secagg/v1 consistency check\x00"
	// Dealt-share commitments (commit.go).
	labelCommitKey  = "pairfed/secagg/v1 key share commitment\x00"
	labelCommitSeed = "pairfed/secagg/v1 seed share commitment\x00"
	labelCommitB    = "pairfed/secagg/v1 self-mask seed commitment\x00"
	labelCommits    = "pairfed/secagg/v1 dealt share commitments\x00"
	labelLeaf       = "pairfed/secagg/v1 commitment leaf\x00"
	roundIDLen      = 32
)

// newKeyPair draws an X25519 key pair from 32 bytes of rnd.
func newKeyPair(rnd io.Reader) (*ecdh.PrivateKey, error) {
	var b [32]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return nil, fmt.Errorf("secagg: randomness: %w", err)
	}
	return ecdh.X25519().NewPrivateKey(b[:])
}

// checkEncKey refuses an encryption key that parsePoint refuses (not a
// canonical point of order ℓ of edwards25519).
func checkEncKey(k []byte) error {
	if _, err := parsePoint(k); err != nil {
		return fmt.Errorf("its encryption key %w", err)
	}
	return nil
}

// checkPublicKey refuses a mask key that is not an X25519 public key, or one of
// low order: its Diffie–Hellman with any private key is all zeros, so
// every peer's key agreement with it would fail (a rogue site could make
// every honest site leave the round with one such key). The server checks
// it at the advertisement, which excludes that site.
func checkPublicKey(k []byte) error {
	pub, err := ecdh.X25519().NewPublicKey(k)
	if err != nil {
		return err
	}
	if _, err := probeKey.ECDH(pub); err != nil {
		return fmt.Errorf("a low-order point: %w", err)
	}
	return nil
}

// probeKey is a fixed private key for checkPublicKey (any clamped scalar
// gives the all-zero result exactly for the low-order points).
var probeKey = func() *ecdh.PrivateKey {
	k, err := ecdh.X25519().NewPrivateKey(bytes.Repeat([]byte{0x5a}, 32))
	if err != nil {
		panic(err)
	}
	return k
}()

// agree returns HKDF(ECDH(priv, pub), salt = roundID, info = label).
func agree(priv *ecdh.PrivateKey, pubBytes []byte, roundID []byte, label string) ([]byte, error) {
	pub, err := ecdh.X25519().NewPublicKey(pubBytes)
	if err != nil {
		return nil, fmt.Errorf("secagg: bad public key: %w", err)
	}
	shared, err := priv.ECDH(pub)
	if err != nil {
		return nil, fmt.Errorf("secagg: key agreement: %w", err)
	}
	return hkdfKey(shared, roundID, label)
}

// hkdfKey is HKDF-SHA256(secret, salt = roundID, info = label), 32 bytes.
func hkdfKey(secret, roundID []byte, label string) ([]byte, error) {
	return hkdf.Key(sha256.New, secret, roundID, label, 32)
}

// selfKey derives the self-mask PRG key from the seed b_u.
func selfKey(seed, roundID []byte) ([]byte, error) {
	return hkdf.Key(sha256.New, seed, roundID, labelSelf, 32)
}

// addMask adds (sign +1) or subtracts (sign −1) the PRG stream of key to
// dst modulo 2^64 (the caller reduces mod 2^b at the end: 2^b divides 2^64,
// so reduction commutes with the additions).
func addMask(dst []uint64, key []byte, sign int) {
	var nonce [chacha20.NonceSize]byte
	c, err := chacha20.NewUnauthenticatedCipher(key, nonce[:])
	if err != nil {
		panic("secagg: chacha20 key: " + err.Error()) // keys are always 32 bytes
	}
	const chunk = 512
	var buf [8 * chunk]byte
	for off := 0; off < len(dst); off += chunk {
		n := min(chunk, len(dst)-off)
		b := buf[:8*n]
		clear(b)
		c.XORKeyStream(b, b)
		for i := 0; i < n; i++ {
			w := binary.LittleEndian.Uint64(b[8*i:])
			if sign > 0 {
				dst[off+i] += w
			} else {
				dst[off+i] -= w
			}
		}
	}
}

// sealShares encrypts plaintext from → to under key.
func seal(key, roundID []byte, from, to uint32, plaintext []byte, rnd io.Reader) ([]byte, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := io.ReadFull(rnd, nonce); err != nil {
		return nil, fmt.Errorf("secagg: randomness: %w", err)
	}
	return aead.Seal(nonce, nonce, plaintext, ad(roundID, from, to)), nil
}

func open(key, roundID []byte, from, to uint32, ct []byte) ([]byte, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	if len(ct) < aead.NonceSize()+aead.Overhead() {
		return nil, fmt.Errorf("secagg: ciphertext from site %d is too short (%d bytes)", from, len(ct))
	}
	pt, err := aead.Open(nil, ct[:aead.NonceSize()], ct[aead.NonceSize():], ad(roundID, from, to))
	if err != nil {
		return nil, fmt.Errorf("secagg: shares from site %d fail authentication: %w", from, err)
	}
	return pt, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	blk, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secagg: aes: %w", err)
	}
	return cipher.NewGCM(blk)
}

func ad(roundID []byte, from, to uint32) []byte {
	a := make([]byte, 0, len(roundID)+8)
	a = append(a, roundID...)
	a = binary.BigEndian.AppendUint32(a, from)
	return binary.BigEndian.AppendUint32(a, to)
}

// encAgree returns the AEAD key of the pair (k's owner, the owner of the
// checked public key pub).
func encAgree(k *encKey, pub []byte, roundID []byte) ([]byte, error) {
	y, err := parsePoint(pub)
	if err != nil {
		return nil, fmt.Errorf("secagg: bad encryption key: it %w", err)
	}
	return encKeyOf(k.dh(y), roundID)
}

// advertSigned is what site from signs in round 0: its two public keys,
// bound to the round.
func advertSigned(roundID []byte, from uint32, c, s []byte) []byte {
	m := make([]byte, 0, len(labelAdv)+len(roundID)+4+len(c)+len(s))
	m = append(append(m, labelAdv...), roundID...)
	m = binary.BigEndian.AppendUint32(m, from)
	return append(append(m, c...), s...)
}

// checkSigned is what a site signs in the ConsistencyCheck round: the
// survivor set U3 it received (sorted, with its size), bound to the round.
func checkSigned(roundID []byte, u3 []uint32) []byte {
	m := make([]byte, 0, len(labelCheck)+len(roundID)+4+4*len(u3))
	m = append(append(m, labelCheck...), roundID...)
	m = binary.BigEndian.AppendUint32(m, uint32(len(u3)))
	for _, v := range u3 {
		m = binary.BigEndian.AppendUint32(m, v)
	}
	return m
}

// verifySig reports whether sig is pub's Ed25519 signature of msg (false
// for a key or signature of the wrong size). A process remembers the
// triples it verified (sigCache): in a round every site checks the same K
// advertisements and the same consistency signatures, so a simulation of
// K sites in one process verifies each once instead of K times. A site in
// its own process gains nothing and loses nothing.
func verifySig(pub ed25519.PublicKey, msg, sig []byte) bool {
	if len(pub) != ed25519.PublicKeySize || len(sig) != ed25519.SignatureSize {
		return false
	}
	key := sigKey(pub, msg, sig)
	if sigCache.has(key) {
		return true
	}
	if !ed25519.Verify(pub, msg, sig) {
		return false
	}
	sigCache.add(key)
	return true
}

// sigKey names a (key, message, signature) triple by SHA-256 over the three
// length-prefixed fields (a collision would need a SHA-256 collision).
func sigKey(pub ed25519.PublicKey, msg, sig []byte) [32]byte {
	h := sha256.New()
	for _, b := range [][]byte{pub, msg, sig} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// verifiedSigs is a bounded set of triples that verified. Ed25519
// verification (crypto/ed25519, RFC 8032 with the standard's checks) is a
// deterministic function of the triple, so a triple that verified once
// verifies again: remembering it changes no decision. It holds at most
// sigCacheMax entries (32 bytes each) and is cleared when full.
type verifiedSigs struct {
	mu  sync.Mutex
	off bool
	ok  map[[32]byte]struct{}
}

const sigCacheMax = 1 << 16

var sigCache = &verifiedSigs{ok: map[[32]byte]struct{}{}}

func (c *verifiedSigs) has(k [32]byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.ok[k]
	return ok && !c.off
}

func (c *verifiedSigs) add(k [32]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off {
		return
	}
	if len(c.ok) >= sigCacheMax {
		clear(c.ok)
	}
	c.ok[k] = struct{}{}
}

// DisableSignatureCache makes every later verification run in full: for
// measurements of one site's cost (scripts/secaggscale), where K sites
// share a process but each must pay what it pays alone.
func DisableSignatureCache() {
	sigCache.mu.Lock()
	defer sigCache.mu.Unlock()
	sigCache.off = true
	clear(sigCache.ok)
}

// NewSigners draws a long-term Ed25519 key pair for each id from rnd
// (32 seed bytes each, so a seeded rnd gives reproducible keys): the
// roster (public keys) and the private keys. For simulations and tests,
// where every site runs in one process; a deployment issues each site its
// key (pairfed deploy init) and distributes only the roster.
func NewSigners(ids []uint32, rnd io.Reader) (map[uint32]ed25519.PublicKey, map[uint32]ed25519.PrivateKey, error) {
	pub := make(map[uint32]ed25519.PublicKey, len(ids))
	priv := make(map[uint32]ed25519.PrivateKey, len(ids))
	for _, id := range ids {
		seed := make([]byte, ed25519.SeedSize)
		if _, err := io.ReadFull(rnd, seed); err != nil {
			return nil, nil, fmt.Errorf("secagg: randomness: %w", err)
		}
		k := ed25519.NewKeyFromSeed(seed)
		priv[id], pub[id] = k, k.Public().(ed25519.PublicKey)
	}
	return pub, priv, nil
}
