package pairwise

import (
	"math"
	"math/rand/v2"
	"slices"
)

// The AUC objective from scores.
//
// For the AUC task h(w; x_i, x_j) = s_i − s_j with s = Xw, so F_S(w) needs
// only the n scores, computed once in O(nnz(X)), never the n² row pairs.
// Every AUC loss here gives an ordered pair of different labels the value of
// its (positive, negative) order, so with a_p the positives' scores and b_q
// the negatives',
//
//	Σ_{i≠j} f = 2·Σ_{p,q} ℓ(a_p − b_q) + c_same,
//
// where c_same is n₊(n₊−1) + n₋(n₋−1) times the same-label value (log 2 for
// the logistic loss, 0 for hinge and square). Then
//
//	square:   Σ_{p,q} (1 − a_p + b_q)² = n₋Σc_p² + 2Σc_p·Σb_q + n₊Σb_q², c_p = 1 − a_p: O(n);
//	hinge:    Σ_{p,q} (c_p + b_q)₊ over the b_q > −c_p: sorted b and prefix sums, O(n log n);
//	logistic: no closed form; the n₊n₋ terms φ(2(a_p − b_q)) from scores — O(n₊n₋)
//	          additions without a row read — when n₊n₋ ≤ maxPairs, otherwise
//	          maxPairs pairs sampled from the scores.

// aucRisk returns EmpiricalRisk for a linear AUC objective, and ok = false
// when the loss has no score form here.
func aucRisk(o *linearObjective, w []float64, maxPairs int, rng *rand.Rand) (risk, stderr float64, ok bool) {
	s := o.data
	var pos, neg []float64
	for i := 0; i < s.N; i++ {
		v := s.Dot(i, w)
		switch s.Y[i] {
		case 1:
			pos = append(pos, v)
		case -1:
			neg = append(neg, v)
		default:
			return 0, 0, false
		}
	}
	np, nn := float64(len(pos)), float64(len(neg))
	pairs := float64(s.N) * float64(s.N-1)
	var cross, same float64
	switch o.loss.(type) {
	case AUCSquare:
		var sc, sc2, sb, sb2 float64
		for _, a := range pos {
			c := 1 - a
			sc += c
			sc2 += c * c
		}
		for _, b := range neg {
			sb += b
			sb2 += b * b
		}
		cross = nn*sc2 + 2*sc*sb + np*sb2
	case AUCHinge:
		cross = hingeCross(pos, neg)
	case AUCLogistic:
		same = (np*(np-1) + nn*(nn-1)) * math.Ln2
		if np*nn > float64(maxPairs) && rng != nil {
			m, se := logisticSampled(pos, neg, maxPairs, rng)
			// risk = (2·n₊n₋·m + same)/pairs; se scales the same way.
			r := (2*np*nn*m + same) / pairs
			return r + o.reg(w), 2 * np * nn * se / pairs, true
		}
		for _, a := range pos {
			for _, b := range neg {
				cross += softplusNeg(2 * (a - b))
			}
		}
	default:
		return 0, 0, false
	}
	return (2*cross+same)/pairs + o.reg(w), 0, true
}

// reg is (λ/2)‖w‖².
func (o *linearObjective) reg(w []float64) float64 {
	if o.lambda == 0 {
		return 0
	}
	return o.lambda / 2 * dot(w, w)
}

// hingeCross is Σ_{p,q} (1 − a_p + b_q)₊: for each a_p the active b_q are
// those above a_p − 1, a suffix of the sorted b. It sorts neg in place.
func hingeCross(pos, neg []float64) float64 {
	suffix := make([]float64, len(neg)+1) // suffix[k] = Σ_{q ≥ k} b_q
	if slices.ContainsFunc(neg, math.IsNaN) {
		slices.Sort(neg)
	} else {
		// The radix sort (suffix as its scratch, before the sums), in the
		// same order as slices.Sort up to the order of −0 and +0, which
		// the sums below (from +0) cannot tell apart.
		sortFloats(neg, suffix)
	}
	for k := len(neg) - 1; k >= 0; k-- {
		suffix[k] = suffix[k+1] + neg[k]
	}
	var sum float64
	for _, a := range pos {
		c := 1 - a
		// first k with b_k > a − 1, i.e. c + b_k > 0
		k, _ := slices.BinarySearchFunc(neg, -c, func(b, t float64) int {
			if b <= t {
				return -1
			}
			return 1
		})
		sum += float64(len(neg)-k)*c + suffix[k]
	}
	return sum
}

