package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/simulate"
	"github.com/urfave/cli/v2"
)

// outModelFlag is --out-model of train and simulate.
func outModelFlag(which string) cli.Flag {
	return &cli.StringFlag{Name: "out-model", Usage: "write the model artefact to `FILE` (JSON: parameters, the full preprocessing map, the privacy certificate of its release; pairfed score and evaluate read it), and the run's statistics that the guarantee does not cover to <file>.diagnostics.json: " + which}
}

// trainModelNote is what `train --out-model` writes, in its own words.
const trainModelNote = "the model of the LAST run (the last fold with --folds): the one release its certificate covers; with --test FILE it is fitted on every record of --data, otherwise on that run's training split. The other models the evaluation fitted are discarded, unwritten; for one model and one statement use --runs 1 (and no --folds)"

// diagnosticsPath is <model>.diagnostics.json (a .json suffix of the
// model's name is replaced).
func diagnosticsPath(p string) string {
	return strings.TrimSuffix(p, ".json") + ".diagnostics.json"
}

// pairfedVersion is the module version and VCS revision of this binary.
func pairfedVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			v += " " + s.Value
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			v += " (modified)"
		}
	}
	return v
}

// fileSHA256 is the hex SHA-256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// modelLoader records how the training table was read: the options after
// the schema filled them, the positive classes actually used, and the
// feature count of a LIBSVM file.
func modelLoader(opt data.Options, t *data.Table) model.Loader {
	l := model.Loader{Format: t.Format, Sep: opt.Sep, Header: opt.Header, LabelColumn: opt.LabelColumn,
		IgnoreColumns: opt.IgnoreColumns, PositiveClasses: opt.PositiveClasses, Impute: opt.Impute}
	if l.PositiveClasses == "" {
		// The rule's outcome (numeric 1, the minority class, halves): the
		// labels, not their counts.
		l.PositiveClasses = strings.Join(t.Positive, ",")
	}
	if l.Impute == "" {
		l.Impute = "error"
	}
	if opt.Impute == "constant" && opt.ImputeValues != nil {
		for _, v := range opt.ImputeValues {
			if math.IsNaN(v) {
				l.ImputeValues = append(l.ImputeValues, nil)
			} else {
				l.ImputeValues = append(l.ImputeValues, &v)
			}
		}
	}
	if t.Format == data.FormatLIBSVM {
		l.Dim = t.D
	}
	return l
}

// recordCounts matches the counts of records that the loader's
// data-dependent reasons quote (data.Table.DataDependent): statistics of
// the records, kept out of the model file (the diagnostics have them).
var recordCounts = regexp.MustCompile(` \([0-9]+ (values imputed|dropped)\)`)

// scrubCounts returns the reasons without record counts.
func scrubCounts(reasons []string) []string {
	out := make([]string, len(reasons))
	for i, r := range reasons {
		out[i] = recordCounts.ReplaceAllString(r, "")
	}
	return out
}

// trainCertificate is the certificate of the release fm.
func trainCertificate(fm *experiment.FittedModel, spec experiment.Spec) (model.Certificate, error) {
	c := model.Certificate{Neighbouring: model.Neighbouring, N: fm.NTrain}
	p := fm.Privacy
	if p == nil || p.PrivacyReport == nil {
		c.Why = "not private: " + spec.Algo + " is not a differentially private algorithm"
		c.Reasons = []string{spec.Algo + " adds no privacy noise: the parameters are a function of the training records (and a seeded sampler)"}
		if spec.Scale == "minmax" || spec.Scale == "standard" {
			c.Reasons = append(c.Reasons, "--scale "+spec.Scale+" was fitted on the training records (its constants are in the preprocessing map)")
		}
		return c, nil
	}
	c.Model, c.Mechanism, c.Accountant, c.Calibration = p.Model, p.Mechanism, p.Accountant, p.Calibration
	pre := p.Preprocessing
	c.Epsilon, c.Delta = p.CertifiedEpsilon, p.CertifiedDelta
	if pre != nil {
		c.Epsilon, c.Delta = pre.TotalEpsilon, pre.TotalDelta
		c.Reasons = append(c.Reasons, scrubCounts(pre.Reasons)...)
	}
	if !p.Private {
		c.Reasons = append(c.Reasons, "the noise came from a seeded source (--noise-seed) or was rescaled (--noise-scale): reproducible, NOT private")
	}
	c.Private = fm.Private && len(c.Reasons) == 0
	if c.Private {
		what := "the parameters"
		if pre != nil && pre.Ranges != nil {
			what = "the feature ranges of the preprocessing map and the parameters"
		}
		c.Why = fmt.Sprintf("%s are one %s release of %s (%s noise, calibration %s, secure noise source) on n = %d records, certified (ε, δ) = %s by the exact accountant; every preprocessing step is per record with public or DP-released parameters", what, c.Model, fm.Algorithm, c.Mechanism, c.Calibration, c.N, model.CertifiedPair(c.Epsilon, c.Delta))
	} else {
		if len(c.Reasons) == 0 {
			c.Reasons = []string{"the run was not private end to end"}
		}
		c.Why = "NOT private: " + c.Reasons[0]
	}
	st, err := json.Marshal(p)
	if err != nil {
		return c, err
	}
	c.Statement = recordCounts.ReplaceAll(st, nil)
	return c, nil
}

