package fedalgo

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// Secure aggregation of multi-phase algorithms: every phase's release is
// one secure aggregation round (secure.go), in which each site adds only
// its share of the distributed discrete Gaussian (dp.DDG), so that the sum
// of at least t sites carries the noise of one central release.
//
// Privacy of the composed rounds. Fix a record z of site s and a
// neighbouring data set that replaces it. In round k the adversary — the
// coordinator alone, or the coordinator with κ colluding sites, who
// subtract their own vectors and noise — sees the sum of the honest
// sites' encodings: a mechanism of site s's records whose view, given
// everything released before (the broadcast model, post-processing of
// earlier sums), is the DDG release of a vector of ℓ2 sensitivity ≤ Δ
// (the job's secagg-sens) with the noise of at least n = t − κ unknown
// shares (a round with fewer survivors aborts before anything is
// unmasked). dp.DDG.RDP bounds its Rényi divergence at every order
// ([KLS21] Prop 14 with the rounding coupling of dp/ddg.go), whatever the
// broadcast model, so the rounds compose adaptively by RDP additivity:
//
//   - sequential (fed-dp-gd-grad): every round reads all of site s's
//     records: T rounds, RDP T·ρ(α), converted once to (ε, δ) by
//     dp.DDG.Epsilon — the accountant of the claims issue; rounds of
//     unequal weight (SumWeighted: fed-dp-lda, fed-dp-pair-sgd,
//     fed-dp-spauc) add their RDP at their own sensitivities w_k·Δ
//     (dp.DDG.EpsilonWeighted);
//   - parallel (fed-dp-local-sgd, fed-dpegd; SumParallel): round k reads only
//     site s's k-th subset of a data-independent partition, so z enters
//     one round and every other round's output distribution, given the
//     earlier outputs, does not depend on z: one round's guarantee;
//   - a sensitivity bound that holds only outside an event of probability
//     δ_f of the site's own sampling (fed-dp-local-sgd's stability bound,
//     SumFailure) costs δ_f: the DDG is certified at δ − δ_f, the job at δ.
//
// Per-site guarantee against the coordinator with κ colluders: the same
// computation with n = t − κ (round.Charge computes both at the floor t).
// The worker charges, before its keys leave in round k, the guarantee of
// the releases its records have taken part in up to and including round
// k (SumReleases): what it actually gets if the job stops there, and the
// job's ε after the last round — never less, since the count of shares is
// the floor t and dp.DDG.Epsilon decreases in n.

// SumParallel is implemented by a SumReleaser whose phases read disjoint,
// data-independent subsets of each site's records: a record takes part in
// one secure release, and the job's guarantee is one round's.
type SumParallel interface {
	SumParallel() bool
}

// SumFailure is implemented by a SumReleaser whose sensitivity bound holds
// outside an event of probability SumFailure(δ) < δ (the site's own
// sampling): the DDG is certified at δ − SumFailure(δ).
type SumFailure interface {
	SumFailure(delta float64) float64
}

// SumReleases is the number of secure releases of a job of phases phases
// that any one record has taken part in after phase (sequential
// composition: phase; SumParallel: 1).
func SumReleases(a Algorithm, phases, phase int) int {
	if p, ok := a.(SumParallel); ok && p.SumParallel() {
		return 1
	}
	return min(phase, phases)
}

// SumWeighted is implemented by a SumReleaser whose sequential phases
// spend the budget unequally, as its plain path does (fed-dp-lda: a
// quarter of μ² on the centre). SumWeights(phases) returns one weight in
// (0, 1] per phase: in phase k every site multiplies its vector by w_k
// before encoding (the worker, WeightVector) and the coordinator divides
// the decoded sum, and the noise it reports, by w_k (UnweightSum). With
// one per-site scale s for the whole job, phase k's release then has
// sensitivity w_k·Δ — its noise is s·γ/w_k in the vector's units — and
// the rounds compose by RDP additivity at their own sensitivities
// (dp.DDG.EpsilonWeighted). The weights are the algorithm's code, public
// and the same at every site, the coordinator and the audit; nothing a
// peer sends sets them.
type SumWeighted interface {
	SumWeights(phases int) []float64
}

