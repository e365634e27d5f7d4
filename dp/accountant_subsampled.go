package dp

import (
	"fmt"
	"github.com/pairfed/pairfed/internal/memo"
	"math"
	"sync"
)

// Rényi DP of the Poisson-subsampled Gaussian mechanism.
//
// [MTZ19] Mironov, Talwar, Zhang, "Rényi Differential Privacy of the
// Sampled Gaussian Mechanism", 2019 (arXiv:1908.10530). The sampled
// Gaussian mechanism (SGM) includes each record independently with
// probability q and adds N(0, σ²I) to the sum of the sampled records'
// contributions, each of ℓ2 norm ≤ Δ (noise multiplier z = σ/Δ). For
// neighbours that differ by adding or removing one record, its order-α RDP
// for integer α ≥ 2 is at most (§3.3, the A_α of Thm 4 and 5)
//
//	τ(α) = 1/(α−1) · log Σ_{k=0}^{α} C(α, k) (1−q)^{α−k} q^k exp((k² − k)/(2z²)),
//
// the binomial expansion of E_{x∼N(0,z²)}[((1−q) + q·e^{(2x−1)/(2z²)})^α];
// Thm 5 shows the other direction of the divergence is never larger.
// Each moment E[(μ₁/μ₀)^k] = exp((k−1)·D_k(N(1,z²)‖N(0,z²))) is bounded by
// exp(k(k−1)/(2z²)) also for the discrete Gaussian of dp/noise.go (CKS20
// Prop 5: its Rényi divergences are at most the continuous ones), so the
// sum bounds the add direction for that sampler too; the remove direction
// uses MTZ Thm 5, proved for the continuous Gaussian, whose density the
// discrete one matches up to e^{±θ} (noise.go) — the standard practice of
// Opacus and TF-Privacy with floating-point noise.
//
// Replace-one neighbours. D and D' that differ in one record are two
// add/remove steps apart: D → D∖{z} → D' (n is public, so the run's
// constants stay those of the replace-one pair). Mironov 2017
// ("Rényi Differential Privacy", CSF, Prop 11) with p = q = 2 gives, for
// any distributions P, Q, R,
//
//	D_α(P‖R) ≤ (α − ½)/(α − 1) · D_{2α}(P‖Q) + D_{2α−1}(Q‖R)
//
// (Hölder on ∫P^α R^{1−α} = ∫[P^α Q^{½−α}]·[Q^{α−½} R^{1−α}]); with both
// steps bounded by the add/remove curve τ, the replace-one curve is
// τ_r(α) = (α − ½)/(α − 1)·τ(2α) + τ(2α − 1), composed over T steps before
// the ½-weights are applied (each step's pair of divergences composes
// separately; the inequality is applied once to the whole run). RDP of T
// adaptive steps adds (Mironov 2017 Prop 1), and (α, τ)-RDP is converted to
// (ε, δ)-DP by RDPToDP (Canonne, Kamath & Steinke 2020 Prop 12).
//
// Orders: the integers 2 … SubsampledMaxOrder (the replace-one bound reads
// the add/remove curve up to twice that). Integer orders cost a few percent
// of ε against a continuous grid near the optimum.

// Neighbouring names a neighbouring relation for the subsampled accountant.
type Neighbouring string

// The relations SubsampledGaussianEpsilon certifies.
const (
	// AddRemove: D' = D ∪ {z} or D ∖ {z} (the Poisson subsampling analyses').
	AddRemove Neighbouring = "add-remove"
	// ReplaceOne: D' replaces one record of D (n fixed and public).
	ReplaceOne Neighbouring = "replace-one"
)

// SubsampledMaxOrder is the largest RDP order the subsampled accountant
// minimizes over.
const SubsampledMaxOrder = 256

