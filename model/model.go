package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/pairwise"
)

// Format and Version identify the file. A reader refuses any other format
// and any version it does not know; a change that old readers would
// misread gets a new Version.
const (
	Format            = "pairfed-model"
	Version           = 1
	DiagnosticsFormat = "pairfed-model-diagnostics"
)

// MaxBytes bounds what Decode reads (a d×d metric of d = 2048 written as
// JSON text is ≈ 100 MB).
const MaxBytes = 256 << 20

// MaxClasses bounds the declared negative classes of a model.
const MaxClasses = 1024

// maxParams bounds the number of parameters (d for auc, d² for metric).
const maxParams = 1 << 24

// Neighbouring is the relation every certificate is stated for.
const Neighbouring = "replace-one: datasets that differ in one record of one site (the number of records n is public)"

// ScoreMeaning is what Model.Scores returns for task auc: ranking scores.
const ScoreMeaning = "ranking score wᵀx' of the prepared record x' (higher ranks as more likely positive); NOT a probability: no calibration is stored"

// MetricScoreMeaning is what `pairfed score` writes for task metric.
const MetricScoreMeaning = "squared Mahalanobis distance (x'−r')ᵀW(x'−r') to the nearest record r of a reference file prepared the same way, and that record's label; NOT a probability"

// Model is the artefact. Encode fills Format, Version and Checksum.
type Model struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Checksum is "sha256:" and the hex SHA-256 of the compact JSON
	// encoding of the model with Checksum empty. It detects a damaged or
	// edited file; it is not a signature (anyone can recompute it).
	Checksum string `json:"checksum"`
	// Task is "auc" (Weights, d values) or "metric" (Metric, d×d row-major).
	Task string `json:"task"`
	Loss string `json:"loss"`
	D    int    `json:"d"`
	// ScoreMeaning says what a score is (ScoreMeaning, MetricScoreMeaning).
	ScoreMeaning string    `json:"score_meaning"`
	Weights      []float64 `json:"weights,omitempty"`
	Metric       []float64 `json:"metric,omitempty"`
	// Features are the feature names in order (after the label and
	// ignored columns are removed); nil when the training file named none
	// (LIBSVM, dense, CSV without header): then only their number D is
	// checked.
	Features      []string      `json:"features,omitempty"`
	Preprocessing Preprocessing `json:"preprocessing"`
	Algorithm     Algorithm     `json:"algorithm"`
	Certificate   Certificate   `json:"certificate"`
	Provenance    Provenance    `json:"provenance"`
	// Signature is the signer's Ed25519 signature of everything above
	// and of its own fields (sign.go says what exactly is signed); nil:
	// unsigned (every file before signatures, and files written without
	// a key). Not covered by Checksum, which stays what it always was.
	Signature *Signature `json:"signature,omitempty"`
}

// Preprocessing is the whole per-record map from a raw record to the
// prepared record the parameters apply to: load (Loader), scale (Scale
// with Schema, Ranges or Fitted; Norm), clip to ‖x'‖ ≤ Radius.
// experiment.ModelScaler builds the data.Scaler from it with the code
// training used; experiment.PrepareModelRecords applies it.
type Preprocessing struct {
	Loader Loader `json:"loader"`
	// Scale is "bounds" (Schema), "private" (Ranges released under DP),
	// "none", "minmax"/"standard" (Fitted on training records: the model
	// is then not private end to end), or "sites": a federation's
	// coordinator wrote the file and does not know how each site prepared
	// its records (only R); such a model cannot score until the
	// federation's public map is attached (Model.Scorable says so).
	Scale string `json:"scale"`
	// Schema is the feature-bounds schema, verbatim, when one was used.
	Schema *data.Schema `json:"schema,omitempty"`
	// Ranges are the feature ranges that were not public: released under
	// DP (Source "dp": Scale private, or a schema's unknown features of a
	// private run; part of the certified release) or, for a non-private
	// run, a schema's unknown features' min and max on the training
	// records (Source "fitted").
	Ranges *Ranges `json:"ranges,omitempty"`
	// Fitted is the minmax or standard scaler fitted on training records.
	Fitted *Fitted `json:"fitted,omitempty"`
	// Norm is how records meet ‖x'‖ ≤ Radius after a bounds map: "clip"
	// (the ℓ2 clip) or "divide" (multiplied by Radius/M first).
	Norm string `json:"norm"`
	// Radius is R: every prepared record is clipped to ‖x'‖ ≤ R (0: no clip).
	Radius float64 `json:"radius"`
	// Unshifted: sparse records scaled without the shift (scores move by a
	// constant; data.Scaler.ApplyUnshifted).
	Unshifted bool `json:"unshifted,omitempty"`
}

