package dp

import (
	"math"
	"math/big"
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
// words (for crypto/rand this has probability 2^-64000), and crossing the
// 4 KiB buffer boundary must keep producing fresh words.
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

// TestBernoulliExact checks bernoulli(p) against its definition "U < p" for
// U the binary fraction of the words it consumes, computed exactly with
// math/big — for random words and p over many binades (all code paths: z ≤ 11,
// 12 ≤ z < 64, z ≥ 64, subnormal p). Deterministic: no false failures.
func TestBernoulliExact(t *testing.T) {
	gen := NewSeededSource(1)
	ps := []float64{0.5, 0.75, 0.999999, 1e-3, 0x1.8p-12, 0x1.fffffffffffffp-13, 1e-10, 0x1.3p-63, 0x1p-64, 0x1.7p-70, 1e-30, 1e-100, 5e-324, 0x1p-1074}
	for _, p := range ps {
		for trial := range 2000 {
			words := make([]uint64, 20)
			for i := range words {
				words[i] = gen.Uint64()
			}
			// Make the early words often zero so the long paths are taken.
			zeros := trial % 4
			for i := 0; i < zeros && i < len(words)-2; i++ {
				words[i] = 0
			}
			src := &scriptedSource{words: words}
			r := bitSource{src: src}
			got := r.bernoulli(p)
			// U = 0.w1 w2 … w_used (exactly, in 64·used bits).
			u := new(big.Float).SetPrec(64*20 + 64)
			for i := src.i - 1; i >= 0; i-- {
				u.Add(u, new(big.Float).SetUint64(words[i]))
				u.SetMantExp(u, -64)
			}
			want := u.Cmp(new(big.Float).SetFloat64(p)) < 0
			// U's unread bits can only raise it; the decision must already
			// be settled by the read prefix: if the prefix is < p then so is
			// prefix + 2^-(64·used) ≤ p.
			if got != want {
				t.Fatalf("bernoulli(%g) with words %x = %v, want %v", p, words[:src.i], got, want)
			}
			if want {
				ulp := new(big.Float).SetMantExp(big.NewFloat(1), -64*src.i)
				if u.Add(u, ulp).Cmp(new(big.Float).SetFloat64(p)) > 0 {
					t.Fatalf("bernoulli(%g) decided true too early with words %x", p, words[:src.i])
				}
			}
		}
	}
	r := bitSource{src: &scriptedSource{}}
	if r.bernoulli(0) || r.bernoulli(-1) || r.bernoulli(math.NaN()) || !r.bernoulli(1) || !r.bernoulli(2) {
		t.Fatal("bernoulli edge cases (must consume no randomness)")
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
// uniform-integer primitives. 19 checks at ≈1e-7 each: false-failure rate
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
