//go:build long

package audit

import "testing"

// The long single-site and federated audits: every private algorithm
// (every audited federated view) of the registry, at the trials and
// bounds stated on the default tests of the same name without "Long"
// (audit_test.go, federated_test.go), which run a smoke subset of them.
// .ci/run runs these without -race (`go test -tags long -run '^TestLong'
// ./audit/`): the audits exercise no concurrency, and the race detector
// multiplies their CPU time by 5–10.

func TestLongWhiteBoxRespectsTheClaimAtFullNoise(t *testing.T) {
	t.Parallel()
	whiteBoxRespects(t, everything)
}

func TestLongWhiteBoxCatchesTooLittleNoise(t *testing.T) {
	t.Parallel()
	whiteBoxCatches(t, everything)
}

func TestLongWhiteBoxCatchesTooLittleNoiseMetric(t *testing.T) {
	t.Parallel()
	whiteBoxCatchesMetric(t, everything)
}

func TestLongFederatedRespectsTheClaimAtFullNoise(t *testing.T) {
	t.Parallel()
	fedRespects(t, fedViews())
}

func TestLongFederatedCatchesTooLittleNoise(t *testing.T) {
	t.Parallel()
	fedCatches(t, fedViews())
}

// everything picks every algorithm.
func everything(string, string) bool { return true }
