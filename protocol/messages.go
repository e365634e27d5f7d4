package protocol

import "fmt"

// Version is the protocol version written into every message. Decode
// accepts exactly the versions in knownVersions.
const Version uint16 = 1

var knownVersions = map[uint16]bool{Version: true}

// Kind is the first byte of an encoded message.
type Kind byte

// Message kinds. ONLY APPEND TO THIS LIST: the values are on the wire and
// in testdata. Never reuse or renumber a value; retire one by leaving its
// constant in place.
const (
	KindJoin        Kind = 1 + iota // site → coordinator: I am here, n records of dimension d
	KindHeartbeat                   // site → coordinator: liveness
	KindJobAnnounce                 // coordinator → sites: job parameters and participants
	KindPhaseStart                  // coordinator → sites: run phase k from this model
	KindSiteUpdate                  // site → coordinator: my (noisy) phase output
	KindAbort                       // either way: the job stops
	KindResult                      // coordinator → sites: the final model
	KindLeave                       // site → coordinator: I am going away
	KindJobSubmit                   // client → coordinator: run this job (repeatable: a known job id gets its status)
	KindJobStatus                   // coordinator → client: where a submitted job stands
	KindRefuse                      // site → coordinator: I will not take part in this job (e.g. privacy budget)
)

var kindNames = map[Kind]string{
	KindJoin: "join", KindHeartbeat: "heartbeat", KindJobAnnounce: "job-announce", KindPhaseStart: "phase-start",
	KindSiteUpdate: "site-update", KindAbort: "abort", KindResult: "result", KindLeave: "leave",
	KindJobSubmit: "job-submit", KindJobStatus: "job-status", KindRefuse: "refuse",
}

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("kind(%d)", byte(k))
}

// newMessage returns an empty message of kind k, or nil for an unknown kind.
func newMessage(k Kind) Message {
	switch k {
	case KindJoin:
		return &Join{}
	case KindHeartbeat:
		return &Heartbeat{}
	case KindJobAnnounce:
		return &JobAnnounce{}
	case KindPhaseStart:
		return &PhaseStart{}
	case KindSiteUpdate:
		return &SiteUpdate{}
	case KindAbort:
		return &Abort{}
	case KindResult:
		return &Result{}
	case KindLeave:
		return &Leave{}
	case KindJobSubmit:
		return &JobSubmit{}
	case KindJobStatus:
		return &JobStatus{}
	case KindRefuse:
		return &Refuse{}
	}
	return nil
}

// Message is one protocol message. The concrete types are the pointer
// types below; Decode returns them.
type Message interface {
	Kind() Kind
	// Validate reports the first problem that makes the message unusable.
	Validate() error
}

// Compile-time checks.
var (
	_ Message = (*Join)(nil)
	_ Message = (*Heartbeat)(nil)
	_ Message = (*JobAnnounce)(nil)
	_ Message = (*PhaseStart)(nil)
	_ Message = (*SiteUpdate)(nil)
	_ Message = (*Abort)(nil)
	_ Message = (*Result)(nil)
	_ Message = (*Leave)(nil)
	_ Message = (*JobSubmit)(nil)
	_ Message = (*JobStatus)(nil)
	_ Message = (*Refuse)(nil)
)

// Join announces a site. Records (n) and Dim (d) are public metadata: the
// coordinator needs them to size the model and weight the average.
type Join struct {
	Site    string `msgpack:"site"`
	Records int    `msgpack:"records"`
	Dim     int    `msgpack:"dim"`
}

// Heartbeat tells the coordinator that Site is alive; Seq increases.
type Heartbeat struct {
	Site string `msgpack:"site"`
	Seq  uint64 `msgpack:"seq"`
}

