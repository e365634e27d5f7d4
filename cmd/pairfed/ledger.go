package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/node"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/store"
	"github.com/pairfed/pairfed/worker"
	"github.com/urfave/cli/v2"
)

func ledgerCommand() *cli.Command {
	state := &cli.StringFlag{Name: "state", Required: true, Usage: "state directory of a coordinator or of a site"}
	return &cli.Command{
		Name:  "ledger",
		Usage: "show, export and budget the privacy ledger of a coordinator's or a site's state directory",
		Subcommands: []*cli.Command{
			{
				Name:   "show",
				Usage:  "per site: ε and δ spent (composed: max within a job, sum across jobs), budget and remaining, and the entries",
				Flags:  []cli.Flag{state, &cli.BoolFlag{Name: "json", Usage: "print one JSON object"}},
				Action: runLedgerShow,
			},
			{
				Name:  "export",
				Usage: "write every ledger entry as CSV (or JSON lines)",
				Flags: []cli.Flag{state,
					&cli.StringFlag{Name: "format", Value: "csv", Usage: "csv or jsonl"},
					&cli.StringFlag{Name: "out", Usage: "output file (default, or -: standard output)"}},
				Action: runLedgerExport,
			},
			{
				Name:  "budget",
				Usage: "per-site privacy budgets",
				Subcommands: []*cli.Command{{
					Name:  "set",
					Usage: "set a site's total (ε, δ) budget; a coordinator leaves the site out of jobs past it, a site refuses them",
					Flags: []cli.Flag{state,
						&cli.StringFlag{Name: "site", Usage: "the site (default: the site of a site's state directory)"},
						&cli.Float64Flag{Name: "epsilon", Required: true, Usage: "total ε over all jobs"},
						&cli.Float64Flag{Name: "delta", Required: true, Usage: "total δ over all jobs"}},
					Action: runLedgerBudgetSet,
				}, {
					Name:  "unset",
					Usage: "remove a site's (ε, δ) budget from the state directory: no cap from this file (a worker's --budget-epsilon/--budget-delta flags still cap it)",
					Flags: []cli.Flag{state,
						&cli.StringFlag{Name: "site", Usage: "the site (default: the site of a site's state directory)"}},
					Action: runLedgerBudgetUnset,
				}},
			},
		},
	}
}

// ledgerEntry is one entry of either ledger, in a common shape.
type ledgerEntry struct {
	Site        string  `json:"site"`
	Job         string  `json:"job"`
	Phase       int     `json:"phase"`
	Algo        string  `json:"algorithm,omitempty"`
	Mechanism   string  `json:"mechanism,omitempty"`
	Records     int     `json:"records"`
	Sigma       float64 `json:"sigma"`
	Sensitivity float64 `json:"sensitivity,omitempty"`
	Epsilon     float64 `json:"epsilon"`
	Delta       float64 `json:"delta"`
	Private     bool    `json:"private"`
	Time        string  `json:"time,omitempty"`
}

type siteLedger struct {
	Site             string        `json:"site"`
	EpsilonSpent     float64       `json:"epsilon_spent"`
	DeltaSpent       float64       `json:"delta_spent"`
	EpsilonBudget    *float64      `json:"epsilon_budget"`
	DeltaBudget      *float64      `json:"delta_budget"`
	EpsilonRemaining *float64      `json:"epsilon_remaining,omitempty"`
	DeltaRemaining   *float64      `json:"delta_remaining,omitempty"`
	Jobs             int           `json:"jobs"`
	NonPrivateJobs   int           `json:"non_private_jobs"`
	Entries          []ledgerEntry `json:"entries"`
}

type ledgerReport struct {
	State string `json:"state"`
	// Kind is "coordinator" (charges.jsonl: what the coordinator charged
	// each site) or "site" (ledger.jsonl: what this site released).
	Kind       string       `json:"kind"`
	Accountant string       `json:"accountant"`
	Sites      []siteLedger `json:"sites"`
	// Notes: what the reading skipped (a torn last line).
	Notes []string `json:"notes,omitempty"`
}

// tornTailNote says how many bytes follow the last newline of the
// journal at path: a torn last line (an append a crash interrupted), which
// the reading skipped and the next worker or coordinator start truncates.
// Probe 4 (issue 28): `ledger show` skipped it without a word.
func tornTailNote(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	n := len(b) - (bytes.LastIndexByte(b, '\n') + 1)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s ends with a torn last line of %d bytes after its last complete entry (an append a crash or a cut interrupted): not shown and not counted; the next start of this site or coordinator drops it — if the file was cut short rather than crashed, restore it from a backup", path, n)
}

