package fedalgo

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// Spec is a federated job as it is asked for: the algorithm, its
// parameters and the job's identity. Zero values mean the algorithm's
// defaults, which its Configure fills in. coordinator.JobConfig is this
// type.
type Spec struct {
	// ID names the job (default "job-1").
	ID string
	// Algo names a registered federated algorithm (Names).
	Algo string
	// LocalAlgo names the single-site algorithm an algorithm that runs
	// one at every site uses (e.g. fed-oneshot's "dpegd"); empty for the
	// others. The algorithm's validator decides.
	LocalAlgo string
	// Loss is the pairwise loss ("" for the algorithm's default).
	Loss string
	// Rounds is the number of coordinator rounds, for the algorithms whose
	// number of phases is a free parameter (0: the algorithm's default).
	Rounds int
	// LocalPasses is the passes over its data a site makes per round, for
	// the algorithms that take it.
	LocalPasses float64
	// Eta is the base step size η (0: the algorithm's default).
	Eta float64
	// ParamRadius is the radius B of the parameter set (0: the
	// algorithm's default).
	ParamRadius float64
	// FeatureRadius is R: every site clips its records to ‖x‖ ≤ R
	// (default 1; required > 0 for private jobs).
	FeatureRadius float64
	// Lambda is the (λ/2)‖w‖² regularization (default 0).
	Lambda float64
	// Epsilon and Delta are the per-site record-level (ε, δ) of a private
	// job. Delta 0 lets the algorithm's plan fix δ from the sites' sizes.
	Epsilon, Delta float64
	// Seed is recorded in the announcement (reproducible runs).
	Seed uint64
	// Task is "auc" (a linear scoring model w) or "metric" (a Mahalanobis
	// metric W ∈ S^d, d·d parameters, projected by the sites onto the
	// Frobenius ball ∩ PSD).
	Task string
	// Aggregation is "" (weighted mean), "median" or "trimmed-mean:β"
	// (see protocol.Aggregation).
	Aggregation string
	// Options are the algorithm's own named parameters, interpreted and
	// checked by it alone (Optioned); nil for the algorithms that take
	// none.
	Options protocol.Options `json:",omitempty"`
	// Calibration is how a private job's sites choose their noise:
	// "" or "exact" (the default), or "paper" (the printed σ of an
	// algorithm that has one, refused unless certified: checked by the
	// plan where the coordinator can, by every site before its first
	// release otherwise).
	Calibration string `json:",omitempty"`
	// Schema is the job's public feature-bounds schema (JSON text,
	// protocol.JobAnnounce.Schema), announced to every site; "" for none.
	Schema string `json:",omitempty"`
}

// Algorithm is one federated algorithm: the coordinator's half (plan the
// job, combine each phase's updates, the final model) and the site's half
// (one phase's release). Implementations are stateless values registered
// by name (Register); everything a job needs to remember lives in the
// Site and Combiner they return.
//
// The coordinator and the workers call an Algorithm in this order:
//
//	Configure(spec)                      coordinator, at submission: defaults and the validator
//	Plan(spec, sites, params)            coordinator, once the participants are known
//	NewSite(job, env) → Site.Step(…)     each site, for every phase it is asked to run
//	NewCombiner(job, nil) → Combine(…)   coordinator, after every phase; Final after the last
type Algorithm interface {
	// Name is the registered name (JobAnnounce.Algo).
	Name() string
	// Private reports whether the sites add noise and claim the job's
	// (ε, δ): their releases are charged to the ledgers.
	Private() bool
	// Configure fills the algorithm's defaults into spec and checks the
	// parameters that are the algorithm's own: it is the algorithm's
	// validator, called after the generic checks (names, task, finite
	// non-negative numbers, FeatureRadius defaulted to 1). Errors are
	// plain sentences; the caller prefixes its package.
	Configure(spec *Spec) error
	// Plan fixes the job once its participants are known: the number of
	// phases, η, the (ε, δ) every site is charged, and per-site privacy
	// parameters. params is the model's length. An error aborts the job
	// before anything is announced.
	Plan(spec *Spec, sites []SiteInfo, params int) (*Plan, error)
	// NewSite checks that a site can take part in the announced job and
	// prepares its half (e.g. its disjoint partition). It is called once
	// per job per site, before any release.
	NewSite(job *protocol.JobAnnounce, env SiteEnv) (Site, error)
	// NewCombiner returns the coordinator's half of an announced job;
	// state is what an earlier Combiner's State returned (a job resumed
	// from a checkpoint), or nil.
	NewCombiner(job *protocol.JobAnnounce, state []float64) (Combiner, error)
}

