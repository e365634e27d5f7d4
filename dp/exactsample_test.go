package dp

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// replayWords serves the words of path, then zeros, counting the words it
// served (the enumeration below extends a path when a run reads past it).
type replayWords struct {
	path []uint64
	i    int
}

func (s *replayWords) Uint64() uint64 {
	var w uint64
	if s.i < len(s.path) {
		w = s.path[s.i]
	}
	s.i++
	return w
}

// enumerateWords computes the exact law of run's outcome when every word
// it reads has `lanes` independent uniform low bits (the others zero): a
// depth-first walk of the tree of word sequences, each node extended by
// the 2^lanes next words when the run read past it, each leaf weighted by
// 2^(−lanes·depth). The leaves partition the sequences, so the weights sum
// to 1 (checked). Outcomes are compared as strings.
func enumerateWords(t *testing.T, lanes int, run func(Source) string) map[string]*big.Rat {
	t.Helper()
	law := map[string]*big.Rat{}
	total := new(big.Rat)
	stack := [][]uint64{nil}
	for len(stack) > 0 {
		path := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		src := &replayWords{path: path}
		out := run(src)
		if src.i > len(path) {
			if len(path) > 4000 {
				t.Fatalf("enumeration deeper than 4000 words")
			}
			for w := uint64(0); w < 1<<uint(lanes); w++ {
				stack = append(stack, append(slices.Clip(path), w))
			}
			continue
		}
		wt := new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), uint(lanes*len(path))))
		if law[out] == nil {
			law[out] = new(big.Rat)
		}
		law[out].Add(law[out], wt)
		total.Add(total, wt)
	}
	if total.Cmp(big.NewRat(1, 1)) != 0 {
		t.Fatalf("leaf weights sum to %v, not 1", total)
	}
	return law
}

func ratOf(x float64) *big.Rat { return new(big.Rat).SetFloat64(x) }

// exactSampleRates are dyadic q's of every grain: powers of two, 2⁻⁵³- and
// 2⁻⁵⁴-grained floats (1 − 2⁻⁵³, ½ − 2⁻⁵⁴, 1/3, the golden ratio's
// fraction), dp-pair-sgd's default rates at n = 10⁴ and 10⁶ (0.04 and
// 0.004: digits down to 2⁻⁵⁷ and 2⁻⁶¹), tiny ones and the smallest
// subnormal 2⁻¹⁰⁷⁴.
var exactSampleRates = []float64{0.5, 0.25, 1 - 0x1p-53, 0.5 - 0x1p-54, 1.0 / 3, 0.6180339887498949,
	0.04, 0.004, 0x1p-53, 3 * 0x1p-60, 0x1.fffffffffffffp-30, 5e-324}

// PoissonSubsample is exactly Bernoulli(q) per record: enumerating every
// bit sequence of one record (n = 1) gives P(in) = q and P(out) = 1 − q
// as exact rationals, for q's of every grain.
func TestPoissonSubsampleExactOneRecord(t *testing.T) {
	for _, q := range exactSampleRates {
		law := enumerateWords(t, 1, func(src Source) string {
			return fmt.Sprint(PoissonSubsample(nil, 1, q, src))
		})
		in, out := law["[0]"], law["[]"]
		if in == nil || out == nil || len(law) != 2 {
			t.Fatalf("q = %v: outcomes %v", q, law)
		}
		want := ratOf(q)
		if in.Cmp(want) != 0 {
			t.Errorf("q = %v: P(in) = %v, want exactly %v", q, in.FloatString(25), want.FloatString(25))
		}
		if s := new(big.Rat).Add(in, out); s.Cmp(big.NewRat(1, 1)) != 0 {
			t.Errorf("q = %v: P(in) + P(out) = %v", q, s)
		}
	}
}

