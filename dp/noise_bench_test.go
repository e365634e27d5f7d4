package dp

import (
	"fmt"
	"testing"
)

// BenchmarkNoise measures each mechanism on d = 22 (the paper's smallest
// data sets) and d = 256 vectors, with the secure and the seeded source, and
// reports ns per coordinate.
func BenchmarkNoise(b *testing.B) {
	for _, src := range []struct {
		name string
		new  func() Noise
	}{{"secure", NewSecureNoise}, {"seeded", func() Noise { return NewSeededNoise(1) }}} {
		for _, mech := range []string{"Gaussian", "Laplace", "L2Laplace"} {
			for _, d := range []int{22, 256} {
				b.Run(fmt.Sprintf("%s/%s/d=%d", mech, src.name, d), func(b *testing.B) {
					nz := src.new()
					add := map[string]func([]float64, float64){"Gaussian": nz.AddGaussian, "Laplace": nz.AddLaplace, "L2Laplace": nz.AddL2Laplace}[mech]
					v := make([]float64, d)
					b.ReportAllocs()
					for b.Loop() {
						add(v, 1.5)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*d), "ns/coord")
				})
			}
		}
	}
}
