package fedalgo

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg"
)

// Secure aggregation of a job's releases (package secagg, secagg/round),
// for any algorithm whose per-phase release is a SUM of one vector per
// site (SumReleaser). The coordinator and the workers drive the round;
// they know the algorithm only through the interfaces below.
//
// Mechanism: the distributed discrete Gaussian (dp.DDG). Every site clips
// its vector to ‖x‖ ≤ c, rotates, scales by 1/γ, rounds randomly and adds
// N_ℤ(0, s²) integer noise (dp.DDG.Encode with its noise source; a private
// run uses dp.NewSecureNoise), then secure aggregation reveals only the sum
// mod 2^b of the survivors' encodings. The scale s is calibrated by
// dp.CalibrateDDG so that the releases a record takes part in (Phases
// rounds composed sequentially, or one for phases on disjoint subsets:
// SumReleases), whose sums hold the noise of at least t sites (t the
// secagg threshold: a round with fewer survivors aborts before anything is
// unmasked), are (ε, δ − δ_f)-DP for every record of every site (δ_f:
// SumFailure, 0 for most). round.Charge computes that guarantee at the
// floor t before the masked vector leaves the site; the worker refuses a
// job whose parameters do not certify its ε and charges its ledger, before
// each round, the certified guarantee of the rounds so far (never less
// than it gets). secure_phases.go states the composition and the
// multi-phase algorithms (fed-dp-gd-grad, fed-dp-local-sgd, fed-dpegd).
//
// Removable copies (complete graph; dp/ddg_removable.go). A threshold
// t < K makes each site add the noise t − κ survivors need, so a round
// nobody drops used to hold K/(t − κ) times the noise its guarantee needs
// (1.33× at K = 4, 1.45× at 16). Each site now draws its noise as m iid
// copies of N_ℤ(0, s²), keep of them from its secure source and m − keep
// from a fresh seed (Floors: dp.RemovableSplit(K, t, κ), the same at
// every site and the plan, from public numbers). It reveals the seed only
// if the signed survivor set holds all K sites (secagg.Client.RevealWhenAll),
// and the coordinator subtracts those copies (dp.DDG.Remove). s is
// calibrated for (t − κ)·m copies: what t − κ honest survivors hold when
// someone drops (nothing revealed), and at most what the K − κ honest
// sites' kept copies hold when nobody does. A round nobody drops then
// holds K·keep/((t − κ)·m) of the central noise: with κ = 0, 1 when
// m = K ≤ 16, and at most 1 + 1/(16·t/K) < 1.125 otherwise (1.067 at
// worst for K ≤ 300, TestRemovableSplit); κ > 0 adds the colluders' own
// copies, K/(K − κ). The sparse variant keeps one copy per site: its
// floor of honest shares (secagg/sparsefloor.go) was argued for one copy,
// and what a coordinator could unmask after a full set's reveal there has
// not been.
//
// Job parameters travel as the job's options (JobAnnounce.Options), so
// that every site reads the same public parameters:
//
//	secagg            1: the job's releases are summed by secure aggregation
//	secagg-threshold  t, the survivors a round needs (0: ⌊2K/3⌋+1)
//	secagg-timeout    ticks a round step waits after its last answer, per
//	                  16 sites (round.StepTimeout; 0: 50)
//	secagg-colluders  κ, the sites the consortium's policy lets collude with
//	                  the coordinator (default 0): s is calibrated for t − κ
//	                  honest shares, so the guarantee against the coordinator
//	                  with κ colluders is the job's (ε, δ)
//	secagg-keep-all   1: every site draws all its noise from its secure
//	                  source (no removable copies: Floors); a round nobody
//	                  drops then holds K/(t − κ) of the central noise, and
//	                  a site's local-only guarantee (its own noise alone) is
//	                  its whole share's. 0, the default: removable copies
//	secagg-degree     k > 0 runs the sparse variant (SecAgg+, secagg/graph.go):
//	                  each site masks with and shares among ≈ k random
//	                  neighbours; its local threshold ℓ and withheld bound w
//	                  follow from (K, κ, k) by secagg.SparseRule, and s is calibrated for the
//	                  sparse floor of honest shares (secagg.SparseFloor)
//	                  instead of t − κ. 0, the default: the complete graph
//	secagg-clip, secagg-sens, secagg-scale, secagg-gamma, secagg-rotation
//	                  the DDG's c, Δ, s, γ and public rotation seed, set by
//	                  the coordinator's plan (PlanSecAgg), never by a client
//	secagg-fail       the part of δ spent outside the DDG (SumFailure), set
//	                  by the plan
//
// A site trusts none of the planned numbers (SiteSecAgg): it recomputes Δ,
// δ_f and the rotation seed and refuses other values, and computes its
// guarantee from s, γ, c with its own Δ, δ_f and vector length.