// JobAnnounce fixes a job: its algorithm and every parameter a site needs
// to run its local phases, and the participating sites. A site not listed
// does not take part.
type JobAnnounce struct {
	Job  string `msgpack:"job"`
	Algo string `msgpack:"algo"` // one of FedAlgos
	Task string `msgpack:"task"` // "auc" (w ∈ R^d) or "metric" (W ∈ S^d, d·d parameters)
	// LocalAlgo names the single-site private algorithm (a registered
	// pairwise algorithm, e.g. "dpegd") a fed-oneshot site runs; empty for
	// every other algorithm (omitted, so older encodings are unchanged).
	LocalAlgo string `msgpack:"local_algo,omitempty"`
	Loss      string `msgpack:"loss"` // "hinge", "square", "logistic"
	// Params is the length of the model vector (d for auc).
	Params int `msgpack:"params"`
	// Phases is the number of coordinator rounds (fed-avg), of [Y21a]
	// Alg 3 phases K (fed-dp-local-sgd), or of [K22] Alg 1 iterations T
	// (fed-dp-gd-grad: every site's σ depends on it).
	Phases int `msgpack:"phases"`
	// LocalPasses is the passes over its data a fed-avg site makes per round.
	LocalPasses float64 `msgpack:"local_passes"`
	// Eta is the base step size η.
	Eta float64 `msgpack:"eta"`
	// ParamRadius is B (ℓ2 ball W); FeatureRadius is R (sites clip to it).
	ParamRadius   float64 `msgpack:"param_radius"`
	FeatureRadius float64 `msgpack:"feature_radius"`
	Lambda        float64 `msgpack:"lambda"`
	// Epsilon, Delta: the per-site record-level (ε, δ) of a private job
	// (0, 0 otherwise).
	Epsilon float64 `msgpack:"epsilon"`
	Delta   float64 `msgpack:"delta"`
	// Seed seeds the sites' sampling in reproducible (non-private) runs.
	Seed  uint64   `msgpack:"seed"`
	Sites []string `msgpack:"sites"`
	// Aggregation is the coordinator's rule for combining updates (see
	// Aggregation); "" is the weighted mean. Omitted when empty.
	Aggregation string `msgpack:"aggregation,omitempty"`
}

// PhaseStart asks every participant to run phase Phase (1-based) from Model.
type PhaseStart struct {
	Job   string    `msgpack:"job"`
	Phase int       `msgpack:"phase"`
	Model []float64 `msgpack:"model"`
}

// SiteUpdate is a site's released output of one phase (for fed-dp-gd-grad
// Model is the site's noisy gradient at the broadcast model). Weight is its
// aggregation weight (records, or partition size); Sigma the Gaussian σ it
// added (0 for fed-avg); Epsilon, Delta the guarantee it claims for its
// records; Secure whether its noise source was cryptographically secure
// (a seeded run is not private); Last the optional last iterate of a
// fed-avg round.
type SiteUpdate struct {
	Job     string    `msgpack:"job"`
	Phase   int       `msgpack:"phase"`
	Site    string    `msgpack:"site"`
	Model   []float64 `msgpack:"model"`
	Weight  float64   `msgpack:"weight"`
	Sigma   float64   `msgpack:"sigma"`
	Epsilon float64   `msgpack:"epsilon"`
	Delta   float64   `msgpack:"delta"`
	Secure  bool      `msgpack:"secure"`
	// Last is a fed-avg site's last local iterate: the next round starts
	// from the weighted average of the sites' Last, while Model (the
	// [Y21a] Alg 1 average) feeds the job's output, the mean over rounds
	// of the aggregated Models. Optional (omitted when empty, so older
	// encodings still decode): a site that sends none, a fed-dp-local-sgd
	// update, or a model longer than MaxLastParams (both vectors must fit
	// MaxMessageSize) lets the coordinator restart from Model instead.
	Last []float64 `msgpack:"last,omitempty"`
	// Sigmas, when set, lists every σ of the release in order (a
	// fed-oneshot site running an algorithm with several noisy steps, e.g.
	// dpegd's epochs or dp-gd-grad's gradients); Sigma is then its first
	// entry. Optional (omitted when empty).
	Sigmas []float64 `msgpack:"sigmas,omitempty"`
}

// Abort stops a job. From is the sender (a site name or "coordinator").
type Abort struct {
	Job    string `msgpack:"job"`
	From   string `msgpack:"from"`
	Reason string `msgpack:"reason"`
}

// Result is the final model of a job.
type Result struct {
	Job    string    `msgpack:"job"`
	Phases int       `msgpack:"phases"`
	Model  []float64 `msgpack:"model"`
	Sites  []string  `msgpack:"sites"`
}

// Leave announces that a site goes away.
type Leave struct {
	Site   string `msgpack:"site"`
	Reason string `msgpack:"reason"`
}

