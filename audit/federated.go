package audit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// Audits of the federated algorithms (package fedalgo).
//
// What is audited. A federated site's guarantee is per-site record-level
// (ε, δ)-DP of what leaves it. Two views, by the job's aggregation:
//
//   - Without secure aggregation: the SITE RELEASE — the updates one site
//     sends over the whole job, phase by phase. The audit drives the
//     algorithm's own site half (fedalgo: Configure, Plan, NewSite,
//     Site.Step) on worst-case neighbouring site datasets D, D' and wraps the
//     site's noise source in the white-box recorder (whitebox.go): every
//     dp.Noise call of the site code and of the pairwise math it calls is a
//     release (a_t, σ_t, y_t). Between phases the broadcast model is the
//     algorithm's own Combiner applied to this site's updates — a function
//     of the transcript, as any broadcast an honest or curious coordinator
//     sends (adaptive composition covers every such choice; the phase-1
//     broadcast is the construction's w₀, chosen by the attacker). The
//     other side is replayed along the same transcript (replayer), so the
//     log-likelihood ratio Λ is exact for adaptive releases; every update
//     (Model and Last) must be the same on both sides under the same
//     releases, or the site sends something the noise does not cover (an
//     error, not a bound).
//   - With secure aggregation (fedalgo/secure.go): the DDG SUM. Each phase
//     the site's exact vector (fedalgo.SumSite.SumVector) is encoded with the
//     job's distributed discrete Gaussian (dp.DDG.Encode: clip, rotate,
//     scale by 1/γ, randomized rounding, N_ℤ(0, s²) per coordinate), summed
//     mod 2^b with the encodings of the other honest sites and decoded
//     (dp.DDG.Decode): the coordinator's view. The DDG is the one the site
//     builds from the announcement (fedalgo.SecAgg.DDG, as the worker
//     does), calibrated by the coordinator's plan (fedalgo.PlanSecAgg,
//     dp.CalibrateDDG). Two views: the sum of t − κ honest shares (the
//     floor the guarantee is certified at: t survivors of which κ collude
//     with the coordinator and subtract their own vectors and noise), held
//     to the job's ε; and ONE share (the site's encoding alone), held to the
//     local-only guarantee the same DDG certifies with n = 1
//     (dp.DDG.Epsilon(rounds, 1, δ − δ_f)) — what a site has left if secure
//     aggregation failed entirely. The other honest sites hold zero vectors
//     (public to the test: their data are known to the attacker, the worst
//     case), so their encodings add only their noise. The statistic is the
//     Gaussian log-likelihood ratio of the decoded sums, Λ = Σ_k (‖y_k −
//     a_k‖² − ‖y_k − b_k‖²)/(2σ²) with a_k, b_k the clipped vectors on D and
//     D' along the observed transcript and σ² = n·(sγ)² the sum's variance
//     per coordinate. It is not the exact likelihood ratio of the discrete
//     mechanism (rounding, a sum of discrete Gaussians), but any statistic
//     is a valid test: the Clopper–Pearson bound holds whatever the test,
//     only its power depends on the choice, and at s ≫ 1 the DDG is within
//     2⁻¹⁰ of the continuous Gaussian this ratio is optimal for.
//
// Neighbouring site datasets: the constructions of the single-site white-box
// audit (whitebox.go: aligned, opposed, similar, label-flip), n records per
// site in R², the canary at row 0, n/2, 3n/4 or n − 1, the algorithm's
// parameter radius B and 4, searched by one pilot trial each (the realized
// privacy loss Σ‖a − b‖²/σ²); the worst is then measured: a calibration
// round (half the trials) chooses the threshold on Λ, a fresh measurement
// round evaluates it with Clopper–Pearson bounds (stats.go). A correct site
// gives ε_lb ≤ the claim except with probability ≤ 1 − Confidence per view.
//
// Every registered federated algorithm is covered through the fedalgo
// interfaces alone (FederatedCoverage): a new private one is audited the
// same way, a non-private one is refused (there is no claim to audit), and
// secure aggregation is refused for an algorithm that releases no sum.
// Subsampled site releases (a site release of mechanism
// subsampled-gaussian, e.g. fed-dp-pair-sgd's metric-task form) are held,
// as in the single-site audit, to the ε their steps certify without
// amplification, since the replay knows the sampling (whitebox.go,
// statedReleases). fed-dp-pair-sgd's AUC form releases Gaussian sums (its
// statistics, then its clipped pair gradients) and is held to the claim,
// plain and under secure aggregation.

