// Package report renders the HTML report of one federated job (`pairfed
// report`): its status, every announced parameter, the test AUC after each
// phase, the privacy it cost each site — the sites' own reports, the
// coordinator's ledger entries, the accountant rule, spending over time
// against the budgets — and the ROC curve of its final model.
//
// It is pure rendering: Render turns an Input (read by the caller from a
// coordinator's state directory and, for the ROC curve, its test file) into
// the bytes of one self-contained HTML page, whose PNG plots are embedded
// as data: URIs (the page needs no other file and no network), and the
// same PNGs for the caller to write next to it.
package report

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

// Input is everything a report shows.
type Input struct {
	// Status is the job's status as the coordinator recorded it.
	Status *protocol.JobStatus
	// Source names where Status was read (e.g. "STATE/jobs/J.json").
	Source string
	// CheckpointPhase, for a job read from the coordinator's checkpoint
	// (queued or running), is the phase it was at (0: not started).
	CheckpointPhase int
	// Charges is the coordinator's whole ledger (charges.jsonl): the
	// report shows the job's entries and every site's spending over time.
	Charges []coordinator.Charge
	// Budgets are the coordinator's per-site budgets (budgets.json).
	Budgets map[string]coordinator.Budget
	// ROC is the final model's ROC curve on the coordinator's test file;
	// nil when it could not be drawn, NoROC then says why.
	ROC   *ROC
	NoROC string
	// Generated is the time of the report.
	Generated time.Time
	// Notes are shown under the header (e.g. a flag that was ignored).
	Notes []string
}

// Image is one PNG plot of a report.
type Image struct {
	Name          string // file name, one of the Image* constants
	PNG           []byte
	Width, Height int
}

// Output is a rendered report.
type Output struct {
	HTML   []byte
	Images []Image
}

// Verdict values: whether the job's released model is differentially
// private for every site's records.
const (
	VerdictPrivate    = "private"
	VerdictNotPrivate = "NOT private"
	VerdictNone       = "no verdict"
)

// Verdict says whether a job's output is (ε, δ)-DP for every site, and
// why (or why not).
func Verdict(st *protocol.JobStatus, charges []coordinator.Charge) (string, []string) {
	if st.Status != protocol.StatusCompleted {
		return VerdictNone, []string{fmt.Sprintf("the job did not complete (status %s): it released no final model and no site reported its privacy; its ledger entries below are what the coordinator charged", st.Status)}
	}
	if !fedalgo.Private(st.Algo) {
		return VerdictNotPrivate, []string{fmt.Sprintf("%s adds no noise: its model is not differentially private", st.Algo)}
	}
	if len(st.Privacy) == 0 {
		return VerdictNotPrivate, []string{"no site reported the privacy of its releases"}
	}
	var why []string
	var insecure []string
	for _, p := range st.Privacy {
		if !p.Secure {
			insecure = append(insecure, p.Site)
		}
	}
	if len(insecure) > 0 {
		why = append(why, fmt.Sprintf("site(s) %s reported noise that is not private: drawn from a seeded source (a reproducible test run) or by a worker whose --scale is fitted on its own records (one record can move every scaled record; run private jobs with --scale none)", strings.Join(insecure, ", ")))
	}
	var unpriv []string
	for _, c := range jobCharges(charges, st.Job) {
		if !c.Private && !slices.Contains(unpriv, c.Site) {
			unpriv = append(unpriv, c.Site)
		}
	}
	if len(unpriv) > 0 {
		why = append(why, fmt.Sprintf("the coordinator's ledger marks releases of site(s) %s as not private", strings.Join(unpriv, ", ")))
	}
	if len(why) > 0 {
		return VerdictNotPrivate, why
	}
	var parts []string
	for _, p := range st.Privacy {
		s := fmt.Sprintf("site %s: record-level (ε, δ) = (%s, %s)", p.Site, exact(p.Epsilon), exact(p.Delta))
		if p.CertifiedEpsilon > 0 || p.CertifiedDelta > 0 {
			s += fmt.Sprintf(" requested, (%s, %s) certified and charged", exact(p.CertifiedEpsilon), exact(p.CertifiedDelta))
		}
		if p.ComposedEpsilon > 0 {
			s += fmt.Sprintf(", exact Gaussian-DP composition ε = %s", g6(p.ComposedEpsilon))
		}
		parts = append(parts, s)
	}
	return VerdictPrivate, append([]string{"every site's noise came from a secure source"}, parts...)
}

