package secagg

import (
	"fmt"
	"math"
)

// The sparse variant's privacy argument (graph.go) as numbers.
//
// # What a lying coordinator learns
//
// Let C be the colluders (κ sites) and H the honest ones. The coordinator
// chooses U1 … U4 after seeing the graph, within the protocol's checks.
// A survivor i masks with the neighbours whose shares it was forwarded,
// u2(i); it sends its masked input only if at most w = Config.Withheld of
// the neighbours it dealt to are missing from u2(i) (Client.MaskedInput);
// if it signs U3 it has checked that each of its neighbours in U3 is in
// u2(i) (Client.survivors); U3 is one set for everyone (signed by ≥ t,
// 2t > K + κ), and only the signers U4 ⊆ U3 answer the unmasking, each
// revealing b_v shares for the v of U3 it holds shares of. The
// coordinator holds y_i = x_i + PRG(b_i) + Σ_{j∈u2(i)} ±PRG(s_ij) and can
// remove s_ij when j left after sharing (j's key, or the pair key the
// survivors reveal) or colludes, and b_i when ℓ holders answer.
//
// A combination of the y_i that cancels every unknown pairwise mask uses
// a set S of honest survivors closed under two-sided masking: a member
// with a one-sided unknown mask cannot be in it. For i ∈ S:
//
//   - if i signed, each neighbour j of i in U3 is in u2(i), and j masked
//     with i (j signed and checked it, or j did not sign and must have,
//     else y_i's mask with j is one-sided): j ∈ S. Its answering holders
//     are i, colluders, and neighbours in U4 — in S. So |N(i) ∩ S| ≥ ℓ − 1 − κ.
//   - if i did not sign (the coordinator may ignore anyone's signature),
//     its partners u2(i) ∩ U3 are in S as above, and an answering holder j
//     outside u2(i) masked with i one-sidedly (j ∉ S) but does reveal its
//     b_i share: at most w of them (i's check). i itself does not answer.
//     So |N(i) ∩ S| ≥ ℓ − w − κ.
//
// (The second case is why the check on u2(i) exists: without it the
// coordinator could forward to a site only ℓ − 1 neighbours' shares,
// declare those dropped, ignore the site's signature and rebuild its b_i
// from ℓ other neighbours — its input alone. The complete graph needs no
// such check: there i masks with at least t sites, and 2t > K leaves the
// coordinator no room.) Every leaked sum is over a set S with
// |N(i) ∩ S| ≥ ℓ − κ − max(1, w) for every member, counting every colluder
// as a neighbour of every honest site (the worst case).
//
// # The bound (over the graph's honest edges: independent coins of bias p)
//
// For |S| = s this needs 2e(S) ≥ s·m, m = ℓ − κ − max(1, w), with
// e(S) ~ Bin(s(s−1)/2, p).
// A union bound over all C(K, s) sets of each size s < n (so the colluders
// may be chosen after the graph is known), each tail by
// the Chernoff bound P[Bin(N, p) ≥ m] ≤ exp(−N·KL(m/N ‖ p)):
//
//	P[some self-sufficient S has |S| < n] ≤ Σ_{s<n} C(K, s)·exp(−N_s·KL(m_s/N_s ‖ p))
//
// The floor n is the largest n ≤ t − κ for which the right side is at
// most 2⁻¹²⁸ (a set too small to hold s·m/2 edges cannot be
// self-sufficient at all: those terms are 0). Every sum the coordinator
// can unmask then holds the noise shares of at least n honest sites, except
// with probability 2⁻¹²⁸ over the round's graph: the same order as the
// cryptographic assumptions the masks already rest on (X25519, ChaCha20,
// AES), and below float64's resolution of any δ the accountant accepts
// (δ ≥ 10⁻¹²⁰ has an ulp above 10⁻¹³⁶), so it is not added to δ. A
// coordinator restarting rounds to redraw the graph gets at most one
// chance in 2¹²⁸ per round. The sites' share of the distributed discrete
// Gaussian is calibrated for n shares (fedalgo/secure.go), as the complete
// graph's is for t − κ.

// sparseLogBeta is ln 2⁻¹²⁸, less a margin of 1 for the floating-point
// evaluation of the terms (each within 1e-9 of its value).
const sparseLogBeta = -128*math.Ln2 - 1

// SparseDrop and SparseLive are the rule that picks w and ℓ (SparseRule):
// at 5 % of the sites dropping at random at each step, an honest round
// fails with probability at most 10⁻⁶ — half of it for some site missing
// more than w neighbours' shares, half for some self mask lacking ℓ
// answers.
const (
	SparseDrop = 0.05
	SparseLive = 1e-6
)

