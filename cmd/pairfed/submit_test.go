package main

import (
	"strings"
	"testing"

	"github.com/pairfed/pairfed/protocol"
)

// The human output of `job submit` shows each site's charge (the
// certified (ε, δ) the coordinator's ledger recorded) beside the
// requested (ε, δ), and says nothing of a charge when the status states
// none (a site that refused, or a coordinator before this field).
func TestPrintSubmitCharged(t *testing.T) {
	var b strings.Builder
	printSubmit(&b, &submitReport{Job: "j", Algorithm: "fed-dp-ssp", Status: protocol.StatusCompleted, Privacy: []protocol.SiteReport{
		{Site: "a", Records: 40, Epsilon: 0.5, Delta: 1e-3, Sigmas: []float64{2}, Secure: true, CertifiedEpsilon: 0.4871, CertifiedDelta: 9.5e-4},
		{Site: "b", Records: 30, Epsilon: 0.5, Delta: 1e-3, Sigmas: []float64{2}, Secure: true},
	}})
	out := b.String()
	for _, want := range []string{
		"privacy a (n = 40): record-level (ε, δ) = (0.5, 0.001) requested, (0.4871, 0.00095) certified and charged, σ",
		"privacy b (n = 30): record-level (ε, δ) = (0.5, 0.001) requested, σ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
