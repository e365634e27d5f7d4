package dpalgo

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// The private algorithms of Yang et al.:
//
//	dp-local-sgd   [Y21a] Alg 3 (Thm 10): localized phases of [Y21a] Alg 1
//	               (sgd-prev) on disjoint subsets, Gaussian output noise per
//	               phase, parallel composition.
//	dp-sgd-output  [Y21b] Alg 2 (Thm 4, eq. (5)): SGD pairing the current draw
//	               with every previous draw, one Gaussian output perturbation.
//
// Both are record-level (ε, δ)-DP for neighbouring datasets that differ in
// one record (replacement: [Y21a] Definition 2, [Y21b] Definition 1), δ > 0
// only: neither paper has a Laplace (pure ε-DP) variant. G and L come from
// the loss's Props at the feature radius R (PrivateSetup); noise only
// through cfg.Privacy.Noise.
//
// Both papers calibrate with the classical Gaussian mechanism
// σ ≥ √(2 ln(1.25/δ'))·Δ/ε at δ' = δ/2 ([Y21b] Lemma 2), which Dwork & Roth
// (2014, Thm A.1) prove for ε < 1 only; runs with ε ≥ 1 say so in their
// report notes.
//
// Both proofs bound the sensitivity only on a high-probability event over
// the sampled indices (how often the differing record is drawn), so they
// treat the index sequence as secret internal randomness: the rng passed to
// Run must be unpredictable to the adversary. With a known seed the indices
// are fixed and public, and a record drawn unusually often is not covered.
// (The partition of dp-local-sgd is not sensitive: parallel composition
// holds for any data-independent partition.)

var (
	localSGDAlg = &pairwise.Algorithm{
		Name:    "dp-local-sgd",
		Title:   "differentially private localized SGD: sgd-prev phases on disjoint halving subsets, Gaussian output noise per phase",
		Paper:   "[Y21a] Yang, Lei, Wang, Yang, Ying. Simple Stochastic and Online Gradient Descent Algorithms for Pairwise Learning. NeurIPS 2021",
		Ref:     "Alg 3, Thm 10",
		Setting: "offline",
		Tasks:   bothTasks,
		Assumptions: "Thm 10: (A1) G-Lipschitz, (A2) L-smooth, (A3) with α = 0 (convex); W bounded with diameter D; " +
			"η ≤ 2/L (default η of Thm 10)",
		Private:  true,
		Requires: pairwise.Requirements{Convex: true, Lipschitz: true, Smooth: true, BoundedDomain: true},
		PrivacyModel: "record-level (ε, δ)-DP, replace-one neighbours. Phase k runs [Y21a] Alg 1 on its own disjoint subset S_k " +
			"and releases w_k = w̄_k + N(0, σ_k² I) with σ_k = 12·G·η_k·log(4/δ)·√(2·log(2.5/δ))/ε (Alg 3 line 6): each phase is " +
			"(ε, δ)-DP with respect to its own records, so by parallel composition the whole run is (ε, δ)-DP ([Y21a] Thm 10). " +
			"The sampled indices must be secret randomness (the sensitivity bound holds on a high-probability event over them).",
	}
	sgdOutputAlg = &pairwise.Algorithm{
		Name:        "dp-sgd-output",
		PairCost:    pairwise.PairsAllPrevious,
		Title:       "private SGD with output perturbation: the current draw paired with all previous draws, Gaussian noise on the average",
		Paper:       "[Y21b] Yang, Lei, Lyu, Ying. Stability and Differential Privacy of SGD for Pairwise Learning with Non-Smooth Loss. AISTATS 2021",
		Ref:         "Alg 2, Thm 4, eq. (5)",
		Setting:     "offline",
		Tasks:       bothTasks,
		Assumptions: "nonnegative, convex, G-Lipschitz (non-smooth allowed); T ≥ n (proof of Thm 4, eq. (9)); bounded W for the utility bound (Thm 5)",
		Private:     true,
		Requires:    pairwise.Requirements{Convex: true, Lipschitz: true},
		PrivacyModel: "record-level (ε, δ)-DP, replace-one neighbours. One Gaussian release w_priv = Π_W(w̄_T + u), u ~ N(0, σ² I), " +
			"σ² = 8η²G²ln(2.5/δ)/ε²·(T + 3T²ln²(eT)ln²(2/δ)/n²) ([Y21b] eq. (5), Thm 4): the sampling sequence lies, with " +
			"probability ≥ 1 − δ/2, in an event where the output's sensitivity obeys eq. (9) with γ = δ/2, and the Gaussian " +
			"mechanism is (ε, δ/2)-DP there. The sampled indices must be secret randomness.",
	}
)

