package audit

import (
	"context"
	"fmt"
	"math"
	"slices"

	_ "github.com/pairfed/pairfed/algo/all" // every single-site algorithm registered
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
)

// Modes of an audit.
const (
	// WhiteBox audits the noisy releases themselves (every dp.Noise call,
	// before any projection) with the optimal likelihood-ratio test; see
	// whitebox.go. It is the default.
	WhiteBox = "whitebox"
	// BlackBox audits the final model only, with a threshold test on one
	// coordinate; see blackbox.go.
	BlackBox = "blackbox"
)

// AuditSpec configures an empirical privacy audit of one private algorithm:
// a distinguishing test between neighbouring datasets D and D' that differ
// in one worst-case record, run on the real mechanism many times. The
// test's error rates bound ε from below (stats.go): ε_lb ≤ ε for a correct
// mechanism, except with probability ≤ 1 − Confidence.
type AuditSpec struct {
	Algo string
	// Mode is WhiteBox (default) or BlackBox.
	Mode    string
	Epsilon float64
	// Delta with DeltaSet false means the default: min(1e-5,
	// dp.DefaultDelta(n)) — far below 1/n, so that the audit measures ε
	// and not the δ slack.
	Delta float64
	// DeltaSet marks Delta as given (0 then means pure ε-DP).
	DeltaSet bool
	// Data is the base dataset D of a black-box audit (labels ±1, ‖x‖ ≤ R);
	// nil builds a small synthetic one (n = 16, d = 4). The white-box audit
	// builds its own worst-case datasets and refuses Data.
	Data *pairwise.Dataset
	// R is the feature radius (default 1).
	R float64
	// Trials per side for the measurement (default 4000 white-box, 1000
	// black-box); the calibration that chooses the test uses fresh
	// randomness, half as many white-box and as many again black-box.
	Trials int
	Seed   uint64
	// NoiseScale multiplies every σ/b the algorithm asks for (dp.ScaleNoise).
	// 1 (default) audits the real mechanism; < 1 deliberately breaks it, to
	// show the audit catches too little noise.
	NoiseScale float64
	// Calibration of the audited algorithm's noise: exact (default) or
	// paper (pairwise.Calibration).
	Calibration pairwise.Calibration
	// Task is the white-box audit's task: "auc" (default) or "metric"
	// (Mahalanobis W ∈ S^d_+, d² noised entries; the same constructions,
	// whose canary pairs have ‖x − x'‖² = 4R², the metric losses' G).
	Task string
	// Loss and Lambda for the objective; empty picks the first of logistic,
	// hinge, square that meets the algorithm's assumptions. Lambda 0 lets the
	// white-box search choose λ (see regimes); the black-box audit uses 0.01
	// when strong convexity is needed.
	Loss   string
	Lambda float64
	// Steps and Eta override the algorithm's defaults (0 = defaults; the
	// white-box search then tries the default T and a long run).
	Steps int
	Eta   float64
	// SecureNoise draws the white-box audit's noise from dp.NewSecureNoise
	// (the production sampler, not reproducible) instead of the seeded one.
	SecureNoise bool
	// Confidence of the lower bound (default 0.95): the probability that a
	// correct mechanism yields ε_lb ≤ ε is at least Confidence.
	Confidence float64
}

func (s AuditSpec) task() pairwise.Task {
	if s.Task == "" {
		return pairwise.TaskAUC
	}
	return pairwise.Task(s.Task)
}

// AuditResult is the outcome of an audit.
type AuditResult struct {
	Algorithm         string  `json:"algorithm"`
	Mode              string  `json:"mode"`
	Task              string  `json:"task"`
	ClaimedEpsilon    float64 `json:"claimed_epsilon"`
	Delta             float64 `json:"delta"`
	EpsilonLowerBound float64 `json:"epsilon_lower_bound"`
	Confidence        float64 `json:"confidence"`
	Trials            int     `json:"trials"`
	Statistic         string  `json:"statistic"`
	Threshold         float64 `json:"threshold"`
	FPR               float64 `json:"false_positive_rate"`
	FNR               float64 `json:"false_negative_rate"`
	NoiseScale        float64 `json:"noise_scale"`
	Loss              string  `json:"loss"`
	Lambda            float64 `json:"lambda"`
	N                 int     `json:"n"`
	D                 int     `json:"d"`
	Canary            string  `json:"canary"`
	// Consistent is ε_lb ≤ claimed ε, or ε_lb ≤ ReferenceEpsilon when
	// that is set.
	Consistent bool `json:"consistent"`
	// ReferenceEpsilon and Reference: for a white-box audit of a
	// subsampled mechanism (dp-pair-sgd), whose sampling the test knows,
	// the ε at Delta that its releases certify without amplification, the
	// bound such a test is held to (whitebox.go, statedReleases); 0 and
	// empty otherwise (the test is held to ClaimedEpsilon).
	ReferenceEpsilon float64 `json:"reference_epsilon,omitempty"`
	Reference        string  `json:"reference,omitempty"`
	// White-box diagnostics: the noisy releases per run, the mechanism,
	// the privacy loss the worst case realizes (μ of Gaussian DP,
	// √(Σ_t ‖a_t − b_t‖²/σ_t²) averaged over the trials, or Σ_t ‖a_t − b_t‖₁/b_t
	// for Laplace) against the one the algorithm's stated sensitivities
	// allow at the σ actually used, and the largest realized/stated
	// sensitivity ratio over the releases (1 = the bound is attained).
	Releases            int      `json:"releases,omitempty"`
	Mechanism           string   `json:"mechanism,omitempty"`
	RealizedLoss        float64  `json:"realized_loss,omitempty"`
	StatedLoss          float64  `json:"stated_loss,omitempty"`
	SensitivityAttained float64  `json:"sensitivity_attained,omitempty"`
	Notes               []string `json:"notes,omitempty"`
}

