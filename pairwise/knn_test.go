package pairwise

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// bruteKNN predicts test labels by computing every distance d_W(x, x') =
// (x − x')ᵀW(x − x') by the definition, stably sorting by distance (so equal
// distances keep the lower index) and voting, ties to the nearest.
func bruteKNN(W []float64, train, test *Dataset, k int) []float64 {
	d := train.D
	xt := make([]float64, d)
	xi := make([]float64, d)
	v := make([]float64, d)
	pred := make([]float64, test.N)
	type nb struct {
		dist float64
		i    int
	}
	for t := range pred {
		test.DenseRowTo(xt, t)
		nbs := make([]nb, train.N)
		for i := range nbs {
			train.DenseRowTo(xi, i)
			for a := range v {
				v[a] = xt[a] - xi[a]
			}
			var s float64
			for a := 0; a < d; a++ {
				for b := 0; b < d; b++ {
					s += v[a] * W[a*d+b] * v[b]
				}
			}
			nbs[i] = nb{s, i}
		}
		sort.SliceStable(nbs, func(a, b int) bool { return nbs[a].dist < nbs[b].dist })
		var vote float64
		for _, n := range nbs[:min(k, len(nbs))] {
			vote += train.Y[n.i]
		}
		switch {
		case vote > 0:
			pred[t] = 1
		case vote < 0:
			pred[t] = -1
		default:
			pred[t] = train.Y[nbs[0].i]
		}
	}
	return pred
}

func identity(d int) []float64 {
	w := make([]float64, d*d)
	for a := 0; a < d; a++ {
		w[a*d+a] = 1
	}
	return w
}

func predict(W []float64, train, test *Dataset, k int) []float64 {
	p := make([]float64, test.N)
	knnPredict(p, W, train, test.All(), k, false)
	return p
}

func samePred(t *testing.T, name string, got, want []float64) {
	t.Helper()
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: test record %d predicted %v, brute force %v", name, i, got[i], want[i])
		}
	}
}

// TestKNNIdentityIsEuclidean: W = I is Euclidean k-NN, checked against the
// brute force on integer-valued data, where many distances tie exactly (so
// the tie-breaking rules are exercised), for k = 1…4.
func TestKNNIdentityIsEuclidean(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const d = 3
	mk := func(n int) *Dataset {
		s := randDense(rng, n, d, 1)
		for i := range s.X {
			s.X[i] = float64(rng.IntN(3))
		}
		return s
	}
	train, test := mk(40), mk(60)
	for k := 1; k <= 4; k++ {
		samePred(t, "identity", predict(identity(d), train, test, k), bruteKNN(identity(d), train, test, k))
	}
	want := bruteKNN(identity(d), train, test, 3)
	correct := 0
	for i, p := range want {
		if p == test.Y[i] {
			correct++
		}
	}
	if got := KNN3Accuracy(identity(d), train, test); got != float64(correct)/60 {
		t.Fatalf("KNN3Accuracy = %v, brute force %v", got, float64(correct)/60)
	}
}

// TestKNNGeneralMetric: a random PSD W (non-diagonal, rank-deficient) on
// continuous data agrees with the brute-force Mahalanobis k-NN; sparse data
// gives the same predictions as dense.
func TestKNNGeneralMetric(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	const d = 6
	train := randDense(rng, 80, d, 1)
	test := randDense(rng, 50, d, 1)
	// W = A Aᵀ with A d×3: PSD of rank 3.
	A := randMat(rng, d, 1)[:d*3]
	W := make([]float64, d*d)
	for a := 0; a < d; a++ {
		for b := 0; b < d; b++ {
			for c := 0; c < 3; c++ {
				W[a*d+b] += A[a*3+c] * A[b*3+c]
			}
		}
	}
	for _, k := range []int{1, 3, 5} {
		samePred(t, "general", predict(W, train, test, k), bruteKNN(W, train, test, k))
	}
	trD, trS := sparsify(rng, train, 0.5)
	teD, teS := sparsify(rng, test, 0.5)
	samePred(t, "sparse vs dense", predict(W, trS, teS, 3), predict(W, trD, teD, 3))
	samePred(t, "sparse vs brute", predict(W, trS, teS, 3), bruteKNN(W, trD, teD, 3))
	// An indefinite W is used through its PSD part Π_psd(W).
	ind := randSym(rng, d, 1)
	psd := project(newPSDProjector("psd", 0, d), ind)
	samePred(t, "indefinite", predict(ind, train, test, 3), bruteKNN(psd, train, test, 3))
}

