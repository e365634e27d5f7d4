package pairwise

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
)

// Algorithm is a named, paper-faithful training algorithm. The names are the
// public interface of pairfed (`pairfed algos` lists them).
type Algorithm struct {
	Name    string // public name, e.g. "sgd-prev"
	Title   string // one-line description
	Paper   string // citation key and paper, e.g. "[Y21a] Yang et al. NeurIPS 2021"
	Ref     string // algorithm/equation in that paper, e.g. "Alg 1"
	Setting string // "offline", "online" or "full-batch"
	// Passes is the default number of passes over the data of an offline
	// stochastic algorithm (its T = ⌈Passes·n⌉ unless RunConfig says
	// otherwise), so that callers can scale its budget; 0 when the
	// algorithm has no such budget (online, full-batch, one-shot).
	Passes float64
	// ShiftInvariant marks algorithms that read records only through
	// differences x_i − x_j (losses of wᵀ(x_i − x_j), distances), so that
	// adding one vector to every record leaves the model unchanged up to
	// rounding: callers may then scale sparse data without its shift and
	// keep it sparse (data.Scaler.ApplyUnshifted).
	ShiftInvariant bool
	// Tasks lists the tasks the algorithm supports.
	Tasks []Task
	// Losses lists the loss names it supports; nil means any loss of the task.
	Losses []string
	// Assumptions states what the paper's analysis assumes of the loss.
	Assumptions string
	// NeedsStrongConvexity marks algorithms whose update rule uses α (= λ).
	NeedsStrongConvexity bool
	// Private marks differentially private algorithms.
	Private bool
	// Requires lists what the privacy (and utility) proof assumes; private
	// algorithms check it with Requirements.Check before touching data.
	Requires Requirements
	// PureDP marks private algorithms that have a pure ε-DP (δ = 0,
	// Laplace) variant in their paper; it is used when Privacy.Delta = 0.
	PureDP bool
	// Privacy describes the privacy model and noise formula, with citation.
	PrivacyModel string
	// PaperCalibration marks private algorithms with a paper's printed
	// noise formula, available as --calibration paper (calibrate.go); for
	// the others (pairfed's own mechanisms) that calibration is refused.
	PaperCalibration bool
	// GaussianDP marks private algorithms whose run is a sequential
	// composition of Gaussian releases calibrated together by
	// dp.CalibrateGaussian, so that it is exactly μ-GDP at its calibration:
	// privately estimated feature ranges compose with it exactly
	// (dp.SplitGDP, --scale private), and it may be a --tune candidate.
	GaussianDP bool
	// TuneLoss is the loss --tune runs the algorithm with when it is a
	// candidate ("" = not a candidate; only GaussianDP algorithms can be:
	// the selection theorem accounts μ-GDP runs).
	TuneLoss string
	// NoiseInObjective marks private algorithms whose noise is a secret
	// input of the computation rather than a release (objective
	// perturbation: the noise enters the objective that is then
	// minimized). The white-box audit, which sees every noise draw, does
	// not model them; package audit audits them black-box.
	NoiseInObjective bool
	// CentresPrivately marks algorithms that locate the records' centre
	// and spread themselves (under DP) and clip around them: they want
	// bounds-scaled records by the linear map (--bounds-norm divide), not
	// clipped around the box's centre first.
	CentresPrivately bool
	// PairCost is how the algorithm's pair gradients grow with the
	// number of records n: O(1) a step (the zero value), every earlier
	// draw (≈ n²/2 a pass) or the full pairwise gradient every step
	// (n₊·n₋ pairs). `train` warns before a run whose count is large.
	PairCost PairCost
	// MaxDim, when set, is the largest number of features the algorithm
	// runs on (a release whose size grows as d², e.g. a second moment):
	// its run refuses more, and callers that choose among algorithms
	// (--tune's default candidates) leave it out above. 0: no limit.
	MaxDim int
	// ParamRadius, when set, is a private algorithm's rule for the radius
	// B of the parameter set when none is given, from public quantities
	// only (n records, p parameters, ε, δ, feature radius R, task, loss),
	// fixed before the data is read. Nil means the callers' default (1).
	ParamRadius func(n, p int, eps, delta, R float64, task Task, loss Loss) float64
	// Run trains on obj. It must honour ctx, call cfg.OnCheckpoint at the
	// requested steps when it supports checkpoints, and return the output
	// model as the paper defines it.
	Run func(ctx context.Context, obj Objective, cfg RunConfig, rng *rand.Rand) (*Result, error)
}

// PairCost is how many pair gradients a run evaluates, as a function of
// the number of records n (Algorithm.PairCost).
type PairCost int

const (
	// PairsPerStep: O(1) pairs a step (a pair of draws, or each record
	// against a public partner): linear in n.
	PairsPerStep PairCost = iota
	// PairsAllPrevious: draw t is paired with every earlier draw, Σ t ≈
	// n²/2 pair gradients a pass.
	PairsAllPrevious
	// PairsFullBatch: the exact pairwise gradient every step, n₊·n₋ pairs
	// (for the AUC task with the hinge or square loss a sorted-score form
	// needs none: pairwise/fullgrad.go).
	PairsFullBatch
)