// Option names of secure aggregation.
const (
	OptSecAgg          = "secagg"
	OptSecAggThreshold = "secagg-threshold"
	OptSecAggTimeout   = "secagg-timeout"
	OptSecAggColluders = "secagg-colluders"
	OptSecAggDegree    = "secagg-degree"
	OptSecAggKeepAll   = "secagg-keep-all"
	optSecAggClip      = "secagg-clip"
	optSecAggSens      = "secagg-sens"
	optSecAggScale     = "secagg-scale"
	optSecAggGamma     = "secagg-gamma"
	optSecAggRotation  = "secagg-rotation"
	optSecAggFail      = "secagg-fail"
)

// MechanismDDG names the noise of a secure aggregation release in the
// ledgers: each site's share of a distributed discrete Gaussian (its σ is
// s·γ; the guarantee counts at least t − κ shares, see round.Charge).
const MechanismDDG = "distributed-discrete-gaussian"

// DefaultSecAggTimeout is the default number of ticks a round step waits.
const DefaultSecAggTimeout = 50

// SumReleaser is implemented by an algorithm whose every phase releases
// the sum over sites of one vector per site: the coordinator may then run
// the phase as a secure aggregation round (the job's option secagg = 1).
type SumReleaser interface {
	// SumShape returns, for a planned job, the length of a site's vector,
	// a bound c on its ℓ2 norm that holds at every site (from public
	// record counts) and its record-level ℓ2 sensitivity Δ ≤ 2c.
	SumShape(spec *Spec, sites []SiteInfo, params int) (dim int, clip, sens float64, err error)
	// SiteSumShape returns, at a site of records records, the length of
	// its vector and its record-level ℓ2 sensitivity before clipping,
	// computed from the announced job's public parameters (task, loss,
	// R, B, λ, params) and the site's own record count alone — never from
	// the announced secagg-sens, which the site checks against it
	// (SiteSecAgg). It must be the sensitivity of the vector SumVector
	// returns under this announcement.
	SiteSumShape(job *protocol.JobAnnounce, records int) (dim int, sens float64, err error)
}

// SumTasker is implemented by a SumReleaser that releases a sum for some
// tasks only: Configure refuses secure aggregation for the others before
// any job starts (instead of the coordinator's plan aborting it).
type SumTasker interface {
	SumTask(task string) error
}

// SumSite is implemented by the Site of a SumReleaser: the phase's
// vector before any noise (the worker encodes, charges and masks it).
type SumSite interface {
	SumVector(ctx context.Context, phase int, model []float64) (vec []float64, records int, err error)
}

// SumCombiner is implemented by the Combiner of a SumReleaser: it takes
// the decoded noisy sum of the vectors of the sites in included (in
// announcement order, with their public record counts), whose noise has standard deviation sigma per
// coordinate, and returns the next broadcast model. Median and trimmed
// mean cannot be computed from a masked sum: such a job is refused.
type SumCombiner interface {
	CombineSum(model, sum []float64, included []SiteInfo, sigma float64) []float64
}

