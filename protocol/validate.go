package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"
)

// Limits enforced by Validate and Decode.
const (
	// MaxMessageSize is the largest encoded message: 64 MiB, equal to
	// transport.MaxMessage (the NATS transport splits messages above the
	// server's max_payload into chunks and reassembles them).
	MaxMessageSize = 64 << 20
	// MaxParams is the longest model vector: 2²¹ float64s (a metric model
	// up to d = 1448) encode to 18 MiB; with the last iterate
	// (MaxLastParams) a SiteUpdate stays under 27 MiB.
	MaxParams = 1 << 21
	// MaxLastParams is the longest model a SiteUpdate may carry together
	// with its last iterate (two vectors in one message).
	MaxLastParams = MaxParams / 2
	// MaxSites is the largest number of participants of a job.
	MaxSites = 1024
	// MaxPhases bounds the phase (round) count of a job.
	MaxPhases = 1 << 16
	// MaxRecords bounds a site's record count.
	MaxRecords = 1 << 40
	// MaxNameLen bounds federation, site, job, algorithm and loss names.
	MaxNameLen = 64
	// MaxReasonLen bounds free-text reasons.
	MaxReasonLen = 1024
)

// ErrTooLarge is wrapped by errors about messages or models over the limits.
var ErrTooLarge = errors.New("protocol: too large (a message is at most 64 MiB and a model at most 2^21 parameters)")

// ValidName checks that s is a subject token usable as a federation, site,
// job or algorithm name: 1–MaxNameLen characters of [A-Za-z0-9_-].
func ValidName(what, s string) error {
	if s == "" {
		return fmt.Errorf("protocol: empty %s", what)
	}
	if len(s) > MaxNameLen {
		return fmt.Errorf("protocol: %s of %d bytes exceeds %d", what, len(s), MaxNameLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			// The character, not its first byte read as Latin-1 (probe 6:
			// "hôpital" was "byte 1 ('Ã')").
			r, _ := utf8.DecodeRuneInString(s[i:])
			return fmt.Errorf("protocol: %s %q: byte %d (%q) is not in [A-Za-z0-9_-]", what, s, i, r)
		}
	}
	return nil
}

func finite(what string, x float64) error {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Errorf("protocol: %s = %v is not finite", what, x)
	}
	return nil
}

func nonNegative(what string, x float64) error {
	if err := finite(what, x); err != nil {
		return err
	}
	if x < 0 {
		return fmt.Errorf("protocol: %s = %v is negative", what, x)
	}
	return nil
}

func checkModel(m []float64, required bool) error {
	if len(m) == 0 {
		if required {
			return fmt.Errorf("protocol: empty model")
		}
		return nil
	}
	if len(m) > MaxParams {
		return fmt.Errorf("protocol: model of %d parameters exceeds %d: %w", len(m), MaxParams, ErrTooLarge)
	}
	for i, v := range m {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("protocol: model[%d] = %v is not finite", i, v)
		}
	}
	return nil
}

func checkPhase(p int) error {
	if p < 1 || p > MaxPhases {
		return fmt.Errorf("protocol: phase %d outside [1, %d]", p, MaxPhases)
	}
	return nil
}

func checkReason(s string) error {
	if len(s) > MaxReasonLen {
		return fmt.Errorf("protocol: reason of %d bytes exceeds %d", len(s), MaxReasonLen)
	}
	return nil
}

// MaxSigmas bounds SiteUpdate.Sigmas (the noisy steps of one release;
// with a model of MaxParams values the update still fits MaxMessageSize).
const MaxSigmas = 1 << 12

func checkPrivacy(eps, delta float64) error {
	if err := nonNegative("epsilon", eps); err != nil {
		return err
	}
	if !(delta >= 0 && delta < 1) {
		return fmt.Errorf("protocol: delta = %v outside [0, 1)", delta)
	}
	return nil
}