// Two and three records of one word are independent exact coins: every
// joint outcome has probability q^|S|·(1 − q)^(n−|S|), exactly. (The
// enumeration branches on every lane of every word, decided or not, so it
// is exponential in the depth: q's here have at most 8 binary digits, the
// marginals of finer q's are checked one record at a time above, and the
// lanes' independence is the structural argument of the file comment.)
func TestPoissonSubsampleExactJoint(t *testing.T) {
	for _, c := range []struct {
		n int
		q float64
	}{{2, 0.5}, {2, 3.0 / 8}, {2, 13.0 / 16}, {2, 0x1p-7}, {2, 205.0 / 256}, {3, 0.25}, {3, 5.0 / 32}} {
		law := enumerateWords(t, c.n, func(src Source) string {
			return fmt.Sprint(PoissonSubsample(nil, c.n, c.q, src))
		})
		q := ratOf(c.q)
		p := new(big.Rat).Sub(big.NewRat(1, 1), q)
		for mask := 0; mask < 1<<c.n; mask++ {
			var set []int
			want := big.NewRat(1, 1)
			for j := range c.n {
				if mask>>j&1 == 1 {
					set = append(set, j)
					want.Mul(want, q)
				} else {
					want.Mul(want, p)
				}
			}
			key := fmt.Sprint(set)
			if set == nil {
				key = "[]"
			}
			got := law[key]
			if got == nil {
				got = new(big.Rat)
			}
			if got.Cmp(want) != 0 {
				t.Errorf("n = %d, q = %v: P(%s) = %v, want exactly %v", c.n, c.q, key, got.FloatString(25), want.FloatString(25))
			}
		}
	}
}

// Edge cases: q ≤ 0 or NaN takes none, q ≥ 1 all, n ≤ 0 nothing; indices
// are increasing and in range across group boundaries (n = 130: two full
// groups and a 2-lane one), and dst is appended to.
func TestPoissonSubsampleEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	if b := PoissonSubsample(nil, 10, 0, rng); len(b) != 0 {
		t.Errorf("q = 0: %v", b)
	}
	if b := PoissonSubsample(nil, 10, math.NaN(), rng); len(b) != 0 {
		t.Errorf("q = NaN: %v", b)
	}
	if b := PoissonSubsample(nil, 5, 1, rng); !slices.Equal(b, []int{0, 1, 2, 3, 4}) {
		t.Errorf("q = 1: %v", b)
	}
	if b := PoissonSubsample([]int{7}, 0, 0.5, rng); !slices.Equal(b, []int{7}) {
		t.Errorf("n = 0: %v", b)
	}
	seen := make([]int, 130)
	for range 200 {
		b := PoissonSubsample([]int{-1}, 130, 0.5, rng)
		if b[0] != -1 {
			t.Fatal("dst overwritten")
		}
		b = b[1:]
		for k, j := range b {
			if j < 0 || j >= 130 || (k > 0 && j <= b[k-1]) {
				t.Fatalf("batch %v not increasing in [0, 130)", b)
			}
			seen[j]++
		}
	}
	for j, c := range seen {
		if c == 0 {
			t.Errorf("index %d never sampled in 200 draws at q = 1/2", j)
		}
	}
}

// bernsteinRadius returns t with P(|X − Np| ≥ t) ≤ 2e^{−x} for X a sum of
// N independent Bernoulli(p) (Bernstein's inequality:
// P(|X − Np| ≥ t) ≤ 2exp(−t²/(2(Np(1−p) + t/3)))).
func bernsteinRadius(N, p, x float64) float64 {
	v := N * p * (1 - p)
	a := 2 * x / 3
	return (a + math.Sqrt(a*a+8*x*v)) / 2
}

// The statistical check with the generator private runs use (ChaCha8,
// here seeded): 500 draws at n = 10⁴, q = 0.04 (dp-pair-sgd's default at
// that n). The total count, the count in each of the 64 lane positions
// (index mod 64) and the count of disjoint pairs (2i, 2i+1) both sampled
// (Bernoulli(q²) if the coins are independent) are each within Bernstein's
// radius at e^{−24}; with the 66 checks the false-failure rate is
// ≤ 132·e^{−24} < 5·10⁻⁹.
func TestPoissonSubsampleBinomial(t *testing.T) {
	const n, q, draws, x = 10000, 0.04, 500, 24
	rng := rand.New(rand.NewChaCha8([32]byte{1, 2, 3}))
	var total, pairs float64
	var lane [64]float64
	var b []int
	in := make([]bool, n)
	for range draws {
		b = PoissonSubsample(b[:0], n, q, rng)
		clear(in)
		for _, j := range b {
			in[j] = true
			lane[j%64]++
		}
		total += float64(len(b))
		for i := 0; i+1 < n; i += 2 {
			if in[i] && in[i+1] {
				pairs++
			}
		}
	}
	N := float64(n * draws)
	if d, r := math.Abs(total-N*q), bernsteinRadius(N, q, x); d > r {
		t.Errorf("total %v, want %v ± %v", total, N*q, r)
	}
	for l, c := range lane {
		Nl := float64(draws * ((n - l + 63) / 64))
		if d, r := math.Abs(c-Nl*q), bernsteinRadius(Nl, q, x); d > r {
			t.Errorf("lane %d: %v, want %v ± %v", l, c, Nl*q, r)
		}
	}
	Np := float64(draws * n / 2)
	if d, r := math.Abs(pairs-Np*q*q), bernsteinRadius(Np, q*q, x); d > r {
		t.Errorf("pairs both sampled: %v, want %v ± %v", pairs, Np*q*q, r)
	}
}

