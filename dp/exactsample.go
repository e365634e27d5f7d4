package dp

import (
	"encoding/binary"
	"github.com/pairfed/pairfed/internal/memo"
	"math"
	"math/big"
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
// with probability exactly q (q ≤ 0 or NaN: none; q ≥ 1: all). For
// q < 1/16 it counts each block of 64–256 records exactly (poissonBlocks:
// one word per block in most cases); otherwise, and for the last partial
// block, it decides 64 records per word bit-sliced
// (poissonSubsampleBitSliced). Both are exact (proofs in the file comment
// and at poissonBlocks), and so is their combination: the blocks and the
// tail read disjoint stretches of the word stream, each a stopping time.
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
	if q >= blockMinRate || n < 64 {
		return poissonSubsampleBitSliced(dst, n, q, src)
	}
	return poissonBlocks(dst, n, q, src)
}

// poissonSubsampleBitSliced is the bit-sliced sampler of the file comment
// for q ∈ (0, 1) (the reference the block sampler is tested against, and
// the sampler of rates ≥ 1/16 and of the last partial block).
func poissonSubsampleBitSliced(dst []int, n int, q float64, src Source) []int {
	for g := 0; g < n; g += 64 {
		dst = bitSlicedGroup(dst, g, min(64, n-g), q, src)
	}
	return dst
}

