package pairwise

import (
	"fmt"
	"math"

	"github.com/pairfed/pairfed/dp"
)

// GaussOption is one proven description of a run's Gaussian releases (its
// sensitivities, split, parallel composition and failure probability);
// an algorithm may have several (e.g. a diameter bound that always holds
// and a stability bound on a high-probability event), and calibration
// takes whichever needs the least noise.
type GaussOption struct {
	Plan dp.GaussianPlan
	How  string // the sensitivity argument in one line, for the report
}

// CalibrateGaussian chooses the σ's of a private run's Gaussian releases
// and fills rep (Sigmas, Sensitivity, Disjoint, FailureDelta, Calibration,
// CertifiedEpsilon/Delta, PaperSigmas, PaperSensitivity), before any noise
// is drawn:
//
//   - exact: for each option the smallest σ's dp.CalibrateGaussian
//     certifies; the option with the least total noise Σσᵢ² wins;
//   - paper: the printed σ's (paper), certified for each option; the
//     option with the smallest certified ε wins, and the run is refused
//     with an error naming that ε when it exceeds the request.
//
// A certificate that does not cover the request is an error under either
// calibration (for exact it cannot happen unless the accountant fails):
// no run claims a guarantee its noise does not give.
func CalibrateGaussian(name string, priv *Privacy, rep *PrivacyReport, paper, paperSens []float64, opts ...GaussOption) ([]float64, error) {
	eps, delta := priv.Epsilon, priv.Delta
	cal := priv.Calibration.OrDefault()
	var (
		best     []float64
		bestCert dp.Certificate
		bestOpt  = -1
		score    = math.Inf(1)
	)
	for k, o := range opts {
		if o.Plan.Dim == 0 {
			o.Plan.Dim = rep.dim
		}
		opts[k] = o
		switch cal {
		case CalibrationExact:
			s, c, err := dp.CalibrateGaussian(o.Plan, eps, delta)
			if err != nil {
				continue // e.g. a failure probability ≥ δ: another option may apply
			}
			var tot float64
			for _, x := range s {
				tot += x * x
			}
			if tot < score {
				best, bestCert, bestOpt, score = s, c, k, tot
			}
		case CalibrationPaper:
			c, err := dp.CertifyGaussian(o.Plan, paper, eps, delta)
			if err != nil {
				return nil, fmt.Errorf("pairwise: %s: %w", name, err)
			}
			if s := c.Epsilon; bestOpt < 0 || s < score || (s == score && c.Delta < bestCert.Delta) {
				best, bestCert, bestOpt, score = paper, c, k, s
			}
		}
	}
	if bestOpt < 0 {
		return nil, fmt.Errorf("pairwise: %s: no σ certifies (ε, δ) = (%g, %g) for its sensitivity bounds; raise δ", name, eps, delta)
	}
	o := opts[bestOpt]
	rep.Sigmas = append([]float64(nil), best...)
	rep.Sensitivity = append([]float64(nil), o.Plan.Sensitivities...)
	rep.Disjoint = o.Plan.Disjoint
	rep.FailureDelta = o.Plan.FailureDelta
	rep.Calibration = string(cal)
	rep.CertifiedEpsilon, rep.CertifiedDelta = bestCert.Epsilon, bestCert.Delta
	rep.certified = true
	rep.PaperSigmas = append([]float64(nil), paper...)
	rep.PaperSensitivity = append([]float64(nil), paperSens...)
	comp := "sequential composition"
	if o.Plan.Disjoint {
		comp = "parallel composition over disjoint parts"
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("calibration %s: sensitivity %s; %s, exact Gaussian DP (μ = %.6g) certifies (ε, δ) = (%.6g, %.4g) at the request (%g, %.4g) (failure probability %.3g included in δ)",
		cal, o.How, comp, bestCert.Mu, bestCert.Epsilon, bestCert.Delta, eps, delta, o.Plan.FailureDelta))
	if !bestCert.Covers(eps, delta) {
		if cal == CalibrationPaper {
			return nil, fmt.Errorf("pairwise: %s: --calibration paper refused: the printed σ certifies only ε = %.6g > %g at δ = %.4g (exact Gaussian-DP accountant, proven sensitivity %s); use --calibration exact, a smaller ε or a larger δ", name, bestCert.Epsilon, eps, delta, o.How)
		}
		return nil, fmt.Errorf("pairwise: %s: internal error: calibrated noise certifies only (ε, δ) = (%g, %g), request (%g, %g)", name, bestCert.Epsilon, bestCert.Delta, eps, delta)
	}
	return rep.Sigmas, nil
}