func init() {
	localSGDAlg.Run = runDPLocalSGD
	sgdOutputAlg.Run = runDPSGDOutput
	localSGDAlg.PaperCalibration, sgdOutputAlg.PaperCalibration = true, true
	pairwise.Register(localSGDAlg)
	pairwise.Register(sgdOutputAlg)
}

// LocalSGDPaperSigma is σ_k of [Y21a] Alg 3 line 6:
//
//	σ_k = 12·G·η_k·log(4/δ)·√(2·log(2.5/δ))/ε
//
// (natural logarithms), the noise of phase k with step size η_k.
func LocalSGDPaperSigma(G, etaK, eps, delta float64) float64 {
	return 12 * G * etaK * math.Log(4/delta) * math.Sqrt(2*math.Log(2.5/delta)) / eps
}

// LocalSGDAuthorsCodeSigma is σ_k = 4·η_k·(ln(4/δ))^{3/2}/ε, the constant of the
// authors' code (simple-pairwise alg/auc_dp_fifo_logistic.py,
// sigma_calibrator): it replaces 12·G·√(2·ln(2.5/δ)) of LocalSGDPaperSigma by
// 4·√(ln(4/δ)), e.g. 2.39 instead of 39.37 at η_1 = 0.025, δ = 1e-3, G = 4.
// It is NOT used by dp-local-sgd: it exists for the audit comparison only.
func LocalSGDAuthorsCodeSigma(etaK, eps, delta float64) float64 {
	return 4 * etaK * math.Pow(math.Log(4/delta), 1.5) / eps
}

// LocalSGDBaseEta is the base step size of [Y21a] Thm 10:
//
//	η = (D/G)·min{ log(4/δ)/√n,  ε/(12·log(4/δ)·√(2·d·log(2.5/δ))) },
//
// with D the diameter of W and d the number of parameters (the dimension
// of the Gaussian noise: d² entries for a metric model).
func LocalSGDBaseEta(n, d int, D, G, eps, delta float64) float64 {
	l4 := math.Log(4 / delta)
	a := l4 / math.Sqrt(float64(n))
	b := eps / (12 * l4 * math.Sqrt(2*float64(d)*math.Log(2.5/delta)))
	return D / G * math.Min(a, b)
}

// OutputPerturbationPrintedSigma is σ of [Y21b] eq. (5), exactly as printed:
//
//	σ² = 8·η²·G²·ln(2.5/δ)/ε² · (T + 3·T²·ln²(e·T)·ln²(2/δ)/n²).
func OutputPerturbationPrintedSigma(T, n int, eta, G, eps, delta float64) float64 {
	return math.Sqrt(8 * eta * eta * G * G * math.Log(2.5/delta) / (eps * eps) * outputPerturbationStabilityTerm(T, n, delta))
}

// OutputPerturbationProofSigma is σ = √(2 ln(2.5/δ))·Δ_T/ε with Δ_T the sensitivity
// bound of [Y21b] eq. (9) at γ = δ/2, i.e. the value the proof of Thm 4
// derives: σ² = 8e·η²G²ln(2.5/δ)/ε²·(…), larger than the printed eq. (5) by
// the factor e (√e ≈ 1.65 in σ). dp-sgd-output uses this value (an unearned smaller σ would be a
// false privacy claim) and reports the printed one in its notes.
func OutputPerturbationProofSigma(T, n int, eta, G, eps, delta float64) float64 {
	return math.Sqrt(2*math.Log(2.5/delta)) * outputPerturbationSensitivity(T, n, eta, G, delta) / eps
}

// outputPerturbationStabilityTerm is T + 3T²ln²(eT)ln²(2/δ)/n², the bracket of eq. (5)
// and (9) with γ = δ/2.
func outputPerturbationStabilityTerm(T, n int, delta float64) float64 {
	t, m := float64(T), float64(n)
	le := 1 + math.Log(t) // ln(eT)
	l2 := math.Log(2 / delta)
	return t + 3*t*t*le*le*l2*l2/(m*m)
}

// outputPerturbationSensitivity is Δ_T of [Y21b] eq. (9) with γ = δ/2:
// Δ_T² = 4e·η²G²·(T + 3T²ln²(eT)ln²(2/δ)/n²).
func outputPerturbationSensitivity(T, n int, eta, G, delta float64) float64 {
	return math.Sqrt(4 * math.E * eta * eta * G * G * outputPerturbationStabilityTerm(T, n, delta))
}

// exactSetDiameter is D = sup_{w,w' ∈ W} ‖w − w'‖ of the parameter set (the D
// of [Y21a] Thm 10's default η): 2r for
// the ℓ2 ball; √2·r for the PSD sets of radius r (‖X − Y‖_F² = ‖X‖² + ‖Y‖²
// − 2⟨X, Y⟩ ≤ 2r² because ⟨X, Y⟩ ≥ 0 for PSD X, Y, attained by
// r·e₁e₁ᵀ and r·e₂e₂ᵀ; r when d = 1); 2·Radius (an upper bound) otherwise.
func exactSetDiameter(obj pairwise.Objective) float64 {
	c := obj.Constraint()
	r := c.Radius()
	switch c.Name() {
	case "frobenius-psd", "nuclear-psd":
		if obj.Data().D < 2 {
			return r
		}
		return math.Sqrt2 * r
	}
	return 2 * r
}

