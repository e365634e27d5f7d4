package secagg

import (
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"filippo.io/edwards25519"
)

// Verifiable accusations (issue 28). A site A that refuses the shares
// dealer D sent it (MaskedInput.Rejected) must prove its accusation: it
// attaches the Diffie–Hellman value Z_AD of the two sites' share-encryption
// keys — from which the pair's AEAD key k_AD = HKDF(Z_AD) derives — with a
// Chaum–Pedersen proof that Z_AD is that value (Accusation). The server
// checks the proof, opens D's ciphertext to A (the one D signed a hash of
// in its commitment list, commit.go) with k_AD and checks it against D's
// signed commitment to A's shares, exactly as A did:
//
//   - D's ciphertext does not open, or its shares do not match: D dealt a
//     bad share; D is excluded from U3 (Result.Excluded), as before.
//   - It opens and matches: the accusation is false, and A — who alone
//     (with D) could compute Z_AD — is the proven cheater: A is expelled
//     (out of U3, Result.FalseAccusers) and D stays in.
//   - An accusation without a valid proof refuses A's masked input (A
//     leaves the round as a dropout; D stays in).
//
// So a rogue member can no longer remove honest peers from the round by
// naming them: a false accusation costs the accuser its own place and no
// one else's.
//
// The group. The share-encryption keys C are points of the prime-order
// subgroup of edwards25519 (order ℓ = 2^252 + 27742317777372353535851937790883648493),
// C = c·B for a uniform secret scalar c (filippo.io/edwards25519, whose
// group operations X25519 in crypto/ecdh does not expose). Every point a
// peer sends — an advertised key, an accusation's Z — is decoded strictly
// (parsePoint): 32 bytes, the canonical encoding, on the curve, not the
// identity, and of order ℓ (ℓ·P = O; in particular no small-order and no
// mixed-order point: a cofactor component would let a prover pass the
// proof for a Z off the true DH value by a small-order point). The mask
// keys S stay X25519 (crypto/ecdh): they are Shamir-shared and
// reconstructed as before, and need no group operation.
//
// The proof (dleqProve, dleqVerify): with x = c_A, X = C_A = x·B,
// Y = C_D, Z = x·Y, the prover draws r, sends e = H(ctx, B, X, Y, Z,
// r·B, r·Y) and s = r + e·x mod ℓ; the verifier recomputes
// R1 = s·B − e·X, R2 = s·Y − e·Z and checks e = H(ctx, B, X, Y, Z, R1,
// R2). It is complete (R1 = r·B, R2 = r·Y for an honest prover), special
// sound (two answers s, s' to challenges e ≠ e' for the same (R1, R2)
// give x = (s − s')/(e − e') with X = x·B and Z = x·Y: in the random
// oracle model a prover that convinces the verifier knows x with Z =
// x·Y, i.e. Z is the DH value) and honest-verifier zero-knowledge (the
// simulator picks e, s and programs the oracle). H is SHA-512 reduced mod
// ℓ (Scalar.SetUniformBytes) over a label and ctx = (round id, A, D): the
// Fiat–Shamir transcript binds the proof to this round and this ordered
// pair, besides the two keys (fresh per round and signed into it by their
// owners' advertisements).
//
// Why revealing k_AD leaks nothing beyond what A or D holds. k_AD opens
// exactly the two ciphertexts A and D exchanged in this round: D's shares
// for A, which A decrypted (or could, when they open), and A's shares for
// D, which D decrypted. It reveals nothing about either party's other
// secrets: Z_AD is a DH value of fresh keys used for nothing else, c_A
// and c_D stay secret (the proof is zero-knowledge), and the mask keys
// are separate X25519 keys. An honest A accuses only when the evidence
// the server forwarded is signed by D (the Merkle path of D's commitment
// list binding the hash of that very ciphertext, commit.go): a forwarded
// ciphertext, entry or path that does not verify means the server lied
// (an honest server checks the same list before forwarding), and A then
// stops with ErrInconsistent instead of accusing — so a lying server
// cannot make an honest A reveal k_AD with an honest D by altering what it
// forwards. An honest D's signed ciphertext always opens to the shares it
// committed to; therefore when A is honest and accuses, D is not honest,
// and the shares k_AD opens are known to D already (D's own, and A's
// shares for D, which D decrypted); when A is the rogue, they are known to
// A. Either way the server learns only what a rogue party that colludes
// with it could hand it — no more than a coalition containing that party
// holds, which the threshold argument of doc.go already allows for.
//
// Why the coordinator cannot forge or replay an accusation. A valid proof
// for (A, D) needs x = c_A or a break of the DLEQ proof's soundness
// (discrete logarithms in the order-ℓ group); the coordinator knows
// neither c_A nor c_D. A proof made for another round or another pair
// does not verify here: the challenge hashes the round id and the ordered
// pair (A, D), and the keys C_A, C_D, which are fresh per round. So it
// cannot expel an honest site by "its" false accusation; it can, as it
// always could, leave any site out of the round (drop its message), which
// reveals nothing (the consistency check of doc.go).
//
// Why the sites need not check the verdict before they unmask (unlike an
// ExpelRequest, commit.go, which makes them reveal a pairwise key with a
// survivor). A verdict only removes a site from U3 — the accused dealer
// if guilty, the accuser if the accusation is false — and a site outside
// U3 is treated as any site that dropped after sharing: the survivors
// reveal its key shares and their pairwise keys with it, never its seed
// shares. The coordinator can always obtain that by declaring the site
// dropped; what it cannot do is use two stories about one site, which the
// consistency check (one signed U3) already rules out. So no site reveals
// anything because of an accusation that the protocol did not already
// allow, and the verdict needs no second check at the sites.
//
// The honest-but-curious variant (Config.HonestButCurious) has no signed
// commitments: a refusal there carries no proof and still excludes the
// named dealer, as before (that variant trusts the server and is kept for
// comparison only).