// SecAgg are a job's secure aggregation parameters (from its options).
type SecAgg struct {
	Threshold, Timeout, Colluders int
	// Degree is the sparse variant's expected degree (0: complete graph).
	Degree int
	// KeepAll turns removable noise copies off (option secagg-keep-all).
	KeepAll                  bool
	Clip, Sens, Scale, Gamma float64
	Rotation                 uint64
	// Fail is the part of the job's δ spent outside the DDG: the
	// probability of the event outside which the sensitivity Sens holds
	// (SumFailure; 0 for a bound that always holds). The DDG certifies
	// (ε, δ − Fail).
	Fail    float64
	planned bool
}

// IsSecAggOption reports whether name is one of secure aggregation's
// options (generic: checked here, not by the algorithm).
func IsSecAggOption(name string) bool {
	return name == OptSecAgg || strings.HasPrefix(name, OptSecAgg+"-")
}

// SecAggRequested reports whether options ask for secure aggregation.
func SecAggRequested(options protocol.Options) bool {
	for _, o := range options {
		if o.Name == OptSecAgg && o.Value == 1 {
			return true
		}
	}
	return false
}

// splitSecAgg separates secure aggregation's options from the
// algorithm's own ones and checks them.
func splitSecAgg(a Algorithm, options protocol.Options) (rest protocol.Options, err error) {
	var sa []protocol.Option
	for _, o := range options {
		if IsSecAggOption(o.Name) {
			sa = append(sa, o)
		} else {
			rest = append(rest, o)
		}
	}
	if len(sa) == 0 {
		return rest, nil
	}
	if _, ok := a.(SumReleaser); !ok {
		return nil, fmt.Errorf("%s does not release a sum of site vectors: secure aggregation (option %s) needs one that does (%s, %s, %s, %s, %s, %s, %s or %s)", a.Name(), OptSecAgg, FedDPLDA, FedDPSSP, FedDPSSPMean, FedDPSPAUC, FedDPPairSGD, FedDPGDGrad, FedDPLocalSGD, FedDPEGD)
	}
	if _, err := parseSecAgg(sa); err != nil {
		return nil, err
	}
	return rest, nil
}

// parseSecAgg reads and checks secure aggregation's options.
func parseSecAgg(options []protocol.Option) (*SecAgg, error) {
	s := &SecAgg{}
	on := false
	whole := func(name string, v float64, lo, hi float64) (int, error) {
		if v != math.Trunc(v) || v < lo || v > hi {
			return 0, fmt.Errorf("option %s = %v must be a whole number in [%g, %g]", name, v, lo, hi)
		}
		return int(v), nil
	}
	var err error
	n := 0
	for _, o := range options {
		if !IsSecAggOption(o.Name) {
			continue
		}
		n++
		v := o.Value
		switch o.Name {
		case OptSecAgg:
			if v != 1 {
				return nil, fmt.Errorf("option %s = %v: give 1 to sum the releases by secure aggregation, or leave it out", OptSecAgg, v)
			}
			on = true
		case OptSecAggThreshold:
			if s.Threshold, err = whole(o.Name, v, 0, protocol.MaxSites); err != nil {
				return nil, err
			}
		case OptSecAggTimeout:
			if s.Timeout, err = whole(o.Name, v, 0, 1e6); err != nil {
				return nil, err
			}
		case OptSecAggColluders:
			if s.Colluders, err = whole(o.Name, v, 0, protocol.MaxSites); err != nil {
				return nil, err
			}
		case OptSecAggDegree:
			if s.Degree, err = whole(o.Name, v, 0, protocol.MaxSites); err != nil {
				return nil, err
			}
		case OptSecAggKeepAll:
			if v != 0 && v != 1 {
				return nil, fmt.Errorf("option %s = %v: give 1 to draw every noise copy from the sites' secure sources (no removable copies), 0 or nothing for the default", o.Name, v)
			}
			s.KeepAll = v == 1
		case optSecAggClip, optSecAggSens, optSecAggScale, optSecAggGamma:
			if !(v > 0) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("option %s = %v must be finite and > 0", o.Name, v)
			}
			switch o.Name {
			case optSecAggClip:
				s.Clip = v
			case optSecAggSens:
				s.Sens = v
			case optSecAggScale:
				s.Scale = v
			default:
				s.Gamma = v
			}
			s.planned = true
		case optSecAggFail:
			if !(v >= 0 && v < 1) {
				return nil, fmt.Errorf("option %s = %v must be in [0, 1)", o.Name, v)
			}
			s.Fail = v
		case optSecAggRotation:
			r, err := whole(o.Name, v, 0, 1<<53)
			if err != nil {
				return nil, err
			}
			s.Rotation = uint64(r)
		default:
			return nil, fmt.Errorf("unknown secure aggregation option %q (secagg, secagg-threshold, secagg-timeout, secagg-colluders, secagg-degree, secagg-keep-all)", o.Name)
		}
	}
	if n > 0 && !on {
		return nil, fmt.Errorf("secure aggregation options given without %s = 1", OptSecAgg)
	}
	if !on {
		return nil, nil
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultSecAggTimeout
	}
	return s, nil
}

