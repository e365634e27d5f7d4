package main

import (
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/scripts/internal/synth"
)

// Families of generative models beyond the recorded grids' two Gaussian
// classes (-family; "gauss" is the default and draws exactly what the
// recorded commands drew). dp-select's crossover between dp-lda and
// dp-objpert (dpalgo/private_select.go) was measured on Gaussian classes,
// where the Fisher discriminant is the right model; these families have
// labels drawn from a logistic model, the model dp-objpert fits, on
// features that are not Gaussian, so that the Fisher direction is biased
// — the two sides of the crossover's question. Both keep the recorded
// grids' conventions: records in the unit ball, training sets of exactly
// round(π₊n) positives, a test set of 2000 + 2000, the separation cycled
// over 0.75 / 0.85 / 0.95 (here the population AUC of the label model's
// own score wᵀx, calibrated per shape on a sample), and Oracle the test
// AUC of that score.
//
//   - logit: a common centre m (‖m‖ = 0.4) plus RMS spread 0.4, 70 % on
//     k = min(5, d − 1) orthonormal factors whose loadings are centred
//     exponentials (skewed, unit variance), 30 % isotropic Laplace;
//     P(y = +1 | x) = σ(s·wᵀ(x − m) + b), w the unit vector along
//     f₁/2 + u (u ⟂ the factors).
//   - onehot: G = max(1, d/5) categorical attributes of d/G levels each
//     (level shares from a Dirichlet(1/2): some levels rare, as in a9a's
//     census attributes), one-hot coded and divided by √G (‖x‖ = 1);
//     P(y = +1 | x) = σ(s·Σ_g w_{g,level(g)} + b), w standard normal.
//
// s sets the separation (bisection on a 6 000-record sample for the
// target AUC; at most 1024, where a score of few levels cannot reach it),
// b the label model's positive share (π₊, so that drawing a sample of
// given class counts by rejection is cheap). onehot needs d ≥ 10.
type family interface {
	draw(n, nPos int, rng *rand.Rand) *pairwise.Dataset
	oracle() []float64
}

// newFamily draws the cell's model of family name.
func newFamily(name string, d int, target, pos float64, rng *rand.Rand) (family, error) {
	switch name {
	case "gauss", "":
		return newShape(d, target, rng), nil
	case "logit":
		return newLogit(d, target, pos, rng), nil
	case "onehot":
		if d < 10 {
			return nil, fmt.Errorf("regret: the onehot family needs d ≥ 10 (two attributes of five levels at least), got %d", d)
		}
		return newOnehot(d, target, pos, rng), nil
	}
	return nil, fmt.Errorf("regret: unknown family %q (gauss, logit, onehot)", name)
}

// labelModel is what the two logistic families share: a feature sampler,
// the score direction w, its scale s and the intercept b.
type labelModel struct {
	d     int
	w     []float64
	s, b  float64
	x     func(dst []float64, rng *rand.Rand) // one record's features
	score func(x []float64) float64           // wᵀ(x − m) (unscaled)
}

func (l *labelModel) oracle() []float64 { return slices.Clone(l.w) }

// prob is P(y = +1 | x).
func (l *labelModel) prob(x []float64) float64 {
	return 1 / (1 + math.Exp(-(l.s*l.score(x) + l.b)))
}

// calibrate sets b for a marginal positive share pos, then s for a
// population AUC of the score equal to target (bisection on one sample
// of 6 000 records: the score's AUC grows with s).
func (l *labelModel) calibrate(target, pos float64, rng *rand.Rand) {
	const m = 6000
	xs := make([][]float64, m)
	sc := make([]float64, m)
	u := make([]float64, m)
	for i := range xs {
		xs[i] = make([]float64, l.d)
		l.x(xs[i], rng)
		sc[i] = l.score(xs[i])
		u[i] = rng.Float64()
	}
	maxAbs := 0.0
	for _, v := range sc {
		maxAbs = math.Max(maxAbs, math.Abs(v))
	}
	setB := func() {
		// The root lies within ±(s·max|score| + 40): beyond it every
		// probability of the sample is within e⁻⁴⁰ of 0 or 1.
		lim := l.s*maxAbs + 40
		lo, hi := -lim, lim
		for range 64 {
			l.b = (lo + hi) / 2
			p := 0.0
			for i := range sc {
				p += 1 / (1 + math.Exp(-(l.s*sc[i] + l.b)))
			}
			if p/m > pos {
				hi = l.b
			} else {
				lo = l.b
			}
		}
	}
	auc := func() float64 {
		// Labels from the model with the sample's own uniforms (common
		// random numbers across s), AUC of the score.
		var p, n []float64
		for i := range sc {
			if u[i] < 1/(1+math.Exp(-(l.s*sc[i]+l.b))) {
				p = append(p, sc[i])
			} else {
				n = append(n, sc[i])
			}
		}
		return aucOf(p, n)
	}
	lo, hi := 0.0, 1.0
	for {
		l.s = hi
		setB()
		if auc() >= target {
			break
		}
		if hi >= 1024 {
			// The score cannot reach the target (few levels): the most
			// separable labels s = 1024 gives.
			return
		}
		lo, hi = hi, 2*hi
	}
	for range 24 { // s to a relative 2⁻²⁴ of its bracket
		l.s = (lo + hi) / 2
		setB()
		if auc() < target {
			lo = l.s
		} else {
			hi = l.s
		}
	}
	l.s = hi
	setB()
}

