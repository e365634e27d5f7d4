package secagg

import (
	"fmt"
	"math"
)

// The sparse variant's privacy argument (graph.go) as numbers.
//
// # What a lying coordinator learns
//
// Let C be the colluders (κ sites) and H the honest ones. The coordinator chooses U1 …
// U4 after seeing the graph, within the protocol's checks: every honest
// survivor i checks that each of its neighbours in U3 is one it masked
// with (Client.survivors), U3 is one set for everyone (signed, 2t > K + κ),
// and only members of U4 ⊆ U3 answer the unmasking. It then holds, for
// each i ∈ U3, y_i = x_i + PRG(b_i) + Σ_j ±PRG(s_ij) over the neighbours j
// that i masked with, and can rebuild:
//
//   - s_ij when j left after sharing (j's key from its holders, or the
//     pair's key the survivors reveal), or when i or j colludes;
//   - b_i when at least ℓ holders of i's shares answer: i itself and
//     neighbours of i in U4 (in the same component of the honest
//     survivors' graph as i, by the check above) or colluders.
//
// A linear combination of the y_i that cancels every unknown pairwise
// mask is constant on each connected component of the graph on the honest
// survivors (each edge {i, j} forces equal coefficients), and it is of use
// only when every b_i in it can be removed. So what leaks are the sums
// Σ_{i∈S} x_i over sets S of honest sites that are *self-sufficient*:
// every i ∈ S has at least ℓ − 1 neighbours in S ∪ C. Counting every
// colluder as a neighbour of every honest site (a colluder chooses its
// keys after the honest ones, so its edges are the adversary's), at least
// ℓ − 1 − κ neighbours in S.
//
// # The bound (over the graph's honest edges: independent coins of bias p)
//
// For |S| = s this needs 2e(S) ≥ s(ℓ − 1 − κ), with e(S) ~ Bin(s(s−1)/2, p).
// A union bound over all C(K, s) sets of each size s < n (so the colluders
// may be chosen after the graph is known), each tail by
// the Chernoff bound P[Bin(N, p) ≥ m] ≤ exp(−N·KL(m/N ‖ p)):
//
//	P[some self-sufficient S has |S| < n] ≤ Σ_{s<n} C(K, s)·exp(−N_s·KL(m_s/N_s ‖ p))
//
// The floor n is the largest n ≤ t − κ for which the right side is at
// most 2⁻¹²⁸ (a set too small to hold s(ℓ − 1 − κ)/2 edges cannot be
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

// SparseDrop and SparseLive are the rule that picks ℓ (SparseLocal): the
// largest ℓ whose liveness bound — a site's self mask cannot be rebuilt
// when 5 % of the sites drop at random — is at most 10⁻⁶ per round.
const (
	SparseDrop = 0.05
	SparseLive = 1e-6
)

// SparseFloor returns the noise floor n of the sparse variant with K
// invited sites, κ colluders, expected degree and local threshold ℓ, and
// global threshold t: the number of honest noise shares every unmasked sum
// holds except with probability 2⁻¹²⁸ over the graph (see above). It is at
// most t − κ (the complete graph's floor) and at least 1.
func SparseFloor(k, colluders, degree, local, threshold int) int {
	top := threshold - colluders
	need := local - 1 - colluders
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

// SparseLocal is the rule for ℓ: the largest ℓ in [2, degree] whose
// liveness bound at SparseDrop is at most SparseLive, and the floor it
// gives. It fails when no ℓ keeps the floor above 1 (too small a degree
// for κ colluders).
func SparseLocal(k, colluders, degree, threshold int) (local, floor int, err error) {
	if degree < 1 || degree > k-2 {
		return 0, 0, fmt.Errorf("secagg: degree %d for %d sites must be in [1, %d]", degree, k, k-2)
	}
	for l := degree; l >= 2; l-- {
		if SparseLiveness(k, colluders, degree, l, SparseDrop) > SparseLive {
			continue
		}
		n := SparseFloor(k, colluders, degree, l, threshold)
		if n <= 1 {
			break
		}
		return l, n, nil
	}
	return 0, 0, fmt.Errorf("secagg: degree %d among %d sites with %d colluders leaves no local threshold whose round completes (at %g dropout, %g) and whose unmasked sums hold more than one honest site's noise: raise the degree or use the complete graph (degree 0)", degree, k, colluders, SparseDrop, SparseLive)
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