// checkFinalOutputConfig validates the run parameters shared by both
// algorithms of this file ([Y21a] Alg 3, [Y21b] Alg 2): a constant step, the
// paper's output, no intermediate checkpoints.
func checkFinalOutputConfig(name string, obj pairwise.Objective, cfg *pairwise.RunConfig) error {
	if obj.Data().N < 2 {
		return fmt.Errorf("%s needs at least 2 records", name)
	}
	if cfg.Eta < 0 || math.IsNaN(cfg.Eta) || math.IsInf(cfg.Eta, 0) {
		return fmt.Errorf("%s: step size η = %v must be finite and ≥ 0 (0 means the paper's default)", name, cfg.Eta)
	}
	if cfg.Steps < 0 || cfg.Passes < 0 || math.IsNaN(cfg.Passes) || math.IsInf(cfg.Passes, 0) {
		return fmt.Errorf("%s: steps (%d) and passes (%v) must be finite and ≥ 0", name, cfg.Steps, cfg.Passes)
	}
	if cfg.Schedule != "" && cfg.Schedule != pairwise.Constant {
		return fmt.Errorf("%s uses a constant step size (its σ is derived for it); schedule %q does not apply", name, cfg.Schedule)
	}
	if cfg.Averaging != "" && cfg.Averaging != pairwise.AvgPaper {
		return fmt.Errorf("%s releases the output its paper defines; averaging %q does not apply", name, cfg.Averaging)
	}
	if len(cfg.Checkpoints) > 0 {
		return fmt.Errorf("%s: only the final output is private; intermediate checkpoints would release non-private iterates", name)
	}
	if cfg.Init != nil && len(cfg.Init) != obj.NumParams() {
		return fmt.Errorf("%s: initial model has %d parameters, want %d", name, len(cfg.Init), obj.NumParams())
	}
	return nil
}

// secretSamplingNote is the caveat on the sampling randomness.
const secretSamplingNote = "the privacy proof bounds the sensitivity on a high-probability event over the sampled indices: the rng given to Run must be secret (unpredictable to the adversary); a known seed voids that event"

// classicalGaussianNote ([Y21a], [Y21b]) is the caveat of the classical Gaussian mechanism the
// printed σ's rely on (relevant under --calibration paper only; the exact
// certificate decides either way).
func classicalGaussianNote(priv *pairwise.Privacy) []string {
	eps := priv.Epsilon
	if eps < 1 || priv.Calibration.OrDefault() != pairwise.CalibrationPaper {
		return nil
	}
	return []string{fmt.Sprintf("ε = %g ≥ 1: the classical Gaussian mechanism σ ≥ √(2 ln(1.25/δ'))Δ/ε the paper relies on is proved for ε < 1 only (Dwork & Roth 2014, Thm A.1)", eps)}
}

// halvingPhaseSizes returns n_1..n_K of [Y21a] Alg 3 line 2 for n ≥ 2:
// K = ⌈log₂ n⌉ and n_k = ⌊2^{−k}·n⌋, except that n_K = 1 when n is not a
// power of two (then ⌊n/2^K⌋ = 0). The sum is at most n − 1.
func halvingPhaseSizes(n int) []int {
	K := bits.Len(uint(n - 1)) // ⌈log₂ n⌉
	sizes := make([]int, K)
	for k := 1; k <= K; k++ {
		nk := n >> k
		if nk == 0 {
			nk = 1 // only k = K, when n is not a power of two
		}
		sizes[k-1] = nk
	}
	return sizes
}

// subsetPrevSampler is [Y21a] Alg 1's pairing restricted to the subset Idx:
// i_0 and every i_t are drawn uniformly from Idx, and step t pairs z_{i_t}
// with z_{i_{t−1}}.
type subsetPrevSampler struct {
	Idx  []int
	prev int
	init bool
}

func (p *subsetPrevSampler) Next(rng *rand.Rand) (int, int, bool) {
	if !p.init {
		p.prev = p.Idx[rng.IntN(len(p.Idx))]
		p.init = true
	}
	i := p.Idx[rng.IntN(len(p.Idx))]
	j := p.prev
	p.prev = i
	return i, j, true
}