// SumRoundWeights returns the weights of the secure releases a record of
// a job of phases phases has taken part in after phase (SumReleases of
// them): 1 each unless the algorithm is SumWeighted; a SumParallel job's
// one release has its phase's weight, which must then be equal in every
// phase.
func SumRoundWeights(a Algorithm, phases, phase int) ([]float64, error) {
	all, err := sumWeights(a, phases)
	if err != nil {
		return nil, err
	}
	if p, ok := a.(SumParallel); ok && p.SumParallel() {
		for _, w := range all {
			if w != all[0] {
				return nil, fmt.Errorf("%s: parallel phases with unequal secure-aggregation weights %v", a.Name(), all)
			}
		}
		return all[:1], nil
	}
	return all[:min(max(phase, 1), phases)], nil
}

// SumWeight returns phase's weight (1 unless the algorithm is
// SumWeighted).
func SumWeight(a Algorithm, phases, phase int) (float64, error) {
	all, err := sumWeights(a, phases)
	if err != nil {
		return 0, err
	}
	if phase < 1 || phase > phases {
		return 0, fmt.Errorf("%s: phase %d outside 1..%d", a.Name(), phase, phases)
	}
	return all[phase-1], nil
}

// sumWeights returns the phases' weights, checked.
func sumWeights(a Algorithm, phases int) ([]float64, error) {
	if phases < 1 {
		return nil, fmt.Errorf("%s: %d phases", a.Name(), phases)
	}
	sw, ok := a.(SumWeighted)
	if !ok {
		w := make([]float64, phases)
		for i := range w {
			w[i] = 1
		}
		return w, nil
	}
	w := sw.SumWeights(phases)
	if len(w) != phases {
		return nil, fmt.Errorf("%s: %d secure-aggregation weights for %d phases", a.Name(), len(w), phases)
	}
	for i, x := range w {
		if !(x > 0 && x <= 1) {
			return nil, fmt.Errorf("%s: secure-aggregation weight of phase %d is %v, must be in (0, 1]", a.Name(), i+1, x)
		}
	}
	return w, nil
}

// leadRounds returns T of a job of phases = 1 + T (a lead release of
// statistics, then T rounds); ok is false when T is outside [1, maxRounds].
func leadRounds(phases, maxRounds int) (T int, ok bool) {
	if phases < 2 || phases-1 > maxRounds {
		return 0, false
	}
	return phases - 1, true
}

// leadWeights are the weights of a job of phases = 1 + T rounds whose
// first round releases statistics at weight 1 and whose T later rounds
// share a fraction 1/share of its RDP: 1/√(share·T) each (fed-dp-pair-sgd:
// share 1, half the budget each way; fed-dp-spauc: share 3, ¾ to the
// statistics). nil when the shape is not leadRounds'.
func leadWeights(phases, maxRounds int, share float64) []float64 {
	if _, ok := leadRounds(phases, maxRounds); !ok {
		return nil
	}
	w := make([]float64, phases)
	w[0] = 1
	for k := 1; k < phases; k++ {
		w[k] = 1 / math.Sqrt(share*float64(phases-1))
	}
	return w
}

// WeightVector returns a site's phase vector multiplied by its weight w
// (the worker, before encoding; SumWeighted): v itself when w = 1, else a
// scaled copy (a SumSite may keep the vector it returned).
func WeightVector(v []float64, w float64) []float64 {
	if w == 1 {
		return v
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * w
	}
	return out
}

// UnweightSum divides a decoded phase sum and its noise σ by the phase's
// weight w (the coordinator, after decoding; SumWeighted), returning the
// σ of the sum in the vector's units. w = 1 leaves them unchanged.
func UnweightSum(sum []float64, sigma, w float64) float64 {
	if w == 1 {
		return sigma
	}
	for i := range sum {
		sum[i] /= w
	}
	return sigma / w
}