// FedSpec configures an audit of a federated algorithm.
type FedSpec struct {
	// Algo names a federated algorithm (fedalgo.Names); LocalAlgo the
	// single-site algorithm of one that runs one at every site
	// (fed-oneshot; default dpegd).
	Algo, LocalAlgo string
	// SecureAggregation audits the DDG sum of secure aggregation (the
	// algorithm must release a sum of site vectors) instead of the plain
	// site release.
	SecureAggregation bool
	// Sites K (default 4), each with Records records (default 8);
	// Threshold t (0: secagg's default ⌊2K/3⌋ + 1) and Colluders κ of
	// secure aggregation.
	Sites, Records, Threshold, Colluders int
	// Degree runs secure aggregation's sparse variant (SecAgg+, the job
	// option secagg-degree; 0: the complete graph): the audited sum then
	// holds the sparse floor of honest shares, as the sites' charge counts.
	Degree int
	// Rounds is the job's rounds for the algorithms that take them (0:
	// the algorithm's default, or fedAuditRounds').
	Rounds int
	// Loss of the job ("": the search tries the algorithm's default and
	// every AUC loss it accepts).
	Loss string
	// Lambda of the objective (0; 0.1 when the local algorithm of
	// fed-oneshot needs strong convexity).
	Lambda float64
	// Epsilon, Delta as AuditSpec (δ default 1e-5).
	Epsilon, Delta float64
	DeltaSet       bool
	// R is the feature radius (default 1).
	R float64
	// Trials per side of the measurement round (default 2000); the
	// calibration round uses half as many.
	Trials int
	Seed   uint64
	// NoiseScale multiplies the noise (σ of the site releases, the DDG's
	// per-site scale s): < 1 breaks the mechanism on purpose.
	NoiseScale float64
	// Confidence of each view's lower bound (default 0.95).
	Confidence float64
	// Tamper replays a coordinator's tampered announcement (only
	// TamperSensitivity, with SecureAggregation; see federated_secagg.go).
	Tamper string
}

// Views of a federated audit.
const (
	ViewSiteRelease = "site-release"     // the plain site's updates
	ViewSecAggSum   = "secagg-sum"       // the decoded sum of t − κ honest shares
	ViewOneShare    = "secagg-one-share" // one site's encoding alone
)

// FedView is the audit of one view.
type FedView struct {
	View              string  `json:"view"`
	What              string  `json:"what"`
	ClaimedEpsilon    float64 `json:"claimed_epsilon"`
	Claim             string  `json:"claim"`
	EpsilonLowerBound float64 `json:"epsilon_lower_bound"`
	// Consistent is ε_lb ≤ ClaimedEpsilon (≤ ReferenceEpsilon when set).
	Consistent       bool    `json:"consistent"`
	ReferenceEpsilon float64 `json:"reference_epsilon,omitempty"`
	Reference        string  `json:"reference,omitempty"`
	Statistic        string  `json:"statistic"`
	Threshold        float64 `json:"threshold"`
	FPR              float64 `json:"false_positive_rate"`
	FNR              float64 `json:"false_negative_rate"`
	Releases         int     `json:"releases"`
	Mechanism        string  `json:"mechanism"`
	// Sigma is the noise standard deviation per coordinate of the view's
	// first release, as drawn (after NoiseScale).
	Sigma               float64  `json:"sigma"`
	RealizedLoss        float64  `json:"realized_loss"`
	StatedLoss          float64  `json:"stated_loss,omitempty"`
	SensitivityAttained float64  `json:"sensitivity_attained,omitempty"`
	Notes               []string `json:"notes,omitempty"`
}

// FedAuditResult is the outcome of a federated audit.
type FedAuditResult struct {
	Algorithm         string  `json:"algorithm"`
	LocalAlgo         string  `json:"local_algo,omitempty"`
	SecureAggregation bool    `json:"secure_aggregation"`
	Sites             int     `json:"sites"`
	Records           int     `json:"records_per_site"`
	Threshold         int     `json:"threshold,omitempty"`
	Colluders         int     `json:"colluders"`
	Phases            int     `json:"phases"`
	ClaimedEpsilon    float64 `json:"claimed_epsilon"`
	Delta             float64 `json:"delta"`
	Confidence        float64 `json:"confidence"`
	Trials            int     `json:"trials"`
	NoiseScale        float64 `json:"noise_scale"`
	Tamper            string  `json:"tamper,omitempty"`
	Loss              string  `json:"loss"`
	Canary            string  `json:"canary"`
	// Secure aggregation: one site's noise s·γ per coordinate as drawn
	// (announced parameters, × NoiseScale) and the honest plan's at ×1.
	SiteSigma       float64 `json:"site_sigma,omitempty"`
	HonestSiteSigma float64 `json:"honest_site_sigma,omitempty"`
	// Copies and Keep: a site's noise draws and those kept from its
	// secure source (fedalgo.SecAgg.Floors; 1 and 1 when none is
	// removable).
	Copies int `json:"copies,omitempty"`
	Keep   int `json:"keep,omitempty"`
	// Tampered announcement: the ε the old site check (round.Charge on
	// the DDG built from the announcement) certifies from the tampered
	// and from the honest announcement.
	TamperedCheckEpsilon float64   `json:"tampered_check_epsilon,omitempty"`
	HonestCheckEpsilon   float64   `json:"honest_check_epsilon,omitempty"`
	Views                []FedView `json:"views"`
	// Consistent: every view is consistent.
	Consistent bool `json:"consistent"`
}

// IsFederated reports whether name is a registered federated algorithm.
func IsFederated(name string) bool {
	_, err := fedalgo.Lookup(name)
	return err == nil
}

// FedCoverage says how the audit treats one registered federated algorithm.
type FedCoverage struct {
	Algo string
	// Plain and SecAgg: the site release and the DDG sum are audited.
	Plain, SecAgg bool
	// Refusal is why a view is not audited ("" when both are).
	Refusal string
}