// SecAggOf returns the secure aggregation parameters of an announced job
// (nil when it has none); they must be planned (PlanSecAgg) and the
// threshold fit the participants.
func SecAggOf(job *protocol.JobAnnounce) (*SecAgg, error) {
	s, err := parseSecAgg(job.Options)
	if err != nil || s == nil {
		return s, err
	}
	k := len(job.Sites)
	switch {
	case !s.planned || s.Clip == 0 || s.Sens == 0 || s.Scale == 0 || s.Gamma == 0:
		return nil, fmt.Errorf("job %s asks for secure aggregation without the planned DDG parameters (clip, sensitivity, scale, γ)", job.Job)
	case k < 2:
		return nil, fmt.Errorf("job %s: secure aggregation needs ≥ 2 sites, got %d", job.Job, k)
	case s.Threshold < 2 || s.Threshold > k:
		return nil, fmt.Errorf("job %s: secure aggregation threshold %s = %d must be in [2, %d]", job.Job, OptSecAggThreshold, s.Threshold, k)
	case 2*s.Threshold <= k:
		return nil, fmt.Errorf("job %s: secure aggregation threshold %s = %d must exceed half the %d sites (≥ %d): with t ≤ K/2 two disjoint sets of t sites could each be unmasked, and their sums differenced", job.Job, OptSecAggThreshold, s.Threshold, k, k/2+1)
	case s.Colluders >= s.Threshold:
		return nil, fmt.Errorf("job %s: %s = %d colluders must be fewer than the threshold %d", job.Job, OptSecAggColluders, s.Colluders, s.Threshold)
	case 2*s.Threshold <= k+s.Colluders:
		return nil, fmt.Errorf("job %s: secure aggregation threshold %s = %d with %s = %d among %d sites: κ colluders sign any survivor set, so two different sets could each gather t signatures unless 2t > K + κ (t ≥ %d)", job.Job, OptSecAggThreshold, s.Threshold, OptSecAggColluders, s.Colluders, k, (k+s.Colluders)/2+1)
	case s.Fail > 0 && !(s.Fail < job.Delta):
		return nil, fmt.Errorf("job %s: secure aggregation's failure probability %g must be below the job's δ = %g", job.Job, s.Fail, job.Delta)
	}
	if _, err := s.Floors(k); err != nil {
		return nil, fmt.Errorf("job %s: %w", job.Job, err)
	}
	return s, nil
}

// Floors are a round's sparse-variant parameters (zero for the complete
// graph), each site's noise copies (dp.RemovableSplit) and the numbers of
// honest noise copies every unmasked sum holds: against the coordinator
// alone, and against it with κ colluders.
type Floors struct {
	Local, Withheld int // ℓ and w (secagg.SparseRule)
	// Copies m is the number of N_ℤ(0, s²) draws a site adds per
	// coordinate; Keep of them come from its secure source, the other
	// m − Keep are removable (dp/ddg_removable.go): revealed and
	// subtracted when every site is in the sum. 1 and 1 with the sparse
	// variant (no removable copies).
	Copies, Keep     int
	Floor, Collusion int
}

