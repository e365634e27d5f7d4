package dp

import "fmt"

// Noise draws the random perturbations of private algorithms. Package
// pairwise consumes it (pairwise.Noise is this type); NewSecureNoise is the
// cryptographically secure, floating-point-attack-resistant implementation
// for private runs and NewSeededNoise the reproducible one for tests and
// labelled non-private experiments.
type Noise interface {
	// AddGaussian adds independent N(0, σ²) noise to every entry of dst.
	AddGaussian(dst []float64, sigma float64)
	// AddLaplace adds independent Laplace(0, b) noise (density
	// exp(−|z|/b)/(2b)) to every entry of dst.
	AddLaplace(dst []float64, b float64)
	// AddL2Laplace adds a vector z with density ∝ exp(−‖z‖₂/b) to dst
	// (‖z‖ ~ Gamma(len(dst), b), direction uniform): the ℓ2 "Laplace"
	// (Gamma) mechanism used for pure ε-DP output perturbation.
	AddL2Laplace(dst []float64, b float64)
	// Secure reports whether the source is cryptographically secure and
	// resists floating-point attacks: only then is a run private.
	Secure() bool
	// Name describes the sampler (e.g. "secure binomial Gaussian, 2^k snapping").
	Name() string
}

// ScaleNoise returns n with every σ/b multiplied by f. The result is never
// Secure: it exists for audits (to show too little noise is caught) and for
// labelled what-if experiments, never for private releases.
func ScaleNoise(n Noise, f float64) Noise { return scaledNoise{n, f} }

// Unprivate returns n labelled not private (Secure() false) with the reason
// in its Name: for a pipeline whose other steps void the guarantee, such as
// scaling fitted on the private records, so reports cannot claim privacy.
func Unprivate(n Noise, reason string) Noise { return unprivate{n, reason} }

type unprivate struct {
	Noise
	reason string
}

func (u unprivate) Secure() bool { return false }
func (u unprivate) Name() string { return u.Noise.Name() + " — NOT private: " + u.reason }

// scaledNoise multiplies every noise scale by f (auditing only).
type scaledNoise struct {
	inner Noise
	f     float64
}

func (s scaledNoise) AddGaussian(dst []float64, sigma float64) { s.inner.AddGaussian(dst, sigma*s.f) }
func (s scaledNoise) AddLaplace(dst []float64, b float64)      { s.inner.AddLaplace(dst, b*s.f) }
func (s scaledNoise) AddL2Laplace(dst []float64, b float64)    { s.inner.AddL2Laplace(dst, b*s.f) }
func (s scaledNoise) Secure() bool                             { return false }
func (s scaledNoise) Name() string {
	return fmt.Sprintf("%s ×%g (audit only)", s.inner.Name(), s.f)
}

// IntegerNoiseOf returns the integer randomness of n (the distributed
// discrete Gaussian's, IntegerNoise), looking through Unprivate; false
// when n has none.
func IntegerNoiseOf(n Noise) (IntegerNoise, bool) {
	if u, ok := n.(unprivate); ok {
		n = u.Noise
	}
	in, ok := n.(IntegerNoise)
	return in, ok
}

// ZeroNoise returns a Noise that adds nothing. Never Secure: it exists for
// noise-free probes and for tests of what a release sums before noise.
func ZeroNoise() Noise { return zeroNoise{} }

type zeroNoise struct{}

func (zeroNoise) AddGaussian([]float64, float64)  {}
func (zeroNoise) AddLaplace([]float64, float64)   {}
func (zeroNoise) AddL2Laplace([]float64, float64) {}
func (zeroNoise) Secure() bool                    { return false }
func (zeroNoise) Name() string                    { return "none (noise-free)" }