// FederatedCoverage lists every registered federated algorithm and which
// of its views AuditFederated audits, with the reason for those it
// refuses — the same checks AuditFederated makes.
func FederatedCoverage() []FedCoverage {
	var out []FedCoverage
	for _, name := range fedalgo.Names() {
		c := FedCoverage{Algo: name}
		a, _ := fedalgo.Lookup(name)
		if err := fedRefusal(a, false); err != nil {
			c.Refusal = err.Error()
		} else {
			c.Plain = true
			if err := fedRefusal(a, true); err != nil {
				c.Refusal = err.Error()
			} else {
				c.SecAgg = true
			}
		}
		out = append(out, c)
	}
	return out
}

// fedRefusal is why a (with or without secure aggregation) is not audited.
func fedRefusal(a fedalgo.Algorithm, secure bool) error {
	if !a.Private() {
		return fmt.Errorf("audit: %s is not private: its sites add no noise and claim no (ε, δ), so there is nothing to audit", a.Name())
	}
	if secure {
		if _, ok := a.(fedalgo.SumReleaser); !ok {
			return fmt.Errorf("audit: %s does not release a sum of site vectors, so it has no secure aggregation to audit: audit its site release without --secure-aggregation", a.Name())
		}
	}
	return nil
}

// fedAuditRounds are the rounds the audit gives an algorithm by default
// when they differ from the algorithm's own (none today: fed-dp-pair-sgd's
// AUC form, which used to need one round of its subsampled steps to keep
// thousands of trials affordable, now makes 1 + T Gaussian releases, its
// default T = 2 at the audit's site sizes).
var fedAuditRounds = map[string]int{}

const (
	fedDefaultSites   = 4
	fedDefaultRecords = 8
	fedDefaultTrials  = 2000
	fedMaxSites       = 64
	fedMaxRecords     = 256
)

// AuditFederated audits a federated algorithm's site release, or with
// SecureAggregation its DDG sum (see the file comment).
func AuditFederated(ctx context.Context, s FedSpec) (*FedAuditResult, error) {
	a, err := fedalgo.Lookup(s.Algo)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if err := fedRefusal(a, s.SecureAggregation); err != nil {
		return nil, err
	}
	if err := s.defaults(); err != nil {
		return nil, err
	}
	if s.LocalAlgo != "" {
		// The federated audit reads every noise draw of a site's run; a
		// local algorithm whose noise is a secret input of its objective
		// (dp-objpert, dp-select) is audited on its final model alone.
		if la, err := pairwise.Lookup(s.LocalAlgo); err == nil && la.NoiseInObjective {
			return nil, fmt.Errorf("audit: %s adds its noise inside the objective it minimizes, which the federated audit (it reads every noise draw of a site) does not model; audit it single-site: pairfed audit --algo %s --mode blackbox", s.LocalAlgo, s.LocalAlgo)
		}
	}
	if s.Tamper != "" {
		if s.Tamper != TamperSensitivity {
			return nil, fmt.Errorf("audit: unknown tampering %q (%s: the announced DDG sensitivity and γ divided by %d)", s.Tamper, TamperSensitivity, TamperFactor)
		}
		if !s.SecureAggregation {
			return nil, fmt.Errorf("audit: --tamper %s tampers with secure aggregation's announcement: give --secure-aggregation", s.Tamper)
		}
	}
	if s.SecureAggregation {
		return auditSum(ctx, a, s)
	}
	return auditPlain(ctx, a, s)
}

func (s *FedSpec) defaults() error {
	if err := dp.CheckEpsilon("--epsilon", s.Epsilon); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if !s.DeltaSet {
		s.Delta = wbDefaultDelta
	}
	if err := dp.CheckDeltaPositive("--delta", s.Delta); err != nil {
		return fmt.Errorf("audit: a federated audit: %w", err)
	}
	if s.R == 0 {
		s.R = 1
	}
	if !(s.R > 0) || math.IsInf(s.R, 0) {
		return fmt.Errorf("audit: feature radius R = %v must be finite and > 0", s.R)
	}
	if s.NoiseScale == 0 {
		s.NoiseScale = 1
	}
	if !(s.NoiseScale > 0) || math.IsInf(s.NoiseScale, 0) {
		return fmt.Errorf("audit: noise scale %v must be finite and > 0", s.NoiseScale)
	}
	if s.Confidence == 0 {
		s.Confidence = 0.95
	}
	if !(s.Confidence > 0 && s.Confidence < 1) {
		return fmt.Errorf("audit: confidence %v must be in (0, 1)", s.Confidence)
	}
	if s.Trials == 0 {
		s.Trials = fedDefaultTrials
	}
	if s.Trials < 10 || s.Trials > MaxTrials {
		return fmt.Errorf("audit: %d trials per side must be in [10, %d]", s.Trials, MaxTrials)
	}
	if s.Sites == 0 {
		s.Sites = fedDefaultSites
	}
	if s.Sites < 1 || s.Sites > fedMaxSites || (s.SecureAggregation && s.Sites < 2) {
		return fmt.Errorf("audit: %d sites: give --sites in [1, %d] (≥ 2 with secure aggregation)", s.Sites, fedMaxSites)
	}
	if s.Records == 0 {
		s.Records = fedDefaultRecords
	}
	if s.Records < 2 || s.Records > fedMaxRecords {
		return fmt.Errorf("audit: %d records per site: give --records in [2, %d]", s.Records, fedMaxRecords)
	}
	if s.Threshold < 0 || s.Colluders < 0 || s.Rounds < 0 || s.Lambda < 0 {
		return fmt.Errorf("audit: threshold %d, colluders %d, rounds %d and λ = %g must not be negative", s.Threshold, s.Colluders, s.Rounds, s.Lambda)
	}
	if s.Degree < 0 {
		return fmt.Errorf("audit: degree %d must not be negative (0: the complete graph)", s.Degree)
	}
	if !s.SecureAggregation && (s.Threshold != 0 || s.Colluders != 0 || s.Degree != 0) {
		return fmt.Errorf("audit: --threshold and --colluders apply to --secure-aggregation only")
	}
	if s.Rounds == 0 {
		s.Rounds = fedAuditRounds[s.Algo]
	}
	if s.Algo == fedalgo.FedOneShot && s.LocalAlgo == "" {
		s.LocalAlgo = "dpegd"
	}
	if s.Lambda == 0 && s.LocalAlgo != "" {
		if la, err := pairwise.Lookup(s.LocalAlgo); err == nil && la.NeedsStrongConvexity {
			s.Lambda = 0.1
		}
	}
	return nil
}