// SubsampledGaussianRDP returns an upper bound on the order-alpha RDP
// (integer alpha ≥ 2) of one step of the Poisson-subsampled Gaussian
// mechanism with sampling rate q ∈ [0, 1] and noise multiplier z = σ/Δ > 0,
// under add/remove neighbours ([MTZ19] §3.3), computed in log space and
// rounded up. It panics on invalid arguments (programmer error).
func SubsampledGaussianRDP(alpha int, q, z float64) float64 {
	if alpha < 2 || !(q >= 0 && q <= 1) || !(z > 0) || math.IsInf(z, 0) {
		panic(fmt.Sprintf("dp: SubsampledGaussianRDP(α = %d, q = %v, z = %v): need integer α ≥ 2, q ∈ [0, 1], z > 0 finite", alpha, q, z))
	}
	if q == 0 {
		return 0
	}
	a := float64(alpha)
	if q == 1 {
		return GaussianRDP(a, 1, z)
	}
	lq, l1q := math.Log(q), math.Log1p(-q)
	inv := 1 / (2 * z * z)
	// terms t_k = log C(α,k) + (α−k) log(1−q) + k log q + (k² − k)/(2z²),
	// with log C(α,k) accumulated as Σ_{i≤k} log((α−k+i)/i).
	var buf [2*SubsampledMaxOrder + 1]float64
	var terms []float64
	if alpha+1 <= len(buf) {
		terms = buf[:alpha+1]
	} else {
		terms = make([]float64, alpha+1)
	}
	var lc, maxT, errMax float64
	maxT = math.Inf(-1)
	for k := 0; k <= alpha; k++ {
		if k > 0 {
			lc += logInt(alpha-k+1) - logInt(k)
		}
		kf := float64(k)
		p1, p2, p3 := (a-kf)*l1q, kf*lq, (kf*kf-kf)*inv
		t := lc + p1 + p2 + p3
		terms[k] = t
		// error allowance: lc carries 2k logs and sums (≤ 16 ulps each of
		// |lc| + 1), the three products and three sums a few ulps each.
		e := float64(32*k+64) * acctU * (math.Abs(lc) + math.Abs(p1) + math.Abs(p2) + math.Abs(p3) + 1)
		errMax = fmax(errMax, e)
		maxT = fmax(maxT, t)
	}
	var s float64
	for _, t := range terms {
		s += math.Exp(t - maxT)
	}
	// s ∈ [1, α+1]: its summation and exp errors are ≤ (α + 16)·u·s
	// relative, i.e. that much absolute after the log.
	lse := maxT + math.Log(s)
	e := errMax + float64(alpha+32)*acctU*(1+math.Abs(lse))
	tau := acctUp((lse+e)/(a-1), 8)
	if tau < 0 {
		return 0
	}
	return tau
}

// logInts[i] = math.Log(i) for i ≤ 2·SubsampledMaxOrder + 1: the same
// values (bits) SubsampledGaussianRDP computed with math.Log for log C(α, k),
// read from a table (two of its three transcendental calls per term).
var logInts = func() []float64 {
	t := make([]float64, 2*SubsampledMaxOrder+2)
	for i := range t {
		t[i] = math.Log(float64(i))
	}
	return t
}()

// logInt is math.Log(float64(i)) for i ≥ 0, exactly (table or call).
func logInt(i int) float64 {
	if i < len(logInts) {
		return logInts[i]
	}
	return math.Log(float64(i))
}

// fmax is math.Max(x, y) (the same result in every case, NaN and signed
// zeros included), with the common strict cases inline.
func fmax(x, y float64) float64 {
	if x > y {
		return x
	}
	if y > x {
		return y
	}
	return math.Max(x, y) // equal (±0) or NaN
}

// subsampledRates returns one step's τ(α) = SubsampledGaussianRDP(α, q, z)
// for α = 2 … 2·SubsampledMaxOrder, each computed when first asked for,
// memoized by (q, z) (memo.go): a curve does not depend on the number of
// steps or on δ, so a job's round charges and the secure accountant's
// fixed-point iterations (same q and z, other steps and δ) reuse it.
func subsampledRates(q, z float64) *lazyRates {
	return subsampledRatesMemo.Get(subsampledRatesKey{q, z}, func() *lazyRates {
		return &lazyRates{q: q, z: z, tau: make([]float64, 2*SubsampledMaxOrder+1), done: make([]bool, 2*SubsampledMaxOrder+1)}
	})
}

