package report

import (
	"cmp"
	"slices"
	"time"

	"github.com/pairfed/pairfed/coordinator"
)

// SpendPoint is a site's cumulative privacy spending right after a charge
// of the coordinator's ledger changed it.
type SpendPoint struct {
	Time time.Time
	// Epsilon and Delta are the site's totals composed as coordinator.Spent
	// composes the ledger: the maximum over a job's entries, summed over
	// jobs.
	Epsilon, Delta float64
	// Job is the job whose charge made this point.
	Job string
}

// SpendOverTime replays the coordinator's ledger in time order (ledger
// order among equal times) and returns, per site, a point each time the
// site's composed total changed or a job charged it for the first time.
// A job's (ε, δ) thus counts once per site, at its first charge; the last
// point of each site equals coordinator.Spent's total for it (up to the
// order of the floating-point sum).
func SpendOverTime(charges []coordinator.Charge) map[string][]SpendPoint {
	idx := make([]int, len(charges))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return charges[a].Time.Compare(charges[b].Time) })
	type cost struct{ e, d float64 }
	jobs := map[string]map[string]*cost{} // site → job → max (ε, δ)
	total := map[string]*cost{}
	out := map[string][]SpendPoint{}
	for _, i := range idx {
		c := charges[i]
		per := jobs[c.Site]
		if per == nil {
			per = map[string]*cost{}
			jobs[c.Site] = per
			total[c.Site] = &cost{}
		}
		jc, seen := per[c.Job]
		if !seen {
			jc = &cost{}
			per[c.Job] = jc
		}
		e, d := max(jc.e, c.Epsilon), max(jc.d, c.Delta)
		if seen && e == jc.e && d == jc.d {
			continue
		}
		t := total[c.Site]
		t.e += e - jc.e
		t.d += d - jc.d
		jc.e, jc.d = e, d
		out[c.Site] = append(out[c.Site], SpendPoint{Time: c.Time, Epsilon: t.e, Delta: t.d, Job: c.Job})
	}
	return out
}

// jobCharges returns the ledger entries of job, sorted by site, phase.
func jobCharges(charges []coordinator.Charge, job string) []coordinator.Charge {
	var out []coordinator.Charge
	for _, c := range charges {
		if c.Job == job {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b coordinator.Charge) int {
		return cmp.Or(cmp.Compare(a.Site, b.Site), cmp.Compare(a.Phase, b.Phase))
	})
	return out
}
