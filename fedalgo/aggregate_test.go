package fedalgo

import (
	"slices"
	"testing"

	"github.com/pairfed/pairfed/protocol"
)

func TestCombineRules(t *testing.T) {
	vecs := [][]float64{{1, 10}, {2, 20}, {3, 30}, {4, 40}, {1000, -1000}}
	w := []float64{1, 1, 1, 1, 1}
	agg := func(s string) []float64 {
		a, err := protocol.ParseAggregation(s)
		if err != nil {
			t.Fatal(err)
		}
		return Aggregate(a, vecs, w, false)
	}
	if got := agg("median"); !slices.Equal(got, []float64{3, 20}) {
		t.Errorf("median %v", got)
	}
	// β = 0.2 of 5 drops one value at each end: mean of {2, 3, 4}, {10, 20, 30}.
	if got := agg("trimmed-mean:0.2"); !slices.Equal(got, []float64{3, 20}) {
		t.Errorf("trimmed mean %v", got)
	}
	if got := agg(""); got[0] != 202 || got[1] != -180 {
		t.Errorf("mean %v", got)
	}
	even := Aggregate(protocol.Aggregation{Rule: protocol.AggMedian}, vecs[:4], w[:4], false)
	if !slices.Equal(even, []float64{2.5, 25}) {
		t.Errorf("even median %v", even)
	}
	for _, bad := range []string{"max", "trimmed-mean:0.5", "trimmed-mean:0", "trimmed-mean:x", "trimmed-mean:NaN"} {
		if _, err := protocol.ParseAggregation(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
