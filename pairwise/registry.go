package pairwise

import (
	"context"
	"fmt"
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
	// CentresPrivately marks algorithms that locate the records' centre
	// and spread themselves (under DP) and clip around them: they want
	// bounds-scaled records by the linear map (--bounds-norm divide), not
	// clipped around the box's centre first.
	CentresPrivately bool
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