// JobSubmit asks the coordinator to run a job. Job is chosen by the client
// and identifies the job from then on: submitting a known Job again does
// not start a second run, it returns the job's status (clients poll that
// way). The coordinator replies with JobStatus on ClientSubject(fed,
// Client): at once (queued, running, or a refusal) and again when the job
// ends. Zero values of the numeric parameters mean the coordinator's
// defaults (see coordinator.JobConfig).
type JobSubmit struct {
	Job    string `msgpack:"job"`
	Client string `msgpack:"client"`
	Algo   string `msgpack:"algo"`
	Loss   string `msgpack:"loss"` // "" for the algorithm's default
	// LocalAlgo is fed-oneshot's single-site private algorithm (see
	// JobAnnounce.LocalAlgo); omitted when empty.
	LocalAlgo string `msgpack:"local_algo,omitempty"`
	// MinSites is the number of live sites the job needs to start, and
	// its quorum: a phase that times out is aggregated from at least
	// MinSites updates.
	MinSites      int     `msgpack:"min_sites"`
	Rounds        int     `msgpack:"rounds"`
	LocalPasses   float64 `msgpack:"local_passes"`
	Eta           float64 `msgpack:"eta"`
	ParamRadius   float64 `msgpack:"param_radius"`
	FeatureRadius float64 `msgpack:"feature_radius"`
	Lambda        float64 `msgpack:"lambda"`
	Epsilon       float64 `msgpack:"epsilon"`
	Delta         float64 `msgpack:"delta"`
	Seed          uint64  `msgpack:"seed"`
	// Aggregation asks for robust aggregation (see Aggregation); omitted
	// when empty.
	Aggregation string `msgpack:"aggregation,omitempty"`
	// Task is "auc" (default when empty) or "metric"; omitted when empty.
	Task string `msgpack:"task,omitempty"`
}

// Job states (JobStatus.Status).
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusCompleted = "completed"
	// StatusRefused: the coordinator refused the job (queue full) or too
	// many sites refused it (privacy budget) to reach its quorum.
	StatusRefused = "refused"
	// StatusFailed: the job was invalid or aborted.
	StatusFailed = "failed"
)

// JobStatus reports a job. Model, Phases, AUC and Privacy are set when it
// completed; AUC is the coordinator's evaluation on its own test file when
// TestRecords > 0.
type JobStatus struct {
	Job    string `msgpack:"job" json:"job"`
	Status string `msgpack:"status" json:"status"`
	Reason string `msgpack:"reason" json:"reason,omitempty"`
	Algo   string `msgpack:"algo" json:"algorithm,omitempty"`
	Phases int    `msgpack:"phases" json:"phases"`
	// Sites are the participants still active at the end; Dropped those
	// that left or fell silent during the job; Refused those that refused.
	Sites       []string     `msgpack:"sites" json:"sites"`
	Dropped     []string     `msgpack:"dropped" json:"dropped,omitempty"`
	Refused     []string     `msgpack:"refused" json:"refused,omitempty"`
	Model       []float64    `msgpack:"model" json:"model,omitempty"`
	AUC         float64      `msgpack:"auc" json:"auc"`
	TestRecords int          `msgpack:"test_records" json:"n_test"`
	Privacy     []SiteReport `msgpack:"privacy" json:"privacy,omitempty"`
	// PhaseAUC is the coordinator's test AUC of the model after each
	// aggregated phase (when it has a test file); omitted otherwise.
	PhaseAUC []float64 `msgpack:"phase_auc,omitempty" json:"phase_auc,omitempty"`
	// Metric names what AUC and PhaseAUC hold: "" for the AUC of a linear
	// model, "knn3" for the leave-one-out KNN-3 accuracy of a metric
	// model on the coordinator's test file.
	Metric string `msgpack:"metric,omitempty" json:"metric,omitempty"`
	// Announce is the job as it was announced to the sites: every
	// parameter (η, B, R, λ, ε, δ, phases, sites, aggregation) of the run;
	// omitted before the job started.
	Announce *JobAnnounce `msgpack:"announce,omitempty" json:"announce,omitempty"`
}

// SiteReport is what a participant reported about its releases in a job:
// its record-level (ε, δ), every σ it added, and whether all its noise
// came from a secure source.
type SiteReport struct {
	Site    string    `msgpack:"site" json:"site"`
	Records int       `msgpack:"records" json:"records"`
	Epsilon float64   `msgpack:"epsilon" json:"epsilon"`
	Delta   float64   `msgpack:"delta" json:"delta"`
	Sigmas  []float64 `msgpack:"sigmas" json:"sigmas"`
	Secure  bool      `msgpack:"secure" json:"private"`
	// ComposedEpsilon, when > 0, is the ε at Delta that exact Gaussian-DP
	// composition (dp.Compose) proves for the site's releases, next to the
	// paper's claim Epsilon (fed-dp-gd-grad); omitted otherwise.
	ComposedEpsilon float64 `msgpack:"composed_epsilon,omitempty" json:"composed_epsilon,omitempty"`
}