func (m *Join) Validate() error {
	if err := ValidName("site", m.Site); err != nil {
		return err
	}
	if m.Records < 1 || m.Records > MaxRecords {
		return fmt.Errorf("protocol: join of %s: %d records outside [1, %d]", m.Site, m.Records, int64(MaxRecords))
	}
	if m.Dim < 1 || m.Dim > MaxParams {
		return fmt.Errorf("protocol: join of %s: dimension %d outside [1, %d]", m.Site, m.Dim, MaxParams)
	}
	if m.Instance != "" {
		return ValidName("instance", m.Instance)
	}
	return nil
}

func (m *Heartbeat) Validate() error { return ValidName("site", m.Site) }

func (m *JobAnnounce) Validate() error {
	for _, n := range []struct{ what, s string }{{"job", m.Job}, {"algorithm", m.Algo}, {"task", m.Task}, {"loss", m.Loss}} {
		if err := ValidName(n.what, n.s); err != nil {
			return err
		}
	}
	if err := checkAlgoParams(AlgoParams{Job: m.Job, Algo: m.Algo, LocalAlgo: m.LocalAlgo, Options: m.Options}); err != nil {
		return err
	}
	if m.Task != TaskAUC && m.Task != TaskMetric {
		return fmt.Errorf("protocol: job %s: unknown task %q (want auc or metric)", m.Job, m.Task)
	}
	if m.Params < 1 || m.Params > MaxParams {
		return fmt.Errorf("protocol: job %s: %d parameters outside [1, %d]", m.Job, m.Params, MaxParams)
	}
	if err := checkPhase(m.Phases); err != nil {
		return err
	}
	if err := CheckJobNumbers(m.LocalPasses, m.Eta, m.ParamRadius, m.FeatureRadius, m.Lambda, m.Epsilon, m.Delta); err != nil {
		return err
	}
	if _, err := ParseAggregation(m.Aggregation); err != nil {
		return err
	}
	if err := CheckCalibration(m.Job, m.Calibration); err != nil {
		return err
	}
	if err := CheckSchemaText(m.Job, m.Schema); err != nil {
		return err
	}
	if len(m.Sites) == 0 || len(m.Sites) > MaxSites {
		return fmt.Errorf("protocol: job %s: %d sites outside [1, %d]", m.Job, len(m.Sites), MaxSites)
	}
	seen := make(map[string]bool, len(m.Sites))
	for _, s := range m.Sites {
		if err := ValidName("site", s); err != nil {
			return err
		}
		if seen[s] {
			return fmt.Errorf("protocol: job %s lists site %s twice", m.Job, s)
		}
		seen[s] = true
	}
	if len(m.Instances) > 0 && len(m.Instances) != len(m.Sites) {
		return fmt.Errorf("protocol: job %s: %d instances for %d sites", m.Job, len(m.Instances), len(m.Sites))
	}
	for _, in := range m.Instances {
		if in != "" {
			if err := ValidName("instance", in); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *PhaseStart) Validate() error {
	if err := ValidName("job", m.Job); err != nil {
		return err
	}
	if err := checkPhase(m.Phase); err != nil {
		return err
	}
	return checkModel(m.Model, true)
}

func (m *SiteUpdate) Validate() error {
	if err := ValidName("job", m.Job); err != nil {
		return err
	}
	if err := ValidName("site", m.Site); err != nil {
		return err
	}
	if err := checkPhase(m.Phase); err != nil {
		return err
	}
	if err := checkModel(m.Model, true); err != nil {
		return err
	}
	if len(m.Last) > 0 {
		if len(m.Last) != len(m.Model) {
			return fmt.Errorf("protocol: update of %s: last iterate has %d parameters, model %d", m.Site, len(m.Last), len(m.Model))
		}
		if len(m.Last) > MaxLastParams {
			return fmt.Errorf("protocol: update of %s: last iterate of %d parameters exceeds %d (model and last iterate must fit one message): %w", m.Site, len(m.Last), MaxLastParams, ErrTooLarge)
		}
		if err := checkModel(m.Last, false); err != nil {
			return err
		}
	}
	if err := finite("weight", m.Weight); err != nil {
		return err
	}
	if !(m.Weight > 0) {
		return fmt.Errorf("protocol: update of %s: weight %v must be > 0", m.Site, m.Weight)
	}
	if err := nonNegative("sigma", m.Sigma); err != nil {
		return err
	}
	if len(m.Sigmas) > MaxSigmas {
		return fmt.Errorf("protocol: update of %s: %d sigmas exceed %d: %w", m.Site, len(m.Sigmas), MaxSigmas, ErrTooLarge)
	}
	for _, s := range m.Sigmas {
		if err := nonNegative("sigma", s); err != nil {
			return err
		}
	}
	return checkPrivacy(m.Epsilon, m.Delta)
}

func (m *Abort) Validate() error {
	if err := ValidName("job", m.Job); err != nil {
		return err
	}
	if err := ValidName("sender", m.From); err != nil {
		return err
	}
	return checkReason(m.Reason)
}

func (m *Result) Validate() error {
	if err := ValidName("job", m.Job); err != nil {
		return err
	}
	if err := checkPhase(m.Phases); err != nil {
		return err
	}
	if err := checkModel(m.Model, true); err != nil {
		return err
	}
	if len(m.Sites) > MaxSites {
		return fmt.Errorf("protocol: result of %s: %d sites exceeds %d", m.Job, len(m.Sites), MaxSites)
	}
	for _, s := range m.Sites {
		if err := ValidName("site", s); err != nil {
			return err
		}
	}
	return nil
}

func (m *Leave) Validate() error {
	if err := ValidName("site", m.Site); err != nil {
		return err
	}
	if m.Instance != "" {
		if err := ValidName("instance", m.Instance); err != nil {
			return err
		}
	}
	return checkReason(m.Reason)
}

func (m *JobSubmit) Validate() error {
	for _, n := range []struct{ what, s string }{{"job", m.Job}, {"client", m.Client}, {"algorithm", m.Algo}} {
		if err := ValidName(n.what, n.s); err != nil {
			return err
		}
	}
	if m.Loss != "" {
		if err := ValidName("loss", m.Loss); err != nil {
			return err
		}
	}
	if m.Task != "" && m.Task != TaskAUC && m.Task != TaskMetric {
		return fmt.Errorf("protocol: job %s: unknown task %q (want auc or metric)", m.Job, m.Task)
	}
	if err := checkAlgoParams(AlgoParams{Job: m.Job, Algo: m.Algo, LocalAlgo: m.LocalAlgo, Options: m.Options}); err != nil {
		return err
	}
	if m.MinSites < 1 || m.MinSites > MaxSites {
		return fmt.Errorf("protocol: job %s: min sites %d outside [1, %d]", m.Job, m.MinSites, MaxSites)
	}
	if m.Rounds < 0 || m.Rounds > MaxPhases {
		return fmt.Errorf("protocol: job %s: rounds %d outside [0, %d]", m.Job, m.Rounds, MaxPhases)
	}
	if _, err := ParseAggregation(m.Aggregation); err != nil {
		return err
	}
	if err := CheckCalibration(m.Job, m.Calibration); err != nil {
		return err
	}
	if err := CheckSchemaText(m.Job, m.Schema); err != nil {
		return err
	}
	if err := CheckCancelHash(m.Job, m.CancelHash); err != nil {
		return err
	}
	return CheckJobNumbers(m.LocalPasses, m.Eta, m.ParamRadius, m.FeatureRadius, m.Lambda, m.Epsilon, m.Delta)
}

// MaxSchemaBytes bounds the feature-bounds schema a job carries
// (JobSubmit.Schema, JobAnnounce.Schema). The announcement is repeated
// with every phase, so the bound is also what one phase may cost in
// schema bytes per site; a 1 MiB schema lists ~10 000 features with their
// sources (schemas/a9a.json, 123 features, is under 4 KiB).
const MaxSchemaBytes = 1 << 20

// CheckSchemaText checks the wire form of a job's schema: empty (no
// schema), or at most MaxSchemaBytes of valid UTF-8 that is exactly one
// JSON object. Its content (bounds, features) is checked by every site
// that parses it (data.ReadSchema, strict), not here.
func CheckSchemaText(job, s string) error {
	if s == "" {
		return nil
	}
	if len(s) > MaxSchemaBytes {
		return fmt.Errorf("protocol: job %s: feature-bounds schema of %d bytes exceeds %d: %w", job, len(s), MaxSchemaBytes, ErrTooLarge)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("protocol: job %s: feature-bounds schema is not valid UTF-8", job)
	}
	if b := bytes.TrimLeft([]byte(s), " \t\r\n"); len(b) == 0 || b[0] != '{' || !json.Valid(b) {
		return fmt.Errorf("protocol: job %s: feature-bounds schema is not one JSON object", job)
	}
	return nil
}

// The noise calibrations of a private job (JobAnnounce.Calibration).
const (
	// CalibrationExact: the smallest σ the exact Gaussian-DP accountant
	// certifies for the proven sensitivity (the default; "" means it).
	CalibrationExact = "exact"
	// CalibrationPaper: the σ printed in the algorithm's paper, refused
	// unless the exact accountant certifies it.
	CalibrationPaper = "paper"
)

// CheckCalibration checks a job's calibration name: "", exact or paper.
func CheckCalibration(job, c string) error {
	switch c {
	case "", CalibrationExact, CalibrationPaper:
		return nil
	}
	return fmt.Errorf("protocol: job %s: unknown calibration %q (want %s or %s; empty means %s)", job, c, CalibrationExact, CalibrationPaper, CalibrationExact)
}

var jobStatuses = map[string]bool{StatusQueued: true, StatusRunning: true, StatusCompleted: true, StatusRefused: true, StatusFailed: true, StatusUnknown: true}

func checkSites(what string, sites []string) error {
	if len(sites) > MaxSites {
		return fmt.Errorf("protocol: %d %s sites exceeds %d", len(sites), what, MaxSites)
	}
	for _, s := range sites {
		if err := ValidName("site", s); err != nil {
			return err
		}
	}
	return nil
}

func (m *JobStatus) Validate() error {
	if err := ValidName("job", m.Job); err != nil {
		return err
	}
	if !jobStatuses[m.Status] {
		return fmt.Errorf("protocol: job %s: unknown status %q", m.Job, m.Status)
	}
	if err := checkReason(m.Reason); err != nil {
		return err
	}
	if m.Algo != "" {
		if err := ValidName("algorithm", m.Algo); err != nil {
			return err
		}
	}
	if m.Phases < 0 || m.Phases > MaxPhases {
		return fmt.Errorf("protocol: job %s: phases %d outside [0, %d]", m.Job, m.Phases, MaxPhases)
	}
	if m.Submitted < 0 || m.Finished < 0 {
		return fmt.Errorf("protocol: job %s: negative time (submitted %d, finished %d)", m.Job, m.Submitted, m.Finished)
	}
	for _, l := range []struct {
		what  string
		sites []string
	}{{"active", m.Sites}, {"dropped", m.Dropped}, {"refused", m.Refused}, {"excluded", m.Excluded}} {
		if err := checkSites(l.what, l.sites); err != nil {
			return err
		}
	}
	if err := checkModel(m.Model, false); err != nil {
		return err
	}
	if err := finite("auc", m.AUC); err != nil {
		return err
	}
	if m.AUC < 0 || m.AUC > 1 || m.TestRecords < 0 || m.TestRecords > MaxRecords {
		return fmt.Errorf("protocol: job %s: auc %v outside [0, 1] or test records %d outside [0, %d]", m.Job, m.AUC, m.TestRecords, int64(MaxRecords))
	}
	if len(m.Privacy) > MaxSites {
		return fmt.Errorf("protocol: job %s: %d privacy reports exceeds %d", m.Job, len(m.Privacy), MaxSites)
	}
	if len(m.PhaseAUC) > MaxPhases {
		return fmt.Errorf("protocol: job %s: %d phase AUCs exceeds %d", m.Job, len(m.PhaseAUC), MaxPhases)
	}
	for _, a := range m.PhaseAUC {
		if err := finite("phase auc", a); err != nil {
			return err
		}
		if a < 0 || a > 1 {
			return fmt.Errorf("protocol: job %s: phase auc %v outside [0, 1]", m.Job, a)
		}
	}
	if m.Metric != "" && m.Metric != MetricKNN3 {
		return fmt.Errorf("protocol: job %s: unknown metric %q", m.Job, m.Metric)
	}
	if err := checkBest(m); err != nil {
		return err
	}
	if m.Announce != nil {
		if err := m.Announce.Validate(); err != nil {
			return err
		}
		if m.Announce.Job != m.Job {
			return fmt.Errorf("protocol: job %s: status carries the announcement of job %s", m.Job, m.Announce.Job)
		}
	}
	for _, p := range m.Privacy {
		if err := ValidName("site", p.Site); err != nil {
			return err
		}
		if p.Records < 0 || p.Records > MaxRecords {
			return fmt.Errorf("protocol: job %s: site %s: %d records outside [0, %d]", m.Job, p.Site, p.Records, int64(MaxRecords))
		}
		if err := checkPrivacy(p.Epsilon, p.Delta); err != nil {
			return err
		}
		if err := nonNegative("composed epsilon", p.ComposedEpsilon); err != nil {
			return err
		}
		if err := checkCertified(m.Job, p); err != nil {
			return err
		}
		if len(p.Sigmas) > MaxPhases {
			return fmt.Errorf("protocol: job %s: site %s: %d σ values exceeds %d", m.Job, p.Site, len(p.Sigmas), MaxPhases)
		}
		for _, s := range p.Sigmas {
			if err := nonNegative("sigma", s); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkCertified checks a site report's charged (ε, δ): finite, ≥ 0 and
// within the request (a ledger never charges more than the job asked;
// an omitted pair is 0).
func checkCertified(job string, p SiteReport) error {
	for _, c := range []struct {
		what             string
		certified, limit float64
	}{{"certified epsilon", p.CertifiedEpsilon, p.Epsilon}, {"certified delta", p.CertifiedDelta, p.Delta}} {
		if math.IsNaN(c.certified) || math.IsInf(c.certified, 0) || c.certified < 0 {
			return fmt.Errorf("protocol: job %s: site %s: %s = %v is not a finite number ≥ 0", job, p.Site, c.what, c.certified)
		}
		if c.certified > c.limit {
			return fmt.Errorf("protocol: job %s: site %s: %s = %v exceeds the requested %v: a ledger never charges more than the request",
				job, p.Site, c.what, c.certified, c.limit)
		}
	}
	return nil
}

func (m *JobQuery) Validate() error {
	if err := ValidName("job", m.Job); err != nil {
		return err
	}
	return ValidName("client", m.Client)
}

func (m *Accept) Validate() error {
	if err := ValidName("job", m.Job); err != nil {
		return err
	}
	if err := ValidName("site", m.Site); err != nil {
		return err
	}
	if m.Instance != "" {
		return ValidName("instance", m.Instance)
	}
	return nil
}

func (m *Refuse) Validate() error {
	if err := ValidName("job", m.Job); err != nil {
		return err
	}
	if err := ValidName("site", m.Site); err != nil {
		return err
	}
	return checkReason(m.Reason)
}

// Bounds on a job's numeric parameters (JobSubmit, JobAnnounce; the
// coordinator's job check uses CheckJobNumbers too), so that no job spec
// can make a site's arithmetic overflow or its noise scale leave the range
// the samplers accept.
//
// The rule: every scale parameter (η, B, R, λ) is 0 (the algorithm's
// default or none) or in [MinScale, MaxScale] = [10⁻⁶, 10⁶], and ε is 0
// or in [10⁻⁶, MaxEpsilon = 10⁹]. The largest quantity a loss, a step or
// a noise calibration forms is a product of at most four scale factors
// (e.g. η·G with G = 4R² for the metric losses, times ‖w‖ ≤ B) and a
// log(1/δ) or 1/ε factor, which then stays within [10⁻⁴⁰, 10⁴⁰] — far
// inside float64 and inside the [2⁻⁹⁰⁰, 2⁹⁰⁰] that dp's Gaussian and
// Laplace samplers accept for σ (ε = 10³⁰⁸ made σ ≈ 10⁻³⁰⁷ and crashed
// every site). The papers' grids (η, B ∈ 10⁻³…10², R = 1, ε ≤ 10) are
// well inside; ε up to 10⁹ stays allowed for "almost no noise" checks
// (each site's budget still bounds what it spends).
//
// LocalPasses is bounded by MaxLocalPasses here; the work of one phase
// (pair-steps times parameters) is bounded by the algorithm's plan once
// the sites' sizes are known (fedalgo.MaxPhaseWork).
const (
	MinScale       = 1e-6
	MaxScale       = 1e6
	MaxEpsilon     = 1e9
	MaxLocalPasses = 1000
)

// flagOf names the `pairfed job submit` flag of each parameter.
var flagOf = map[string]string{"local_passes": "local-passes", "eta": "eta", "param_radius": "param-radius", "feature_radius": "radius", "lambda": "lambda"}

// CheckJobNumbers checks a job's numeric parameters against the bounds
// above: local passes, η, B, R, λ and (ε, δ). Each error names the
// parameter, its value and the allowed range.
func CheckJobNumbers(localPasses, eta, paramRadius, featureRadius, lambda, epsilon, delta float64) error {
	for _, v := range []struct {
		what string
		x    float64
	}{{"local_passes", localPasses}, {"eta", eta}, {"param_radius", paramRadius}, {"feature_radius", featureRadius}, {"lambda", lambda}} {
		hi := float64(MaxScale)
		if v.what == "local_passes" {
			hi = MaxLocalPasses
		}
		// NaN, infinite and negative values get the range and the flag
		// too (probe 6: "eta = -1 is negative" named no fix).
		if err := nonNegative(v.what, v.x); err != nil {
			return fmt.Errorf("%w: give --%s in [%g, %g] (or 0 for the default)", err, flagOf[v.what], float64(MinScale), hi)
		}
		if v.x != 0 && (v.x < MinScale || v.x > hi) {
			return fmt.Errorf("protocol: %s = %v outside [%g, %g] (or 0 for the default): give --%s in that range", v.what, v.x, float64(MinScale), hi, flagOf[v.what])
		}
	}
	if err := checkPrivacy(epsilon, delta); err != nil {
		return err
	}
	if epsilon != 0 && (epsilon < MinScale || epsilon > MaxEpsilon) {
		return fmt.Errorf("protocol: epsilon = %v outside [%g, %g]: give --epsilon in that range", epsilon, float64(MinScale), float64(MaxEpsilon))
	}
	if delta != 0 && delta < 1e-300 {
		return fmt.Errorf("protocol: delta = %v is subnormal: give 0 or a value ≥ 1e-300", delta)
	}
	return nil
}

// CheckModel checks a model vector as messages carry it: 1–MaxParams
// finite values.
func CheckModel(m []float64) error { return checkModel(m, true) }
