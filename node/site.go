package node

import (
	"fmt"
	"math"
	"strings"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/worker"
)

// This file prepares a worker's records for each job (the hook
// worker.ServiceConfig.Prepare): the map every site of a private job must
// share is a public feature-bounds schema, either the site's own
// (Worker.Schema) or the one the job carries (job submit
// --feature-bounds, protocol.JobAnnounce.Schema); the map of one job is
// experiment.SiteMap of its public facts.
//
// Why a site does not estimate private feature ranges on its own (as
// `pairfed train --scale private` does with dp.EstimateRanges): the
// federated model is one linear map w over the sites' scaled records, so
// every site must scale with the same map; ranges estimated at each site
// from its own records (with its own noise) differ from site to site, and
// the coordinator would sum statistics and average models taken in
// different coordinates. Agreeing on one privately estimated map needs a
// federated range phase (noisy histograms summed by the coordinator,
// charged at every site) which does not exist yet. Until then a private
// job without a schema is refused with the command that fixes it, and the
// non-private ways (min-max or standard scaling fitted on a site's records)
// are explicit opt-ins (--scale minmax|standard) reported NOT private.

// schemaFix is the command that fixes a private job without a schema.
const schemaFix = "give the job a public feature-bounds schema: `pairfed job submit --feature-bounds SCHEMA.json …` (see schemas/README.md), or start every site with --feature-bounds SCHEMA.json; explicit opt-ins: --scale none (records already on a public scale, clipped to ‖x‖ ≤ R) or --scale minmax (fitted on the site's records: NOT private)"

// siteData prepares a worker's records for each job it is asked to run.
type siteData struct {
	site, path string
	opt        data.Options // the loader options, before any schema
	radius     float64
	local      *data.Schema // the site's own schema, or nil
	scale      string       // the effective scaling ("" when neither it nor a schema is given)
	logf       func(string, ...any)
	// def are the records of the start-up table (by the site's schema,
	// or its scaling), with noise.
	def *siteRecords
	// testNoise, when set (--test-sources), replaces every job's noise
	// (seeded: reproducible, reported not private).
	testNoise pairwise.Noise

	// The last job schema prepared (a job is announced many times; the
	// next job usually carries the same schema).
	cachedText string
	cached     *siteRecords
}

// siteRecords are one table's records by one schema (or scaling), under
// each map the rule gives them (one per experiment.SiteMap result).
type siteRecords struct {
	table   *data.Table
	schema  *data.Schema // nil: scale
	scale   string
	radius  float64
	noise   pairwise.Noise
	jobs    map[string]*worker.JobData // by the map's Norm
	byFacts map[bool]*worker.JobData   // by whether the job centres privately
}

// facts are the public facts of a job for these records: whether its
// algorithm centres privately (experiment.SiteMap needs no other).
func (r *siteRecords) facts(centres bool) experiment.SiteFacts {
	fit := r.scale
	if r.schema == nil && fit == "" {
		// Without a schema or a scaling: min-max fitted on the site's
		// records, for non-private jobs only (prepare refuses a private
		// job that brings no schema).
		fit = "minmax"
	}
	return experiment.SiteFacts{CentresPrivately: centres, Schema: r.schema, Scale: fit,
		Radius: r.radius}
}

// data is the job data of the records under the map of algo's jobs.
func (r *siteRecords) data(algo string) (*worker.JobData, error) {
	return r.dataFor(fedalgo.CentresPrivately(algo))
}

// dataFor is data for a job that centres privately or not.
func (r *siteRecords) dataFor(centres bool) (*worker.JobData, error) {
	if jd := r.byFacts[centres]; jd != nil {
		return jd, nil
	}
	m, err := experiment.SiteMap(r.facts(centres), r.table.Dataset)
	if err != nil {
		return nil, err
	}
	if r.jobs == nil {
		r.jobs, r.byFacts = map[string]*worker.JobData{}, map[bool]*worker.JobData{}
	}
	if jd := r.jobs[m.Norm]; jd != nil {
		r.byFacts[centres] = jd
		return jd, nil
	}
	sc, err := experiment.ModelScaler(m, r.table.D)
	if err != nil {
		return nil, err
	}
	if err := sc.CheckApply(r.table.Dataset); err != nil {
		return nil, usage(err)
	}
	ds, err := experiment.PrepareModelRecords(m, r.table.Dataset)
	if err != nil {
		return nil, err
	}
	jd := &worker.JobData{Data: ds, Noise: r.noise}
	r.jobs[m.Norm], r.byFacts[centres] = jd, jd
	return jd, nil
}