type subsampledRatesKey struct{ q, z float64 }

// lazyRates is a curve filled on demand (concurrency-safe).
type lazyRates struct {
	mu   sync.Mutex
	q, z float64
	tau  []float64
	done []bool
}

// at returns SubsampledGaussianRDP(a, q, z) (the same bits), 2 ≤ a ≤
// 2·SubsampledMaxOrder.
func (r *lazyRates) at(a int) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done[a] {
		r.tau[a], r.done[a] = SubsampledGaussianRDP(a, r.q, r.z), true
	}
	return r.tau[a]
}

// At most 256 curves of 2·SubsampledMaxOrder + 1 floats (≈ 1 MiB).
var subsampledRatesMemo = memo.New[subsampledRatesKey, *lazyRates](256)

// SubsampledGaussianEpsilon returns the ε at δ, and the RDP order that
// attains it, of steps adaptive Poisson-subsampled Gaussian steps with
// rate q and noise multiplier z = σ/Δ (Δ the add/remove sensitivity of one
// record's contribution), under the given neighbouring relation (see the
// file comment). The result is rounded up.
func SubsampledGaussianEpsilon(q, z float64, steps int, delta float64, rel Neighbouring) (eps float64, order int, err error) {
	if !(q > 0 && q <= 1) {
		return 0, 0, acctErrorf("sampling rate q = %v must be in (0, 1]", q)
	}
	if err := acctCheckPositive("noise multiplier z", z); err != nil {
		return 0, 0, err
	}
	if steps < 1 {
		return 0, 0, acctErrorf("steps = %d must be ≥ 1", steps)
	}
	if err := acctCheckDelta("δ", delta); err != nil {
		return 0, 0, err
	}
	if rel != AddRemove && rel != ReplaceOne {
		return 0, 0, acctErrorf("unknown neighbouring relation %q (want %q or %q)", rel, AddRemove, ReplaceOne)
	}
	// ε is the minimum over orders a of ε_a = rdpToDPUp(a, curve(a), δ),
	// the first order attaining it. Branch and bound with the same
	// result: ε_a ≥ lb_a, the same conversion of the curve's lower bounds
	// (subsampledRDPLower; monotone steps), so once some order's exact
	// u₀ = ε_(a₀) is known, an order with lb_a > u₀ has ε_a > u₀ ≥ ε and
	// is neither the minimum nor tied with it; every other order is
	// computed exactly, in increasing order, as before.
	r := subsampledRates(q, z)
	st := float64(steps)
	curve := func(a int, tau func(int) float64) float64 {
		if rel == AddRemove {
			return acctUp(st*tau(a), 2)
		}
		af := float64(a)
		return acctSumUp(acctUp((af-0.5)/(af-1)*acctUp(st*tau(2*a), 2), 4), acctUp(st*tau(2*a-1), 2))
	}
	lower := func(a int) float64 { return subsampledRDPLower(a, q, z) }
	var lbs [SubsampledMaxOrder + 1]float64
	a0 := 2
	for a := 2; a <= SubsampledMaxOrder; a++ {
		lbs[a], _ = rdpToDPUp(float64(a), curve(a, lower), delta)
		if lbs[a] < lbs[a0] {
			a0 = a
		}
	}
	u0, _ := rdpToDPUp(float64(a0), curve(a0, r.at), delta)
	eps = math.Inf(1)
	for a := 2; a <= SubsampledMaxOrder; a++ {
		if lbs[a] > u0 {
			continue
		}
		e, _ := rdpToDPUp(float64(a), curve(a, r.at), delta)
		if e < eps {
			eps, order = e, a
		}
	}
	return eps, order, nil
}