// replayBits serves the bits of path (then zeros) packed into words, least
// significant bit first, as bitSource consumes them.
type replayBits struct {
	path  []bool
	words int
}

func (s *replayBits) Uint64() uint64 {
	var w uint64
	for k := range 64 {
		if i := 64*s.words + k; i < len(s.path) && s.path[i] {
			w |= 1 << uint(k)
		}
	}
	s.words++
	return w
}

// SampleRuns draws K exactly: enumerating the bit sequences (a node is
// extended when the draw consumed past it; the draw stops at K ≥ 3 after
// two failed coins) gives
// P[K = 1] = γ, P[K = 2] = γ(1 − γ) and P[K ≥ 3] = (1 − γ)², exactly, for
// the γ = 1/(2k) --tune uses with k = 1, 3 candidates and a 2⁻⁵³-grained γ.
func TestSampleRunsExact(t *testing.T) {
	for _, g := range []float64{0.5, 1.0 / 6, 0.6180339887498949} {
		s := Selection{Gamma: g}
		law := map[int]*big.Rat{}
		stack := [][]bool{nil}
		for len(stack) > 0 {
			path := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			src := &replayBits{path: path}
			r := bitSource{src: src}
			k := s.sampleRuns(&r, 3)
			if used := 64*src.words - int(r.n); used > len(path) {
				stack = append(stack, append(slices.Clip(path), false), append(slices.Clip(path), true))
				continue
			}
			if law[k] == nil {
				law[k] = new(big.Rat)
			}
			law[k].Add(law[k], new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), uint(len(path)))))
		}
		G := ratOf(g)
		F := new(big.Rat).Sub(big.NewRat(1, 1), G)
		want := map[int]*big.Rat{1: G, 2: new(big.Rat).Mul(G, F), 3: new(big.Rat).Mul(F, F)}
		for k, w := range want {
			if law[k] == nil || law[k].Cmp(w) != 0 {
				t.Errorf("γ = %v: P[K %s %d] = %v, want exactly %v", g, map[bool]string{true: "≥", false: "="}[k == 3], k, law[k], w)
			}
		}
	}
}

// The block sampler's table is the exact CDF of Binomial(L, q): every
// stored word string equals Σ_{j≤k} C(L, j) q^j (1 − q)^(L−j) as an
// exact rational, for q's of every grain (the smallest subnormal too) and
// the three block sizes (L = 256 at 0.004 and 2⁻⁸, 128 at 2⁻⁶·1.5).
func TestPoissonBlockLawExact(t *testing.T) {
	for _, q := range append(slices.Clone(exactSampleRates), 0x1p-8, 1.5*0x1p-7) {
		l := newBlockLaw(q)
		L := 64 * l.m
		if len(l.cdf) != L {
			t.Fatalf("q = %v: %d entries for blocks of %d", q, len(l.cdf), L)
		}
		// q is dyadic, a/2^e, so P(K ≤ k) = Σ_{j≤k} C(L, j) a^j b^(L−j) / 2^(eL)
		// with b = 2^e − a: the sum is kept as an integer (no rational
		// normalization, whose GCDs made this test take seconds), and
		// compared exactly with the stored words, num/2^(64W), by
		// cross-multiplying with the two powers of two.
		Q := ratOf(q)
		a, den := Q.Num(), Q.Denom()
		e := den.BitLen() - 1
		if new(big.Int).Lsh(big.NewInt(1), uint(e)).Cmp(den) != 0 {
			t.Fatalf("q = %v is not dyadic", q)
		}
		b := new(big.Int).Sub(den, a)
		bpow := make([]*big.Int, L+1)
		bpow[0] = big.NewInt(1)
		for j := 1; j <= L; j++ {
			bpow[j] = new(big.Int).Mul(bpow[j-1], b)
		}
		cdf := new(big.Int)
		binom, apow := big.NewInt(1), big.NewInt(1)
		for k := range L {
			term := new(big.Int).Mul(binom, apow)
			cdf.Add(cdf, term.Mul(term, bpow[L-k]))
			w := l.cdf[k]
			num := new(big.Int)
			for _, x := range w {
				num.Lsh(num, 64)
				num.Or(num, new(big.Int).SetUint64(x))
			}
			lhs := new(big.Int).Lsh(num, uint(e*L))
			rhs := new(big.Int).Lsh(cdf, uint(64*len(w)))
			if lhs.Cmp(rhs) != 0 {
				got := new(big.Rat).SetFrac(num, new(big.Int).Lsh(big.NewInt(1), uint(64*len(w))))
				want := new(big.Rat).SetFrac(cdf, new(big.Int).Lsh(big.NewInt(1), uint(e*L)))
				diff, _ := new(big.Rat).Sub(got, want).Float64()
				t.Fatalf("q = %v: stored P(K ≤ %d) = %v, want exactly %v (off by %.3g)", q, k, got.FloatString(30), want.FloatString(30), diff)
			}
			binom.Mul(binom, big.NewInt(int64(L-k)))
			binom.Quo(binom, big.NewInt(int64(k+1)))
			apow.Mul(apow, a)
		}
	}
}

