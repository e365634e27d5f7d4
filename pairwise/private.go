package pairwise

import (
	"fmt"
	"math"
	"strings"

	"github.com/pairfed/pairfed/dp"
)

// Noise draws the random perturbations of private algorithms: dp.Noise
// (dp.NewSecureNoise for private runs, dp.NewSeededNoise for tests and
// labelled non-private experiments).
type Noise = dp.Noise

// Privacy is the privacy request of a private run.
type Privacy struct {
	// Epsilon > 0 and Delta ∈ [0, 1) of record-level (ε, δ)-DP. Delta = 0
	// asks for pure ε-DP (the Laplace variants, where the paper has one).
	Epsilon, Delta float64
	// FeatureRadius is R: the caller guarantees ‖x_i‖ ≤ R for every record
	// (the loaders clip at load time); algorithms check it and derive G, L
	// from the loss's bounds at R.
	FeatureRadius float64
	// Noise draws the perturbations.
	Noise Noise
	// Calibration is how σ (or b) is chosen: exact (default, "") or paper
	// (the printed formula, refused unless the exact accountant certifies
	// it); the certifier is calibrate.go.
	Calibration Calibration
}

// Validate checks ε, δ, R and the noise source.
func (p *Privacy) Validate() error {
	switch {
	case p == nil:
		return fmt.Errorf("pairwise: a private algorithm needs --epsilon (and optionally --delta)")
	case !(p.Epsilon > 0) || math.IsInf(p.Epsilon, 0):
		return fmt.Errorf("pairwise: ε = %v must be finite and > 0", p.Epsilon)
	case !(p.Delta >= 0 && p.Delta < 1):
		return fmt.Errorf("pairwise: δ = %v must be in [0, 1)", p.Delta)
	case !(p.FeatureRadius > 0) || math.IsInf(p.FeatureRadius, 0):
		return fmt.Errorf("pairwise: private runs need a finite feature radius R > 0 (records clipped to ‖x‖ ≤ R), got %v", p.FeatureRadius)
	case p.Noise == nil:
		return fmt.Errorf("pairwise: private run without a noise source")
	}
	return p.Calibration.Validate()
}

// Calibration selects how a private algorithm chooses its noise.
type Calibration string

const (
	// CalibrationExact (the default): σ is the smallest for which the
	// exact Gaussian-DP accountant (dp.CalibrateGaussian) certifies the
	// requested (ε, δ) for the tightest sensitivity pairfed proves
	// (each proof is a comment beside the algorithm); Laplace scales are
	// b = Δ₁/ε for the same tight sensitivity.
	CalibrationExact Calibration = "exact"
	// CalibrationPaper: the σ (or b) printed in the algorithm's paper,
	// certified by the exact accountant for the proven sensitivity, and
	// refused when it does not reach the requested (ε, δ).
	CalibrationPaper Calibration = "paper"
)

// Validate checks the name ("" means exact).
func (c Calibration) Validate() error {
	switch c {
	case "", CalibrationExact, CalibrationPaper:
		return nil
	}
	return fmt.Errorf("pairwise: unknown calibration %q (want exact or paper)", string(c))
}

// orDefault returns c, or exact for "".
func (c Calibration) OrDefault() Calibration {
	if c == "" {
		return CalibrationExact
	}
	return c
}

// Requirements are the assumptions a private algorithm's proof makes of the
// (regularized) loss over the parameter set.
type Requirements struct {
	Convex         bool // convex in w
	Lipschitz      bool // G-Lipschitz with finite G over W
	Smooth         bool // L-smooth
	StronglyConvex bool // α-strongly convex, α = λ > 0
	BoundedDomain  bool // W bounded (finite radius)
	BoundedLoss    bool // sup f finite over the domain
}

// String lists the requirements in words.
func (r Requirements) String() string {
	var out []string
	for _, x := range []struct {
		ok   bool
		name string
	}{{r.Convex, "convex"}, {r.Lipschitz, "G-Lipschitz"}, {r.Smooth, "L-smooth"}, {r.StronglyConvex, "α-strongly convex"},
		{r.BoundedDomain, "bounded parameter set"}, {r.BoundedLoss, "bounded loss"}} {
		if x.ok {
			out = append(out, x.name)
		}
	}
	return strings.Join(out, ", ")
}

// Check verifies that obj meets r for records of norm ≤ R and returns the
// derived properties, or an error naming the failed assumption and what to
// use instead.
func (r Requirements) Check(algo string, obj Objective, R float64) (Props, error) {
	p := obj.Props(R)
	loss := obj.Loss().Name()
	fail := func(what, fix string) (Props, error) {
		return p, fmt.Errorf("pairwise: %s needs %s, but %s: %s", algo, what, describe(obj, R, p), fix)
	}
	if r.Convex && !p.Convex {
		return fail("a convex loss", "use a convex loss")
	}
	if r.Smooth && !p.IsSmooth() {
		if loss == "logistic" || loss == "square" {
			// Smooth by nature: its constants overflowed at this R and B.
			return fail("an L-smooth loss", fmt.Sprintf("the %s loss is smooth, but its constants overflow float64 at R = %g: give a smaller --radius (records are scaled into ‖x‖ ≤ R; private runs default to 1) and --param-radius", loss, R))
		}
		return fail("an L-smooth loss", fmt.Sprintf("the %s loss is not smooth; use --loss logistic (or square)", loss))
	}
	if r.StronglyConvex && !(p.StrongConvexity > 0) {
		return fail("an α-strongly convex objective", "add --lambda > 0 (α = λ); [H20]/[X21] use λ = 1e-3 (AUC) and 1e-2 (metric)")
	}
	if r.BoundedDomain && math.IsInf(obj.Constraint().Radius(), 1) {
		return fail("a bounded parameter set", "use a constraint with a radius (--constraint l2 / frobenius-psd with --param-radius)")
	}
	if r.Lipschitz && (math.IsInf(p.Lipschitz, 0) || math.IsNaN(p.Lipschitz)) {
		return fail("a G-Lipschitz loss", "bound the parameter set (--param-radius) or use the hinge/logistic loss")
	}
	if r.BoundedLoss && math.IsInf(p.Bound, 0) {
		return fail("a bounded loss", "bound the parameter set (--param-radius)")
	}
	return p, nil
}