// SubsampledGaussianMultiplier returns the smallest noise multiplier
// z = σ/Δ (to a relative precision of 1e-9, rounded up: the returned z
// passed the test) for which steps Poisson-subsampled Gaussian steps at
// rate q are (ε, δ)-DP under rel, by bisection on the monotone
// SubsampledGaussianEpsilon.
func SubsampledGaussianMultiplier(q float64, steps int, eps, delta float64, rel Neighbouring) (float64, error) {
	if err := acctCheckPositive("ε", eps); err != nil {
		return 0, err
	}
	// ok(z) is SubsampledGaussianEpsilon(q, z, steps, delta, rel) ≤ eps,
	// decided order by order (subsampledPasses: the minimum over orders is
	// ≤ eps iff some order's ε is, computed by the same expressions, so the
	// decisions and the returned z are those of the full computation),
	// starting at the order that passed last: a passing z usually costs one
	// order instead of the whole curve.
	if _, _, err := SubsampledGaussianEpsilon(q, 1, steps, delta, rel); err != nil {
		return 0, err // the arguments' errors (z = 1 is valid)
	}
	start := 2
	ok := func(z float64) (bool, error) {
		pass, a := subsampledPasses(q, z, steps, delta, rel, eps, start)
		if pass {
			start = a
		}
		return pass, nil
	}
	lo, hi := 0.0, 1.0
	for {
		pass, err := ok(hi)
		if err != nil {
			return 0, err
		}
		if pass {
			break
		}
		lo, hi = hi, 2*hi
		if hi > 1e12 {
			return 0, acctErrorf("no noise multiplier ≤ 1e12 reaches ε = %v at δ = %v (q = %v, %d steps)", eps, delta, q, steps)
		}
	}
	for hi-lo > 1e-9*hi {
		m := (lo + hi) / 2
		pass, _ := ok(m)
		if pass {
			hi = m
		} else {
			lo = m
		}
	}
	return hi, nil
}

// subsampledPasses reports whether some order a ∈ [2, SubsampledMaxOrder]
// has ε_a ≤ eps, ε_a the value SubsampledGaussianEpsilon minimizes (the
// same expressions, so the same bits), trying start first and then the
// orders ever farther from it; it returns the passing order. The
// arguments are valid (checked by the caller).
func subsampledPasses(q, z float64, steps int, delta float64, rel Neighbouring, eps float64, start int) (bool, int) {
	try := func(a int) bool {
		// A lower bound first (subsampledRDPLower: no exponentials): an
		// order whose ε is above eps even from the lower bounds fails
		// without the exact curve.
		af := float64(a)
		var lo float64
		if rel == AddRemove {
			lo = acctUp(float64(steps)*subsampledRDPLower(a, q, z), 2)
		} else {
			lo2 := acctUp(float64(steps)*subsampledRDPLower(2*a, q, z), 2)
			lo1 := acctUp(float64(steps)*subsampledRDPLower(2*a-1, q, z), 2)
			lo = acctSumUp(acctUp((af-0.5)/(af-1)*lo2, 4), lo1)
		}
		if e, _ := rdpToDPUp(af, lo, delta); e > eps {
			return false
		}
		var c float64
		if rel == AddRemove {
			c = acctUp(float64(steps)*SubsampledGaussianRDP(a, q, z), 2)
		} else {
			ar2 := acctUp(float64(steps)*SubsampledGaussianRDP(2*a, q, z), 2)
			ar1 := acctUp(float64(steps)*SubsampledGaussianRDP(2*a-1, q, z), 2)
			c = acctSumUp(acctUp((af-0.5)/(af-1)*ar2, 4), ar1)
		}
		e, _ := rdpToDPUp(float64(a), c, delta)
		return e <= eps
	}
	start = min(max(start, 2), SubsampledMaxOrder)
	if try(start) {
		return true, start
	}
	for d := 1; start-d >= 2 || start+d <= SubsampledMaxOrder; d++ {
		if a := start - d; a >= 2 && try(a) {
			return true, a
		}
		if a := start + d; a <= SubsampledMaxOrder && try(a) {
			return true, a
		}
	}
	return false, 0
}

