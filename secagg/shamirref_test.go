package secagg

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"testing"
)

// A math/big reference of the machine-word sharing of shamir.go: the same
// scheme (p = 2^61 − 1, five 52-bit pieces, coefficients read from the
// randomness in the same order), written straightforwardly with big
// integers and shifts instead of limb tricks, modular inverses from
// math/big instead of Fermat. The fast code is tested against it.

var refP = big.NewInt(fieldP)

// refPieces cuts the 256-bit secret into pieces with big.Int shifts.
func refPieces(secret []byte) []*big.Int {
	s := new(big.Int).SetBytes(secret)
	mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), limbBits), big.NewInt(1))
	out := make([]*big.Int, limbs)
	for l := range out {
		out[l] = new(big.Int).And(new(big.Int).Rsh(s, uint(l*limbBits)), mask)
	}
	return out
}

func refSplit(secret []byte, xs []uint32, t int, rnd io.Reader) ([]Share, error) {
	buf := make([]byte, 8*limbs*(t-1))
	if _, err := io.ReadFull(rnd, buf); err != nil {
		return nil, err
	}
	pieces := refPieces(secret)
	coef := make([][]*big.Int, limbs)
	k := 0
	for l := range coef {
		coef[l] = []*big.Int{pieces[l]}
		for i := 1; i < t; i++ {
			c := binary.LittleEndian.Uint64(buf[8*k:]) & fieldP
			k++
			for c == fieldP {
				var b [8]byte
				if _, err := io.ReadFull(rnd, b[:]); err != nil {
					return nil, err
				}
				c = binary.LittleEndian.Uint64(b[:]) & fieldP
			}
			coef[l] = append(coef[l], new(big.Int).SetUint64(c))
		}
	}
	out := make([]Share, len(xs))
	for j, xi := range xs {
		y := make([]byte, 0, shareLen)
		for l := 0; l < limbs; l++ {
			// Σ c_i x^i with explicit powers (not Horner).
			v, pow := new(big.Int), big.NewInt(1)
			for _, c := range coef[l] {
				v.Add(v, new(big.Int).Mul(c, pow))
				pow.Mul(pow, big.NewInt(int64(xi))).Mod(pow, refP)
			}
			v.Mod(v, refP)
			y = append(y, v.FillBytes(make([]byte, 8))...)
		}
		out[j] = Share{X: xi, Y: y}
	}
	return out, nil
}

// refEval evaluates at x the piece-wise polynomials interpolating pts (X
// may be 0 here: refEval(pts, 0) is the reconstruction).
func refEval(pts []Share, x uint32) []*big.Int {
	out := make([]*big.Int, limbs)
	for l := range out {
		sum := new(big.Int)
		for i, pi := range pts {
			term := new(big.Int).SetBytes(pi.Y[8*l : 8*l+8])
			for j, pj := range pts {
				if i == j {
					continue
				}
				num := big.NewInt(int64(x) - int64(pj.X))
				den := big.NewInt(int64(pi.X) - int64(pj.X))
				den.Mod(den, refP).ModInverse(den, refP)
				term.Mul(term, num).Mul(term, den).Mod(term, refP)
			}
			sum.Add(sum, term).Mod(sum, refP)
		}
		out[l] = sum
	}
	return out
}

func refCombine(shares []Share) ([]byte, error) {
	pieces := refEval(shares, 0)
	s := new(big.Int)
	for l, v := range pieces {
		s.Or(s, new(big.Int).Lsh(v, uint(l*limbBits)))
	}
	if s.BitLen() > 8*secretLen {
		return nil, fmt.Errorf("does not interpolate to a secret")
	}
	return s.FillBytes(make([]byte, secretLen)), nil
}

// refShare packs pieces as a share value.
func refShare(v []*big.Int) []byte {
	y := make([]byte, 0, shareLen)
	for _, x := range v {
		y = append(y, x.FillBytes(make([]byte, 8))...)
	}
	return y
}

func TestShamirMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 60; trial++ {
		n := 2 + rng.IntN(40)
		th := 1 + rng.IntN(n)
		secret := make([]byte, secretLen)
		testRand(uint64(trial)).Read(secret)
		switch trial {
		case 0:
			secret = bytes.Repeat([]byte{0xff}, secretLen)
		case 1:
			secret = make([]byte, secretLen)
		}
		xs := make([]uint32, n)
		for i := range xs {
			xs[i] = uint32(1 + i*(1+rng.IntN(200)))
		}
		xs = dedup(xs)
		if th > len(xs) {
			th = len(xs)
		}
		fast, err := shamirSplit(secret, xs, th, testRand(uint64(100+trial)))
		if err != nil {
			t.Fatal(err)
		}
		ref, err := refSplit(secret, xs, th, testRand(uint64(100+trial)))
		if err != nil {
			t.Fatal(err)
		}
		for i := range fast {
			if fast[i].X != ref[i].X || !bytes.Equal(fast[i].Y, ref[i].Y) {
				t.Fatalf("trial %d share %d: fast %x, reference %x", trial, i, fast[i].Y, ref[i].Y)
			}
		}
		sub := fast[:th+rng.IntN(len(xs)-th+1)]
		got, err := shamirCombine(sub)
		if err != nil {
			t.Fatal(err)
		}
		want, err := refCombine(sub)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) || !bytes.Equal(got, secret) {
			t.Fatalf("trial %d: fast %x, reference %x, secret %x", trial, got, want, secret)
		}
		// Too few shares: the reference gives some value, the fast code the
		// same value or the same refusal.
		if th > 1 {
			few := fast[:th-1]
			g, errF := shamirCombine(few)
			w, errR := refCombine(few)
			if (errF == nil) != (errR == nil) || (errF == nil && !bytes.Equal(g, w)) {
				t.Fatalf("trial %d, t−1 shares: fast %x %v, reference %x %v", trial, g, errF, w, errR)
			}
		}
	}
}

func TestFieldOpsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	edge := []uint64{0, 1, 2, fieldP - 1, fieldP - 2, 1 << 60, 1<<61 - 3}
	for i := 0; i < 5000; i++ {
		a, b := rng.Uint64N(fieldP), rng.Uint64N(fieldP)
		if i < len(edge)*len(edge) {
			a, b = edge[i/len(edge)], edge[i%len(edge)]
		}
		A, B := new(big.Int).SetUint64(a), new(big.Int).SetUint64(b)
		check := func(op string, got uint64, want *big.Int) {
			if want.Mod(want, refP); got != want.Uint64() {
				t.Fatalf("%d %s %d = %d, want %d", a, op, b, got, want.Uint64())
			}
		}
		check("·", fmul(a, b), new(big.Int).Mul(A, B))
		check("+", fadd(a, b), new(big.Int).Add(A, B))
		check("−", fsub(a, b), new(big.Int).Sub(A, B))
		if a != 0 {
			check("⁻¹", finv(a), new(big.Int).ModInverse(A, refP))
		}
	}
}

func dedup(xs []uint32) []uint32 {
	seen := map[uint32]bool{}
	out := xs[:0]
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
