package secagg

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
)

// Shamir t-of-n secret sharing (Shamir, "How to share a secret", CACM 1979)
// of 32-byte secrets in machine-word arithmetic: over the prime field
// GF(p), p = 2^61 − 1 (a Mersenne prime: a product of two field elements is
// one 64×64 → 128-bit multiplication and a shift-add reduction). A 256-bit
// secret is cut into limbs = 5 pieces of limbBits = 52 bits (the last holds
// 48), each < 2^52 < p, and each piece is shared with its own uniformly
// random polynomial f_ℓ of degree t − 1, f_ℓ(0) = piece ℓ; share i is
// (i, f_0(i), …, f_4(i)) for i the site's id. Any t shares determine every
// f_ℓ(0) by Lagrange interpolation at 0; any t − 1 shares are jointly
// uniform and independent of the secret (perfect secrecy for each piece:
// for every value of the piece there is exactly one polynomial through the
// t − 1 points and (0, piece), and the pieces' polynomials are drawn
// independently). The evaluation points are site ids ≤ protocol.MaxSites,
// far below p, so they are distinct non-zero field elements.
//
// The 2017 implementation used math/big over 2^521 − 1 (one piece): a
// site's sharing cost 2·K·t multiplications of 521-bit numbers and
// reductions, ≈ 40 ms per site at K = 256, and dominated a round's CPU
// (issue 27). Here it is 2·5·K·t word multiplications (≈ 1 ms at K = 256).
// shamirref_test.go keeps a math/big reference of this same scheme, and
// the tests check that both give the same shares from the same randomness
// and the same reconstructions.
//
// The arithmetic is on uint64 with data-independent operations except the
// final conditional subtraction; as before, the shares are handled only by
// the dealer, the recipient (after decryption) and the server at
// unmasking, none of which is exposed to a timing adversary in our
// deployment model (deploy/README.md).

const (
	// fieldP is p = 2^61 − 1.
	fieldP = 1<<61 - 1
	// limbs is the number of field elements per share.
	limbs = 5
	// limbBits is the width of a secret's pieces (5·52 = 260 ≥ 256).
	limbBits = 52
	// shareLen is the byte length of a share value: limbs big-endian
	// 8-byte field elements.
	shareLen = 8 * limbs
	// secretLen is the length of every shared secret (X25519 private keys
	// and self-mask seeds).
	secretLen = 32
)

// Share is one point (X, f(X)) of a sharing polynomial.
type Share struct {
	X uint32 `msgpack:"x"`
	Y []byte `msgpack:"y"` // shareLen bytes: limbs big-endian field elements < p
	// Nonce is the dealer's nonce for this holder's commitments
	// (commit.go), revealed with the share in the active variant so that
	// the server can check it against the dealer's signed list.
	Nonce []byte `msgpack:"nonce,omitempty"`
}

// fmul returns a·b mod p for a, b < p.
func fmul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	// a·b = hi·2^64 + lo = (hi·2^3 + lo>>61)·2^61 + (lo & p) ≡ (hi<<3 | lo>>61) + (lo & p).
	return fred(hi<<3 | lo>>61 + lo&fieldP)
}

// fred reduces x < 2^62 + 2^61 modulo p.
func fred(x uint64) uint64 {
	x = x&fieldP + x>>61
	if x >= fieldP {
		x -= fieldP
	}
	return x
}

// fadd returns a + b mod p for a, b < p.
func fadd(a, b uint64) uint64 { return fred(a + b) }

// fsub returns a − b mod p for a, b < p.
func fsub(a, b uint64) uint64 { return fred(a + fieldP - b) }

// finv returns a^{-1} mod p (a ≠ 0) by Fermat: a^{p−2}.
func finv(a uint64) uint64 {
	r, e := uint64(1), uint64(fieldP-2)
	for e > 0 {
		if e&1 == 1 {
			r = fmul(r, a)
		}
		a = fmul(a, a)
		e >>= 1
	}
	return r
}

// secretLimbs cuts a big-endian 32-byte secret into limbs pieces of
// limbBits bits, least significant first.
func secretLimbs(secret []byte) [limbs]uint64 {
	var w [4]uint64 // little-endian 64-bit words of the 256-bit integer
	for i := range w {
		w[i] = binary.BigEndian.Uint64(secret[secretLen-8*(i+1):])
	}
	var out [limbs]uint64
	for l := range out {
		off := l * limbBits
		v := w[off/64] >> (off % 64)
		if off%64+limbBits > 64 && off/64+1 < 4 {
			v |= w[off/64+1] << (64 - off%64)
		}
		out[l] = v & (1<<limbBits - 1)
	}
	return out
}

// limbsSecret inverts secretLimbs; it fails unless every piece fits its
// width (the top one 256 − 4·52 = 48 bits): shares that do not interpolate
// to a secret (inconsistent or too few) are refused.
func limbsSecret(v [limbs]uint64) ([]byte, error) {
	var w [4]uint64
	for l, x := range v {
		width := limbBits
		if l == limbs-1 {
			width = 8*secretLen - (limbs-1)*limbBits
		}
		if x>>width != 0 {
			return nil, fmt.Errorf("secagg: shares do not interpolate to a %d-byte secret (inconsistent or too few shares)", secretLen)
		}
		off := l * limbBits
		w[off/64] |= x << (off % 64)
		if off%64+width > 64 {
			w[off/64+1] |= x >> (64 - off%64)
		}
	}
	out := make([]byte, secretLen)
	for i := range w {
		binary.BigEndian.PutUint64(out[secretLen-8*(i+1):], w[i])
	}
	return out, nil
}