const (
	pointLen   = 32
	proofLen   = 64
	labelDLEQ  = "pairfed/secagg/v1 accusation DLEQ\x00"
	labelNonce = "pairfed/secagg/v1 accusation DLEQ nonce\x00"
)

// lMinus1 is ℓ − 1, the largest canonical scalar: P has order dividing ℓ
// iff (ℓ − 1)·P = −P.
var lMinus1 = func() *edwards25519.Scalar {
	one := make([]byte, 32)
	one[0] = 1
	s, err := edwards25519.NewScalar().SetCanonicalBytes(one)
	if err != nil {
		panic(err)
	}
	return edwards25519.NewScalar().Negate(s)
}()

// parsePoint decodes a peer's group element strictly: 32 bytes, the
// canonical encoding (filippo.io/edwards25519's SetBytes accepts a
// non-canonical y; re-encoding must give the same bytes), on the curve,
// not the identity and in the subgroup of prime order ℓ (so not of small
// or mixed order).
func parsePoint(b []byte) (*edwards25519.Point, error) {
	if len(b) != pointLen {
		return nil, fmt.Errorf("is %d bytes, want %d", len(b), pointLen)
	}
	p, err := edwards25519.NewIdentityPoint().SetBytes(b)
	if err != nil {
		return nil, errors.New("is not a point of edwards25519")
	}
	if string(p.Bytes()) != string(b) {
		return nil, errors.New("is a non-canonical encoding")
	}
	id := edwards25519.NewIdentityPoint()
	if p.Equal(id) == 1 {
		return nil, errors.New("is the identity")
	}
	if edwards25519.NewIdentityPoint().MultByCofactor(p).Equal(id) == 1 {
		return nil, errors.New("is of small order")
	}
	// (ℓ − 1)·P + P: variable time, P is public.
	q := edwards25519.NewIdentityPoint().VarTimeDoubleScalarBaseMult(lMinus1, p, edwards25519.NewScalar())
	if q.Add(q, p).Equal(id) != 1 {
		return nil, errors.New("is not in the prime-order subgroup (a cofactor component)")
	}
	return p, nil
}