// TestKNNMetricHelps: with one informative feature (y + N(0, 0.3²)) and one
// large-noise feature (N(0, 100²)), the metric diag(1, 0) that ignores the noise beats Euclidean KNN.
func TestKNNMetricHelps(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	mk := func(n int) *Dataset {
		x := make([]float64, 2*n)
		y := make([]float64, n)
		for i := range y {
			y[i] = float64(2*rng.IntN(2) - 1)
			x[2*i] = y[i] + 0.3*rng.NormFloat64()
			x[2*i+1] = 100 * rng.NormFloat64()
		}
		return NewDense(x, y, 2)
	}
	train, test := mk(300), mk(500)
	euc := KNN3Accuracy(identity(2), train, test)
	met := KNN3Accuracy([]float64{1, 0, 0, 0}, train, test)
	t.Logf("Euclidean 3-NN accuracy %.3f, metric diag(1,0) %.3f", euc, met)
	if met < 0.95 || met < euc+0.2 {
		t.Fatalf("metric accuracy %.3f, Euclidean %.3f: the metric should remove the noise", met, euc)
	}
	// The same through a non-diagonal representation: rotate the features
	// and the metric together, accuracy must not change.
	th := 0.4
	c, s := math.Cos(th), math.Sin(th)
	rotate := func(ds *Dataset) *Dataset {
		out := NewDense(append([]float64(nil), ds.X...), ds.Y, 2)
		for i := 0; i < ds.N; i++ {
			a, b := ds.X[2*i], ds.X[2*i+1]
			out.X[2*i], out.X[2*i+1] = c*a-s*b, s*a+c*b
		}
		return out
	}
	// x' = Rx, W' = R diag(1,0) Rᵀ gives x'ᵀW'x' = xᵀ diag(1,0) x.
	Wr := []float64{c * c, c * s, c * s, s * s}
	if got := KNN3Accuracy(Wr, rotate(train), rotate(test)); math.Abs(got-met) > 0.01 {
		t.Fatalf("rotated metric accuracy %.3f, want ≈ %.3f", got, met)
	}
}

// TestKNNTies: an even-k vote tie goes to the nearest neighbour; equal
// distances go to the lower index; k > n uses every training record.
func TestKNNTies(t *testing.T) {
	train := NewDense([]float64{0, 1, 3, -1}, []float64{-1, 1, 1, -1}, 1)
	test := NewDense([]float64{0.4, 2.1}, []float64{-1, 1}, 1)
	// x = 0.4: nearest 0 (−1) then 1 (+1): k = 2 tie → −1.
	// x = 2.1: nearest 3 (+1, d .81) then 1 (+1): → +1.
	if got := predict(identity(1), train, test, 2); got[0] != -1 || got[1] != 1 {
		t.Fatalf("k=2 predictions %v, want [-1 1]", got)
	}
	// Equal distances: x = 0 is at distance 1 from both records; k = 1
	// must pick index 0 whichever label it has.
	eq := NewDense([]float64{1, -1}, []float64{1, -1}, 1)
	pt := NewDense([]float64{0}, []float64{1}, 1)
	if got := predict(identity(1), eq, pt, 1); got[0] != 1 {
		t.Fatalf("distance tie went to the higher index: %v", got)
	}
	eq2 := NewDense([]float64{-1, 1}, []float64{-1, 1}, 1)
	if got := predict(identity(1), eq2, pt, 1); got[0] != -1 {
		t.Fatalf("distance tie went to the higher index: %v", got)
	}
	// k larger than n: all four vote (2 vs 2 → nearest, index 0 at 0.4 → −1).
	if got := predict(identity(1), train, test, 10); got[0] != -1 {
		t.Fatalf("k > n: %v", got)
	}
	// W = 0: all distances tie; k = 1 picks index 0.
	if got := predict([]float64{0}, train, test, 1); got[0] != -1 || got[1] != -1 {
		t.Fatalf("W = 0: %v, want the label of record 0", got)
	}
	if a := KNNAccuracy([]float64{math.NaN()}, train, test, 1); !math.IsNaN(a) {
		t.Fatalf("NaN metric gave accuracy %v", a)
	}
}

func BenchmarkKNN3(b *testing.B) {
	rng := rand.New(rand.NewPCG(47, 48))
	const d = 19
	train, test := randDense(rng, 1000, d, 1), randDense(rng, 500, d, 1)
	W := project(newPSDProjector("frobenius-psd", 1, d), randSym(rng, d, 1))
	b.ReportAllocs()
	for k := 0; k < b.N; k++ {
		KNN3Accuracy(W, train, test)
	}
}

// TestKNNLeaveOneOut: KNNAccuracyLOO equals, record by record, the brute
// force KNN of each record against all the others (integer data, so
// distances tie and the index tie-break is exercised).
func TestKNNLeaveOneOut(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	const d, n = 3, 50
	data := randDense(rng, n, d, 1)
	for i := range data.X {
		data.X[i] = float64(rng.IntN(3))
	}
	W := identity(d)
	W[0] = 2
	correct := 0
	for i := 0; i < n; i++ {
		var others []int
		for j := 0; j < n; j++ {
			if j != i {
				others = append(others, j)
			}
		}
		if bruteKNN(W, data.Subset(others), data.Subset([]int{i}), 3)[0] == data.Y[i] {
			correct++
		}
	}
	want := float64(correct) / n
	if got := KNNAccuracyLOO(W, data, 3); got != want {
		t.Fatalf("LOO accuracy %v, brute force %v", got, want)
	}
	if !math.IsNaN(KNNAccuracyLOO(W, data.Subset([]int{0}), 3)) {
		t.Error("one record: want NaN")
	}
}
