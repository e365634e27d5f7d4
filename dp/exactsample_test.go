package dp

import (
	"fmt"
	"math"
	"math/big"
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