func describe(obj Objective, R float64, p Props) string {
	return fmt.Sprintf("the %s %s loss with λ = %g over %s (R = %g) has G = %g, L = %g, α = %g",
		obj.Task(), obj.Loss().Name(), obj.Lambda(), obj.Constraint().Name(), R, p.Lipschitz, p.Smooth, p.StrongConvexity)
}

// CheckRadius verifies that every record has ‖x‖ ≤ R (up to rounding): the
// sensitivity bounds of every private algorithm rest on it.
func CheckRadius(s *Dataset, R float64) error {
	for i := 0; i < s.N; i++ {
		if n := math.Sqrt(s.SqNorm(i)); n > R*(1+1e-9) {
			return fmt.Errorf("pairwise: record %d has ‖x‖ = %.6g > R = %g: clip records to the feature radius before a private run", i, n, R)
		}
	}
	return nil
}

// PrivacyReport states what a private run guarantees and how: the paper's
// noise formula, the constants derived for this loss and data, and every σ.
type PrivacyReport struct {
	Model       string    `json:"model"` // e.g. "record-level (ε, δ)-DP"
	Epsilon     float64   `json:"epsilon"`
	Delta       float64   `json:"delta"`
	Mechanism   string    `json:"mechanism"`  // "gaussian", "laplace", "l2-laplace"
	Accountant  string    `json:"accountant"` // how the releases compose, per the paper
	Formula     string    `json:"formula"`    // the noise formula with paper and equation
	G           float64   `json:"G"`
	L           float64   `json:"L"`
	Alpha       float64   `json:"alpha"`
	R           float64   `json:"R"`
	Sensitivity []float64 `json:"sensitivity,omitempty"`
	Sigmas      []float64 `json:"sigmas"` // σ (Gaussian) or b (Laplace) of each release
	Releases    int       `json:"releases"`
	Noise       string    `json:"noise"`
	Private     bool      `json:"private"` // false when the noise source is not secure (seeded)
	Assumptions string    `json:"assumptions"`
	Notes       []string  `json:"notes,omitempty"`
	// Disjoint marks releases computed on disjoint subsets of the records:
	// they compose in parallel.
	Disjoint bool `json:"disjoint"`
	// FailureDelta is the part of δ spent on the event where the paper's
	// sensitivity bound may fail (e.g. [Y21a]/[Y21b]'s high-probability
	// bound over the sampled indices); accountants compose the noisy
	// releases at δ − FailureDelta.
	FailureDelta float64 `json:"failure_delta"`
	// SampleRate is the Poisson sampling rate q of mechanism
	// "subsampled-gaussian": Releases steps, each adding N(0, Sigmas[0]²)
	// to a sum over a Poisson(q) sample whose add/remove sensitivity is
	// Sensitivity[0]; accountants use the subsampled-Gaussian RDP
	// (dp.SubsampledGaussianEpsilon) under Neighbouring.
	SampleRate float64 `json:"sample_rate,omitempty"`
	// Neighbouring is the relation the guarantee is stated for when it is
	// not the default replace-one ("add-remove" or "replace-one").
	Neighbouring string `json:"neighbouring,omitempty"`
	// Calibration is how the σ's were chosen: "exact" or "paper".
	Calibration string `json:"calibration"`
	// CertifiedEpsilon and CertifiedDelta are what the exact accountant
	// certifies for the noise actually added and the proven sensitivities
	// (Sensitivity): the smallest ε at the requested δ and the δ at the
	// requested ε (FailureDelta included). A run is refused unless both are
	// within the request (Epsilon, Delta).
	CertifiedEpsilon float64 `json:"certified_epsilon"`
	CertifiedDelta   float64 `json:"certified_delta"`
	// PaperSigmas and PaperSensitivity are the paper's printed σ's (or
	// Laplace scales) and its sensitivity bounds, for comparison with the
	// calibrated ones (identical σ's under --calibration paper).
	PaperSigmas      []float64 `json:"paper_sigmas,omitempty"`
	PaperSensitivity []float64 `json:"paper_sensitivity,omitempty"`

	dim int // noised coordinates per release (the snapping allowance)
	// certified is set once the certificate fields were filled by the
	// algorithm's own calibration (CalibrateGaussian, CalibrateLaplace);
	// certifyReport certifies the other reports.
	certified bool
}

// SetNoiseDim sets the number of noise coordinates each release draws
// from the secure sampler (by default the model's parameters), which the
// certificate's discrete-noise δ term counts.
func (r *PrivacyReport) SetNoiseDim(k int) { r.dim = k }

// NoiseDim returns the number of noise coordinates each release draws.
func (r *PrivacyReport) NoiseDim() int { return r.dim }

// SetCertificate records the certificate (ε, δ) an algorithm computed
// itself from the exact accountant of package dp for its whole run (e.g.
// the subsampled Gaussian's RDP bound); the registry's certifier then only
// checks it against the request. The algorithm's file proves it.
func (r *PrivacyReport) SetCertificate(eps, delta float64) {
	r.CertifiedEpsilon, r.CertifiedDelta, r.certified = eps, delta, true
}