// runDPLocalSGD is [Y21a] Alg 3 (Differentially Private Localized SGD):
//
//	K = ⌈log₂ n⌉; split S into disjoint S_1..S_K, |S_k| = n_k = 2^{−k}·n
//	for k = 1..K:
//	    η_k = 4^{−k}·η
//	    w̄_k = Alg 1 on S_k from w_{k−1}, for ⌈n_k·log(4/δ)⌉ steps (η_t = η_k)
//	    w_k = w̄_k + u_k,  u_k ~ N(0, σ_k² I),
//	    σ_k = 12·G·η_k·log(4/δ)·√(2·log(2.5/δ))/ε          (Alg 3 line 6)
//	output w_K
//
// Readings we had to choose, all privacy-neutral:
//
//   - Sizes: n_k = ⌊n/2^k⌋ (exact when n is a power of two). When n is not,
//     ⌊n/2^K⌋ = 0 and phase K gets one record instead. The subsets are a
//     uniformly random partition (rng, independent of the data). Since
//     Σ_{k≤K} ⌊n/2^k⌋ = n − s₂(n) (s₂ = number of binary ones), the
//     s₂(n) − [n not a power of 2] ≥ 1 records left over (1 for n = 1024,
//     5 for n = 1000) are not used at all.
//   - Phase k starts at Π_W(w_{k−1}) (w_0 = cfg.Init or 0, projected): Alg 1
//     requires its initial point in W, and projecting a released value is
//     post-processing.
//   - The output is Π_W(w_K) (symmetrized for metric models): the paper
//     outputs w_K, which the noise takes out of W; projecting is
//     post-processing, so the guarantee is unchanged.
//   - η defaults to Thm 10's value (LocalSGDBaseEta with D = diameter of W and d =
//     the number of parameters); cfg.Eta overrides the base η. Either way
//     η ≤ 2/L is checked (Thm 10's condition; it also gives every phase
//     η_k ≤ 2/L, which the stability result behind σ_k, Thm 5, needs).
//   - T_k = ⌈n_k·log(4/δ)⌉ is fixed by Alg 3 and enters σ_k through the
//     proof, so cfg.Steps/Passes are refused.
//
// The privacy proof (Appendix D) is not in our copy of the paper: the
// reported sensitivity Δ_k = σ_k·ε/√(2 log(2.5/δ)) = 12·G·η_k·log(4/δ) is
// the high-probability ℓ2-sensitivity σ_k corresponds to under the Gaussian
// mechanism at (ε, δ/2).
func runDPLocalSGD(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	props, rep, err := pairwise.PrivateSetup(localSGDAlg, obj, &cfg)
	if err != nil {
		return nil, err
	}
	name := localSGDAlg.Name
	if err := checkFinalOutputConfig(name, obj, &cfg); err != nil {
		return nil, err
	}
	if cfg.Steps != 0 || cfg.Passes != 0 {
		return nil, fmt.Errorf("%s: the phase lengths ⌈n_k·log(4/δ)⌉ are fixed by [Y21a] Alg 3 and enter σ_k; --steps/--passes do not apply", name)
	}
	eps, delta := cfg.Privacy.Epsilon, cfg.Privacy.Delta
	n, p := obj.Data().N, obj.NumParams()
	G, L := props.Lipschitz, props.Smooth
	D := exactSetDiameter(obj)

	eta := cfg.Eta
	var notes []string
	if eta == 0 {
		eta = LocalSGDBaseEta(n, p, D, G, eps, delta)
		notes = append(notes, fmt.Sprintf("η = %.6g from [Y21a] Thm 10: (D/G)·min{log(4/δ)/√n, ε/(12·log(4/δ)·√(2d·log(2.5/δ)))} with D = %g, G = %g, n = %d, d = %d", eta, D, G, n, p))
	} else {
		notes = append(notes, fmt.Sprintf("η = %g given (overrides the Thm 10 default %.6g)", eta, LocalSGDBaseEta(n, p, D, G, eps, delta)))
	}
	if !(eta > 0) || math.IsInf(eta, 0) {
		return nil, fmt.Errorf("%s: step size η = %v is not finite and > 0", name, eta)
	}
	if eta > 2/L {
		return nil, fmt.Errorf("%s needs η ≤ 2/L ([Y21a] Thm 10; the stability bound behind σ_k needs it), but η = %g > 2/L = %g for L = %g: give a smaller --eta", name, eta, 2/L, L)
	}
	notes = append(notes, fmt.Sprintf("Thm 10 condition η ≤ 2/L holds: %g ≤ %g", eta, 2/L))

	sizes := halvingPhaseSizes(n)
	K := len(sizes)
	used := 0
	for _, nk := range sizes {
		used += nk
	}
	perm := rng.Perm(n)
	l4 := math.Log(4 / delta)
	notes = append(notes, fmt.Sprintf("K = %d phases on disjoint random subsets of sizes %v (n_k = ⌊n/2^k⌋, at least 1); %d of %d records unused", K, sizes, n-used, n))

	// The K releases' noise, fixed before any data-dependent computation.
	phases := make([]int, K)
	for k := range phases {
		phases[k] = k + 1
	}
	sigmas, err := calibrateLocalSGDPhases(obj, cfg.Privacy, rep, G, eta, phases, sizes)
	if err != nil {
		return nil, err
	}

	w := cfg.InitialModel(p)
	obj.Project(w) // Alg 1: w_0 ∈ W
	var steps int
	var grads int64
	off := 0
	for k := 1; k <= K; k++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		nk := sizes[k-1]
		idx := perm[off : off+nk]
		off += nk
		etaK := math.Ldexp(eta, -2*k) // 4^{−k}·η
		Tk := int(math.Ceil(float64(nk) * l4))
		phase := pairwise.RunConfig{Eta: etaK, Schedule: pairwise.Constant, Averaging: pairwise.AvgPaper, Init: w}
		res, err := pairwise.RunPairSGD(ctx, obj, phase, rng, &subsetPrevSampler{Idx: idx}, Tk, pairwise.Constant)
		if err != nil {
			return nil, err
		}
		steps += res.Steps
		grads += res.PairGrads
		w = res.W                                     // w̄_k, a fresh slice
		cfg.Privacy.Noise.AddGaussian(w, sigmas[k-1]) // w_k = w̄_k + u_k (Alg 3 line 6)
		// The next phase starts from the released w_k, projected onto W.
		postProcessReleased(obj, w)
	}
	rep.Releases = K
	notes = append(notes,
		fmt.Sprintf("phase k runs ⌈n_k·log(4/δ)⌉ steps of [Y21a] Alg 1 (sgd-prev) with constant η_k and its weighted-average output; %d steps in all", steps),
		"paper_sensitivity[k] = 12·G·η_k·log(4/δ) = σ_k·ε/√(2·log(2.5/δ)): the ℓ2-sensitivity the printed σ_k covers under the Gaussian mechanism at (ε, δ/2) (the proof, [Y21a] Appendix D, is not in our copy of the paper)",
		"each phase starts from Π_W(w_{k−1}) and the output is Π_W(w_K): projections of released values (post-processing)",
		fmt.Sprintf("the authors' code uses σ_k = 4·η_k·(ln(4/δ))^{3/2}/ε (σ_1 would be %.6g instead of %.6g); not used", LocalSGDAuthorsCodeSigma(math.Ldexp(eta, -2), eps, delta), LocalSGDPaperSigma(G, math.Ldexp(eta, -2), eps, delta)),
	)
	notes = append(notes, secretSamplingNote)
	rep.Notes = append(append(notes, classicalGaussianNote(cfg.Privacy)...), rep.Notes...)
	return &pairwise.Result{W: w, Steps: steps, PairGrads: grads, Privacy: rep}, nil
}

