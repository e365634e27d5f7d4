package fedalgo

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// fed-dp-gd-grad: [K22] Kang, Liu, Li, Wang. Towards Sharper Utility
// Bounds for Differentially Private Pairwise Learning (arXiv:2105.03033),
// Alg 1 (Thm 1) run across sites.
//
// Phase t (of T) broadcasts θ_{t−1}; each site releases its full pairwise
// gradient on all its records plus N(0, σ_s² I), σ_s =
// 8G√(T log(1/δ))/(n_s ε) (dpalgo.DPGDGradRound; SiteUpdate.Model
// carries that noisy gradient, not a model). The coordinator combines the
// gradients weighted by n_s into ḡ and steps θ_t = Π_C(θ_{t−1} − ηḡ) with
// η = 1/L (dpalgo.FedGradStep); the output is θ_T, projected.
//
// Privacy: a site's T releases are adaptive Gaussian releases of ℓ2
// sensitivity 4G/n_s on the same records and compose sequentially, which
// σ_s's √T accounts for ([K22] Thm 1, moments accountant): per-site
// (ε, δ), charged once. The plan records each site's sensitivity so that
// the ledgers can also be composed exactly (Account: dp.Compose, Gaussian
// DP); the coordinator's steps are post-processing.

// FedDPGDGrad is the name of fed-dp-gd-grad.
const FedDPGDGrad = "fed-dp-gd-grad"

func init() { Register(fedDPGDGrad{}) }

type fedDPGDGrad struct{}

func (fedDPGDGrad) Name() string { return FedDPGDGrad }

// Doc is what `pairfed algos` and docs/algorithms.md say of FedDPGDGrad.
func (fedDPGDGrad) Doc() Doc {
	return Doc{
		Title:       "noisy full pairwise gradients from every site; the coordinator averages them and steps",
		Paper:       "[K22] Kang, Liu, Li, Wang. Towards Sharper Utility Bounds for Differentially Private Pairwise Learning (arXiv:2105.03033)",
		Ref:         "Alg 1, Thm 1, across sites (fedalgo/dpgdgrad.go)",
		Assumptions: "G-Lipschitz, L-smooth loss (the coordinator steps with η = 1/L); per-site (ε, δ) over T adaptive Gaussian releases of sensitivity 4G/n_s",
	}
}

func (fedDPGDGrad) Private() bool { return true }

// paperCalibration: [K22] Thm 1 prints σ (certified by the plan for every site).
func (fedDPGDGrad) paperCalibration(*Spec) error { return nil }

// Configure: AUC only (the coordinator's step projects onto the ℓ2 ball,
// not onto PSD matrices); Rounds is T (0: [K22] Remark 2 at the smallest
// site); the loss must be G-Lipschitz and L-smooth — checked before any
// site joins, since the coordinator steps with η = 1/L and the sites'
// noise needs a finite G.
func (fedDPGDGrad) Configure(s *Spec) error {
	if s.Task == protocol.TaskMetric {
		return fmt.Errorf("%s is AUC only (the coordinator's step projects onto the ℓ2 ball, not onto PSD matrices)", FedDPGDGrad)
	}
	configurePrivate(s)
	if s.LocalPasses != 0 {
		return fmt.Errorf("%s is full-batch: give the number of iterations T (rounds), not local passes", FedDPGDGrad)
	}
	if err := checkPrivacy(FedDPGDGrad, s); err != nil {
		return err
	}
	props, err := fedGradProps(s)
	if err != nil {
		return err
	}
	if !props.IsSmooth() || math.IsInf(props.Lipschitz, 0) || math.IsNaN(props.Lipschitz) {
		return fmt.Errorf("%s needs a G-Lipschitz, L-smooth loss ([K22] Alg 1), the %s loss has G = %g, L = %g; use --loss logistic", FedDPGDGrad, s.Loss, props.Lipschitz, props.Smooth)
	}
	return nil
}

// fedGradProps ([K22] Alg 1) are the constants of the job's linear AUC objective, which the
// coordinator computes without data.
func fedGradProps(s *Spec) (pairwise.Props, error) {
	loss, err := pairwise.LossByName(pairwise.TaskAUC, s.Loss)
	if err != nil {
		return pairwise.Props{}, err
	}
	return dpalgo.FedGradProps(loss, s.FeatureRadius, s.ParamRadius, s.Lambda), nil
}