// fedConfig is one point of the worst-case search.
type fedConfig struct {
	loss       string // "" : the algorithm's default
	con        construction
	pos        int
	B          float64 // 0: the algorithm's default
	sampleSeed uint64
}

func (c fedConfig) describe(n int, R, B float64) string {
	return fmt.Sprintf("%s: canary (row %d of %d at the audited site) x = %g·e₁, y = %+g in D; x = %g·e₁, y = %+g in D'; the other records x = %g·e₁, y = −1; R = %g; B = %g; first broadcast w₀ = %g·e₁; sampling seed %d (same on both sides)",
		c.con.name, c.pos, n, c.con.x[0]*R, c.con.y[0], c.con.x[1]*R, c.con.y[1], c.con.others*R, R, B, c.con.w0*B, c.sampleSeed)
}

// fedJob is a planned and announced job of s at config c: the
// announcement every site receives and the sites' public metadata.
type fedJob struct {
	a     fedalgo.Algorithm
	spec  fedalgo.Spec
	job   *protocol.JobAnnounce
	plan  *fedalgo.Plan
	sites []fedalgo.SiteInfo
}

// planJob configures, plans and announces a job of K sites of n records
// in R² (AUC), as the coordinator does (coordinator.go: Configure, Plan,
// PlanSecAgg, the announcement).
func planJob(a fedalgo.Algorithm, s FedSpec, B float64, loss string) (*fedJob, error) {
	spec := fedalgo.Spec{ID: "audit", Algo: s.Algo, LocalAlgo: s.LocalAlgo, Task: protocol.TaskAUC, Rounds: s.Rounds, Loss: loss,
		ParamRadius: B, FeatureRadius: s.R, Lambda: s.Lambda, Epsilon: s.Epsilon, Delta: s.Delta, Seed: s.Seed}
	if s.SecureAggregation {
		m := map[string]float64{fedalgo.OptSecAgg: 1}
		if s.Threshold > 0 {
			m[fedalgo.OptSecAggThreshold] = float64(s.Threshold)
		}
		if s.Colluders > 0 {
			m[fedalgo.OptSecAggColluders] = float64(s.Colluders)
		}
		if s.Degree > 0 {
			m[fedalgo.OptSecAggDegree] = float64(s.Degree)
		}
		spec.Options = protocol.OptionsOf(m)
	}
	if _, err := fedalgo.Configure(&spec); err != nil {
		return nil, fmt.Errorf("audit: %s: %w", s.Algo, err)
	}
	sites := make([]fedalgo.SiteInfo, s.Sites)
	names := make([]string, s.Sites)
	for i := range sites {
		names[i] = fmt.Sprintf("site-%02d", i)
		sites[i] = fedalgo.SiteInfo{Name: names[i], Records: s.Records}
	}
	s2 := spec
	plan, err := a.Plan(&s2, sites, wbDim)
	if err != nil {
		return nil, fmt.Errorf("audit: %s: plan: %w", s.Algo, err)
	}
	job := &protocol.JobAnnounce{Job: spec.ID, Algo: spec.Algo, LocalAlgo: spec.LocalAlgo, Task: spec.Task, Loss: spec.Loss, Params: wbDim,
		LocalPasses: spec.LocalPasses, Eta: spec.Eta, ParamRadius: spec.ParamRadius, FeatureRadius: spec.FeatureRadius, Lambda: spec.Lambda,
		Seed: spec.Seed, Sites: names, Aggregation: spec.Aggregation, Options: slices.Clone(spec.Options), Calibration: spec.Calibration}
	job.Phases, job.Eta, job.Epsilon, job.Delta = plan.Phases, plan.Eta, plan.Epsilon, plan.Delta
	if plan.ParamRadius > 0 {
		job.ParamRadius = plan.ParamRadius
	}
	if s.SecureAggregation {
		if job.Options, err = fedalgo.PlanSecAgg(a, &spec, sites, wbDim, plan); err != nil {
			return nil, fmt.Errorf("audit: %s: secure aggregation plan: %w", s.Algo, err)
		}
	}
	if err := job.Validate(); err != nil {
		return nil, fmt.Errorf("audit: %s: invalid announcement: %w", s.Algo, err)
	}
	return &fedJob{a: a, spec: spec, job: job, plan: plan, sites: sites}, nil
}

