// Command fedpairrule validates the default rule of fed-dp-pair-sgd's AUC
// form (rounds T and step η; fedalgo/fedpairsgd_sum.go states the rule and
// its derivation) on synthetic shapes no default was chosen on: for every
// cell (n, d, positive share, ε) and two settings — pooled (1 site) and 4
// single-class sites under secure aggregation — it runs the rule's (T, η)
// and the grid T ∈ {2, 4, 8, 16} × η ∈ {2, 8, 32} (S = B = 8) on the same
// draws, and reports the rule's regret: its mean test AUC minus the best
// grid point's (in hindsight), with the paired standard error; and the
// same for the previous defaults (T = ⌊√(nε)/10⌋ in [2, 16], η = 8).
//
// The generative model is scripts/regret's (copied below: two Gaussian
// classes around a centre at 0.4 from the origin, low-rank spread of RMS
// radius 0.4, unequal covariances, clipped to the unit ball R = 1, the
// population Fisher AUC 0.75, 0.85 or 0.95 cycled over the cells); test
// sets of 2000 + 2000 fresh records. δ = 1/(10n).
//
// The job is run in process with the pairwise functions the sites and the
// coordinator run (PairSumStatsVector, PairSumRoundVector,
// NewPairSumSolver, Step, Output): every release is a sum over records,
// so the federated sum of any partition is the pooled vector (tested in
// fedalgo), and the two settings differ only in the noise added to it:
//
//   - pooled: the plain path's calibration (pairSumPlan: phase 1 σ₁, T
//     rounds σ_r, σ₁ = σ_r/√T), one site's noise;
//   - 4 single-class sites, secure aggregation with the default threshold
//     t = 3: 2T equal releases (T statistics rounds averaged, T gradient
//     rounds; the job now makes the same split in 1 + T weighted rounds,
//     fedalgo.SumWeighted, with the same noise for continuous Gaussians)
//     calibrated as continuous Gaussians, each sum's noise
//     inflated by √(K/t) (the K shares each calibrated for t) — the DDG's
//     rounding and snapping are left out (they change σ by well under 1 %
//     at these sizes). Since the sites' removable noise copies
//     (dp/ddg_removable.go) that is the sum's noise when a site drops;
//     when none does it is one central release's (this script measures
//     the dropout case).
//
// Seeded noise (utility only; seeded runs are not private).
//
//	GOMAXPROCS=1 nice -n 10 go run ./scripts/fedpairrule -out docs/results/fedpair-rule.md
//
// -plain measures 4 sites without secure aggregation instead (the sum of
// 4 site noises); -thetas adds the rule at other tolerances θ₀ (and the
// same learning time τ cut into 16 rounds, "θ…/16"); -raw writes every
// configuration's per-run AUCs (docs/results/fedpair-rule.md lists the
// runs committed).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/dpalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/scripts/internal/synth"
)

const scaleS = 8.0 // S = B

type config struct {
	name string
	T    int
	eta  float64
}

type setting struct {
	name   string
	secure bool
	K, t   int
}

var settings = []setting{{"pooled", false, 1, 1}, {"4 single-class, secagg", true, 4, 3}}

// plainSetting is -plain's: 4 sites without secure aggregation (the sum
// of 4 site noises, √K = 2 times one release's).
var plainSetting = setting{"4 sites, plain", false, 4, 1}