// Loader is how the training file was read (data.Options), resolved: the
// positive classes and columns actually used.
type Loader struct {
	Format          string   `json:"format"`
	Sep             string   `json:"sep,omitempty"`
	Header          string   `json:"header,omitempty"`
	LabelColumn     string   `json:"label_column,omitempty"`
	IgnoreColumns   []string `json:"ignore_columns,omitempty"`
	PositiveClasses string   `json:"positive_classes"`
	// NegativeClasses are the negative labels the training run declared
	// (train --negative-classes): public, like PositiveClasses, never
	// read from the records. With them the model records its whole label
	// set, and readers refuse a label outside it; without them (every
	// file before them, and runs that did not declare them) a reader can
	// only warn, since the set of labels present in the training records
	// is itself a statistic of private data.
	NegativeClasses []string `json:"negative_classes,omitempty"`
	// Impute is the missing-value rule (data.Options.Impute); with
	// "constant" the per-feature ImputeValues (null: none, an error).
	Impute       string     `json:"impute"`
	ImputeValues []*float64 `json:"impute_values,omitempty"`
	// Dim is the declared number of features of a LIBSVM file (0: none).
	Dim int `json:"dim,omitempty"`
}

// Ranges are per-feature ranges [Lo[k], Hi[k]] of Features[k] (0-based;
// nil: every feature in order).
type Ranges struct {
	Source   string    `json:"source"` // "dp" or "fitted"
	Features []int     `json:"features,omitempty"`
	Lo       []float64 `json:"lo"`
	Hi       []float64 `json:"hi"`
}

// Fitted is a data.Scaler of kind minmax or standard.
type Fitted struct {
	Kind  string    `json:"kind"`
	Shift []float64 `json:"shift"`
	Scale []float64 `json:"scale"`
}

// Algorithm is what produced the parameters.
type Algorithm struct {
	Name string `json:"name"`
	// Local is the single-site algorithm of a federated one, if any.
	Local     string `json:"local,omitempty"`
	Federated bool   `json:"federated"`
	// Params are the numeric parameters (eta, param_radius, lambda,
	// steps, passes, phases, sites, …); Settings the others (constraint,
	// calibration, aggregation, …).
	Params   map[string]float64 `json:"params,omitempty"`
	Settings map[string]string  `json:"settings,omitempty"`
	// Release says which fit of the run the parameters are (e.g. "the
	// model of run 1 of 1, fitted on all 614 training records").
	Release string `json:"release"`
}

// Certificate is the privacy statement of exactly the release that
// produced the parameters (and the DP ranges of Preprocessing, if any).
type Certificate struct {
	// Private is true only when the release is (Epsilon, Delta)-DP end to
	// end: a private mechanism, secure noise, per-record preprocessing
	// with public or DP-released parameters.
	Private bool `json:"private"`
	// Why says in one sentence why it is (or is not) private.
	Why string `json:"why"`
	// Reasons list what makes it not private (empty when Private).
	Reasons []string `json:"reasons,omitempty"`
	// Model is the kind of guarantee, e.g. "record-level (ε, δ)-DP".
	Model string `json:"model,omitempty"`
	// Epsilon and Delta are the guarantee of the whole release (ranges
	// plus training); per site for a federated model (Sites).
	Epsilon      float64 `json:"epsilon"`
	Delta        float64 `json:"delta"`
	Accountant   string  `json:"accountant,omitempty"`
	Mechanism    string  `json:"mechanism,omitempty"`
	Calibration  string  `json:"calibration,omitempty"`
	Neighbouring string  `json:"neighbouring"`
	// N is the number of training records of the release (public under
	// the neighbouring relation).
	N int `json:"n"`
	// Sites are the per-site guarantees of a federated model.
	Sites []SiteGuarantee `json:"sites,omitempty"`
	// Statement is the run's full privacy statement as it reported it
	// (σ's, sensitivities, accountants), verbatim.
	Statement json.RawMessage `json:"statement,omitempty"`
}

