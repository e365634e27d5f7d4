package secagg

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// logBinTail is ln P[Bin(n, p) ≥ m], summed exactly (log-sum-exp).
func logBinTail(n int, p float64, m int) float64 {
	out := math.Inf(-1)
	for i := max(m, 0); i <= n; i++ {
		out = logAdd(out, logChoose(n, i)+float64(i)*math.Log(p)+float64(n-i)*math.Log1p(-p))
	}
	return out
}

// The Chernoff tails SparseFloor and SparseLiveness use are upper bounds of
// the exact binomial tails, on a grid of n, p and m (both sides of the
// mean).
func TestSparseTailsAreUpperBounds(t *testing.T) {
	for _, n := range []int{1, 2, 5, 17, 60, 300, 1200} {
		for _, p := range []float64{0.01, 0.1, 0.25, 0.5, 0.9} {
			for m := 0; m <= n; m += max(1, n/37) {
				up := logBinTail(n, p, m)
				if b := logUpperTail(n, p, m); b < up-1e-9 {
					t.Fatalf("upper tail n=%d p=%g m=%d: bound %g below exact %g", n, p, m, b, up)
				}
				lo := math.Inf(-1) // ln P[Bin ≤ m]
				for i := 0; i <= m; i++ {
					lo = logAdd(lo, logChoose(n, i)+float64(i)*math.Log(p)+float64(n-i)*math.Log1p(-p))
				}
				if b := logLowerTail(n, p, m); b < lo-1e-9 && m > 0 {
					t.Fatalf("lower tail n=%d p=%g m=%d: bound %g below exact %g", n, p, m, b, lo)
				}
			}
		}
	}
}

// selfSufficientMin is the size of the smallest non-empty set S of the
// graph adj (n ≤ 20 vertices, bitmasks) in which every member has at least
// need neighbours in S, or n + 1 when there is none.
func selfSufficientMin(adj []uint32, need int) int {
	n := len(adj)
	best := n + 1
	for set := uint32(1); set < 1<<n; set++ {
		sz := bits.OnesCount32(set)
		if sz >= best {
			continue
		}
		ok := true
		for v := set; v != 0 && ok; v &= v - 1 {
			i := bits.TrailingZeros32(v)
			ok = bits.OnesCount32(adj[i]&set) >= need
		}
		if ok {
			best = sz
		}
	}
	return best
}

// SparseFloor's union bound, checked against the graphs it is about: on
// K = 14 sites with edge probability p, the frequency with which some
// self-sufficient set is smaller than n (found by brute force over all
// 2¹⁴ subsets of each sampled graph) never exceeds the bound's value at n
// by more than its sampling error (4 standard errors + 4/N: false-failure
// rate below 10⁻⁴ per comparison). The same bound with an off-by-one —
// requiring ℓ neighbours inside S, forgetting the site's own share —
// must fail the same comparison (the check has teeth).
func TestSparseFloorBoundMonteCarlo(t *testing.T) {
	const k, trials = 14, 1500
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct{ degree, local int }{{5, 4}, {7, 5}, {9, 6}} {
		p := float64(c.degree) / float64(k-1)
		need := c.local - 1
		counts := make([]int, k+2) // counts[s]: graphs whose smallest self-sufficient set has size s
		for range trials {
			adj := make([]uint32, k)
			for a := range k {
				for b := a + 1; b < k; b++ {
					if rng.Float64() < p {
						adj[a] |= 1 << b
						adj[b] |= 1 << a
					}
				}
			}
			counts[selfSufficientMin(adj, need)]++
		}
		bound := func(n int, extra int) float64 { // Σ_{s<n} C(K, s)·tail, as SparseFloor sums it
			sum := math.Inf(-1)
			for s := 2; s < n; s++ {
				pairs, m := s*(s-1)/2, (s*(need+extra)+1)/2
				if m > pairs {
					continue
				}
				sum = logAdd(sum, logChoose(k, s)+logUpperTail(pairs, p, m))
			}
			return math.Exp(sum)
		}
		below, caught := 0, false
		for n := 2; n <= k; n++ {
			below += counts[n-1]
			freq := float64(below) / trials
			b := bound(n, 0)
			se := math.Sqrt(math.Min(b, 1) * (1 - math.Min(b, 1)) / trials)
			if freq > b+4*se+4.0/trials {
				t.Fatalf("degree %d ℓ %d: P[smallest self-sufficient set < %d] ≈ %.4f, above the bound %.4f", c.degree, c.local, n, freq, b)
			}
			if b3 := bound(n, 1); freq > b3+4*math.Sqrt(math.Min(b3, 1)*(1-math.Min(b3, 1))/trials)+4.0/trials {
				caught = true
			}
		}
		if !caught {
			t.Errorf("degree %d ℓ %d: the bound with an off-by-one (ℓ neighbours in S instead of ℓ − 1) is not caught: the check has no teeth here", c.degree, c.local)
		}
	}
}