// Inversion at the boundaries, ties included: U = c_k exactly (its words,
// then zeros) gives K = k + 1 and U = c_k − 2^−B (one unit below in the
// last word) gives K = k, for every k; U = 0 gives 0 and U = 1 − 2^−B…
// gives L. q = 2⁻⁸⁰ makes the first word of every c_k all ones, so each
// decision goes through the tie path, reading only the words it needs.
func TestPoissonBlockCountBoundaries(t *testing.T) {
	for _, q := range []float64{0.04, 0.004, 0x1p-80, 1.0 / 3} {
		l := newBlockLaw(q)
		W, L := len(l.cdf[0]), len(l.cdf)
		for k := range L {
			c := l.cdf[k]
			src := &replayWords{path: slices.Clone(c)}
			if got := l.count(src); got != k+1 {
				t.Errorf("q = %v, U = c_%d: K = %d, want %d", q, k, got, k+1)
			}
			if src.i > W {
				t.Errorf("q = %v, U = c_%d: read %d words, at most %d needed", q, k, src.i, W)
			}
			below := slices.Clone(c)
			for i := W - 1; i >= 0; i-- { // subtract one unit of the last word, borrowing
				below[i]--
				if below[i] != math.MaxUint64 {
					break
				}
			}
			if got := l.count(&replayWords{path: below}); got != k {
				t.Errorf("q = %v, U = c_%d − 2^−B: K = %d, want %d", q, k, got, k)
			}
		}
		if got := l.count(&replayWords{}); got != 0 {
			t.Errorf("q = %v, U = 0: K = %d", q, got)
		}
		ones := make([]uint64, W)
		for i := range ones {
			ones[i] = math.MaxUint64
		}
		if got := l.count(&replayWords{path: ones}); got != L {
			t.Errorf("q = %v, U = 1 − 2^−B: K = %d, want %d", q, got, L)
		}
	}
}

// Floyd's subset is exactly uniform: over every outcome of its k uniform
// draws (all equally likely), each k-subset of the block arises equally
// often, for k = 1, 2, 3 and L = 64, 256 (k = 3, L = 256: 16 387 584
// outcomes would be slow; L = 256 is checked up to k = 2, and k = 3 on
// L = 64: 249 984 outcomes onto 41 664 subsets).
func TestPoissonBlockSubsetExact(t *testing.T) {
	for _, c := range []struct{ k, L int }{{1, 64}, {2, 64}, {3, 64}, {1, 256}, {2, 256}, {1, 128}, {2, 128}} {
		k, L := c.k, c.L
		counts := map[[4]uint64]int{}
		var walk func(outcome []uint64)
		walk = func(outcome []uint64) {
			if len(outcome) == k {
				i := 0
				var s [4]uint64
				floydSubset(k, L, drawFunc(func(m uint64) uint64 {
					if v := outcome[i]; v < m {
						i++
						return v
					}
					panic("draw out of range")
				}), &s)
				size := 0
				for w, x := range s {
					size += bits.OnesCount64(x)
					if w*64 >= L && x != 0 {
						t.Fatalf("k = %d, L = %d: subset %x outside the block", k, L, s)
					}
				}
				if size != k {
					t.Fatalf("k = %d, L = %d: subset %x of size %d", k, L, s, size)
				}
				counts[s]++
				return
			}
			m := uint64(L - k + len(outcome) + 1) // the draw's range [0, j]
			for v := uint64(0); v < m; v++ {
				walk(append(outcome, v))
			}
		}
		walk(nil)
		want := -1
		if nb := new(big.Int).Binomial(int64(L), int64(k)).Int64(); int64(len(counts)) != nb {
			t.Fatalf("k = %d, L = %d: %d subsets reached, want %d", k, L, len(counts), nb)
		}
		for s, c := range counts {
			if want < 0 {
				want = c
			}
			if c != want {
				t.Fatalf("k = %d, L = %d: subset %x arises %d times, another %d", k, L, s, c, want)
			}
		}
	}
}

