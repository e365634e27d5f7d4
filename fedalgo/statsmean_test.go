package fedalgo

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// statsMean: the need-th round returns the exact average of the rounds'
// sums; a combiner restored from the state after any earlier round gives
// the same average; the restore refuses a round count outside 1 … need − 1
// and non-finite values, naming the algorithm.
func TestStatsMeanRestoreEqualsUninterrupted(t *testing.T) {
	rounds := [][]float64{{1, 2, 3}, {4, 5, 6.5}, {-1, 0.25, 8}, {2, 2, 2}}
	need := len(rounds)
	var whole statsMean
	whole.need = need
	var want []float64
	for i, r := range rounds {
		avg, done := whole.add(r)
		if done != (i == need-1) {
			t.Fatalf("round %d: done = %v", i+1, done)
		}
		want = avg
	}
	for i := range want {
		s := 0.0
		for _, r := range rounds {
			s += r[i]
		}
		if want[i] != s/float64(need) {
			t.Fatalf("average[%d] = %v, want %v", i, want[i], s/float64(need))
		}
	}
	for cut := 1; cut < need; cut++ {
		first := statsMean{need: need}
		for _, r := range rounds[:cut] {
			first.add(r)
		}
		back := statsMean{need: need}
		if err := back.restore("algo", first.state()); err != nil {
			t.Fatalf("restore after %d rounds: %v", cut, err)
		}
		var got []float64
		for _, r := range rounds[cut:] {
			got, _ = back.add(r)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("restored after %d rounds: %v, want %v", cut, got, want)
		}
	}
	for _, bad := range [][]float64{{0, 1, 2, 3}, {float64(need), 1, 2, 3}, {1.5, 1, 2, 3}, {1, 1, 2, math.NaN()}} {
		s := statsMean{need: need}
		if err := s.restore("fed-x", bad); err == nil || !strings.Contains(err.Error(), "fed-x: checkpoint") {
			t.Errorf("restore of %v: %v", bad, err)
		}
	}
}