// The floor is at most t − κ, grows with ℓ and falls with w and κ, and a
// local threshold no larger than κ + w leaves one site's own sum exposed.
// The rule picks the largest ℓ and the smallest w within its liveness
// bounds.
func TestSparseFloorShape(t *testing.T) {
	k := 1024
	th := DefaultThreshold(k)
	prev := 0
	for _, l := range []int{40, 80, 120, 160, 200} {
		n := SparseFloor(k, 0, 256, l, 1, th)
		if n > th || n < prev {
			t.Fatalf("ℓ = %d: floor %d (previous %d, t = %d)", l, n, prev, th)
		}
		prev = n
	}
	if n := SparseFloor(k, 0, 512, 400, 1, th); n != th {
		t.Fatalf("degree 512, ℓ = 400: floor %d, want t = %d (no set below t can be self-sufficient at 2⁻¹²⁸)", n, th)
	}
	if a, b := SparseFloor(k, 0, 256, 160, 0, th), SparseFloor(k, 0, 256, 160, 1, th); a != b {
		t.Fatalf("w = 0 and w = 1 differ (%d, %d): a signing site answers for itself", a, b)
	}
	if a, b := SparseFloor(k, 0, 256, 160, 40, th), SparseFloor(k, 0, 256, 160, 1, th); a >= b {
		t.Fatalf("w = 40: floor %d, w = 1: %d: withheld neighbours must lower it", a, b)
	}
	if n := SparseFloor(k, 30, 256, 31, 1, th); n != 1 {
		t.Fatalf("ℓ − 1 ≤ κ: floor %d, want 1", n)
	}
	if n30, n0 := SparseFloor(k, 30, 256, 160, 1, th), SparseFloor(k, 0, 256, 160, 1, th); n30 >= n0 || n30 > th-30 {
		t.Fatalf("30 colluders: floor %d, none %d: colluders must lower it", n30, n0)
	}
	r, err := SparseRule(k, 0, 256, th)
	if err != nil {
		t.Fatal(err)
	}
	if SparseLiveness(k, 0, 256, r.Local, SparseDrop) > SparseLive/2 || SparseLiveness(k, 0, 256, r.Local+1, SparseDrop) <= SparseLive/2 {
		t.Fatalf("SparseRule(1024, 0, 256) = %+v: ℓ is not the largest within the liveness bound", r)
	}
	if SparseWithheld(k, 256, r.Withheld, SparseDrop) > SparseLive/2 || SparseWithheld(k, 256, r.Withheld-1, SparseDrop) <= SparseLive/2 {
		t.Fatalf("SparseRule(1024, 0, 256) = %+v: w is not the smallest within the liveness bound", r)
	}
	if r.Floor != SparseFloor(k, 0, 256, r.Local, r.Withheld, th) {
		t.Fatalf("SparseRule's floor %d is not SparseFloor's", r.Floor)
	}
	if _, err := SparseRule(k, 51, 32, th); err == nil {
		t.Fatal("degree 32 with 51 colluders: want a refusal (no ℓ keeps the floor above 1)")
	}
}
