package dp

import (
	cryptorand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"sync"
)

// Source is a stream of independent, uniformly distributed 64-bit words: the
// only randomness the mechanisms of this package consume. It has the method
// set of math/rand/v2's Source, so a *rand.Rand can be driven by it.
//
// A Source is not safe for concurrent use; a Mechanism serializes its own.
type Source interface {
	Uint64() uint64
}

// secureBufferSize is how many bytes of crypto/rand output one refill takes
// at most. 4 KiB is 512 words: one getrandom call per 512 draws instead of
// one per draw. The first refill takes secureFirstRefill bytes and each
// next one twice the last, up to secureBufferSize: a source that draws
// little (a site of a few records: a few dozen noise values, under 1 KiB)
// neither allocates nor generates 4 KiB it never reads.
const (
	secureBufferSize  = 4096
	secureFirstRefill = 256
)

// secureSource reads crypto/rand through a buffer.
//
// The buffering follows google/differential-privacy, go/rand/rand.go
// (Copyright 2020 Google LLC, Apache License 2.0), which wraps
// crypto/rand.Reader in a 64 KiB bufio.Reader behind a mutex; ours is a plain
// byte buffer owned by one Mechanism (whose mutex serializes it), refilled
// whole from crypto/rand.Read.
type secureSource struct {
	buf []byte // the last refill; buf[pos:] is unread
	pos int
}

// NewSecureSource returns a Source backed by the operating system's
// cryptographically secure generator (crypto/rand). It is what private runs
// use. Consumed words are not reproducible, by design.
func NewSecureSource() Source {
	return &secureSource{}
}

// Uint64 returns the next 8 bytes of crypto/rand output.
func (s *secureSource) Uint64() uint64 {
	if s.pos+8 > len(s.buf) {
		n := min(max(2*len(s.buf), secureFirstRefill), secureBufferSize)
		if cap(s.buf) < n {
			s.buf = make([]byte, n)
		}
		s.buf = s.buf[:n]
		// Since Go 1.24 crypto/rand.Read never returns an error (it aborts
		// the program if the OS generator fails); the check documents that a
		// short read must never be turned into predictable noise.
		if _, err := cryptorand.Read(s.buf); err != nil {
			panic(fmt.Sprintf("dp: crypto/rand failed: %v", err))
		}
		s.pos = 0
	}
	v := binary.LittleEndian.Uint64(s.buf[s.pos:])
	s.pos += 8
	return v
}

// NewSeededSource returns a deterministic Source (math/rand/v2's PCG) for
// tests and reproducible non-private experiments. Its output is predictable
// from the seed: noise drawn from it gives no privacy at all.
func NewSeededSource(seed uint64) Source {
	return rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
}

// bitSource adds exact discrete primitives to a Source: bits, uniform
// integers, and Bernoulli trials whose success probability is a float64, a
// ratio of integers, or exp(−γ). Every primitive is exact: given independent
// uniform bits, its output has exactly the stated distribution, with no
// floating-point approximation. The samplers in noise_sample.go are built only
// from these. Bits are used sparingly (a Bernoulli trial needs 2 bits on
// average) because the secure source costs tens of ns per word.
type bitSource struct {
	src   Source
	cache uint64 // unused random bits, consumed from the low end
	n     uint   // how many bits of cache are unused
}

// bits returns k ∈ [1, 64] fresh uniform bits as the low bits of the result.
// The stream of bits it hands out is the source's words, each from its least
// significant bit up.
func (r *bitSource) bits(k uint) uint64 {
	if k <= r.n {
		v := r.cache & (1<<k - 1)
		r.cache >>= k
		r.n -= k
		return v
	}
	v, have := r.cache, r.n
	w := r.src.Uint64()
	need := k - have
	v |= (w & (1<<need - 1)) << have // shifts by 64 give 0 in Go
	r.cache, r.n = w>>need, 64-need
	return v
}

// bit returns one uniform bit (the next bit of the same stream as bits).
// It is small enough to be inlined into the bit-by-bit loops.
func (r *bitSource) bit() bool {
	if r.n == 0 {
		r.refill()
	}
	b := r.cache&1 == 1
	r.cache >>= 1
	r.n--
	return b
}

// refill loads a fresh word into the empty cache.
func (r *bitSource) refill() { r.cache, r.n = r.src.Uint64(), 64 }