// SiteGuarantee is one site's record-level guarantee in a federated model.
type SiteGuarantee struct {
	Site    string  `json:"site"`
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	Secure  bool    `json:"secure"`
}

// Provenance is where and when the model was written.
type Provenance struct {
	Pairfed string `json:"pairfed"`
	Created string `json:"created"`
	// DataFile and DataSHA256 name the training file when it is local to
	// the process that wrote the model (empty otherwise, e.g. at a
	// federation's coordinator).
	DataFile   string `json:"data_file,omitempty"`
	DataSHA256 string `json:"data_sha256,omitempty"`
	Command    string `json:"command,omitempty"`
}

// Diagnostics is the side file <model>.diagnostics.json: statistics of
// the records that the certificate does NOT cover (evaluation AUCs, class
// counts, loader notes). Covered is always false.
type Diagnostics struct {
	Format  string          `json:"format"`
	Covered bool            `json:"covered_by_privacy_guarantee"`
	Warning string          `json:"warning"`
	Model   string          `json:"model"`
	Report  json.RawMessage `json:"report"`
}

// DiagnosticsWarning is Diagnostics.Warning.
const DiagnosticsWarning = "computed from the records outside the certified release: NOT covered by the model's privacy guarantee; do not publish with the model"

// Encode validates m, fills Format, Version and Checksum, and writes it as
// indented JSON. A signed m (one decoded from a signed file) keeps its
// signature only when it still verifies; a model changed after it was
// signed is refused: drop its Signature or sign it again (EncodeSigned).
func Encode(w io.Writer, m *Model) error {
	sig := m.Signature
	m.Signature = nil
	err := prepare(m)
	m.Signature = sig
	if err != nil {
		return err
	}
	if err := m.verifySignature(); err != nil {
		return fmt.Errorf("model: the model was changed after it was signed (%v): drop the signature or sign it again", err)
	}
	return encodeRaw(w, m)
}

// prepare validates m and fills Format, Version and Checksum.
func prepare(m *Model) error {
	m.Format, m.Version, m.Checksum = Format, Version, ""
	if err := m.Validate(); err != nil {
		return err
	}
	sum, err := m.sum()
	if err != nil {
		return err
	}
	m.Checksum = sum
	return nil
}

// encodeRaw writes m as indented JSON, unchecked.
func encodeRaw(w io.Writer, m *Model) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// sum is the Checksum of m (ignoring m.Checksum and m.Signature: the
// checksum of a signed file is that of the same file unsigned).
func (m *Model) sum() (string, error) {
	c := *m
	c.Checksum, c.Signature = "", nil
	b, err := json.Marshal(&c)
	if err != nil {
		return "", fmt.Errorf("model: %w", err)
	}
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:]), nil
}

// uniqueKeys refuses a key given twice in any object of the file. Probe 5
// (issue 28): a signed file with a second "signature" block before
// pairfed's verified (encoding/json keeps the last) while a reader that
// keeps the first, or a person, saw another signer; the same holds for a
// key inside an object (a certificate's "epsilon" given twice). pairfed
// never writes a key twice. raw is valid JSON (Decode checked it): one
// pass over its tokens with a stack of the open containers.
func uniqueKeys(raw []byte) error {
	type container struct {
		keys map[string]bool // nil: an array
		path string          // where it is, for the message
		last string          // an object's latest key
	}
	var stack []*container
	inObject := func() bool { return len(stack) > 0 && stack[len(stack)-1].keys != nil }
	dec := json.NewDecoder(bytes.NewReader(raw))
	wantKey := false // the next token is a key of the innermost object, or its '}'
	for {
		t, err := dec.Token()
		if err != nil {
			return nil // io.EOF, or Decode names what is wrong
		}
		if wantKey {
			o := stack[len(stack)-1]
			if t == json.Delim('}') {
				stack = stack[:len(stack)-1]
				wantKey = inObject()
				continue
			}
			k, _ := t.(string)
			if o.keys[k] {
				return fmt.Errorf("the key %q appears twice in %s (pairfed never writes a key twice; a reader that keeps the first would see another model than one that keeps the last): use the file as pairfed wrote it", k, o.path)
			}
			o.keys[k], o.last, wantKey = true, k, false
			continue
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			path := "the top of the file"
			if n := len(stack); n > 0 && stack[n-1].keys != nil {
				path = fmt.Sprintf("%q", stack[n-1].last)
			} else if n > 0 {
				path = "an element of " + stack[n-1].path
			}
			c := &container{path: path}
			if t == json.Delim('{') {
				c.keys = map[string]bool{}
			}
			stack = append(stack, c)
			wantKey = c.keys != nil
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			wantKey = inObject()
		default: // a scalar value
			wantKey = inObject()
		}
	}
}