// Floors returns them for a round of k sites. The complete graph: m and
// keep by dp.RemovableSplit(k, t, κ), and the floors min(k·keep, t·m)
// and min((k − κ)·keep, (t − κ)·m) = (t − κ)·m — every site in the sum
// with the honest ones' removable copies subtracted, or a dropout and
// nothing subtracted (m = keep = 1: t and t − κ sites; also with
// secagg-keep-all). The sparse graph:
// ℓ and w by secagg.SparseRule (which counts the κ colluders) and
// secagg.SparseFloor's floors, one copy per site. A pure function of the
// job's public parameters: the plan and every site compute it alike, and
// each site charges with its own.
func (s *SecAgg) Floors(k int) (Floors, error) {
	if s.Degree == 0 && s.KeepAll {
		return Floors{Copies: 1, Keep: 1, Floor: s.Threshold, Collusion: s.Threshold - s.Colluders}, nil
	}
	if s.Degree == 0 {
		m, keep := dp.RemovableSplit(k, s.Threshold, s.Colluders)
		return Floors{Copies: m, Keep: keep, Floor: min(k*keep, s.Threshold*m), Collusion: min((k-s.Colluders)*keep, (s.Threshold-s.Colluders)*m)}, nil
	}
	if s.Degree > k-2 {
		return Floors{}, fmt.Errorf("secure aggregation degree %s = %d for %d sites must be at most %d (K − 2; give 0 for the complete graph)", OptSecAggDegree, s.Degree, k, k-2)
	}
	r, err := secagg.SparseRule(k, s.Colluders, s.Degree, s.Threshold)
	if err != nil {
		return Floors{}, fmt.Errorf("secure aggregation %s = %d: %w", OptSecAggDegree, s.Degree, err)
	}
	return Floors{Local: r.Local, Withheld: r.Withheld, Copies: 1, Keep: 1, Floor: secagg.SparseFloor(k, 0, s.Degree, r.Local, r.Withheld, s.Threshold), Collusion: r.Floor}, nil
}

// SumNoiseFactor is ς, the noise of the sum of k sites' releases over one
// central release's (the same (ε, δ) on all their records), for a job of
// these options: √k without secure aggregation (k independent site
// noises); with it, the no-dropout sum's √(k·keep/((t − κ)·m)) — the
// sites' kept copies against the (t − κ)·m copies the calibration counts
// (Floors; all copies with the sparse variant or secagg-keep-all, where it
// is √(k/(t − κ)) or the sparse floor's) — ≈ 1 with removable copies; 1
// for one site. From public numbers only: the default rules read it
// (fed-dp-pair-sgd's step, dpalgo.RecommendFederated).
func SumNoiseFactor(options protocol.Options, k int) float64 {
	if k < 2 {
		return 1
	}
	factor := math.Sqrt(float64(k))
	if !SecAggRequested(options) {
		return factor
	}
	sa, err := parseSecAgg(options)
	if err != nil || sa == nil {
		return factor
	}
	if sa.Threshold < 2 {
		sa.Threshold = secagg.DefaultThreshold(k)
	}
	fl, err := sa.Floors(k)
	if err != nil || fl.Collusion < 1 {
		return math.Sqrt(float64(k) / float64(sa.Threshold))
	}
	return math.Sqrt(float64(k) * float64(fl.Keep) / float64(fl.Collusion))
}

// Removable is the number of a site's noise copies that are removable.
func (f Floors) Removable() int { return f.Copies - f.Keep }

// sumFailure is a's δ_f at δ (SumFailure; 0 for a bound that always
// holds, or an algorithm that is not registered).
func sumFailure(a Algorithm, delta float64) float64 {
	if f, ok := a.(SumFailure); ok {
		return f.SumFailure(delta)
	}
	return 0
}

