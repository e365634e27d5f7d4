//go:build long

package data

import "testing"

// The full forms of the tests whose default runs (without "Long") check a
// smaller case: deterministic, CPU-bound, no concurrency for the race
// detector to check, so .ci/run runs them without -race
// (`go test -tags long -run '^TestLong' ./data/`).

func TestLongBlockedLIBSVMMatchesContiguous(t *testing.T) { blockedLIBSVMMatchesContiguous(t, 1<<20) }
