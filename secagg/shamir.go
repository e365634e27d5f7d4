package secagg

import (
	"fmt"
	"io"
	"math/big"
)

// Shamir t-of-n secret sharing (Shamir, "How to share a secret", CACM 1979)
// of 32-byte secrets over the prime field GF(p), p = 2^521 − 1 (a Mersenne
// prime, so every 256-bit secret is a field element and no chunking is
// needed). The dealer picks a uniformly random polynomial f of degree t − 1
// with f(0) = secret; share i is (i, f(i)) for i = 1..n (the site's id).
// Any t shares determine f(0) by Lagrange interpolation at 0; any t − 1
// shares are jointly uniform and independent of the secret (perfect
// secrecy: for every secret there is exactly one polynomial through the
// t − 1 points and (0, secret), and the coefficients are uniform).
//
// math/big is not constant time; the shares are handled only by the
// dealer, the recipient (after decryption) and the server at unmasking,
// none of which is exposed to a timing adversary in our deployment model
// (deploy/README.md).

// fieldPrime is p = 2^521 − 1.
var fieldPrime = func() *big.Int {
	p := new(big.Int).Lsh(big.NewInt(1), 521)
	return p.Sub(p, big.NewInt(1))
}()

// shareLen is the byte length of a share value (⌈521/8⌉).
const shareLen = 66

// secretLen is the length of every shared secret (X25519 private keys and
// self-mask seeds).
const secretLen = 32

// Share is one point (X, f(X)) of a sharing polynomial.
type Share struct {
	X uint32 `msgpack:"x"`
	Y []byte `msgpack:"y"` // big-endian, shareLen bytes, < p
}

// shamirSplit shares secret (secretLen bytes) among xs (distinct, non-zero)
// with threshold t, drawing coefficients from rnd.
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
	coef := make([]*big.Int, t)
	coef[0] = new(big.Int).SetBytes(secret)
	for i := 1; i < t; i++ {
		c, err := randField(rnd)
		if err != nil {
			return nil, err
		}
		coef[i] = c
	}
	out := make([]Share, len(xs))
	y := new(big.Int)
	x := new(big.Int)
	for j, xi := range xs {
		x.SetUint64(uint64(xi))
		y.SetInt64(0)
		for i := t - 1; i >= 0; i-- { // Horner
			y.Mul(y, x)
			y.Add(y, coef[i])
			y.Mod(y, fieldPrime)
		}
		out[j] = Share{X: xi, Y: y.FillBytes(make([]byte, shareLen))}
	}
	return out, nil
}

// shamirCombine reconstructs the secret from exactly the given shares
// (at least t of them, distinct non-zero X, Y < p) by Lagrange
// interpolation at 0. With fewer than t shares the result is garbage, not
// an error: the caller must pass ≥ t.
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
func lagrangeAtZero(xs []uint32) ([]*big.Int, error) {
	if len(xs) == 0 {
		return nil, fmt.Errorf("secagg: no shares to combine")
	}
	if err := checkXs(xs); err != nil {
		return nil, err
	}
	lam := make([]*big.Int, len(xs))
	num, den, tmp := new(big.Int), new(big.Int), new(big.Int)
	for i, xi := range xs {
		num.SetInt64(1)
		den.SetInt64(1)
		for j, xj := range xs {
			if j == i {
				continue
			}
			num.Mul(num, tmp.SetUint64(uint64(xj)))
			num.Mod(num, fieldPrime)
			tmp.SetInt64(int64(xj) - int64(xi))
			den.Mul(den, tmp)
			den.Mod(den, fieldPrime)
		}
		den.ModInverse(den, fieldPrime)
		lam[i] = new(big.Int).Mul(num, den)
		lam[i].Mod(lam[i], fieldPrime)
	}
	return lam, nil
}

// combineWith returns Σ λᵢ·Yᵢ mod p as a secretLen-byte secret; shares[i]
// must be the share at the point λᵢ was computed for.
func combineWith(lam []*big.Int, shares []Share) ([]byte, error) {
	if len(lam) != len(shares) {
		return nil, fmt.Errorf("secagg: %d shares for %d interpolation points", len(shares), len(lam))
	}
	sum, tmp := new(big.Int), new(big.Int)
	for i, si := range shares {
		if len(si.Y) != shareLen {
			return nil, fmt.Errorf("secagg: share of site %d is %d bytes, want %d", si.X, len(si.Y), shareLen)
		}
		tmp.SetBytes(si.Y)
		if tmp.Cmp(fieldPrime) >= 0 {
			return nil, fmt.Errorf("secagg: share of site %d is not a field element", si.X)
		}
		tmp.Mul(tmp, lam[i])
		sum.Add(sum, tmp)
		sum.Mod(sum, fieldPrime)
	}
	if sum.BitLen() > 8*secretLen {
		return nil, fmt.Errorf("secagg: shares do not interpolate to a %d-byte secret (inconsistent or too few shares)", secretLen)
	}
	return sum.FillBytes(make([]byte, secretLen)), nil
}

func checkXs(xs []uint32) error {
	seen := make(map[uint32]bool, len(xs))
	for _, x := range xs {
		if x == 0 {
			return fmt.Errorf("secagg: share point 0 would reveal the secret")
		}
		if seen[x] {
			return fmt.Errorf("secagg: duplicate share point %d", x)
		}
		seen[x] = true
	}
	return nil
}

// randField returns a uniform element of GF(p) (rejection sampling on 521
// random bits).
func randField(rnd io.Reader) (*big.Int, error) {
	buf := make([]byte, shareLen)
	for {
		if _, err := io.ReadFull(rnd, buf); err != nil {
			return nil, fmt.Errorf("secagg: randomness: %w", err)
		}
		buf[0] &= 0x01 // keep 521 bits
		v := new(big.Int).SetBytes(buf)
		if v.Cmp(fieldPrime) < 0 {
			return v, nil
		}
	}
}
