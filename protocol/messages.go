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
)

var kindNames = map[Kind]string{
	KindJoin: "join", KindHeartbeat: "heartbeat", KindJobAnnounce: "job-announce", KindPhaseStart: "phase-start",
	KindSiteUpdate: "site-update", KindAbort: "abort", KindResult: "result", KindLeave: "leave",
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
	Algo string `msgpack:"algo"` // "fed-avg" or "fed-dp-local-sgd"
	Task string `msgpack:"task"` // "auc" (metric learning: later)
	Loss string `msgpack:"loss"` // "hinge", "square", "logistic"
	// Params is the length of the model vector (d for auc).
	Params int `msgpack:"params"`
	// Phases is the number of coordinator rounds (fed-avg) or of [Y21a]
	// Alg 3 phases K (fed-dp-local-sgd).
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
}

// PhaseStart asks every participant to run phase Phase (1-based) from Model.
type PhaseStart struct {
	Job   string    `msgpack:"job"`
	Phase int       `msgpack:"phase"`
	Model []float64 `msgpack:"model"`
}

// SiteUpdate is a site's released output of one phase. Weight is its
// aggregation weight (records, or partition size); Sigma the Gaussian σ it
// added (0 for fed-avg); Epsilon, Delta the guarantee it claims for its
// records; Secure whether its noise source was cryptographically secure
// (a seeded run is not private).
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

func (*Join) Kind() Kind        { return KindJoin }
func (*Heartbeat) Kind() Kind   { return KindHeartbeat }
func (*JobAnnounce) Kind() Kind { return KindJobAnnounce }
func (*PhaseStart) Kind() Kind  { return KindPhaseStart }
func (*SiteUpdate) Kind() Kind  { return KindSiteUpdate }
func (*Abort) Kind() Kind       { return KindAbort }
func (*Result) Kind() Kind      { return KindResult }
func (*Leave) Kind() Kind       { return KindLeave }

// Federated algorithm names (JobAnnounce.Algo).
const (
	// AlgoFedAvg is the non-private baseline: each round every site runs
	// local sgd-prev ([Y21a] Alg 1) epochs from the broadcast model; the
	// coordinator averages the outputs weighted by record count.
	AlgoFedAvg = "fed-avg"
	// AlgoFedDPLocalSGD is [Y21a] Alg 3 run per site: phase k on the site's
	// k-th disjoint partition from the broadcast model, Gaussian noise σ_k
	// added at the site, outputs averaged weighted by partition size.
	AlgoFedDPLocalSGD = "fed-dp-local-sgd"
)