// Render renders the report of in.Status.
func Render(in *Input) (*Output, error) {
	st := in.Status
	if st == nil {
		return nil, errors.New("report: no job status")
	}
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	out := &Output{}
	embed := func(name string, png []byte, w, h int) template.HTMLAttr {
		out.Images = append(out.Images, Image{Name: name, PNG: png, Width: w, Height: h})
		// The src attribute of an <img>: a data: URI of PNG bytes drawn
		// here, base64 ([A-Za-z0-9+/=], nothing to escape inside quotes).
		// Passed as an attribute so that html/template does not turn
		// every '+' into an entity.
		return template.HTMLAttr(`src="data:image/png;base64,` + base64.StdEncoding.EncodeToString(png) + `"`)
	}
	v := &view{Job: st.Job, Status: st.Status, Reason: st.Reason, Algo: st.Algo, Source: in.Source,
		Generated: in.Generated.UTC().Format(time.RFC3339), Sites: st.Sites, Dropped: st.Dropped, Refused: st.Refused,
		Phases: st.Phases, AccountantRule: coordinator.AccountantRule, Notes: in.Notes}
	a := st.Announce
	if a != nil {
		v.LocalAlgo = a.LocalAlgo
		v.PlannedPhases = a.Phases
	}
	completed := st.Status == protocol.StatusCompleted
	switch {
	case completed:
		v.StatusClass = "good"
	case st.Status == protocol.StatusQueued || st.Status == protocol.StatusRunning:
		v.StatusClass = "pending"
		v.Incomplete = fmt.Sprintf("Job %s has not finished: it is %s in the coordinator's checkpoint", st.Job, st.Status)
		if in.CheckpointPhase > 0 {
			v.Incomplete += fmt.Sprintf(" (at phase %d", in.CheckpointPhase)
			if a != nil {
				v.Incomplete += fmt.Sprintf(" of %d", a.Phases)
			}
			v.Incomplete += ")"
		}
		v.Incomplete += ". This report shows what exists so far: its status, parameters, per-phase AUC and ledger entries; there is no final model, test AUC or ROC curve yet."
	default:
		v.StatusClass = "bad"
		v.Incomplete = fmt.Sprintf("Job %s did not complete (status %s): it has no final model, test AUC, per-site privacy report or ROC curve. This report shows what exists: its status, reason", st.Job, st.Status)
		if a != nil {
			v.Incomplete += ", parameters"
		}
		v.Incomplete += " and the coordinator's ledger entries."
	}
	if completed && st.TestRecords > 0 {
		v.TestAUC = strconv.FormatFloat(st.AUC, 'f', 4, 64)
		v.NTest = st.TestRecords
	}
	v.Verdict, v.Why = Verdict(st, in.Charges)
	switch v.Verdict {
	case VerdictPrivate:
		v.VerdictClass = "good"
	case VerdictNotPrivate:
		v.VerdictClass = "bad"
	default:
		v.VerdictClass = "pending"
	}

	// Parameters, exactly as announced.
	if a != nil {
		agg := a.Aggregation
		if agg == "" {
			agg = "weighted mean (default)"
		}
		local := a.LocalAlgo
		if local == "" {
			local = "—"
		}
		v.Params = []param{
			{"job", a.Job, "job id"},
			{"algo", a.Algo, "federated algorithm"},
			{"local_algo", local, "single-site algorithm of fed-oneshot"},
			{"task", a.Task, "auc: bipartite ranking; metric: metric learning"},
			{"loss", a.Loss, "pairwise loss"},
			{"params", strconv.Itoa(a.Params), "length of the model vector (d)"},
			{"phases", strconv.Itoa(a.Phases), "rounds, phases K or iterations T"},
			{"local_passes", exact(a.LocalPasses), "fed-avg local passes per round"},
			{"eta", exact(a.Eta), "base step size η"},
			{"param_radius", exact(a.ParamRadius), "radius B of the parameter ball"},
			{"feature_radius", exact(a.FeatureRadius), "radius R the sites clip records to"},
			{"lambda", exact(a.Lambda), "(λ/2)‖w‖² regularization"},
			{"epsilon", exact(a.Epsilon), "per-site record-level ε"},
			{"delta", exact(a.Delta), "per-site δ"},
			{"seed", strconv.FormatUint(a.Seed, 10), "seed recorded in the job"},
			{"sites", strings.Join(a.Sites, " "), "participants announced"},
			{"aggregation", agg, "how the coordinator combines updates"},
		}
	}

	// AUC per phase.
	for i, auc := range st.PhaseAUC {
		v.PhaseRows = append(v.PhaseRows, phaseRow{Phase: i + 1, AUC: strconv.FormatFloat(auc, 'f', 4, 64)})
	}
	if len(st.PhaseAUC) > 0 {
		png, err := phaseAUCPlot(st.Job, st.PhaseAUC, st.AUC, completed && st.TestRecords > 0)
		if err != nil {
			return nil, fmt.Errorf("report: AUC plot: %w", err)
		}
		v.PhasePlot = embed(ImagePhaseAUC, png, PlotWidth, PlotHeight)
	}

	// Privacy: the sites' reports.
	for _, p := range st.Privacy {
		r := siteRow{Site: p.Site, Records: p.Records, Epsilon: exact(p.Epsilon), Delta: exact(p.Delta), Secure: yesNo(p.Secure), Composed: "—", CertEpsilon: "—", CertDelta: "—"}
		if p.ComposedEpsilon > 0 {
			r.Composed = g6(p.ComposedEpsilon)
		}
		if p.CertifiedEpsilon > 0 || p.CertifiedDelta > 0 {
			r.CertEpsilon, r.CertDelta = exact(p.CertifiedEpsilon), exact(p.CertifiedDelta)
		}
		v.PrivacyRows = append(v.PrivacyRows, r)
		sr := sigmaRow{Site: p.Site}
		for _, s := range p.Sigmas {
			sr.Sigmas = append(sr.Sigmas, g6(s))
		}
		v.SigmaRows = append(v.SigmaRows, sr)
		for len(v.SigmaHeader) < len(p.Sigmas) {
			v.SigmaHeader = append(v.SigmaHeader, len(v.SigmaHeader)+1)
		}
	}
	for i := range v.SigmaRows {
		for len(v.SigmaRows[i].Sigmas) < len(v.SigmaHeader) {
			v.SigmaRows[i].Sigmas = append(v.SigmaRows[i].Sigmas, "")
		}
	}

	// Privacy: the coordinator's ledger.
	mine := jobCharges(in.Charges, st.Job)
	var jobTime time.Time
	jobEps := map[string]float64{}
	for _, c := range mine {
		row := chargeRow{Site: c.Site, Phase: c.Phase, Mechanism: c.Mechanism, Sigma: "—", Sensitivity: "—", Records: c.Records,
			Epsilon: exact(c.Epsilon), Delta: exact(c.Delta), Private: yesNo(c.Private), Time: "—"}
		if c.Sigma > 0 {
			row.Sigma = g6(c.Sigma)
		}
		if c.Sensitivity > 0 {
			row.Sensitivity = g6(c.Sensitivity)
		}
		if !c.Time.IsZero() {
			row.Time = c.Time.UTC().Format("2006-01-02 15:04:05.000")
			if jobTime.IsZero() || c.Time.Before(jobTime) {
				jobTime = c.Time
			}
		}
		v.ChargeRows = append(v.ChargeRows, row)
		jobEps[c.Site] = max(jobEps[c.Site], c.Epsilon)
	}
	// The sites shown: the job's participants (announced, active, dropped,
	// refused, charged); with none, every site of the ledger.
	var sites []string
	addSite := func(s string) {
		if !slices.Contains(sites, s) {
			sites = append(sites, s)
		}
	}
	if a != nil {
		for _, s := range a.Sites {
			addSite(s)
		}
	}
	for _, l := range [][]string{st.Sites, st.Dropped, st.Refused} {
		for _, s := range l {
			addSite(s)
		}
	}
	for _, c := range mine {
		addSite(c.Site)
	}
	spent := map[string]coordinator.Spend{}
	for _, sp := range coordinator.Spent(in.Charges) {
		spent[sp.Site] = sp
	}
	if len(sites) == 0 {
		sites = sortedKeys(spent)
	}
	slices.Sort(sites)
	for _, s := range sites {
		sp := spent[s]
		r := ledgerRow{Site: s, JobEpsilon: "—", Spent: g6(sp.Epsilon), SpentDelta: g6(sp.Delta), Jobs: sp.Jobs, NonPrivate: sp.NonPrivate,
			Budget: "none", BudgetDelta: "none", Remaining: "—", RemainingDelta: "—"}
		if e, ok := jobEps[s]; ok {
			r.JobEpsilon = g6(e)
		}
		if b, ok := in.Budgets[s]; ok {
			r.Budget, r.BudgetDelta = g6(b.Epsilon), g6(b.Delta)
			r.Remaining, r.RemainingDelta = g6(math.Max(0, b.Epsilon-sp.Epsilon)), g6(math.Max(0, b.Delta-sp.Delta))
		}
		v.LedgerRows = append(v.LedgerRows, r)
	}
	series := SpendOverTime(in.Charges)
	var plotted []string
	untimed := 0
	for _, s := range sites {
		if len(series[s]) == 0 {
			continue
		}
		for _, pt := range series[s] {
			if pt.Time.IsZero() {
				untimed++
			}
		}
		plotted = append(plotted, s)
	}
	switch {
	case len(in.Charges) == 0:
		v.SpentNote = "The coordinator's ledger (charges.jsonl) is empty: no privacy was charged to any site."
	case len(plotted) == 0:
		v.SpentNote = "The coordinator's ledger holds no charge for the sites of this job."
	case untimed > 0:
		v.SpentNote = fmt.Sprintf("%d ledger entries carry no time: the plot is not drawn (their totals are in the table).", untimed)
	default:
		png, err := spentPlot(st.Job, plotted, series, in.Budgets, jobTime)
		if err != nil {
			return nil, fmt.Errorf("report: privacy plot: %w", err)
		}
		v.SpentPlot = embed(ImageSpent, png, PlotWidth, PlotHeight)
	}

	// ROC curve and the final model.
	if completed {
		for i, w := range st.Model {
			if i == maxModelRows {
				v.ModelMore = len(st.Model) - maxModelRows
				break
			}
			v.Model = append(v.Model, modelRow{Index: i + 1, Value: exact(w)})
		}
	}
	if r := in.ROC; r != nil {
		rv := &rocView{AUC: exact(r.AUC), LinearAUC: exact(r.LinearAUC), Positives: r.Positives, Negatives: r.Negatives,
			N: r.Positives + r.Negatives, TestFile: r.TestFile, Scale: r.Scale, Points: len(r.FPR)}
		if completed && st.TestRecords > 0 {
			rv.StatusAUC = exact(st.AUC)
			if d := math.Abs(r.AUC - st.AUC); d > 1e-12 || st.TestRecords != rv.N {
				rv.Mismatch = fmt.Sprintf("The ROC curve's AUC (%s on %d records) differs from the coordinator's (%s on %d records) by %.3g: the test file, its loader flags or --scale are not the coordinator's.",
					exact(r.AUC), rv.N, exact(st.AUC), st.TestRecords, d)
			}
		}
		png, err := rocPlot(st.Job, r)
		if err != nil {
			return nil, fmt.Errorf("report: ROC plot: %w", err)
		}
		rv.Plot = embed(ImageROC, png, ROCSize, ROCSize)
		v.ROC = rv
	} else {
		v.NoROC = in.NoROC
		if v.NoROC == "" {
			v.NoROC = "No ROC curve."
		}
	}

	var buf bytes.Buffer
	if err := page.Execute(&buf, v); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	out.HTML = buf.Bytes()
	return out, nil
}