// writeTrainModel writes the model of fm (the last evaluated fit) and the
// diagnostics of rep.
func writeTrainModel(c *cli.Context, path string, opt data.Options, train *data.Table, spec experiment.Spec, rep *experiment.Report, fm *experiment.FittedModel, total int) error {
	if fm == nil {
		return fmt.Errorf("train: no model was fitted, nothing to write to %s", path)
	}
	pre := *fm.Preprocessing
	pre.Loader = modelLoader(opt, train)
	// Declared, never read from the records (labels.go); checked against
	// them before the run.
	var err error
	if pre.Loader.NegativeClasses, err = parseNegativeClasses(c.String("negative-classes")); err != nil {
		return err
	}
	m := &model.Model{Task: string(spec.Task), Loss: spec.Loss, D: train.D, Features: train.FeatureNames, Preprocessing: pre,
		ScoreMeaning: model.ScoreMeaning}
	if spec.Task == pairwise.TaskMetric {
		m.Metric, m.ScoreMeaning = fm.W, model.MetricScoreMeaning
	} else {
		m.Weights = fm.W
	}
	release := fmt.Sprintf("the model of run %d of %d", fm.Run+1, spec.Runs)
	if spec.Folds > 1 && c.String("test") == "" {
		release += fmt.Sprintf(", fold %d of %d", fm.Fold+1, spec.Folds)
	}
	switch {
	case fm.Full:
		release += fmt.Sprintf(", fitted on all %d records of --data", fm.NTrain)
	case spec.Folds > 1 && c.String("test") == "":
		release += fmt.Sprintf(", fitted on that fold's %d training records", fm.NTrain)
	default:
		release += fmt.Sprintf(", fitted on that run's %d training records", fm.NTrain)
	}
	if total > 1 {
		release += fmt.Sprintf("; the %d other models the evaluation fitted were not written", total-1)
	}
	m.Algorithm = model.Algorithm{Name: fm.Algorithm, Release: release,
		Params: map[string]float64{"param_radius": fm.ParamRadius, "feature_radius": spec.FeatureRadius, "lambda": spec.Lambda,
			"passes": spec.Passes, "steps": float64(spec.Steps)},
		Settings: map[string]string{"constraint": spec.Constraint, "scale": spec.Scale, "bounds_norm": spec.BoundsNorm, "protocol": "validation"}}
	if fm.Eta != 0 {
		m.Algorithm.Params["eta"] = fm.Eta
	}
	if spec.Tune {
		m.Algorithm.Settings["selection"] = "tune"
	}
	if spec.Calibration != "" {
		m.Algorithm.Settings["calibration"] = string(spec.Calibration)
	}
	cert, err := trainCertificate(fm, spec)
	if err != nil {
		return err
	}
	m.Certificate = cert
	m.Provenance = model.Provenance{Pairfed: pairfedVersion(), Created: time.Now().UTC().Format(time.RFC3339), Command: "train",
		DataFile: filepath.Base(c.String("data"))}
	if m.Provenance.DataSHA256, err = fileSHA256(c.String("data")); err != nil {
		return fmt.Errorf("train: --out-model: hashing --data: %w", err)
	}
	if err := writeModelFiles(c, path, m, rep); err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "pairfed: wrote %s: %s (private: %v%s); statistics not covered by its guarantee: %s\n", path, release, cert.Private, signedBy(m), diagnosticsPath(path))
	return nil
}

// writeModelFiles writes m to path, signed with --sign-key if given, and
// the report to the diagnostics file.
func writeModelFiles(c *cli.Context, path string, m *model.Model, report any) error {
	signer, err := signKeyOf(c)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := model.EncodeSigned(&buf, m, signer); err != nil {
		return fmt.Errorf("--out-model %s: %w", path, err)
	}
	rep, err := json.Marshal(report)
	if err != nil {
		return err
	}
	d := model.Diagnostics{Format: model.DiagnosticsFormat, Warning: model.DiagnosticsWarning, Model: filepath.Base(path), Report: rep}
	db, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(path, buf.Bytes()); err != nil {
		return err
	}
	return writeFileAtomic(diagnosticsPath(path), append(db, '\n'))
}

// signedBy is ", signed by NAME (fingerprint F)" for a signed m, else "".
func signedBy(m *model.Model) string {
	if m.Signature == nil {
		return ""
	}
	return fmt.Sprintf("; signed by %s, key fingerprint %s", m.Signature.Signer, m.Signature.KeyFingerprint)
}