// RotationSeed is the public seed of a job's DDG rotation, derived from
// the job's seed (reproducible; 53 bits so that it travels exactly as an
// option value): the plan sets it, every site recomputes it.
func RotationSeed(seed uint64) uint64 {
	return (seed*0x9e3779b97f4a7c15 ^ 0x5ec0a99) >> 11
}

// SiteSecAgg checks an announced job's secure aggregation at a site of
// records records and returns the parameters the site encodes and
// accounts with (nil when the job has none), and its vector's length.
// Zero trust in the coordinator: every number that sets the site's noise,
// sensitivity or accounting is the site's own or checked against it, and
// a mismatch is refused with the option's name, the value received and
// the value required.
//
//   - Δ (secagg-sens): recomputed (SumReleaser.SiteSumShape, from the
//     job's public parameters and the site's own n), capped at 2c (a
//     clipped vector moves by at most 2c); an announced Δ below it is
//     refused. The site uses its own.
//   - δ_f (secagg-fail): recomputed (SumFailure of the job's δ); any
//     other value is refused (a smaller one would certify the DDG at more
//     than δ − δ_f).
//   - the rotation (secagg-rotation): recomputed from the job's seed
//     (RotationSeed); any other value is refused. It does not affect
//     privacy (the rotation is orthogonal whatever the signs) but every
//     site must use the same.
//   - t, κ (secagg-threshold, secagg-colluders): the submitter's; t must
//     exceed K/2 and κ < t (SecAggOf).
//   - the degree (secagg-degree): the submitter's; the site runs its
//     round with it, derives ℓ and the floors of honest shares from (K,
//     t, κ, degree) itself (Floors) and charges at them, so an announced
//     degree cannot make its noise count for more shares than its own
//     graph gives.
//   - s, γ, c (secagg-scale, secagg-gamma, secagg-clip): the coordinator's
//     calibration, used as received (all sites must encode alike) but
//     never trusted: the site computes its guarantee from them with its
//     own Δ, δ_f and dimension (round.Charge in the worker), so a shrunken
//     s or γ shows up as an ε above the job's and is refused. c enters the
//     guarantee through the rounding margin 2⁻³⁰·c/γ of Δ_ℤ (dp/ddg.go)
//     and the cap 2c of Δ; clipping is a projection, so a smaller c than
//     the plan's never raises the sensitivity (it biases the sum: a
//     utility, not a privacy, matter).
func SiteSecAgg(job *protocol.JobAnnounce, records int) (*SecAgg, int, error) {
	sec, err := SecAggOf(job)
	if err != nil || sec == nil {
		return nil, 0, err
	}
	a, err := Lookup(job.Algo)
	if err != nil {
		return nil, 0, err
	}
	sr, ok := a.(SumReleaser)
	if !ok {
		return nil, 0, fmt.Errorf("job %s asks for secure aggregation, but %s releases no sum", job.Job, job.Algo)
	}
	dim, sens, err := sr.SiteSumShape(job, records)
	if err != nil {
		return nil, 0, err
	}
	if dim < 1 || !(sens > 0) || math.IsInf(sens, 0) {
		return nil, 0, fmt.Errorf("job %s: %s gives this site no finite sensitivity (dim %d, Δ = %v)", job.Job, job.Algo, dim, sens)
	}
	own := *sec
	own.Sens = math.Min(sens, 2*sec.Clip)
	if sec.Sens < own.Sens {
		return nil, 0, fmt.Errorf("job %s: option %s = %v received, this site's vector has sensitivity Δ = %v (computed from the job's public parameters): refusing a DDG calibrated for less", job.Job, optSecAggSens, sec.Sens, own.Sens)
	}
	own.Fail = sumFailure(a, job.Delta)
	if sec.Fail != own.Fail {
		return nil, 0, fmt.Errorf("job %s: option %s = %v received, %s's sensitivity bound fails with probability δ_f = %v at δ = %v: refusing", job.Job, optSecAggFail, sec.Fail, job.Algo, own.Fail, job.Delta)
	}
	if !(own.Fail == 0 || own.Fail < job.Delta) {
		return nil, 0, fmt.Errorf("job %s: δ_f = %v is not below the job's δ = %v", job.Job, own.Fail, job.Delta)
	}
	if rot := RotationSeed(job.Seed); sec.Rotation != rot {
		return nil, 0, fmt.Errorf("job %s: option %s = %v received, the rotation derived from the job's seed %d is %v: refusing", job.Job, optSecAggRotation, sec.Rotation, job.Seed, rot)
	}
	return &own, dim, nil
}