// prepare is worker.ServiceConfig.Prepare: the records of job m.
func (s *siteData) prepare(m *protocol.JobAnnounce) (*worker.JobData, error) {
	if m.Schema == "" {
		if s.local == nil && s.scale == "" && fedalgo.Private(m.Algo) {
			return nil, fmt.Errorf("job %s (%s) is private but carries no feature-bounds schema and site %s has none: its records have no public scale (raw values clipped to ‖x‖ ≤ R lose most features, a scaling fitted on the records is not private); %s", m.Job, m.Algo, s.site, schemaFix)
		}
		return s.def.data(m.Algo)
	}
	js, err := data.ReadSchema(strings.NewReader(m.Schema), "of job "+m.Job)
	if err != nil {
		return nil, fmt.Errorf("job %s carries a feature-bounds schema this site cannot use: %v", m.Job, err)
	}
	if u := js.Unknown(); len(u) > 0 {
		return nil, fmt.Errorf("job %s: its feature-bounds schema has %d features marked unknown (e.g. feature %d): sites need public bounds for every feature", m.Job, len(u), u[0]+1)
	}
	if s.local != nil {
		if diff := schemaDiff(s.local, js); diff != "" {
			return nil, fmt.Errorf("job %s carries a feature-bounds schema that differs from this site's %s: %s — every site must apply one map: give the job and every site the same schema, or start this site without --feature-bounds to take the job's", m.Job, s.local.File, diff)
		}
		return s.def.data(m.Algo)
	}
	if s.scale != "" {
		return nil, fmt.Errorf("job %s carries a feature-bounds schema but site %s was started with --scale %s: restart it without --scale (it then applies the job's schema)", m.Job, s.site, s.scale)
	}
	if s.cached != nil && s.cachedText == m.Schema {
		return s.jobData(m, s.cached)
	}
	opt := s.opt
	notes, err := js.Apply(&opt)
	if err != nil {
		return nil, fmt.Errorf("job %s: %v", m.Job, err)
	}
	t, err := data.Load(s.path, opt)
	if err != nil {
		return nil, fmt.Errorf("job %s: loading this site's records with the job's schema: %v", m.Job, err)
	}
	if err := js.Check(t); err != nil {
		return nil, fmt.Errorf("job %s: %v", m.Job, err)
	}
	recs := &siteRecords{table: t, schema: js, radius: s.radius, noise: siteNoise("bounds", t.DataDependent)}
	if s.testNoise != nil {
		recs.noise = s.testNoise
	}
	// The records of the clipped map first (as every site prepares at
	// start): a map this file cannot take is named before any log line.
	if _, err := recs.dataFor(false); err != nil {
		return nil, fmt.Errorf("job %s: %v", m.Job, err)
	}
	for _, n := range append(notes, t.Notes...) {
		s.logf("worker %s: job %s: %s", s.site, m.Job, n)
	}
	s.logf("worker %s: job %s: records mapped by the job's %s", s.site, m.Job, js.Describe())
	if len(t.DataDependent) > 0 {
		s.logf("worker %s: job %s: this site's releases will be reported NOT private: %s", s.site, m.Job, strings.Join(t.DataDependent, "; "))
	}
	s.cachedText, s.cached = m.Schema, recs
	return s.jobData(m, recs)
}

func (s *siteData) jobData(m *protocol.JobAnnounce, r *siteRecords) (*worker.JobData, error) {
	jd, err := r.data(m.Algo)
	if err != nil {
		return nil, fmt.Errorf("job %s: %v", m.Job, err)
	}
	return jd, nil
}