// shamirSplit shares secret (secretLen bytes) among xs (distinct, non-zero)
// with threshold t, drawing coefficients from rnd (8 bytes each, read at
// once; rejection of the all-ones 61-bit value, probability 2^-61).
func shamirSplit(secret []byte, xs []uint32, t int, rnd io.Reader) ([]Share, error) {
	if len(secret) != secretLen {
		return nil, fmt.Errorf("secagg: secret is %d bytes, want %d", len(secret), secretLen)
	}
	if t < 1 || t > len(xs) {
		return nil, fmt.Errorf("secagg: threshold %d out of range [1, %d]", t, len(xs))
	}
	if err := checkXs(xs); err != nil {
		return nil, err
	}
	// coef[l*t+i] is the coefficient of x^i of piece l's polynomial.
	coef := make([]uint64, limbs*t)
	buf := make([]byte, 8*limbs*(t-1))
	if _, err := io.ReadFull(rnd, buf); err != nil {
		return nil, fmt.Errorf("secagg: randomness: %w", err)
	}
	pieces := secretLimbs(secret)
	k := 0
	for l := 0; l < limbs; l++ {
		coef[l*t] = pieces[l]
		for i := 1; i < t; i++ {
			c := binary.LittleEndian.Uint64(buf[8*k:]) & fieldP
			k++
			for c == fieldP { // p itself is not a field element
				var b [8]byte
				if _, err := io.ReadFull(rnd, b[:]); err != nil {
					return nil, fmt.Errorf("secagg: randomness: %w", err)
				}
				c = binary.LittleEndian.Uint64(b[:]) & fieldP
			}
			coef[l*t+i] = c
		}
	}
	out := make([]Share, len(xs))
	ys := make([]byte, shareLen*len(xs))
	for j, xi := range xs {
		x := uint64(xi)
		y := ys[shareLen*j : shareLen*(j+1) : shareLen*(j+1)]
		for l := 0; l < limbs; l++ {
			c := coef[l*t : (l+1)*t]
			v := c[t-1]
			for i := t - 2; i >= 0; i-- { // Horner
				v = fadd(fmul(v, x), c[i])
			}
			binary.BigEndian.PutUint64(y[8*l:], v)
		}
		out[j] = Share{X: xi, Y: y}
	}
	return out, nil
}

// shamirCombine reconstructs the secret from exactly the given shares
// (at least t of them, distinct non-zero X, every value < p) by Lagrange
// interpolation at 0. With fewer than t shares the result is garbage (an
// error when a piece does not fit its width), never the secret: the
// caller must pass ≥ t.
func shamirCombine(shares []Share) ([]byte, error) {
	xs := make([]uint32, len(shares))
	for i, s := range shares {
		xs[i] = s.X
	}
	lam, err := lagrangeAtZero(xs)
	if err != nil {
		return nil, err
	}
	return combineWith(lam, shares)
}

// lagrangeAtZero returns λᵢ = Π_{j≠i} x_j/(x_j − x_i) mod p, so that
// f(0) = Σ λᵢ f(xᵢ) for every polynomial of degree < len(xs). The server
// computes them once per unmasking (the responders are the same for every
// secret): O(t²) multiplications and t inversions, then O(t) per secret.
func lagrangeAtZero(xs []uint32) ([]uint64, error) {
	if len(xs) == 0 {
		return nil, fmt.Errorf("secagg: no shares to combine")
	}
	if err := checkXs(xs); err != nil {
		return nil, err
	}
	lam := make([]uint64, len(xs))
	for i, xi := range xs {
		num, den := uint64(1), uint64(1)
		for j, xj := range xs {
			if j == i {
				continue
			}
			num = fmul(num, uint64(xj))
			den = fmul(den, fsub(uint64(xj), uint64(xi)))
		}
		lam[i] = fmul(num, finv(den))
	}
	return lam, nil
}

// shareLimbs reads a share's field elements, refusing a wrong length or a
// value ≥ p.
func shareLimbs(s Share) ([limbs]uint64, error) {
	var v [limbs]uint64
	if len(s.Y) != shareLen {
		return v, fmt.Errorf("secagg: share of site %d is %d bytes, want %d", s.X, len(s.Y), shareLen)
	}
	for l := range v {
		v[l] = binary.BigEndian.Uint64(s.Y[8*l:])
		if v[l] >= fieldP {
			return v, fmt.Errorf("secagg: share of site %d is not a field element", s.X)
		}
	}
	return v, nil
}

// validShare reports whether s has the length and range of a share.
func validShare(y []byte) bool {
	_, err := shareLimbs(Share{Y: y})
	return err == nil
}

// combineWith returns Σ λᵢ·Yᵢ mod p, piece by piece, as a secretLen-byte
// secret; shares[i] must be the share at the point λᵢ was computed for.
func combineWith(lam []uint64, shares []Share) ([]byte, error) {
	if len(lam) != len(shares) {
		return nil, fmt.Errorf("secagg: %d shares for %d interpolation points", len(shares), len(lam))
	}
	var sum [limbs]uint64
	for i, si := range shares {
		v, err := shareLimbs(si)
		if err != nil {
			return nil, err
		}
		for l := range sum {
			sum[l] = fadd(sum[l], fmul(v[l], lam[i]))
		}
	}
	return limbsSecret(sum)
}

func checkXs(xs []uint32) error {
	seen := make(map[uint32]bool, len(xs))
	for _, x := range xs {
		if x == 0 {
			return fmt.Errorf("secagg: share point 0 would reveal the secret")
		}
		if uint64(x) >= fieldP {
			return fmt.Errorf("secagg: share point %d is not below the field's modulus", x)
		}
		if seen[x] {
			return fmt.Errorf("secagg: duplicate share point %d", x)
		}
		seen[x] = true
	}
	return nil
}
