package dp

// DefaultDelta is pairfed's default δ for (ε, δ)-DP over n records:
//
//	δ = 1/(10·n).
//
// Why not 1/n. The mechanism that publishes one uniformly chosen record
// verbatim is (0, 1/n)-DP: a record's presence changes the probability of
// any output by at most 1/n, so δ = 1/n permits releasing a whole record in
// the clear. More generally "publish each record independently with
// probability δ" is (0, δ)-DP and exposes n·δ records in expectation. With
// δ = 1/(10·n) that expectation is 1/10, the rule stated as a number: the
// δ-part of the guarantee may not, on average, cover a tenth of a record.
// Federated sites apply it with their own n (each site's guarantee is about
// its own records). n < 1 is treated as 1.
func DefaultDelta(n int) float64 {
	if n < 1 {
		n = 1
	}
	return 1 / (10 * float64(n))
}