// MaxTrials bounds AuditSpec.Trials.
const MaxTrials = 1_000_000

// Audit runs the audit spec.Mode names.
func Audit(ctx context.Context, spec AuditSpec) (*AuditResult, error) {
	a, err := pairwise.Lookup(spec.Algo)
	if err != nil {
		return nil, err
	}
	if !a.Private {
		return nil, fmt.Errorf("audit: %s is not a private algorithm", spec.Algo)
	}
	if err := dp.CheckEpsilon("--epsilon", spec.Epsilon); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if spec.DeltaSet {
		if err := dp.CheckDelta("--delta", spec.Delta); err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
	}
	if spec.R == 0 {
		spec.R = 1
	}
	if !(spec.R > 0) || math.IsInf(spec.R, 0) {
		return nil, fmt.Errorf("audit: feature radius R = %v must be finite and > 0", spec.R)
	}
	if spec.NoiseScale == 0 {
		spec.NoiseScale = 1
	}
	if !(spec.NoiseScale > 0) || math.IsInf(spec.NoiseScale, 0) {
		return nil, fmt.Errorf("audit: noise scale %v must be finite and > 0", spec.NoiseScale)
	}
	if spec.Confidence == 0 {
		spec.Confidence = 0.95
	}
	if !(spec.Confidence > 0 && spec.Confidence < 1) {
		return nil, fmt.Errorf("audit: confidence %v must be in (0, 1)", spec.Confidence)
	}
	if spec.Trials != 0 && spec.Trials < 10 {
		return nil, fmt.Errorf("audit: %d trials is too few (≥ 10)", spec.Trials)
	}
	// Memory is bounded before anything is allocated: four sample slices
	// of Trials float64s. At 10⁶ trials per side the Clopper–Pearson
	// bounds already resolve ε to about 10⁻³; more only costs memory.
	if spec.Trials > MaxTrials {
		return nil, fmt.Errorf("audit: %d trials exceeds the %d allowed (4 × 8 bytes each are held in memory): give --trials ≤ %d", spec.Trials, MaxTrials, MaxTrials)
	}
	if t := spec.task(); t != pairwise.TaskAUC && t != pairwise.TaskMetric {
		return nil, fmt.Errorf("audit: unknown task %q (auc or metric)", spec.Task)
	}
	if !slices.Contains(a.Tasks, spec.task()) {
		return nil, fmt.Errorf("audit: %s does not support task %s (it supports %v)", a.Name, spec.task(), a.Tasks)
	}
	if a.NoiseInObjective {
		// Its noise is a secret input of the objective it minimizes, not a
		// release: the white-box audit, which reads every noise draw,
		// would read the secret itself. Only the final model is audited.
		switch spec.Mode {
		case "":
			spec.Mode = BlackBox
		case WhiteBox:
			return nil, fmt.Errorf("audit: %s adds its noise inside the objective it minimizes (nothing is released before the model), so the white-box audit does not apply; use --mode blackbox", a.Name)
		}
	}
	switch spec.Mode {
	case "", WhiteBox:
		if spec.Data != nil {
			return nil, fmt.Errorf("audit: the white-box audit builds its own worst-case datasets; --data applies to --mode blackbox")
		}
		if spec.Trials == 0 {
			spec.Trials = 4000
		}
		return whiteBox(ctx, a, spec)
	case BlackBox:
		if spec.task() != pairwise.TaskAUC {
			return nil, fmt.Errorf("audit: the black-box audit is for the AUC task only; use --mode whitebox for --task metric")
		}
		if spec.Trials == 0 {
			spec.Trials = 1000
		}
		return blackBox(ctx, a, spec)
	}
	return nil, fmt.Errorf("audit: unknown mode %q (whitebox or blackbox)", spec.Mode)
}
