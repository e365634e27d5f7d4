package audit

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/secagg/round"
)

// The DDG sum of secure aggregation (the file comment of federated.go).
//
// Tampered announcement (issue 23, finding 6). The DDG's parameters travel
// in the announcement (secagg-clip, -sens, -scale, -gamma), set by the
// coordinator's plan. A coordinator that divides the announced sensitivity
// Δ and granularity γ by the same factor f leaves Δ/γ — and with it the
// integer sensitivity Δ_ℤ = Δ/γ + √D and every ε that dp.DDG.Epsilon
// computes from the announced values — unchanged, while the noise a site
// adds, s·γ in real units, shrinks by f: with f = 1000 a fed-dp-lda site
// added σ = 0.0034 instead of 3.35 and its own check (round.Charge on the
// DDG built from the announcement, dp.NewDDG) certified the job's ε. The
// site's real vector still has the sensitivity its algorithm proves (Δ = 2
// for fed-dp-lda), which no announcement changes. TamperSensitivity
// rebuilds that site: it divides the two announced values by TamperFactor,
// builds the DDG from them exactly as that site code did (dp.NewDDG of the
// announced parameters, which fedalgo.SecAgg.DDG called), records what that site's
// check certified (round.Charge: the old code released when it was within
// the job's ε), and audits the sums it releases — the real Δ, the real
// noise. The audit holds them to the job's ε and catches them by a wide
// margin (ε_lb near the most the trials can show); realized/stated
// sensitivity is then ≈ TamperFactor, the announced Δ being that much
// below the real one.

// TamperSensitivity names the tampered-announcement audit.
const TamperSensitivity = "sensitivity"

// TamperFactor divides the announced DDG sensitivity and γ.
const TamperFactor = 1000

// Option names of the two tampered parameters (fedalgo/secure.go; the
// coordinator sets them, the sites read them).
const (
	optSens  = "secagg-sens"
	optGamma = "secagg-gamma"
)

// sumCase is a secure aggregation job's audited site on D and D', with the
// DDG the site builds from the announcement.
type sumCase struct {
	sides    *fedSides
	a        fedalgo.Algorithm
	g        *dp.DDG // as the site encodes: the announced parameters, scale × NoiseScale
	honest   *dp.DDG // the honest plan's DDG at noise ×1 (the claims)
	sec      *fedalgo.SecAgg
	stated   float64 // the announced Δ
	included []fedalgo.SiteInfo
	weights  []float64 // the secure releases a record takes part in, with their weights (fedalgo.SumRoundWeights)
	phaseW   []float64 // every phase's weight (fedalgo.SumWeight): the trial multiplies the vectors by it
	floors   fedalgo.Floors
	// tamperCert and honestCert: what the old site check certifies from
	// the tampered and the honest announcement (TamperSensitivity only).
	tamperCert, honestCert float64
	notes                  []string
}