// ---- fed-dp-gd-grad ([K22] Alg 1 across sites) ----
//
// Round t: site s's vector is n_s·∇L(θ_{t−1}; D_s) (dpalgo.DPGDGradSum:
// the gradient it would release, before noise, times its public record
// count), of sensitivity 2Γ at every site (n_s times the proven 2Γ/n_s),
// norm ≤ n_s·G' with G' the objective's Lipschitz constant (the gradient
// of a G'-Lipschitz function; +λB with regularization, FedGradProps), so
// clip = n_max·G' never binds. The coordinator decodes Σ_s n_s·g_s + Z
// and steps with ḡ = that sum / Σ_s n_s over the included sites — the
// record-weighted mean the plain path computes — then Π_C(θ − ηḡ). The T
// rounds compose sequentially (file comment); the DDG is calibrated for T.

// SumShape: the gradient's length, clip n_max·G', sensitivity 2Γ.
func (fedDPGDGrad) SumShape(s *Spec, sites []SiteInfo, params int) (int, float64, float64, error) {
	props, err := fedGradProps(s)
	if err != nil {
		return 0, 0, 0, err
	}
	loss, err := pairwise.LossByName(pairwise.TaskAUC, s.Loss)
	if err != nil {
		return 0, 0, 0, err
	}
	_, nMax := sizes(sites)
	sens := dpalgo.DPGDGradSiteSensitivity(loss, s.FeatureRadius, s.ParamRadius, 1)
	clip := float64(nMax) * props.Lipschitz
	if !(clip > 0) || math.IsInf(clip, 0) || !(sens > 0) {
		return 0, 0, 0, fmt.Errorf("%s: no finite gradient bound (G = %g, Δ = %g) for secure aggregation", FedDPGDGrad, props.Lipschitz, sens)
	}
	return params, clip, min(sens, 2*clip), nil
}

// SiteSumShape: the gradient's length and 2Γ (dpalgo.DPGDGradSiteSensitivity
// with n = 1: n_s times the proven 2Γ/n_s) at the announced loss, R and
// B — the numbers the site's own objective is built with.
func (fedDPGDGrad) SiteSumShape(job *protocol.JobAnnounce, _ int) (int, float64, error) {
	loss, err := pairwise.LossByName(pairwise.TaskAUC, job.Loss)
	if err != nil {
		return 0, 0, err
	}
	sens := dpalgo.DPGDGradSiteSensitivity(loss, job.FeatureRadius, job.ParamRadius, 1)
	if !(sens > 0) || math.IsInf(sens, 0) {
		return 0, 0, fmt.Errorf("%s: no finite gradient sensitivity (2Γ = %g) at R = %v, B = %v", FedDPGDGrad, sens, job.FeatureRadius, job.ParamRadius)
	}
	return job.Params, sens, nil
}

// SumVector: n·∇L(θ; D) at the broadcast model, no noise.
func (s *dpGDGradSite) SumVector(ctx context.Context, _ int, model []float64) ([]float64, int, error) {
	v, err := dpalgo.DPGDGradSum(ctx, s.env.Obj, model, s.job.Phases, privacyOf(s.job, s.env))
	if err != nil {
		return nil, 0, err
	}
	return v, s.env.Data.N, nil
}

// CombineSum: ḡ = sum / Σ n_s over the included sites, then
// Π_C(θ − ηḡ) ([K22] Alg 1's step).
func (c dpGDGradCombiner) CombineSum(model, sum []float64, included []SiteInfo, _ float64) []float64 {
	n := 0
	for _, s := range included {
		n += s.Records
	}
	g := slices.Clone(sum)
	for i := range g {
		g[i] /= float64(max(n, 1))
	}
	dpalgo.FedGradStep(model, g, c.eta, c.radius)
	return model
}

