package dpalgo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// dp-pair-sgd: DP-SGD for pairwise losses (the Opacus recipe adapted to
// pairs) for large n.
//
// # Mechanism
//
// Each step t = 1..T:
//
//  1. Poisson sampling: every record enters the batch b independently with
//     probability exactly q (exact Bernoulli(q) coins, dp.PoissonSubsample;
//     secret randomness: private runs draw it from a crypto-seeded
//     generator).
//  2. The batch is put in uniformly random order b_1, …, b_m, and each
//     sampled record is paired with the previous sampled record — the
//     previous-instance pairing, O(1) per record: pairs (b_s, b_{s−1}),
//     s = 2..m.
//  3. Each pair gradient is clipped: clip(v) = v·min(1, C/‖v‖).
//  4. The release is the sum of the clipped pair gradients plus
//     N(0, σ²I_p), σ = z·Δ'.
//  5. w ← Π_W(w − η(release/m̄ + λw)), m̄ = max(1, qn − 1) the expected
//     number of pairs (public). Output: the average of the iterates.
//
// # Sensitivity: a record in two pairs
//
// Add/remove one record z: couple the two runs on every other record's
// sampling coin and on the relative order of the others (a uniform order
// of b ∪ {z} is a uniform order of b with z inserted at a uniform
// position). If z is not sampled, the sums are equal. If it is, at an
// interior position between b_{s−1} and b_s, the pairs (z, b_{s−1}) and
// (b_s, z) appear and the pair (b_s, b_{s−1}) disappears; at either end
// only one pair appears. Each clipped pair has norm ≤ C, so the sum moves
// by ≤ 3C. For AUC losses, whose same-label pairs have zero gradient, it
// is ≤ 2C: if the neighbours b_{s−1}, b_s have different labels, z differs
// from exactly one of them (one new pair is active, and the removed pair
// was), and if they have the same label the removed pair was inactive.
// So the add/remove sensitivity of a step is Δ = 2C (AUC) or 3C (metric),
// plus the snapping allowance of the secure mechanism, Δ' = Δ + g√p
// (TestPairSGDBatchSensitivity checks both bounds and that they are
// attained). Conditioned on
// the others' coins and order the two output laws are (1−q)·N(s, σ²) +
// q·E_pos N(s + u_pos, σ²) and N(s, σ²) with ‖u_pos‖ ≤ Δ, a mixture the
// sampled-Gaussian analysis covers (Mironov, Talwar & Zhang 2019, by joint
// convexity over the common mixing), and the whole step is their mixture
// over the others' coins and order.
//
// Replace-one (the relation every pairfed guarantee is stated in): D and
// D' are two add/remove steps apart through D ∖ {z}; the run's constants
// (q, T, m̄, η) are fixed from the public n of the replace-one pair. The
// accountant (dp.SubsampledGaussianEpsilon with dp.ReplaceOne) combines
// the two add/remove curves by Mironov's weak triangle inequality; z is
// the smallest noise multiplier for which the T steps are (ε, δ)-DP
// (dp.SubsampledGaussianMultiplier).
//
// # Hyperparameters, a written rule (from n, p, ε, δ, R, B only)
//
//   - expected batch m = ⌈4√n⌉ (capped at n/2): q = m/n;
//   - E = 10 epochs: T = ⌈E/q⌉;
//   - clip C = R (AUC) or R² (metric): the size of one pair's difference
//     term at typical norms, below the worst-case G;
//   - η = 2B/(G̃√T), G̃² = C² + p(σ/m̄)² (projected SGD with averaging,
//     Bubeck 2015 Thm 6.1, with the noise in the second moment).
//
//   - B (when not given) by PrivateParamRadius, the rule of dp-gd.
//
// --steps, --eta override T and η; privacy does not depend on η.