// Decode reads one model strictly: at most MaxBytes, one JSON value, no
// unknown field, the right format and version, a matching checksum, and
// every field valid (Validate), and a signature, if any, valid for the
// public key it embeds (whether that key is trusted is CheckTrust's
// question). name is used in messages.
func Decode(r io.Reader, name string) (*Model, error) {
	raw, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("model: %s: %w", name, err)
	}
	if len(raw) > MaxBytes {
		return nil, fmt.Errorf("model: %s is larger than %d MiB: not a pairfed model file", name, MaxBytes>>20)
	}
	// The format first, so that another JSON file gets a plain answer.
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("model: %s: %s", name, jsonProblem(raw, err))
	}
	if head.Format != Format {
		return nil, fmt.Errorf("model: %s: format %q is not %q: not a pairfed model file (write one with `pairfed train --out-model`)", name, head.Format, Format)
	}
	if head.Version != Version {
		return nil, fmt.Errorf("model: %s: version %d is not supported by this pairfed (it reads version %d)", name, head.Version, Version)
	}
	if err := uniqueKeys(raw); err != nil {
		return nil, fmt.Errorf("model: %s: %w", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var m Model
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("model: %s: %s", name, jsonProblem(raw, err))
	}
	if dec.More() {
		return nil, fmt.Errorf("model: %s: more than one JSON value in the file", name)
	}
	if m.Preprocessing.Schema != nil {
		m.Preprocessing.Schema.File = name + " (stored schema)"
	}
	// The checksum first: a damaged file is named as such, whatever
	// field the damage hit.
	sum, err := m.sum()
	if err != nil {
		return nil, err
	}
	if sum != m.Checksum {
		return nil, fmt.Errorf("model: %s: checksum mismatch (stored %q, content %q): the file was changed or damaged after it was written; use the file pairfed wrote", name, m.Checksum, sum)
	}
	// Then the signature: a signed file edited consistently (checksum
	// recomputed, certificate coherent) is named as tampered.
	if err := m.verifySignature(); err != nil {
		return nil, fmt.Errorf("model: %s: %w", name, err)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("model: %s: %w", name, err)
	}
	return &m, nil
}

// jsonProblem describes a decoding error (truncated files get their own words).
func jsonProblem(raw []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || err.Error() == "unexpected end of JSON input":
		return fmt.Sprintf("the file ends early (%d bytes): truncated? (rewrite or re-download it)", len(raw))
	case errors.As(err, &se):
		line := 1 + bytes.Count(raw[:min(int(se.Offset), len(raw))], []byte{'\n'})
		return fmt.Sprintf("line %d: invalid JSON: %v", line, err)
	case errors.As(err, &te):
		return fmt.Sprintf("field %q: %v is not a %v", te.Field, te.Value, te.Type)
	}
	return err.Error()
}

