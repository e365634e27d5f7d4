package pairwise

import (
	"fmt"

	"github.com/pairfed/pairfed/dp"
)

// DeltaWarning returns a warning when δ exceeds dp.DefaultDelta(n) =
// 1/(10·n) for a mechanism over n records, "" otherwise. A mechanism that
// publishes one random record verbatim is (0, 1/n)-DP, so δ near 1/n
// allows releasing records in the clear; pairfed's default and the largest
// δ it runs without a warning is 1/(10·n) (see dp.DefaultDelta). The run
// goes on; callers print the warning (train, simulate: stderr; a site: its
// log).
func DeltaWarning(delta float64, n int) string {
	limit := dp.DefaultDelta(n)
	if n <= 0 || !(delta > limit*(1+1e-12)) {
		return ""
	}
	return fmt.Sprintf("δ = %g exceeds 1/(10·n) = %.3g for n = %d records: a mechanism that publishes one random record verbatim is (0, 1/n)-DP, so δ this large allows releasing records in the clear; use δ ≤ 1/(10·n)", delta, limit, n)
}
