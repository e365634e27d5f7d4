package pairwise

import "fmt"

// DeltaWarning returns a warning when δ exceeds 1/n for a mechanism over
// n records, "" otherwise. (ε, δ)-DP with δ > 1/n admits a mechanism that
// publishes a record in the clear (each one with probability δ): the
// papers take δ ≤ 1/n, and δ = 1/n is pairfed's default. The run goes on;
// callers print the warning (train, simulate: stderr; a site: its log).
func DeltaWarning(delta float64, n int) string {
	if n <= 0 || !(delta > 1/float64(n)) {
		return ""
	}
	return fmt.Sprintf("δ = %g exceeds 1/n = %.3g for n = %d records: (ε, δ)-DP with δ > 1/n allows releasing a record in the clear; use δ ≤ 1/n", delta, 1/float64(n), n)
}
