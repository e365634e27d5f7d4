package pairwise

import (
	"math"
	"slices"
	"sort"
)

// AUC returns the area under the ROC curve of scores against labels y ∈ {±1}:
// the fraction of (positive, negative) pairs ranked correctly, ties counted
// ½. It runs in O(n log n) and, on typical scores, in about the time of
// sorting the smaller class: the smaller class's scores are sorted, and
// each score of the other class finds how many of them lie below it and
// how many tie with it, through a table of buckets (aucCount). The counts
// are integers, so the result is exact up to the final division (it
// equals the rank-based count aucRanks, which the tests keep as the
// reference). It returns NaN when one class is absent or a score is NaN.
func AUC(scores, y []float64) float64 {
	return aucTo(scores, y, nil, nil)
}

// aucTo is AUC with buf and first as scratch (grown when too short, and
// then stored back when not nil).
func aucTo(scores, y []float64, buf *[]float64, first *[]int32) float64 {
	n := len(scores)
	var np int
	for i, v := range scores {
		if math.IsNaN(v) {
			return math.NaN()
		}
		np += isPos(y[i])
	}
	nn := n - np
	if np == 0 || nn == 0 {
		return math.NaN()
	}
	var b []float64
	if buf != nil {
		b = *buf
	}
	if cap(b) < 2*n+2 {
		b = make([]float64, 2*n+2)
		if buf != nil {
			*buf = b
		}
	}
	// Split without a branch on the label (a random one mispredicts):
	// every score is written to the next slot of both classes and only
	// its own class's count moves; each class has one spare slot at its
	// end for the writes after it is full.
	b = b[:2*n+2]
	ip, in := 0, np+1
	for i, v := range scores {
		b[ip] = v
		b[in] = v
		p := isPos(y[i])
		ip += p
		in += 1 - p
	}
	ps, ns, buf2 := b[:np], b[np+1:np+1+nn], b[n+2:]
	var f []int32
	if first != nil {
		f = *first
	}
	if m := min(np, nn); cap(f) < 2*m+2 {
		f = make([]int32, 2*m+2)
		if first != nil {
			*first = f
		}
	}
	// Twice the correctly ranked pairs plus the ties: for each negative,
	// 2·#(positives above) + #(ties) = 2·np − #below − #at-most; for each
	// positive, 2·#(negatives below) + #(ties) = #below + #at-most.
	var c2 int64
	if np <= nn {
		sortFloats(ps, buf2)
		lt, le := aucCount(ps, ns, f)
		c2 = 2*int64(np)*int64(nn) - lt - le
	} else {
		sortFloats(ns, buf2)
		lt, le := aucCount(ns, ps, f)
		c2 = lt + le
	}
	return float64(c2) / 2 / (float64(np) * float64(nn))
}

// isPos is 1 when y > 0, else 0, without a branch.
func isPos(y float64) int {
	p := 0
	if y > 0 {
		p = 1
	}
	return p
}

