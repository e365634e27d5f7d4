package pairwise

import (
	"math"
	"slices"
)

// AUC returns the area under the ROC curve of scores against labels y ∈ {±1}:
// the fraction of (positive, negative) pairs ranked correctly, ties counted
// ½. It runs in O(n log n): the positives' and the negatives' scores are
// sorted apart (float64 sorts, no index indirection) and merged, counting
// for each positive the negatives below it and tied with it. The counts are
// integers, so the result is exact up to the final division (it equals the
// rank-based count aucRanks, which the tests keep as the reference). It
// returns NaN when one class is absent or a score is NaN.
func AUC(scores, y []float64) float64 {
	return aucTo(scores, y, nil)
}

// aucTo is AUC with buf as scratch (grown when shorter than 2·len(scores));
// it returns the buffer it used in *buf's place when buf is not nil.
func aucTo(scores, y []float64, buf *[]float64) float64 {
	var np int
	for i, v := range scores {
		if math.IsNaN(v) {
			return math.NaN()
		}
		if y[i] > 0 {
			np++
		}
	}
	nn := len(scores) - np
	if np == 0 || nn == 0 {
		return math.NaN()
	}
	var b []float64
	if buf != nil {
		b = *buf
	}
	if cap(b) < 2*len(scores) {
		b = make([]float64, 2*len(scores))
		if buf != nil {
			*buf = b
		}
	}
	buf1, buf2 := b[:len(scores)], b[len(scores):2*len(scores)]
	ps, ns := buf1[:0:np], buf1[np:np]
	for i, v := range scores {
		if y[i] > 0 {
			ps = append(ps, v)
		} else {
			ns = append(ns, v)
		}
	}
	sortFloats(ps, buf2)
	sortFloats(ns, buf2)
	// twice the correct count: Σ over positives of 2·#below + #tied.
	var c2 int64
	k := 0 // ns[:k] < p, ns[k:] ≥ p
	for a := 0; a < len(ps); {
		p := ps[a]
		b := a + 1
		for b < len(ps) && ps[b] == p {
			b++
		}
		for k < len(ns) && ns[k] < p {
			k++
		}
		t := 0
		for k+t < len(ns) && ns[k+t] == p {
			t++
		}
		c2 += int64(b-a) * int64(2*k+t)
		a = b
	}
	return float64(c2) / 2 / (float64(np) * float64(nn))
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
		dst[k] = aucTo(sc[k], s.Y, &a.buf)
	}
	return dst
}

// LinearAUC is LinearAUC(w, s) (the same value, bit for bit) in the
// scratch's buffers.
func (a *AUCScratch) LinearAUC(w []float64, s *Dataset) float64 {
	if cap(a.scores) < s.N {
		a.scores = make([]float64, s.N)
	}
	return aucTo(ScoresTo(a.scores[:s.N], w, s), s.Y, &a.buf)
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