// The block sampler at dp-pair-sgd's default rate for n = 10⁵ (q = 0.004,
// blocks of 256; ChaCha8 seeded, 200 draws): the total, each lane position
// (index mod 64) and, inside blocks, disjoint pairs (i, i + d) for d = 1
// (128 per block), 64 (128 per block: across the block's 64-bit words)
// and 255 (the block's ends) — Bernoulli(q²) if the coins are independent
// — are within Bernstein's radius at e^{−24}; 67 checks: false-failure
// rate ≤ 134·e^{−24} < 6·10⁻⁹.
func TestPoissonSubsampleBlocksBinomial(t *testing.T) {
	const n, q, draws, x = 100_000, 0.004, 200, 24
	if l := newBlockLaw(q); l.m != 4 {
		t.Fatalf("q = %v: blocks of %d, the test assumes 256", q, 64*l.m)
	}
	rng := rand.New(rand.NewChaCha8([32]byte{4, 5, 6}))
	var total float64
	var lane [64]float64
	pairStarts := map[int][]int{1: nil, 64: nil, 255: {0}}
	for i := 0; i < 256; i += 2 {
		pairStarts[1] = append(pairStarts[1], i)
	}
	for i := range 64 {
		pairStarts[64] = append(pairStarts[64], i, 128+i)
	}
	pairs := map[int]float64{}
	in := make([]bool, n)
	var b []int
	for range draws {
		b = PoissonSubsample(b[:0], n, q, rng)
		clear(in)
		for _, j := range b {
			in[j] = true
			lane[j%64]++
		}
		total += float64(len(b))
		for g := 0; g+256 <= n; g += 256 {
			for d, starts := range pairStarts {
				for _, i := range starts {
					if in[g+i] && in[g+i+d] {
						pairs[d]++
					}
				}
			}
		}
	}
	N := float64(n * draws)
	if d, r := math.Abs(total-N*q), bernsteinRadius(N, q, x); d > r {
		t.Errorf("total %v, want %v ± %v", total, N*q, r)
	}
	for l, c := range lane {
		Nl := float64(draws * ((n - l + 63) / 64))
		if d, r := math.Abs(c-Nl*q), bernsteinRadius(Nl, q, x); d > r {
			t.Errorf("lane %d: %v, want %v ± %v", l, c, Nl*q, r)
		}
	}
	for d, starts := range pairStarts {
		Np := float64(draws * (n / 256) * len(starts))
		if dev, r := math.Abs(pairs[d]-Np*q*q), bernsteinRadius(Np, q*q, x); dev > r {
			t.Errorf("pairs (i, i+%d) both sampled: %v, want %v ± %v", d, pairs[d], Np*q*q, r)
		}
	}
}

// BenchmarkPoissonSubsample: the sampler PoissonSubsample uses (blocks
// below q = 1/16) against the bit-sliced reference, at dp-pair-sgd's
// default q (min(⌈4√n⌉, n/2)/n) for n = 10⁴, 10⁵, 10⁶, from ChaCha8.
func BenchmarkPoissonSubsample(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		q := math.Min(math.Ceil(4*math.Sqrt(float64(n))), float64(n)/2) / float64(n)
		for _, s := range []struct {
			name string
			f    func([]int, int, float64, Source) []int
		}{{"exact", PoissonSubsample}, {"bitsliced", poissonSubsampleBitSliced}} {
			b.Run(fmt.Sprintf("%s/n=%d", s.name, n), func(b *testing.B) {
				rng := rand.New(rand.NewChaCha8([32]byte{9}))
				var batch []int
				for b.Loop() {
					batch = s.f(batch[:0], n, q, rng)
				}
			})
		}
	}
}

type drawFunc func(m uint64) uint64

func (f drawFunc) uint64n(m uint64) uint64 { return f(m) }