// maxModelRows bounds the model coefficients listed in the page.
const maxModelRows = 64

func exact(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
func g6(x float64) string    { return strconv.FormatFloat(x, 'g', 6, 64) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

type view struct {
	Job, Status, StatusClass, Reason, Algo, LocalAlgo string
	Source, Generated                                 string
	Incomplete                                        string
	Sites, Dropped, Refused                           []string
	Phases, PlannedPhases                             int
	TestAUC                                           string
	NTest                                             int
	Verdict, VerdictClass                             string
	Why                                               []string
	Notes                                             []string
	Params                                            []param
	PhaseRows                                         []phaseRow
	PhasePlot                                         template.HTMLAttr
	PrivacyRows                                       []siteRow
	SigmaHeader                                       []int
	SigmaRows                                         []sigmaRow
	AccountantRule                                    string
	ChargeRows                                        []chargeRow
	LedgerRows                                        []ledgerRow
	SpentPlot                                         template.HTMLAttr
	SpentNote                                         string
	Model                                             []modelRow
	ModelMore                                         int
	ROC                                               *rocView
	NoROC                                             string
}

type param struct{ Name, Value, Meaning string }

type phaseRow struct {
	Phase int
	AUC   string
}

type siteRow struct {
	Site                             string
	Records                          int
	Epsilon, Delta, Composed, Secure string
	// CertEpsilon, CertDelta: what the coordinator's ledger charged the
	// site for the job (SiteReport.CertifiedEpsilon/Delta), "—" if nothing.
	CertEpsilon, CertDelta string
}

type sigmaRow struct {
	Site   string
	Sigmas []string
}

type chargeRow struct {
	Site                                          string
	Phase, Records                                int
	Mechanism, Sigma, Sensitivity, Epsilon, Delta string
	Private, Time                                 string
}

type ledgerRow struct {
	Site, JobEpsilon, Spent, SpentDelta, Budget, BudgetDelta, Remaining, RemainingDelta string
	Jobs, NonPrivate                                                                    int
}

type modelRow struct {
	Index int
	Value string
}

type rocView struct {
	AUC, LinearAUC, StatusAUC string
	Positives, Negatives, N   int
	Points                    int
	TestFile, Scale           string
	Mismatch                  string
	Plot                      template.HTMLAttr
}