// Plan: T full-gradient rounds on every site's whole data; T =
// ⌈ln(n ε/√p)⌉ at the smallest site ([K22] Remark 2) unless given; η =
// 1/L unless given; every site's releases have the proven sensitivity
// 2Γ/n_s (dpalgo.DPGDGradSiteSensitivity; [K22] argues 4G/n_s).
func (fedDPGDGrad) Plan(s *Spec, sites []SiteInfo, params int) (*Plan, error) {
	nMin, _ := sizes(sites)
	if nMin < 2 {
		return nil, fmt.Errorf("%s needs at least 2 records (a pair) at every site (smallest: %d)", FedDPGDGrad, nMin)
	}
	p := &Plan{Phases: s.Rounds, Eta: s.Eta, Sensitivity: map[string]float64{}}
	p.Epsilon, p.Delta = planPrivacy(s, sites)
	if p.Phases == 0 {
		p.Phases = dpalgo.DPGDGradDefaultSteps(nMin, params, p.Epsilon)
	}
	props, err := fedGradProps(s)
	if err != nil {
		return nil, err
	}
	if p.Eta == 0 {
		p.Eta = 1 / props.Smooth
	}
	loss, err := pairwise.LossByName(pairwise.TaskAUC, s.Loss)
	if err != nil {
		return nil, err
	}
	p.Certified = map[string]Guarantee{}
	for _, site := range sites {
		// The proven 2Γ/n_s the sites calibrate to (DPGDGradRound).
		sens := dpalgo.DPGDGradSiteSensitivity(loss, s.FeatureRadius, s.ParamRadius, site.Records)
		p.Sensitivity[site.Name] = sens
		if s.Calibration == protocol.CalibrationPaper {
			// [K22] Thm 1's σ for this site, certified here so that an
			// uncertified job is refused before it is announced.
			c, err := gradPaperCertificate(sens, dpalgo.DPGDGradPaperSigma(p.Phases, site.Records, props.Lipschitz, p.Epsilon, p.Delta), p.Phases, params, p.Epsilon, p.Delta)
			if err != nil {
				return nil, fmt.Errorf("site %s: %w", site.Name, err)
			}
			p.Certified[site.Name] = c
		} else if c, ok := gradPlanCertificate(sens, p.Phases, params, p.Epsilon, p.Delta); ok {
			p.Certified[site.Name] = c
		}
	}
	return p, nil
}

// gradPlanCertificate is the certificate of a site's T rounds under the
// exact calibration, computed as the site does (dp.CalibrateGaussian of
// T releases of sensitivity sens, p noised coordinates each: the plan of
// dpalgo.DPGDGradRound); ok is false when it cannot be stated.
func gradPlanCertificate(sens float64, T, p int, eps, delta float64) (Guarantee, bool) {
	ss := make([]float64, T)
	for i := range ss {
		ss[i] = sens
	}
	_, c, err := dp.CalibrateGaussian(dp.GaussianPlan{Sensitivities: ss, Dim: p}, eps, delta)
	if err != nil || !c.Covers(eps, delta) {
		return Guarantee{}, false
	}
	return Guarantee{c.Epsilon, c.Delta}, true
}

// gradPaperCertificate certifies a site's T rounds with [K22]'s printed σ
// and the proven sensitivity (the plan of dpalgo.DPGDGradRound under
// --calibration paper), or refuses, naming the certified ε.
func gradPaperCertificate(sens, sigma float64, T, p int, eps, delta float64) (Guarantee, error) {
	ss, sg := make([]float64, T), make([]float64, T)
	for i := range ss {
		ss[i], sg[i] = sens, sigma
	}
	c, err := dp.CertifyGaussian(dp.GaussianPlan{Sensitivities: ss, Dim: p}, sg, eps, delta)
	if err != nil {
		return Guarantee{}, err
	}
	if !c.Covers(eps, delta) {
		return Guarantee{}, fmt.Errorf("%s: --calibration paper refused: [K22] Thm 1's σ = %.6g certifies only (ε, δ) = (%.6g, %.3g) for the %d rounds, above the request (%g, %.3g) (exact Gaussian-DP accountant, proven sensitivity 2Γ/n = %.6g); use --calibration exact, a smaller ε or a larger δ", FedDPGDGrad, sigma, c.Epsilon, c.Delta, T, eps, delta, sens)
	}
	return Guarantee{c.Epsilon, c.Delta}, nil
}

func (fedDPGDGrad) NewSite(job *protocol.JobAnnounce, env SiteEnv) (Site, error) {
	if job.Task == protocol.TaskMetric {
		return nil, fmt.Errorf("%s is AUC only", FedDPGDGrad)
	}
	if err := needNoise(FedDPGDGrad, env); err != nil {
		return nil, err
	}
	// [K22] Alg 1 needs a pair: refuse before any release.
	if env.Data.N < 2 {
		return nil, fmt.Errorf("%s needs at least 2 records (a pair), this site has %d", FedDPGDGrad, env.Data.N)
	}
	return &dpGDGradSite{job, env}, nil
}

type dpGDGradSite struct {
	job *protocol.JobAnnounce
	env SiteEnv
}

