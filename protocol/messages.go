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
	KindAccept                      // site → coordinator: I take part in this job (budget checked); no phase starts before every participant answered
	KindJobQuery                    // client → coordinator: the status of a job (never starts one; an unknown id gets status unknown)
)

var kindNames = map[Kind]string{
	KindJoin: "join", KindHeartbeat: "heartbeat", KindJobAnnounce: "job-announce", KindPhaseStart: "phase-start",
	KindSiteUpdate: "site-update", KindAbort: "abort", KindResult: "result", KindLeave: "leave",
	KindJobSubmit: "job-submit", KindJobStatus: "job-status", KindRefuse: "refuse", KindAccept: "accept",
	KindJobQuery: "job-query",
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
	case KindAccept:
		return &Accept{}
	case KindJobQuery:
		return &JobQuery{}
	case KindJobList:
		return &JobList{}
	case KindJobPage:
		return &JobPage{}
	case KindJobCancel:
		return &JobCancel{}
	}
	return newSecAggMessage(k) // nil for an unknown kind
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
	// Instance identifies the process (a random token drawn at its
	// start): the coordinator refuses a second live process with the
	// same site name, and a restarted site (a new instance) takes over
	// once the old one is silent. Empty: not checked.
	Instance string `msgpack:"instance,omitempty"`
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
	Algo string `msgpack:"algo"` // a federated algorithm (see AlgoParams)
	Task string `msgpack:"task"` // "auc" (w ∈ R^d) or "metric" (W ∈ S^d, d·d parameters)
	// LocalAlgo names the single-site algorithm (a registered pairwise
	// algorithm, e.g. "dpegd") an algorithm that runs one at every site
	// uses; empty for the others (omitted, so older encodings are
	// unchanged). The algorithm's validator decides (AlgoParams).
	LocalAlgo string `msgpack:"local_algo,omitempty"`
	Loss      string `msgpack:"loss"` // "hinge", "square", "logistic"
	// Params is the length of the model vector (d for auc).
	Params int `msgpack:"params"`
	// Phases is the number of coordinator phases the algorithm's plan
	// fixed (rounds, partitions or iterations; a site's σ may depend on it).
	Phases int `msgpack:"phases"`
	// LocalPasses is the passes over its data a site makes per round, for
	// the algorithms that take it.
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
	// Instances, when not empty, names the process instance (Join) that
	// the coordinator admitted for each of Sites (same order; "" for a
	// site that gave none): a second process running under a site's name
	// sees another instance and takes no part.
	Instances []string `msgpack:"instances,omitempty" json:",omitempty"`
	// Aggregation is the coordinator's rule for combining updates (see
	// Aggregation); "" is the weighted mean. Omitted when empty.
	Aggregation string `msgpack:"aggregation,omitempty"`
	// Options are the algorithm's own named parameters (see AlgoParams),
	// checked by its validator. Omitted when empty.
	Options Options `msgpack:"options,omitempty" json:",omitempty"`
	// Calibration is how a private job's sites choose their noise:
	// CalibrationExact (the default, also when empty) or
	// CalibrationPaper (the paper's printed σ, refused unless the exact
	// accountant certifies it; see CheckCalibration). Omitted when empty,
	// so older encodings are unchanged.
	Calibration string `msgpack:"calibration,omitempty" json:",omitempty"`
	// Schema is the job's public feature-bounds schema (the JSON text of a
	// schemas/*.json file, at most MaxSchemaBytes; see data.Schema): every
	// site maps its records with it, so that all sites and the evaluator
	// apply one map. A site that has a schema of its own refuses a job
	// whose schema differs from it; a site refuses a private job that
	// carries none unless it has its own. Validate checks the size and
	// that it is one JSON object; each site parses it strictly before
	// use (a peer's bytes are never trusted). Omitted when empty, so
	// older encodings are unchanged.
	Schema string `msgpack:"schema,omitempty" json:"schema,omitempty"`
}

// PhaseStart asks every participant to run phase Phase (1-based) from Model.
type PhaseStart struct {
	Job   string    `msgpack:"job"`
	Phase int       `msgpack:"phase"`
	Model []float64 `msgpack:"model"`
}