// uint64n returns a uniform integer in [0, n), n ≥ 1, by Lemire's
// multiply-and-reject method ("Fast random integer generation in an
// interval", ACM TOMACS 2019), which is exact: the rejected products are
// precisely those that would make some residues more likely than others.
func (r *bitSource) uint64n(n uint64) uint64 {
	if n&(n-1) == 0 { // power of two (or 1): mask
		if n == 1 {
			return 0
		}
		return r.bits(uint(bits.TrailingZeros64(n)))
	}
	hi, lo := bits.Mul64(r.bits(64), n)
	if lo < n {
		thresh := -n % n // 2^64 mod n
		for lo < thresh {
			hi, lo = bits.Mul64(r.bits(64), n)
		}
	}
	return hi
}

// bernoulliRatio returns true with probability exactly u/t, 0 ≤ u ≤ t,
// 1 ≤ t < 2^63, comparing uniform bits b₁b₂… with the binary digits d₁d₂… of
// u/t (produced by long division) until they first differ: U = 0.b₁b₂… < u/t
// iff the first differing digit has bᵢ = 0, dᵢ = 1. The digits are exact
// integer arithmetic (rem < t < 2^63, so 2·rem does not overflow), and two
// bits are read on average.
func (r *bitSource) bernoulliRatio(u, t uint64) bool {
	if u >= t {
		return true
	}
	rem := u
	c, n := r.cache, r.n // the bit stream, kept in registers
	for {
		if n == 0 {
			c, n = r.src.Uint64(), 64
		}
		b := c&1 == 1
		c >>= 1
		n--
		rem <<= 1
		d := rem >= t
		if d {
			rem -= t
		}
		if b != d {
			r.cache, r.n = c, n
			return d // b = 0 < d = 1: U < u/t
		}
	}
}

// oneIn returns true with probability exactly 1/k, k ≥ 1.
func (r *bitSource) oneIn(k uint64) bool { return r.bernoulliRatio(1, k) }

// bernoulli returns true with probability exactly p for any float64 p
// (p ≤ 0 or NaN: false; p ≥ 1: true). A float64 p ∈ (0, 1) is the dyadic
// rational F·2^−(z+53) with F ∈ [2^52, 2^53) an integer and z ≥ 0 the number
// of leading zero bits of p after the binary point. With U = 0.b₁b₂… uniform,
// U < p iff b₁…b_z are all zero and b_(z+1)…b_(z+53), read as an integer,
// are < F: so P(true) = F·2^−(z+53) = p exactly. The zero prefix is checked
// in chunks of up to 64 bits, then F's digits one by one until a bit
// differs (two bits on average).
func (r *bitSource) bernoulli(p float64) bool {
	if !(p > 0) {
		return false
	}
	if p >= 1 {
		return true
	}
	frac, exp := math.Frexp(p) // p = frac·2^exp, frac ∈ [1/2, 1), exp ≤ 0
	F := uint64(math.Ldexp(frac, 53))
	for z := uint(-exp); z > 0; {
		c := min(z, 64)
		if r.bits(c) != 0 {
			return false
		}
		z -= c
	}
	c, n := r.cache, r.n // the bit stream, kept in registers
	defer func() { r.cache, r.n = c, n }()
	for i := 52; i >= 0; i-- {
		if n == 0 {
			c, n = r.src.Uint64(), 64
		}
		b := c&1 == 1
		c >>= 1
		n--
		if d := F>>uint(i)&1 == 1; b != d {
			return d
		}
	}
	return false // U's bits equal p's so far and p's remaining digits are 0: U ≥ p
}

// expNeg01 returns true with probability exactly exp(−γ) for a float64
// γ ∈ [0, 1]: Algorithm 1 of Canonne, Kamath and Steinke, "The Discrete
// Gaussian for Differential Privacy" (NeurIPS 2020; CKS20), with the trial
// Bernoulli(γ/K) drawn exactly as Bernoulli(γ) ∧ Bernoulli(1/K). The
// returned parity of K has P(K odd) = Σ_j (−γ)^j/j! = exp(−γ).
func (r *bitSource) expNeg01(gamma float64) bool {
	k := uint64(1)
	for r.bernoulli(gamma) && r.oneIn(k) {
		k++
	}
	return k%2 == 1
}

// expNeg1 returns true with probability exactly exp(−1): U < e⁻¹ decided a
// byte at a time against e⁻¹'s binary digits (expNeg1Digits), so a trial
// reads 8 bits and one comparison with probability 255/256. It is used far
// more than any other trial (block indices, the discrete Laplace's geometric
// part), hence this faster, equally exact alternative to CKS20 Algorithm 1.
func (r *bitSource) expNeg1() bool {
	digits := expNeg1Digits()
	for i := 0; ; i++ {
		var d byte
		if i < len(digits) {
			d = digits[i]
		} else {
			d = byte(expNeg1Prefix(8 * (i + 1)).Uint64()) // reached with probability 2^-1024
		}
		if b := byte(r.bits(8)); b != d {
			return b < d
		}
	}
}