// ---- parallel phases: fed-dp-local-sgd ([Y21a] Alg 3) and fed-dpegd ([X21] Alg 3) ----
//
// Phase k: site s runs phase k of the algorithm on its k-th subset as
// without secure aggregation (dpalgo.LocalSGDPhaseAverage,
// dpalgo.DPEGDEpochAverage: the same steps) from the broadcast model w,
// and its vector is (w̄_{s,k} − w)/Δ_{s,k}: the phase average's move from
// the start, scaled by its own proven sensitivity Δ_{s,k} — [Y21a]'s
// stability bound min{2B, 2c_k·η_k·Γ} at failure probability δ_f
// (dpalgo.LocalSGDPhaseSensitivity), or [X21]'s min{η_kΓ(n_k+1)/n_k, 2B}
// (dpalgo.DPEGDEpochSensitivity, probability 1) — so that every site's
// vector has sensitivity 1 (the DDG's Δ) and the common noise is what
// each site needs, whatever its size. Δ_{s,k} depends only on public
// numbers (n_s, k, the job's η, δ, R, B, λ and loss), so the coordinator
// recomputes it for the included sites and combines
//
//	w_k = w + (Σ_s (w̄_{s,k} − w)/Δ_{s,k} + Z) / Σ_s 1/Δ_{s,k},
//
// the mean of the w̄_{s,k} weighted by 1/Δ_{s,k} (equal weights for equal
// sites, as the plain path's record weights are then equal too), then
// projects it onto W as the plain path's releases are (fed-dp-local-sgd
// always, fed-dpegd for a metric): post-processing. Clip: ‖w̄ − w‖ ≤
// M_{s,k} = min{2B, T_k·η_k·G'} (T_k steps of length ≤ η_k·G';
// dpalgo.LocalSGDPhaseMove, DPEGDEpochMove), so c = max_{s,k}
// M_{s,k}/Δ_{s,k} never binds (were it to, by rounding, clipping is a
// projection: the sensitivity still holds). Centering matters: the
// uncentered B/Δ_{s,k} grows as 4^k and would inflate the DDG's
// floating-point margin 2⁻³⁰·c/γ to the size of Δ/γ itself at the last
// phases of a large site. The phases compose in parallel (SumParallel);
// fed-dp-local-sgd's stability bound holds outside an event of
// probability δ_f = δ/4 (SumFailure: the rule is fixed, not tuned; the
// Gaussian path picks its own among δ/{2,4,16,64}).

// phaseJob are the public numbers a parallel-phase algorithm's bounds
// depend on.
type phaseJob struct {
	task, loss                     string
	R, B, lambda, eta, delta, fail float64
	phases                         int
}

// phaseBounds returns Δ_{s,k} and M_{s,k} for a site of n records.
type phaseBounds func(j phaseJob, n, k int) (sens, move float64, err error)

// localSGDPhaseBounds are the phase bounds of fed-dp-local-sgd ([Y21a] Alg 3).
func localSGDPhaseBounds(j phaseJob, n, k int) (float64, float64, error) {
	loss, err := pairwise.LossByName(pairwise.Task(j.task), j.loss)
	if err != nil {
		return 0, 0, err
	}
	d, err := dpalgo.LocalSGDPhaseSensitivity(loss, j.R, j.B, j.eta, j.delta, j.fail, n, k)
	if err != nil {
		return 0, 0, err
	}
	return d, dpalgo.LocalSGDPhaseMove(loss, j.R, j.B, j.lambda, j.eta, j.delta, n, k), nil
}