// SiteInfo is what the coordinator knows of a participant: its name and
// record count (public metadata from its Join).
type SiteInfo struct {
	Name    string
	Records int
}

// Guarantee is a certified record-level (ε, δ).
type Guarantee struct{ Epsilon, Delta float64 }

// Plan is a job's plan, fixed when it starts.
type Plan struct {
	// Phases is the number of coordinator phases (1 ≤ Phases ≤
	// protocol.MaxPhases).
	Phases int
	// Eta is the η announced to the sites.
	Eta float64
	// Epsilon and Delta are the per-site record-level guarantee every
	// participant is charged for the whole job (0, 0 when not private).
	Epsilon, Delta float64
	// Sensitivity is, per site name, the ℓ2 sensitivity of each of the
	// site's releases when the coordinator can state it (for composing
	// the coordinator's ledger with dp.Compose); absent otherwise.
	Sensitivity map[string]float64
	// Certified is, per site name, what the exact accountant certifies
	// for all of the site's releases under this plan, when the
	// coordinator can compute it from public numbers (the same
	// calibration the site makes); absent otherwise. It is within
	// (Epsilon, Delta), which stay the upper bound the budgets are
	// checked against; the coordinator's reservation records it.
	Certified map[string]Guarantee
	// ParamRadius, when > 0, is the radius B announced instead of the
	// spec's (an algorithm whose default B follows a rule of the sites'
	// record counts; its Configure left the spec's B at 0).
	ParamRadius float64
}

// SiteEnv is what a site gives its half of a job.
type SiteEnv struct {
	// Data are the site's records (scaled and clipped by the caller); Obj
	// the job's objective on them (task, loss, λ and the parameter set of
	// the announcement), built by the worker.
	Data *pairwise.Dataset
	Obj  pairwise.Objective
	// Noise draws the privacy noise (nil: the site has none); Rand the
	// sampling and partitions (secret for private jobs).
	Noise pairwise.Noise
	Rand  *rand.Rand
}

// Site is one site's half of one job.
type Site interface {
	// Step runs phase (1-based) from the broadcast model (not modified)
	// and returns the update to send — Model, Weight and, for private
	// jobs, Sigma(s), Epsilon, Delta and Secure; the caller sets Job,
	// Phase and Site — and the release it must record in the site's
	// ledger before sending (nil when the update releases nothing
	// private). The worker calls Step at most once per phase.
	Step(ctx context.Context, phase int, model []float64) (*protocol.SiteUpdate, *Release, error)
}

// Partitioned is implemented by a Site whose phases read disjoint subsets
// of its records: the partition is durable state (the worker saves it
// with the job) so that a restarted site keeps it — a new partition would
// let a record take part in two phases.
type Partitioned interface {
	Partition() [][]int
	// SetPartition replaces the partition by a saved one (the worker
	// checked its shape against Partition and its indices against the
	// data).
	SetPartition([][]int)
}

// Release is what a site records in its ledger for one phase, before the
// update leaves it (charge before release).
type Release struct {
	// Records is the number of records the release depends on.
	Records int
	// Mechanism names the noise ("gaussian", "laplace", …).
	Mechanism string
	// Sigma is the noise scale; Sigmas every scale of a release with
	// several noisy steps (Sigma is then its first).
	Sigma  float64
	Sigmas []float64
	// Sensitivity is the ℓ2 sensitivity of a Gaussian release when the
	// site knows it; 0 otherwise.
	Sensitivity float64
	// SampleRate and Steps describe a release of Steps Poisson-subsampled
	// Gaussian steps at rate SampleRate, each with noise Sigma (0 when
	// the release is not subsampled).
	SampleRate float64
	Steps      int
	// Epsilon, Delta: the guarantee claimed for Records.
	Epsilon, Delta float64
	// Secure is true when the noise came from a secure source.
	Secure bool
}

// Combiner is the coordinator's half of one job.
type Combiner interface {
	// Combine takes the current model and the updates of one phase, in
	// site-name order (each with at least Model and Weight), combined
	// under rule, and returns the next broadcast model (it may reuse the
	// model's storage; updates are not modified).
	Combine(model []float64, updates []*protocol.SiteUpdate, rule protocol.Aggregation) []float64
	// Final returns the job's output after the last phase was combined
	// (a fresh slice).
	Final(model []float64) []float64
	// State returns what the combiner keeps beyond the model, for
	// checkpoints (nil when nothing); NewCombiner takes it back.
	State() []float64
}

// UpdateSized is implemented by a Combiner whose sites send vectors of
// another length than the model (e.g. sufficient statistics): the
// coordinator accepts updates of UpdateLen values instead of the model's.
type UpdateSized interface {
	UpdateLen() int
}

