package pairwise

import (
	"math"
	"slices"
	"sort"
)

// AUC returns the area under the ROC curve of scores against labels y ∈ {±1}:
// the fraction of (positive, negative) pairs ranked correctly, ties counted
// ½. It runs in O(n log n) (sort, then count ranks with tied groups). It
// returns NaN when one class is absent or a score is NaN.
func AUC(scores, y []float64) float64 {
	n := len(scores)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
		if math.IsNaN(scores[i]) {
			return math.NaN()
		}
	}
	sort.Slice(idx, func(a, b int) bool { return scores[idx[a]] < scores[idx[b]] })
	var pos, neg float64
	var correct float64 // Σ over positives of (#neg below + ½ #neg tied)
	var negBelow float64
	for a := 0; a < n; {
		b := a
		var p, q float64
		for b < n && scores[idx[b]] == scores[idx[a]] {
			if y[idx[b]] > 0 {
				p++
			} else {
				q++
			}
			b++
		}
		correct += p * (negBelow + q/2)
		negBelow += q
		pos += p
		neg += q
		a = b
	}
	if pos == 0 || neg == 0 {
		return math.NaN()
	}
	return correct / (pos * neg)
}

// AUCBrute is the O(n²) definition of AUC, for tests.
func AUCBrute(scores, y []float64) float64 {
	var c, m float64
	for i := range scores {
		for j := range scores {
			if y[i] > 0 && y[j] < 0 {
				m++
				switch {
				case scores[i] > scores[j]:
					c++
				case scores[i] == scores[j]:
					c += 0.5
				}
			}
		}
	}
	if m == 0 {
		return math.NaN()
	}
	return c / m
}

// ScoresTo writes s_i = wᵀx_i for every record into dst (len N) and returns it.
func ScoresTo(dst, w []float64, s *Dataset) []float64 {
	for i := 0; i < s.N; i++ {
		dst[i] = s.Dot(i, w)
	}
	return dst
}

// LinearAUC returns the AUC of the linear scorer w on s.
func LinearAUC(w []float64, s *Dataset) float64 {
	return AUC(ScoresTo(make([]float64, s.N), w, s), s.Y)
}

// ROC returns the ROC curve points (FPR, TPR) of scores, one point per
// distinct threshold, from (0,0) to (1,1).
func ROC(scores, y []float64) (fpr, tpr []float64) {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return 0
	})
	var P, N float64
	for _, v := range y {
		if v > 0 {
			P++
		} else {
			N++
		}
	}
	fpr, tpr = []float64{0}, []float64{0}
	var tp, fp float64
	for a := 0; a < len(idx); {
		b := a
		for b < len(idx) && scores[idx[b]] == scores[idx[a]] {
			if y[idx[b]] > 0 {
				tp++
			} else {
				fp++
			}
			b++
		}
		fpr = append(fpr, fp/N)
		tpr = append(tpr, tp/P)
		a = b
	}
	return fpr, tpr
}