// aucCount returns the sums over v in other of the numbers of values of
// sorted (ascending, no NaN; overwritten) below v and at most v. It first
// folds sorted into its distinct values, each with the number of values
// below it (ties then cost nothing per v). The range of the distinct
// values is cut into as many equal buckets by the value; the bucket
// ⌊(v − lo)·scale⌋ never decreases as v grows (each floating-point step
// is monotone), so every distinct value in an earlier bucket is below v,
// every one in a later bucket above it, and only v's own bucket — found
// in the table first (first[b]: how many distinct values lie in buckets
// before b) — is searched. Buckets hold about one value each on the usual
// scores; a crowded one (heavy tails) is binary-searched, so the count is
// exact, and O(log n) per value, whatever the data. scratch needs
// 2·len(sorted)+2 entries.
func aucCount(sorted, other []float64, scratch []int32) (sumLT, sumLE int64) {
	m := len(sorted)
	// Distinct values: sorted[:u], below[k] = how many values are below
	// sorted[k], below[u] = m.
	below := scratch[m+1 : 2*m+2]
	u := 0
	for i, v := range sorted {
		if i == 0 || v != sorted[u-1] {
			sorted[u] = v
			below[u] = int32(i)
			u++
		}
	}
	below[u] = int32(m)
	vals := sorted[:u]
	lo, hi := vals[0], vals[u-1]
	nb := u
	scale := float64(nb) / (hi - lo)
	if math.IsInf(hi-lo, 0) || math.IsInf(scale, 0) || !(scale > 0) {
		// One bucket: a binary search per value ((v − lo)·0 would be NaN
		// for an infinite v or lo).
		nb, scale = 1, 0
	}
	first := scratch[:nb+1]
	clear(first)
	for _, v := range vals {
		b := 0
		if nb > 1 {
			b = min(int((v-lo)*scale), nb-1)
		}
		first[b+1]++
	}
	for b := 1; b <= nb; b++ {
		first[b] += first[b-1]
	}
	for _, v := range other {
		var lt, le int
		switch {
		case v < lo:
		case v > hi:
			lt, le = m, m
		default:
			b := 0
			if nb > 1 {
				b = min(int((v-lo)*scale), nb-1)
			}
			i, j := int(first[b]), int(first[b+1])
			if j-i > 8 {
				i += sort.SearchFloat64s(vals[i:j], v) // the first ≥ v
			} else {
				for i < j && vals[i] < v {
					i++
				}
			}
			lt, le = int(below[i]), int(below[i])
			if i < u && vals[i] == v {
				le = int(below[i+1])
			}
		}
		sumLT += int64(lt)
		sumLE += int64(le)
	}
	return sumLT, sumLE
}