// switchNoise is a dp.Noise whose source is set per trial, so that a
// site (which keeps its SiteEnv) is created once and run many times.
type switchNoise struct{ inner dp.Noise }

func (n *switchNoise) AddGaussian(dst []float64, s float64)  { n.inner.AddGaussian(dst, s) }
func (n *switchNoise) AddLaplace(dst []float64, b float64)   { n.inner.AddLaplace(dst, b) }
func (n *switchNoise) AddL2Laplace(dst []float64, b float64) { n.inner.AddL2Laplace(dst, b) }
func (n *switchNoise) Secure() bool                          { return false }
func (n *switchNoise) Name() string                          { return "federated audit: " + n.inner.Name() }

// fedSides are the audited site's half of the job on D (0) and D' (1):
// created once (the partition of a partitioned site is drawn then, from
// the same seed on both sides), run with per-trial noise and sampling.
type fedSides struct {
	j     *fedJob
	cfg   fedConfig
	site  [2]fedalgo.Site
	noise [2]*switchNoise
	src   [2]*rand.PCG
	init  []float64
}

func newSides(j *fedJob, cfg fedConfig, R float64) (*fedSides, error) {
	c := &fedSides{j: j, cfg: cfg}
	loss, err := pairwise.LossByName(pairwise.TaskAUC, j.job.Loss)
	if err != nil {
		return nil, err
	}
	n := j.sites[0].Records
	ds := pairData(wbConfig{reg: regime{n: n}, con: cfg.con, pos: cfg.pos}, R)
	for side := range ds {
		obj, err := pairwise.NewObjective(ds[side], pairwise.ObjectiveConfig{Task: pairwise.TaskAUC, Loss: loss, Lambda: j.job.Lambda, Constraint: "l2", Radius: j.job.ParamRadius})
		if err != nil {
			return nil, err
		}
		c.noise[side] = &switchNoise{inner: dp.NewSeededNoise(0)}
		c.src[side] = rand.NewPCG(cfg.sampleSeed, 0x5eed)
		site, err := j.a.NewSite(j.job, fedalgo.SiteEnv{Data: ds[side], Obj: obj, Noise: c.noise[side], Rand: rand.New(c.src[side])})
		if err != nil {
			return nil, fmt.Errorf("audit: %s: the site refuses the job: %w", j.a.Name(), err)
		}
		c.site[side] = site
	}
	c.init = make([]float64, wbDim)
	c.init[0] = cfg.con.w0 * j.job.ParamRadius
	return c, nil
}

// fedRun is one run of the audited site over every phase.
type fedRun struct {
	sent  [][]float64 // every update's Model and Last, in order
	rels  []*fedalgo.Release
	calls []int // noise calls made during each phase
}

// run runs every phase of the job at side with noise (scaled by the
// spec's noise scale), the broadcast being the algorithm's combination of
// this site's updates; rec counts the noise calls per phase.
func (c *fedSides) run(ctx context.Context, side int, noise dp.Noise, scale float64, count func() int) (*fedRun, error) {
	if scale != 1 {
		noise = dp.ScaleNoise(noise, scale)
	}
	c.noise[side].inner = noise
	c.src[side].Seed(c.cfg.sampleSeed, 0x5eed)
	job := c.j.job
	comb, err := c.j.a.NewCombiner(job, nil)
	if err != nil {
		return nil, err
	}
	rule, err := protocol.ParseAggregation(job.Aggregation)
	if err != nil {
		return nil, err
	}
	model := slices.Clone(c.init)
	out := &fedRun{}
	for phase := 1; phase <= job.Phases; phase++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		before := count()
		u, rel, err := c.site[side].Step(ctx, phase, model)
		if err != nil {
			return nil, fmt.Errorf("audit: %s: phase %d: %w", job.Algo, phase, err)
		}
		out.calls = append(out.calls, count()-before)
		out.sent = append(out.sent, slices.Clone(u.Model), slices.Clone(u.Last))
		out.rels = append(out.rels, rel)
		u.Job, u.Phase, u.Site = job.Job, phase, job.Sites[0]
		model = comb.Combine(model, []*protocol.SiteUpdate{u}, rule)
	}
	return out, nil
}

// fedTrial is what one trial of a view measures.
type fedTrial struct {
	llr, loss, stated, attained float64
	releases                    int
	sigma                       float64
	kind                        mechKind
	notes                       []string
	// subsampled reference (see whitebox.go, referenceEpsilon)
	subsampled         bool
	sampleRate         float64
	refSens, refSigmas []float64
	coords             int64
}

