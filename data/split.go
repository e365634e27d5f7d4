package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Index sets returned by the functions below are sorted in increasing
// order. All randomness comes from rng, so a seed fixes the result.

// StratifiedSplit splits the records with labels y into a training and a
// test set, each class (distinct value of y) in proportion: a class of m
// records puts round(testFrac·m) of them, but at least one and at most
// m−1, in the test set (a class of one record stays in training).
func StratifiedSplit(y []float64, testFrac float64, rng *rand.Rand) (train, test []int, err error) {
	if !(testFrac > 0 && testFrac < 1) {
		return nil, nil, fmt.Errorf("data: test fraction %v outside (0, 1)", testFrac)
	}
	if len(y) < 2 {
		return nil, nil, fmt.Errorf("data: cannot split %d records", len(y))
	}
	classes, err := byClass(y)
	if err != nil {
		return nil, nil, err
	}
	// The test share of a class depends on its size only: both sets are
	// allocated at their final sizes (no doubling garbage at 10⁶ records).
	testSize := func(m int) int {
		if m < 2 {
			return 0
		}
		return min(max(int(math.Round(testFrac*float64(m))), 1), m-1)
	}
	nTest := 0
	for _, members := range classes {
		nTest += testSize(len(members))
	}
	train, test = make([]int, 0, len(y)-nTest), make([]int, 0, nTest)
	for _, members := range classes {
		rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
		k := testSize(len(members))
		test = append(test, members[:k]...)
		train = append(train, members[k:]...)
	}
	slices.Sort(train)
	slices.Sort(test)
	return train, test, nil
}

// StratifiedKFold returns k disjoint test index sets covering all
// records, each class spread evenly: the members of a class, shuffled,
// are dealt to the folds in turn, continuing where the previous class
// stopped, so per-class and total fold sizes differ by at most one. Every
// class must have at least k records, so that each test fold holds every
// class (as AUC requires).
func StratifiedKFold(y []float64, k int, rng *rand.Rand) ([][]int, error) {
	if err := checkFolds(len(y), k); err != nil {
		return nil, err
	}
	classes, err := byClass(y)
	if err != nil {
		return nil, err
	}
	for _, members := range classes {
		if len(members) < k {
			return nil, fmt.Errorf("data: class %v has %d records, fewer than k=%d folds", y[members[0]], len(members), k)
		}
	}
	// Fold f receives ⌊n/k⌋ + [f < n mod k] records (the dealing below
	// continues across classes): allocated at that size.
	n := len(y)
	folds := make([][]int, k)
	for f := range folds {
		size := n / k
		if f < n%k {
			size++
		}
		folds[f] = make([]int, 0, size)
	}
	next := 0
	for _, members := range classes {
		rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
		for _, i := range members {
			folds[next] = append(folds[next], i)
			next = (next + 1) % k
		}
	}
	for _, f := range folds {
		slices.Sort(f)
	}
	return folds, nil
}

// KFold returns k disjoint test index sets covering 0..n−1 after a random
// permutation, not stratified. As in scikit-learn's KFold, the first n%k
// folds have ⌊n/k⌋+1 records and the others ⌊n/k⌋.
func KFold(n, k int, rng *rand.Rand) ([][]int, error) {
	if err := checkFolds(n, k); err != nil {
		return nil, err
	}
	perm := rng.Perm(n)
	folds := make([][]int, k)
	at := 0
	for f := range folds {
		size := n / k
		if f < n%k {
			size++
		}
		folds[f] = slices.Clone(perm[at : at+size])
		slices.Sort(folds[f])
		at += size
	}
	return folds, nil
}

func checkFolds(n, k int) error {
	switch {
	case k < 2:
		return fmt.Errorf("data: %d folds; need at least 2", k)
	case k > n:
		return fmt.Errorf("data: %d folds for %d records", k, n)
	}
	return nil
}

// Complement returns the indices in [0, n) that are not in test, in
// increasing order. It panics on an index outside [0, n).
func Complement(n int, test []int) []int {
	in := make([]bool, n)
	for _, i := range test {
		if i < 0 || i >= n {
			panic(fmt.Sprintf("data: Complement: index %d outside [0, %d)", i, n))
		}
		in[i] = true
	}
	out := make([]int, 0, max(0, n-len(test)))
	for i, t := range in {
		if !t {
			out = append(out, i)
		}
	}
	return out
}

// byClass groups record indices by label, classes in increasing label
// order and members in increasing index order.
func byClass(y []float64) ([][]int, error) {
	pos := map[float64]int{}
	var labels []float64
	for i, v := range y {
		if math.IsNaN(v) {
			return nil, fmt.Errorf("data: label %d is NaN", i)
		}
		if _, ok := pos[v]; !ok {
			pos[v] = 0
			labels = append(labels, v)
		}
	}
	slices.Sort(labels)
	for k, v := range labels {
		pos[v] = k
	}
	// Counted first, so that every class's list is allocated once at its
	// size, in one backing array of n indices.
	count := make([]int, len(labels))
	for _, v := range y {
		count[pos[v]]++
	}
	all := make([]int, 0, len(y))
	out := make([][]int, len(labels))
	for k, c := range count {
		out[k] = all[len(all) : len(all) : len(all)+c]
		all = all[:len(all)+c]
	}
	for i, v := range y {
		out[pos[v]] = append(out[pos[v]], i)
	}
	return out, nil
}