// runDPSGDOutput is [Y21b] Alg 2 (Private SGD for Pairwise Learning with
// Output Perturbation): w_1 = 0 (or cfg.Init, projected), i_1 uniform; for
// t = 1..T draw i_{t+1} uniformly from [n] and set
//
//	w_{t+1} = Π_W(w_t − (η/t) Σ_{k=1}^t ∂ℓ(w_t, z_{i_{t+1}}, z_{i_k})),
//
// then w̄_T = (1/T) Σ_{t=1}^T w_t and w_priv = Π_W(w̄_T + u),
// u ~ N(0, σ² I) with σ² of eq. (5) as its proof derives it (see the
// erratum below):
//
//	σ² = 8e·η²·G²·ln(2.5/δ)/ε² · (T + 3·T²·ln²(e·T)·ln²(2/δ)/n²).
//
// The update pairs the current draw with every previous draw, as Alg 2
// prints it and as the proof of Thm 1 (eq. (7): δ_{t+1,k} uses
// z_{i_{t+1}}, z_{i_k}) analyses; the paper's Alg 1 (and sgd-all-prev,
// which follows it) prints consecutive pairs (z_{i_{k+1}}, z_{i_k}) instead.
// The sum is computed over the distinct indices drawn so far, weighted by
// their multiplicity: the same sum in O(min(t, n)) gradients per step.
//
// γ of the high-probability stability bound is fixed to δ/2 by the proof of
// Thm 4, so eq. (5) has no free parameter besides T and η. Defaults follow
// Thm 5 ("choosing T = n² and η = O(n^{−3/2})", Corollaries 2 and 4), with
// the O-constant taken as 1: T = n², η = n^{−3/2}. T = n² costs Σ_t min(t, n)
// ≈ n³ pair gradients — about 10⁹ for n = 1000 — so set --steps for large
// n; cfg.Steps (or cfg.Passes·n) and cfg.Eta override. The proof of eq. (9)
// uses T ≥ n, so smaller T is refused. The regularizer, when λ > 0, is part
// of ℓ (its G includes λB, from Props).
//
// Erratum: the proof of Thm 4 sets σ = √(2 ln(2.5/δ))·Δ_T/ε with
// Δ_T² ≤ 4e·η²G²(…) (eq. (9), γ = δ/2), which gives 8e, not 8, in eq. (5);
// the printed σ is smaller than the proof's by √e ≈ 1.65. pairfed uses the
// proof's σ (OutputPerturbationProofSigma): the printed one is not shown private by the
// paper. The report's notes carry both. The bound (9) also
// needs (a + b + √(ab))² ≤ 3a²b² for a = T/n, b = ln(2/δ), which holds for
// T ≥ n only when b is not small (at T = n: δ ≤ 0.03).
func runDPSGDOutput(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	props, rep, err := pairwise.PrivateSetup(sgdOutputAlg, obj, &cfg)
	if err != nil {
		return nil, err
	}
	name := sgdOutputAlg.Name
	if err := checkFinalOutputConfig(name, obj, &cfg); err != nil {
		return nil, err
	}
	eps, delta := cfg.Privacy.Epsilon, cfg.Privacy.Delta
	n, p := obj.Data().N, obj.NumParams()
	G := props.Lipschitz

	var notes []string
	T := cfg.Steps
	switch {
	case T > 0:
		notes = append(notes, fmt.Sprintf("T = %d given (Thm 5 default n² = %d)", T, n*n))
	case cfg.Passes > 0:
		T = int(math.Ceil(cfg.Passes * float64(n)))
		notes = append(notes, fmt.Sprintf("T = %d from %g passes (Thm 5 default n² = %d)", T, cfg.Passes, n*n))
	default:
		T = n * n
		notes = append(notes, fmt.Sprintf("T = n² = %d ([Y21b] Thm 5, Cor. 2/4)", T))
	}
	if T < n {
		return nil, fmt.Errorf("%s needs T ≥ n (the proof of [Y21b] Thm 4 uses it in eq. (9)), got T = %d < n = %d", name, T, n)
	}
	eta := cfg.Eta
	if eta == 0 {
		eta = math.Pow(float64(n), -1.5)
		notes = append(notes, fmt.Sprintf("η = n^{−3/2} = %.6g ([Y21b] Thm 5: η = O(n^{−3/2}), constant taken as 1)", eta))
	} else {
		notes = append(notes, fmt.Sprintf("η = %g given", eta))
	}
	// The noise, fixed before any data-dependent computation.
	//
	// Sensitivity of w̄_T (pairfed; the paper: eq. (9) at γ = δ/2):
	//   - Diameter bound (probability 1, needs a bounded W): w̄_T averages
	//     projected iterates, so it lies in W: Δ ≤ D.
	//   - Stability bound on an event ([Y21b] proof of Thm 1, eq. (8)): with
	//     X the number of draws i_1..i_{T+1} equal to the replaced index
	//     and C ≥ Σ_t Y_t, ‖w_t − w′_t‖² ≤ (1 + 1/C)^C·4η²G²(t + C²) ≤
	//     4eη²G²(T + C²) for every t ≤ T, and Σ_t Y_t ≤ ln(eT)·X. The paper
	//     bounds X by its Lemma 1 and then simplifies with
	//     (a + b + √(ab))² ≤ 3a²b² (a = T/n, b = ln(1/γ)), which needs b
	//     not small (the gap noted below). pairfed instead takes
	//     X ≤ c = binomialQuantile(T+1, 1/n, γ) — exact, P(X > c) ≤ γ —
	//     and uses C = ln(eT)·max(c, 1) unsimplified. (The recursion (8)
	//     itself is the paper's, not re-derived; it uses 2G per step, so
	//     the AUC factor Γ is not applied.)
	// Calibration tries the diameter alone (no failure event) and
	// min{D, Δ_T(γ)} at γ ∈ {δ/2, δ/4, δ/16, δ/64} and keeps the least noise.
	diam := paramDiameter(obj)
	paper := OutputPerturbationPrintedSigma(T, n, eta, G, eps, delta)
	paperSens := outputPerturbationSensitivity(T, n, eta, G, delta)
	var opts []pairwise.GaussOption
	if !math.IsInf(diam, 0) {
		opts = append(opts, pairwise.GaussOption{Plan: dp.GaussianPlan{Sensitivities: []float64{diam}},
			How: fmt.Sprintf("Δ = D = %g (w̄_T lies in W; no failure event)", diam)})
	}
	for _, f := range []float64{2, 4, 16, 64} {
		fail := delta / f
		c := binomialQuantile(T+1, 1/float64(n), fail)
		C := (1 + math.Log(float64(T))) * float64(max(c, 1))
		stab := math.Sqrt(4*math.E*eta*eta*G*G*(float64(T)+C*C)) * (1 + 1e-12)
		opts = append(opts, pairwise.GaussOption{Plan: dp.GaussianPlan{Sensitivities: []float64{math.Min(stab, diam)}, FailureDelta: fail},
			How: fmt.Sprintf("Δ = min{D = %g, √(4eη²G²(T + C²)) = %.6g} with C = ln(eT)·c, c = %d the exact Binomial(T+1, 1/n) quantile at failure probability δ/%g", diam, stab, c, f)})
	}
	rep.Formula = formulaLine(&pairwise.Privacy{Calibration: cfg.Privacy.Calibration}, "σ² = 8·η²·G²·ln(2.5/δ)/ε² · (T + 3·T²·ln²(e·T)·ln²(2/δ)/n²)  ([Y21b] eq. (5) as printed)")
	rep.Accountant = "single Gaussian release, certified by exact Gaussian DP (the paper: (ε, δ/2)-DP on a sampling event of probability ≥ 1 − δ/2, [Y21b] proof of Thm 4)"
	sig, err := pairwise.CalibrateGaussian(name, cfg.Privacy, rep, []float64{paper}, []float64{paperSens}, opts...)
	if err != nil {
		return nil, err
	}
	sigma := sig[0]

	w := cfg.InitialModel(p)
	obj.Project(w)
	g := make([]float64, p)
	sum := make([]float64, p)
	count := make([]int, n) // multiplicity of each index among i_1..i_t
	distinct := make([]int, 0, min(n, T+1))
	first := rng.IntN(n) // i_1
	count[first] = 1
	distinct = append(distinct, first)
	lambda := obj.Lambda()
	var grads int64
	for t := 1; t <= T; t++ {
		if t&63 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		pairwise.Axpy(1, w, sum) // w̄_T averages w_1..w_T
		next := rng.IntN(n)      // i_{t+1}
		for k := range g {
			g[k] = 0
		}
		for _, j := range distinct {
			obj.AddGrad(g, w, next, j, float64(count[j]))
		}
		grads += int64(len(distinct))
		if lambda != 0 {
			pairwise.Scale(1-eta*lambda, w) // (1/t)·Σ_k λw = λw
		}
		pairwise.Axpy(-eta/float64(t), g, w)
		obj.Project(w)
		if count[next] == 0 {
			distinct = append(distinct, next)
		}
		count[next]++
	}
	out := make([]float64, p)
	for k := range out {
		out[k] = sum[k] / float64(T)
	}
	cfg.Privacy.Noise.AddGaussian(out, sigma) // w̄_T + u
	postProcessReleased(obj, out)             // w_priv = Π_W(w̄_T + u)

	rep.Releases = 1
	notes = append(notes,
		"paper_sensitivity = Δ_T of [Y21b] eq. (9) at γ = δ/2: Δ_T² = 4e·η²G²·(T + 3T²ln²(eT)ln²(2/δ)/n²)",
		fmt.Sprintf("erratum: the printed eq. (5) (factor 8) gives σ = %.6g, smaller by √e than what the proof of Thm 4 supports (σ = √(2 ln(2.5/δ))·Δ_T/ε = %.6g, factor 8e); --calibration paper uses the printed σ only when the exact accountant certifies it for the proven sensitivity", paper, OutputPerturbationProofSigma(T, n, eta, G, eps, delta)),
		"update: the current draw paired with every previous draw (Alg 2 and the proof of Thm 1); output Π_W(w̄_T + u) as Alg 2 prints it",
	)
	notes = append(notes, secretSamplingNote)
	rep.Notes = append(append(notes, classicalGaussianNote(cfg.Privacy)...), rep.Notes...)
	return &pairwise.Result{W: out, Steps: T, PairGrads: grads, Privacy: rep}, nil
}