// plainTrial runs the site with real noise on side, replays the other side
// along the transcript and returns Λ (see trial in whitebox.go).
func (c *fedSides) plainTrial(ctx context.Context, side int, seed uint64, scale float64, check bool) (fedTrial, error) {
	name := c.j.a.Name()
	rec := &recorder{inner: dp.NewSeededNoise(seed)}
	r0, err := c.run(ctx, side, rec, scale, func() int { return len(rec.rel) })
	if err != nil {
		return fedTrial{}, err
	}
	other := &replayer{script: rec.rel}
	r1, err := c.run(ctx, 1-side, other, scale, func() int { return len(other.got) })
	if err != nil {
		return fedTrial{}, err
	}
	if other.err == nil && len(other.got) != len(rec.rel) {
		other.err = fmt.Errorf("%d noisy releases on one dataset, %d on the other: the number of releases depends on the data", len(rec.rel), len(other.got))
	}
	for k := 0; other.err == nil && k < len(r0.sent); k++ {
		if !slices.Equal(r0.sent[k], r1.sent[k]) {
			other.err = fmt.Errorf("under the same noisy releases the site sends different updates on D and D' (phase %d): it sends something the noise does not cover", k/2+1)
		}
	}
	if other.err != nil {
		return fedTrial{}, &replayError{fmt.Errorf("audit: %s: %w", name, other.err)}
	}
	if check {
		same := &replayer{script: rec.rel}
		if _, err := c.run(ctx, side, same, scale, func() int { return len(same.got) }); err != nil {
			return fedTrial{}, err
		}
		for t := 0; same.err == nil && t < len(rec.rel); t++ {
			if t >= len(same.got) || !slices.Equal(same.got[t].pre, rec.rel[t].pre) {
				same.err = fmt.Errorf("replaying release %d on the same data gave a different pre-noise value", t+1)
			}
		}
		if same.err != nil {
			return fedTrial{}, &replayError{fmt.Errorf("audit: %s: white-box replay is not valid: %w", name, same.err)}
		}
	}
	var pre [2][]release
	pre[side], pre[1-side] = rec.rel, other.got
	// Stated sensitivities per noise call: a phase with one noise call and
	// a stated Sensitivity; a subsampled phase (Steps calls of add/remove
	// Δ' each: replace-one 2Δ' with the sampling known).
	var sens, sigmas []float64
	known, sub := true, false
	out := fedTrial{releases: len(rec.rel), stated: math.NaN(), attained: math.NaN()}
	for k, rel := range r0.rels {
		calls := r0.calls[k]
		switch {
		case rel == nil:
			known = known && calls == 0
		case rel.Mechanism == "subsampled-gaussian" || rel.SampleRate > 0:
			sub = true
			if rel.Sensitivity > 0 && rel.Steps == calls {
				out.sampleRate = rel.SampleRate
				for range calls {
					sens, sigmas = append(sens, 2*rel.Sensitivity), append(sigmas, rel.Sigma)
				}
			} else {
				known = false
			}
		case calls == 1 && rel.Sensitivity > 0:
			sens, sigmas = append(sens, rel.Sensitivity), append(sigmas, rel.Sigma)
		default:
			known = false
		}
	}
	known = known && len(sens) == len(rec.rel)
	if sub {
		out.subsampled = true
		if known {
			out.refSens, out.refSigmas = sens, sigmas
			if len(rec.rel) > 0 {
				out.coords = int64(len(rec.rel)) * int64(len(rec.rel[0].out))
			}
		}
	}
	if known {
		out.stated, out.attained = 0, 0
	}
	for t, r := range rec.rel {
		llr, loss, realized := releaseLLR(r, pre[0][t].pre, pre[1][t].pre)
		out.llr += llr
		out.loss += loss
		out.kind = r.kind
		if t == 0 {
			out.sigma = r.scale
		}
		if known {
			st := sens[t] / r.scale
			if r.kind == gaussianMech {
				st *= st
			}
			out.stated += st
			out.attained = math.Max(out.attained, realized/sens[t])
			if want := sigmas[t] * scale; math.Abs(want-r.scale) > 1e-9*want {
				out.notes = append(out.notes, fmt.Sprintf("release %d: the noise drawn has scale %.6g, the site's ledger entry states %.6g (×%g audit scaling)", t+1, r.scale, want, scale))
			}
		}
	}
	return out, nil
}

// releaseLLR is one release's contribution to Λ = log p(y | D')/p(y | D)
// (a: pre-noise value on D, b: on D'), its realized privacy loss (‖a −
// b‖²/σ² Gaussian, ‖a − b‖₁/b Laplace, ‖a − b‖₂/b ℓ2-Laplace) and its
// realized sensitivity in its own norm (whitebox.go's trial, one release).
func releaseLLR(r release, a, b []float64) (llr, loss, realized float64) {
	var l2a, l2b, l1a, l1b, l1, l2 float64
	for i, y := range r.out {
		da, db, dd := y-a[i], y-b[i], a[i]-b[i]
		l2a += da * da
		l2b += db * db
		l1a += math.Abs(da)
		l1b += math.Abs(db)
		l1 += math.Abs(dd)
		l2 += dd * dd
	}
	s := r.scale
	switch r.kind {
	case gaussianMech:
		return (l2a - l2b) / (2 * s * s), l2 / (s * s), math.Sqrt(l2)
	case laplaceMech:
		return (l1a - l1b) / s, l1 / s, l1
	case l2LaplaceMech:
		return (math.Sqrt(l2a) - math.Sqrt(l2b)) / s, math.Sqrt(l2) / s, math.Sqrt(l2)
	}
	return 0, 0, 0
}