// Validate checks the model; errors name the field.
func (m *Model) Validate() error {
	switch m.Task {
	case "auc":
		if len(m.Metric) != 0 || len(m.Weights) != m.D {
			return fmt.Errorf("task auc needs %d weights and no metric, has %d weights and %d metric entries", m.D, len(m.Weights), len(m.Metric))
		}
	case "metric":
		if len(m.Weights) != 0 || m.D > 4096 || len(m.Metric) != m.D*m.D {
			return fmt.Errorf("task metric needs a %d×%d metric (%d entries) and no weights, has %d metric entries and %d weights", m.D, m.D, m.D*m.D, len(m.Metric), len(m.Weights))
		}
	default:
		return fmt.Errorf("task %q is not auc or metric", m.Task)
	}
	if m.D < 1 || m.D > maxParams {
		return fmt.Errorf("d = %d outside [1, %d]", m.D, maxParams)
	}
	if m.Loss == "" {
		return fmt.Errorf("loss is empty")
	}
	if err := finite("weights", m.Weights); err != nil {
		return err
	}
	if err := finite("metric", m.Metric); err != nil {
		return err
	}
	if m.Features != nil && len(m.Features) != m.D {
		return fmt.Errorf("%d feature names for d = %d", len(m.Features), m.D)
	}
	if err := m.Preprocessing.validate(m.D); err != nil {
		return fmt.Errorf("preprocessing: %w", err)
	}
	if m.Algorithm.Name == "" {
		return fmt.Errorf("algorithm: name is empty")
	}
	for k, v := range m.Algorithm.Params {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("algorithm: params: %s = %v is not finite", k, v)
		}
	}
	return m.Certificate.validate()
}