var pairSGDAlg = &pairwise.Algorithm{
	Name:    "dp-pair-sgd",
	Title:   "DP-SGD for pairs: Poisson-subsampled batches, previous-instance pairs, clipped pair gradients, Gaussian noise, subsampled-RDP accountant",
	Paper:   "pairfed (DP-SGD of Abadi et al. 2016 adapted to pairs; accountant of Mironov, Talwar & Zhang 2019)",
	Ref:     "private_pairsgd.go",
	Setting: "offline",
	Tasks:   bothTasks,
	Assumptions: "convex pairwise loss over a bounded parameter set (utility); privacy needs only the clipping " +
		"(any loss, no Lipschitz constant)",
	Private:  true,
	Requires: pairwise.Requirements{BoundedDomain: true},
	PrivacyModel: "record-level (ε, δ)-DP, replace-one neighbours, certified through two add/remove steps. Each of T steps adds " +
		"N(0, σ²I_p) to the sum of clipped (‖·‖ ≤ C) gradients of the previous-instance pairs of a Poisson(q) batch; adding a record " +
		"changes that sum by ≤ 2C (AUC: same-label pairs have no gradient) or 3C (metric); RDP of the sampled Gaussian (Mironov, Talwar & Zhang 2019) composed over T steps, replace-one " +
		"by the weak triangle inequality (Mironov 2017 Prop 11), converted by Canonne, Kamath & Steinke 2020 Prop 12.",
}

func init() {
	pairSGDAlg.Run = runPairSGDPrivate
	pairSGDAlg.ParamRadius = PrivateParamRadius
	pairwise.Register(pairSGDAlg)
}

// PairSGDDefaults returns the default q, T and C of dp-pair-sgd for n
// records and feature radius R (see the file comment).
func PairSGDDefaults(n int, task pairwise.Task, R float64) (q float64, T int, C float64) {
	m := math.Min(math.Ceil(4*math.Sqrt(float64(n))), float64(n)/2)
	if m < 1 {
		m = 1
	}
	q = m / float64(n)
	T = int(math.Ceil(10 / q))
	C = R
	if task == pairwise.TaskMetric {
		C = R * R
	}
	return q, T, C
}