// fedSearchSpace are the configurations the search tries (file comment).
// The losses: the spec's, or the algorithm's default and every AUC loss
// (a loss its Configure refuses is skipped by the search).
func fedSearchSpace(s FedSpec) []fedConfig {
	losses := []string{s.Loss}
	if s.Loss == "" {
		losses = []string{"", "logistic", "hinge", "square"}
	}
	n := s.Records
	var out []fedConfig
	for _, loss := range losses {
		for _, B := range []float64{0, 4} {
			for _, con := range constructions {
				for _, pos := range []int{0, n / 2, 3 * n / 4, n - 1} {
					out = append(out, fedConfig{loss: loss, con: con, pos: pos, B: B, sampleSeed: s.Seed*1000 + 1})
				}
			}
		}
	}
	return out
}

// fedSeeds is the number of sampling seeds tried for the worst
// configuration (the sampling and the partitions of the SGD-type and
// partition-based sites; the same seed on both sides).
const fedSeeds = 32

// measured are a view's two rounds of trials and their diagnostics.
type measured struct {
	lb               float64
	test             thresholdTest
	fp, fn           int
	realized, stated float64
	attained         float64
	releases         int
	kind             mechKind
	sigma            float64
	notes            []string
	last             fedTrial
}

// measure runs a calibration round (half the trials) and a measurement
// round of a view's trial function and bounds ε (whitebox.go's whiteBox).
func measure(ctx context.Context, trials int, confidence, delta float64, seed uint64, stream int, trial func(side int, seed uint64, check bool) (fedTrial, error)) (*measured, error) {
	var samples [2][2][]float64
	m := &measured{}
	var sumLoss, sumStated float64
	seen := map[string]bool{}
	for round := 0; round < 2; round++ {
		N := trials
		if round == 0 {
			N = max(10, trials/2)
		}
		for side := 0; side < 2; side++ {
			s := make([]float64, N)
			for k := 0; k < N; k++ {
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("audit: interrupted: %w", err)
				}
				tr, err := trial(side, seedOf(seed, stream+2*round+side, k), round == 0 && k == 0)
				if err != nil {
					return nil, err
				}
				s[k] = tr.llr
				if round == 1 {
					m.last = tr
					sumLoss += tr.loss
					sumStated += tr.stated
					m.attained = math.Max(m.attained, tr.attained)
					m.releases, m.kind, m.sigma = tr.releases, tr.kind, tr.sigma
					for _, n := range tr.notes {
						if !seen[n] {
							seen[n] = true
							m.notes = append(m.notes, n)
						}
					}
				}
			}
			sort.Float64s(s)
			samples[round][side] = s
		}
	}
	a2 := (1 - confidence) / 2
	m.test = chooseTest(samples[0][0], samples[0][1], a2, delta, false)
	m.lb, m.fp, m.fn = m.test.bound(samples[1][0], samples[1][1], a2, delta)
	n := float64(2 * trials)
	m.realized, m.stated = sumLoss/n, sumStated/n
	if m.kind == gaussianMech {
		m.realized, m.stated = math.Sqrt(m.realized), math.Sqrt(m.stated)
	}
	if math.IsNaN(m.stated) {
		m.stated, m.attained = 0, 0
	}
	return m, nil
}

