// Command secaggplus sizes a sparse-graph secure aggregation (SecAgg+,
// Bell et al. 2020) for pairfed's threat model — a malicious coordinator
// with up to κ colluding sites — and prints what it would cost in noise
// and what it would save in per-site work against the complete graph that
// secagg/ runs today. Nothing here is a protocol: it is the parameter
// argument a sparse variant would have to carry, computed with rigorous
// upper bounds (Chernoff), so that deploy/README.md's "Scale" can say by
// how much such a variant helps at a given K, not only that it is missing.
//
// # The variant being sized
//
// Each round draws a graph G on the K sites from public randomness the
// coordinator cannot steer (Erdős–Rényi, edge probability p = k/(K − 1),
// expected degree k). Pairwise masks and the Shamir shares of a site's
// self-mask seed b_i and mask key s_i go to its neighbours N(i) only, with
// threshold t_i = ⌈τ·deg(i)⌉. The survivor set U3 stays global and signed
// (≥ t signatures, 2t > K + κ: one U3 for every honest site, as today),
// and only members of U3 answer the unmasking request.
//
// # What a lying coordinator learns
//
// Given U3, it holds y_i − b_i for every i ∈ U3 whose b_i it can rebuild,
// and every pairwise mask with a site outside U3 (from that site's rebuilt
// s_j) or with a colluder. So it learns Σ_{i∈S} x_i for every set S of
// honest survivors whose internal edges are the only unknown masks — a
// connected component of G[U3 ∩ H] — provided every i ∈ S has its b_i
// rebuilt, i.e. at least t_i of its neighbours answer: those are in S (its
// honest neighbours in U3 are in its component) or colluders. A component
// that leaks is therefore *self-sufficient*: |N(i) ∩ (S ∪ C)| ≥ t_i for
// every i ∈ S. The coordinator chooses U3 after seeing G (it may declare
// up to K − t sites dropped), so the bound must hold for every S at once.
//
// # The bound (over G; C fixed before G is drawn: static corruption)
//
// Let D be the event that every degree is ≥ k_lo. Under D, a
// self-sufficient S of size s has 2e(S) + e(S, C) = Σ_{i∈S}|N(i) ∩ (S ∪ C)|
// ≥ s·⌈τ k_lo⌉, with e(S) ~ Bin(C(s,2), p) and e(S, C) ~ Bin(sκ, p)
// independent. Hence
//
//	P[some honest component of < n honest sites leaks]
//	  ≤ P[¬D] + Σ_{s<n} C(K − κ, s) · P[2X + Y ≥ s⌈τk_lo⌉],
//
// each tail by the Chernoff bound min_λ e^{−λm} E[e^{λ(2X+Y)}], and P[¬D] ≤
// K·P[Bin(K − 1, p) < k_lo]. The largest n with the right side ≤ β is the
// noise floor: every revealed sum holds at least n honest noise shares of
// the distributed discrete Gaussian, so each site's share must be
// calibrated for n (today: t − κ), and β is added to δ.
//
// Liveness (the round completes): a survivor's b_i needs t_i answers from
// its neighbours; with dropouts at rate ρ and the κ colluders refusing,
// P[Bin(deg, (1 − ρ)(1 − κ/(K − 1))) < ⌈τ·deg⌉] per site, union over sites
// and degrees (Chernoff; a τ is used only when this is ≤ -live).
//
// Usage:
//
//	go run ./scripts/secaggplus -k 256,1024,4096,16384 -colluders 0,0.05,0.33 -beta 1e-10 -drop 0.05
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"strconv"
	"strings"
)

var (
	flagK      = flag.String("k", "256,1024,4096,16384", "comma-separated numbers of sites K")
	flagColl   = flag.String("colluders", "0,0.05,0.33", "colluding sites κ as fractions of K (κ is rounded down and kept below 2t − K)")
	flagBeta   = flag.Float64("beta", 1e-10, "allowed probability that the graph leaks a sum of fewer honest shares than the floor (added to δ)")
	flagDrop   = flag.Float64("drop", 0.05, "dropout rate ρ for the liveness bound")
	flagLive   = flag.Float64("live", 1e-6, "allowed probability that an honest round cannot unmask")
	flagDegree = flag.String("degree", "64,128,256,512", "expected degrees k to size (values ≥ K − 1 mean the complete graph)")
)

func main() {
	flag.Parse()
	ks, err := ints(*flagK)
	if err != nil {
		log.Fatalf("-k: %v", err)
	}
	degs, err := ints(*flagDegree)
	if err != nil {
		log.Fatalf("-degree: %v", err)
	}
	fracs, err := floats(*flagColl)
	if err != nil {
		log.Fatalf("-colluders: %v", err)
	}
	if !(*flagBeta > 0 && *flagBeta < 1) || !(*flagDrop >= 0 && *flagDrop < 1) || !(*flagLive > 0 && *flagLive < 1) {
		log.Fatalf("-beta and -live must be in (0, 1) and -drop in [0, 1)")
	}
	w := os.Stdout
	fmt.Fprintf(w, "| K | t | κ | k | τ | floor n (sparse) | floor t − κ (complete) | noise variance × | P[leak] ≤ | P[no unmask] ≤ | key agreements, shares, masks × |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, K := range ks {
		t := 2*K/3 + 1
		for _, f := range fracs {
			kappa := int(f * float64(K))
			if kappa > 2*t-K-1 {
				kappa = 2*t - K - 1
			}
			for _, k := range degs {
				if k >= K-1 {
					continue
				}
				r, ok := size(K, t, kappa, float64(k), *flagBeta, *flagDrop, *flagLive)
				if !ok {
					fmt.Fprintf(w, "| %d | %d | %d | %d | — | none: no τ in [0.5, 0.95] keeps P[no unmask] ≤ -live | %d | — | — | — | %.3f |\n",
						K, t, kappa, k, t-kappa, float64(k)/float64(K-1))
					continue
				}
				if r.floor <= 1 {
					fmt.Fprintf(w, "| %d | %d | %d | %d | — | none: one site's own sum can leak | %d | — | — | %.1e | %.3f |\n",
						K, t, kappa, k, t-kappa, r.live, float64(k)/float64(K-1))
					continue
				}
				fmt.Fprintf(w, "| %d | %d | %d | %d | %.2f | %d | %d | %.2f | %.1e | %.1e | %.3f |\n",
					K, t, kappa, k, r.tau, r.floor, t-kappa, float64(t-kappa)/float64(r.floor), r.leak, r.live, float64(k)/float64(K-1))
			}
		}
	}
}