func (p *Preprocessing) validate(d int) error {
	if !(p.Radius >= 0) || math.IsInf(p.Radius, 0) {
		return fmt.Errorf("radius %v must be finite and ≥ 0", p.Radius)
	}
	switch p.Norm {
	case "clip":
	case "divide":
		if !(p.Radius > 0) {
			return fmt.Errorf("norm divide needs radius > 0")
		}
	default:
		return fmt.Errorf("norm %q is not clip or divide", p.Norm)
	}
	if p.Loader.Format == "" && p.Scale != "sites" {
		return fmt.Errorf("loader: format is empty")
	}
	if p.Loader.ImputeValues != nil && len(p.Loader.ImputeValues) != d {
		return fmt.Errorf("loader: %d impute values for %d features", len(p.Loader.ImputeValues), d)
	}
	if len(p.Loader.NegativeClasses) > MaxClasses {
		return fmt.Errorf("loader: %d negative classes, more than %d", len(p.Loader.NegativeClasses), MaxClasses)
	}
	for _, c := range p.Loader.NegativeClasses {
		if c == "" || len(c) > 256 || strings.ContainsFunc(c, func(r rune) bool { return r < ' ' || r == ',' }) {
			return fmt.Errorf("loader: negative class %q is empty, longer than 256 bytes, or holds a comma or control character", c)
		}
	}
	for j, v := range p.Loader.ImputeValues {
		if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0)) {
			return fmt.Errorf("loader: impute value of feature %d is not finite", j+1)
		}
	}
	if p.Schema != nil {
		if err := p.Schema.Validate(); err != nil {
			return err
		}
		if p.Schema.D() != d {
			return fmt.Errorf("the schema has %d features, the model %d", p.Schema.D(), d)
		}
	}
	if r := p.Ranges; r != nil {
		if r.Source != "dp" && r.Source != "fitted" {
			return fmt.Errorf("ranges: source %q is not dp or fitted", r.Source)
		}
		want := d
		if r.Features != nil {
			want = len(r.Features)
			for _, j := range r.Features {
				if j < 0 || j >= d {
					return fmt.Errorf("ranges: feature index %d outside [0, %d)", j, d)
				}
			}
		}
		if len(r.Lo) != want || len(r.Hi) != want {
			return fmt.Errorf("ranges: %d lo and %d hi for %d features", len(r.Lo), len(r.Hi), want)
		}
		for k := range r.Lo {
			if h := r.Hi[k]/2 - r.Lo[k]/2; math.IsNaN(r.Lo[k]) || math.IsInf(r.Lo[k], 0) || math.IsInf(r.Hi[k], 0) || !(h > 0) || math.IsInf(1/h, 0) {
				return fmt.Errorf("ranges: range %d [%v, %v] is not a finite interval lo < hi", k+1, r.Lo[k], r.Hi[k])
			}
		}
	}
	if f := p.Fitted; f != nil {
		if (f.Kind != "minmax" && f.Kind != "standard") || len(f.Shift) != d || len(f.Scale) != d {
			return fmt.Errorf("fitted: kind %q with %d shifts and %d scales (want minmax or standard, %d each)", f.Kind, len(f.Shift), len(f.Scale), d)
		}
		if err := finite("fitted shift", f.Shift); err != nil {
			return err
		}
		if err := finite("fitted scale", f.Scale); err != nil {
			return err
		}
	}
	switch p.Scale {
	case "bounds":
		if p.Schema == nil || p.Fitted != nil {
			return fmt.Errorf("scale bounds needs the schema (and no fitted scaler)")
		}
		u := p.Schema.Unknown()
		if len(u) > 0 && (p.Ranges == nil || len(p.Ranges.Lo) != len(u)) {
			return fmt.Errorf("the schema has %d unknown features but the model stores no ranges for them", len(u))
		}
		if len(u) == 0 && p.Ranges != nil {
			return fmt.Errorf("ranges stored for a schema without unknown features")
		}
		if p.Ranges != nil && !equalInts(p.Ranges.Features, u) {
			return fmt.Errorf("ranges: features %v are not the schema's unknown features %v", p.Ranges.Features, u)
		}
		if p.Ranges != nil && len(p.Ranges.Hi) == len(u) {
			wlo, whi := p.Schema.Within()
			for k := range u {
				if !math.IsNaN(wlo[k]) && !(p.Ranges.Lo[k] >= wlo[k] && p.Ranges.Hi[k] <= whi[k]) {
					return fmt.Errorf("ranges: feature %d's range [%v, %v] is outside the schema's public range [%v, %v] (\"within\")", u[k]+1, p.Ranges.Lo[k], p.Ranges.Hi[k], wlo[k], whi[k])
				}
			}
		}
	case "private":
		if p.Ranges == nil || p.Ranges.Source != "dp" || p.Ranges.Features != nil || p.Schema != nil || p.Fitted != nil {
			return fmt.Errorf("scale private needs DP ranges over every feature (and no schema or fitted scaler)")
		}
	case "none":
		if p.Ranges != nil || p.Schema != nil || p.Fitted != nil {
			return fmt.Errorf("scale none takes no ranges, schema or fitted scaler")
		}
	case "sites":
		if p.Ranges != nil || p.Fitted != nil || p.Loader.Format != "" {
			return fmt.Errorf("scale sites (each site's own preparation, unknown to the writer) takes no loader, ranges or fitted scaler")
		}
	case "minmax", "standard":
		if p.Fitted == nil || p.Fitted.Kind != p.Scale || p.Ranges != nil || p.Schema != nil {
			return fmt.Errorf("scale %s needs its fitted scaler (and no ranges or schema)", p.Scale)
		}
	default:
		return fmt.Errorf("scale %q is not bounds, private, none, minmax or standard", p.Scale)
	}
	if p.Norm == "divide" && p.Scale != "bounds" && p.Scale != "private" {
		return fmt.Errorf("norm divide applies to scale bounds or private, not %s", p.Scale)
	}
	if p.Unshifted && p.Scale != "minmax" && p.Scale != "standard" {
		return fmt.Errorf("unshifted applies to scale minmax or standard")
	}
	return nil
}

func (c *Certificate) validate() error {
	if c.Why == "" {
		return fmt.Errorf("certificate: why is empty")
	}
	if c.Neighbouring == "" {
		return fmt.Errorf("certificate: neighbouring is empty")
	}
	if c.N < 0 {
		return fmt.Errorf("certificate: n = %d < 0", c.N)
	}
	if c.Private {
		if len(c.Reasons) > 0 {
			return fmt.Errorf("certificate: private but with reasons against it (%s)", strings.Join(c.Reasons, "; "))
		}
		if !(c.Epsilon > 0) || math.IsInf(c.Epsilon, 0) || !(c.Delta >= 0 && c.Delta < 1) {
			return fmt.Errorf("certificate: private needs a finite ε > 0 and δ in [0, 1), has (%v, %v)", c.Epsilon, c.Delta)
		}
		for _, s := range c.Sites {
			if !s.Secure {
				return fmt.Errorf("certificate: private but site %s drew insecure noise", s.Site)
			}
		}
		if err := c.consistent(); err != nil {
			return err
		}
	} else if len(c.Reasons) == 0 {
		return fmt.Errorf("certificate: not private but no reason given")
	}
	for _, s := range c.Sites {
		if math.IsNaN(s.Epsilon) || s.Epsilon < 0 || math.IsInf(s.Epsilon, 0) || !(s.Delta >= 0 && s.Delta < 1) {
			return fmt.Errorf("certificate: site %s: (ε, δ) = (%v, %v) invalid", s.Site, s.Epsilon, s.Delta)
		}
	}
	return nil
}