// claimSiteDir records site as the owner of dir, or checks that it is
// (node.ClaimSiteDir).
func claimSiteDir(dir, site string) error { return node.ClaimSiteDir(dir, site) }

// siteNameFile is node's file naming the site of its state directory
// (node.ClaimSiteDir writes it; TestLedgerShowInvalidSiteName edits it).
const siteNameFile = "site"

// stateDirSite is the site named by dir's site name file ("" when there
// is none). A name that is not a valid site name is refused: pairfed
// writes only valid names there, so the file was edited or damaged, and
// showing the ledger under it would split one site into two rows — the
// spending under the bad name, the budget (kept under the real one) under
// the other (probe 4 of issue 28). Refusing beats either single row: the
// ledger's entries carry no site name, so nothing in the directory says
// which of the two names is the site's, and a guess could show a budget
// with nothing spent against it.
func stateDirSite(dir string, budgets map[string]coordinator.Budget) (string, error) {
	name := node.DirSite(dir)
	if name == "" {
		return "", nil
	}
	if err := protocol.ValidName("site", name); err != nil {
		hint := ""
		if len(budgets) > 0 {
			hint = fmt.Sprintf("; %s of this directory has budgets for %s", store.BudgetsFile, strings.Join(slices.Sorted(maps.Keys(budgets)), ", "))
		}
		return "", fmt.Errorf("%s names site %q, which is not a site name (%v): pairfed writes only valid names there, so the file was edited or damaged — write the site's name (the --site its worker runs with) back into it, one line%s", filepath.Join(dir, siteNameFile), name, err, hint)
	}
	return name, nil
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// loadLedger reads the ledger of a state directory without modifying it.
func loadLedger(dir string) (*ledgerReport, error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("ledger: no such state directory %q: give the --state of a coordinator or a site (%v)", dir, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("ledger: %s is a file, not a state directory: give the directory a coordinator's or a site's --state names", dir)
	}
	coord := exists(filepath.Join(dir, store.ChargesFile)) || exists(filepath.Join(dir, "jobs"))
	site := exists(filepath.Join(dir, store.LedgerFile))
	if !coord && !site {
		return nil, fmt.Errorf("ledger: %s holds no ledger (neither %s of a coordinator nor %s of a site)", dir, store.ChargesFile, store.LedgerFile)
	}
	budgets, err := store.LoadBudgets(dir)
	if err != nil {
		return nil, err
	}
	rep := &ledgerReport{State: dir}
	bySite := map[string]*siteLedger{}
	get := func(name string) *siteLedger {
		if sl := bySite[name]; sl != nil {
			return sl
		}
		sl := &siteLedger{Site: name, Entries: []ledgerEntry{}}
		bySite[name] = sl
		return sl
	}
	if coord {
		rep.Kind, rep.Accountant = "coordinator", coordinator.AccountantRule
		charges, err := store.ReadCharges(dir)
		if err != nil {
			return nil, err
		}
		if n := tornTailNote(filepath.Join(dir, store.ChargesFile)); n != "" {
			rep.Notes = append(rep.Notes, n)
		}
		for _, sp := range coordinator.Spent(charges) {
			sl := get(sp.Site)
			sl.EpsilonSpent, sl.DeltaSpent, sl.Jobs, sl.NonPrivateJobs = sp.Epsilon, sp.Delta, sp.Jobs, sp.NonPrivate
		}
		for _, c := range charges {
			sl := get(c.Site)
			sl.Entries = append(sl.Entries, ledgerEntry{Site: c.Site, Job: c.Job, Phase: c.Phase, Algo: c.Algo, Mechanism: c.Mechanism, Records: c.Records,
				Sigma: c.Sigma, Sensitivity: c.Sensitivity, Epsilon: c.Epsilon, Delta: c.Delta, Private: c.Private, Time: c.Time.Format("2006-01-02T15:04:05.000Z07:00")})
		}
	} else {
		rep.Kind, rep.Accountant = "site", "max within a job (disjoint partitions), sum across jobs (basic composition) — as the site enforces its budget"
		releases, err := store.ReadLedger(dir)
		if err != nil {
			return nil, err
		}
		if n := tornTailNote(filepath.Join(dir, store.LedgerFile)); n != "" {
			rep.Notes = append(rep.Notes, n)
		}
		name, err := stateDirSite(dir, budgets)
		if err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
		if name == "" {
			name = "(this site)"
		}
		sl := get(name)
		sl.EpsilonSpent, sl.DeltaSpent = worker.Spent(releases)
		jobs := map[string]bool{}
		for _, r := range releases {
			jobs[r.Job] = true
			e := ledgerEntry{Site: name, Job: r.Job, Phase: r.Phase, Mechanism: r.Mechanism, Records: r.Records, Sigma: r.Sigma,
				Sensitivity: r.Sensitivity, Epsilon: r.Epsilon, Delta: r.Delta, Private: r.Secure && r.Epsilon > 0}
			if !r.Time.IsZero() {
				e.Time = r.Time.Format("2006-01-02T15:04:05.000Z07:00")
			}
			sl.Entries = append(sl.Entries, e)
		}
		sl.Jobs = len(jobs)
	}
	for name, b := range budgets {
		sl := get(name)
		e, d := b.Epsilon, b.Delta
		re, rd := math.Max(0, e-sl.EpsilonSpent), math.Max(0, d-sl.DeltaSpent)
		sl.EpsilonBudget, sl.DeltaBudget, sl.EpsilonRemaining, sl.DeltaRemaining = &e, &d, &re, &rd
	}
	for _, sl := range bySite {
		rep.Sites = append(rep.Sites, *sl)
	}
	slices.SortFunc(rep.Sites, func(a, b siteLedger) int { return strings.Compare(a.Site, b.Site) })
	return rep, nil
}

func runLedgerShow(c *cli.Context) error {
	rep, err := loadLedger(c.String("state"))
	if err != nil {
		return err
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(c.App.ErrWriter, "pairfed: note: %s\n", n)
	}
	w := c.App.Writer
	if c.Bool("json") {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(w, "%s ledger of %s\ncomposition: %s\n\n", rep.Kind, rep.State, rep.Accountant)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "site\tjobs\tε spent\tδ spent\tε budget\tδ budget\tε remaining\tδ remaining")
	opt := func(p *float64) string {
		if p == nil {
			return "-"
		}
		if budgetText(*p) == "unlimited" {
			return "unlimited"
		}
		return strconv.FormatFloat(*p, 'g', 6, 64)
	}
	for _, s := range rep.Sites {
		jobs := strconv.Itoa(s.Jobs)
		if s.NonPrivateJobs > 0 {
			jobs += fmt.Sprintf(" (%d not private)", s.NonPrivateJobs)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.6g\t%.6g\t%s\t%s\t%s\t%s\n", s.Site, jobs, s.EpsilonSpent, s.DeltaSpent,
			opt(s.EpsilonBudget), opt(s.DeltaBudget), opt(s.EpsilonRemaining), opt(s.DeltaRemaining))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "site\tjob\tphase\tmechanism\trecords\tσ\tε\tδ\tprivate\ttime")
	for _, s := range rep.Sites {
		for _, e := range s.Entries {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%.6g\t%g\t%.3g\t%v\t%s\n", e.Site, e.Job, e.Phase, e.Mechanism, e.Records, e.Sigma, e.Epsilon, e.Delta, e.Private, e.Time)
		}
	}
	return tw.Flush()
}

func runLedgerExport(c *cli.Context) error {
	rep, err := loadLedger(c.String("state"))
	if err != nil {
		return err
	}
	format := c.String("format")
	if format != "csv" && format != "jsonl" {
		return usageError{fmt.Errorf("ledger export: --format %q: want csv or jsonl", format)}
	}
	var w io.Writer = c.App.Writer
	// "-" is standard output, as for score --out (probe 6: it wrote a
	// file named "-").
	if p := c.String("out"); p != "" && p != "-" {
		if dir, ok := store.InStateDir(p); ok {
			return usageError{fmt.Errorf("ledger export: --out %s is inside the state directory %s: an export never writes into a coordinator's or a site's state (it could replace the ledger itself); write it elsewhere", p, dir)}
		}
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	if format == "jsonl" {
		enc := json.NewEncoder(w)
		for _, s := range rep.Sites {
			for _, e := range s.Entries {
				if err := enc.Encode(e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	cw := csv.NewWriter(w)
	cw.Write([]string{"site", "job", "phase", "algorithm", "mechanism", "records", "sigma", "sensitivity", "epsilon", "delta", "private", "time"})
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, s := range rep.Sites {
		for _, e := range s.Entries {
			cw.Write([]string{e.Site, e.Job, strconv.Itoa(e.Phase), e.Algo, e.Mechanism, strconv.Itoa(e.Records), f(e.Sigma), f(e.Sensitivity),
				f(e.Epsilon), f(e.Delta), strconv.FormatBool(e.Private), e.Time})
		}
	}
	cw.Flush()
	return cw.Error()
}

// budgetTarget returns the state directory and the site of a `ledger
// budget` subcommand (who names it in errors).
func budgetTarget(c *cli.Context, who string) (dir, site string, err error) {
	dir = c.String("state")
	// A typo must not create a directory that no process reads.
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", "", usageError{fmt.Errorf("%s: no such state directory %q: give the --state of an existing coordinator or site (start it once, or create the directory first)", who, dir)}
	}
	own, err := stateDirSite(dir, nil)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", who, err)
	}
	site = c.String("site")
	if site == "" {
		site = own
		if site == "" {
			return "", "", usageError{fmt.Errorf("%s: give --site (%s is not a site's state directory that names its site)", who, dir)}
		}
	}
	if err := protocol.ValidName("site", site); err != nil {
		return "", "", usageError{fmt.Errorf("%s: %w", who, err)}
	}
	// A site's directory caps that site only (the worker reads its own
	// entry): a budget for another site there would be printed as set
	// and enforced nowhere.
	if own != "" && own != site {
		return "", "", usageError{fmt.Errorf("%s: --site %s, but %s is the state directory of site %s, whose worker reads only its own budget: a budget of %s set here would be enforced nowhere; give --site %s (or leave it out), or the coordinator's --state to cap %s there", who, site, dir, own, site, own, site)}
	}
	return dir, site, nil
}

// errNoChange ends a budgets update that would change nothing, before
// the file is written.
var errNoChange = errors.New("no change")

// runLedgerBudgetUnset removes site's entry from budgets.json under its
// lock; a running coordinator or site reads the change at its next job
// admission, as for set.
func runLedgerBudgetUnset(c *cli.Context) error {
	dir, site, err := budgetTarget(c, "ledger budget unset")
	if err != nil {
		return err
	}
	had := false
	if err := store.UpdateBudgets(dir, func(budgets map[string]coordinator.Budget) error {
		if _, had = budgets[site]; !had {
			return errNoChange // nothing to remove: budgets.json is not rewritten
		}
		delete(budgets, site)
		return nil
	}); err != nil && !errors.Is(err, errNoChange) {
		return err
	}
	if !had {
		fmt.Fprintf(c.App.Writer, "%s had no budget in %s: nothing changed\n", site, dir)
		return nil
	}
	fmt.Fprintf(c.App.Writer, "budget of %s removed: no cap from %s\n", site, filepath.Join(dir, store.BudgetsFile))
	return nil
}

func runLedgerBudgetSet(c *cli.Context) error {
	dir, site, err := budgetTarget(c, "ledger budget set")
	if err != nil {
		return err
	}
	b := coordinator.Budget{Epsilon: c.Float64("epsilon"), Delta: c.Float64("delta")}
	if math.IsInf(b.Epsilon, 1) {
		return usageError{fmt.Errorf("ledger budget set: --epsilon = +Inf is no budget: to remove %s's cap run `pairfed ledger budget unset --state %s --site %s`", site, dir, site)}
	}
	if err := b.Validate(); err != nil {
		return usageError{fmt.Errorf("ledger budget set: %w", err)}
	}
	// Under budgets.json's lock: concurrent settings all land. A running
	// coordinator or site re-reads the file at its next job admission.
	if err := store.UpdateBudgets(dir, func(budgets map[string]coordinator.Budget) error {
		budgets[site] = b
		return nil
	}); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "budget of %s: (ε, δ) = (%g, %g)\n", site, b.Epsilon, b.Delta)
	if exists(filepath.Join(dir, store.LedgerFile)) || exists(filepath.Join(dir, store.ChargesFile)) {
		if rep, err := loadLedger(dir); err == nil {
			for _, s := range rep.Sites {
				if s.Site == site && (s.EpsilonSpent > b.Epsilon || s.DeltaSpent > b.Delta) {
					fmt.Fprintf(c.App.ErrWriter, "warning: %s has already spent (ε, δ) = (%g, %g), more than the new budget: it takes no further private job\n", site, s.EpsilonSpent, s.DeltaSpent)
				}
			}
		}
	}
	return nil
}