func main() {
	ns := flag.String("n", "200,1000,5000,50000", "training sizes")
	ds := flag.String("d", "2,20,300", "dimensions")
	poss := flag.String("pos", "0.05,0.5", "positive shares")
	epss := flag.String("eps", "0.25,1,4", "ε values")
	runs := flag.Int("runs", 10, "runs per cell")
	bigRuns := flag.Int("big-runs", 3, "runs per cell with n·d above -big")
	big := flag.Float64("big", 2e6, "n·d above which -big-runs apply")
	out := flag.String("out", "", "markdown output (default stdout)")
	plain := flag.Bool("plain", false, "measure 4 plain sites (no secure aggregation) instead of the two default settings")
	raw := flag.String("raw", "", "write the per-run AUCs of every configuration as JSON")
	th := flag.String("thetas", "", "extra tolerances θ₀ to measure beside the rule's (comma-separated)")
	flag.Parse()
	if *plain {
		settings = []setting{plainSetting}
	}
	if *th != "" {
		thetas = floats(*th)
	}
	w := io.Writer(os.Stdout)
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		w = f
	}
	var grid []config
	for _, T := range []int{2, 4, 8, 16} {
		for _, eta := range []float64{2, 8, 32} {
			grid = append(grid, config{fmt.Sprintf("T%d η%g", T, eta), T, eta})
		}
	}
	start := time.Now()
	var rows []row
	cell := 0
	for _, n := range ints(*ns) {
		for _, d := range ints(*ds) {
			for _, pos := range floats(*poss) {
				target := []float64{0.75, 0.85, 0.95}[cell%3]
				cell++
				r := *runs
				if float64(n*d) > *big {
					r = *bigRuns
				}
				rows = append(rows, runCell(n, d, pos, target, floats(*epss), grid, r, uint64(cell))...)
				log.Printf("n %d d %d pos %g done (%s)", n, d, pos, time.Since(start).Round(time.Second))
			}
		}
	}
	report(w, rows, strings.Join(os.Args[1:], " "))
	if *raw != "" {
		var js []map[string]any
		for _, r := range rows {
			m := map[string]any{"n": r.n, "d": r.d, "pos": r.pos, "eps": r.eps, "set": r.set, "auc": r.auc, "rule": []any{r.ruleCfg.T, r.ruleCfg.eta}}
			js = append(js, m)
		}
		b, _ := json.Marshal(js)
		if err := os.WriteFile(*raw, b, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

type row struct {
	n, d     int
	pos, eps float64
	target   float64
	set      string
	runs     int
	ruleCfg  config
	prevCfg  config
	thetaCfg []config
	auc      map[string][]float64 // config name → per-run AUC
}

// thetas are the rule's angle tolerances θ₀ measured (-thetas); the
// report's "rule" is dpalgo.PairSumTheta's.
var thetas []float64

// ruleConfig is the rule (dpalgo.PairSumDefaults) at tolerance theta,
// from the public numbers: n, d, the round noise at T = 1 that the
// calibration gives, and the setting's noise factor ς.
func ruleConfig(n, d int, eps, delta float64, st setting, theta float64) config {
	_, s1, err := sigmas(1, d, eps, delta, setting{secure: st.secure, K: 1, t: 1})
	if err != nil {
		log.Fatal(err)
	}
	T, eta := dpalgo.PairSumDefaults(n, d, s1, noiseFactor(st), scaleS, theta, 0)
	return config{"rule", T, eta}
}

// noiseFactor is ς: the round sum's noise over one central release's.
func noiseFactor(st setting) float64 {
	if st.secure {
		return math.Sqrt(float64(st.K) / float64(st.t))
	}
	return math.Sqrt(float64(st.K))
}

func prevConfig(n int, eps float64) config {
	T := min(16, max(2, int(math.Sqrt(float64(n)*eps)/10)))
	return config{fmt.Sprintf("prev T%d η8", T), T, 8}
}

func runCell(n, d int, pos, target float64, epss []float64, grid []config, runs int, seed uint64) []row {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	sh := newShape(d, target, rng)
	nPos := max(2, int(math.Round(pos*float64(n))))
	var out []row
	for _, eps := range epss {
		for _, st := range settings {
			delta := 1 / (10 * float64(n))
			rw := row{n: n, d: d, pos: pos, eps: eps, target: target, set: st.name, runs: runs, auc: map[string][]float64{}}
			rw.ruleCfg = ruleConfig(n, d, eps, delta, st, dpalgo.PairSumTheta)
			rw.prevCfg = prevConfig(n, eps)
			rw.prevCfg.name = "prev"
			for _, th := range thetas {
				c := ruleConfig(n, d, eps, delta, st, th)
				c.name = fmt.Sprintf("θ%g", th)
				rw.thetaCfg = append(rw.thetaCfg, c)
				// the same τ = ηT/S in 16 rounds (η up to 4S)
				tau := c.eta * float64(c.T) / scaleS
				rw.thetaCfg = append(rw.thetaCfg, config{fmt.Sprintf("θ%g/16", th), 16, scaleS * math.Min(4, tau/16)})
			}
			out = append(out, rw)
		}
	}
	for r := 0; r < runs; r++ {
		drng := rand.New(rand.NewPCG(seed, uint64(r)+1))
		train := sh.draw(n, nPos, drng)
		test := sh.draw(4000, 2000, drng)
		for i := range out {
			rw := &out[i]
			st := settings[i%len(settings)]
			delta := 1 / (10 * float64(n))
			cfgs := append(append(append([]config(nil), grid...), rw.ruleCfg, rw.prevCfg), rw.thetaCfg...)
			for ci, c := range cfgs {
				nrng := rand.New(rand.NewPCG(seed*1000+uint64(i), uint64(r*100+ci)))
				w, err := job(train, c, rw.eps, delta, st, nrng)
				if err != nil {
					log.Fatal(err)
				}
				rw.auc[c.name] = append(rw.auc[c.name], pairwise.LinearAUC(w, test))
			}
		}
	}
	return out
}

// sigmas returns the noise of the statistics' sum and of a round's sum
// (the coordinator's view) for T rounds.
func sigmas(T, d int, eps, delta float64, st setting) (float64, float64, error) {
	dim := dpalgo.PairSumDim(d)
	if !st.secure {
		k := 1 + T
		sens, split := make([]float64, k), make([]float64, k)
		for i := range sens {
			sens[i], split[i] = dpalgo.PairSumSensitivity, 1
		}
		split[0] = 1 / math.Sqrt(float64(T))
		sig, _, err := dp.CalibrateGaussian(dp.GaussianPlan{Sensitivities: sens, Split: split, Dim: dim, Coordinates: int64(k * dim)}, eps, delta)
		if err != nil {
			return 0, 0, err
		}
		f := math.Sqrt(float64(st.K)) // plain: K independent site noises
		return f * sig[0], f * sig[1], nil
	}
	k := 2 * T
	sens := make([]float64, k)
	for i := range sens {
		sens[i] = dpalgo.PairSumSensitivity
	}
	sig, _, err := dp.CalibrateGaussian(dp.GaussianPlan{Sensitivities: sens, Dim: dim, Coordinates: int64(k * dim)}, eps, delta)
	if err != nil {
		return 0, 0, err
	}
	f := math.Sqrt(float64(st.K) / float64(st.t))
	return f * sig[0] / math.Sqrt(float64(T)), f * sig[1], nil
}

func job(train *pairwise.Dataset, c config, eps, delta float64, st setting, rng *rand.Rand) ([]float64, error) {
	d := train.D
	s1, sr, err := sigmas(c.T, d, eps, delta, st)
	if err != nil {
		return nil, err
	}
	v := dpalgo.PairSumStatsVector(train, 1)
	addNoise(v, s1, rng)
	sol, err := dpalgo.NewPairSumSolver(v, d, float64(train.N), 1, scaleS, c.eta, c.T)
	if err != nil {
		return nil, err
	}
	for sol.Done < sol.Rounds {
		u, err := dpalgo.PairSumRoundVector(train, sol.Query(), scaleS, 1)
		if err != nil {
			return nil, err
		}
		addNoise(u, sr, rng)
		if err := sol.Step(u); err != nil {
			return nil, err
		}
	}
	return sol.Output(scaleS), nil
}

func addNoise(v []float64, s float64, rng *rand.Rand) {
	for i := range v {
		v[i] += s * rng.NormFloat64()
	}
}

func report(w io.Writer, rows []row, args string) {
	fmt.Fprintf(w, "# fed-dp-pair-sgd (auc): the default rule's regret on synthetic shapes (generated by scripts/fedpairrule)\n\n")
	fmt.Fprintf(w, "Arguments: `%s`. Regret = mean test AUC of the rule's (T, η) − that of the best of the grid T ∈ {2, 4, 8, 16} × η ∈ {2, 8, 32} in hindsight (paired over runs, ± s.e.); `prev` is the previous default (T = ⌊√(nε)/10⌋ in [2, 16], η = 8). S = B = 8 throughout.\n\n", args)
	type agg struct {
		rule, prev []float64
	}
	sum := map[string]*agg{}
	var b strings.Builder
	fmt.Fprintf(&b, "| n | d | pos | ε | Fisher AUC | setting | runs | best grid (AUC) | rule (T, η) | rule AUC | rule regret | prev (T, η) | prev regret |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		best, bm := "", -1.0
		names := make([]string, 0, len(r.auc))
		for k := range r.auc {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if k == "rule" || k == "prev" || strings.HasPrefix(k, "θ") {
				continue
			}
			if m := mean(r.auc[k]); m > bm {
				best, bm = k, m
			}
		}
		rm, _ := meanSE(r.auc["rule"])
		rg, rse := diff(r.auc["rule"], r.auc[best])
		pg, pse := diff(r.auc["prev"], r.auc[best])
		fmt.Fprintf(&b, "| %d | %d | %.2f | %g | %.2f | %s | %d | %s (%.3f) | T%d η%.3g | %.3f | %+.3f ± %.3f | T%d η%g | %+.3f ± %.3f |\n",
			r.n, r.d, r.pos, r.eps, r.target, r.set, r.runs, best, bm, r.ruleCfg.T, r.ruleCfg.eta, rm, rg, rse, r.prevCfg.T, r.prevCfg.eta, pg, pse)
		for _, key := range []string{r.set, "all"} {
			if sum[key] == nil {
				sum[key] = &agg{}
			}
			sum[key].rule = append(sum[key].rule, rg)
			sum[key].prev = append(sum[key].prev, pg)
		}
	}
	fmt.Fprintf(w, "## Summary (regret per cell: mean, worst, share of cells within 0.01)\n\n| cells | n cells | rule mean | rule worst | rule ≥ −0.01 | prev mean | prev worst | prev ≥ −0.01 |\n|---|---|---|---|---|---|---|---|\n")
	keys := []string{"all"}
	for _, st := range settings {
		keys = append(keys, st.name)
	}
	for _, key := range keys {
		a := sum[key]
		if a == nil {
			continue
		}
		fmt.Fprintf(w, "| %s | %d | %+.4f | %+.3f | %d %% | %+.4f | %+.3f | %d %% |\n", key, len(a.rule), mean(a.rule), minf(a.rule), within(a.rule), mean(a.prev), minf(a.prev), within(a.prev))
	}
	fmt.Fprintf(w, "\n## Cells\n\n%s", b.String())
}

func within(v []float64) int {
	k := 0
	for _, x := range v {
		if x >= -0.01 {
			k++
		}
	}
	return int(math.Round(100 * float64(k) / float64(len(v))))
}

func minf(v []float64) float64 {
	m := math.Inf(1)
	for _, x := range v {
		m = math.Min(m, x)
	}
	return m
}

func diff(a, b []float64) (float64, float64) {
	d := make([]float64, min(len(a), len(b)))
	for i := range d {
		d[i] = a[i] - b[i]
	}
	return meanSE(d)
}

// The generative model: scripts/regret's (copied; see its comment).

type shape struct {
	d             int
	m, u          []float64
	f             [][]float64
	a, tau        float64
	alpha, beta   float64
	widenPositive float64
}

func newShape(d int, target float64, rng *rand.Rand) *shape {
	k := min(5, d-1)
	vecs := synth.Orthonormal(d, k, rng)
	s := &shape{d: d, f: vecs[:k], u: vecs[k], widenPositive: 1.3}
	const r0 = 0.4
	s.m = make([]float64, d)
	for j := range s.m {
		s.m[j] = rng.NormFloat64()
	}
	nm := math.Sqrt(dot(s.m, s.m))
	for j := range s.m {
		s.m[j] *= 0.4 / nm
	}
	factorShare := 0.7
	if k == 0 {
		factorShare = 0
	}
	if k > 0 {
		s.a = math.Sqrt(factorShare * r0 * r0 / float64(k))
	}
	s.tau = math.Sqrt((1 - factorShare) * r0 * r0 / float64(d))
	delta := math.Sqrt2 * normQuantile(target)
	if k > 0 {
		s.alpha = 0.5 * s.a
		v1 := s.a*s.a + s.tau*s.tau
		s.beta = s.tau * math.Sqrt(math.Max(delta*delta-s.alpha*s.alpha/v1, 0))
	} else {
		s.beta = s.tau * delta
	}
	return s
}

func (s *shape) draw(n, nPos int, rng *rand.Rand) *pairwise.Dataset {
	d := s.d
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		row := x[i*d : (i+1)*d]
		sign, wide := -1.0, 1.0
		if i < nPos {
			sign, wide = 1, s.widenPositive
		}
		y[i] = sign
		for j := range row {
			row[j] = s.m[j] + s.tau*rng.NormFloat64()
		}
		axpy(sign*s.beta/2, s.u, row)
		if len(s.f) > 0 {
			axpy(sign*s.alpha/2, s.f[0], row)
		}
		for _, f := range s.f {
			axpy(wide*s.a*rng.NormFloat64(), f, row)
		}
		if nr := math.Sqrt(dot(row, row)); nr > 1 {
			for j := range row {
				row[j] /= nr
			}
		}
	}
	xs, ys := synth.Shuffle(x, y, d, rng)
	return pairwise.NewDense(xs, ys, d)
}

func meanSE(v []float64) (float64, float64) {
	m := mean(v)
	if len(v) < 2 {
		return m, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(v)-1) / float64(len(v)))
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func axpy(a float64, x, y []float64) {
	for i := range x {
		y[i] += a * x[i]
	}
}

func normQuantile(p float64) float64 {
	lo, hi := -10.0, 10.0
	for i := 0; i < 200; i++ {
		mid := (lo + hi) / 2
		if 0.5*(1+math.Erf(mid/math.Sqrt2)) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

func ints(s string) []int {
	var v []int
	for _, f := range strings.Split(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			log.Fatalf("bad integer %q", f)
		}
		v = append(v, k)
	}
	return v
}

func floats(s string) []float64 {
	var v []float64
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			log.Fatalf("bad number %q", f)
		}
		v = append(v, x)
	}
	return v
}