// sortFloats sorts v (no NaN) ascending, using tmp (len ≥ len(v)) as
// scratch. Long slices get an LSD radix sort on the top 32 bits of the
// order-preserving integer image of each value (three passes of 11 bits),
// then an insertion sort, which finishes the runs of equal top halves
// (rare: values within 2⁻²⁰ relative of each other) by the whole image;
// this is several times faster than a comparison sort. Short slices get
// slices.Sort. −0 sorts before +0 (they compare equal, so callers
// counting with == and < see no difference).
func sortFloats(v, tmp []float64) {
	const bits, buckets = 11, 1 << 11
	if len(v) < 512 {
		slices.Sort(v)
		return
	}
	key := func(f float64) uint64 {
		b := math.Float64bits(f)
		return b ^ (uint64(int64(b)>>63) | 1<<63)
	}
	var count [3][buckets]uint32
	for _, f := range v {
		k := key(f) >> 32
		count[0][k&(buckets-1)]++
		count[1][k>>bits&(buckets-1)]++
		count[2][k>>(2*bits)]++
	}
	src, dst := v, tmp[:len(v)]
	for p := range count {
		c := &count[p]
		shift := 32 + p*bits
		if c[key(src[0])>>shift&(buckets-1)] == uint32(len(v)) {
			continue // every key has this digit: the pass is the identity
		}
		var sum uint32
		for b, n := range c {
			c[b] = sum
			sum += n
		}
		for _, f := range src {
			b := key(f) >> shift & (buckets - 1)
			dst[c[b]] = f
			c[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &v[0] {
		copy(v, src)
	}
	// Sorted by the top halves: only neighbours with equal top halves can
	// be out of order, so this pass is linear unless such runs are long.
	for i := 1; i < len(v); i++ {
		x, kx := v[i], key(v[i])
		j := i
		for j > 0 && key(v[j-1]) > kx {
			v[j] = v[j-1]
			j--
		}
		v[j] = x
	}
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
	if s.X != nil { // Dot's dense branch, hoisted out of the loop
		d := s.D
		for i := range dst[:s.N] {
			dst[i] = dot(s.X[i*d:i*d+d], w)
		}
		return dst
	}
	for i := 0; i < s.N; i++ {
		dst[i] = s.Dot(i, w)
	}
	return dst
}

// dot4 is dot(x, w0), …, dot(x, w3), each summed exactly as dot sums it
// (two accumulators over the even and odd coordinates, added at the end):
// bit for bit dot's values, with the four sums' additions overlapping.
func dot4(x, w0, w1, w2, w3 []float64) (float64, float64, float64, float64) {
	n := len(x)
	w0, w1, w2, w3 = w0[:n], w1[:n], w2[:n], w3[:n]
	var a0, b0, a1, b1, a2, b2, a3, b3 float64
	j := 0
	for ; j+1 < n; j += 2 {
		xe, xo := x[j], x[j+1]
		a0 += xe * w0[j]
		b0 += xo * w0[j+1]
		a1 += xe * w1[j]
		b1 += xo * w1[j+1]
		a2 += xe * w2[j]
		b2 += xo * w2[j+1]
		a3 += xe * w3[j]
		b3 += xo * w3[j+1]
	}
	if j < n {
		a0 += x[j] * w0[j]
		a1 += x[j] * w1[j]
		a2 += x[j] * w2[j]
		a3 += x[j] * w3[j]
	}
	return a0 + b0, a1 + b1, a2 + b2, a3 + b3
}

// scoreBlockRows is the number of rows ScoresManyTo scores for every model
// before it moves on: a block of 256 rows of d = 22 (45 kB) stays in the
// core's cache while each model reads it.
const scoreBlockRows = 256

// ScoresManyTo writes ScoresTo(dst[k], ws[k], s) for every model k, bit for
// bit, reading the dense records once for all the models (in blocks of
// rows) instead of once per model: scoring is bound by reading the records
// from memory, not by the arithmetic.
func ScoresManyTo(dst, ws [][]float64, s *Dataset) {
	if s.X == nil {
		for k, w := range ws {
			ScoresTo(dst[k], w, s)
		}
		return
	}
	d := s.D
	for lo := 0; lo < s.N; lo += scoreBlockRows {
		hi := min(lo+scoreBlockRows, s.N)
		k := 0
		for ; k+4 <= len(ws); k += 4 {
			d0, d1, d2, d3 := dst[k][:hi], dst[k+1][:hi], dst[k+2][:hi], dst[k+3][:hi]
			for i := lo; i < hi; i++ {
				d0[i], d1[i], d2[i], d3[i] = dot4(s.X[i*d:i*d+d], ws[k], ws[k+1], ws[k+2], ws[k+3])
			}
		}
		for ; k < len(ws); k++ {
			dk, w := dst[k][:hi], ws[k]
			for i := lo; i < hi; i++ {
				dk[i] = dot(s.X[i*d:i*d+d], w)
			}
		}
	}
}

// LinearAUC returns the AUC of the linear scorer w on s.
func LinearAUC(w []float64, s *Dataset) float64 {
	return AUC(ScoresTo(make([]float64, s.N), w, s), s.Y)
}

// AUCScratch holds the buffers of LinearAUC for reuse: a loop that scores
// many models (a hyperparameter search) allocates them once. The zero
// value is ready; it is not safe for concurrent use.
type AUCScratch struct {
	scores, buf []float64
	many        [][]float64
	first       []int32
}

// LinearAUCsTo writes LinearAUC(ws[k], s) into dst[k] for every model k
// (bit for bit), scoring all the models in one pass over the records
// (ScoresManyTo), and returns dst.
func (a *AUCScratch) LinearAUCsTo(dst []float64, ws [][]float64, s *Dataset) []float64 {
	for len(a.many) < len(ws) {
		a.many = append(a.many, nil)
	}
	sc := a.many[:len(ws)]
	for k := range sc {
		if cap(sc[k]) < s.N {
			sc[k] = make([]float64, s.N)
		}
		sc[k] = sc[k][:s.N]
	}
	ScoresManyTo(sc, ws, s)
	for k := range ws {
		dst[k] = aucTo(sc[k], s.Y, &a.buf, &a.first)
	}
	return dst
}

// LinearAUC is LinearAUC(w, s) (the same value, bit for bit) in the
// scratch's buffers.
func (a *AUCScratch) LinearAUC(w []float64, s *Dataset) float64 {
	if cap(a.scores) < s.N {
		a.scores = make([]float64, s.N)
	}
	return aucTo(ScoresTo(a.scores[:s.N], w, s), s.Y, &a.buf, &a.first)
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