// search returns the configuration of space with the largest pilot
// realized loss; build makes a runnable case of a configuration (nil, err
// when the algorithm refuses it), pilot scores it.
func fedSearch[C any](ctx context.Context, space []fedConfig, build func(fedConfig) (C, error), pilot func(C) (fedTrial, error)) (C, fedConfig, error) {
	var best C
	var bestCfg fedConfig
	bestScore := -1.0
	var firstErr error
	for _, cfg := range space {
		if err := ctx.Err(); err != nil {
			return best, bestCfg, err
		}
		c, err := build(cfg)
		var tr fedTrial
		if err == nil {
			tr, err = pilot(c)
		}
		var re *replayError
		if errors.As(err, &re) {
			return best, bestCfg, err // a finding, not a configuration to skip
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if tr.loss > bestScore {
			best, bestCfg, bestScore = c, cfg, tr.loss
		}
	}
	if bestScore < 0 {
		return best, bestCfg, fmt.Errorf("audit: no worst-case configuration runs: %w", firstErr)
	}
	// The sampling seed of the worst configuration (stopping after two
	// when it makes no difference).
	first := bestScore
	for k := 2; k <= fedSeeds; k++ {
		cfg := bestCfg
		cfg.sampleSeed += uint64(k - 1)
		c, err := build(cfg)
		if err != nil {
			return best, bestCfg, err
		}
		tr, err := pilot(c)
		if err != nil {
			return best, bestCfg, err
		}
		if tr.loss > bestScore {
			best, bestCfg, bestScore = c, cfg, tr.loss
		}
		if k == 2 && tr.loss == first {
			break
		}
	}
	return best, bestCfg, nil
}

// auditPlain audits the plain site release.
func auditPlain(ctx context.Context, a fedalgo.Algorithm, s FedSpec) (*FedAuditResult, error) {
	type key struct {
		B    float64
		loss string
	}
	jobs := map[key]*fedJob{}
	var planErr error
	build := func(cfg fedConfig) (*fedSides, error) {
		j, ok := jobs[key{cfg.B, cfg.loss}]
		if !ok {
			var err error
			if j, err = planJob(a, s, cfg.B, cfg.loss); err != nil {
				if planErr == nil && cfg.loss == s.Loss {
					planErr = err
				}
				return nil, err
			}
			jobs[key{cfg.B, cfg.loss}] = j
		}
		return newSides(j, cfg, s.R)
	}
	pilot := func(c *fedSides) (fedTrial, error) {
		return c.plainTrial(ctx, 0, seedOf(s.Seed, 1, 0), s.NoiseScale, true)
	}
	c, cfg, err := fedSearch(ctx, fedSearchSpace(s), build, pilot)
	if err != nil {
		if len(jobs) == 0 && planErr != nil {
			return nil, planErr // the job itself cannot be planned
		}
		return nil, fmt.Errorf("audit: %s: %w", a.Name(), err)
	}
	m, err := measure(ctx, s.Trials, s.Confidence, s.Delta, s.Seed, 2, func(side int, seed uint64, check bool) (fedTrial, error) {
		return c.plainTrial(ctx, side, seed, s.NoiseScale, check)
	})
	if err != nil {
		return nil, err
	}
	v := FedView{View: ViewSiteRelease, What: fmt.Sprintf("the audited site's updates over the job's %d phase(s) (every noisy release of its site code, white-box)", c.j.job.Phases),
		ClaimedEpsilon: s.Epsilon, Claim: "the job's per-site (ε, δ), which the site certifies and charges",
		EpsilonLowerBound: m.lb, Consistent: m.lb <= s.Epsilon,
		Statistic: fmt.Sprintf("log-likelihood ratio Λ over the %d %s releases (pre-noise values on D and D' along the observed transcript), Λ > threshold ⇒ D'", m.releases, m.kind),
		Threshold: m.test.Thr, FPR: float64(m.fp) / float64(s.Trials), FNR: float64(m.fn) / float64(s.Trials),
		Releases: m.releases, Mechanism: m.kind.String(), Sigma: m.sigma, RealizedLoss: m.realized, StatedLoss: m.stated, SensitivityAttained: m.attained, Notes: m.notes}
	if m.last.subsampled {
		ref, mu, err := referenceEpsilon(trialResult{releases: m.last.releases, refSens: m.last.refSens, refSigmas: m.last.refSigmas, coords: m.last.coords}, s.Epsilon, s.Delta)
		if err != nil {
			return nil, fmt.Errorf("audit: %s: %w", a.Name(), err)
		}
		v.ReferenceEpsilon, v.Reference, v.Consistent = ref, ReferenceKnownSampling, m.lb <= ref
		v.Notes = append(v.Notes, fmt.Sprintf("subsampled site steps (q = %.4g): the test knows the sampling, which voids the amplification; ε_lb is held to the reference ε = %.4g the %d steps certify without it (μ = %.4g), not to the claimed ε = %g", m.last.sampleRate, ref, m.last.releases, mu, s.Epsilon))
	}
	if m.stated == 0 {
		v.Notes = append(v.Notes, "the site's ledger entries do not state one sensitivity per noisy release: stated loss and attainment not computed")
	}
	return fedResult(a, s, c.j, cfg, []FedView{v}), nil
}

func fedResult(a fedalgo.Algorithm, s FedSpec, j *fedJob, cfg fedConfig, views []FedView) *FedAuditResult {
	res := &FedAuditResult{Algorithm: a.Name(), LocalAlgo: s.LocalAlgo, SecureAggregation: s.SecureAggregation, Sites: s.Sites, Records: s.Records,
		Phases: j.job.Phases, ClaimedEpsilon: s.Epsilon, Delta: s.Delta, Confidence: s.Confidence, Trials: s.Trials, NoiseScale: s.NoiseScale,
		Tamper: s.Tamper, Loss: j.job.Loss, Canary: cfg.describe(s.Records, s.R, j.job.ParamRadius), Views: views, Consistent: true}
	for _, v := range views {
		res.Consistent = res.Consistent && v.Consistent
	}
	return res
}

// Summary is a one-line description of a view (for the CLI).
func (v FedView) Summary() string {
	bar := fmt.Sprintf("claimed ε = %.4g", v.ClaimedEpsilon)
	if v.Reference != "" {
		bar += fmt.Sprintf(", reference ε = %.4g", v.ReferenceEpsilon)
	}
	verdict := "consistent"
	if !v.Consistent {
		verdict = "VIOLATED: the view leaks more than its claim"
	}
	return strings.TrimSpace(fmt.Sprintf("%s: %s; ε_lb = %.3f (FPR %.4f, FNR %.4f), %d %s release(s), σ = %.4g, realized loss %.4g (stated %.4g) — %s",
		v.View, bar, v.EpsilonLowerBound, v.FPR, v.FNR, v.Releases, v.Mechanism, v.Sigma, v.RealizedLoss, v.StatedLoss, verdict))
}