// UpdateLen is the length of the updates comb accepts for a model of
// params values.
func UpdateLen(comb Combiner, params int) int {
	if u, ok := comb.(UpdateSized); ok {
		return u.UpdateLen()
	}
	return params
}

// Accountant is implemented by an algorithm whose releases can be
// composed by an exact accountant next to the paper's claim: Account
// returns the ε at delta that it proves for one site's releases of
// sensitivity sens with the given σs (0 when it does not apply) and notes
// saying how both guarantees arise.
type Accountant interface {
	Account(sigmas []float64, sens, epsilon, delta float64) (float64, []string)
}

// Centring is implemented by an algorithm that locates the records'
// centre itself (under DP) and works with their directions from it: the
// sites should prepare records by a linear map (schema bounds multiplied
// by R/√d), not clip them around the box's centre, which shrinks every
// record towards a point that is not the data's.
type Centring interface {
	CentresPrivately() bool
}

// CentresPrivately reports whether the named algorithm is Centring.
func CentresPrivately(name string) bool {
	c, ok := registry[name].(Centring)
	return ok && c.CentresPrivately()
}

// PrivacyNoter is implemented by a private algorithm that explains how a
// site's guarantee arises (printed by `pairfed simulate`).
type PrivacyNoter interface {
	PrivacyNote(spec *Spec) string
}

// Doc is what a federated algorithm says of itself, beside its code:
// `pairfed algos` and docs/algorithms.md print it. Its fields are those of
// a single-site pairwise.Algorithm of the same names; the name, privacy,
// tasks, losses and secure aggregation come from the algorithm's methods
// and its validator.
type Doc struct {
	// Title is one line: what the algorithm does.
	Title string
	// Paper cites the paper it reproduces ("[Y21a] Authors. Title.
	// Venue"), or "pairfed (…)" for the project's own mechanisms.
	Paper string
	// Ref names the paper's algorithm and theorem, and the files.
	Ref string
	// Assumptions are the conditions of its guarantee and its privacy
	// composition.
	Assumptions string
}

// Documented is implemented by an algorithm that carries its Doc. Every
// algorithm of this package does (TestEveryAlgorithmDocumented); one
// registered from elsewhere without it is listed as "(undocumented)".
type Documented interface {
	Doc() Doc
}

// DocOf returns the named algorithm's Doc; ok is false when the name is
// not registered or the algorithm carries none.
func DocOf(name string) (d Doc, ok bool) {
	a, ok := registry[name].(Documented)
	if !ok {
		return Doc{}, false
	}
	return a.Doc(), true
}

var registry = map[string]Algorithm{}

// Register adds an algorithm under its name and makes protocol validate
// announcements and submissions of it with Validate. It panics on a
// duplicate or invalid name (a programming error, at init).
func Register(a Algorithm) {
	name := a.Name()
	if err := protocol.ValidName("algorithm", name); err != nil {
		panic("fedalgo: " + err.Error())
	}
	if _, dup := registry[name]; dup {
		panic("fedalgo: duplicate algorithm " + name)
	}
	registry[name] = a
	protocol.RegisterAlgorithm(name, func(p protocol.AlgoParams) error { return validateParams(a, p) })
}

// Lookup returns the named algorithm.
func Lookup(name string) (Algorithm, error) {
	a, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown federated algorithm %q (one of %v)", name, Names())
	}
	return a, nil
}

// Names lists the registered algorithms, sorted.
func Names() []string { return slices.Sorted(maps.Keys(registry)) }

// Private reports whether name is a registered private algorithm.
func Private(name string) bool {
	a, ok := registry[name]
	return ok && a.Private()
}

// SingleClassSites is implemented by an algorithm that learns from sites
// holding one class: it pools per-site statistics (class sums, moments,
// counts) across sites, so a site contributes whatever its label mix.
// Every other algorithm forms pairs, or fits a model, within each site,
// where a site of one class has no positive–negative pair.
type SingleClassSites interface {
	SingleClassSites() bool
}

// LearnsFromSingleClassSites reports whether the registered algorithm
// name learns from sites that hold one class (SingleClassSites).
func LearnsFromSingleClassSites(name string) bool {
	a, ok := registry[name].(SingleClassSites)
	return ok && a.SingleClassSites()
}

// SingleClassNames lists the registered algorithms that learn from sites
// holding one class.
func SingleClassNames() []string {
	var out []string
	for _, n := range Names() {
		if LearnsFromSingleClassSites(n) {
			out = append(out, n)
		}
	}
	return out
}