// Step is iteration t of [K22] Alg 1 across sites: the full pairwise
// gradient of all this site's records at the broadcast model plus
// N(0, σ² I), σ = 8G√(T log(1/δ))/(nε) for this site's n and the job's T.
// The coordinator steps; the site only releases.
//
// The charge of round t is the certificate of rounds 1…t together (exact
// Gaussian-DP composition of t releases of σ and 2Γ/n, the plan the
// calibration certified for all T): the ledger's maximum within the job
// is then the certificate of everything released, and after round T
// exactly the T-round certificate the calibration stated (never less).
func (s *dpGDGradSite) Step(ctx context.Context, t int, model []float64) (*protocol.SiteUpdate, *Release, error) {
	j := s.job
	res, err := dpalgo.DPGDGradRound(ctx, s.env.Obj, model, j.Phases, privacyOf(j, s.env))
	if err != nil {
		return nil, nil, err
	}
	eps, delta, err := gradRoundCharge(j, res, t, len(res.Grad))
	if err != nil {
		return nil, nil, err
	}
	n := s.env.Data.N
	u := &protocol.SiteUpdate{Model: res.Grad, Weight: float64(n), Sigma: res.Sigma, Epsilon: eps, Delta: delta, Secure: res.Secure}
	rel := &Release{Records: n, Mechanism: "gaussian", Sigma: res.Sigma, Sensitivity: res.Sensitivity, Epsilon: eps, Delta: delta, Secure: res.Secure}
	return u, rel, nil
}

// gradRoundCharge is the certified (ε, δ) of rounds 1…t of a site's
// fed-dp-gd-grad releases (σ, Δ = res.Sensitivity, p noised coordinates
// each) at the job's request; at t = T it is at least the calibration's
// own certificate for the T rounds.
func gradRoundCharge(j *protocol.JobAnnounce, res *dpalgo.GradRound, t, p int) (float64, float64, error) {
	if t < 1 || t > j.Phases {
		return 0, 0, fmt.Errorf("%s: round %d outside 1…%d", FedDPGDGrad, t, j.Phases)
	}
	sens, sig := make([]float64, t), make([]float64, t)
	for i := range sens {
		sens[i], sig[i] = res.Sensitivity, res.Sigma
	}
	c, err := dp.CertifyGaussian(dp.GaussianPlan{Sensitivities: sens, Dim: p}, sig, j.Epsilon, j.Delta)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: certifying round %d: %w", FedDPGDGrad, t, err)
	}
	if t == j.Phases {
		c.Epsilon, c.Delta = max(c.Epsilon, res.CertifiedEpsilon), max(c.Delta, res.CertifiedDelta)
	}
	return certifiedCharge(j, c.Epsilon, c.Delta)
}

func (fedDPGDGrad) NewCombiner(job *protocol.JobAnnounce, _ []float64) (Combiner, error) {
	return dpGDGradCombiner{eta: job.Eta, radius: job.ParamRadius}, nil
}

type dpGDGradCombiner struct{ eta, radius float64 }

// Combine: the updates are noisy gradients at model; their combination ḡ
// (the mean normalized per site, so that a single site's gradient is used
// exactly) steps the model, Π_C(w − ηḡ) ([K22] Alg 1).
func (c dpGDGradCombiner) Combine(model []float64, ups []*protocol.SiteUpdate, rule protocol.Aggregation) []float64 {
	grads, weights := split(ups)
	g := Aggregate(rule, grads, weights, true)
	dpalgo.FedGradStep(model, g, c.eta, c.radius)
	return model
}

// Final is the last iterate, projected ([K22] Alg 1's output).
func (c dpGDGradCombiner) Final(model []float64) []float64 {
	out := slices.Clone(model)
	dpalgo.FedGradFinish(out, c.radius)
	return out
}

func (dpGDGradCombiner) State() []float64 { return nil }

// Account composes a site's Gaussian releases (one per σ, each of ℓ2
// sensitivity sens = 4G/n) at the site's δ with dp.Compose and returns the
// exact Gaussian-DP ε (0 if it does not apply) and notes stating both
// guarantees.
func (fedDPGDGrad) Account(sigmas []float64, sens, epsilon, delta float64) (float64, []string) {
	notes := []string{fmt.Sprintf("[K22] Thm 1 (moments accountant): %d adaptive full-gradient Gaussian releases of sensitivity 4G/n = %.6g with σ = 8G√(T log(1/δ))/(nε) are (ε, δ) = (%g, %.3g)-DP", len(sigmas), sens, epsilon, delta)}
	return gaussianAccount(sigmas, sens, delta, "round", notes)
}

func (fedDPGDGrad) PrivacyNote(*Spec) string {
	return "per-site record-level (ε, δ)-DP: round t releases site s's full pairwise gradient on all its records at the broadcast model plus N(0, σ_s² I), σ_s = 8G√(T log(1/δ))/(n_s ε); the T adaptive releases of sensitivity 4G/n_s compose sequentially ([K22] Thm 1, moments accountant); composed_epsilon is what exact Gaussian-DP composition (dp.Compose) proves for the same releases at δ; the coordinator's steps Π_C(w − ηḡ) are post-processing"
}