// writeFileAtomic writes b to path through a temporary file and a rename.
func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return writeDirError(path, err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name()) // no temporary file left behind
		return err
	}
	return nil
}

// checkModelOutput refuses --out-model of train and simulate (and its
// diagnostics file) when it would overwrite the command's input files, a
// directory or a file of a state directory (checkOutput) — before the run.
func checkModelOutput(c *cli.Context) error {
	p := c.String("out-model")
	if p == "" {
		if c.String("sign-key") != "" {
			return usageError{fmt.Errorf("--sign-key signs the model file: give --out-model FILE too")}
		}
		return nil
	}
	if _, err := signKeyOf(c); err != nil { // a bad key is named before the run, not after it
		return err
	}
	inputs := []namedPath{{"--data", c.String("data")}, {"--test", c.String("test")}, {"--feature-bounds", c.String("feature-bounds")}}
	if err := checkOutput("--out-model", p, inputs...); err != nil {
		return err
	}
	if err := checkOutput("--out-model (its diagnostics file)", diagnosticsPath(p), inputs...); err != nil {
		return err
	}
	// Probe 6 (issue 28): a directory pairfed cannot write into was found
	// after the run, as "open ./.m.json.4008861012: permission denied".
	tmp, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".*")
	if err != nil {
		return usageError{writeDirError(p, err)}
	}
	tmp.Close()
	os.Remove(tmp.Name())
	return nil
}

// writeDirError is the error of a file that cannot be created in the
// directory of path: it names path and the directory, not the temporary
// file through which path is written.
func writeDirError(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot write %s: the directory %s does not exist: create it first (mkdir -p %s)", path, filepath.Dir(path), filepath.Dir(path))
	}
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	return fmt.Errorf("cannot write %s: %v in its directory %s (pairfed writes the file there through a temporary file, then renames it): choose a directory you can write to", path, err, filepath.Dir(path))
}

// readModelFile reads and validates a model file.
func readModelFile(path string) (*model.Model, error) {
	f, err := openInput("--model", path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return model.Decode(f, path)
}

// simulateModelNote is what `simulate --out-model` writes.
const simulateModelNote = "the global model of the LAST run's federated job (the coordinator's final model, which every site received), with the evaluator's map that the reported AUC was computed with and the sites' guarantees; for one model and one statement use --runs 1"

// writeSimulateModel writes the last run's global model of a simulation.
func writeSimulateModel(c *cli.Context, path string, opt data.Options, train *data.Table, spec simulate.Spec, rep *simulate.Report) error {
	fm := rep.Model
	if fm == nil {
		return fmt.Errorf("simulate: no model to write to %s", path)
	}
	var sites []model.SiteGuarantee
	for _, p := range fm.Privacy {
		e, d := p.Epsilon, p.Delta
		if p.CertifiedEpsilon > 0 {
			e, d = p.CertifiedEpsilon, p.CertifiedDelta
		}
		sites = append(sites, model.SiteGuarantee{Site: p.Site, Epsilon: e, Delta: d, Secure: p.Secure})
	}
	var statement any
	if fm.Privacy != nil {
		statement = fm.Privacy
	}
	m, err := coordinator.FederatedModel(fm.Job, fm.W, sites, fm.NTrain, statement, fm.Private, fm.Reasons)
	if err != nil {
		return err
	}
	pre := *fm.Preprocessing
	pre.Loader = modelLoader(opt, train)
	m.Preprocessing, m.Features = pre, train.FeatureNames
	what := "that run's training split"
	if fm.Full {
		what = "every record of --data"
	}
	m.Algorithm.Release = fmt.Sprintf("the global model of run %d of %d (the coordinator's final model of the federated job), trained on %s (%d records over %d sites); scored with the evaluator's map (the test records' preparation in the simulation)", fm.Run+1, spec.Runs, what, fm.NTrain, spec.Sites)
	if fm.Privacy != nil {
		m.Certificate.Accountant = fedalgo.PrivacyNote(&spec.Job)
	}
	m.Algorithm.Settings["partition"] = spec.Partition
	m.Algorithm.Settings["scale"] = spec.Scale
	if m.Certificate.Private {
		m.Certificate.Why += "; every site applied the same public per-record map (" + spec.Scale + ") and clipped to R"
	}
	m.Provenance = model.Provenance{Pairfed: pairfedVersion(), Created: time.Now().UTC().Format(time.RFC3339), Command: "simulate",
		DataFile: filepath.Base(c.String("data"))}
	if m.Provenance.DataSHA256, err = fileSHA256(c.String("data")); err != nil {
		return fmt.Errorf("simulate: --out-model: hashing --data: %w", err)
	}
	if err := writeModelFiles(c, path, m, rep); err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "pairfed: wrote %s: run %d's global model (private: %v%s); statistics not covered by its guarantee: %s\n", path, fm.Run+1, m.Certificate.Private, signedBy(m), diagnosticsPath(path))
	return nil
}
