package dpalgo

// SSPVector returns the weighted statistics vector v(D) that dp-ssp
// releases (see the file comment of private_ssp.go): for a release through
// another mechanism than AddGaussian — the distributed discrete Gaussian
// under secure aggregation — with the same ℓ2 sensitivity
// SSPSensitivity(R, SSPWeights(R, kind)).
func SSPVector(s *SSPStats, R float64) []float64 {
	a, b, c := SSPWeights(R, s.Kind())
	return sspVector(s, a, b, c)
}

// SSPFromVector writes into out (shaped like the statistics v came from)
// the statistics of a (noisy) vector v laid out as SSPVector's.
func SSPFromVector(out *SSPStats, v []float64, R float64) {
	a, b, c := SSPWeights(R, out.Kind())
	sspFromVector(out, v, a, b, c)
}
