package dp

import (
	"math"
	"math/big"
	"slices"
	"testing"
)

// Statistical tests in this package use fixed seeds, so each is
// deterministic; the stated false-failure rate is the probability that a
// correct sampler fails the check for a seed chosen at random, i.e. how
// unlucky a seed must be to fail. z-bounds of 5.33 standard deviations have
// two-sided normal tail 9.8e-8 (normal approximation to a mean of ≥ 10^5
// draws).

const zBound = 5.33 // P(|N(0,1)| > 5.33) = 9.8e-8

// scriptedSource returns the given words in order, then panics.
type scriptedSource struct {
	words []uint64
	i     int
}

func (s *scriptedSource) Uint64() uint64 {
	if s.i == len(s.words) {
		panic("scriptedSource: out of words")
	}
	s.i++
	return s.words[s.i-1]
}

func TestSeededSourceDeterministic(t *testing.T) {
	a, b, c := NewSeededSource(7), NewSeededSource(7), NewSeededSource(8)
	same, diff := true, false
	for range 1000 {
		x, y, z := a.Uint64(), b.Uint64(), c.Uint64()
		same = same && x == y
		diff = diff || x != z
	}
	if !same || !diff {
		t.Fatalf("seeded sources: same seed identical = %v, different seeds differ = %v", same, diff)
	}
}

// TestSecureSourceDiffers: two secure sources must not produce the same 1000
// words (for crypto/rand this has probability 2^-64000), and crossing every
// refill's boundary (256 B, doubling up to 4 KiB, then 4 KiB each) must keep
// producing fresh words.
func TestSecureSourceDiffers(t *testing.T) {
	a, b := NewSecureSource(), NewSecureSource()
	equal, repeats := 0, 0
	seen := map[uint64]bool{}
	for range 3 * secureBufferSize / 8 {
		x, y := a.Uint64(), b.Uint64()
		if x == y {
			equal++
		}
		if seen[x] {
			repeats++
		}
		seen[x] = true
	}
	if equal > 0 || repeats > 0 {
		t.Fatalf("secure sources: %d equal words across sources, %d repeated words (expected 0)", equal, repeats)
	}
}

// streamPrefix returns U's first k bits as the binary fraction 0.b₁…b_k, where
// the stream b₁b₂… is the words in order, each from its least significant bit
// (bitSource.bits' order), exactly.
func streamPrefix(words []uint64, k int) *big.Rat {
	u := new(big.Rat)
	for i := range k {
		if words[i/64]>>(i%64)&1 == 1 {
			u.Add(u, new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), uint(i+1))))
		}
	}
	return u
}

// checkPrefixDecision checks a Bernoulli(p) trial against its definition
// U < p, U = 0.b₁b₂… the bit stream: after reading k bits the outcome must be
// settled — true only if every continuation is < p (prefix + 2^-k ≤ p), false
// only if every continuation is ≥ p (prefix ≥ p).
func checkPrefixDecision(t *testing.T, what string, words []uint64, k int, got bool, p *big.Rat) {
	t.Helper()
	u := streamPrefix(words, k)
	if got {
		u.Add(u, new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), uint(k))))
		if u.Cmp(p) > 0 {
			t.Fatalf("%s: true after %d bits of %x, but some continuation is ≥ p", what, k, words)
		}
	} else if u.Cmp(p) < 0 {
		t.Fatalf("%s: false after %d bits of %x, but the prefix is < p", what, k, words)
	}
}

// TestBernoulliExact checks bernoulli(p) and bernoulliRatio(u, t) against
// their definition "U < p" for U the bit stream they read, exactly with
// math/big — for random words (often zero, to take the long paths) and p
// over many binades, including subnormal p. Deterministic: no false failures.
func TestBernoulliExact(t *testing.T) {
	gen := NewSeededSource(1)
	words := make([]uint64, 24)
	script := func(trial int) *scriptedSource {
		for i := range words {
			words[i] = gen.Uint64()
			if i < trial%5 {
				words[i] = 0
			}
		}
		return &scriptedSource{words: words}
	}
	ps := []float64{0.5, 0.75, 0.999999, 1e-3, 0x1.8p-12, 0x1.fffffffffffffp-13, 1e-10, 0x1.3p-63, 0x1p-64, 0x1.7p-70, 1e-30, 1e-100, 5e-324, 0x1p-1074}
	for _, p := range ps {
		pr := new(big.Rat).SetFloat64(p)
		for trial := range 1500 {
			src := script(trial)
			r := bitSource{src: src}
			got := r.bernoulli(p)
			checkPrefixDecision(t, "bernoulli("+big.NewFloat(p).String()+")", words, 64*src.i-int(r.n), got, pr)
		}
	}
	for _, ut := range [][2]uint64{{1, 2}, {1, 3}, {2, 3}, {1, 7}, {5, 7}, {0, 5}, {12345, 1<<53 - 1}, {1<<52 + 1, 1<<53 + 3}} {
		pr := new(big.Rat).SetFrac(new(big.Int).SetUint64(ut[0]), new(big.Int).SetUint64(ut[1]))
		for trial := range 1500 {
			src := script(trial)
			r := bitSource{src: src}
			got := r.bernoulliRatio(ut[0], ut[1])
			checkPrefixDecision(t, "bernoulliRatio", words, 64*src.i-int(r.n), got, pr)
		}
	}
	r := bitSource{src: &scriptedSource{}}
	if r.bernoulli(0) || r.bernoulli(-1) || r.bernoulli(math.NaN()) || !r.bernoulli(1) || !r.bernoulli(2) ||
		!r.bernoulliRatio(3, 3) || !r.oneIn(1) {
		t.Fatal("Bernoulli edge cases (must consume no randomness)")
	}
}