func runPairSGDPrivate(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	_, rep, err := pairwise.PrivateSetup(pairSGDAlg, obj, &cfg)
	if err != nil {
		return nil, err
	}
	name := pairSGDAlg.Name
	n, p := obj.Data().N, obj.NumParams()
	switch {
	case n < 2:
		return nil, fmt.Errorf("%s needs at least 2 records", name)
	case rng == nil:
		return nil, fmt.Errorf("%s needs a random source for its sampling", name)
	case cfg.Eta < 0 || math.IsNaN(cfg.Eta) || math.IsInf(cfg.Eta, 0):
		return nil, fmt.Errorf("%s: step size η = %v must be finite and ≥ 0 (0: the default rule)", name, cfg.Eta)
	case cfg.Steps < 0 || cfg.Passes < 0 || math.IsNaN(cfg.Passes):
		return nil, fmt.Errorf("%s: steps %d and passes %v must be ≥ 0", name, cfg.Steps, cfg.Passes)
	case cfg.Averaging != "" && cfg.Averaging != pairwise.AvgPaper && cfg.Averaging != pairwise.AvgUniform && cfg.Averaging != pairwise.AvgLast:
		return nil, fmt.Errorf("%s outputs the average of its iterates (or the last with averaging %q); %q does not apply", name, pairwise.AvgLast, cfg.Averaging)
	case cfg.Init != nil && len(cfg.Init) != p:
		return nil, fmt.Errorf("%s: initial model has %d parameters, want %d", name, len(cfg.Init), p)
	case len(cfg.Checkpoints) > 0 && cfg.OnCheckpoint == nil:
		return nil, fmt.Errorf("%s: checkpoints %v given without OnCheckpoint", name, cfg.Checkpoints)
	}
	pr := cfg.Privacy
	R, B := pr.FeatureRadius, obj.Constraint().Radius()
	q, T, C := PairSGDDefaults(n, obj.Task(), R)
	var notes []string
	switch {
	case cfg.Steps > 0:
		T = cfg.Steps
		notes = append(notes, fmt.Sprintf("T = %d given", T))
	case cfg.Passes > 0:
		T = int(math.Ceil(cfg.Passes / q))
		notes = append(notes, fmt.Sprintf("T = ⌈passes/q⌉ = %d (%g passes given)", T, cfg.Passes))
	default:
		notes = append(notes, fmt.Sprintf("T = ⌈10/q⌉ = %d (10 epochs)", T))
	}
	notes = append(notes, fmt.Sprintf("q = min(⌈4√n⌉, n/2)/n = %.4g (expected batch %.1f); clip C = %g", q, q*float64(n), C))
	const rel = dp.ReplaceOne
	// σ = z·Δ', Δ' = Δ + g√p with g the grid of σ (bounded by the grid of 2zΔ).
	// The secure sampler draws p coordinates per step: N = T·p in the
	// discrete-noise δ term (dp.SecureSubsampledGaussianMultiplier).
	coords := int64(T) * int64(p)
	z, err := pairSGDMultiplier(q, T, pr.Epsilon, pr.Delta, rel, coords)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	sens := 2 * C // AUC: ≤ 2 active pairs change (file comment)
	if obj.Task() == pairwise.TaskMetric {
		sens = 3 * C
	}
	if z*sens > dp.MaxScale/4 {
		return nil, fmt.Errorf("%s: noise multiplier %g is too large for the mechanism", name, z)
	}
	sensSnap := dp.SnappedL2Sensitivity(sens, dp.GaussianGranularity(2*z*sens), p)
	sigma := z * sensSnap
	mbar := math.Max(1, q*float64(n)-1)
	eta := cfg.Eta
	if eta == 0 {
		gt := math.Sqrt(C*C + float64(p)*(sigma/mbar)*(sigma/mbar))
		eta = 2 * B / (gt * math.Sqrt(float64(T)))
		notes = append(notes, fmt.Sprintf("η = 2B/(√(C² + p(σ/m̄)²)·√T) = %.4g (m̄ = %.1f expected pairs)", eta, mbar))
	} else {
		notes = append(notes, fmt.Sprintf("η = %g given", eta))
	}
	w := cfg.InitialModel(p)
	obj.Project(w)
	iters := newNoisyIterates(obj, &cfg)
	g, tmp := make([]float64, p), make([]float64, p)
	var batch []int
	var pairs int64
	for t := 1; t <= T; t++ {
		if t%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		batch = poissonSample(batch[:0], n, q, rng)
		rng.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
		pairs += int64(pairSGDBatchSum(obj, w, g, tmp, batch, C))
		pr.Noise.AddGaussian(g, sigma) // the release
		pairwise.Scale(1/mbar, g)
		if l := obj.Lambda(); l != 0 {
			pairwise.Axpy(l, w, g)
		}
		pairwise.Axpy(-eta, g, w)
		obj.Project(w)
		iters.add(t, w)
	}
	out := iters.output(T, w)

	eps, order, err := dp.SecureSubsampledGaussianEpsilon(q, z, T, pr.Delta, rel, coords)
	if err != nil {
		return nil, err
	}
	// The certificate, discrete-noise term included (certifyReport would
	// compute the same).
	rep.SetCertificate(eps, pr.Delta)
	if eps > pr.Epsilon {
		rep.CertifiedDelta = 1 // not certified at the request
	}
	rep.Mechanism = "subsampled-gaussian"
	rep.SampleRate = q
	rep.Neighbouring = string(rel)
	rep.Sigmas = []float64{sigma}
	rep.Sensitivity = []float64{sensSnap}
	rep.Releases = T
	rep.G = C
	rep.Formula = fmt.Sprintf("σ = z·Δ', Δ' = Δ + g√p, Δ = %gC (adding a record changes ≤ %g active clipped pairs), z = %.6g the smallest multiplier with ε ≤ %g at δ = %g", sens/C, sens/C, z, pr.Epsilon, pr.Delta)
	rep.Accountant = fmt.Sprintf("RDP of the Poisson-subsampled Gaussian (Mironov, Talwar & Zhang 2019), %d steps at q = %.4g, replace-one by the weak triangle inequality (Mironov 2017 Prop 11), CKS conversion, the secure sampler's discrete-noise δ term over %d coordinates included (dp.SecureSubsampledGaussianEpsilon): ε = %.6g at α = %d", T, q, coords, eps, order)
	rep.Notes = append(notes,
		"G in this report is the clip norm C (pair gradients are clipped; no Lipschitz constant is used)",
		"output: the average of the projected iterates (or the last with --averaging last)")
	return &pairwise.Result{W: out, Steps: T, PairGrads: pairs, Privacy: rep}, nil
}