// dpegdEpochBounds are the epoch bounds of fed-dpegd ([X21] Alg 3).
func dpegdEpochBounds(j phaseJob, n, k int) (float64, float64, error) {
	loss, err := pairwise.LossByName(pairwise.Task(j.task), j.loss)
	if err != nil {
		return 0, 0, err
	}
	if k < 1 || k > j.phases || j.phases > dpalgo.DPEGDPhases(n) {
		return 0, 0, fmt.Errorf("epoch %d of %d does not exist at a site of %d records", k, j.phases, n)
	}
	ni := dpalgo.DPEGDSubsetSize(n, j.phases, k)
	if !(j.eta > 0) || !(j.B > 0) || math.IsInf(j.B, 0) {
		return 0, 0, fmt.Errorf("epoch bounds need η > 0 and a finite B > 0 (η = %v, B = %v)", j.eta, j.B)
	}
	return dpalgo.DPEGDEpochSensitivity(loss, j.R, j.B, j.eta, ni, k), dpalgo.DPEGDEpochMove(loss, j.R, j.B, j.lambda, j.eta, ni, k), nil
}

// phaseJobOfPlan is the coordinator's phaseJob from the spec and plan.
func phaseJobOfPlan(s *Spec, p *Plan, fail float64) phaseJob {
	task := s.Task
	if task == "" {
		task = protocol.TaskAUC
	}
	B := s.ParamRadius
	if p.ParamRadius > 0 {
		B = p.ParamRadius
	}
	return phaseJob{task: task, loss: s.Loss, R: s.FeatureRadius, B: B, lambda: s.Lambda, eta: p.Eta, delta: p.Delta, fail: fail, phases: p.Phases}
}

// phaseJobOf is the phaseJob of an announced job with secure aggregation.
func phaseJobOf(j *protocol.JobAnnounce) (phaseJob, error) {
	sec, err := SecAggOf(j)
	if err != nil {
		return phaseJob{}, err
	}
	if sec == nil {
		return phaseJob{}, fmt.Errorf("job %s has no secure aggregation", j.Job)
	}
	// δ_f as the site computes it (SumFailure of the announced δ), not
	// the announced secagg-fail (checked against it by SiteSecAgg).
	return phaseJob{task: j.Task, loss: j.Loss, R: j.FeatureRadius, B: j.ParamRadius, lambda: j.Lambda, eta: j.Eta, delta: j.Delta, fail: sumFailure(registry[j.Algo], j.Delta), phases: j.Phases}, nil
}

// phaseSiteShape: the model's length and Δ = 1 — the site divides its
// move by its own Δ_{s,k}, computed from the announced η, δ, R, B, λ,
// loss, phases and its own n (phaseMove), the numbers its phase runs
// with.
func phaseSiteShape(job *protocol.JobAnnounce) (int, float64, error) {
	return job.Params, 1, nil
}

// phaseSumShape: the model's length, clip max_{s,k} M_{s,k}/Δ_{s,k},
// sensitivity 1.
func phaseSumShape(name string, bounds phaseBounds, j phaseJob, sites []SiteInfo, params int) (int, float64, float64, error) {
	clip := 0.0
	for _, site := range sites {
		for k := 1; k <= j.phases; k++ {
			d, m, err := bounds(j, site.Records, k)
			if err != nil {
				return 0, 0, 0, fmt.Errorf("%s: site %s: %w", name, site.Name, err)
			}
			clip = max(clip, m/d)
		}
	}
	return params, clip, 1, nil
}

// phaseMove turns a phase average into the site's vector (w̄ − w)/Δ.
func phaseMove(name string, bounds phaseBounds, job *protocol.JobAnnounce, n, k int, avg, model []float64) ([]float64, error) {
	pj, err := phaseJobOf(job)
	if err != nil {
		return nil, err
	}
	d, _, err := bounds(pj, n, k)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for i := range avg {
		avg[i] = (avg[i] - model[i]) / d
	}
	return avg, nil
}

// fed-dp-local-sgd.

// SumParallel: the K phases read disjoint subsets (LocalSGDPartition).
func (fedDPLocalSGD) SumParallel() bool { return true }

// SumFailure is δ_f = δ/4.
func (fedDPLocalSGD) SumFailure(delta float64) float64 { return delta / 4 }