func buildSum(a fedalgo.Algorithm, s FedSpec, cfg fedConfig) (*sumCase, error) {
	j, err := planJob(a, s, cfg.B, cfg.loss)
	if err != nil {
		return nil, err
	}
	honestSec, err := fedalgo.SecAggOf(j.job)
	if err != nil {
		return nil, fmt.Errorf("audit: %s: %w", a.Name(), err)
	}
	dim, _, _, err := a.(fedalgo.SumReleaser).SumShape(&j.spec, j.sites, wbDim)
	if err != nil {
		return nil, fmt.Errorf("audit: %s: %w", a.Name(), err)
	}
	// The honest noise copies the sites' charge counts: (t − κ)·m, or the
	// sparse variant's floor (fedalgo.SecAgg.Floors): the audited sum
	// holds exactly that many — t − κ whole encodings of m copies, the
	// case where a site dropped and nobody revealed its removable copies
	// (when every site is in the sum, (K − κ)·keep ≥ (t − κ)·m copies
	// remain: never fewer).
	fl, err := honestSec.Floors(len(j.sites))
	if err != nil {
		return nil, fmt.Errorf("audit: %s: %w", a.Name(), err)
	}
	if fl.Collusion%fl.Copies != 0 {
		return nil, fmt.Errorf("audit: %s: a floor of %d honest copies is not a whole number of %d-copy encodings", a.Name(), fl.Collusion, fl.Copies)
	}
	honest, err := honestSec.DDG(dim, len(j.sites), fl.Copies)
	if err != nil {
		return nil, fmt.Errorf("audit: %s: %w", a.Name(), err)
	}
	weights, err := fedalgo.SumRoundWeights(a, j.job.Phases, j.job.Phases)
	if err != nil {
		return nil, fmt.Errorf("audit: %s: %w", a.Name(), err)
	}
	phaseW := make([]float64, j.job.Phases)
	for k := range phaseW {
		if phaseW[k], err = fedalgo.SumWeight(a, j.job.Phases, k+1); err != nil {
			return nil, fmt.Errorf("audit: %s: %w", a.Name(), err)
		}
	}
	c := &sumCase{a: a, honest: honest, weights: weights, phaseW: phaseW, sec: honestSec, floors: fl, stated: honestSec.Sens}
	// The site's DDG: built from the announced values, as the worker does
	// (fedalgo.SecAgg.DDG: dp.NewDDG).
	site := honest
	if s.Tamper == TamperSensitivity {
		// The announcement with secagg-sens and secagg-gamma divided by
		// TamperFactor, and the DDG the old site code built from it:
		// dp.NewDDG of the announced values (the sites' vectors do not
		// depend on these two options, so the honest job's sites compute
		// them; the secagg round's other parameters are unchanged).
		p := honest.Params()
		p.Sensitivity /= TamperFactor
		p.Gamma /= TamperFactor
		if site, err = dp.NewDDG(p); err != nil {
			return nil, fmt.Errorf("audit: %s: the tampered announcement's DDG: %w", a.Name(), err)
		}
		c.stated = p.Sensitivity
		ch, err := round.ChargeFloors(site, c.weights, honestSec.Threshold, honestSec.Colluders, fl.Floor, fl.Collusion, fl.Keep, j.job.Delta-honestSec.Fail)
		if err != nil {
			return nil, fmt.Errorf("audit: %s: %w", a.Name(), err)
		}
		honestCh, err := round.ChargeFloors(honest, c.weights, honestSec.Threshold, honestSec.Colluders, fl.Floor, fl.Collusion, fl.Keep, j.job.Delta-honestSec.Fail)
		if err != nil {
			return nil, fmt.Errorf("audit: %s: %w", a.Name(), err)
		}
		c.tamperCert, c.honestCert = ch.Collusion, honestCh.Collusion
		verdict := "accepts the job and releases"
		if ch.Collusion > j.job.Epsilon*(1+1e-9) {
			verdict = "refuses it, by its 10⁻⁹ tolerance only"
		}
		c.notes = append(c.notes, fmt.Sprintf("tampered announcement: %s and %s divided by %d; the old site check (round.Charge on dp.NewDDG of the announced values) certifies ε = %.10g against the coordinator with %d colluders, the honest announcement %.10g: Δ/γ is unchanged, so a check computed from the announced values cannot see that the noise s·γ fell from %.4g to %.4g per site (the two differ only by the DDG's floating-point margin 2⁻³⁰·c/γ, which grows with c/γ); against the job's ε = %g the old check %s",
			optSens, optGamma, TamperFactor, ch.Collusion, ch.Colluders, honestCh.Collusion, honestSec.SiteSigma(fl.Copies), p.Scale*p.Gamma*math.Sqrt(float64(fl.Copies)), j.job.Epsilon, verdict))
	}
	if s.NoiseScale != 1 {
		p := site.Params()
		p.Scale *= s.NoiseScale
		if site, err = dp.NewDDG(p); err != nil {
			return nil, fmt.Errorf("audit: %s: noise ×%g: %w", a.Name(), s.NoiseScale, err)
		}
	}
	c.g = site
	if c.sides, err = newSides(j, cfg, s.R); err != nil {
		return nil, err
	}
	if _, ok := c.sides.site[0].(fedalgo.SumSite); !ok {
		return nil, fmt.Errorf("audit: %s: its site releases no sum", a.Name())
	}
	c.included = j.sites
	return c, nil
}

// copySigma is one noise copy's standard deviation in real units.
func (c *sumCase) copySigma() float64 { p := c.g.Params(); return p.Scale * p.Gamma }

// ddgRelease is the coordinator's view of one round: the site's vector v
// encoded with g (its Copies noise draws), summed mod 2^b with shares − 1
// other honest encodings of zero vectors, decoded.
func ddgRelease(g *dp.DDG, v []float64, in dp.IntegerNoise, shares int) ([]float64, error) {
	enc, sum := make([]uint64, g.D), make([]uint64, g.D)
	if err := g.Encode(sum, v, in); err != nil {
		return nil, err
	}
	zero := make([]float64, len(v))
	for range shares - 1 {
		if err := g.Encode(enc, zero, in); err != nil {
			return nil, err
		}
		for i := range sum {
			sum[i] += enc[i] // mod 2^64; Decode reduces mod 2^b, which divides it
		}
	}
	y := make([]float64, len(v))
	return y, g.Decode(y, sum)
}

