package model

import (
	"regexp"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/data"
)

// The card says, in markdown and in HTML: the task and positive class,
// every feature with its public range or category, the released number of
// records and nothing else about them, the plain-language guarantee with
// e^ε, the certificate, "not evaluated" without an evaluation, and the
// limitations. The HTML is one page with no external asset or script.
func TestCardContent(t *testing.T) {
	m := sample(t)
	s := &data.Schema{Name: "toy", Features: []data.SchemaFeature{{Name: "a", Lo: lo(0), Hi: lo(10)},
		{Name: "ward", Count: 2, Lo: lo(0), Hi: lo(1), OneHot: "ward"}}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	m.D, m.Weights, m.Features = 3, []float64{1, 2, 3}, nil
	m.Preprocessing.Schema, m.Preprocessing.Norm = s, "divide"
	card := NewCard(m, "m.json", nil)
	md := card.Markdown()
	html, err := card.HTML()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"positive class (1)",
		"| 1 | a | [0, 10] |",
		`| 2 | ward#1 | category 1 of "ward" (indicator 0/1) |`,
		"100 training records",
		"at most e^ε ≈ 2.72 times more (or less) likely whether or not any one patient's record was in the training data",
		"except with probability at most δ = 1e-05",
		"| Mechanism |", "| Neighbouring relation | replace-one",
		"Not evaluated",
		"NOT probabilities",
		"multiplied by a fixed factor so that its length is at most R = 1",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("card.md lacks %q", want)
		}
	}
	for _, want := range []string{"at most e^ε ≈ 2.72 times more (or less) likely", "Not evaluated", "<td>ward#1</td>", "<section id=\"privacy\">"} {
		if !strings.Contains(html, want) {
			t.Errorf("card.html lacks %q", want)
		}
	}
	if i, j := strings.Index(md, "## Privacy guarantee"), strings.Index(md, "## Features"); !(i > 0 && i < j) {
		t.Error("the privacy section is not second, before the features")
	}
	if regexp.MustCompile(`(?i)<script|<link|src=|url\(|https?://`).MatchString(html) {
		t.Errorf("card.html is not self-contained:\n%s", html)
	}

	// With an evaluation: the figures, marked as the evaluation file's.
	auc := 0.8125
	card = NewCard(m, "m.json", &CardEvaluation{Data: "test.csv", N: 168, Positive: 60, Negative: 108, AUC: &auc,
		CI95: []float64{0.75, 0.875}, CIMethod: "DeLong", Note: "not covered"})
	md = card.Markdown()
	for _, want := range []string{"evaluation file test.csv (168 records)", "| AUC | 0.8125 |", "[0.7500, 0.8750] (DeLong)", "168 (60 positive, 108 negative)", "does not cover them"} {
		if !strings.Contains(md, want) {
			t.Errorf("card.md with evaluation lacks %q", want)
		}
	}
	if strings.Contains(md, "Not evaluated") {
		t.Error("card.md says not evaluated")
	}

	// Not private: says so, with the reason, and no e^ε statement.
	m.Certificate = Certificate{Why: "NOT private: lda adds no noise", Reasons: []string{"lda adds no noise"}, Neighbouring: Neighbouring, N: 100}
	md = NewCard(m, "m.json", nil).Markdown()
	if !strings.Contains(md, "NOT protected by differential privacy: lda adds no noise") || strings.Contains(md, "e^ε") {
		t.Errorf("a non-private card:\n%s", md)
	}
}

// Text from the artefact is escaped in the HTML (a feature name with markup).
func TestCardHTMLEscapes(t *testing.T) {
	m := sample(t)
	m.Features = []string{"<b>a</b>", "b"}
	html, err := NewCard(m, "m.json", nil).HTML()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(html, "<b>a</b>") || !strings.Contains(html, "&lt;b&gt;a&lt;/b&gt;") {
		t.Error("a feature name's markup is not escaped")
	}
}
