package main

import (
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/worker"
)

// This file prepares a worker's records for each job (the hook
// worker.ServiceConfig.Prepare): the map every site of a private job must
// share is a public feature-bounds schema, either the site's own
// (--feature-bounds) or the one the job carries (job submit
// --feature-bounds, protocol.JobAnnounce.Schema).
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
	opt        data.Options // the loader options of the flags, before any schema
	radius     float64
	local      *data.Schema // --feature-bounds, or nil
	scale      string       // the effective --scale ("" when neither it nor a schema is given)
	def        *worker.JobData
	logf       func(string, ...any)
	// testNoise, when set (--test-sources), replaces every job's noise
	// (seeded: reproducible, reported not private).
	testNoise pairwise.Noise

	// The last job schema prepared (a job is announced many times; the
	// next job usually carries the same schema).
	cachedText string
	cached     *worker.JobData
}

// siteScale resolves a site's --scale: "bounds" with a schema unless set,
// "" (no choice: private jobs need the job's schema) without either.
func siteScale(who string, scale string, set bool, schema *data.Schema) (string, error) {
	if !set {
		if schema != nil {
			return "bounds", nil
		}
		return "", nil
	}
	if (scale == "bounds") != (schema != nil) {
		return "", usageError{fmt.Errorf("%s: --scale bounds goes with --feature-bounds FILE (got --scale %s%s)", who, scale, map[bool]string{true: " and a schema", false: " without a schema"}[schema != nil])}
	}
	switch scale {
	case "bounds", "none", "minmax", "standard":
		return scale, nil
	}
	return "", usageError{fmt.Errorf("%s: unknown scaling %q (want bounds, none, minmax or standard)", who, scale)}
}

// prepareRecords scales the records of t with sc (a bounds scaler when
// bounds), then clips them to R; with bounds it also returns the schema's
// linear map (R/M times the box) for the algorithms that centre privately.
func prepareRecords(t *data.Table, sc *data.Scaler, bounds bool, R float64) (ds, linear *pairwise.Dataset, err error) {
	if bounds {
		if err := sc.CheckApply(t.Dataset); err != nil {
			return nil, nil, usageError{err}
		}
	}
	ds = sc.Apply(t.Dataset)
	if R > 0 {
		if bounds {
			// Jobs of algorithms that centre privately (fed-dp-lda) read
			// the records by the linear map, R/M times the box: nothing
			// is clipped around the box's centre (the clip only absorbs
			// rounding: ‖x‖ ≤ R by construction).
			if linear, _, err = data.Clip(sc.Divide(R).Apply(t.Dataset), R); err != nil {
				return nil, nil, err
			}
		}
		if ds, _, err = data.Clip(ds, R); err != nil {
			return nil, nil, err
		}
	}
	return ds, linear, nil
}

// prepare is worker.ServiceConfig.Prepare: the records of job m.
func (s *siteData) prepare(m *protocol.JobAnnounce) (*worker.JobData, error) {
	if m.Schema == "" {
		if s.local == nil && s.scale == "" && fedalgo.Private(m.Algo) {
			return nil, fmt.Errorf("job %s (%s) is private but carries no feature-bounds schema and site %s has none: its records have no public scale (raw values clipped to ‖x‖ ≤ R lose most features, a scaling fitted on the records is not private); %s", m.Job, m.Algo, s.site, schemaFix)
		}
		return s.def, nil
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
		return s.def, nil
	}
	if s.scale != "" {
		return nil, fmt.Errorf("job %s carries a feature-bounds schema but site %s was started with --scale %s: restart it without --scale (it then applies the job's schema)", m.Job, s.site, s.scale)
	}
	if s.cached != nil && s.cachedText == m.Schema {
		return s.cached, nil
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
	ds, linear, err := prepareRecords(t, js.Scaler(), true, s.radius)
	if err != nil {
		return nil, fmt.Errorf("job %s: %v", m.Job, err)
	}
	for _, n := range append(notes, t.Notes...) {
		s.logf("worker %s: job %s: %s", s.site, m.Job, n)
	}
	s.logf("worker %s: job %s: records mapped by the job's %s", s.site, m.Job, js.Describe())
	if len(t.DataDependent) > 0 {
		s.logf("worker %s: job %s: this site's releases will be reported NOT private: %s", s.site, m.Job, strings.Join(t.DataDependent, "; "))
	}
	jd := &worker.JobData{Data: ds, LinearData: linear, Noise: siteNoise("bounds", t.DataDependent)}
	if s.testNoise != nil {
		jd.Noise = s.testNoise
	}
	s.cachedText, s.cached = m.Schema, jd
	return jd, nil
}

// readJobSchema reads --feature-bounds for a job submission: the file's
// text (what every site parses), validated as the sites will.
func readJobSchema(path string) (string, *data.Schema, error) {
	s, err := data.LoadSchema(path)
	if err != nil {
		return "", nil, err
	}
	if u := s.Unknown(); len(u) > 0 {
		return "", nil, usageError{fmt.Errorf("%s has %d features marked unknown (e.g. feature %d): a federated job needs public bounds for every feature", path, len(u), u[0]+1)}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	if len(b) > protocol.MaxSchemaBytes {
		return "", nil, usageError{fmt.Errorf("%s is %d bytes, over the %d a job may carry: drop the free-text fields (description, source)", path, len(b), protocol.MaxSchemaBytes)}
	}
	return string(b), s, nil
}

// schemaDiff names the first differences between two schemas in what
// decides a site's records (the features' ranges, names, one-hot groups
// and imputation constants, the positive class, the label and ignored
// columns); free text (name, description, source) is not compared. ""
// when they decide the same records.
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

// privacyLine says in words whether a site's releases in a job were
// private, and if not why (the site's report only says whether its noise
// and preparation were private; the site's log names the opt-in).
func privacyLine(p protocol.SiteReport) string {
	if p.Secure {
		return "private: yes (secure noise, public preprocessing)"
	}
	return "NOT private: the site reported its releases not private (an explicit opt-in there — seeded noise, --scale minmax|standard fitted on its records, or data-dependent loading; its log names it)"
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

// jobPrivacyStatus says whether a job's result is private, in words: the
// job-level line of `job submit` (privacy_status in its JSON), as the
// coordinator's dashboard says it.
func jobPrivacyStatus(st *protocol.JobStatus) string { return coordinator.PrivacyStatus(st) }

// budgetText prints one half of a recorded budget: "unlimited" for the
// value a worker records when its flags leave that half unset.
func budgetText(v float64) string {
	if v == math.MaxFloat64 || v == math.Nextafter(1, 0) {
		return "unlimited"
	}
	return fmt.Sprintf("%g", v)
}
