package node

import (
	"fmt"
	"strings"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
)

// TestSet is the coordinator's test file: the records it scores every
// finished job on.
type TestSet struct {
	// Path is the file; Options its loader options before any schema (a
	// job's schema is applied to these when the file is read again for
	// the job).
	Path    string
	Options data.Options
	// Table is the file read with the coordinator's options (and Schema).
	Table *data.Table
	// Schema is the coordinator's own feature-bounds schema (the sites'
	// public map), or nil: Scale, fitted on the test file itself.
	Schema *data.Schema
	Scale  string
}

// NewEvaluator returns the evaluator of coordinator.ServiceConfig.Evaluate:
// a job's model scored on the test file, whose records are prepared by
// the sites' rule (experiment.SiteMap) for the job's public facts — the
// job's schema when it carries one (whatever the coordinator's own),
// else the coordinator's schema or Scale. AUC for a linear model, the
// leave-one-out KNN-3 accuracy for a metric. A test file the job cannot
// be scored on is logged and scores (0, 0).
func NewEvaluator(ts TestSet, logf func(string, ...any)) (func(*protocol.JobAnnounce, []float64) (float64, int), error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if ts.Schema != nil {
		if err := ts.Schema.Check(ts.Table); err != nil {
			return nil, err
		}
	} else if _, err := experiment.SiteMap(experiment.SiteFacts{Scale: ts.Scale}, ts.Table.Dataset); err != nil {
		return nil, usage(err)
	}
	e := &evaluator{ts: ts, jobTest: &jobTestSet{path: ts.Path, opt: ts.Options}, logf: logf}
	return e.evaluate, nil
}

type evaluator struct {
	ts      TestSet
	jobTest *jobTestSet
	logf    func(string, ...any)
	// The records of the last map (a job is scored after every phase).
	key evalKey
	ds  *pairwise.Dataset
}

type evalKey struct {
	schema  *data.Schema
	table   *data.Table
	centres bool
	radius  float64
}

func (e *evaluator) evaluate(job *protocol.JobAnnounce, model []float64) (float64, int) {
	schema, test := e.ts.Schema, e.ts.Table
	if job.Schema != "" {
		// The job's schema is the sites' map: the test file is read and
		// mapped with it (whatever this coordinator's flags say).
		var err error
		if schema, test, err = e.jobTest.load(job); err != nil {
			e.logf("coordinator: evaluation of %s: %v", job.Job, err)
			return 0, 0
		}
	}
	key := evalKey{schema: schema, table: test, centres: fedalgo.CentresPrivately(job.Algo), radius: job.FeatureRadius}
	if e.ds == nil || e.key != key {
		f := experiment.SiteFacts{CentresPrivately: key.centres, Schema: schema, Scale: e.ts.Scale, Radius: job.FeatureRadius}
		m, err := experiment.SiteMap(f, test.Dataset)
		var ds *pairwise.Dataset
		if err == nil {
			ds, err = experiment.PrepareModelRecords(m, test.Dataset)
		}
		if err != nil {
			e.logf("coordinator: evaluation of %s: %v", job.Job, err)
			return 0, 0
		}
		e.key, e.ds = key, ds
	}
	ds := e.ds
	if job.Task == protocol.TaskMetric {
		if ds.D*ds.D != len(model) {
			e.logf("coordinator: evaluation of %s: test file has d = %d, metric %d values", job.Job, ds.D, len(model))
			return 0, 0
		}
		// No training records here: each test record is classified by
		// its 3 nearest other test records under W.
		return pairwise.KNNAccuracyLOO(model, ds, 3), ds.N
	}
	if ds.D != len(model) {
		e.logf("coordinator: evaluation of %s: test file has d = %d, model %d", job.Job, ds.D, len(model))
		return 0, 0
	}
	return pairwise.LinearAUC(model, ds), ds.N
}

// jobTestSet is the coordinator's test file read with a job's schema (the
// last one: consecutive jobs usually carry the same schema).
type jobTestSet struct {
	path   string
	opt    data.Options
	text   string
	schema *data.Schema
	table  *data.Table
}

func (j *jobTestSet) load(job *protocol.JobAnnounce) (*data.Schema, *data.Table, error) {
	if j.table != nil && j.text == job.Schema {
		return j.schema, j.table, nil
	}
	s, err := data.ReadSchema(strings.NewReader(job.Schema), "of job "+job.Job)
	if err != nil {
		return nil, nil, err
	}
	if u := s.Unknown(); len(u) > 0 {
		return nil, nil, fmt.Errorf("its schema has %d features marked unknown", len(u))
	}
	opt := j.opt
	if _, err := s.Apply(&opt); err != nil {
		return nil, nil, err
	}
	t, err := data.Load(j.path, opt)
	if err != nil {
		return nil, nil, err
	}
	if err := s.Check(t); err != nil {
		return nil, nil, err
	}
	if err := s.Scaler().CheckApply(t.Dataset); err != nil {
		return nil, nil, err
	}
	j.text, j.schema, j.table = job.Schema, s, t
	return s, t, nil
}