// logisticSampled averages φ(2(a_p − b_q)) over m (p, q) drawn uniformly.
func logisticSampled(pos, neg []float64, m int, rng *rand.Rand) (mean, stderr float64) {
	var s, s2 float64
	for k := 0; k < m; k++ {
		v := softplusNeg(2 * (pos[rng.IntN(len(pos))] - neg[rng.IntN(len(neg))]))
		s += v
		s2 += v * v
	}
	mean = s / float64(m)
	variance := s2/float64(m) - mean*mean
	return mean, math.Sqrt(math.Max(variance, 0) / float64(m))
}

// RiskExact reports whether EmpiricalRisk(obj, ·, maxPairs, rng) is exact
// (its standard error is 0 by construction, not by chance).
func RiskExact(obj Objective, maxPairs int) bool {
	n := obj.Data().N
	if int64(n)*int64(n-1) <= int64(maxPairs) {
		return true
	}
	o, ok := obj.(*linearObjective)
	if !ok {
		return false
	}
	switch o.loss.(type) {
	case AUCSquare, AUCHinge:
		return true
	case AUCLogistic:
		var np int64
		for _, y := range o.data.Y {
			if y == 1 {
				np++
			}
		}
		return np*(int64(n)-np) <= int64(maxPairs)
	}
	return false
}

// EmpiricalRisk returns F_S(w) = 1/(n(n−1)) Σ_{i≠j} f(w; z_i, z_j) + (λ/2)‖w‖².
// For the AUC task it works from the scores Xw (risk.go): exact for the
// hinge and square losses at any n, and for the logistic loss when
// n₊n₋ ≤ maxPairs. Otherwise it is exact when n(n−1) ≤ maxPairs or rng is
// nil, and else averages maxPairs ordered pairs drawn uniformly (i ≠ j, or
// (positive, negative) from the scores for the logistic loss) with the given
// rng — an unbiased estimate whose standard error is reported as the second
// value (0 when exact). RiskExact tells which.
func EmpiricalRisk(obj Objective, w []float64, maxPairs int, rng *rand.Rand) (risk, stderr float64) {
	n := obj.Data().N
	if n < 2 {
		return math.NaN(), 0
	}
	if o, ok := obj.(*linearObjective); ok {
		if r, se, ok := aucRisk(o, w, maxPairs, rng); ok {
			return r, se
		}
	}
	return pairRisk(obj, w, maxPairs, rng)
}

// pairRisk is EmpiricalRisk by the pair loop: the reference the score forms
// are tested against, and the metric task's objective.
func pairRisk(obj Objective, w []float64, maxPairs int, rng *rand.Rand) (risk, stderr float64) {
	n := obj.Data().N
	if int64(n)*int64(n-1) <= int64(maxPairs) || rng == nil {
		var s float64
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if i != j {
					s += obj.PairLoss(w, i, j)
				}
			}
		}
		return s / float64(n*(n-1)), 0
	}
	var s, s2 float64
	u := UniformPair{N: n}
	for k := 0; k < maxPairs; k++ {
		i, j, _ := u.Next(rng)
		v := obj.PairLoss(w, i, j)
		s += v
		s2 += v * v
	}
	m := s / float64(maxPairs)
	variance := s2/float64(maxPairs) - m*m
	return m, math.Sqrt(math.Max(variance, 0) / float64(maxPairs))
}
