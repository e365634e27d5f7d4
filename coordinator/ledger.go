package coordinator

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

// Charge is one entry of the coordinator's privacy ledger. The coordinator
// never draws noise itself; it charges each participant of a private job
// for the job's whole (ε, δ) before the job's phases start (Phase 0: the
// reservation — the certificate of all the site's releases when the
// algorithm's plan states it from public numbers, fedalgo.Plan.Certified,
// else the requested (ε, δ), an upper bound), and records each phase's
// release (Phase k, with the σ and the certified (ε, δ) of the site's
// releases so far that its update states) when it aggregates it. Every
// entry of a job carries a guarantee for the job's releases up to it, so
// the ledger composes as:
//
//   - within a job, the maximum over its entries: every federated
//     algorithm's plan charges each site the job's whole (ε, δ), whether
//     its phases use disjoint partitions of the site's records (parallel
//     composition) or its releases are composed into that (ε, δ) by the
//     algorithm's own theorem (package fedalgo says which);
//   - across jobs, the sum (basic sequential composition).
//
// A job that a site refused or dropped out of stays charged: the
// coordinator cannot prove that the site released nothing, and a ledger
// may over-count but never under-count. The site's own ledger
// (worker.Release) is exact.
type Charge struct {
	// Key identifies the charge ("job/site/phase"): appending a key
	// already in the ledger is a no-op, so a replayed or duplicated
	// message, or a job resumed after a crash, is never charged twice.
	Key   string `json:"key"`
	Site  string `json:"site"`
	Job   string `json:"job"`
	Phase int    `json:"phase"` // 0: the job's reservation
	Algo  string `json:"algorithm"`
	// Mechanism is "gaussian" or "laplace" (δ = 0) for private jobs,
	// "none" for non-private ones.
	Mechanism string `json:"mechanism"`
	// Sigma and Sensitivity are the release's noise scale and ℓ2
	// sensitivity when the algorithm's plan states it.
	Sigma       float64 `json:"sigma,omitempty"`
	Sensitivity float64 `json:"sensitivity,omitempty"`
	Records     int     `json:"records"`
	// Epsilon and Delta are the per-site record-level guarantee certified
	// for the job's releases up to this entry (the reservation: for all
	// of them), never above the job's request.
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Private is false for non-private jobs and for releases the site
	// reported as drawn from a seeded (not secure) source.
	Private    bool   `json:"private"`
	Accountant string `json:"accountant"`
	// Returned marks the return of the job's reservation (phase 0, ε = δ
	// = 0, key ReturnKey): "reserved, not released". The coordinator
	// appends it when a job run with secure aggregation aborts before any
	// of its rounds reached the unmasking step (Coordinator.NothingReleased:
	// nothing derived from the sites' data reached it), and Spent then
	// counts the job as nothing — unless the job has a charge of an
	// aggregated phase (phase ≥ 1), which no return can cancel. Note says
	// why.
	Returned bool   `json:"returned,omitempty"`
	Note     string `json:"note,omitempty"`
	// Time is set by the store when the charge is made durable.
	Time time.Time `json:"time"`
}

// AccountantRule names how Charge entries compose (see Charge).
const AccountantRule = "max within a job (disjoint partitions or the algorithm's own composition), sum across jobs (basic composition)"

// ChargeKey is the idempotency key of a charge.
func ChargeKey(job, site string, phase int) string { return fmt.Sprintf("%s/%s/%d", job, site, phase) }

// ReturnKey is the idempotency key of the return of a job's reservation.
func ReturnKey(job, site string) string { return ChargeKey(job, site, 0) + "/returned" }

// Budget is a site's total record-level privacy budget at the
// coordinator, over all jobs.
type Budget struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// Validate checks that the budget is a pair of finite numbers ≥ 0 with
// δ < 1.
func (b Budget) Validate() error {
	if err := dp.CheckEpsilonNonNegative("budget ε", b.Epsilon); err != nil {
		return err
	}
	if err := dp.CheckDelta("budget δ", b.Delta); err != nil {
		return err
	}
	return nil
}

// Spend is what a site has spent according to a ledger.
type Spend struct {
	Site    string  `json:"site"`
	Epsilon float64 `json:"epsilon_spent"`
	Delta   float64 `json:"delta_spent"`
	// Jobs counts the jobs charged; NonPrivate those among them whose
	// releases carry no finite ε (a budgeted site never joins those).
	Jobs       int `json:"jobs"`
	NonPrivate int `json:"non_private_jobs"`
}

