package dpalgo

import (
	"context"
	"fmt"
	"math"

	"github.com/pairfed/pairfed/pairwise"
)

// Per-round entry points of [K22] Alg 1 (dp-gd-grad) for the federated
// fed-dp-gd-grad (packages worker and coordinator). Round t of a T-round
// job: the coordinator broadcasts θ_{t−1}; every site s releases
//
//	g_s = ∇L(θ_{t−1}; D_s) + b_s,  b_s ~ N(0, σ_s² I_p),
//	σ_s: calibrated exactly for T releases of sensitivity 2Γ/n_s
//	     (calibrateGradReleases; [K22] Thm 1 prints 8·G·√(T·log(1/δ))/(n_s·ε)),
//
// (DPGDGradRound: the body of runDPGDGrad's loop up to the noise); the
// coordinator averages the g_s weighted by n_s and steps
// θ_t = Π_C(θ_{t−1} − η·ḡ) with η = 1/L (FedGradStep). A site's T releases
// are adaptive Gaussian releases of ℓ2 sensitivity 4G/n_s each (one record
// changes 2(n_s−1) of the n_s(n_s−1) pair gradients by ≤ 2G), on the SAME
// records: they compose sequentially, which σ_s's √T accounts for. Every
// iterate is post-processing of the releases of all sites, so the start
// model of a round does not depend on site s's records except through its
// own earlier releases (adaptive composition).

// FedGradProps returns the constants (G, L, α, bound) of the linear AUC
// objective of loss with (λ/2)‖w‖² over the ℓ2 ball of radius B for records
// of norm ≤ R — what a site's objective reports (Objective.Props(R)). The
// coordinator, which holds no data, takes η = 1/L and the per-site
// sensitivity 4G/n_s from it.
func FedGradProps(loss pairwise.Loss, R, B, lambda float64) pairwise.Props {
	return pairwise.RegularizedProps(loss.Props(R, B), lambda, B)
}

// DPGDGradPaperSensitivity is the ℓ2 sensitivity 4G/n of the full pairwise gradient
// of n records under replace-one neighbours as [K22] Thm 1 argues it (each
// pair gradient changes by ≤ 2G).
func DPGDGradPaperSensitivity(G float64, n int) float64 { return 4 * G / float64(n) }

// DPGDGradSiteSensitivity is the sensitivity a fed-dp-gd-grad site calibrates
// to (DPGDGradRound): 2Γ/n for the linear AUC loss at feature radius R
// and parameter radius B (pairGradGap; Γ = G for logistic and hinge). The
// coordinator composes a site's σ's with it.
func DPGDGradSiteSensitivity(loss pairwise.Loss, R, B float64, n int) float64 {
	gamma, _ := lossPairGradGap(loss, R, B, false)
	return 2 * gamma / float64(n)
}

// GradRound is one site's released gradient of a fed-dp-gd-grad round.
type GradRound struct {
	// Grad is ∇L(θ; D) + b (+ λθ when λ > 0), a fresh slice.
	Grad []float64
	// Sigma is σ for this site's n and the job's T (calibrateGradReleases);
	// Sensitivity is the proven 2Γ/n it is calibrated to.
	Sigma, Sensitivity float64
	// G and L are the objective's constants at R.
	G, L float64
	// Secure copies priv.Noise.Secure(): only then is the release private.
	Secure bool
	// PairGrads counts the pair gradients of the full gradient (n(n−1)).
	PairGrads int64
	// Notes say how σ arises.
	Notes []string
	// PaperSigma is [K22] Thm 1's σ, for comparison; CertifiedEpsilon and
	// CertifiedDelta are what the exact accountant certifies for the T
	// rounds with this σ.
	PaperSigma, CertifiedEpsilon, CertifiedDelta float64
}