// SiteUpdate is a site's released output of one phase: a model, or
// whatever vector the algorithm's coordinator half combines (e.g. a noisy
// gradient at the broadcast model). Weight is its aggregation weight
// (records, or partition size); Sigma the Gaussian σ it added (0 for a
// non-private algorithm); Epsilon, Delta the guarantee it claims for its
// records; Secure whether its noise source was cryptographically secure
// (a seeded run is not private); Last an optional second vector, the last
// iterate of a round for the algorithms that restart from it.
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
	// Last is a site's last local iterate, for algorithms whose next
	// round starts from it while Model feeds the job's output.
	// Optional (omitted when empty, so older encodings still decode): a
	// site that sends none, or a model longer than MaxLastParams (both
	// vectors must fit MaxMessageSize), lets the coordinator restart from
	// Model instead.
	Last []float64 `msgpack:"last,omitempty"`
	// Sigmas, when set, lists every σ of the release in order (a release
	// with several noisy steps, e.g. a local dpegd's epochs); Sigma is
	// then its first entry. Optional (omitted when empty).
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
	// Instance is the leaving process's instance (Join.Instance): the
	// Leave of a second, refused process does not remove the admitted one.
	Instance string `msgpack:"instance,omitempty"`
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
	// LocalAlgo is the single-site algorithm of an algorithm that runs
	// one (see JobAnnounce.LocalAlgo); omitted when empty.
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
	// Options are the algorithm's own named parameters (see
	// JobAnnounce.Options); omitted when empty.
	Options Options `msgpack:"options,omitempty" json:",omitempty"`
	// Calibration asks for the noise calibration of a private job (see
	// JobAnnounce.Calibration); omitted when empty.
	Calibration string `msgpack:"calibration,omitempty" json:",omitempty"`
	// Schema is the job's public feature-bounds schema, announced to
	// every site (see JobAnnounce.Schema); omitted when empty.
	Schema string `msgpack:"schema,omitempty" json:"schema,omitempty"`
	// CancelHash is the SHA-256 of the job's cancel key, a secret of
	// CancelKeyLen random bytes that `pairfed job submit` draws and gives
	// only to its user: a job submitted with one is cancelled only by a
	// JobCancel carrying that key (or the coordinator operator's admin
	// key); see JobCancel, "Who may cancel". Empty (older clients): any
	// client of the account may cancel it. Exactly CancelKeyLen bytes
	// when set (CheckCancelHash).
	CancelHash []byte `msgpack:"cancel_hash,omitempty" json:"cancel_hash,omitempty"`
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
	// StatusUnknown answers a JobQuery for an id the coordinator does not
	// know (never sent for a submission).
	StatusUnknown = "unknown"
)

// JobQuery asks the coordinator for the status of Job (with its model,
// announcement and privacy reports when it completed), replied as a
// JobStatus on ClientSubject(fed, Client). Unlike a JobSubmit of an
// unknown id it never starts a job: an unknown id gets StatusUnknown.
type JobQuery struct {
	Job    string `msgpack:"job"`
	Client string `msgpack:"client"`
}

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
	Sites   []string `msgpack:"sites" json:"sites"`
	Dropped []string `msgpack:"dropped" json:"dropped,omitempty"`
	Refused []string `msgpack:"refused" json:"refused,omitempty"`
	// Excluded are the participants dropped from a secure aggregation
	// round because other sites refused their share ciphertexts (garbage,
	// replayed or altered: a rogue or broken site), instead of aborting the
	// round; Reason says which round and who refused them. Omitted when
	// none (older encodings are unchanged).
	Excluded    []string     `msgpack:"excluded,omitempty" json:"excluded,omitempty"`
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
	// Submitted and Finished are the Unix times (seconds) at which the
	// coordinator queued the job and recorded its end, when it knows them
	// (0: unknown, omitted; older encodings are unchanged).
	Submitted int64 `msgpack:"submitted,omitempty" json:"submitted,omitempty"`
	Finished  int64 `msgpack:"finished,omitempty" json:"finished,omitempty"`
	// BestPhase, BestAUC and BestModel, for a completed job of several
	// phases scored by the coordinator after each phase (PhaseAUC): the
	// phase whose model scored best on the coordinator's own test file
	// (the earliest on ties), its score, and that model (the global model
	// after that phase, as broadcast to the sites). The selection uses
	// the evaluator's records: it is not covered by any privacy
	// guarantee and its score is optimistic (see coordinator.BestModel).
	// Omitted otherwise (older encodings are unchanged).
	BestPhase int       `msgpack:"best_phase,omitempty" json:"best_phase,omitempty"`
	BestAUC   float64   `msgpack:"best_auc,omitempty" json:"best_auc,omitempty"`
	BestModel []float64 `msgpack:"best_model,omitempty" json:"best_model,omitempty"`
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
	// paper's claim Epsilon (algorithms with an exact accountant); omitted
	// otherwise.
	ComposedEpsilon float64 `msgpack:"composed_epsilon,omitempty" json:"composed_epsilon,omitempty"`
	// CertifiedEpsilon and CertifiedDelta are what the coordinator's
	// ledger charged the site for the job: the largest (ε, δ) among the
	// job's charges of the site (its reservation and the certified
	// guarantee each of its updates stated), which is how the ledger
	// composes within a job. Never above the request (Epsilon, Delta);
	// omitted (0) when the site was charged nothing for the job. Appended
	// after ComposedEpsilon: older peers' encodings are unchanged.
	CertifiedEpsilon float64 `msgpack:"certified_epsilon,omitempty" json:"certified_epsilon,omitempty"`
	CertifiedDelta   float64 `msgpack:"certified_delta,omitempty" json:"certified_delta,omitempty"`
}

// Refuse tells the coordinator that Site will not take part in Job, and
// why (for example: its privacy budget would be exceeded). Unlike Abort it
// does not end the job by itself: the job goes on if enough sites remain.
type Refuse struct {
	Job    string `msgpack:"job"`
	Site   string `msgpack:"site"`
	Reason string `msgpack:"reason"`
}

// Accept tells the coordinator that Site takes part in the announced Job:
// it checked the job against its privacy budget and its data, and will
// run the job's phases. The coordinator starts no phase before every
// participant accepted or refused (or timed out), so that a job refused
// by one site charges no one — no site releases anything for it and
// neither ledger records it. Instance is the answering process's
// instance (as in its Join).
type Accept struct {
	Job      string `msgpack:"job"`
	Site     string `msgpack:"site"`
	Instance string `msgpack:"instance,omitempty"`
}

func (*Accept) Kind() Kind { return KindAccept }

func (*JobQuery) Kind() Kind { return KindJobQuery }

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
