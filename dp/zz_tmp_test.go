package dp

import "testing"

func BenchmarkZZMult(b *testing.B) {
	n := 26049
	q := 646.0 / float64(n)
	T := 404
	for b.Loop() {
		subsampledMemo.reset()
		subsampledRatesMemo.reset()
		multiplierMemo.reset()
		SecureSubsampledGaussianMultiplier(q, T, 1, 1/(10*float64(n)), ReplaceOne, int64(T)*123)
	}
}