type result struct {
	tau        float64
	floor      int
	leak, live float64
}

// size picks, over τ ∈ {0.50, 0.55, …, 0.95}, the largest floor whose leak
// bound is ≤ beta among the τ whose liveness bound is ≤ live.
func size(K, t, kappa int, k, beta, rho, live float64) (result, bool) {
	p := k / float64(K-1)
	best := result{}
	found := false
	// k_lo: the largest degree floor whose failure bound P[¬D] is at most
	// beta/2, searched downwards from k (it does not depend on τ).
	klo := int(math.Floor(k))
	for klo > 1 && float64(K)*math.Exp(logBinLower(K-1, p, klo)) > beta/2 {
		klo--
	}
	pD := float64(K) * math.Exp(logBinLower(K-1, p, klo))
	for ti := 0; ti <= 9; ti++ {
		tau := 0.5 + 0.05*float64(ti)
		// Liveness: a survivor of degree dg ≥ klo needs ≥ ⌈τ·dg⌉ answers;
		// given its degree its neighbours are a uniform subset, so the
		// colluders among them are hypergeometric and the honest ones
		// answer independently with probability 1 − ρ: the answering count
		// is dominated (Hoeffding 1963) by Bin(dg, q), q = (1 − ρ)(1 −
		// κ/(K − 1)). Union over the sites and the worst degree ≥ klo.
		q := (1 - rho) * (1 - float64(kappa)/float64(K-1))
		lv := 0.0
		for dg := klo; dg < K; dg++ {
			m := int(math.Ceil(tau * float64(dg)))
			lv = math.Max(lv, float64(K)*math.Exp(logBinLower(dg, q, m)))
		}
		lv += pD
		if lv > live {
			continue
		}
		need := int(math.Ceil(tau * float64(klo)))
		sum := pD
		floor := t - kappa
		for s := 1; s < t-kappa; s++ {
			term := logChoose(K-kappa, s) + logTail2XY(s*(s-1)/2, s*kappa, p, s*need)
			sum += math.Exp(term)
			if sum > beta {
				floor = s
				break
			}
		}
		if !found || floor > best.floor {
			best = result{tau: tau, floor: floor, leak: math.Min(sum, beta), live: lv}
			found = true
		}
	}
	return best, found
}

// logChoose is ln C(n, s).
func logChoose(n, s int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(s + 1))
	c, _ := math.Lgamma(float64(n - s + 1))
	return a - b - c
}

// logBinLower bounds ln P[Bin(n, p) < m] (Chernoff: exp(−n·KL(a‖p)) with
// a = (m − 1)/n < p; 0 when m − 1 ≥ np).
func logBinLower(n int, p float64, m int) float64 {
	a := float64(m-1) / float64(n)
	if a >= p {
		return 0
	}
	if a <= 0 {
		return float64(n) * math.Log1p(-p)
	}
	return -float64(n) * kl(a, p)
}

func kl(a, p float64) float64 {
	return a*math.Log(a/p) + (1-a)*math.Log((1-a)/(1-p))
}

// logTail2XY bounds ln P[2X + Y ≥ m] for independent X ~ Bin(nx, p),
// Y ~ Bin(ny, p) by min over λ > 0 of −λm + nx·ln(1 − p + pe^{2λ}) +
// ny·ln(1 − p + pe^{λ}) (Chernoff), the minimum found by golden-section
// search on the convex exponent. Returns 0 (the trivial bound) when the
// mean is already ≥ m.
func logTail2XY(nx, ny int, p float64, m int) float64 {
	mean := p * (2*float64(nx) + float64(ny))
	if float64(m) <= mean {
		return 0
	}
	if 2*nx+ny < m {
		return math.Inf(-1) // impossible
	}
	f := func(l float64) float64 {
		return -l*float64(m) + float64(nx)*math.Log1p(p*math.Expm1(2*l)) + float64(ny)*math.Log1p(p*math.Expm1(l))
	}
	lo, hi := 0.0, 1.0
	for f(hi) < f(hi/2) && hi < 1e3 {
		hi *= 2
	}
	const g = 0.6180339887498949
	a, b := lo, hi
	c, d := b-g*(b-a), a+g*(b-a)
	for i := 0; i < 200; i++ {
		if f(c) < f(d) {
			b = d
		} else {
			a = c
		}
		c, d = b-g*(b-a), a+g*(b-a)
	}
	return math.Min(0, f((a+b)/2))
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 2 {
			return nil, fmt.Errorf("%q is not an integer ≥ 2", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func floats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v < 0 || v >= 1 {
			return nil, fmt.Errorf("%q is not a fraction in [0, 1)", f)
		}
		out = append(out, v)
	}
	return out, nil
}