// TestBitsStream checks that bits hands out the words' bits in order, with
// no bit lost or reused across word boundaries. Deterministic.
func TestBitsStream(t *testing.T) {
	gen := NewSeededSource(4)
	words := make([]uint64, 64)
	for i := range words {
		words[i] = gen.Uint64()
	}
	r := bitSource{src: &scriptedSource{words: words}}
	pos := 0
	for _, k := range []uint{1, 3, 64, 7, 60, 64, 5, 59, 64, 1, 63, 64, 64, 2, 62, 13, 17, 64} {
		got := r.bits(k)
		var want uint64
		for j := range int(k) {
			want |= (words[(pos+j)/64] >> ((pos + j) % 64) & 1) << j
		}
		if got != want {
			t.Fatalf("bits(%d) at stream position %d = %x, want %x", k, pos, got, want)
		}
		pos += int(k)
	}
}

// checkRate fails if k successes in n trials is more than zBound standard
// deviations from n·p (false-failure rate ≈ 1e-7 per call).
func checkRate(t *testing.T, what string, k, n int, p float64) {
	t.Helper()
	sd := math.Sqrt(float64(n) * p * (1 - p))
	if d := math.Abs(float64(k) - float64(n)*p); d > zBound*sd+1e-9 {
		t.Errorf("%s: %d/%d successes, want %.6g·n ± %.3g (off by %.2f sd)", what, k, n, p, zBound*sd, d/sd)
	}
}

// TestExactTrials checks the frequencies of the exact Bernoulli and
// uniform-integer primitives. 20 checks at ≈1e-7 each: false-failure rate
// < 2e-6.
func TestExactTrials(t *testing.T) {
	r := bitSource{src: NewSeededSource(2)}
	const n = 200_000
	count := func(f func() bool) int {
		k := 0
		for range n {
			if f() {
				k++
			}
		}
		return k
	}
	for _, p := range []float64{0.5, 0.3, 1e-3} {
		checkRate(t, "bernoulli", count(func() bool { return r.bernoulli(p) }), n, p)
	}
	for _, g := range []float64{0, 0.3, 0.999} {
		checkRate(t, "expNeg01", count(func() bool { return r.expNeg01(g) }), n, math.Exp(-g))
	}
	checkRate(t, "expNeg1", count(r.expNeg1), n, math.Exp(-1))
	for _, ut := range [][2]uint64{{0, 7}, {3, 7}, {6, 7}, {1 << 51, 3 << 51}} {
		checkRate(t, "expNegRatio", count(func() bool { return r.expNegRatio(ut[0], ut[1]) }), n,
			math.Exp(-float64(ut[0])/float64(ut[1])))
	}
	for _, c := range []struct {
		g float64
		k int
	}{{2.5, 2}, {3.25, 1}, {7.5, 7}, {1, 1}} {
		checkRate(t, "expNegShifted", count(func() bool { return r.expNegShifted(c.g, c.k) }), n,
			math.Exp(-(c.g - float64(c.k))))
	}
	// uint64n: each residue of n = 7 and each third of [0, 3·2^62) has
	// probability 1/7 resp. 1/3; also the bit primitive.
	checkRate(t, "uint64n(7) == 4", count(func() bool { return r.uint64n(7) == 4 }), n, 1.0/7)
	checkRate(t, "uint64n(8) == 5", count(func() bool { return r.uint64n(8) == 5 }), n, 1.0/8)
	checkRate(t, "uint64n(3·2^62) top third", count(func() bool { return r.uint64n(3<<62) >= 2<<62 }), n, 1.0/3)
	checkRate(t, "bit", count(r.bit), n, 0.5)
	checkRate(t, "oneIn(5)", count(func() bool { return r.oneIn(5) }), n, 0.2)
}

func TestExpNegShiftedPanicsBelowK(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("expNegShifted(0.5, 1) did not panic")
		}
	}()
	r := bitSource{src: NewSeededSource(3)}
	r.expNegShifted(0.5, 1)
}

// TestExpNeg1Digits checks the table of e⁻¹'s digits: its first 54 bits
// against math.Exp(−1), prefixes of different lengths against each other,
// and that expNeg1 stays exact past the table (a stream that matches all
// 1024 tabulated digits falls through to the computed 129th byte).
// Deterministic.
func TestExpNeg1Digits(t *testing.T) {
	digits := expNeg1Digits()
	if len(digits) != 128 {
		t.Fatalf("%d digit bytes, want 128", len(digits))
	}
	head := new(big.Int).SetBytes(digits[:8])
	if got := math.Ldexp(float64(head.Uint64()>>10), -54); math.Abs(got-math.Exp(-1)) > 0x1p-54 {
		t.Errorf("digits give e⁻¹ ≈ %.17g, want %.17g", got, math.Exp(-1))
	}
	full := new(big.Int).SetBytes(digits)
	for _, n := range []int{1, 7, 64, 500, 1024} {
		if want := new(big.Int).Rsh(full, uint(1024-n)); expNeg1Prefix(n).Cmp(want) != 0 {
			t.Errorf("expNeg1Prefix(%d) disagrees with the table", n)
		}
	}
	next := byte(expNeg1Prefix(1032).Uint64())
	for _, b := range []byte{next - 1, next + 1} {
		// bits(8) hands out each word's bytes from the least significant.
		words := make([]uint64, 17)
		for i, d := range append(slices.Clone(digits), b) {
			words[i/8] |= uint64(d) << (8 * (i % 8))
		}
		r := bitSource{src: &scriptedSource{words: words}}
		if got, want := r.expNeg1(), b < next; got != want {
			t.Errorf("expNeg1 on a stream equal to e⁻¹'s first 1024 digits then byte %#x = %v, want %v", b, got, want)
		}
	}
}