// Spent composes a ledger per site (see Charge), sorted by site.
func Spent(charges []Charge) []Spend {
	type jobCost struct {
		e, d     float64
		private  bool
		returned bool // the reservation was returned
		released bool // an aggregated phase was charged
	}
	per := map[string]map[string]*jobCost{}
	for _, c := range charges {
		jobs := per[c.Site]
		if jobs == nil {
			jobs = map[string]*jobCost{}
			per[c.Site] = jobs
		}
		jc := jobs[c.Job]
		if jc == nil {
			jc = &jobCost{private: true}
			jobs[c.Job] = jc
		}
		jc.e, jc.d = max(jc.e, c.Epsilon), max(jc.d, c.Delta)
		jc.private = jc.private && c.Mechanism != "none"
		jc.returned = jc.returned || c.Returned
		jc.released = jc.released || c.Phase >= 1
	}
	for _, jobs := range per {
		for job, jc := range jobs {
			if jc.returned && !jc.released {
				delete(jobs, job) // reserved, not released
			}
		}
	}
	out := make([]Spend, 0, len(per))
	for site, jobs := range per {
		sp := Spend{Site: site, Jobs: len(jobs)}
		for _, jc := range jobs {
			sp.Epsilon += jc.e
			sp.Delta += jc.d
			if !jc.private {
				sp.NonPrivate++
			}
		}
		out = append(out, sp)
	}
	slices.SortFunc(out, func(a, b Spend) int { return strings.Compare(a.Site, b.Site) })
	return out
}

// overBudget returns why a site that has spent sp may not take part in a
// job that costs (eps, delta) under budget b, or "". A relative slack of
// 1e-9 forgives float rounding of equal sums (as worker.Service does).
func overBudget(site string, sp Spend, b Budget, private bool, eps, delta float64) string {
	if !private {
		return fmt.Sprintf("site %s has a privacy budget at the coordinator and the job is not differentially private", site)
	}
	if sp.Epsilon+eps > b.Epsilon*(1+1e-9) || sp.Delta+delta > b.Delta*(1+1e-9) {
		return fmt.Sprintf("coordinator ledger: site %s has spent (ε, δ) = (%g, %g) of its budget (%g, %g), remaining (%g, %g); the job asks (%g, %g)",
			site, sp.Epsilon, sp.Delta, b.Epsilon, b.Delta, math.Max(0, b.Epsilon-sp.Epsilon), math.Max(0, b.Delta-sp.Delta), eps, delta)
	}
	return ""
}

// mechanism names the noise of a job's releases (fedalgo.Mechanism).
func mechanism(a *protocol.JobAnnounce) string { return fedalgo.Mechanism(a) }

// CheckLedger cross-checks the coordinator's ledger against what its
// state directory says happened, at start: every participant of a
// finished private job that reported releases, and every participant of
// the checkpointed running job past its accept round, must hold the job's
// reservation (phase 0). A missing one means charges.jsonl was deleted,
// truncated or replaced: a coordinator that went on would forget spending
// and could let a site past its budget.
func CheckLedger(finished []*protocol.JobStatus, cp *Checkpoint, charges []Charge) error {
	have := map[string]bool{}
	for _, c := range charges {
		have[c.Key] = true
	}
	var missing []string
	for _, st := range finished {
		if st.Status != protocol.StatusCompleted || !fedalgo.Private(st.Algo) {
			continue
		}
		for _, p := range st.Privacy {
			if len(p.Sigmas) > 0 && !have[ChargeKey(st.Job, p.Site, 0)] {
				missing = append(missing, ChargeKey(st.Job, p.Site, 0))
			}
		}
	}
	if cp != nil && cp.Running != nil && cp.Running.Announce != nil && cp.Running.Phase >= 1 && fedalgo.Private(cp.Running.Announce.Algo) {
		a := cp.Running.Announce
		for _, site := range a.Sites {
			if _, refused := cp.Running.Refused[site]; !refused && !have[ChargeKey(a.Job, site, 0)] {
				missing = append(missing, ChargeKey(a.Job, site, 0))
			}
		}
	}
	if len(missing) > 0 {
		if len(missing) > 5 {
			missing = append(missing[:5], fmt.Sprintf("and %d more", len(missing)-5))
		}
		return fmt.Errorf("coordinator: the ledger lacks the reservations of jobs its state records (%s): the ledger was deleted, truncated or replaced, and the coordinator would forget what the sites spent", strings.Join(missing, ", "))
	}
	return nil
}
