package pairwise

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/pairfed/pairfed/pairwise/internal/kernel"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// KNN3Accuracy is KNNAccuracy with k = 3, the evaluation of the metric
// learning experiments of [H20] and [X21] ("the KNN classifier is adopted
// … we set K to be 3").
func KNN3Accuracy(W []float64, train, test *Dataset) float64 {
	return KNNAccuracy(W, train, test, 3)
}

// KNNAccuracyLOO is the leave-one-out KNN accuracy on data: each record's
// label is predicted by the vote of its k nearest other records under W
// (see KNNAccuracy for the metric, ties and NaN). It scores a metric where
// only labelled evaluation records exist (a federation's coordinator holds
// a test file but no training records). Needs data.N ≥ 2.
func KNNAccuracyLOO(W []float64, data *Dataset, k int) float64 {
	if data.N < 2 {
		return math.NaN()
	}
	for _, v := range W {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return math.NaN()
		}
	}
	pred := make([]float64, data.N)
	knnPredict(pred, W, data, data.All(), min(k, data.N-1), true)
	correct := 0
	for i, p := range pred {
		if p == data.Y[i] {
			correct++
		}
	}
	return float64(correct) / float64(data.N)
}

// KNNAccuracy returns the fraction of test records whose label is predicted
// correctly by a k-nearest-neighbour vote among the training records under
// the Mahalanobis distance d_W(x, x') = (x − x')ᵀ W (x − x').
//
// W is a row-major d×d matrix. Only its PSD part is used: W is symmetrized
// and factored as W₊ = L Lᵀ through its eigendecomposition, with negative
// eigenvalues (rounding noise for a projected model) clipped to 0, so
// d_W(x, x') = ‖Lᵀx − Lᵀx'‖² is computed in the transformed space. A
// diagonal W is factored exactly as L = diag(√max(W_aa, 0)), so W = I is
// plain Euclidean KNN.
//
// Ties in distance are broken by the lower training index; a tied vote
// (possible for even k) goes to the label of the nearest neighbour. If
// k > train.N all training records vote. The test set may be the training
// set (each record is then its own nearest neighbour). Returns NaN for an
// empty test set or a W with a NaN or infinite entry (a diverged model). Panics on shape mismatch or k < 1 (programmer errors).
//
// Cost: O((n_train + n_test)·d·m) for the transform (m ≤ d the rank of W₊)
// plus an O(d³) eigendecomposition, then O(n_test·n_train·(m + k)).
func KNNAccuracy(W []float64, train, test *Dataset, k int) float64 {
	return KNNAccuracyView(W, train, test.All(), k)
}

// KNN3AccuracyView is KNNAccuracyView with k = 3.
func KNN3AccuracyView(W []float64, train *Dataset, test View) float64 {
	return KNNAccuracyView(W, train, test, 3)
}

// KNNAccuracyView is KNNAccuracy on the records of a view (a validation
// fold read through its index, not gathered): the same value as
// KNNAccuracy(W, train, test.Gather(), k).
func KNNAccuracyView(W []float64, train *Dataset, test View, k int) float64 {
	n := test.Len()
	if n == 0 {
		return math.NaN()
	}
	for _, v := range W {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return math.NaN()
		}
	}
	pred := make([]float64, n)
	knnPredict(pred, W, train, test, k, false)
	correct := 0
	for t, p := range pred {
		if p == test.Label(t) {
			correct++
		}
	}
	return float64(correct) / float64(n)
}

// knnPredict writes the predicted label of every test record into dst.
// With loo, test is all of train and record t does not vote for itself.
func knnPredict(dst, W []float64, train *Dataset, test View, k int, loo bool) {
	d := train.D
	switch {
	case test.Data.D != d:
		panic(fmt.Sprintf("pairwise: KNN: train has %d features, test %d", d, test.Data.D))
	case len(W) != d*d:
		panic(fmt.Sprintf("pairwise: KNN: metric has %d values, want %d×%d", len(W), d, d))
	case k < 1:
		panic(fmt.Sprintf("pairwise: KNN: k = %d < 1", k))
	case train.N < 1:
		panic("pairwise: KNN: empty training set")
	case len(dst) != test.Len():
		panic("pairwise: KNN: prediction slice has the wrong length")
	}
	k = min(k, train.N)
	L, m := metricFactor(W, d)
	zTrain := transformRows(train.All(), L, d, m)
	zTest := transformRows(test, L, d, m)

	if knnSortedScan && finite(zTrain) && finite(zTest) {
		knnSorted(dst, train.Y, zTrain, zTest, train.N, m, k, loo)
		return
	}
	knnScan(dst, train.Y, zTrain, zTest, train.N, m, k, loo)
}

// knnSortedScan switches knnPredict's sorted scan on (tests compare it
// with the index-order scan).
var knnSortedScan = true

