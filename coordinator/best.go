package coordinator

import (
	"fmt"
	"slices"

	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/protocol"
)

// The best model of a job: for a job of several phases that the
// coordinator scores after each phase (ServiceConfig.Evaluate: PhaseAUC),
// the global model after the phase that scored best on the coordinator's
// own test file is kept next to the final model (JobStatus.BestPhase,
// BestAUC, BestModel; the artefact STATE/jobs/<job>.best.model.json, and
// `pairfed job model --best`).
//
// What this selection is, privately: every phase's global model is
// post-processing of the sites' (ε, δ)-DP releases (it is what the
// coordinator broadcast to the sites), and choosing one of them with
// records that are not any site's — the coordinator's test file — is
// post-processing too, so each site's record-level guarantee covers the
// best model exactly as it covers the final one. The selection itself is
// NOT private for the evaluator's records: which phase won, and its score,
// depend on every record of the coordinator's test file, and no noise
// protects them. And the score is optimistic: it is the maximum over the
// phases of scores on that same file, so it overstates the model's AUC
// on new records (evaluate the best model on other data to know it).

// bestPhase is the running job's best evaluated phase so far.
type bestPhase struct {
	phase int
	auc   float64
	model []float64
}

// noteBest records the model after the phase just aggregated (the highest
// phase among rels) when it scored strictly better than every earlier
// phase (the earliest phase wins ties).
func (s *Service) noteBest(auc float64, rels []PhaseRelease) {
	phase := 0
	for _, r := range rels {
		phase = max(phase, r.Phase)
	}
	if phase < 1 || s.best != nil && auc <= s.best.auc {
		return
	}
	s.best = &bestPhase{phase: phase, auc: auc, model: slices.Clone(s.inner.model)}
}

// keepBest puts the best phase into a completed job's status, for a job of
// more than one phase whose best model has the final model's length.
func (s *Service) keepBest(st *protocol.JobStatus) {
	b := s.best
	if b == nil || st.Phases < 2 || b.phase > st.Phases || len(b.model) != len(st.Model) {
		return
	}
	st.BestPhase, st.BestAUC, st.BestModel = b.phase, b.auc, slices.Clone(b.model)
}

// BestModelFileSuffix names a job's best-phase artefact next to its final
// one: jobs/<job>.best.model.json.
const BestModelFileSuffix = ".best.model.json"

// BestModel is StatusModel for the best phase of a completed job: the
// model after phase st.BestPhase, with the job's certificate (the sites'
// guarantees cover it: see the comment at the top of best.go) and the
// selection stated in its release and provenance: chosen on the
// coordinator's own evaluation set, a non-private selection on the
// evaluator's records, with an optimistic score. An error when the status
// has no best phase.
func BestModel(st *protocol.JobStatus) (*model.Model, error) {
	if st.BestPhase == 0 || st.BestModel == nil {
		return nil, fmt.Errorf("coordinator: job %s has no best-phase model: only a completed job of several phases that the coordinator scored after each phase (coordinator --test) has one", st.Job)
	}
	final := *st
	final.Model = st.BestModel
	m, err := StatusModel(&final)
	if err != nil {
		return nil, err
	}
	what := "AUC"
	if st.Metric == protocol.MetricKNN3 {
		what = "leave-one-out KNN-3 accuracy"
	}
	sel := fmt.Sprintf("selected on the coordinator's evaluation set: the global model after phase %d of %d, the phase whose %s on the coordinator's test file (%d records) was highest (%.6g; the final model scored %.6g). This selection is NOT private for the evaluator's records (no noise protects them) and its score is optimistic (a maximum over %d phases on the same file): evaluate it on other records", st.BestPhase, st.Phases, what, st.TestRecords, st.BestAUC, st.AUC, len(st.PhaseAUC))
	m.Algorithm.Release = fmt.Sprintf("job %s: %s", st.Job, sel)
	if m.Algorithm.Settings == nil {
		m.Algorithm.Settings = map[string]string{}
	}
	m.Algorithm.Settings["selection"] = "best phase on the coordinator's evaluation set (non-private selection on the evaluator's data; the sites' guarantees still cover the model: post-processing of their releases with records that are not theirs)"
	m.Algorithm.Params["best_phase"] = float64(st.BestPhase)
	m.Provenance.Command = "coordinator (best phase: " + sel + ")"
	return m, nil
}
