package dp

import (
	"math"
	"math/bits"
)

// Exact subsampling: Poisson sampling whose per-record coins are exactly
// Bernoulli(q) for the float64 q an accountant certifies, and the
// repetition count of private selection drawn exactly from its law.
//
// # Why not floor(log(u)/log1p(−q))
//
// The usual geometric-skip Poisson sampler draws u = 1 − Float64() on the
// grid {2⁻⁵³, 2·2⁻⁵³, …, 1} and jumps ⌊log(u)/log1p(−q)⌋ records. Its
// inclusion probabilities are multiples of 2⁻⁵³ perturbed by the rounding
// of log and of the division, not q: e.g. at q = 0.04 (a float64 with
// digits down to 2⁻⁵⁷) record 0's inclusion probability is a multiple of
// 2⁻⁵³ and cannot equal q, and at q = 1/2 a skip is at most 53 records, so
// 54 consecutive exclusions — probability 2⁻⁵⁴ under Bernoulli(1/2) coins —
// never happen (pairwise's TestOldPoissonSamplerIsInexact computes both).
// The subsampled-RDP theorem assumes exact coins; the total-variation
// distance of a whole run from exact sampling adds to δ and grows with n
// and T. The samplers below have no such term: they are exact.
//
// # The bit-sliced comparison (PoissonSubsample)
//
// A float64 q ∈ (0, 1) is the dyadic rational q = F·2^−(z+53) with
// F ∈ [2⁵², 2⁵³) an integer and z ≥ 0 (math.Frexp: q = f·2^e, f ∈ [½, 1),
// z = −e, F = f·2⁵³, all exact). Its binary expansion is
// 0.0…0 d₁…d₅₃ 000… with z leading zeros and d₁…d₅₃ the digits of F.
// A record is included iff U < q for U = 0.b₁b₂… a uniform real given by
// independent uniform bits, decided at the first position where b and q's
// expansion differ (U < q iff there b = 0 and q's digit is 1; if no digit
// differs within q's z + 53 digits, U ≥ q since q's remaining digits are 0).
// So P(include) = P(U < q) = q exactly, and at most z + 53 bits are read.
//
// 64 records are decided at once: record g + j (lane j of group g) takes
// its bits b₁, b₂, … from bit j of the successive words the group reads.
// A mask `alive` holds the lanes not yet decided; each step reads one word
// w and applies q's next digit to every alive lane at once:
//
//   - a zero digit (the z leading zeros, or dᵢ = 0): lanes with b = 1 have
//     U > q, excluded; lanes with b = 0 stay alive (alive &^= w);
//   - dᵢ = 1: lanes with b = 0 have U < q, included; lanes with b = 1 stay
//     alive (in |= alive &^ w; alive &= w).
//
// The group stops reading as soon as alive = 0 (lazy), and lanes still
// alive after q's last nonzero digit are excluded (U agrees with q that far
// and q's remaining digits are 0, so U ≥ q whatever U's next bits are).
//
// Exactness. Think of each group as owning an infinite array of
// independent uniform words W₁, W₂, …; the group reads a prefix of it, and
// lane j's outcome is the comparison above applied to column j
// (bit j of W₁, W₂, …): while j is alive the next word is read (alive ≠ 0),
// so lane j sees exactly the first bits of its column it needs, and its
// outcome is a function of its column alone. Distinct columns of an array
// of independent uniform words are independent uniform bit sequences, so
// the lanes' outcomes are independent Bernoulli(q). The number of words a
// group reads is a stopping time of the word stream, so the words the next
// group reads are again fresh independent words (strong Markov property of
// an i.i.d. sequence); groups are therefore independent too. Lanes beyond n
// in the last group are masked out from the start. Hence the returned set
// has exactly the law of n independent Bernoulli(q) coins (assuming, as
// every mechanism of this package does, that the Source's words are
// independent and uniform).
//
// Cost. Each group reads about log₂ 64 + 2 ≈ 8 words when z ≥ 6 (after
// k zero digits about 64·2⁻ᵏ lanes are alive; the lazy stop ends the
// group when none is) and at most z + 53: ≈ n/8 words per draw, against qn
// logarithms for the float sampler. BenchmarkPoissonSubsample measures it.

// PoissonSubsample appends to dst, in increasing order, the indices of a
// Poisson sample of [0, n) with rate q: every index enters independently
// with probability exactly q (q ≤ 0 or NaN: none; q ≥ 1: all). The bits
// come from src, 64 records per word (see the file comment for the proof).
func PoissonSubsample(dst []int, n int, q float64, src Source) []int {
	if n <= 0 || !(q > 0) {
		return dst
	}
	if q >= 1 {
		for i := range n {
			dst = append(dst, i)
		}
		return dst
	}
	frac, exp := math.Frexp(q) // q = frac·2^exp, frac ∈ [½, 1), exp ≤ 0
	F := uint64(math.Ldexp(frac, 53))
	z := -exp
	last := bits.TrailingZeros64(F) // q's digits after d_(53−last) are all 0
	for g := 0; g < n; g += 64 {
		alive := ^uint64(0)
		if n-g < 64 {
			alive = 1<<uint(n-g) - 1
		}
		for k := 0; k < z && alive != 0; k++ {
			alive &^= src.Uint64() // a zero digit: b = 1 means U > q
		}
		var in uint64
		for i := 52; i >= last && alive != 0; i-- {
			w := src.Uint64()
			if F>>uint(i)&1 == 1 {
				in |= alive &^ w // b = 0 < d = 1: U < q
				alive &= w
			} else {
				alive &^= w // b = 1 > d = 0: U > q
			}
		}
		// Lanes alive here have U's bits equal to q's up to q's last
		// nonzero digit, and q's remaining digits are 0: U ≥ q.
		for in != 0 {
			dst = append(dst, g+bits.TrailingZeros64(in))
			in &= in - 1
		}
	}
	return dst
}

// Bernoulli returns true with probability exactly p for a float64 p
// (p ≤ 0 or NaN: false; p ≥ 1: true), comparing uniform bits from src with
// p's binary expansion (bitSource.bernoulli; two bits on average). It
// reads whole words from src: one word per call in most cases.
func Bernoulli(p float64, src Source) bool {
	r := bitSource{src: src}
	return r.bernoulli(p)
}

// SampleRuns draws the number of repetitions K ≥ 1 of private selection
// from exactly the geometric law the accountant assumes,
// P[K = k] = γ(1 − γ)^{k−1} for the float64 γ = s.Gamma (a dyadic
// rational; SelectionEpsilon and SelectionMu use this same γ): K is the
// index of the first success in a sequence of independent exact
// Bernoulli(γ) coins (bitSource.bernoulli), so P[K = k] is the probability
// of k − 1 failures then a success, (1 − γ)^{k−1}·γ, with no rounding.
// K is unbounded (no truncation, which would change the law); E[K] = 1/γ
// and P[K > k] = (1 − γ)^k. An invalid γ (outside (0, 1)) returns 1.
func (s Selection) SampleRuns(src Source) int {
	if s.Validate() != nil {
		return 1
	}
	r := bitSource{src: src}
	return s.sampleRuns(&r, math.MaxInt)
}

// sampleRuns returns min(K, limit), reading only the coins that decide it
// (limit − 1 failures decide K ≥ limit; the enumeration test stops there).
func (s Selection) sampleRuns(r *bitSource, limit int) int {
	k := 1
	for k < limit && !r.bernoulli(s.Gamma) {
		k++
	}
	return k
}