// subsampledRDPLower returns a lower bound on SubsampledGaussianRDP(alpha,
// q, z) — on the float it returns, not only on the real τ — from a few of
// its terms: that function returns τ̂ = max(0, ⌈(lse + e)/(α−1)⌉) with
// lse = maxT + log s, where maxT is the largest computed term, s ≥ 1 (the
// sum of exp(tₖ − maxT) ≥ 0 includes exp(0) = 1, and float addition of
// non-negative numbers is monotone) so log s ≥ 0, and e ≥ 0; float
// addition and division are monotone, so τ̂ ≥ fl(maxT/(α−1)) ≥
// fl(t̂ₖ/(α−1)) for any computed term t̂ₖ. The terms here are computed by
// the same expressions from the same log C(α, k) (lcTable: the same
// accumulation, stored), for k at the ends, the binomial mode and a few
// points between; each is lowered by 10⁻⁹ of its parts' magnitudes and
// the quotient by 64 units of roundoff (acctDown), so that a compiler
// contracting the two functions' arithmetic differently (fused
// multiply-adds) cannot overturn the bound. Returns 0 (the trivial bound)
// when a term is not finite (τ̂ may then be +Inf or NaN) or α is past the
// table. The bound is ≥ 0, and every step from the curve to ε (acctUp,
// acctSumUp of non-negative terms, rdpToDPUp) is monotone, so an ε
// computed from lower bounds is ≤ the ε computed from the curve: an
// order it puts above the target fails for the curve too.
func subsampledRDPLower(alpha int, q, z float64) float64 {
	lcs := lcTable()
	if q == 0 || q == 1 || alpha >= len(lcs) {
		return 0
	}
	lcRow := lcs[alpha]
	a := float64(alpha)
	lq, l1q := math.Log(q), math.Log1p(-q)
	inv := 1 / (2 * z * z)
	mode := int(q * a)
	best := math.Inf(-1)
	for _, k := range [...]int{0, alpha, alpha - 1, mode - 1, mode, mode + 1, mode + 2, alpha / 4, alpha / 2, 3 * alpha / 4} {
		if k < 0 || k > alpha {
			continue
		}
		lc := lcRow[k]
		kf := float64(k)
		p1, p2, p3 := (a-kf)*l1q, kf*lq, (kf*kf-kf)*inv
		t := lc + p1 + p2 + p3
		slack := 1e-9 * (math.Abs(lc) + math.Abs(p1) + math.Abs(p2) + math.Abs(p3) + 1)
		if math.IsInf(t, 0) || math.IsNaN(t) || math.IsInf(slack, 0) {
			return 0
		}
		best = max(best, t-slack)
	}
	lb := acctDown(best/(a-1), 64)
	if !(lb > 0) {
		return 0
	}
	return lb
}

// lcTable returns lc[α][k] = the float log C(α, k) SubsampledGaussianRDP
// accumulates (Σ_{i≤k} (log(α−k+i) − log i) in its order, the same
// expression), for α ≤ 2·SubsampledMaxOrder: ≈ 1 MiB, built once.
func lcTable() [][]float64 {
	lcOnce.Do(func() {
		t := make([][]float64, 2*SubsampledMaxOrder+1)
		for alpha := 2; alpha < len(t); alpha++ {
			row := make([]float64, alpha+1)
			var lc float64
			for k := 1; k <= alpha; k++ {
				lc += logInt(alpha-k+1) - logInt(k)
				row[k] = lc
			}
			t[alpha] = row
		}
		lcRows = t
	})
	return lcRows
}

var (
	lcOnce sync.Once
	lcRows [][]float64
)