// clipTo is x·min(1, c/‖x‖), the DDG's clipping.
func clipTo(x []float64, c float64) []float64 {
	out := slices.Clone(x)
	if n := math.Sqrt(dot(out, out)); n > c {
		for i := range out {
			out[i] *= c / n
		}
	}
	return out
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// trial runs every round with shares honest encodings by g (each its
// Copies noise draws), the audited site's vector on side, and returns the
// Gaussian Λ of the decoded sums (file comment of federated.go); the
// other side's vectors are computed along the same broadcasts.
func (c *sumCase) trial(ctx context.Context, g *dp.DDG, side int, seed uint64, shares int) (fedTrial, error) {
	in, ok := dp.IntegerNoiseOf(dp.NewSeededNoise(seed))
	if !ok {
		return fedTrial{}, fmt.Errorf("audit: the seeded noise has no integer sampler")
	}
	sd := c.sides
	job := sd.j.job
	for k := range sd.src {
		sd.src[k].Seed(sd.cfg.sampleSeed, 0x5eed)
		sd.noise[k].inner = dp.ZeroNoise() // a SumVector adds no noise (the DDG does)
	}
	comb, err := c.a.NewCombiner(job, nil)
	if err != nil {
		return fedTrial{}, err
	}
	sc, ok := comb.(fedalgo.SumCombiner)
	if !ok {
		return fedTrial{}, fmt.Errorf("audit: %s: its combiner takes no sum", c.a.Name())
	}
	sigma := math.Sqrt(float64(shares*g.Params().Copies)) * c.copySigma()
	out := fedTrial{sigma: sigma, kind: gaussianMech, attained: 0}
	model := slices.Clone(sd.init)
	clip := c.g.Params().Clip
	for phase := 1; phase <= job.Phases; phase++ {
		if err := ctx.Err(); err != nil {
			return fedTrial{}, err
		}
		var v [2][]float64
		for k := range v {
			vec, _, err := sd.site[k].(fedalgo.SumSite).SumVector(ctx, phase, model)
			if err != nil {
				return fedTrial{}, fmt.Errorf("audit: %s: phase %d: %w", c.a.Name(), phase, err)
			}
			// The phase's weight, as the worker applies it before
			// encoding (fedalgo.WeightVector).
			v[k] = clipTo(fedalgo.WeightVector(vec, c.phaseW[phase-1]), clip)
		}
		y, err := ddgRelease(g, v[side], in, shares)
		if err != nil {
			return fedTrial{}, err
		}
		var l2a, l2b, l2 float64
		for i := range y {
			da, db, dd := y[i]-v[0][i], y[i]-v[1][i], v[0][i]-v[1][i]
			l2a += da * da
			l2b += db * db
			l2 += dd * dd
		}
		out.llr += (l2a - l2b) / (2 * sigma * sigma)
		out.loss += l2 / (sigma * sigma)
		out.attained = math.Max(out.attained, math.Sqrt(l2)/c.stated)
		out.releases++
		yu := slices.Clone(y)
		sy := fedalgo.UnweightSum(yu, sigma, c.phaseW[phase-1])
		model = sc.CombineSum(model, yu, c.included[:shares], sy)
	}
	for _, w := range c.weights {
		out.stated += (w * c.stated / sigma) * (w * c.stated / sigma)
	}
	return out, nil
}

// auditSum audits the DDG sum (t − κ honest shares) and one share.
func auditSum(ctx context.Context, a fedalgo.Algorithm, s FedSpec) (*FedAuditResult, error) {
	var planErr error
	build := func(cfg fedConfig) (*sumCase, error) {
		c, err := buildSum(a, s, cfg)
		if err != nil && planErr == nil && cfg.loss == s.Loss {
			planErr = err
		}
		return c, err
	}
	var shares int
	pilot := func(c *sumCase) (fedTrial, error) {
		shares = c.floors.Collusion / c.floors.Copies
		return c.trial(ctx, c.g, 0, seedOf(s.Seed, 1, 0), shares)
	}
	c, cfg, err := fedSearch(ctx, fedSearchSpace(s), build, pilot)
	if err != nil {
		if planErr != nil {
			return nil, planErr
		}
		return nil, fmt.Errorf("audit: %s: %w", a.Name(), err)
	}
	sec := c.sec
	fail := sec.Fail
	delta := c.sides.j.job.Delta - fail
	local, err := c.honest.EpsilonWeighted(c.weights, c.floors.Keep, delta)
	if err != nil {
		return nil, fmt.Errorf("audit: %s: %w", a.Name(), err)
	}
	// The one-share view: the audited site's kept copies alone (its
	// removable ones revealed), an encoding of Keep draws.
	gp := c.g.Params()
	gp.Copies = c.floors.Keep
	one, err := dp.NewDDG(gp)
	if err != nil {
		return nil, fmt.Errorf("audit: %s: %w", a.Name(), err)
	}
	cert, err := round.ChargeFloors(c.honest, c.weights, sec.Threshold, sec.Colluders, c.floors.Floor, c.floors.Collusion, c.floors.Keep, delta)
	if err != nil {
		return nil, fmt.Errorf("audit: %s: %w", a.Name(), err)
	}
	sumWhat := fmt.Sprintf("the decoded sum of t − κ = %d − %d = %d honest shares per round (%d round(s), %%s)", sec.Threshold, sec.Colluders, shares, c.sides.j.job.Phases)
	if c.floors.Copies > 1 {
		sumWhat = fmt.Sprintf("the decoded sum of t − κ = %d − %d = %d honest shares of m = %d noise copies each (%d kept, %d removable: the floor with a dropout; all %d sites in the sum keep %d·%d ≥ %d copies) per round (%d round(s), %%s)", sec.Threshold, sec.Colluders, shares, c.floors.Copies, c.floors.Keep, c.floors.Removable(), s.Sites, s.Sites-sec.Colluders, c.floors.Keep, c.floors.Collusion, c.sides.j.job.Phases)
	}
	if sec.Degree > 0 {
		sumWhat = fmt.Sprintf("the decoded sum of SecAgg+'s floor of %d honest shares (degree %d, ℓ = %d, w = %d, t = %d, κ = %d) per round (%d round(s), %%s)", shares, sec.Degree, c.floors.Local, c.floors.Withheld, sec.Threshold, sec.Colluders, c.sides.j.job.Phases)
	}
	composition := "sequential: every round reads all the site's records"
	if len(c.weights) == 1 && c.sides.j.job.Phases > 1 {
		composition = "parallel: the phases read disjoint subsets, a record is in one round"
	}
	var views []FedView
	for k, vw := range []struct {
		view, what, claim string
		g                 *dp.DDG
		shares            int
		eps               float64
	}{
		{ViewSecAggSum, fmt.Sprintf(sumWhat, composition),
			fmt.Sprintf("the job's ε; the honest plan's DDG certifies %.6g with %d honest noise copies (round.ChargeFloors)", cert.Collusion, c.floors.Collusion), c.g, shares, s.Epsilon},
		{ViewOneShare, fmt.Sprintf("the audited site's encoding alone (its %d kept noise copies), decoded (%d round(s))", c.floors.Keep, c.sides.j.job.Phases),
			fmt.Sprintf("the local-only guarantee of the honest plan's DDG: dp.DDG.Epsilon with n = %d copies (one share)", c.floors.Keep), one, 1, local},
	} {
		m, err := measure(ctx, s.Trials, s.Confidence, delta, s.Seed, 2+10*k, func(side int, seed uint64, _ bool) (fedTrial, error) {
			return c.trial(ctx, vw.g, side, seed, vw.shares)
		})
		if err != nil {
			return nil, err
		}
		v := FedView{View: vw.view, What: vw.what, ClaimedEpsilon: vw.eps, Claim: vw.claim, EpsilonLowerBound: m.lb, Consistent: m.lb <= vw.eps,
			Statistic: fmt.Sprintf("Gaussian log-likelihood ratio Λ = Σ_k (‖y_k − a_k‖² − ‖y_k − b_k‖²)/(2σ²) of the %d decoded sums, σ² = %d·(sγ)² per coordinate, Λ > threshold ⇒ D'", m.releases, vw.shares*vw.g.Params().Copies),
			Threshold: m.test.Thr, FPR: float64(m.fp) / float64(s.Trials), FNR: float64(m.fn) / float64(s.Trials), Releases: m.releases,
			Mechanism: fedalgo.MechanismDDG, Sigma: m.sigma, RealizedLoss: m.realized, StatedLoss: m.stated, SensitivityAttained: m.attained,
			Notes: append(slices.Clone(c.notes), fmt.Sprintf("DDG: dimension %d (padded %d), clip c = %.4g, announced Δ = %.4g, γ = %.4g, per-copy scale s = %.6g (×%g), %d copies per site, modulus 2^%d; %d sites, threshold t = %d, κ = %d colluders, δ_f = %g",
				c.g.Params().Dim, c.g.D, c.g.Params().Clip, c.stated, c.g.Params().Gamma, c.g.Params().Scale, s.NoiseScale, c.g.Params().Copies, c.g.Bits, s.Sites, sec.Threshold, sec.Colluders, fail))}
		views = append(views, v)
	}
	res := fedResult(a, s, c.sides.j, cfg, views)
	res.Threshold, res.Colluders = sec.Threshold, sec.Colluders
	sq := math.Sqrt(float64(c.floors.Copies))
	res.SiteSigma, res.HonestSiteSigma = c.copySigma()*sq, c.honest.Params().Scale*c.honest.Params().Gamma*sq
	res.TamperedCheckEpsilon, res.HonestCheckEpsilon = c.tamperCert, c.honestCert
	res.Copies, res.Keep = c.floors.Copies, c.floors.Keep
	return res, nil
}
