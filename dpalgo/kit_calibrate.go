package dpalgo

import (
	"fmt"
	"math"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// checkFixedKnobs refuses the RunConfig fields a private algorithm does not honour:
// checkpoints (they would release un-noised intermediate models), step-size
// schedules and averaging modes (the papers fix both), and cfg.Eta /
// cfg.Steps where the algorithm's proof fixes them.
func checkFixedKnobs(name string, cfg *pairwise.RunConfig, etaOK, stepsOK bool) error {
	switch {
	case len(cfg.Checkpoints) > 0 || cfg.OnCheckpoint != nil:
		return fmt.Errorf("%s: checkpoints would release un-noised intermediate models; a private algorithm returns only its final output", name)
	case cfg.Schedule != "" && cfg.Schedule != pairwise.Constant:
		return fmt.Errorf("%s: the step sizes are fixed by the paper; --schedule %s does not apply", name, cfg.Schedule)
	case cfg.Averaging != "" && cfg.Averaging != pairwise.AvgPaper:
		return fmt.Errorf("%s: the output is fixed by the paper; --averaging %s does not apply", name, cfg.Averaging)
	case cfg.Eta < 0 || math.IsNaN(cfg.Eta) || math.IsInf(cfg.Eta, 0):
		return fmt.Errorf("%s: step size η = %v must be finite and > 0 (0 = the theorem's default)", name, cfg.Eta)
	case cfg.Steps < 0:
		return fmt.Errorf("%s: steps = %d must be ≥ 0 (0 = the theorem's default)", name, cfg.Steps)
	case !etaOK && cfg.Eta != 0:
		return fmt.Errorf("%s: the step sizes are fixed by the paper's privacy proof; --eta does not apply", name)
	case !stepsOK && cfg.Steps != 0:
		return fmt.Errorf("%s: the iteration counts are fixed by the paper's privacy proof; --steps does not apply", name)
	}
	return nil
}

// formulaLine is the report's formula line: the paper's under
// --calibration paper, else the exact calibration with the paper's formula
// for reference.
func formulaLine(priv *pairwise.Privacy, paper string) string {
	if priv.Calibration.OrDefault() == pairwise.CalibrationPaper {
		return paper
	}
	return "σ (or b): the smallest the exact accountant certifies for the tight sensitivity (see notes); the paper prints " + paper
}

// calibrateSnapped returns the smallest σ (up to the bisection lattice)
// such that a Gaussian release of k coordinates with ℓ2 sensitivity Δ,
// rounded to the secure mechanism's grid, is (ε, δ)-DP: it calibrates for
// Δ + g√k with g the grid of 2σ₀ (an upper bound on the grid of the final
// σ, which is within rounding of σ₀ = σ(Δ)).
func calibrateSnapped(eps, delta, sens float64, k int) (float64, error) {
	s0, err := dp.AnalyticGaussianSigma(eps, delta, sens)
	if err != nil {
		return 0, fmt.Errorf("dpalgo: %w", err)
	}
	if s0 > dp.MaxScale/2 {
		return 0, fmt.Errorf("dpalgo: σ = %g is too large for the noise mechanism (ε = %g, δ = %g, Δ = %g)", s0, eps, delta, sens)
	}
	g := dp.GaussianGranularity(2 * s0)
	// The exact calibration of Δ' (snapping already in it) with the
	// discrete-noise δ term of the k coordinates (dp.CalibrateGaussian).
	s, _, err := dp.CalibrateGaussian(dp.GaussianPlan{Sensitivities: []float64{dp.SnappedL2Sensitivity(sens, g, k)}, Coordinates: int64(k)}, eps, delta)
	if err != nil {
		return 0, fmt.Errorf("dpalgo: %w", err)
	}
	return s[0], nil
}

// gaussianMu returns the μ of μ-GDP that is exactly (ε, δ)-DP: Δ/σ for one
// Gaussian release calibrated to (ε, δ).
func gaussianMu(eps, delta float64) (float64, error) {
	s, err := calibrateSnapped(eps, delta, 1, 1)
	if err != nil {
		return 0, err
	}
	return 1 / s, nil
}
