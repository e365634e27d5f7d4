package coordinator

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/protocol"
)

// ModelFileSuffix names a finished job's model artefact next to its status
// in a coordinator's state directory: jobs/<job>.model.json (job ids have
// no dots, so it never collides with jobs/<job>.json).
const ModelFileSuffix = ".model.json"

// FederatedModel is the model artefact (package model) of a federated
// job's global model w as announced in a: the algorithm and its
// parameters, and the certificate made of the sites' guarantees — per site
// record-level (ε, δ) under replace-one of that site's records. private
// is the caller's end-to-end verdict and reasons what denies it (nil when
// private). The preprocessing map is only what the job fixes (R, clip):
// Scale "sites", which the caller replaces when it knows the sites' map
// (`pairfed simulate`, `pairfed job model --feature-bounds`).
func FederatedModel(a *protocol.JobAnnounce, w []float64, sites []model.SiteGuarantee, records int, statement any, private bool, reasons []string) (*model.Model, error) {
	if a == nil {
		return nil, fmt.Errorf("coordinator: the job has no announcement: it never started, so it has no model")
	}
	m := &model.Model{Task: a.Task, Loss: a.Loss, ScoreMeaning: model.ScoreMeaning,
		Preprocessing: model.Preprocessing{Scale: "sites", Norm: "clip", Radius: a.FeatureRadius}}
	switch a.Task {
	case protocol.TaskMetric:
		d := int(math.Round(math.Sqrt(float64(len(w)))))
		if d*d != len(w) {
			return nil, fmt.Errorf("coordinator: metric model of %d parameters is not d×d", len(w))
		}
		m.D, m.Metric, m.ScoreMeaning = d, w, model.MetricScoreMeaning
	default:
		m.Task, m.D, m.Weights = "auc", len(w), w
	}
	m.Algorithm = model.Algorithm{Name: a.Algo, Local: a.LocalAlgo, Federated: true,
		Params: map[string]float64{"eta": a.Eta, "param_radius": a.ParamRadius, "feature_radius": a.FeatureRadius, "lambda": a.Lambda,
			"phases": float64(a.Phases), "local_passes": a.LocalPasses, "sites": float64(len(a.Sites))},
		Settings: map[string]string{"aggregation": a.Aggregation, "calibration": a.Calibration, "sites": strings.Join(a.Sites, ",")},
		Release:  fmt.Sprintf("the coordinator's final model of job %s after %d phases (the global model every site received)", a.Job, a.Phases)}
	for _, o := range a.Options {
		m.Algorithm.Params["option:"+o.Name] = o.Value
	}
	c := model.Certificate{Neighbouring: model.Neighbouring, N: records, Sites: sites, Private: private, Reasons: reasons}
	if fedalgo.Private(a.Algo) {
		c.Model = "record-level (ε, δ)-DP per site"
		for _, s := range sites {
			c.Epsilon, c.Delta = max(c.Epsilon, s.Epsilon), max(c.Delta, s.Delta)
		}
	}
	if private && len(reasons) == 0 {
		c.Why = fmt.Sprintf("every site's releases in %s are record-level (ε, δ)-DP for its own records with secure noise, at most %s per site as the sites and the coordinator's ledger certified; the global model is post-processing of those releases", a.Algo, model.CertifiedPair(c.Epsilon, c.Delta))
	} else {
		c.Private = false
		if len(c.Reasons) == 0 {
			c.Reasons = []string{"the job was not private end to end"}
		}
		c.Why = "NOT private: " + c.Reasons[0]
	}
	if statement != nil {
		b, err := json.Marshal(statement)
		if err != nil {
			return nil, fmt.Errorf("coordinator: %w", err)
		}
		c.Statement = b
	}
	m.Certificate = c
	return m, nil
}

// StatusModel is FederatedModel for a completed job's status, as the
// coordinator sees it: private when the algorithm is private and every
// site reported secure noise. The sites' preprocessing is outside the
// coordinator's view, so the certificate says the guarantee assumes each
// site prepared its records per record with public parameters.
func StatusModel(st *protocol.JobStatus) (*model.Model, error) {
	if st.Status != protocol.StatusCompleted || st.Model == nil {
		return nil, fmt.Errorf("coordinator: job %s is %s: only a completed job has a model", st.Job, st.Status)
	}
	var sites []model.SiteGuarantee
	records := 0
	private := fedalgo.Private(st.Algo) && len(st.Privacy) > 0
	var reasons []string
	for _, p := range st.Privacy {
		e, d := p.Epsilon, p.Delta
		if p.CertifiedEpsilon > 0 {
			e, d = p.CertifiedEpsilon, p.CertifiedDelta
		}
		sites = append(sites, model.SiteGuarantee{Site: p.Site, Epsilon: e, Delta: d, Secure: p.Secure})
		records += p.Records
		if !p.Secure {
			private = false
			reasons = append(reasons, fmt.Sprintf("site %s drew noise from an insecure (seeded) source", p.Site))
		}
	}
	if !fedalgo.Private(st.Algo) {
		reasons = append(reasons, st.Algo+" is not a differentially private algorithm: the global model is a function of the sites' records")
	} else if len(st.Privacy) == 0 {
		reasons = append(reasons, "no site reported its privacy")
	}
	m, err := FederatedModel(st.Announce, st.Model, sites, records, st.Privacy, private, reasons)
	if err != nil {
		return nil, err
	}
	if err := attachJobSchema(m, st.Announce); err != nil {
		return nil, err
	}
	if m.Certificate.Private {
		m.Certificate.Why += "; this assumes every site prepared its records per record with public parameters (a feature-bounds schema or none), which the coordinator cannot see"
	}
	m.Provenance = model.Provenance{Command: "coordinator"}
	return m, nil
}