// CalibrateLaplace chooses the scales of pure ε-DP Laplace releases of ℓ1
// sensitivity l1[i] (independent Lap(b) per coordinate, p coordinates):
// exact b = Δ₁/ε′ with ε′ = ε − p·2⁻⁴⁶ (the secure noise's snapping costs
// at most p·2⁻⁴⁶, dp/noise.go), paper b = the printed scale, refused when
// its certified ε = max (disjoint) or Σ of Δ₁/b + p·2⁻⁴⁶ exceeds ε.
func CalibrateLaplace(name string, priv *Privacy, rep *PrivacyReport, paper, paperL1, l1 []float64, disjoint bool, how string) ([]float64, error) {
	eps := priv.Epsilon
	cal := priv.Calibration.OrDefault()
	snap := float64(rep.dim) * 0x1p-46
	b := make([]float64, len(l1))
	if cal == CalibrationPaper {
		copy(b, paper)
	} else {
		share := eps - snap
		if !disjoint {
			share /= float64(len(l1))
		}
		if !(share > 0) {
			return nil, fmt.Errorf("pairwise: %s: ε = %g is too small for %d noised coordinates", name, eps, rep.dim)
		}
		for i, d := range l1 {
			b[i] = math.Nextafter(d/share*(1+1e-10), math.Inf(1)) // margin over the 1e-12 allowance below
		}
	}
	var cert float64
	for i, d := range l1 {
		e := d/b[i] + snap
		if disjoint {
			cert = math.Max(cert, e)
		} else {
			cert += e
		}
	}
	cert *= 1 + 1e-12
	rep.Sigmas = b
	rep.Sensitivity = append([]float64(nil), l1...)
	rep.Disjoint = disjoint
	rep.Calibration = string(cal)
	rep.CertifiedEpsilon, rep.CertifiedDelta = cert, 0
	rep.certified = true
	rep.PaperSigmas = append([]float64(nil), paper...)
	rep.PaperSensitivity = append([]float64(nil), paperL1...)
	rep.Notes = append(rep.Notes, fmt.Sprintf("calibration %s: ℓ1 sensitivity %s; Laplace mechanism certifies ε = %.6g (request %g)", cal, how, cert, eps))
	if cert > eps {
		if cal == CalibrationPaper {
			return nil, fmt.Errorf("pairwise: %s: --calibration paper refused: the printed Laplace scale certifies only ε = %.6g > %g; use --calibration exact", name, cert, eps)
		}
		return nil, fmt.Errorf("pairwise: %s: internal error: calibrated Laplace noise certifies only ε = %g > %g", name, cert, eps)
	}
	return b, nil
}

// certifyReport fills the certificate of a report whose algorithm did not
// certify it while calibrating (see certifiedRun) and checks it against the
// request. Its Sensitivity must already include the secure noise's
// snapping allowance (the algorithms that report this way state Δ'); the
// discrete-noise δ term (dp/discrete_gdp.go) is included for the
// rep.dim coordinates each release draws.
func certifyReport(name string, rep *PrivacyReport) error {
	if !rep.certified {
		rep.certified = true
		if rep.Calibration == "" {
			rep.Calibration = string(CalibrationExact)
		}
		switch {
		case len(rep.Sigmas) == 0:
			rep.CertifiedEpsilon, rep.CertifiedDelta = 0, rep.FailureDelta
		case rep.Mechanism == "gaussian" && rep.Delta > 0 && len(rep.Sensitivity) == len(rep.Sigmas):
			var coords int64
			for i, s := range rep.Sigmas {
				if s > 0 && rep.Sensitivity[i] > 0 {
					coords += int64(rep.dim)
					if rep.Disjoint {
						coords = int64(rep.dim) // a record reaches one release
						break
					}
				}
			}
			c, err := dp.CertifyGaussian(dp.GaussianPlan{Sensitivities: rep.Sensitivity, Disjoint: rep.Disjoint, FailureDelta: rep.FailureDelta, Coordinates: coords}, rep.Sigmas, rep.Epsilon, rep.Delta)
			if err != nil {
				return fmt.Errorf("pairwise: %s: certifying the report: %w", name, err)
			}
			rep.CertifiedEpsilon, rep.CertifiedDelta = c.Epsilon, c.Delta
		case rep.Mechanism == "subsampled-gaussian" && rep.Delta > 0 && len(rep.Sigmas) == 1 && len(rep.Sensitivity) == 1 && rep.Sensitivity[0] > 0:
			rel := dp.AddRemove
			if rep.Neighbouring == string(dp.ReplaceOne) {
				rel = dp.ReplaceOne
			}
			coords := int64(rep.Releases) * int64(rep.dim) // every step draws dim coordinates
			e, _, err := dp.SecureSubsampledGaussianEpsilon(rep.SampleRate, rep.Sigmas[0]/rep.Sensitivity[0], rep.Releases, rep.Delta-rep.FailureDelta, rel, coords)
			if err != nil {
				return fmt.Errorf("pairwise: %s: certifying the report: %w", name, err)
			}
			rep.CertifiedEpsilon, rep.CertifiedDelta = e, rep.Delta
			if e > rep.Epsilon {
				rep.CertifiedDelta = 1 // not certified at the request
			}
		default:
			rep.certified = false
			return nil // no accountant for this report (e.g. ℓ2-Laplace): nothing claimed beyond the algorithm's own proof
		}
	}
	if rep.Private && (rep.CertifiedEpsilon > rep.Epsilon || rep.CertifiedDelta > rep.Delta) {
		return fmt.Errorf("pairwise: %s: the noise added certifies only (ε, δ) = (%g, %g), above the request (%g, %g): the run is refused", name, rep.CertifiedEpsilon, rep.CertifiedDelta, rep.Epsilon, rep.Delta)
	}
	return nil
}