// bitSlicedGroup decides the lanes records g … g+lanes−1 (lanes ≤ 64),
// appending the included ones.
func bitSlicedGroup(dst []int, g, lanes int, q float64, src Source) []int {
	frac, exp := math.Frexp(q) // q = frac·2^exp, frac ∈ [½, 1), exp ≤ 0
	F := uint64(math.Ldexp(frac, 53))
	z := -exp
	last := bits.TrailingZeros64(F) // q's digits after d_(53−last) are all 0
	alive := ^uint64(0)
	if lanes < 64 {
		alive = 1<<uint(lanes) - 1
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
	return dst
}

// blockMinRate: below it PoissonSubsample counts blocks (about one word
// per block of 64–256 records); at and above it the bit-sliced sampler
// reads at most about 8 words per 64 records, already O(qn).
const blockMinRate = 1.0 / 16

// # Counting blocks (poissonBlocks)
//
// Blocks of L = 64·m records, m ∈ {1, 2, 4} chosen from q (blockWords:
// about one expected inclusion per block, so that half the blocks or more
// are empty and decided by one word). The coins of a block are i.i.d.
// Bernoulli(q) iff the number K of included records has the
// Binomial(L, q) law and, given K = k, the included set is uniform among
// the C(L, k) subsets of size k: then
// P(S) = P(K = |S|)/C(L, |S|) = q^|S|·(1 − q)^(L−|S|) for every S ⊆ block,
// the law of independent coins. Both steps are drawn exactly.
//
// K by inversion of the exact CDF. With q = F·2^−(z+53) (file comment) and
// D = 2^(z+53), P(K = k) = C(L, k)·F^k·(D − F)^(L−k)/D^L is a dyadic
// rational with denominator 2^B, B = L(z + 53), so every CDF value
// c_k = P(K ≤ k) is a B-bit binary fraction, stored exactly as m(z + 53)
// words (blockLaw, computed once per q with math/big and memoized). K is
// the least k with U < c_k (L if none) for U = 0.u₁u₂… a uniform real
// whose words u₁, u₂, … (u₁ the most significant) are read lazily from
// the source: U < c_k is decided at the first word where U and c_k differ
// (U's word smaller: U < c_k; larger: U > c_k), and U ≥ c_k if U agrees
// with all of c_k's words (c_k's later digits are 0). So
// P(K = k) = P(c_(k−1) ≤ U < c_k) = c_k − c_(k−1) exactly. One word
// decides K unless u₁ equals the first word of some c_k (probability
// ≤ L·2⁻⁶⁴ per block); the tie reads further words, shared by every
// comparison of the same block (they compare the same U).
//
// The subset by Floyd's algorithm (Bentley & Floyd, "A sample of
// brilliance", CACM 1987): for j = L − k … L − 1, draw t uniform in
// [0, j] (bitSource.uint64n, exact) and add t, or j if t is already in
// the set. By induction on j every subset of [0, j] of the current size
// is equally likely: a given subset T of [0, j] of size s arises from
// T∖{j} (if j ∈ T; t hits one of the s − 1 chosen or j itself: s ways)
// or from one of the s sets T∖{t}, t ∈ T (if j ∉ T; exactly t: 1 way
// each): s ways out of (j + 1) in both cases, times the equal probability
// of the previous subsets.
//
// Independence between blocks: every block reads its words (for U, then
// for the subset) until its own decisions are made — a stopping time of
// the i.i.d. word stream — so the next block reads fresh words (the
// subset's bitSource keeps the unread bits of its last word for the next
// block's subset draws: those bits were not read, so they are fresh and
// independent of everything decided). Hence the blocks are independent
// and each is i.i.d. Bernoulli(q) inside: the whole sample is exact.
// The last n mod L records are decided bit-sliced, 64 per group, again on
// fresh words.
//
// Cost: about one word per block plus one word or less per included
// record (Lemire's draw; 6–8 bits when j + 1 is a power of two):
// n/L + O(qn) words, against n/8 for the bit-sliced sampler and qn
// logarithms for the float geometric skip (BenchmarkPoissonSample).
func poissonBlocks(dst []int, n int, q float64, src Source) []int {
	law := blockLawOf(q)
	L := 64 * law.m
	r := bitSource{src: src}
	c0 := law.cdf[0][0] // U's first word below it: K = 0, decided
	g := 0
	var in [4]uint64
	for ; g+L <= n; g += L {
		u := src.Uint64()
		if u < c0 {
			continue
		}
		k := law.countFrom(u, src)
		floydSubset(k, L, &r, &in)
		for w := range law.m {
			for x := in[w]; x != 0; x &= x - 1 {
				dst = append(dst, g+64*w+bits.TrailingZeros64(x))
			}
		}
	}
	for ; g < n; g += 64 {
		dst = bitSlicedGroup(dst, g, min(64, n-g), q, src)
	}
	return dst
}

// blockLaw is the CDF of Binomial(64m, q): cdf[k] = P(K ≤ k) for k < 64m
// as the words of a binary fraction, most significant first
// (P(K ≤ 64m) = 1 is not stored).
type blockLaw struct {
	m   int
	cdf [][]uint64
}

// count draws K ∈ [0, 64m] by inversion (see poissonBlocks): the least k
// with U < cdf[k].
func (l *blockLaw) count(src Source) int { return l.countFrom(src.Uint64(), src) }

// countFrom is count with U's first word u already read.
func (l *blockLaw) countFrom(u uint64, src Source) int {
	var more []uint64 // U's further words, drawn only on a tie
	for k, c := range l.cdf {
		if u < c[0] {
			return k
		}
		if u > c[0] {
			continue
		}
		less := false
		for i := 1; i < len(c); i++ {
			if i > len(more) {
				more = append(more, src.Uint64())
			}
			if w := more[i-1]; w != c[i] {
				less = w < c[i]
				break
			}
		}
		if less {
			return k
		}
		// U agrees with all of c's words (U ≥ c_k) or exceeds it.
	}
	return len(l.cdf)
}

// uniformDrawer draws uniform integers in [0, m) (bitSource; the exact
// enumeration test passes every outcome instead).
type uniformDrawer interface{ uint64n(m uint64) uint64 }

// floydSubset sets in to a uniform subset of [0, L) of size k ∈ [0, L],
// L ≤ 256, as a bit mask (bit i of in[i/64]), by Floyd's algorithm (see
// poissonBlocks) with uniform[0, j + 1) draws from draw.
func floydSubset[D uniformDrawer](k, L int, draw D, in *[4]uint64) {
	*in = [4]uint64{}
	for j := L - k; j < L; j++ {
		t := draw.uint64n(uint64(j) + 1)
		if in[t/64]>>(t%64)&1 == 1 {
			t = uint64(j)
		}
		in[t/64] |= 1 << (t % 64)
	}
}

// blockWords is m, the block size L = 64m of the rate q = F·2^−(z+53)
// (z leading zero digits): 256 records when q < 2⁻⁷ (qL < 2), 128 when
// q < 2⁻⁶, else 64; 64 also when z > 64, where the table of m(z + 53)
// words per entry would be large and the blocks are nearly all empty.
func blockWords(z int) int {
	switch {
	case z >= 7 && z <= 64:
		return 4
	case z == 6:
		return 2
	}
	return 1
}

// blockLawOf returns the memoized blockLaw of q ∈ (0, 1) (at most 16 laws
// are kept: ≤ 256 entries of ≤ 4·117 words each).
func blockLawOf(q float64) *blockLaw {
	return blockLawMemo.Get(q, func() *blockLaw { return newBlockLaw(q) })
}

var blockLawMemo = memo.New[float64, *blockLaw](16)

// newBlockLaw computes the exact CDF of Binomial(L, q) for q ∈ (0, 1),
// L = 64·blockWords(z): P(K = k) = C(L, k)·F^k·(D − F)^(L−k)/D^L with
// q = F/D, D = 2^(z+53).
func newBlockLaw(q float64) *blockLaw {
	frac, exp := math.Frexp(q)
	z := -exp
	m := blockWords(z)
	L := 64 * m
	F := new(big.Int).SetUint64(uint64(math.Ldexp(frac, 53)))
	D := new(big.Int).Lsh(big.NewInt(1), uint(z+53))
	G := new(big.Int).Sub(D, F)
	fp, gp := make([]*big.Int, L+1), make([]*big.Int, L+1) // F^k, G^k
	fp[0], gp[0] = big.NewInt(1), big.NewInt(1)
	for k := 1; k <= L; k++ {
		fp[k] = new(big.Int).Mul(fp[k-1], F)
		gp[k] = new(big.Int).Mul(gp[k-1], G)
	}
	words := m * (z + 53) // B = 64·words bits
	buf := make([]byte, 8*words)
	l := &blockLaw{m: m, cdf: make([][]uint64, L)}
	sum, c, t := new(big.Int), big.NewInt(1), new(big.Int) // c = C(L, k)
	for k := range L {
		if k > 0 {
			c.Mul(c, big.NewInt(int64(L-k+1)))
			c.Quo(c, big.NewInt(int64(k)))
		}
		t.Mul(fp[k], gp[L-k])
		t.Mul(t, c)
		sum.Add(sum, t)
		sum.FillBytes(buf) // sum < D^L = 2^B: fits
		w := make([]uint64, words)
		for i := range w {
			w[i] = binary.BigEndian.Uint64(buf[8*i:])
		}
		l.cdf[k] = w
	}
	return l
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