// siteNoise is the worker's noise source: secure, but labelled not private
// when the site's scaling is fitted on its own records (one record can then
// move every scaled record, which the DP analysis does not cover) or its
// loading made data-dependent decisions (data.Table.DataDependent).
func siteNoise(scale string, dataDependent []string) pairwise.Noise {
	return labelSiteNoise(dp.NewSecureNoise(), scale, dataDependent)
}

// labelSiteNoise is siteNoise on a given secure noise n.
func labelSiteNoise(n pairwise.Noise, scale string, dataDependent []string) pairwise.Noise {
	if why := siteNotPrivate(scale, dataDependent); len(why) > 0 {
		return dp.Unprivate(n, strings.Join(why, "; "))
	}
	return n
}

// siteNotPrivate lists why a site's preparation is data-dependent.
func siteNotPrivate(scale string, dataDependent []string) []string {
	var why []string
	switch scale {
	case "none", "bounds":
	case "":
		why = append(why, "min-max scaling fitted on the site's private records (no --feature-bounds); use --feature-bounds FILE")
	default:
		why = append(why, "--scale "+scale+" is fitted on the site's private records; use --feature-bounds FILE or --scale none")
	}
	return append(why, dataDependent...)
}

// SchemaDiff names the first differences between two schemas in what
// decides a site's records (the features' ranges, names, one-hot groups
// and imputation constants, the positive class, the label and ignored
// columns); free text (name, description, source) is not compared. ""
// when they decide the same records.
func SchemaDiff(site, job *data.Schema) string { return schemaDiff(site, job) }

func schemaDiff(site, job *data.Schema) string {
	var d []string
	add := func(format string, args ...any) { d = append(d, fmt.Sprintf(format, args...)) }
	if site.D() != job.D() {
		add("this site's schema has %d features, the job's %d", site.D(), job.D())
		return strings.Join(d, "; ")
	}
	for _, f := range []struct{ what, a, b string }{
		{"positive_class", site.PositiveClass, job.PositiveClass},
		{"label_column", site.LabelColumn, job.LabelColumn},
		{"ignore_columns", strings.Join(site.IgnoreColumns, ","), strings.Join(job.IgnoreColumns, ",")},
	} {
		if f.a != f.b {
			add("%s %q here, %q in the job", f.what, f.a, f.b)
		}
	}
	sl, sh := site.Bounds()
	jl, jh := job.Bounds()
	sn, jn := site.FeatureNames(), job.FeatureNames() // D names each (one-hot indicators included)
	ss, js := site.Scaler(), job.Scaler()
	si, ji := site.ImputeValues(), job.ImputeValues()
	same := func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
	for j := range sl {
		name := ""
		if sn[j] != "" {
			name = " (" + sn[j] + ")"
		}
		switch {
		case !strings.EqualFold(sn[j], jn[j]):
			add("feature %d is named %q here, %q in the job", j+1, sn[j], jn[j])
		case sl[j] != jl[j] || sh[j] != jh[j]:
			add("feature %d%s: [%g, %g] here, [%g, %g] in the job", j+1, name, sl[j], sh[j], jl[j], jh[j])
		case !same(ss.Shift[j], js.Shift[j]) || !same(ss.Scale[j], js.Scale[j]) || boxLo(ss, j) != boxLo(js, j):
			add("feature %d%s: one-hot group differs", j+1, name)
		case !same(si[j], ji[j]):
			add("feature %d%s: impute %g here, %g in the job", j+1, name, si[j], ji[j])
		}
		if len(d) >= 3 {
			break
		}
	}
	if len(d) == 0 && ss.MaxNorm != js.MaxNorm {
		add("the one-hot groups differ (norm bound %g here, %g in the job)", ss.MaxNorm, js.MaxNorm)
	}
	return strings.Join(d, "; ")
}

func boxLo(s *data.Scaler, j int) float64 {
	if s.BoxLo == nil {
		return -1
	}
	return s.BoxLo[j]
}
