package model

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// CardEvaluation is what a model card reports of an evaluation (the
// fields of `pairfed evaluate --json`). It is a statement about the
// evaluation file's records, computed without privacy.
type CardEvaluation struct {
	Data     string
	N        int
	Positive int
	Negative int
	AUC      *float64
	CI95     []float64
	CIMethod string
	KNN3     *float64
	Note     string
}

// Card is a model card: a description of the artefact for the people who
// decide whether to use it (clinicians, data stewards). Every statement in
// it comes from the artefact (parameters, preprocessing map, certificate,
// provenance) or, clearly marked, from an evaluation file's results; it
// holds no statistic of the training records that the release does not.
type Card struct {
	Title    string
	Summary  string
	Sections []CardSection
}

// CardSection is one section: paragraphs, then a table, then a list.
type CardSection struct {
	ID    string
	Title string
	Paras []string
	Head  []string
	Rows  [][]string
	List  []string
}

// PrivacyPlain returns the plain-language statement of the certificate for
// a data steward: what ε and δ mean for one patient.
func PrivacyPlain(c *Certificate) string {
	if !c.Private {
		return "This model is NOT protected by differential privacy: " + strings.TrimPrefix(c.Why, "NOT private: ") +
			". It may reveal information about individual patients of the training data: treat it, and anything computed from it, with the care due to the data itself."
	}
	eps, delta := c.Epsilon, c.Delta
	who := "whether or not any one patient's record was in the training data (or was replaced by another patient's)"
	if len(c.Sites) > 0 {
		for _, s := range c.Sites {
			eps, delta = max(eps, s.Epsilon), max(delta, s.Delta)
		}
		who = "whether or not any one patient's record was in a site's training data (or was replaced by another patient's); each site's patients are protected separately, so a patient in two sites' data is protected at each"
	}
	d := strconv.FormatFloat(delta, 'g', 3, 64)
	return fmt.Sprintf("This model is protected by record-level differential privacy with ε = %s and δ = %s. In plain words: any conclusion anyone draws from this model — from its parameters, its released preprocessing ranges or the scores it gives — is at most e^ε ≈ %s times more (or less) likely %s, except with probability at most δ = %s. The model can learn what is true of the population; it cannot single out one patient beyond that factor.",
		num(eps), d, strconv.FormatFloat(math.Exp(eps), 'f', 2, 64), who, d)
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// NewCard builds the card of m (read from file name) with an optional
// evaluation ev.
func NewCard(m *Model, name string, ev *CardEvaluation) *Card {
	p := &m.Preprocessing
	c := &m.Certificate
	title := "Model card: " + name
	if p.Schema != nil && p.Schema.Name != "" {
		title += " (" + p.Schema.Name + ")"
	}
	card := &Card{Title: title}

	// What it predicts.
	pos := p.Loader.PositiveClasses
	if pos == "" {
		pos = "(not recorded)"
	}
	others := "every other label is negative"
	if neg := p.Loader.NegativeClasses; neg != nil {
		others = fmt.Sprintf("negative: label value(s) %s (declared at training; pairfed evaluate and score refuse any other label)", strings.Join(neg, ","))
	}
	label := p.Loader.LabelColumn
	if label == "" && p.Schema != nil {
		label = p.Schema.LabelColumn
	}
	if label == "" {
		label = "the file's label column (the last column unless the loader says otherwise)"
	}
	what := CardSection{ID: "predicts", Title: "What it predicts"}
	if m.Task == "auc" {
		card.Summary = fmt.Sprintf("A linear ranking model over %d features: it ranks records by how likely they belong to the positive class (%s).", m.D, pos)
		what.Paras = []string{
			fmt.Sprintf("Task: ranking (AUC maximisation, loss %s). For each record the model gives a score wᵀx' of the prepared record x'; a higher score ranks the record as more likely positive. Positive class: label value(s) %s of %s; %s.", m.Loss, pos, label, others),
			"Score meaning: " + m.ScoreMeaning + ".",
		}
	} else {
		card.Summary = fmt.Sprintf("A learned similarity (Mahalanobis metric) over %d features: records of the same class (positive: %s) are meant to be close.", m.D, pos)
		what.Paras = []string{
			fmt.Sprintf("Task: metric learning (loss %s). The model is a %d×%d matrix W; the distance of two prepared records is (x'−y')ᵀW(x'−y'). Classes: label value(s) %s of %s are positive; %s.", m.Loss, m.D, m.D, pos, label, others),
			"Score meaning: " + m.ScoreMeaning + ".",
		}
	}
	what.Head = []string{"About the model", ""}
	what.Rows = [][]string{
		{"Algorithm", algoLine(&m.Algorithm)},
		{"Release", m.Algorithm.Release},
		{"Created", m.Provenance.Created + " by pairfed " + m.Provenance.Pairfed},
		{"Model file checksum", m.Checksum + " (detects a damaged file, not a deliberate edit: it is no signature; compare the certificate with the training run's output or the ledger)"},
		{"Signature", signatureLine(m.Signature)},
	}
	card.Sections = append(card.Sections, what)

	// Features.
	feat := CardSection{ID: "features", Title: "Features and their public ranges",
		Head: []string{"#", "Feature", "Range or category", "How it is prepared"}}
	feat.Paras = []string{featureIntro(p)}
	for j := 0; j < m.D; j++ {
		name := FeatureNames(m)[j]
		rng, how := featureRange(p, j)
		feat.Rows = append(feat.Rows, []string{strconv.Itoa(j + 1), name, rng, how})
	}
	card.Sections = append(card.Sections, feat)

	// Training data as released.
	train := CardSection{ID: "training", Title: "Training data (as released)"}
	n := fmt.Sprintf("%d training records", c.N)
	if c.Private {
		n += " (the number of records is public under the certificate's neighbouring relation; nothing else about them is released)"
	}
	train.Paras = []string{n + "."}
	if m.Provenance.DataFile != "" {
		train.Paras = append(train.Paras, fmt.Sprintf("Training file: %s (SHA-256 %s).", m.Provenance.DataFile, orNone(m.Provenance.DataSHA256)))
	}
	if len(c.Sites) > 0 {
		train.Head = []string{"Site", "ε", "δ", "Secure noise"}
		for _, s := range c.Sites {
			train.Rows = append(train.Rows, []string{s.Site, num(s.Epsilon), num(s.Delta), yesNo(s.Secure)})
		}
		train.Paras = append(train.Paras, fmt.Sprintf("Federated training over %d sites; the records never left their site. The sizes of the individual sites are not part of the release.", len(c.Sites)))
	}
	card.Sections = append(card.Sections, train)

	// Privacy.
	priv := CardSection{ID: "privacy", Title: "Privacy guarantee", Paras: []string{PrivacyPlain(c)}}
	if c.Private {
		priv.Paras = append(priv.Paras, "Smaller ε means stronger protection: ε = 1 is a factor of at most 2.72, ε = 0.1 at most 1.11. The guarantee covers everything derived from this model alone; it does not cover the evaluation figures below, which were computed without privacy.")
	}
	priv.Head = []string{"Certificate", ""}
	priv.Rows = [][]string{
		{"Private", yesNo(c.Private)},
		{"ε", num(c.Epsilon)},
		{"δ", num(c.Delta)},
		{"Kind", orNone(c.Model)},
		{"Mechanism", orNone(c.Mechanism)},
		{"Accountant", orNone(c.Accountant)},
		{"Calibration", orNone(c.Calibration)},
		{"Neighbouring relation", c.Neighbouring},
		{"Why", c.Why},
	}
	priv.List = append(priv.List, c.Reasons...)
	card.Sections = append(card.Sections, priv)

	// Evaluation.
	eval := CardSection{ID: "evaluation", Title: "Evaluation"}
	switch {
	case ev == nil:
		eval.Paras = []string{"Not evaluated: no evaluation results were given to this card (`pairfed evaluate --json` on a labelled file, then `pairfed card --eval`). The training run's own figures are not part of the model and are not shown."}
	default:
		eval.Paras = []string{fmt.Sprintf("Computed by `pairfed evaluate` on the evaluation file %s (%d records). These figures describe that file's records only: the card cannot check that the file was held out from training (if it overlaps the training data they are optimistic), and they were computed without privacy, so the guarantee above does not cover them.", ev.Data, ev.N)}
		eval.Head = []string{"Measure", "Value"}
		if ev.AUC != nil {
			ci := "not available"
			if len(ev.CI95) == 2 && !math.IsNaN(ev.CI95[0]) {
				ci = fmt.Sprintf("[%.4f, %.4f] (%s)", ev.CI95[0], ev.CI95[1], ev.CIMethod)
			}
			eval.Rows = append(eval.Rows, []string{"AUC", fmt.Sprintf("%.4f", *ev.AUC)}, []string{"95 % confidence interval", ci},
				[]string{"Records", fmt.Sprintf("%d (%d positive, %d negative)", ev.N, ev.Positive, ev.Negative)})
		}
		if ev.KNN3 != nil {
			eval.Rows = append(eval.Rows, []string{"KNN-3 accuracy", fmt.Sprintf("%.4f", *ev.KNN3)}, []string{"Records", strconv.Itoa(ev.N)})
		}
		if ev.Note != "" {
			eval.List = []string{"Note: " + ev.Note}
		}
	}
	card.Sections = append(card.Sections, eval)

	// Limitations.
	lim := CardSection{ID: "limitations", Title: "Limitations"}
	if m.Task == "auc" {
		lim.List = append(lim.List, "The scores rank records; they are NOT probabilities (no calibration is stored). Compare scores of this model only, and choose any threshold on data of the population it will be used on.")
	} else {
		lim.List = append(lim.List, "Distances are relative: they are NOT probabilities, and a decision rule (e.g. the label of the nearest reference records) must be validated on data of the target population.")
	}
	lim.List = append(lim.List, clipLimit(p)...)
	lim.List = append(lim.List,
		"Population: the model reflects the patients of its training data only. Performance on another hospital, period or case mix is unknown until evaluated there.",
		"Missing values: "+imputeLimit(p.Loader),
	)
	if !c.Private {
		lim.List = append(lim.List, "Not private: see the privacy section; do not share this model outside the data's own governance.")
	}
	card.Sections = append(card.Sections, lim)
	// The guarantee second, right after what the model predicts: it is
	// what a data steward reads first.
	for i, sec := range card.Sections {
		if sec.ID == "privacy" && i > 1 {
			copy(card.Sections[2:i+1], card.Sections[1:i])
			card.Sections[1] = sec
		}
	}
	return card
}

func algoLine(a *Algorithm) string {
	s := a.Name
	if a.Federated {
		s += " (federated"
		if a.Local != "" {
			s += ", local " + a.Local
		}
		s += ")"
	}
	return s
}

func featureIntro(p *Preprocessing) string {
	var s string
	switch p.Scale {
	case "bounds":
		s = "Each feature's range comes from a public feature-bounds schema written before the data was seen (or, marked below, was released under differential privacy); it is mapped onto [−1, 1] (one-hot indicators onto [0, 1]) and values outside it are set to its nearest end."
	case "private":
		s = "The feature ranges were released under differential privacy (part of the certified release); each is mapped onto [−1, 1] and values outside it are set to its nearest end."
	case "minmax", "standard":
		s = "The scaling (" + p.Scale + ") was fitted on the training records: its constants are statistics of those records, not public ranges."
	default:
		s = "The features are used unscaled."
	}
	switch {
	case p.Norm == "divide" && p.Radius > 0:
		s += fmt.Sprintf(" Each prepared record is then multiplied by a fixed factor so that its length is at most R = %s.", num(p.Radius))
	case p.Radius > 0:
		s += fmt.Sprintf(" A prepared record longer than R = %s (Euclidean norm) is shrunk to length R.", num(p.Radius))
	}
	return s
}

// featureRange describes feature j's range and preparation.
func featureRange(p *Preprocessing, j int) (rng, how string) {
	dpRange := func(k int) string {
		r := p.Ranges
		src := "released under differential privacy"
		if r.Source == "fitted" {
			src = "fitted on the training records (not private)"
		}
		return fmt.Sprintf("[%s, %s], %s", num(r.Lo[k]), num(r.Hi[k]), src)
	}
	switch p.Scale {
	case "bounds":
		lo, hi := p.Schema.Bounds()
		group, k := schemaFeature(p, j)
		wlo, whi := p.Schema.Within()
		for i, u := range p.Schema.Unknown() {
			if u == j {
				if !math.IsNaN(wlo[i]) {
					return dpRange(i) + fmt.Sprintf(" within the public [%s, %s]", num(wlo[i]), num(whi[i])), "mapped onto [−1, 1], clipped"
				}
				return dpRange(i), "mapped onto [−1, 1], clipped"
			}
		}
		if group != "" {
			return fmt.Sprintf("category %d of %q (indicator 0/1)", k, group), "one-hot: [0, 1]"
		}
		return fmt.Sprintf("[%s, %s]", num(lo[j]), num(hi[j])), "mapped onto [−1, 1], clipped"
	case "private":
		return dpRange(j), "mapped onto [−1, 1], clipped"
	case "minmax", "standard":
		f := p.Fitted
		return "fitted on the training records (not private)", fmt.Sprintf("(x − %s) × %s", num(f.Shift[j]), num(f.Scale[j]))
	}
	return "not bounded", "used as is"
}

// schemaFeature returns the one-hot group of expanded feature j and its
// 1-based position in its entry ("" when not one-hot).
func schemaFeature(p *Preprocessing, j int) (string, int) {
	at := 0
	for _, f := range p.Schema.Features {
		k := max(f.Count, 1)
		if j < at+k {
			return f.OneHot, j - at + 1
		}
		at += k
	}
	return "", 0
}

func clipLimit(p *Preprocessing) []string {
	var out []string
	if p.Scale == "bounds" || p.Scale == "private" {
		out = append(out, "Values outside a feature's range are treated as if at its nearest end: the model cannot tell an extreme value from the range's end.")
	}
	if p.Radius > 0 && p.Norm == "clip" {
		out = append(out, fmt.Sprintf("Records whose prepared length exceeds R = %s are shrunk: for such unusual records every feature's contribution is scaled down together.", num(p.Radius)))
	}
	return out
}

func imputeLimit(l Loader) string {
	switch {
	case l.Impute == "constant" || strings.HasPrefix(l.Impute, "constant:"):
		return "a missing value is replaced by a fixed constant per feature (the schema's, or the range's midpoint), which may not suit every patient."
	case l.Impute == "mean":
		return "missing values were replaced by the column mean of the file being read (a statistic of that file)."
	case l.Impute == "drop":
		return "records with a missing value were dropped, in training and in scoring."
	}
	return "a record with a missing value cannot be scored (pairfed refuses it; an exported ONNX graph gives NaN)."
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orNone(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// mdEscape escapes the characters that would break a markdown table cell.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// Markdown renders the card as markdown.
func (c *Card) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", c.Title, c.Summary)
	for _, s := range c.Sections {
		fmt.Fprintf(&b, "## %s\n\n", s.Title)
		for _, p := range s.Paras {
			fmt.Fprintf(&b, "%s\n\n", p)
		}
		if len(s.Rows) > 0 {
			head := s.Head
			if len(head) == 0 {
				head = make([]string, len(s.Rows[0]))
			}
			fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat(" --- |", len(head)))
			for _, r := range s.Rows {
				cells := make([]string, len(r))
				for i, v := range r {
					cells[i] = mdEscape(v)
				}
				fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
			}
			b.WriteString("\n")
		}
		for _, l := range s.List {
			fmt.Fprintf(&b, "- %s\n", l)
		}
		if len(s.List) > 0 {
			b.WriteString("\n")
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

var cardHTML = template.Must(template.New("card").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1d2330; line-height: 1.5; }
h1 { font-size: 1.6rem; border-bottom: 3px solid #2b6cb0; padding-bottom: .3rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; color: #2b6cb0; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; font-size: .92rem; }
th, td { border: 1px solid #cbd5e0; padding: .3rem .5rem; text-align: left; vertical-align: top; }
th { background: #edf2f7; }
section#privacy p:first-of-type { background: #ebf8ff; border-left: 4px solid #2b6cb0; padding: .6rem .8rem; }
.summary { font-size: 1.05rem; }
code { background: #edf2f7; padding: 0 .2rem; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="summary">{{.Summary}}</p>
{{range .Sections}}<section id="{{.ID}}">
<h2>{{.Title}}</h2>
{{range .Paras}}<p>{{.}}</p>
{{end}}{{if .Rows}}<table>
{{if .Head}}<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{end}}{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{end}}{{if .List}}<ul>
{{range .List}}<li>{{.}}</li>
{{end}}</ul>
{{end}}</section>
{{end}}</body>
</html>
`))

// HTML renders the card as one self-contained HTML page (inline style, no
// script, no external asset).
func (c *Card) HTML() (string, error) {
	var b bytes.Buffer
	if err := cardHTML.Execute(&b, c); err != nil {
		return "", err
	}
	return b.String(), nil
}

// signatureLine is the card's row on the file's signature (s verified by
// Decode; trusted by CheckTrust).
func signatureLine(s *Signature) string {
	switch {
	case s == nil:
		return "none: the file is unsigned, so nothing shows who wrote it; a consistent edit of every field would go unnoticed (pairfed train --sign-key signs a model)"
	case s.trusted:
		return fmt.Sprintf("signed by %s (fingerprint %s), signature valid, by a key the reader trusts (--trust-key). The signature shows who wrote the file and that it was not changed since; it does not prove the privacy certificate true (that rests on the training run and the sites' ledgers)", s.Signer, s.KeyFingerprint)
	}
	return fmt.Sprintf("signed by %s (fingerprint %s), signature valid — trust depends on whether you know this key (check it with pairfed verify --trust-key KEY.pub). The signature shows the file was not changed since that key signed it; it does not prove the privacy certificate true", s.Signer, s.KeyFingerprint)
}