func finite(z []float64) bool {
	for _, v := range z {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// topK is the k nearest (distance, index) pairs seen, sorted by distance
// and then index: a candidate enters when it precedes the k-th in that
// order, so the kept set is the k least pairs whatever the visiting order
// (index order gives the original rule "strictly closer, ties keep the
// lower index").
type topK struct {
	dist []float64
	who  []int
}

func (h *topK) reset() {
	for c := range h.dist {
		h.dist[c] = math.Inf(1)
		h.who[c] = -1
	}
}

func (h *topK) offer(s float64, i int) {
	k := len(h.dist)
	last := h.dist[k-1]
	if !(s < last || (s == last && h.who[k-1] >= 0 && i < h.who[k-1])) {
		return
	}
	c := k - 1
	for c > 0 && (s < h.dist[c-1] || (s == h.dist[c-1] && i < h.who[c-1])) {
		h.dist[c], h.who[c] = h.dist[c-1], h.who[c-1]
		c--
	}
	h.dist[c], h.who[c] = s, i
}

// vote is the predicted label: the majority of the k labels, a tie going
// to the nearest's label; 0 if no neighbour has a finite distance.
func (h *topK) vote(y []float64) float64 {
	var vote float64
	for _, i := range h.who {
		if i >= 0 {
			vote += y[i]
		}
	}
	switch {
	case vote > 0:
		return 1
	case vote < 0:
		return -1
	case h.who[0] >= 0:
		return y[h.who[0]]
	default: // no finite distance (non-finite W or data)
		return 0
	}
}

// sqDist is ‖a − b‖² summed left to right.
func sqDist(a, b []float64) float64 {
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		e := v - b[i]
		s += e * e
	}
	return s
}

// knnScan is the reference: every training record for every test record,
// in index order. O(n_test·n_train·m).
func knnScan(dst, y, zTrain, zTest []float64, nTrain, m, k int, loo bool) {
	h := topK{dist: make([]float64, k), who: make([]int, k)}
	for t := range dst {
		zt := zTest[t*m : (t+1)*m]
		h.reset()
		for i := 0; i < nTrain; i++ {
			if loo && i == t {
				continue
			}
			h.offer(sqDist(zt, zTrain[i*m:(i+1)*m]), i)
		}
		dst[t] = h.vote(y)
	}
}

// knnSorted gives knnScan's predictions with far fewer operations: the
// training records are sorted by their coordinate a* of largest variance
// in the transformed space and cut into blocks of sixteen consecutive
// ones, stored interleaved (coordinate by coordinate, the sixteen records
// side by side) so that kernel.SqDist16Bound sums sixteen distances at
// once (AVX2: four lanes per instruction, four independent chains;
// knnScan's one chain of dependent additions waits on every add's
// latency). Each test record starts at its block in that order and walks
// outward block by block, in each direction until the gap on a* to the
// block's nearest record alone exceeds the k-th distance found; a block's
// sums stop once all sixteen pass the k-th.
//
// Exactness: a distance is the left-to-right sum of the terms e_a² ≥ 0,
// and a floating-point sum of nonnegative terms is at least each of its
// terms (fl is monotone: fl(p + e²) ≥ fl(0 + e²) = e² for p ≥ 0, and later
// terms do not decrease it), so fl(e_{a*}²) > dist_k proves the record is
// not among the k nearest; farther records along a* have gaps at least as
// large (fl(x − z) is monotone in x, and fl(c − x)² = fl(x − c)²). Each
// lane of SqDist16Bound is knnScan's sum for its record, term by term in
// the same order (kernel.TestSqDist16BoundMatchesRef), so every record
// not skipped is offered with knnScan's distance, or with a partial sum
// already above the k-th distance (which offer rejects, as it would the
// full sum); and topK keeps the k least (distance, index) pairs whatever
// the order, so the predictions are knnScan's bit for bit
// (TestKNNSortedMatchesScan). Needs finite coordinates (knnPredict
// checks; NaN breaks the ordering argument).
func knnSorted(dst, y, zTrain, zTest []float64, nTrain, m, k int, loo bool) {
	// The coordinates by decreasing variance over the training records.
	vars := make([]float64, m)
	for a := 0; a < m; a++ {
		var mean, m2 float64
		for i := 0; i < nTrain; i++ {
			v := zTrain[i*m+a]
			dlt := v - mean
			mean += dlt / float64(i+1)
			m2 += dlt * (v - mean)
		}
		vars[a] = m2
	}
	top := make([]int, m)
	for a := range top {
		top[a] = a
	}
	slices.SortStableFunc(top, func(a, b int) int { return cmp.Compare(vars[b], vars[a]) })
	best := top[0]
	order := make([]int, nTrain)
	key := make([]float64, nTrain)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		return cmp.Compare(zTrain[i*m+best], zTrain[j*m+best])
	})
	// The rows in sorted order, sixteen at a time interleaved:
	// zb[(b·m + a)·16 + l] is coordinate a of sorted row 16b + l. The last
	// block's missing rows are zeros, never offered.
	const w = 16
	nb := (nTrain + w - 1) / w
	zb := make([]float64, nb*m*w)
	for r, i := range order {
		key[r] = zTrain[i*m+best]
		b, l := r/w, r%w
		for a, v := range zTrain[i*m : (i+1)*m] {
			zb[(b*m+a)*w+l] = v
		}
	}
	h := topK{dist: make([]float64, k), who: make([]int, k)}
	var s [w]float64
	visit := func(t, b int, zt []float64) {
		// The mask's lanes are those with s_l ≤ the k-th distance at the
		// call; the others offer would reject (the k-th only decreases).
		mask := kernel.SqDist16Bound(zt, zb[b*m*w:(b+1)*m*w], h.dist[k-1], &s)
		kth := h.dist[k-1]
		for ; mask != 0; mask &= mask - 1 {
			l := bits.TrailingZeros32(mask)
			sl := s[l&(w-1)]
			if sl > kth {
				continue
			}
			r := w*b + l
			if r >= nTrain {
				break
			}
			i := order[r]
			if loo && i == t {
				continue
			}
			h.offer(sl, i)
			kth = h.dist[k-1]
		}
	}
	for t := range dst {
		zt := zTest[t*m : (t+1)*m]
		c := zt[best]
		h.reset()
		// Rows before r0 have key < c, rows from r0 on key ≥ c.
		r0, _ := slices.BinarySearch(key, c)
		b0 := min(r0, nTrain-1) / w
		visit(t, b0, zt)
		left, right := b0-1, b0+1
		for left >= 0 || right < nb {
			// The side whose next block's nearest record is nearer along
			// a*: block right's first row, block left's last.
			goRight := left < 0 || (right < nb && key[w*right]-c <= c-key[w*left+w-1])
			var e float64
			if goRight {
				e = key[w*right] - c
			} else {
				e = c - key[w*left+w-1]
			}
			if e*e > h.dist[k-1] {
				// This side is done; so is the other if its next gap is
				// as large (it is not smaller: the nearer side is visited first).
				if goRight {
					right = nb
				} else {
					left = -1
				}
				continue
			}
			if goRight {
				visit(t, right, zt)
				right++
			} else {
				visit(t, left, zt)
				left--
			}
		}
		dst[t] = h.vote(y)
	}
}

