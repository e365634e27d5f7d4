package main

import (
	"testing"

	"github.com/pairfed/pairfed/data"
)

// TestRunCopiesAboveMeasured: the allowance of every measured mode is at
// least its measured peak ÷ records (lowering one below a measurement
// fails here).
func TestRunCopiesAboveMeasured(t *testing.T) {
	for _, m := range measuredCopies {
		if got := trainCopies(m.Mode); got < m.Ratio {
			t.Errorf("%s: allowance %g copies below the measured %g", m.Name, got, m.Ratio)
		}
	}
	// Unmeasured modes keep the older allowance.
	for _, m := range []trainMode{
		{Runs: 3, Format: data.FormatLIBSVM},
		{Runs: 1, TrainSize: true, Format: data.FormatLIBSVM},
		{Runs: 1, Test: true, Format: data.FormatLIBSVM},
		{Runs: 1, Format: data.FormatCSV},
	} {
		if got := trainCopies(m); got < 5 {
			t.Errorf("%+v: allowance %g, want ≥ 5 (not measured)", m, got)
		}
	}
}

// TestRunCopiesAdmitsDense5M: dense 5·10⁶ × 22 default train (measured
// peak 1.65× the matrix, 1450 MiB) is admitted under the default budget
// cap, and its allowance is above the measured peak.
func TestRunCopiesAdmitsDense5M(t *testing.T) {
	const n = 5_000_000
	matrix := int64(n*22*8 + n*8)
	need := int64(float64(matrix) * trainCopies(trainMode{Runs: 1, Format: data.FormatLIBSVM}))
	if need > data.DefaultMaxMemoryCap {
		t.Errorf("dense 5·10⁶ × 22: estimate %s over the default cap %s", data.FormatSize(need), data.FormatSize(data.DefaultMaxMemoryCap))
	}
	if measured := int64(1450 << 20); need < measured {
		t.Errorf("estimate %s below the measured peak %s", data.FormatSize(need), data.FormatSize(measured))
	}
}
