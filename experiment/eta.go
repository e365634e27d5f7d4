package experiment

import (
	"regexp"
	"strconv"

	"github.com/pairfed/pairfed/pairwise"
)

// The private algorithms state the step size they used in a note that
// begins "η = ": either "η = 0.5 given …" or "η = <formula> = 0.0123 …".
var (
	etaGivenNote   = regexp.MustCompile(`^η = ([0-9][0-9.eE+\-]*)[ ,]`)
	etaFormulaNote = regexp.MustCompile(`^η = [^=]*= ([0-9][0-9.eE+\-]*)`)
)

// usedEta returns the constant step size a private run used, from its
// privacy notes, and false when the algorithm has none (a schedule η_t, as
// in [H20], or a one-shot release) or states none.
func usedEta(p *pairwise.PrivacyReport) (float64, bool) {
	if p == nil {
		return 0, false
	}
	for _, n := range p.Notes {
		m := etaGivenNote.FindStringSubmatch(n)
		if m == nil {
			m = etaFormulaNote.FindStringSubmatch(n)
		}
		if m == nil {
			continue
		}
		if v, err := strconv.ParseFloat(m[1], 64); err == nil && v > 0 {
			return v, true
		}
	}
	return 0, false
}