// aucOf is the Mann–Whitney AUC of positive scores p against negative
// scores n (ties count ½).
func aucOf(p, n []float64) float64 {
	if len(p) == 0 || len(n) == 0 {
		return 0.5
	}
	ns := slices.Clone(n)
	slices.Sort(ns)
	w := 0.0
	for _, v := range p {
		lo, _ := slices.BinarySearch(ns, v)
		hi := lo
		for hi < len(ns) && ns[hi] == v {
			hi++
		}
		w += float64(lo) + 0.5*float64(hi-lo)
	}
	return w / (float64(len(p)) * float64(len(ns)))
}

// draw returns n records with exactly nPos positives, drawn from the
// model and kept by their label until each class has its count.
func (l *labelModel) draw(n, nPos int, rng *rand.Rand) *pairwise.Dataset {
	d := l.d
	xs, ys := make([]float64, n*d), make([]float64, n)
	needP, needN := nPos, n-nPos
	row := make([]float64, d)
	k := 0
	for tries := 0; needP+needN > 0; tries++ {
		if tries > 1000*n+1_000_000 {
			log.Fatalf("regret: the label model gives too few records of one class (%d positives and %d negatives still wanted after %d draws)", needP, needN, tries)
		}
		l.x(row, rng)
		pos := rng.Float64() < l.prob(row)
		switch {
		case pos && needP > 0:
			needP--
		case !pos && needN > 0:
			needN--
		default:
			continue
		}
		copy(xs[k*d:(k+1)*d], row)
		ys[k] = -1
		if pos {
			ys[k] = 1
		}
		k++
	}
	px, py := synth.Shuffle(xs, ys, d, rng)
	return pairwise.NewDense(px, py, d)
}

func newLogit(d int, target, pos float64, rng *rand.Rand) family {
	k := min(5, d-1)
	vecs := synth.Orthonormal(d, k, rng)
	f, u := vecs[:k], vecs[k]
	m := make([]float64, d)
	for j := range m {
		m[j] = rng.NormFloat64()
	}
	nm := math.Sqrt(dot(m, m))
	for j := range m {
		m[j] *= 0.4 / nm
	}
	const r0 = 0.4
	share := 0.7
	if k == 0 {
		share = 0
	}
	a := 0.0
	if k > 0 {
		a = math.Sqrt(share * r0 * r0 / float64(k))
	}
	tau := math.Sqrt((1 - share) * r0 * r0 / float64(d))
	w := slices.Clone(u)
	if k > 0 {
		axpy(0.5, f[0], w)
	}
	nw := math.Sqrt(dot(w, w))
	for j := range w {
		w[j] /= nw
	}
	l := &labelModel{d: d, w: w}
	l.x = func(dst []float64, rng *rand.Rand) {
		for j := range dst {
			// Laplace of unit variance: scale 1/√2.
			e := rng.ExpFloat64() / math.Sqrt2
			if rng.Uint64()&1 == 0 {
				e = -e
			}
			dst[j] = m[j] + tau*e
		}
		for _, fj := range f {
			axpy(a*(rng.ExpFloat64()-1), fj, dst)
		}
		if nr := math.Sqrt(dot(dst, dst)); nr > 1 {
			for j := range dst {
				dst[j] /= nr
			}
		}
	}
	l.score = func(x []float64) float64 { return dot(w, x) - dot(w, m) }
	l.calibrate(target, pos, rng)
	return l
}

func newOnehot(d int, target, pos float64, rng *rand.Rand) family {
	g := max(1, d/5)
	levels := make([]int, g) // levels per attribute: d split as evenly as it goes
	for i := range d {
		levels[i%g]++
	}
	start := make([]int, g)
	for i := 1; i < g; i++ {
		start[i] = start[i-1] + levels[i-1]
	}
	// Level shares: Dirichlet(1/2) by normalized Gamma(1/2) draws
	// (Gamma(1/2) = Z²/2).
	cum := make([][]float64, g)
	for i := range cum {
		p := make([]float64, levels[i])
		t := 0.0
		for j := range p {
			z := rng.NormFloat64()
			p[j] = z*z/2 + 1e-12
			t += p[j]
		}
		c := 0.0
		cum[i] = make([]float64, levels[i])
		for j := range p {
			c += p[j] / t
			cum[i][j] = c
		}
	}
	w := make([]float64, d)
	for j := range w {
		w[j] = rng.NormFloat64()
	}
	inv := 1 / math.Sqrt(float64(g))
	l := &labelModel{d: d, w: w}
	l.x = func(dst []float64, rng *rand.Rand) {
		clear(dst)
		for i := range g {
			v := rng.Float64()
			j, _ := slices.BinarySearch(cum[i], v)
			j = min(j, levels[i]-1)
			dst[start[i]+j] = inv
		}
	}
	l.score = func(x []float64) float64 { return dot(w, x) }
	l.calibrate(target, pos, rng)
	return l
}