func (a fedDPLocalSGD) SumShape(s *Spec, sites []SiteInfo, params int) (int, float64, float64, error) {
	p, err := a.Plan(s, sites, params)
	if err != nil {
		return 0, 0, 0, err
	}
	return phaseSumShape(FedDPLocalSGD, localSGDPhaseBounds, phaseJobOfPlan(s, p, a.SumFailure(p.Delta)), sites, params)
}

func (fedDPLocalSGD) SiteSumShape(job *protocol.JobAnnounce, _ int) (int, float64, error) {
	return phaseSiteShape(job)
}

// SumVector: the move (w̄ − w)/Δ_{s,k} of the phase average of the
// site's k-th subset from the broadcast model w.
func (s *dpLocalSGDSite) SumVector(ctx context.Context, k int, model []float64) ([]float64, int, error) {
	if k < 1 || k > len(s.part) {
		return nil, 0, fmt.Errorf("%s: phase %d outside [1, %d]", FedDPLocalSGD, k, len(s.part))
	}
	idx := s.part[k-1]
	w, err := dpalgo.LocalSGDPhaseAverage(ctx, s.env.Obj, model, idx, k, s.job.Eta, privacyOf(s.job, s.env), s.env.Rand)
	if err != nil {
		return nil, 0, err
	}
	v, err := phaseMove(FedDPLocalSGD, localSGDPhaseBounds, s.job, s.env.Data.N, k, w, model)
	return v, len(idx), err
}

// fed-dpegd.

// SumParallel: the k epochs read disjoint subsets (DPEGDPartition).
func (fedDPEGD) SumParallel() bool { return true }

func (a fedDPEGD) SumShape(s *Spec, sites []SiteInfo, params int) (int, float64, float64, error) {
	p, err := a.Plan(s, sites, params)
	if err != nil {
		return 0, 0, 0, err
	}
	return phaseSumShape(FedDPEGD, dpegdEpochBounds, phaseJobOfPlan(s, p, 0), sites, params)
}

func (fedDPEGD) SiteSumShape(job *protocol.JobAnnounce, _ int) (int, float64, error) {
	return phaseSiteShape(job)
}

// SumVector: the move (w̄ − w)/Δ_{s,i} of epoch i's average on the
// site's i-th subset from the broadcast model w.
func (s *dpegdSite) SumVector(ctx context.Context, i int, model []float64) ([]float64, int, error) {
	if i < 1 || i > len(s.part) {
		return nil, 0, fmt.Errorf("%s: epoch %d outside [1, %d]", FedDPEGD, i, len(s.part))
	}
	idx := s.part[i-1]
	w, err := dpalgo.DPEGDEpochAverage(ctx, s.env.Obj, model, idx, i, s.job.Eta, privacyOf(s.job, s.env))
	if err != nil {
		return nil, 0, err
	}
	v, err := phaseMove(FedDPEGD, dpegdEpochBounds, s.job, s.env.Data.N, i, w, model)
	return v, len(idx), err
}

// phaseCombiner is the coordinator's half of a parallel-phase algorithm:
// the plain path's record-weighted mean, and the secure path's
// 1/Δ-weighted mean, which needs the phase (kept as the combiner's state
// for checkpoints).
type phaseCombiner struct {
	meanCombiner
	job     *protocol.JobAnnounce
	bounds  phaseBounds
	project bool // project the secure mean onto W (as the plain releases are)
	secure  bool
	phase   int // phases combined so far
}

// newPhaseCombiner returns the combiner of job, resumed from state (the
// secure path's phase count; nil or empty at the start).
func newPhaseCombiner(name string, job *protocol.JobAnnounce, state []float64, bounds phaseBounds, project bool) (Combiner, error) {
	c := &phaseCombiner{job: job, bounds: bounds, project: project, secure: SecAggRequested(job.Options)}
	if len(state) > 0 {
		if len(state) != 1 || state[0] != math.Trunc(state[0]) || state[0] < 0 || state[0] > float64(job.Phases) {
			return nil, fmt.Errorf("%s: invalid combiner state %v", name, state)
		}
		c.phase = int(state[0])
	}
	return c, nil
}