// expNeg1Digits holds the first 1024 binary digits of e⁻¹ after the point,
// as bytes (most significant digit first).
var expNeg1Digits = sync.OnceValue(func() []byte {
	digits := expNeg1Prefix(1024).FillBytes(make([]byte, 128))
	return digits
})

// expNeg1Prefix returns ⌊e⁻¹·2^n⌋ exactly. It sums the alternating series
// Σ (−1)^k/k! in fixed point, in units of 2^−(n+g) with g guard bits: term
// t_k = ⌊t_(k−1)/k⌋ is below the exact 2^(n+g)/k! by e_k ≤ e_(k−1)/k + 1 ≤ 2
// units, so N terms are off by ≤ 2N, and the first zero term means the
// remaining alternating tail is < 3 units. So e⁻¹·2^(n+g) lies within
// S ± (2N + 3); if both ends agree after dropping the g guard bits, that is
// the exact answer (e⁻¹ is irrational, so this happens for large enough g),
// else it retries with more guard bits.
func expNeg1Prefix(n int) *big.Int {
	for g := uint(64); ; g *= 2 {
		one := new(big.Int).Lsh(big.NewInt(1), uint(n)+g)
		sum, term := new(big.Int), new(big.Int).Set(one)
		var terms int64
		for k := int64(0); term.Sign() > 0; k++ {
			if k > 0 {
				term.Quo(term, big.NewInt(k))
			}
			if k%2 == 0 {
				sum.Add(sum, term)
			} else {
				sum.Sub(sum, term)
			}
			terms = k + 1
		}
		slack := big.NewInt(2*terms + 3)
		lo := new(big.Int).Rsh(new(big.Int).Sub(sum, slack), g)
		hi := new(big.Int).Rsh(new(big.Int).Add(sum, slack), g)
		if lo.Cmp(hi) == 0 {
			return lo
		}
	}
}

// expNegRatio returns true with probability exactly exp(−u/t),
// 0 ≤ u < t < 2^63, by CKS20 Algorithm 1 with the rational γ = u/t:
// Bernoulli(u/(tK)) is drawn exactly as Bernoulli(u/t) ∧ Bernoulli(1/K).
func (r *bitSource) expNegRatio(u, t uint64) bool {
	k := uint64(1)
	for r.bernoulliRatio(u, t) && r.oneIn(k) {
		k++
	}
	return k%2 == 1
}

// expNegShifted returns true with probability exactly exp(−(γ − k)) for a
// float64 γ ≥ k ≥ 0 (k an integer): exp(−(γ−k)) = exp(−1)^(⌊γ⌋−k) ·
// exp(−(γ−⌊γ⌋)), a product of independent exact trials (CKS20 Algorithm 1,
// the γ > 1 case). ⌊γ⌋ and γ−⌊γ⌋ are exact in float64, so no rounding
// enters. It panics if ⌊γ⌋ < k, which the callers' block geometry rules out.
func (r *bitSource) expNegShifted(gamma float64, k int) bool {
	whole, frac := math.Modf(gamma)
	if whole < float64(k) {
		panic(fmt.Sprintf("dp: internal error: exp(−(γ−k)) with γ = %v < k = %d", gamma, k))
	}
	for i := float64(k); i < whole; i++ {
		if !r.expNeg1() {
			return false
		}
	}
	return r.expNeg01(frac)
}

// SecretSources returns the two sources of randomness a private run draws
// from, built the one way every entry point (train, tune, simulate, a
// worker process) builds them:
//
//   - a sampling generator, ChaCha8 keyed with 32 bytes of crypto/rand.
//     The sensitivity bounds of the sampling-based algorithms ([Y21a],
//     [Y21b]) hold on a high-probability event over the drawn indices,
//     and a private selection's split and candidates are part of its
//     mechanism, so whoever could predict the indices could pick records
//     that break the bound: the sampling must be as secret as the noise;
//   - NewSecureNoise: the noise itself from crypto/rand, sampled exactly
//     on a 2^k grid, so that neither a predictable seed nor the
//     floating-point rounding of a textbook sampler leaks the value
//     (the attacks noise.go's file comment describes).
//
// A seeded run builds neither and is not private. The error reports a
// failed read of crypto/rand (which Go ≥ 1.24 never returns: it aborts
// instead); it is never turned into a predictable key.
func SecretSources() (*rand.Rand, Noise, error) {
	var key [32]byte
	if _, err := cryptorand.Read(key[:]); err != nil {
		return nil, nil, fmt.Errorf("dp: secret sampling key: %w", err)
	}
	return rand.New(rand.NewChaCha8(key)), NewSecureNoise(), nil
}