// DDG returns the job's distributed discrete Gaussian for vectors of
// length dim summed over k sites, each adding copies noise draws
// (Floors.Copies).
func (s *SecAgg) DDG(dim, k, copies int) (*dp.DDG, error) {
	return dp.NewDDG(dp.DDGParams{Dim: dim, Clip: s.Clip, Sensitivity: s.Sens, Gamma: s.Gamma, Scale: s.Scale, Sites: k, Copies: copies, RotationSeed: s.Rotation})
}

// CopySigma is the real-unit standard deviation s·γ of one noise copy; a
// site adds Floors.Copies of them (SiteSigma).
func (s *SecAgg) CopySigma() float64 { return s.Scale * s.Gamma }

// SiteSigma is the real-unit standard deviation s·γ·√m of one site's
// noise, its m = copies draws together.
func (s *SecAgg) SiteSigma(copies int) float64 {
	return s.Scale * s.Gamma * math.Sqrt(float64(max(copies, 1)))
}

// CheckSecAggSpec refuses a job spec that sets the parameters the
// coordinator's plan fixes.
func CheckSecAggSpec(options protocol.Options) error {
	s, err := parseSecAgg(options)
	if err != nil || s == nil {
		return err
	}
	if s.planned || s.Rotation != 0 || s.Fail != 0 {
		return fmt.Errorf("secure aggregation's DDG parameters are set by the coordinator's plan, not by the job (give only %s, %s, %s, %s, %s, %s)", OptSecAgg, OptSecAggThreshold, OptSecAggTimeout, OptSecAggColluders, OptSecAggDegree, OptSecAggKeepAll)
	}
	return nil
}

