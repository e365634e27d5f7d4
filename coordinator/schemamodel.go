package coordinator

import (
	"fmt"
	"strings"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/protocol"
)

// attachJobSchema makes m's preprocessing map the feature-bounds schema
// the job carried (JobAnnounce.Schema), as every site applied it
// (experiment.SiteMap, node's site preparation): each feature's public
// range mapped to the box, then the ℓ2 clip to R — or, for the algorithms
// that centre privately, the linear map R/M times the box ("divide"). The loader
// options are the schema's (label, ignored columns, positive class); a
// missing value in a record to score is replaced by the schema's public
// per-feature constant (--impute schema: its "impute" value or the range's
// midpoint; a one-hot group's indicators all 0): the job does not announce
// the sites' own missing-value rule, and this is the only public one the
// schema fixes (sites that refuse missing values read complete records
// the same way). A job without a schema leaves m as it is (Scale
// "sites": not scorable until the map is attached).
//
// The schema's text was checked by every site; the coordinator parses it
// strictly again (it never trusts the bytes of a status file either).
func attachJobSchema(m *model.Model, a *protocol.JobAnnounce) error {
	if a == nil || a.Schema == "" {
		return nil
	}
	s, err := data.ReadSchema(strings.NewReader(a.Schema), "of job "+a.Job)
	if err != nil {
		return fmt.Errorf("coordinator: job %s: its schema: %w", a.Job, err)
	}
	if u := s.Unknown(); len(u) > 0 {
		return fmt.Errorf("coordinator: job %s: its schema has %d features marked unknown", a.Job, len(u))
	}
	if s.D() != m.D {
		return fmt.Errorf("coordinator: job %s: its schema has %d features, the model %d", a.Job, s.D(), m.D)
	}
	var opt data.Options
	opt.Impute = "schema"
	if _, err := s.Apply(&opt); err != nil {
		return fmt.Errorf("coordinator: job %s: its schema: %w", a.Job, err)
	}
	// The sites' map of the job (experiment.SiteMap).
	pm, err := experiment.SiteMap(experiment.SiteFacts{CentresPrivately: fedalgo.CentresPrivately(a.Algo), Schema: s,
		Radius: a.FeatureRadius}, nil)
	if err != nil {
		return fmt.Errorf("coordinator: job %s: %w", a.Job, err)
	}
	format := "auto"
	if s.LabelColumn != "" || len(s.Categoricals()) > 0 {
		format = data.FormatCSV // named and text columns: a CSV export
	}
	l := model.Loader{Format: format, LabelColumn: opt.LabelColumn, IgnoreColumns: opt.IgnoreColumns,
		PositiveClasses: opt.PositiveClasses, Impute: opt.Impute, Dim: m.D}
	for _, v := range opt.ImputeValues {
		if v != v { // NaN: no constant (an unknown feature; refused above)
			l.ImputeValues = append(l.ImputeValues, nil)
		} else {
			l.ImputeValues = append(l.ImputeValues, &v)
		}
	}
	m.Preprocessing = *pm
	m.Preprocessing.Loader = l
	if m.Algorithm.Settings == nil {
		m.Algorithm.Settings = map[string]string{}
	}
	m.Algorithm.Settings["preprocessing"] = "the job's feature-bounds schema (job submit --feature-bounds), as every site applied it; missing values in records to score are imputed with the schema's public constants (--impute schema)"
	return nil
}