// metricFactor returns L (d×m row-major) with L Lᵀ = W₊, the PSD part of the
// symmetric part of W, keeping only the m columns of positive eigenvalues.
func metricFactor(W []float64, d int) (L []float64, m int) {
	a := make([]float64, d*d)
	diagonal := true
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := W[i*d+j]
			if i != j {
				v = 0.5 * (v + W[j*d+i])
				diagonal = diagonal && v == 0
			}
			a[i*d+j] = v
		}
	}
	lam := make([]float64, d)
	if diagonal {
		for i := range lam {
			lam[i] = a[i*d+i]
		}
		for i := range a {
			a[i] = 0
		}
		for i := 0; i < d; i++ {
			a[i*d+i] = 1
		}
	} else {
		q := []float64{0}
		sym := blas64.Symmetric{N: d, Stride: d, Data: a, Uplo: blas.Upper}
		lapack64.Syev(lapack.EVCompute, sym, lam, q, -1)
		work := make([]float64, max(int(q[0]), 3*d))
		if !lapack64.Syev(lapack.EVCompute, sym, lam, work, len(work)) {
			panic("pairwise: KNN: eigendecomposition of the metric did not converge")
		}
	}
	var keep []int
	// Largest eigenvalue first: the distance sums then add their largest
	// terms first, and a partial sum passes the k-th distance early
	// (kernel.SqDist16Bound).
	for j := len(lam) - 1; j >= 0; j-- {
		if lam[j] > 0 {
			keep = append(keep, j)
		}
	}
	m = len(keep)
	L = make([]float64, d*max(m, 1))
	for i := 0; i < d; i++ {
		for c, j := range keep {
			L[i*m+c] = a[i*d+j] * math.Sqrt(lam[j])
		}
	}
	if m == 0 {
		// W₊ = 0: every distance is 0; one zero coordinate keeps the
		// loops uniform (all ties, broken by index).
		m = 1
	}
	return L, m
}

// transformRows returns the n×m matrix Z with rows z_k = Lᵀx_k for the
// view's records.
func transformRows(v View, L []float64, d, m int) []float64 {
	s := v.Data
	z := make([]float64, v.Len()*m)
	for k := range v.Len() {
		i := v.Index(k)
		zi := z[k*m : (k+1)*m]
		if s.X != nil {
			for a, x := range s.Row(i) {
				if x != 0 {
					axpy(x, L[a*m:(a+1)*m], zi)
				}
			}
			continue
		}
		idx, val := s.SparseRow(i)
		for p, a := range idx {
			axpy(val[p], L[int(a)*m:(int(a)+1)*m], zi)
		}
	}
	return z
}