// Supports reports whether the algorithm accepts the task and loss, and if
// not, says why.
func (a *Algorithm) Supports(task Task, loss string) error {
	ok := false
	for _, t := range a.Tasks {
		ok = ok || t == task
	}
	if !ok {
		return fmt.Errorf("pairwise: %s does not support task %s (it supports %v)", a.Name, task, a.Tasks)
	}
	if a.Losses == nil {
		return nil
	}
	for _, l := range a.Losses {
		if l == loss {
			return nil
		}
	}
	return fmt.Errorf("pairwise: %s is defined for the %s loss only, not %s", a.Name, strings.Join(a.Losses, "/"), loss)
}

var registry = map[string]*Algorithm{}

// Register adds an algorithm to the registry; it panics on duplicate names.
func Register(a *Algorithm) {
	if _, dup := registry[a.Name]; dup {
		panic("pairwise: duplicate algorithm " + a.Name)
	}
	if a.Private && a.PaperCalibration && !strings.Contains(a.PrivacyModel, calibrationModelNote) {
		a.PrivacyModel += " " + calibrationModelNote
	}
	if a.Private && a.Run != nil {
		a.Run = certifiedRun(a, a.Run)
	}
	registry[a.Name] = a
}

// calibrationModelNote ends every private algorithm's PrivacyModel.
const calibrationModelNote = "Noise: by default (--calibration exact) the smallest σ the exact Gaussian-DP accountant certifies for the tight sensitivity proved beside the code; the printed formula above under --calibration paper, refused unless certified."

// Lookup returns the named algorithm.
func Lookup(name string) (*Algorithm, error) {
	a, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("pairwise: unknown algorithm %q (see `pairfed algos`; known: %s)", name, strings.Join(Names(), ", "))
	}
	return a, nil
}

// Names lists the registered algorithm names, sorted.
func Names() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Algorithms returns all registered algorithms sorted by name.
func Algorithms() []*Algorithm {
	out := make([]*Algorithm, 0, len(registry))
	for _, n := range Names() {
		out = append(out, registry[n])
	}
	return out
}

// certifiedRun wraps a private algorithm's Run (Register does it for every
// private algorithm): --calibration paper is refused up front for an
// algorithm without a printed formula, and every report is certified
// after the run. Algorithms that calibrate through CalibrateGaussian /
// CalibrateLaplace have filled the certificate already; for the others a
// Gaussian report (sensitivities, σ's, disjointness, failure δ) is
// certified here by dp.CertifyGaussian and a subsampled-Gaussian one by
// dp.SubsampledGaussianEpsilon. A private (secure) run whose certificate
// exceeds its request is an error: its output is not returned.
func certifiedRun(a *Algorithm, run func(context.Context, Objective, RunConfig, *rand.Rand) (*Result, error)) func(context.Context, Objective, RunConfig, *rand.Rand) (*Result, error) {
	return func(ctx context.Context, obj Objective, cfg RunConfig, rng *rand.Rand) (*Result, error) {
		if p := cfg.Privacy; p != nil && p.Calibration == CalibrationPaper && !a.PaperCalibration {
			return nil, fmt.Errorf("pairwise: %s is pairfed's own mechanism with no printed σ: --calibration paper does not apply (use exact)", a.Name)
		}
		res, err := run(ctx, obj, cfg, rng)
		if err != nil || res == nil || res.Privacy == nil || cfg.Privacy == nil {
			return res, err
		}
		if err := certifyReport(a.Name, res.Privacy); err != nil {
			return nil, err
		}
		return res, nil
	}
}

// PrivateSetup is the common prologue of every private algorithm: it
// validates the request, checks that every record lies in the ball of radius
// R, checks the algorithm's assumptions against the loss and returns the
// derived G, L, α together with a report skeleton. Nothing is computed on
// the data (beyond the norm check) before it succeeds.
func PrivateSetup(a *Algorithm, obj Objective, cfg *RunConfig) (Props, *PrivacyReport, error) {
	p := cfg.Privacy
	if err := p.Validate(); err != nil {
		return Props{}, nil, err
	}
	if p.Delta == 0 && !a.PureDP {
		return Props{}, nil, fmt.Errorf("pairwise: %s has no pure ε-DP (δ = 0) variant in its paper; give δ > 0 (default 1/n)", a.Name)
	}
	if err := CheckRadius(obj.Data(), p.FeatureRadius); err != nil {
		return Props{}, nil, err
	}
	props, err := a.Requires.Check(a.Name, obj, p.FeatureRadius)
	if err != nil {
		return Props{}, nil, err
	}
	model := "record-level (ε, δ)-DP"
	mech := "gaussian"
	if p.Delta == 0 {
		model, mech = "record-level ε-DP", "laplace"
	}
	rep := &PrivacyReport{
		Model: model, Epsilon: p.Epsilon, Delta: p.Delta, Mechanism: mech,
		G: props.Lipschitz, L: props.Smooth, Alpha: props.StrongConvexity, R: p.FeatureRadius,
		Noise: p.Noise.Name(), Private: p.Noise.Secure(), Assumptions: a.Requires.String(),
		Calibration: string(p.Calibration.OrDefault()), dim: obj.NumParams(),
	}
	if math.IsInf(rep.L, 1) {
		rep.L = 0 // JSON has no +Inf; 0 means "not smooth / not used"
	}
	return props, rep, nil
}
