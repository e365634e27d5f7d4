package monitor

import (
	"github.com/pairfed/pairfed/protocol"
	"github.com/prometheus/client_golang/prometheus"
)

// The metrics of /metrics. Every value is read from the latest published
// view when Prometheus scrapes (a custom collector on a private registry:
// no process or Go runtime metrics, nothing global).
var (
	descUp = prometheus.NewDesc("pairfed_coordinator_up",
		"1 if the coordinator's run loop published a view within the stale limit (or finished), else 0.", nil, nil)
	descInfo = prometheus.NewDesc("pairfed_federation_info",
		"The federation the coordinator serves (value 1).", []string{"federation", "kind"}, nil)
	descAge = prometheus.NewDesc("pairfed_view_age_seconds",
		"Seconds since the run loop last published a view.", nil, nil)
	descPhases = prometheus.NewDesc("pairfed_phases_completed_total",
		"Phases aggregated, over every job this process saw.", nil, nil)
	descSitesOnline = prometheus.NewDesc("pairfed_sites_online",
		"Sites online (joined and not left; for a service: live members).", nil, nil)
	descSiteRecords = prometheus.NewDesc("pairfed_site_records",
		"Training records a site online declared when it joined.", []string{"site"}, nil)
	descSiteSilent = prometheus.NewDesc("pairfed_site_silent_ticks",
		"Ticks since a site's last message.", []string{"site"}, nil)
	descJobPhase = prometheus.NewDesc("pairfed_running_job_phase",
		"Phase the running job is in (0 before its announcement).", []string{"job", "algorithm"}, nil)
	descJobPhases = prometheus.NewDesc("pairfed_running_job_phases",
		"Phases of the running job (0 before its announcement).", []string{"job", "algorithm"}, nil)
	descJobUpdates = prometheus.NewDesc("pairfed_running_job_updates",
		"Updates received in the running job's current phase.", []string{"job", "algorithm"}, nil)
	descJobs = prometheus.NewDesc("pairfed_jobs",
		"Jobs known to the coordinator, by status.", []string{"status"}, nil)
	descPubMsgs = prometheus.NewDesc("pairfed_transport_published_messages_total",
		"Messages the coordinator published.", nil, nil)
	descPubBytes = prometheus.NewDesc("pairfed_transport_published_bytes_total",
		"Payload bytes the coordinator published.", nil, nil)
	descRecvMsgs = prometheus.NewDesc("pairfed_transport_received_messages_total",
		"Messages the coordinator received.", nil, nil)
	descRecvBytes = prometheus.NewDesc("pairfed_transport_received_bytes_total",
		"Payload bytes the coordinator received.", nil, nil)
	descEpsSpent = prometheus.NewDesc("pairfed_privacy_epsilon_spent",
		"Record-level ε a site has spent so far (max within a job, sum across jobs).", []string{"site"}, nil)
	descDeltaSpent = prometheus.NewDesc("pairfed_privacy_delta_spent",
		"δ a site has spent so far (max within a job, sum across jobs).", []string{"site"}, nil)
	descEpsBudget = prometheus.NewDesc("pairfed_privacy_epsilon_budget",
		"A site's total ε budget (sites with a known finite budget only).", []string{"site"}, nil)
	descDeltaBudget = prometheus.NewDesc("pairfed_privacy_delta_budget",
		"A site's total δ budget (sites with a known finite budget only).", []string{"site"}, nil)
	descEpsRemaining = prometheus.NewDesc("pairfed_privacy_epsilon_remaining",
		"ε left of a site's budget (sites with a known finite budget only).", []string{"site"}, nil)
	descDeltaRemaining = prometheus.NewDesc("pairfed_privacy_delta_remaining",
		"δ left of a site's budget (sites with a known finite budget only).", []string{"site"}, nil)
)

// jobStatuses are the values of pairfed_jobs' status label, always all
// exported (0 when none).
var jobStatuses = []string{protocol.StatusQueued, protocol.StatusRunning, protocol.StatusCompleted, protocol.StatusFailed, protocol.StatusRefused}

type collector struct{ s *Server }

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUp, descInfo, descAge, descPhases, descSitesOnline, descSiteRecords, descSiteSilent,
		descJobPhase, descJobPhases, descJobUpdates, descJobs, descPubMsgs, descPubBytes, descRecvMsgs, descRecvBytes,
		descEpsSpent, descDeltaSpent, descEpsBudget, descDeltaBudget, descEpsRemaining, descDeltaRemaining} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	h, code := c.s.health()
	up := 0.0
	if code == 200 {
		up = 1
	}
	gauge(descUp, up)
	counter(descPhases, float64(c.s.phases.Load()))
	v, _, ok := c.s.current()
	if !ok {
		return
	}
	gauge(descInfo, 1, v.Federation, v.Kind)
	gauge(descAge, h.AgeSeconds)
	gauge(descSitesOnline, float64(len(v.Sites)))
	for _, st := range v.Sites {
		gauge(descSiteRecords, float64(st.Records), st.Site)
		gauge(descSiteSilent, float64(st.Silent), st.Site)
	}
	count := map[string]int{}
	if r := v.Running; r != nil {
		gauge(descJobPhase, float64(r.Phase), r.Job, r.Algo)
		gauge(descJobPhases, float64(r.Phases), r.Job, r.Algo)
		gauge(descJobUpdates, float64(r.Updates), r.Job, r.Algo)
		count[protocol.StatusRunning]++
	}
	for _, j := range v.Queued {
		count[j.Status]++
	}
	for _, j := range v.Finished {
		count[j.Status]++
	}
	for _, st := range jobStatuses {
		gauge(descJobs, float64(count[st]), st)
	}
	if t := v.Traffic; t != nil {
		counter(descPubMsgs, float64(t.PublishedMessages))
		counter(descPubBytes, float64(t.PublishedBytes))
		counter(descRecvMsgs, float64(t.ReceivedMessages))
		counter(descRecvBytes, float64(t.ReceivedBytes))
	}
	for _, p := range v.Privacy {
		gauge(descEpsSpent, p.Epsilon, p.Site)
		gauge(descDeltaSpent, p.Delta, p.Site)
		for _, x := range []struct {
			d *prometheus.Desc
			v *float64
		}{{descEpsBudget, p.BudgetEpsilon}, {descDeltaBudget, p.BudgetDelta}, {descEpsRemaining, p.RemainingEpsilon}, {descDeltaRemaining, p.RemainingDelta}} {
			if x.v != nil {
				gauge(x.d, *x.v, p.Site)
			}
		}
	}
}
