package secagg

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func testRand(seed uint64) *rand.ChaCha8 {
	var s [32]byte
	s[0], s[1] = byte(seed), byte(seed>>8)
	return rand.NewChaCha8(s)
}

func TestShamirAnyTSharesReconstruct(t *testing.T) {
	rnd := testRand(1)
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		n := 2 + rng.IntN(15)
		th := 1 + rng.IntN(n)
		secret := make([]byte, secretLen)
		rnd.Read(secret)
		if trial == 0 {
			for i := range secret {
				secret[i] = 0xff // the largest secret
			}
		}
		xs := make([]uint32, n)
		for i := range xs {
			xs[i] = uint32(3*i + 1 + rng.IntN(3))
		}
		shares, err := shamirSplit(secret, xs, th, rnd)
		if err != nil {
			t.Fatal(err)
		}
		perm := rng.Perm(n)
		sub := make([]Share, 0, n)
		for _, p := range perm[:th+rng.IntN(n-th+1)] {
			sub = append(sub, shares[p])
		}
		got, err := shamirCombine(sub)
		if err != nil {
			t.Fatalf("n=%d t=%d: %v", n, th, err)
		}
		if !bytes.Equal(got, secret) {
			t.Fatalf("n=%d t=%d with %d shares: reconstructed %x, want %x", n, th, len(sub), got, secret)
		}
	}
}

// With t − 1 shares the secret is information-theoretically hidden: for
// every candidate secret s' there is a degree-(t−1) polynomial through the
// t − 1 shares and (0, s'). Build it (Lagrange through the t − 1 points and
// (0, s')), evaluate it at a fresh point, and check that shamirCombine on
// the t − 1 real shares plus that point returns s' — for several s',
// including the real secret. So the t − 1 shares exclude no secret.
func TestShamirTMinusOneSharesExcludeNoSecret(t *testing.T) {
	rnd := testRand(2)
	secret := bytes.Repeat([]byte{7}, secretLen)
	xs := []uint32{1, 2, 3, 4, 5}
	const th = 3
	shares, err := shamirSplit(secret, xs, th, rnd)
	if err != nil {
		t.Fatal(err)
	}
	known := shares[:th-1]
	for _, cand := range [][]byte{secret, bytes.Repeat([]byte{9}, secretLen), make([]byte, secretLen)} {
		pts := append([]Share{{X: 0, Y: pad(cand)}}, known...)
		y := lagrangeAt(pts, 5)
		got, err := shamirCombine(append(append([]Share{}, known...), Share{X: 5, Y: y}))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, cand) {
			t.Fatalf("candidate %x not consistent with the t−1 shares: got %x", cand, got)
		}
	}
}

// pad packs a secret's pieces as a share value (the point at 0).
func pad(b []byte) []byte { return refShare(refPieces(b)) }

// lagrangeAt evaluates at x the polynomial interpolating pts (X may be 0
// here), with the math/big reference.
func lagrangeAt(pts []Share, x uint32) []byte { return refShare(refEval(pts, x)) }

func TestShamirRejectsBadInput(t *testing.T) {
	rnd := testRand(3)
	s := make([]byte, secretLen)
	if _, err := shamirSplit(s, []uint32{1, 1, 2}, 2, rnd); err == nil {
		t.Error("duplicate points accepted")
	}
	if _, err := shamirSplit(s, []uint32{0, 1, 2}, 2, rnd); err == nil {
		t.Error("point 0 accepted")
	}
	if _, err := shamirSplit(s, []uint32{1, 2}, 3, rnd); err == nil {
		t.Error("threshold above n accepted")
	}
	if _, err := shamirSplit(s[:5], []uint32{1, 2}, 2, rnd); err == nil {
		t.Error("short secret accepted")
	}
	shares, _ := shamirSplit(s, []uint32{1, 2, 3}, 2, rnd)
	bad := []Share{shares[0], {X: 2, Y: bytes.Repeat([]byte{0xff}, shareLen)}}
	if _, err := shamirCombine(bad); err == nil {
		t.Error("share ≥ p accepted")
	}
}
