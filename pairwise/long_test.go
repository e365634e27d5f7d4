//go:build long

package pairwise

import "testing"

// The full grids of the pairwise equivalence tests whose default runs
// (without "Long") check a subset: deterministic, CPU-bound comparisons
// with no concurrency beyond what the subset keeps, so .ci/run runs them
// without -race (`go test -tags long -run '^TestLong' ./pairwise/`).

func TestLongPrevSparseLazyMatchesGeneral(t *testing.T) { prevSparseLazyMatchesGeneral(t, true) }

func TestLongFullGradientFastPathsMatchPairLoop(t *testing.T) {
	fullGradientFastPathsMatchPairLoop(t, true)
}

func TestLongPrevFastBitIdentical(t *testing.T) { prevFastBitIdentical(t, true) }

// TestLongLazySparseGolden: every one of the 600 recorded cases
// (TestLazySparseGolden checks every 11th).
func TestLongLazySparseGolden(t *testing.T) { lazySparseGolden(t, 1) }