// Refuse tells the coordinator that Site will not take part in Job, and
// why (for example: its privacy budget would be exceeded). Unlike Abort it
// does not end the job by itself: the job goes on if enough sites remain.
type Refuse struct {
	Job    string `msgpack:"job"`
	Site   string `msgpack:"site"`
	Reason string `msgpack:"reason"`
}

func (*Join) Kind() Kind        { return KindJoin }
func (*Heartbeat) Kind() Kind   { return KindHeartbeat }
func (*JobAnnounce) Kind() Kind { return KindJobAnnounce }
func (*PhaseStart) Kind() Kind  { return KindPhaseStart }
func (*SiteUpdate) Kind() Kind  { return KindSiteUpdate }
func (*Abort) Kind() Kind       { return KindAbort }
func (*Result) Kind() Kind      { return KindResult }
func (*Leave) Kind() Kind       { return KindLeave }
func (*JobSubmit) Kind() Kind   { return KindJobSubmit }
func (*JobStatus) Kind() Kind   { return KindJobStatus }
func (*Refuse) Kind() Kind      { return KindRefuse }

// Federated algorithm names (JobAnnounce.Algo).
const (
	// AlgoFedAvg is the non-private baseline: each round every site runs
	// local sgd-prev ([Y21a] Alg 1) epochs from the broadcast model with
	// step √N·η/√(R·T_s); the coordinator averages the sites' last
	// iterates (the next round's start) and their Alg 1 averages, weighted
	// by record count, and outputs the mean over rounds of the latter.
	AlgoFedAvg = "fed-avg"
	// AlgoFedDPLocalSGD is [Y21a] Alg 3 run per site: phase k on the site's
	// k-th disjoint partition from the broadcast model, Gaussian noise σ_k
	// added at the site, outputs averaged weighted by partition size.
	AlgoFedDPLocalSGD = "fed-dp-local-sgd"
	// AlgoFedOneShot runs a single-site private algorithm (JobAnnounce.
	// LocalAlgo, e.g. "dpegd") once at every site on all its records with
	// the site's own noise; one phase; the coordinator averages the
	// released models weighted by record count. Per-site privacy is the
	// algorithm's (ε, δ): one release per record set.
	AlgoFedOneShot = "fed-oneshot"
	// AlgoFedDPEGD is [X21] Alg 3 (DPEGD) run per site: phase i is epoch i
	// on the site's i-th disjoint subset from the broadcast model, with
	// the site's Gaussian noise σ_i; the coordinator averages the outputs
	// weighted by subset size. Epochs on disjoint subsets compose in
	// parallel: per-site (ε, δ).
	AlgoFedDPEGD = "fed-dpegd"
	// AlgoFedDPGDGrad is [K22] Alg 1 (dp-gd-grad) run across sites: phase
	// t (of T = Phases) broadcasts θ_{t−1}; each site releases its full
	// pairwise gradient on all its records plus N(0, σ_s² I), σ_s =
	// 8G√(T log(1/δ))/(n_s ε) (SiteUpdate.Model carries that noisy
	// gradient, not a model); the coordinator averages the gradients
	// weighted by n_s, steps θ_t = Π_C(θ_{t−1} − η ḡ) and outputs θ_T. A
	// site's T releases are on the same records and compose sequentially
	// ([K22] Thm 1): per-site (ε, δ).
	AlgoFedDPGDGrad = "fed-dp-gd-grad"
)

// FedAlgos lists the federated algorithms, in the order they were added.
var FedAlgos = []string{AlgoFedAvg, AlgoFedDPLocalSGD, AlgoFedOneShot, AlgoFedDPEGD, AlgoFedDPGDGrad}

// PrivateFedAlgo reports whether algo is a private federated algorithm
// (sites add noise and report (ε, δ) and σ).
func PrivateFedAlgo(algo string) bool {
	switch algo {
	case AlgoFedDPLocalSGD, AlgoFedOneShot, AlgoFedDPEGD, AlgoFedDPGDGrad:
		return true
	}
	return false
}
