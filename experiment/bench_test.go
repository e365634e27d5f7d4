package experiment

import "testing"

// BenchmarkStep is the sgd-prev per-step benchmark over BenchCases; one
// b.N-step run per measurement, so ns/op and allocs/op are per pair step.
func BenchmarkStep(b *testing.B) {
	for _, c := range BenchCases() {
		ds := SyntheticAUC(c.N, c.D, c.NNZ, c.Pos, 7)
		b.Run(c.Name, StepBenchmark("sgd-prev", ds, c.Avg))
	}
}
