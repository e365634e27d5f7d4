package pairwise

import (
	"fmt"
	"math"

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

	// Top-k by (distance, index), kept sorted in small arrays; training
	// records are visited in index order and a candidate enters only if it
	// is strictly closer than the current k-th, so equal distances keep the
	// lower index.
	dist := make([]float64, k)
	who := make([]int, k)
	for t := range dst {
		zt := zTest[t*m : (t+1)*m]
		for c := range dist {
			dist[c] = math.Inf(1)
			who[c] = -1
		}
		for i := 0; i < train.N; i++ {
			if loo && i == t {
				continue
			}
			zi := zTrain[i*m : (i+1)*m]
			var s float64
			for a, v := range zt {
				e := v - zi[a]
				s += e * e
			}
			if !(s < dist[k-1]) {
				continue
			}
			c := k - 1
			for c > 0 && s < dist[c-1] {
				dist[c], who[c] = dist[c-1], who[c-1]
				c--
			}
			dist[c], who[c] = s, i
		}
		var vote float64
		for _, i := range who {
			if i >= 0 {
				vote += train.Y[i]
			}
		}
		switch {
		case vote > 0:
			dst[t] = 1
		case vote < 0:
			dst[t] = -1
		case who[0] >= 0:
			dst[t] = train.Y[who[0]]
		default: // no finite distance (non-finite W or data)
			dst[t] = 0
		}
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
	for j, v := range lam {
		if v > 0 {
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