// SparseFloor returns the noise floor n of the sparse variant with K
// invited sites, κ colluders, expected degree, local threshold ℓ, at most
// w withheld neighbours and global threshold t: the number of honest
// noise shares every unmasked sum holds except with probability 2⁻¹²⁸ over
// the graph (see above). It is at most t − κ (the complete graph's floor)
// and at least 1.
func SparseFloor(k, colluders, degree, local, withheld, threshold int) int {
	top := threshold - colluders
	need := local - colluders - max(1, withheld)
	if need <= 0 || degree < 1 || k < 3 || top < 1 {
		return 1 // a single honest site can be self-sufficient
	}
	p := float64(degree) / float64(k-1)
	logSum := math.Inf(-1)
	for s := 2; s < top; s++ {
		pairs := s * (s - 1) / 2
		m := (s*need + 1) / 2 // ⌈s·need/2⌉ edges inside S
		if m > pairs {
			continue // too small to be self-sufficient
		}
		term := logChoose(k, s) + logUpperTail(pairs, p, m)
		logSum = logAdd(logSum, term)
		if logSum > sparseLogBeta {
			return s
		}
	}
	return top
}

// SparseLiveness bounds the probability that some site's self mask cannot
// be rebuilt in an honest round where each site drops independently with
// probability drop and the κ colluders refuse to answer: a union over the
// K sites of P[fewer than ℓ − 1 of its neighbours answer], its answering
// neighbours ~ Bin(K − 1 − κ, p(1 − drop)) (Chernoff).
func SparseLiveness(k, colluders, degree, local int, drop float64) float64 {
	p := float64(degree) / float64(k-1) * (1 - drop)
	return math.Min(1, float64(k)*math.Exp(logLowerTail(k-1-colluders, p, local-1)))
}

// SparseWithheld bounds the probability that, in an honest round where
// each site drops with probability drop before sharing, some site misses
// more than w neighbours' shares: a union over the K sites of
// P[Bin(K − 1, p·drop) > w] (Chernoff).
func SparseWithheld(k, degree, withheld int, drop float64) float64 {
	p := float64(degree) / float64(k-1) * drop
	return math.Min(1, float64(k)*math.Exp(logUpperTail(k-1, p, withheld+1)))
}

// Sparse are the sparse variant's parameters for a round: its expected
// degree, local threshold ℓ, the withheld neighbours w a site tolerates,
// and the noise floor they give (SparseFloor).
type Sparse struct {
	Degree, Local, Withheld, Floor int
}

// SparseRule is the rule for w and ℓ: the smallest w with
// SparseWithheld ≤ SparseLive/2 at SparseDrop, then the largest ℓ in
// [w + 2, degree] with SparseLiveness ≤ SparseLive/2, and the floor they
// give against κ colluders. It fails when that floor is 1 (too small a
// degree for κ colluders).
func SparseRule(k, colluders, degree, threshold int) (Sparse, error) {
	if degree < 1 || degree > k-2 {
		return Sparse{}, fmt.Errorf("secagg: degree %d for %d sites must be in [1, %d]", degree, k, k-2)
	}
	w := 0
	for SparseWithheld(k, degree, w, SparseDrop) > SparseLive/2 {
		w++
	}
	for l := degree; l >= w+2; l-- {
		if SparseLiveness(k, colluders, degree, l, SparseDrop) > SparseLive/2 {
			continue
		}
		n := SparseFloor(k, colluders, degree, l, w, threshold)
		if n <= 1 {
			break
		}
		return Sparse{Degree: degree, Local: l, Withheld: w, Floor: n}, nil
	}
	return Sparse{}, fmt.Errorf("secagg: degree %d among %d sites with %d colluders leaves no local threshold whose round completes (at %g dropout, %g) and whose unmasked sums hold more than one honest site's noise: raise the degree or use the complete graph (degree 0)", degree, k, colluders, SparseDrop, SparseLive)
}

func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// kl is the Kullback–Leibler divergence of Bernoulli(q) from Bernoulli(p).
func kl(q, p float64) float64 {
	switch {
	case q <= 0:
		return -math.Log1p(-p)
	case q >= 1:
		return -math.Log(p)
	}
	return q*math.Log(q/p) + (1-q)*math.Log((1-q)/(1-p))
}

// logUpperTail bounds ln P[Bin(n, p) ≥ m] (Chernoff; 0 when m ≤ np).
func logUpperTail(n int, p float64, m int) float64 {
	if m > n {
		return math.Inf(-1)
	}
	q := float64(m) / float64(n)
	if q <= p {
		return 0
	}
	return -float64(n) * kl(q, p)
}

// logLowerTail bounds ln P[Bin(n, p) < m] ≤ ln P[Bin(n, p) ≤ m] (Chernoff;
// 0 when m ≥ np).
func logLowerTail(n int, p float64, m int) float64 {
	if m <= 0 {
		return math.Inf(-1)
	}
	q := float64(m) / float64(n)
	if q >= p {
		return 0
	}
	return -float64(n) * kl(q, p)
}

func logAdd(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(a, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}