func newLocalSGDCombiner(job *protocol.JobAnnounce, state []float64) (Combiner, error) {
	return newPhaseCombiner(FedDPLocalSGD, job, state, localSGDPhaseBounds, true) // Π_W of Alg 3 line 6
}

func newDPEGDCombiner(job *protocol.JobAnnounce, state []float64) (Combiner, error) {
	return newPhaseCombiner(FedDPEGD, job, state, dpegdEpochBounds, job.Task == protocol.TaskMetric) // x21Finish
}

func (c *phaseCombiner) Combine(model []float64, ups []*protocol.SiteUpdate, rule protocol.Aggregation) []float64 {
	c.phase++
	return c.meanCombiner.Combine(model, ups, rule)
}

// State is nil on the plain path (as before), the phase count on the
// secure one.
func (c *phaseCombiner) State() []float64 {
	if !c.secure {
		return nil
	}
	return []float64{float64(c.phase)}
}

// CombineSum: w + sum / Σ 1/Δ_{s,k}, projected when the plain releases
// are. A Δ that cannot be computed (not expected: the plan computed all
// of them) leaves the model unchanged.
func (c *phaseCombiner) CombineSum(model, sum []float64, included []SiteInfo, _ float64) []float64 {
	c.phase++
	pj, err := phaseJobOf(c.job)
	if err != nil || len(included) == 0 {
		return model
	}
	wsum := 0.0
	for _, s := range included {
		d, _, err := c.bounds(pj, s.Records, c.phase)
		if err != nil {
			return model
		}
		wsum += 1 / d
	}
	out := slices.Clone(sum)
	for i := range out {
		out[i] = model[i] + out[i]/wsum
	}
	if c.project {
		if err := projectModel(c.job, out); err != nil {
			return model
		}
	}
	return out
}

// projectModel projects w onto the job's parameter set (post-processing):
// the ℓ2 ball of radius B for AUC, the Frobenius ball ∩ PSD for a metric
// (as the worker's objective).
func projectModel(j *protocol.JobAnnounce, w []float64) error {
	kind, d := "l2", len(w)
	if j.Task == protocol.TaskMetric {
		kind, d = "frobenius-psd", int(math.Round(math.Sqrt(float64(len(w)))))
	}
	p, err := pairwise.NewProjector(kind, j.ParamRadius, pairwise.Task(j.Task), d)
	if err != nil {
		return err
	}
	p.Project(w)
	return nil
}

// secAggNote says how a secure aggregation job's per-site guarantee
// arises (PrivacyNote).
func secAggNote(a Algorithm, _ *Spec) string {
	how := "its records take part in every round (one for the one-shot statistics): the rounds compose by RDP additivity"
	if p, ok := a.(SumParallel); ok && p.SumParallel() {
		how = "the phases read disjoint subsets of its records: one round's guarantee (parallel composition)"
	}
	return fmt.Sprintf("per-site record-level (ε, δ)-DP under secure aggregation: each phase is one SecAgg round in which every site adds only its share of the distributed discrete Gaussian ([KLS21], dp/ddg.go) and the coordinator unmasks only the sum of at least t sites; the per-site scale is calibrated so that t − κ honest shares certify (ε, δ) at the floor t; each site draws its share as m copies, and when every site is in the sum its m − keep removable copies (their seed revealed only then) are subtracted, so a round nobody drops holds the noise of one central release instead of K/(t − κ) of it (dp/ddg_removable.go); %s (fedalgo/secure_phases.go). Each site recomputes its sensitivity Δ, δ_f and the rotation seed and checks the announced calibration against the job's ε with them; its ledger records, before each round, the certified guarantee so far against the coordinator and against κ colluders, and its local-only ε (its own share alone, if every other site colludes); the σ printed is one site's share left in the sum (its kept copies when its removable ones came off), in the units of its encoded vector", how)
}