// CertifiedPair is how a private certificate's statement Why writes its
// certified (ε, δ): every writer builds Why with it, and consistent looks
// for it there.
func CertifiedPair(eps, delta float64) string {
	return fmt.Sprintf("(%.6g, %.3g)", eps, delta)
}

// consistent checks that a private certificate's (ε, δ) is the one its
// other fields state: the sentence Why (every writer prints the certified
// pair in it with CertifiedPair) and, for a federated model, the largest of
// the sites' guarantees. A file whose ε or δ alone was edited — to claim
// a stronger guarantee than was certified — is refused even when its
// checksum was recomputed. (The checksum is no signature: an edit of
// every field stays undetected in an unsigned file — the card says so; a
// signed file's signature catches it, sign.go.)
func (c *Certificate) consistent() error {
	pair := CertifiedPair(c.Epsilon, c.Delta)
	if !strings.Contains(c.Why, pair) {
		return fmt.Errorf("certificate: (ε, δ) = %s is not the pair its statement \"why\" certifies (%s): the certificate was edited; use the file pairfed wrote", pair, c.Why)
	}
	if len(c.Sites) > 0 {
		var e, d float64
		for _, s := range c.Sites {
			e, d = max(e, s.Epsilon), max(d, s.Delta)
		}
		if e != c.Epsilon || d != c.Delta {
			return fmt.Errorf("certificate: (ε, δ) = %s is not the largest of its sites' guarantees (%.6g, %.3g): the certificate was edited; use the file pairfed wrote", pair, e, d)
		}
	}
	return nil
}

func finite(what string, v []float64) error {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s[%d] = %v is not finite", what, i, x)
		}
	}
	return nil
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Scorable returns nil when the stored map can prepare raw records, or an
// error saying what is missing (a coordinator's artefact).
func (m *Model) Scorable() error {
	if m.Preprocessing.Scale == "sites" {
		return fmt.Errorf("model: the preprocessing map of this model was not recorded (it was written by a federation's coordinator, which does not see how each site prepared its records): attach the federation's public map with `pairfed job model ID --feature-bounds SCHEMA` (and the loader flags the sites used)")
	}
	return nil
}

// Scores returns the ranking scores wᵀx' of the prepared records ds in
// dst (allocated when short): pairwise.ScoresTo, the function training's
// evaluation (pairwise.LinearAUC) scores with, so the scores are bit for
// bit the evaluated ones. Task auc only; panics otherwise or on a
// dimension mismatch (programmer errors: check with CheckDim).
func (m *Model) Scores(dst []float64, ds *pairwise.Dataset) []float64 {
	if m.Task != "auc" || ds.D != m.D {
		panic(fmt.Sprintf("model: Scores: task %s, d %d for a model of d %d", m.Task, ds.D, m.D))
	}
	if len(dst) < ds.N {
		dst = make([]float64, ds.N)
	}
	return pairwise.ScoresTo(dst[:ds.N], m.Weights, ds)
}

// SqDistance returns (x − y)ᵀ W (x − y) for a metric model, W symmetrized
// (its antisymmetric part contributes 0 in exact arithmetic).
func (m *Model) SqDistance(x, y, scratch []float64) float64 {
	d := m.D
	diff := scratch[:d]
	for j := range diff {
		diff[j] = x[j] - y[j]
	}
	var s float64
	for a := 0; a < d; a++ {
		row := m.Metric[a*d : (a+1)*d]
		var t float64
		for b, v := range row {
			t += v * diff[b]
		}
		s += diff[a] * t
	}
	return s
}