// dpgdGradCheck is the check of a fed-dp-gd-grad round (DPGDGradRound,
// and DPGDGradSum under secure aggregation), before any data-dependent
// computation: PrivateSetup (ε, δ > 0, ‖x‖ ≤ R, G-Lipschitz and L-smooth
// loss), n ≥ 2, T ≥ 1, a model of the objective's size and a live ctx.
func dpgdGradCheck(ctx context.Context, obj pairwise.Objective, w []float64, T int, priv *pairwise.Privacy) (pairwise.Props, *pairwise.PrivacyReport, error) {
	cfg := pairwise.RunConfig{Privacy: priv}
	props, rep, err := pairwise.PrivateSetup(gradPertAlg, obj, &cfg)
	if err != nil {
		return pairwise.Props{}, nil, err
	}
	n, p := obj.Data().N, obj.NumParams()
	switch {
	case n < 2:
		return pairwise.Props{}, nil, fmt.Errorf("%s needs at least 2 records (a pair), this site has %d", gradPertAlg.Name, n)
	case T < 1:
		return pairwise.Props{}, nil, fmt.Errorf("%s needs T ≥ 1 iterations, got %d", gradPertAlg.Name, T)
	case len(w) != p:
		return pairwise.Props{}, nil, fmt.Errorf("%s: model has %d parameters, want %d", gradPertAlg.Name, len(w), p)
	}
	return props, rep, ctx.Err()
}

// DPGDGradRound releases one noisy full pairwise gradient of [K22] Alg 1 at
// w (not modified; the gradient is taken at w's projection onto C, which is
// w for a model the coordinator projected) for a run of T iterations on
// all of obj's records: FullGradient(obj, w) + N(0, σ² I_p) with σ from
// calibrateGradReleases (as single-site dp-gd-grad: exact by default, DPGDGradPaperSigma under
// --calibration paper). It repeats runDPGDGrad's checks (PrivateSetup: ε,
// δ > 0, ‖x‖ ≤ R, G-Lipschitz and L-smooth loss; n ≥ 2) before any
// data-dependent computation. The release is one of T adaptive Gaussian
// releases of sensitivity 2Γ/n; the T together are certified (ε, δ)-DP by
// exact Gaussian-DP composition.
func DPGDGradRound(ctx context.Context, obj pairwise.Objective, w []float64, T int, priv *pairwise.Privacy) (*GradRound, error) {
	props, rep, err := dpgdGradCheck(ctx, obj, w, T, priv)
	if err != nil {
		return nil, err
	}
	n, p := obj.Data().N, obj.NumParams()
	G, L := props.Lipschitz, props.Smooth
	// σ for this site's n and the job's T, chosen before the data is read:
	// the same calibration as single-site dp-gd-grad (calibrateGradReleases: Δ = 2Γ/n
	// per round, exact GDP composition of the T rounds).
	sigma, err := calibrateGradReleases(obj, priv, rep, T)
	if err != nil {
		return nil, err
	}
	g := make([]float64, p)
	pairwise.FullGradient(obj, projected(obj, w), g) // ∇L(θ_{t−1}; D_s) (+ λθ)
	priv.Noise.AddGaussian(g, sigma)                 // + b_t
	notes := append([]string{fmt.Sprintf("σ = %.6g with G = %.6g, T = %d, n = %d (%s)", sigma, G, T, n, rep.Formula)}, rep.Notes...)
	return &GradRound{Grad: g, Sigma: sigma, Sensitivity: rep.Sensitivity[0], G: G, L: L,
		Secure: priv.Noise.Secure(), PairGrads: int64(n) * int64(n-1), Notes: notes,
		PaperSigma: rep.PaperSigmas[0], CertifiedEpsilon: rep.CertifiedEpsilon, CertifiedDelta: rep.CertifiedDelta}, nil
}

// FedGradStep is the coordinator's step of fed-dp-gd-grad:
// w ← Π_B(w − η·g), the ℓ2 ball of radius B (B = +Inf: no projection) —
// the same arithmetic as runDPGDGrad's step with a constant schedule and
// an "l2" constraint.
func FedGradStep(w, g []float64, eta, B float64) {
	pairwise.Axpy(-eta, g, w)
	if !math.IsInf(B, 1) {
		pairwise.L2Ball{R: B}.Project(w)
	}
}

// FedGradFinish is runDPGDGrad's final post-processing (Π_C of θ_T) for
// the ℓ2 ball of radius B.
func FedGradFinish(w []float64, B float64) {
	if !math.IsInf(B, 1) {
		pairwise.L2Ball{R: B}.Project(w)
	}
}

// projected returns a copy of w projected onto obj's parameter set: a
// site computes its gradient at a point of C whatever model it was sent,
// since Γ and G (and so the sensitivity its noise is calibrated to) are
// proved over C only (noisyPGDSteps). A model the coordinator projected is
// unchanged (the ℓ2 ball bit for bit).
func projected(obj pairwise.Objective, w []float64) []float64 {
	c := append([]float64(nil), w...)
	obj.Project(c)
	return c
}