// encKey is a site's share-encryption key pair: c and C = c·B.
type encKey struct {
	c   *edwards25519.Scalar
	pub *edwards25519.Point
}

// newEncKey draws c uniformly from 64 bytes of rnd (SetUniformBytes: the
// bias mod ℓ is below 2^-250).
func newEncKey(rnd io.Reader) (*encKey, error) {
	var b [64]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return nil, fmt.Errorf("secagg: randomness: %w", err)
	}
	return encKeyFromSeed(b[:])
}

func encKeyFromSeed(b []byte) (*encKey, error) {
	c, err := edwards25519.NewScalar().SetUniformBytes(b)
	if err != nil {
		return nil, fmt.Errorf("secagg: encryption key: %w", err)
	}
	if c.Equal(edwards25519.NewScalar()) == 1 {
		return nil, errors.New("secagg: encryption key: a zero scalar (broken randomness)")
	}
	return &encKey{c: c, pub: edwards25519.NewGeneratorPoint().ScalarBaseMult(c)}, nil
}

func (k *encKey) Bytes() []byte { return k.pub.Bytes() }

// dh returns Z = c·Y for a peer's checked key Y.
func (k *encKey) dh(y *edwards25519.Point) *edwards25519.Point {
	return edwards25519.NewIdentityPoint().ScalarMult(k.c, y)
}

// encKeyOf derives the pair's AEAD key from their DH value Z.
func encKeyOf(z *edwards25519.Point, roundID []byte) ([]byte, error) {
	return hkdfKey(z.Bytes(), roundID, labelEnc)
}

// dleqContext binds an accusation to the round and the ordered pair.
func dleqContext(roundID []byte, accuser, dealer uint32) []byte {
	ctx := append([]byte{}, roundID...)
	ctx = binary.BigEndian.AppendUint32(ctx, accuser)
	return binary.BigEndian.AppendUint32(ctx, dealer)
}

// challenge is H(label, ctx, B, X, Y, Z, R1, R2) mod ℓ.
func challenge(ctx []byte, x, y, z, r1, r2 *edwards25519.Point) *edwards25519.Scalar {
	h := sha512.New()
	h.Write([]byte(labelDLEQ))
	h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(ctx))))
	h.Write(ctx)
	for _, p := range []*edwards25519.Point{edwards25519.NewGeneratorPoint(), x, y, z, r1, r2} {
		h.Write(p.Bytes())
	}
	e, _ := edwards25519.NewScalar().SetUniformBytes(h.Sum(nil)) // 64 bytes: never fails
	return e
}

// dleqProve proves log_B(X) = log_Y(Z) where X = x·B and Z = x·Y. The
// nonce r is hedged: a hash of x, the statement and 32 fresh bytes of
// rnd (a broken rnd does not leak x through a repeated r).
func dleqProve(ctx []byte, x *edwards25519.Scalar, y *edwards25519.Point, rnd io.Reader) (z *edwards25519.Point, proof []byte, err error) {
	X := edwards25519.NewGeneratorPoint().ScalarBaseMult(x)
	z = edwards25519.NewIdentityPoint().ScalarMult(x, y)
	var fresh [32]byte
	if _, err := io.ReadFull(rnd, fresh[:]); err != nil {
		return nil, nil, fmt.Errorf("secagg: randomness: %w", err)
	}
	h := sha512.New()
	h.Write([]byte(labelNonce))
	h.Write(x.Bytes())
	h.Write(ctx)
	h.Write(y.Bytes())
	h.Write(fresh[:])
	r, _ := edwards25519.NewScalar().SetUniformBytes(h.Sum(nil))
	r1 := edwards25519.NewGeneratorPoint().ScalarBaseMult(r)
	r2 := edwards25519.NewIdentityPoint().ScalarMult(r, y)
	e := challenge(ctx, X, y, z, r1, r2)
	s := edwards25519.NewScalar().MultiplyAdd(e, x, r) // s = e·x + r
	return z, append(e.Bytes(), s.Bytes()...), nil
}

