package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/report"
	"github.com/pairfed/pairfed/store"
	"github.com/urfave/cli/v2"
)

// `pairfed report`: the HTML report of one job of a coordinator's state
// directory. It only reads the state directory (jobs/<job>.json, and
// checkpoint.json for a job not yet finished, charges.jsonl, budgets.json)
// and writes OUT/index.html and its PNG plots, each atomically.

func reportCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:  "report",
		Usage: "write an HTML report of a federated job: status, parameters, AUC per phase, privacy spent per site, ROC curve",
		Description: `Reads the coordinator's --state directory (never writes to it) and writes
OUT/index.html, a self-contained page (plots embedded, no external assets),
and its plots as PNG files next to it.

The ROC curve needs the coordinator's test file: give --test with the loader
flags and --scale the coordinator was started with; the records are scaled
and clipped to the job's feature radius exactly as the coordinator scores a
job, so the curve's AUC equals the job's.

Example:
   pairfed report --job job-1 --state /var/lib/pairfed/coord --test test.libsvm --out report-job-1`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "job", Required: true, Usage: "the job id"},
			&cli.StringFlag{Name: "state", Required: true, Usage: "the coordinator's state directory (read only)"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "output directory (created if needed): index.html and the PNG plots"},
			&cli.StringFlag{Name: "test", Usage: "the coordinator's --test file, for the ROC curve of the final model"},
			&cli.StringFlag{Name: "scale", Value: "minmax", Usage: "the coordinator's --scale: none, minmax or standard, fitted on the --test file itself"},
		}, dataFlags()...),
		Action: runReport,
	})
}

func runReport(c *cli.Context) error {
	id, state, out := c.String("job"), c.String("state"), c.String("out")
	if err := protocol.ValidName("job", id); err != nil {
		return usageError{fmt.Errorf("report: --job %q: %w: give the id of a job of --state (pairfed job list, or the file names of STATE/jobs)", id, err)}
	}
	switch c.String("scale") {
	case "none", "minmax", "standard", "":
	default:
		return usageError{fmt.Errorf("report: --scale %q: want none, minmax or standard", c.String("scale"))}
	}
	if err := outsideState(state, out); err != nil {
		return usageError{err}
	}
	if err := checkOutputDir("--out", out); err != nil {
		return err
	}
	in, err := loadReportInput(state, id)
	if err != nil {
		return err
	}
	st := in.Status
	switch {
	case st.Status != protocol.StatusCompleted:
		in.NoROC = fmt.Sprintf("No ROC curve: job %s did not complete (status %s), so it has no final model.", id, st.Status)
		if p := c.String("test"); p != "" {
			in.Notes = append(in.Notes, fmt.Sprintf("--test %s was not used: the job has no final model.", p))
		}
	case st.Announce != nil && st.Announce.Task == protocol.TaskMetric:
		in.NoROC = "No ROC curve: this is a metric-learning job; its model is not a linear scorer."
	case len(st.Model) == 0:
		in.NoROC = "No ROC curve: the job's status holds no model."
	case c.String("test") == "":
		in.NoROC = "The ROC curve needs the coordinator's test file: run pairfed report again with --test FILE (and the loader flags and --scale the coordinator was started with)."
	default:
		if in.ROC, err = reportROC(c, st); err != nil {
			return err
		}
	}
	in.Generated = time.Now()
	rep, err := report.Render(in)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	// The plots first, the page last: a reader of index.html finds its
	// files (the page embeds them anyway; the files are for reuse).
	for _, img := range rep.Images {
		if err := writeReportFile(filepath.Join(out, img.Name), img.PNG); err != nil {
			return err
		}
	}
	// Plots of an earlier report in the same directory that this one
	// does not draw (e.g. the ROC curve without --test) would be stale.
	for _, name := range []string{report.ImagePhaseAUC, report.ImageSpent, report.ImageROC} {
		if !slices.ContainsFunc(rep.Images, func(img report.Image) bool { return img.Name == name }) {
			if err := os.Remove(filepath.Join(out, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("report: %w", err)
			}
		}
	}
	index := filepath.Join(out, "index.html")
	if err := writeReportFile(index, rep.HTML); err != nil {
		return err
	}
	w := c.App.Writer
	fmt.Fprintf(w, "report of job %s (%s) written to %s\n", id, st.Status, index)
	if st.Status != protocol.StatusCompleted {
		fmt.Fprintf(w, "job %s did not complete (%s): the report shows its status, reason and what was recorded\n", id, st.Status)
	}
	if in.ROC == nil {
		fmt.Fprintln(w, in.NoROC)
	} else if d := math.Abs(in.ROC.AUC - st.AUC); st.TestRecords > 0 && (d > 1e-12 || in.ROC.Positives+in.ROC.Negatives != st.TestRecords) {
		fmt.Fprintf(w, "warning: the ROC curve's AUC %g on %d records differs from the coordinator's %g on %d: --test, its loader flags or --scale are not the coordinator's\n",
			in.ROC.AUC, in.ROC.Positives+in.ROC.Negatives, st.AUC, st.TestRecords)
	}
	return nil
}

// writeReportFile replaces path by b atomically, as store.WriteFileAtomic
// does (temporary file in the same directory, fsync, rename), but readable
// by everyone (0644): a report is meant to be shared.
func writeReportFile(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	return nil
}

// outsideState refuses an output directory that is the state directory or
// inside it: the report never writes there.
func outsideState(state, out string) error {
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			return filepath.Clean(p)
		}
		if r, err := filepath.EvalSymlinks(a); err == nil {
			return r
		}
		return a
	}
	s, o := abs(state), abs(out)
	if rel, err := filepath.Rel(s, o); err == nil && (rel == "." || !strings.HasPrefix(rel, "..")) {
		return fmt.Errorf("report: --out %s is inside the state directory %s: write the report elsewhere (the report never writes to the state directory)", out, state)
	}
	return nil
}