// LocalAlgo is implemented by an algorithm that runs a single-site
// algorithm (Spec.LocalAlgo) at every site; the others take none.
type LocalAlgo interface {
	// CheckLocalAlgo checks the local algorithm's name as it travels in
	// a message (that it exists is checked by Configure and NewSite).
	CheckLocalAlgo(local string) error
}

// PlanCharge returns the (ε, δ) the plan of spec's algorithm charges each
// of sites (a coordinator checks budgets with it before the job starts);
// dim is the sites' dimension. spec must be configured.
func PlanCharge(spec *Spec, sites []SiteInfo, dim int) (eps, delta float64, err error) {
	a, err := Lookup(spec.Algo)
	if err != nil {
		return 0, 0, err
	}
	params := dim
	if spec.Task == protocol.TaskMetric {
		params = dim * dim
	}
	s := *spec
	p, err := a.Plan(&s, sites, params)
	if err != nil {
		return 0, 0, err
	}
	return p.Epsilon, p.Delta, nil
}

// TakesLocalAlgo reports whether the named algorithm runs a single-site
// algorithm at every site (Spec.LocalAlgo).
func TakesLocalAlgo(name string) bool {
	_, ok := registry[name].(LocalAlgo)
	return ok
}

// Optioned is implemented by an algorithm that takes options
// (Spec.Options); the others accept none.
type Optioned interface {
	// CheckOptions is the validator of the algorithm's options (names and
	// values as they travel in a message: names are subject tokens,
	// values finite).
	CheckOptions(options protocol.Options) error
}

// validateParams is the protocol's check of the algorithm-specific
// parameters of a message about a job of a.
func validateParams(a Algorithm, p protocol.AlgoParams) error {
	if err := checkOptions(a, p.Options); err != nil {
		return err
	}
	if l, ok := a.(LocalAlgo); ok {
		return l.CheckLocalAlgo(p.LocalAlgo)
	}
	if p.LocalAlgo != "" {
		return fmt.Errorf("%s takes no local algorithm (got %q)", a.Name(), p.LocalAlgo)
	}
	return nil
}

// checkOptions runs the algorithm's options validator, or refuses options
// for an algorithm that takes none.
func checkOptions(a Algorithm, options protocol.Options) error {
	options, err := splitSecAgg(a, options)
	if err != nil {
		return err
	}
	if o, ok := a.(Optioned); ok {
		return o.CheckOptions(options)
	}
	if len(options) > 0 {
		return fmt.Errorf("%s takes no options (got %v)", a.Name(), options)
	}
	return nil
}

// Mechanism names the noise of a job's releases for the coordinator's
// ledger: "none" for a non-private algorithm, MechanismDDG under secure
// aggregation, "laplace" for δ = 0, else "gaussian".
func Mechanism(job *protocol.JobAnnounce) string {
	switch {
	case !Private(job.Algo):
		return "none"
	case SecAggRequested(job.Options):
		return MechanismDDG
	case job.Delta == 0:
		return "laplace"
	}
	return "gaussian"
}

// PrivacyNote says how a private job's per-site guarantee arises.
func PrivacyNote(spec *Spec) string {
	a, err := Lookup(spec.Algo)
	if err != nil {
		return ""
	}
	if SecAggRequested(spec.Options) {
		return secAggNote(a, spec) // secure.go
	}
	if n, ok := a.(PrivacyNoter); ok {
		return n.PrivacyNote(spec)
	}
	return fmt.Sprintf("per-site record-level (ε, δ)-DP as %s states it", spec.Algo)
}

// Configure looks up spec.Algo, checks the local algorithm's presence and
// the options against the algorithm (as the protocol does) and runs the
// algorithm's Configure: defaults and its validator.
func Configure(spec *Spec) (Algorithm, error) {
	a, err := Lookup(spec.Algo)
	if err != nil {
		return nil, err
	}
	if _, ok := a.(LocalAlgo); !ok && spec.LocalAlgo != "" {
		return nil, fmt.Errorf("%s takes no local algorithm (got %q)", a.Name(), spec.LocalAlgo)
	}
	if err := checkOptions(a, spec.Options); err != nil {
		return nil, err
	}
	if err := CheckSecAggSpec(spec.Options); err != nil {
		return nil, err
	}
	if err := a.Configure(spec); err != nil {
		return nil, err
	}
	if st, ok := a.(SumTasker); ok && SecAggRequested(spec.Options) {
		if err := st.SumTask(spec.Task); err != nil {
			return nil, err
		}
	}
	if err := checkCalibration(a, spec); err != nil {
		return nil, err
	}
	return a, nil
}