// PlanSecAgg calibrates a job's secure aggregation once its participants
// and plan are known: it returns the job's options with the DDG's
// parameters added (the per-site scale s is the smallest that certifies
// the plan's (ε, δ) over plan.Phases rounds with t − κ honest shares, or
// the sparse variant's floor: Floors).
func PlanSecAgg(a Algorithm, spec *Spec, sites []SiteInfo, params int, plan *Plan) (protocol.Options, error) {
	s, err := parseSecAgg(spec.Options)
	if err != nil || s == nil {
		return spec.Options, err
	}
	if err := CheckSecAggSpec(spec.Options); err != nil {
		return nil, err
	}
	sr, ok := a.(SumReleaser)
	if !ok {
		return nil, fmt.Errorf("%s does not release a sum: no secure aggregation", a.Name())
	}
	if spec.Aggregation != "" {
		return nil, fmt.Errorf("aggregation %q cannot be computed from a masked sum: secure aggregation sums (leave the aggregation rule empty)", spec.Aggregation)
	}
	k := len(sites)
	if k < 2 {
		return nil, fmt.Errorf("secure aggregation needs ≥ 2 sites, got %d", k)
	}
	t := s.Threshold
	if t == 0 {
		t = secagg.DefaultThreshold(k)
	}
	if t > k || t < 2 {
		return nil, fmt.Errorf("secure aggregation threshold %d must be in [2, %d] (the participants); set %s", t, k, OptSecAggThreshold)
	}
	if 2*t <= k {
		// Every site refuses such a job too (SecAggOf).
		return nil, fmt.Errorf("secure aggregation threshold %d must exceed half the %d participants (≥ %d): with t ≤ K/2 two disjoint sets of t sites could each be unmasked, and their sums differenced; raise %s", t, k, k/2+1, OptSecAggThreshold)
	}
	if s.Colluders >= t {
		return nil, fmt.Errorf("secure aggregation: %d colluders must be fewer than the threshold %d; lower %s", s.Colluders, t, OptSecAggColluders)
	}
	if 2*t <= k+s.Colluders {
		// Every site refuses such a job too (SecAggOf).
		return nil, fmt.Errorf("secure aggregation threshold %d with %d colluders among %d participants: κ colluders sign any survivor set, so two different sets could each gather t signatures unless 2t > K + κ; raise %s to at least %d", t, s.Colluders, k, OptSecAggThreshold, (k+s.Colluders)/2+1)
	}
	if !(plan.Epsilon > 0) {
		return nil, fmt.Errorf("secure aggregation needs a private plan (ε > 0)")
	}
	dim, clip, sens, err := sr.SumShape(spec, sites, params)
	if err != nil {
		return nil, err
	}
	// Phases releases composed sequentially, or one per record when the
	// phases read disjoint records (SumParallel); δ less the failure
	// probability of the sensitivity bound (SumFailure).
	weights, err := SumRoundWeights(a, plan.Phases, plan.Phases)
	if err != nil {
		return nil, err
	}
	fail := sumFailure(a, plan.Delta)
	if !(fail >= 0 && (fail == 0 || fail < plan.Delta)) {
		return nil, fmt.Errorf("secure aggregation: failure probability %g outside [0, δ = %g)", fail, plan.Delta)
	}
	rot := RotationSeed(spec.Seed)
	s.Threshold = t
	fl, err := s.Floors(k)
	if err != nil {
		return nil, err
	}
	g, err := dp.CalibrateDDGWeighted(dp.DDGParams{Dim: dim, Clip: clip, Sensitivity: sens, Sites: k, Copies: fl.Copies, RotationSeed: rot}, weights, fl.Collusion, plan.Epsilon, plan.Delta-fail)
	if err != nil {
		return nil, err
	}
	p := g.Params()
	m := map[string]float64{}
	for _, o := range spec.Options {
		m[o.Name] = o.Value
	}
	m[OptSecAggThreshold], m[OptSecAggTimeout], m[OptSecAggColluders] = float64(t), float64(s.Timeout), float64(s.Colluders)
	if s.Degree > 0 {
		m[OptSecAggDegree] = float64(s.Degree)
	}
	if s.KeepAll {
		m[OptSecAggKeepAll] = 1
	}
	m[optSecAggClip], m[optSecAggSens], m[optSecAggScale], m[optSecAggGamma] = p.Clip, p.Sensitivity, p.Scale, p.Gamma
	m[optSecAggRotation] = float64(rot)
	if fail > 0 {
		m[optSecAggFail] = fail
	}
	return protocol.OptionsOf(m), nil
}

// SparseNote describes, for a job's options and k sites, the sparse
// variant's graph and floors (secagg/graph.go), or returns "" when the job
// runs the complete graph or no secure aggregation.
func SparseNote(options protocol.Options, k int) string {
	s, err := parseSecAgg(options)
	if err != nil || s == nil || s.Degree == 0 {
		return ""
	}
	if s.Threshold == 0 {
		s.Threshold = secagg.DefaultThreshold(k)
	}
	fl, err := s.Floors(k)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("SecAgg+ (%s = %d): each site masks with and shares its secrets among ≈ %d random neighbours of the %d (a public graph drawn from the round id, which no message moves), ℓ = %d of them rebuild them, and a site missing more than w = %d neighbours' shares sends nothing; every sum the coordinator can unmask holds at least %d honest sites' noise shares (%d with κ = %d colluders), except with probability 2⁻¹²⁸ over the graph (secagg.SparseFloor), against t − κ = %d with the complete graph: the per-site noise variance is %.2f× the complete graph's",
		OptSecAggDegree, s.Degree, s.Degree, k, fl.Local, fl.Withheld, fl.Floor, fl.Collusion, s.Colluders, s.Threshold-s.Colluders, float64(s.Threshold-s.Colluders)/float64(fl.Collusion))
}
