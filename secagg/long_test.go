//go:build long

package secagg

import "testing"

// The full forms of the tests whose default runs (without "Long") check a
// subset: synchronous in-memory rounds, no concurrency for the race
// detector to check, so .ci/run runs them without -race
// (`go test -tags long -run '^TestLong' ./secagg/`).

func TestLongRoundSumWithRandomDropouts(t *testing.T) { roundSumWithRandomDropoutsBoth(t, 120) }

func TestLongSparseRoundSums(t *testing.T) { sparseRoundSums(t, 40) }