// dleqVerify checks a proof that log_B(X) = log_Y(Z) (all three points
// already checked by parsePoint).
func dleqVerify(ctx []byte, X, y, z *edwards25519.Point, proof []byte) bool {
	if len(proof) != proofLen {
		return false
	}
	e, err := edwards25519.NewScalar().SetCanonicalBytes(proof[:32])
	if err != nil {
		return false
	}
	s, err := edwards25519.NewScalar().SetCanonicalBytes(proof[32:])
	if err != nil {
		return false
	}
	ne := edwards25519.NewScalar().Negate(e)
	r1 := edwards25519.NewIdentityPoint().VarTimeDoubleScalarBaseMult(ne, X, s) // s·B − e·X
	r2 := edwards25519.NewIdentityPoint().VarTimeMultiScalarMult([]*edwards25519.Scalar{s, ne}, []*edwards25519.Point{y, z})
	return challenge(ctx, X, y, z, r1, r2).Equal(e) == 1
}

// Accusation proves that Accuser's AEAD key with Dealer is Key's
// derivation: Key = Z, the Diffie–Hellman value of the accuser's and the
// dealer's advertised encryption keys, and Proof the Chaum–Pedersen proof
// of it bound to the round and the ordered pair (active variant; see the
// comment at the top of dleq.go).
type Accusation struct {
	Dealer uint32
	Key    []byte // Z_AD, 32 bytes
	Proof  []byte // (e, s), 64 bytes
}

// Accuse returns accuser's accusation against dealer for the round
// roundID: encSeed is the 64 bytes the accuser's encryption key was drawn
// from (the first 64 bytes its Client read from its randomness),
// dealerKey the dealer's advertised encryption key. For tests that play a
// rogue accuser over the wire; Client.MaskedInput accuses by itself.
func Accuse(roundID []byte, accuser, dealer uint32, encSeed, dealerKey []byte, rnd io.Reader) (Accusation, error) {
	k, err := encKeyFromSeed(encSeed)
	if err != nil {
		return Accusation{}, err
	}
	y, err := parsePoint(dealerKey)
	if err != nil {
		return Accusation{}, fmt.Errorf("secagg: the dealer's encryption key %w", err)
	}
	return k.accuse(roundID, accuser, dealer, y, rnd)
}

func (k *encKey) accuse(roundID []byte, accuser, dealer uint32, y *edwards25519.Point, rnd io.Reader) (Accusation, error) {
	z, proof, err := dleqProve(dleqContext(roundID, accuser, dealer), k.c, y, rnd)
	if err != nil {
		return Accusation{}, err
	}
	return Accusation{Dealer: dealer, Key: z.Bytes(), Proof: proof}, nil
}

// checkAccusation verifies a's proof against the two advertised keys and
// returns the pair's AEAD key.
func (cfg Config) checkAccusation(accuser uint32, accuserKey, dealerKey []byte, a Accusation) ([]byte, error) {
	x, err := parsePoint(accuserKey)
	if err != nil {
		return nil, fmt.Errorf("site %d's encryption key %w", accuser, err)
	}
	y, err := parsePoint(dealerKey)
	if err != nil {
		return nil, fmt.Errorf("site %d's encryption key %w", a.Dealer, err)
	}
	z, err := parsePoint(a.Key)
	if err != nil {
		return nil, fmt.Errorf("the revealed key %w", err)
	}
	if !dleqVerify(dleqContext(cfg.RoundID, accuser, a.Dealer), x, y, z, a.Proof) {
		return nil, fmt.Errorf("its proof that the revealed key is the Diffie–Hellman value of sites %d's and %d's encryption keys for this round does not verify (wrong key, or a proof for another round or pair)", accuser, a.Dealer)
	}
	return encKeyOf(z, cfg.RoundID)
}