// calibrateLocalSGDPhases chooses σ_k for phases ks (1-based, each on its own
// disjoint subset of sizes[i] records, base step η) of [Y21a] Alg 3 and
// fills rep. Used by runDPLocalSGD (all K phases) and LocalSGDPhase (one).
//
// Sensitivity of the phase output w̄_k (pairfed's proof; the paper's
// proof, Appendix D, is not in our copy, and its σ_k corresponds to
// Δ_k = 12·G·η_k·log(4/δ) at failure probability δ/2):
//
//   - Diameter bound (probability 1): w̄_k is a convex combination (Alg 1's
//     η-weighted average, data-independent weights) of projected iterates
//     and the projected start, all in W: ‖w̄_k − w̄′_k‖ ≤ D.
//   - Stability bound on an event. The phase draws i_0, …, i_{T_k}
//     uniformly from S_k (n_k records) and step t uses the pair
//     (i_t, i_{t−1}). Fix the replaced record r ∈ S_k and let X be the
//     number of draws equal to r: X ~ Binomial(T_k + 1, 1/n_k), and with
//     c = binomialQuantile(T_k + 1, 1/n_k, γ), P(X > c) ≤ γ exactly (over
//     the secret sampling randomness, independent of the data). A step
//     whose pair does not contain r applies the same map to both runs,
//     w ↦ Π_W(w − η_k∇ℓ(w; z, z′)), nonexpansive because ℓ(·; z, z′) is
//     convex and L-smooth and η_k ≤ η ≤ 2/L. A step whose pair contains r
//     once adds ≤ η_kΓ (same decomposition at w′: nonexpansive part plus
//     the pair-gradient change at the same point, pairGradGap); a pair
//     (r, r) has zero gradient in both runs (same label for AUC, x − x = 0
//     for metric). Each draw of r enters at most two steps, so on {X ≤ c}
//     every iterate, and the average, moves by ≤ 2c·η_k·Γ.
//
// So Δ_k = min{D, 2c_kη_kΓ} with failure probability γ. The phases are
// disjoint (parallel composition: a record changes one release; the others
// are post-processing), so σ_k = Δ_k/μ* each, and the failure probability
// is that of the one phase holding the record. γ ∈ {δ/2, δ/4, δ/16, δ/64}
// is chosen by phase 1's σ (a rule of n alone, see below).
func calibrateLocalSGDPhases(obj pairwise.Objective, priv *pairwise.Privacy, rep *pairwise.PrivacyReport, G, eta float64, ks, sizes []int) ([]float64, error) {
	eps, delta := priv.Epsilon, priv.Delta
	gamma, gHow := pairGradGap(obj, priv.FeatureRadius)
	diam := paramDiameter(obj)
	l4 := math.Log(4 / delta)
	m := len(ks)
	paper, paperSens := make([]float64, m), make([]float64, m)
	etas, steps := make([]float64, m), make([]int, m)
	for i, k := range ks {
		etas[i] = math.Ldexp(eta, -2*k)
		steps[i] = int(math.Ceil(float64(sizes[i]) * l4))
		paper[i] = LocalSGDPaperSigma(G, etas[i], eps, delta)
		paperSens[i] = 12 * G * etas[i] * l4
	}
	// One failure probability γ for every phase, chosen by a rule that
	// depends only on n (so a site calibrating one phase at a time picks
	// the same γ as the whole run): the candidate giving the smallest σ_1
	// for phase 1 (n_1 = max(⌊n/2⌋, 1) records, η_1 = η/4).
	n := obj.Data().N
	n1, eta1 := max(n>>1, 1), math.Ldexp(eta, -2)
	T1 := int(math.Ceil(float64(n1) * l4))
	stab := func(N, nk int, etaK, fail float64) (float64, int) {
		c := binomialQuantile(N+1, 1/float64(nk), fail)
		return math.Min(diam, 2*float64(c)*etaK*gamma*(1+1e-12)), c
	}
	bestF, bestS := 0.0, math.Inf(1)
	for _, f := range []float64{2, 4, 16, 64} {
		d, _ := stab(T1, n1, eta1, delta/f)
		s1, _, err := dp.CalibrateGaussian(dp.GaussianPlan{Sensitivities: []float64{d}, FailureDelta: delta / f, Dim: rep.NoiseDim()}, eps, delta)
		if err == nil && s1[0] < bestS {
			bestF, bestS = f, s1[0]
		}
	}
	if bestF == 0 {
		return nil, fmt.Errorf("%s: no failure probability leaves room for the noise at δ = %g", localSGDAlg.Name, delta)
	}
	fail := delta / bestF
	d := make([]float64, m)
	cs := make([]int, m)
	for i := range d {
		d[i], cs[i] = stab(steps[i], sizes[i], etas[i], fail)
	}
	opts := []pairwise.GaussOption{{Plan: dp.GaussianPlan{Sensitivities: d, Disjoint: true, FailureDelta: fail},
		How: fmt.Sprintf("Δ_k = min{D = %g, 2c_k·η_k·Γ} with c_k = %v the exact Binomial(T_k+1, 1/n_k) quantile at failure probability γ = δ/%g (γ ∈ {δ/2, δ/4, δ/16, δ/64} giving the least σ_1), %s, Γ = %g", diam, cs, bestF, gHow, gamma)}}
	rep.Formula = formulaLine(priv, "σ_k = 12·G·η_k·log(4/δ)·√(2·log(2.5/δ))/ε, η_k = 4^{−k}·η  ([Y21a] Alg 3 line 6, Thm 10)")
	rep.Accountant = "parallel composition over disjoint phases ([Y21a] Thm 10), each phase certified by exact Gaussian DP"
	return pairwise.CalibrateGaussian(localSGDAlg.Name, priv, rep, paper, paperSens, opts...)
}
