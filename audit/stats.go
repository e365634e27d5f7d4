package audit

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// From error rates to ε. Any test between neighbouring datasets D and D' of
// an (ε, δ)-DP mechanism has false-positive and false-negative rates (α, β)
// with α + e^ε β ≥ 1 − δ and β + e^ε α ≥ 1 − δ (Kairouz, Oh, Viswanath
// 2015, Thm 2.1). Upper confidence bounds ᾱ, β̄ therefore give
//
//	ε ≥ max{ log((1 − δ − ᾱ)/β̄), log((1 − δ − β̄)/ᾱ) } = ε_lb,
//
// which holds whenever both bounds hold: with one-sided Clopper–Pearson
// bounds at level 1 − (1 − c)/2 each, with probability ≥ c (union bound).

// clopperPearsonUpper is the one-sided (1 − a) upper confidence bound on a
// binomial proportion with k successes in n trials.
func clopperPearsonUpper(k, n int, a float64) float64 {
	if k >= n {
		return 1
	}
	return distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - a)
}

// epsilonBound is the ε lower bound implied by upper bounds on FPR and FNR.
func epsilonBound(fprUB, fnrUB, delta float64) float64 {
	e := 0.0
	if fnrUB > 0 && 1-delta-fprUB > 0 {
		e = math.Max(e, math.Log((1-delta-fprUB)/fnrUB))
	}
	if fprUB > 0 && 1-delta-fnrUB > 0 {
		e = math.Max(e, math.Log((1-delta-fnrUB)/fprUB))
	}
	if math.IsNaN(e) {
		return 0
	}
	return e
}

// thresholdTest is the test "say D' when s > Thr" (s < Thr when Flip).
type thresholdTest struct {
	Thr  float64
	Flip bool
}

// errors counts the test's false positives among s0 (samples under D) and
// false negatives among s1 (under D'). s0 and s1 must be sorted.
func (t thresholdTest) errors(s0, s1 []float64) (fp, fn int) {
	above0 := len(s0) - sort.Search(len(s0), func(i int) bool { return s0[i] > t.Thr })
	above1 := len(s1) - sort.Search(len(s1), func(i int) bool { return s1[i] > t.Thr })
	if !t.Flip {
		return above0, len(s1) - above1
	}
	// "s < Thr": ties at Thr count as "D".
	below0 := sort.Search(len(s0), func(i int) bool { return s0[i] >= t.Thr })
	below1 := sort.Search(len(s1), func(i int) bool { return s1[i] >= t.Thr })
	return below0, len(s1) - below1
}

// bound is the ε lower bound of the test on sorted samples at one-sided
// level a per error rate.
func (t thresholdTest) bound(s0, s1 []float64, a, delta float64) (eps float64, fp, fn int) {
	fp, fn = t.errors(s0, s1)
	return epsilonBound(clopperPearsonUpper(fp, len(s0), a), clopperPearsonUpper(fn, len(s1), a), delta), fp, fn
}

// chooseTest picks, on calibration samples (sorted), the threshold test
// with the largest ε bound among up to maxCands thresholds spread by rank
// over the pooled samples, in both directions when bothWays. Choosing on
// data that the measurement does not reuse keeps the measurement's
// confidence statement exact: no multiple-testing correction is needed.
func chooseTest(c0, c1 []float64, a, delta float64, bothWays bool) thresholdTest {
	pool := append(append([]float64(nil), c0...), c1...)
	sort.Float64s(pool)
	const maxCands = 400
	step := max(1, len(pool)/maxCands)
	best, bestE := thresholdTest{Thr: pool[len(pool)/2]}, -1.0
	for i := 0; i < len(pool); i += step {
		for _, flip := range []bool{false, true} {
			if flip && !bothWays {
				continue
			}
			t := thresholdTest{Thr: pool[i], Flip: flip}
			if e, _, _ := t.bound(c0, c1, a, delta); e > bestE {
				best, bestE = t, e
			}
		}
	}
	return best
}