// loadReportInput reads job id's status, the ledger and the budgets of the
// coordinator state directory state, without writing to it.
func loadReportInput(state, id string) (*report.Input, error) {
	fi, err := os.Stat(state)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("report: --state %s: no such file or directory: give the coordinator's state directory (its --state)", state)
	}
	if err != nil {
		return nil, fmt.Errorf("report: state directory: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("report: state %s is not a directory", state)
	}
	jobsDir := filepath.Join(state, "jobs")
	if fi, err := os.Stat(jobsDir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("report: %s has no jobs/ directory: it is not a coordinator's state directory (a coordinator creates jobs/ when it starts)", state)
	}
	in := &report.Input{}
	path := filepath.Join(jobsDir, id+".json")
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		var st protocol.JobStatus
		if err := json.Unmarshal(b, &st); err != nil {
			// Probe 6 (issue 28): a cut file was "unexpected end of JSON
			// input", without saying the file is damaged or what to do.
			return nil, fmt.Errorf("report: %s (%d bytes) is not a job record (%v): the coordinator writes it whole, so it was cut, edited or damaged; restore it from a backup (the ledger, charges.jsonl, still holds the job's privacy charges)", path, len(b), err)
		}
		if err := st.Validate(); err != nil {
			return nil, fmt.Errorf("report: %s: %w", path, err)
		}
		if st.Job != id {
			return nil, fmt.Errorf("report: %s holds job %q, not %q", path, st.Job, id)
		}
		in.Status, in.Source = &st, path
	case errors.Is(err, fs.ErrNotExist):
		// Not finished: a queued or running job is in the checkpoint.
		cp, cerr := store.LoadCheckpoint(state)
		if cerr != nil {
			return nil, fmt.Errorf("report: job %s has no jobs/%s.json, and the checkpoint cannot be read: %w", id, id, cerr)
		}
		if cp != nil && cp.Status[id] != nil {
			st := *cp.Status[id]
			if r := cp.Running; r != nil && r.Announce != nil && r.Announce.Job == id {
				st.Announce = r.Announce
				st.PhaseAUC = r.PhaseAUC
				in.CheckpointPhase = r.Phase
			}
			if err := st.Validate(); err != nil {
				return nil, fmt.Errorf("report: %s: job %s: %w", filepath.Join(state, store.CheckpointFile), id, err)
			}
			in.Status, in.Source = &st, filepath.Join(state, store.CheckpointFile)
			break
		}
		known, err := knownJobs(jobsDir, cp)
		if err != nil {
			return nil, err
		}
		if len(known) == 0 {
			return nil, fmt.Errorf("report: unknown job %q: %s records no job yet", id, state)
		}
		return nil, fmt.Errorf("report: unknown job %q in %s; known jobs: %s", id, state, strings.Join(known, ", "))
	default:
		return nil, fmt.Errorf("report: %w", err)
	}
	if in.Charges, err = store.ReadCharges(state); err != nil {
		return nil, fmt.Errorf("report: ledger: %w", err)
	}
	if in.Budgets, err = store.LoadBudgets(state); err != nil {
		return nil, fmt.Errorf("report: budgets: %w", err)
	}
	return in, nil
}

// knownJobs lists the jobs of jobs/ and of the checkpoint (marked with
// their status), sorted.
func knownJobs(jobsDir string, cp *coordinator.Checkpoint) ([]string, error) {
	entries, err := os.ReadDir(jobsDir)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".model.json") {
			continue // a job's model artefact
		}
		out = append(out, strings.TrimSuffix(name, ".json"))
	}
	if cp != nil {
		for id, st := range cp.Status {
			if !slices.Contains(out, id) {
				out = append(out, fmt.Sprintf("%s (%s)", id, st.Status))
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// reportROC loads --test as `pairfed coordinator --test` does — the loader
// flags, --scale fitted on the test file itself, clipping to the job's
// feature radius — and returns the final model's ROC curve on it.
func reportROC(c *cli.Context, st *protocol.JobStatus) (*report.ROC, error) {
	path, scale := c.String("test"), c.String("scale")
	test, err := data.Load(path, dataOptions(c))
	if err != nil {
		return nil, err
	}
	// The evaluator's map without a schema (experiment.SiteMap: --scale
	// fitted on the test file, the clip to the job's R).
	f := experiment.SiteFacts{Scale: scale}
	if a := st.Announce; a != nil && a.FeatureRadius > 0 {
		f.Radius = a.FeatureRadius
	}
	pm, err := experiment.SiteMap(f, test.Dataset)
	if err != nil {
		return nil, usageError{err}
	}
	ds, err := experiment.PrepareModelRecords(pm, test.Dataset)
	if err != nil {
		return nil, err
	}
	if ds.D != len(st.Model) {
		hint := ""
		if ds.D < len(st.Model) && test.Format == data.FormatLIBSVM && !test.DimDeclared {
			hint = fmt.Sprintf(" (a LIBSVM file whose last features never occur needs --dim %d)", len(st.Model))
		}
		return nil, fmt.Errorf("report: test file %s has d = %d features, but the model of job %s has %d parameters: it is not the coordinator's test file%s",
			path, ds.D, st.Job, len(st.Model), hint)
	}
	r, err := report.NewROC(st.Model, ds)
	if err != nil {
		return nil, fmt.Errorf("report: test file %s: %w", path, err)
	}
	r.TestFile, r.Scale = path, pm.Scale
	return r, nil
}
