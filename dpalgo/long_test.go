//go:build long

package dpalgo

import "testing"

// The full forms of the tests whose default runs (without "Long") check a
// subset: deterministic, CPU-bound, no concurrency for the race detector
// to check, so .ci/run runs them without -race
// (`go test -tags long -run '^TestLong' ./dpalgo/`).

func TestLongPairGradGapBruteForce(t *testing.T) { pairGradGapBruteForce(t, true) }

func TestLongLocalSGDAndSGDOutputUtilityAtHugeEpsilon(t *testing.T) {
	localSGDAndSGDOutputUtilityAtHugeEpsilon(t, true)
}

func TestLongPrivatePGDLearnsToyAUCWithTinyNoise(t *testing.T) {
	privatePGDLearnsToyAUCWithTinyNoise(t, true)
}

func TestLongPrivatePGDSupportsMetricLearning(t *testing.T) {
	privatePGDSupportsMetricLearning(t, true)
}
