package dp

import (
	"encoding/binary"
	"fmt"
	"github.com/pairfed/pairfed/internal/memo"
	"math"
	"sync"
)

// Calibration of Gaussian releases by exact Gaussian-DP accounting: the one
// code path every Gaussian private algorithm (local and federated) uses to
// choose its σ's (CalibrateGaussian) and to state what given σ's certify
// (CertifyGaussian).
//
// A run's Gaussian releases are described by a GaussianPlan: the ℓ2
// sensitivity Δᵢ of each release under the run's neighbouring relation,
// how the noise is split among them (σᵢ = c·splitᵢ), whether they read
// disjoint parts of the records (parallel composition), and the failure
// probability δ_f of the event on which the Δᵢ hold (0 when they hold
// always). The guarantee certified for σ's is
//
//	μ = √Σᵢ (Δ'ᵢ/σᵢ)²   (sequential: [DRS19] Cor 3.3, exact for adaptive
//	                      composition of Gaussian mechanisms)
//	μ = maxᵢ Δ'ᵢ/σᵢ      (disjoint: a record changes one release, the others
//	                      are post-processing given the earlier outputs)
//
// μ-GDP is (ε, δ_μ(ε))-DP with δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)
// ([DRS19] Cor 2.13, [BW18] Thm 8), and no smaller δ holds for Gaussian
// noise: the accounting is exact, not a bound. The failure event adds δ_f
// (conditioning on the sampling randomness, which is never released):
// the run is (ε, δ_μ(ε) + δ_f)-DP.
//
// Δ'ᵢ = Δᵢ + σᵢ·2⁻⁴⁶·√Dim is the sensitivity after the secure noise's
// snapping to its grid (noise.go: g ≤ σ·2⁻⁴⁶, SnappedL2Sensitivity); it
// is used when Dim > 0.
//
// Discrete noise. The secure sampler draws the discrete Gaussian, not the
// continuous one this curve is exact for: a run that draws N noise
// coordinates is (ε, δ_μ(ε) + δ_f + (1 + e^ε)·N·η)-DP with
// η = SecureGaussianTV (discrete_gdp.go proves it by total variation). N
// is GaussianPlan.Coordinates, or Dim × (number of noised releases) when
// that is 0 (Dim alone for Disjoint: one release sees the record); a plan with Dim = 0 and Coordinates = 0 describes ideal
// continuous noise (e.g. the papers' tables) and gets no such term. The
// certified δ includes the term, and so does the δ that certifies ε; a
// calibration takes it (at the requested ε) out of δ's budget first. A
// second proven variant keeps the float64 part multiplicative (ε − 2Nθ,
// factor e^(Nθ), a 10¹² times smaller TV term; see discreteVariant); the
// certificate takes whichever certifies more.
//
// CalibrateGaussian returns the smallest common scale c (up to a few ulps)
// for which the certificate covers the request: μ* is the largest μ with
// δ_μ(ε) ≤ δ − δ_f (AnalyticGaussianSigma with Δ = 1 gives 1/μ* rounded
// up), c follows in closed form, and the result is certified again by
// CertifyGaussian and raised by a few ulps until it passes — so whatever
// the floating-point rounding, the returned σ's are certified by the same
// function that reports them.

// GaussianPlan describes the Gaussian releases of one run.
type GaussianPlan struct {
	// Sensitivities are the ℓ2 sensitivities Δᵢ ≥ 0 (0: a release that
	// reads no record, e.g. a data-independent point).
	Sensitivities []float64
	// Split fixes the ratios of the noise, σᵢ = c·Split[i] (Split[i] > 0
	// wherever Δᵢ > 0); nil means σᵢ ∝ Δᵢ, i.e. every release gets the
	// same share μᵢ of the budget.
	Split []float64
	// Disjoint: release i reads only the i-th of disjoint, data-independent
	// parts of the records (parallel composition).
	Disjoint bool
	// FailureDelta is the probability (over secret randomness, independent
	// of the data) of the event on which the Δᵢ may fail; it is added to δ.
	FailureDelta float64
	// Dim is the number of noised coordinates per release (for the
	// snapping allowance); 0 skips the allowance.
	Dim int
	// Coordinates is the number N of noise coordinates drawn from the
	// secure Gaussian sampler that the discrete-noise δ term
	// (discrete_gdp.go) must cover: every coordinate of every release for
	// sequential composition; for Disjoint, those of the largest single
	// release (a record reaches one release; the others are the same
	// kernels on both neighbours, post-processing that needs no
	// coupling). 0 means the default from Dim: Dim × the number of noised
	// releases (σᵢ > 0), or Dim for Disjoint. Give it when a release
	// draws other than Dim coordinates.
	Coordinates int64
}

// coordinates returns the N of the discrete-noise δ term: Coordinates, or
// the default from Dim (see GaussianPlan) over the noised releases (σᵢ > 0;
// with sigmas nil, Δᵢ > 0, which are the releases calibration noises).
func (p GaussianPlan) coordinates(sigmas []float64) int64 {
	if p.Coordinates > 0 {
		return p.Coordinates
	}
	var n int64
	for i, d := range p.Sensitivities {
		if (sigmas == nil && d > 0) || (sigmas != nil && sigmas[i] > 0) {
			if p.Disjoint {
				return int64(p.Dim)
			}
			n += int64(p.Dim)
		}
	}
	return n
}

// Certificate is what Gaussian noise certifies for a plan.
type Certificate struct {
	// Mu is the composed Gaussian-DP μ (the worst part for Disjoint).
	Mu float64 `json:"mu"`
	// Epsilon is the smallest ε certified at the requested δ (exact
	// accountant, rounded up); +Inf when δ ≤ FailureDelta.
	Epsilon float64 `json:"epsilon"`
	// Delta is the δ certified at the requested ε: δ_μ(ε) + FailureDelta
	// + DiscreteDelta, rounded up.
	Delta float64 `json:"delta"`
	// DiscreteDelta is the part of Delta due to the discrete noise (for
	// the total-variation variant, (1 + e^ε)·N·SecureGaussianTV; 0 for
	// ideal continuous noise).
	DiscreteDelta float64 `json:"discrete_delta"`
}

// Covers reports whether the certificate gives (eps, delta)-DP: both the
// certified ε at δ and the certified δ at ε are within the request.
func (c Certificate) Covers(eps, delta float64) bool {
	return c.Epsilon <= eps && c.Delta <= delta
}

func (p GaussianPlan) check(sigmas []float64) error {
	if len(p.Sensitivities) == 0 {
		return acctErrorf("a Gaussian plan needs at least one release")
	}
	if p.Split != nil && len(p.Split) != len(p.Sensitivities) {
		return acctErrorf("plan has %d sensitivities but %d split weights", len(p.Sensitivities), len(p.Split))
	}
	if sigmas != nil && len(sigmas) != len(p.Sensitivities) {
		return acctErrorf("plan has %d sensitivities but %d σ's", len(p.Sensitivities), len(sigmas))
	}
	if err := CheckDelta("failure δ", p.FailureDelta); err != nil {
		return acctErrorf("%v", err)
	}
	if p.Dim < 0 {
		return acctErrorf("dimension %d must be ≥ 0", p.Dim)
	}
	if p.Coordinates < 0 {
		return acctErrorf("noise coordinate count %d must be ≥ 0 (0: Dim per release)", p.Coordinates)
	}
	for i, d := range p.Sensitivities {
		if err := CheckSensitivity("sensitivity Δ", d); err != nil {
			return acctErrorf("release %d: %v", i+1, err)
		}
		if d == 0 {
			continue
		}
		if p.Split != nil && (!(p.Split[i] > 0) || math.IsInf(p.Split[i], 0)) {
			return acctErrorf("release %d: split weight %v must be finite and > 0", i+1, p.Split[i])
		}
		if sigmas != nil && (!(sigmas[i] > 0) || math.IsInf(sigmas[i], 0)) {
			return acctErrorf("release %d: σ = %v must be finite and > 0 (its sensitivity is %v)", i+1, sigmas[i], d)
		}
	}
	return nil
}

// mu returns the composed μ of the plan with noise sigmas, rounded up.
func (p GaussianPlan) mu(sigmas []float64) float64 {
	snap := 0.0
	if p.Dim > 0 {
		snap = 0x1p-46 * math.Sqrt(float64(p.Dim))
	}
	var terms []float64
	worst := 0.0
	for i, d := range p.Sensitivities {
		if d == 0 {
			continue
		}
		m := acctUp((d+sigmas[i]*snap)/sigmas[i], 4)
		worst = math.Max(worst, m)
		terms = append(terms, acctUp(m*m, 2))
	}
	if p.Disjoint || len(terms) <= 1 {
		return worst // one release: μ = Δ′/σ, composed or not
	}
	return acctUp(math.Sqrt(acctSumUp(terms...)), 4)
}

// CertifyGaussian returns the certificate of the plan's releases with noise
// sigmas at the request (eps, delta): the certified ε at delta and the
// certified δ at eps (see the file comment). It errors on invalid input;
// a certificate that does not cover the request is not an error (see
// Certificate.Covers).
//
// Results are memoized by the bits of the plan, the σ's, ε and δ (see
// memo.go): every site of a federated job certifies the same public σ's
// before every round (fed-dp-pair-sgd: one exact-accountant search per
// site per round, ≈ 22 % of a 64-site diabetes simulation's CPU), and
// asks once per question instead.
func CertifyGaussian(p GaussianPlan, sigmas []float64, eps, delta float64) (Certificate, error) {
	if sigmas == nil {
		return Certificate{}, acctErrorf("no σ's to certify")
	}
	b := []byte(calibKey(p, eps, delta))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(sigmas)))
	for _, x := range sigmas {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	r := certifyMemo.Get(string(b), func() certifyResult {
		c, err := certifyGaussian(p, sigmas, eps, delta)
		return certifyResult{c, err}
	})
	return r.cert, r.err
}

type certifyResult struct {
	cert Certificate
	err  error
}

var certifyMemo = memo.New[string, certifyResult](1 << 12)

func certifyGaussian(p GaussianPlan, sigmas []float64, eps, delta float64) (Certificate, error) {
	if err := p.check(sigmas); err != nil {
		return Certificate{}, err
	}
	if !(eps >= 0) || math.IsInf(eps, 0) {
		return Certificate{}, acctErrorf("ε = %v must be finite and ≥ 0", eps)
	}
	if !(delta > 0 && delta < 1) {
		return Certificate{}, acctErrorf("δ = %v must be in (0, 1)", delta)
	}
	mu := p.mu(sigmas)
	c := Certificate{Mu: mu}
	if mu == 0 {
		// No release reads a record: whatever noise is drawn, the output
		// does not depend on the data.
		c.Delta = p.FailureDelta
		if p.FailureDelta >= delta {
			c.Epsilon = math.Inf(1)
		}
		return c, nil
	}
	n := p.coordinates(sigmas)
	c.Delta, c.DiscreteDelta = 1, 1
	c.Epsilon = math.Inf(1)
	for _, v := range discreteVariants(delta, p.FailureDelta, n) {
		if d, dd := v.delta(mu, eps); d < c.Delta {
			c.Delta, c.DiscreteDelta = d, dd
		}
		c.Epsilon = math.Min(c.Epsilon, v.epsilon(mu, delta))
	}
	return c, nil
}

// discreteVariant is one proven way (discrete_gdp.go) to certify the
// secure sampler's noise through μ-GDP: the run is (ε, δ)-DP when
//
//	mult·(δ_μ(ε₁ − shift) + (1 + e^ε₁)·n·tv) + fail ≤ δ,  ε₁ = min(ε, cap),
//
// with (tv, mult, shift, cap) = (SecureGaussianTV, 1, 0, +Inf) for the
// total-variation variant, (RoundedGaussianTV, e^(nθ), 2nθ, ε_c) for the
// multiplicative one, and tv = 0 (the ideal continuous Gaussian, exact) when
// n = 0.
type discreteVariant struct {
	n               int64
	tv, mult, shift float64
	cap, fail       float64
}

// discreteVariants returns the variants for n coordinates at the request's
// δ (which sets ε_c) and failure probability.
func discreteVariants(delta, fail float64, n int64) []discreteVariant {
	if n <= 0 {
		return []discreteVariant{{mult: 1, cap: math.Inf(1), fail: fail}}
	}
	vs := []discreteVariant{{n: n, tv: SecureGaussianTV, mult: 1, cap: math.Inf(1), fail: fail}}
	nt := acctUp(float64(n)*SecureGaussianLogRatio, 2)
	if ec := math.Log((delta - fail) / (4 * float64(n) * RoundedGaussianTV)); delta > fail && ec > 2*nt {
		vs = append(vs, discreteVariant{n: n, tv: RoundedGaussianTV, mult: acctUp(math.Exp(nt), 2), shift: acctUp(2*nt, 2), cap: acctDown(ec, 2), fail: fail})
	}
	return vs
}

// GaussianTarget is a guarantee (Epsilon, Delta) to ask of the ideal
// continuous Gaussian mechanism.
type GaussianTarget struct {
	Epsilon, Delta float64
}

// SecureGaussianTargets returns the targets for a run that draws n
// coordinates from the secure Gaussian sampler (AddGaussian) and must be
// (eps, delta)-DP with failure probability fail: if the same run with
// continuous Gaussian noise is (t.Epsilon, t.Delta)-DP for one of them, by
// any accountant (GDP, RDP, subsampled RDP), the real run is
// (eps, delta)-DP (discrete_gdp.go, both variants). With n = 0 the one
// target is (eps, delta − fail). Targets with Epsilon ≤ 0 or Delta ≤ 0 are
// left out; none means no noise can certify the request.
func SecureGaussianTargets(eps, delta, fail float64, n int64) []GaussianTarget {
	var ts []GaussianTarget
	for _, v := range discreteVariants(delta, fail, n) {
		if e0, rest, ok := v.target(eps, delta); ok && e0 > 0 {
			ts = append(ts, GaussianTarget{e0, rest})
		}
	}
	return ts
}

// term returns the variant's discrete δ term at ε₁, rounded up.
func (v discreteVariant) term(e1 float64) float64 {
	if v.n <= 0 {
		return 0
	}
	return acctUp((1+math.Exp(e1))*float64(v.n)*v.tv, 4)
}

// target returns (ε₀, rest): the variant certifies (ε, δ) when
// δ_μ(ε₀) ≤ rest (ok false when no μ can).
func (v discreteVariant) target(eps, delta float64) (e0, rest float64, ok bool) {
	e1 := math.Min(eps, v.cap)
	e0 = e1 - v.shift
	rest = acctDown((delta-v.fail)/v.mult, 4) - v.term(e1)
	if !(e0 >= 0) || !(rest > 0) {
		return 0, 0, false
	}
	return e0, acctDown(rest, 4), true
}

// delta returns the δ the variant certifies at ε for μ (capped at 1) and
// its discrete term (the part of it due to the discrete noise).
func (v discreteVariant) delta(mu, eps float64) (d, disc float64) {
	e1 := math.Min(eps, v.cap)
	e0 := e1 - v.shift
	if !(e0 >= 0) {
		return 1, 1
	}
	ideal := GaussianDPDelta(mu, e0)
	d = math.Min(1, acctSumUp(acctUp(v.mult*acctSumUp(ideal, v.term(e1)), 2), v.fail))
	switch {
	case v.n <= 0:
		return d, 0
	case v.mult == 1 && v.shift == 0:
		return d, v.term(e1)
	}
	return d, math.Min(1, math.Max(0, acctUp(d-ideal-v.fail, 2)))
}

// epsilon returns the smallest ε (rounded up; +Inf if none) at which the
// variant certifies δ for μ. Its condition tightens as ε grows only through
// the term (1 + e^ε₁)·n·tv, so it iterates e ← shift + GaussianDPEpsilon(μ,
// rest(e)) from e = 0: the sequence increases, and the first e that the
// next step does not raise is certified (δ_μ(e − shift) ≤ δ_μ(next −
// shift) ≤ rest(e)).
func (v discreteVariant) epsilon(mu, delta float64) float64 {
	e := 0.0
	for try := 0; try < 64; try++ {
		e1 := math.Min(e, v.cap)
		rest := acctDown((delta-v.fail)/v.mult, 4) - v.term(e1)
		if !(rest > 0) {
			return math.Inf(1)
		}
		next, err := GaussianDPEpsilon(mu, acctDown(rest, 4))
		if err != nil || math.IsInf(next, 1) {
			return math.Inf(1)
		}
		next = acctUp(next+v.shift, 2)
		if next <= e {
			return e
		}
		if next > v.cap {
			// Past the cap the term no longer grows: ε₁ = cap is the
			// last candidate, certified iff its condition holds there.
			if _, _, ok := v.target(next, delta); !ok {
				return math.Inf(1)
			}
			e0, rest, _ := v.target(next, delta)
			if GaussianDPDelta(mu, e0) <= rest {
				return acctUp(v.cap, 2)
			}
			return math.Inf(1)
		}
		e = next
	}
	return math.Inf(1)
}

// CalibrateGaussian returns the smallest σ's (σᵢ = c·splitᵢ, up to a few
// ulps of c) whose certificate covers (eps, delta), and that certificate.
// Releases with Δᵢ = 0 get σᵢ = 0 (they read no record and need no noise).
func CalibrateGaussian(p GaussianPlan, eps, delta float64) ([]float64, Certificate, error) {
	key := calibKey(p, eps, delta)
	calibMu.Lock()
	e, ok := calibMemo[key]
	calibMu.Unlock()
	if ok {
		return append([]float64(nil), e.sigmas...), e.cert, e.err
	}
	sig, cert, err := calibrateGaussian(p, eps, delta)
	calibMu.Lock()
	if len(calibMemo) >= 1<<12 {
		clear(calibMemo)
	}
	calibMemo[key] = calibEntry{append([]float64(nil), sig...), cert, err}
	calibMu.Unlock()
	return sig, cert, err
}

// CalibrateGaussian is pure and costs thousands of exact-accountant
// evaluations; every run of an algorithm calls it with the same plan (the
// audit runs thousands), so results are memoized by the bits of the plan,
// ε and δ (at most 4096 entries, then cleared; callers get copies).
type calibEntry struct {
	sigmas []float64
	cert   Certificate
	err    error
}

var (
	calibMu   sync.Mutex
	calibMemo = map[string]calibEntry{}
)

// calibKey encodes every field of the plan, ε and δ exactly (float bits):
// a field added to GaussianPlan must be added here.
func calibKey(p GaussianPlan, eps, delta float64) string {
	b := make([]byte, 0, 8*(len(p.Sensitivities)+len(p.Split)+5))
	put := func(x float64) { b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x)) }
	put(float64(len(p.Sensitivities)))
	for _, x := range p.Sensitivities {
		put(x)
	}
	put(float64(len(p.Split)))
	for _, x := range p.Split {
		put(x)
	}
	d := 0.0
	if p.Disjoint {
		d = 1
	}
	put(d)
	put(p.FailureDelta)
	put(float64(p.Dim))
	put(float64(p.Coordinates))
	put(eps)
	put(delta)
	return string(b)
}

func calibrateGaussian(p GaussianPlan, eps, delta float64) ([]float64, Certificate, error) {
	if err := p.check(nil); err != nil {
		return nil, Certificate{}, err
	}
	if err := acctCheckPositive("ε", eps); err != nil {
		return nil, Certificate{}, err
	}
	if err := acctCheckDelta("δ", delta); err != nil {
		return nil, Certificate{}, err
	}
	if !(delta-p.FailureDelta > 0) {
		return nil, Certificate{}, acctErrorf("δ = %v leaves nothing for the Gaussian noise after the failure probability %v of the sensitivity bound", delta, p.FailureDelta)
	}
	targets := SecureGaussianTargets(eps, delta, p.FailureDelta, p.coordinates(nil))
	if len(targets) == 0 {
		return nil, Certificate{}, acctErrorf("(ε, δ) = (%v, %v) leaves nothing for the Gaussian noise after the failure probability %v of the sensitivity bound and the discrete-noise term of %d coordinates (discrete_gdp.go); raise δ", eps, delta, p.FailureDelta, p.coordinates(nil))
	}
	if p.Disjoint && p.Split == nil && len(p.Sensitivities) > 1 {
		// Parallel composition, each release its own budget: calibrate
		// each alone (so a release gets the same σ whether it is
		// calibrated with the others or on its own, e.g. at a site).
		sigmas := make([]float64, len(p.Sensitivities))
		for i, d := range p.Sensitivities {
			if d == 0 {
				continue
			}
			// The discrete-noise term covers one release (disjoint).
			one := GaussianPlan{Sensitivities: []float64{d}, Disjoint: true, FailureDelta: p.FailureDelta, Dim: p.Dim, Coordinates: p.coordinates(nil)}
			s, _, err := CalibrateGaussian(one, eps, delta)
			if err != nil {
				return nil, Certificate{}, err
			}
			sigmas[i] = s[0]
		}
		c, err := CertifyGaussian(p, sigmas, eps, delta)
		if err == nil && !c.Covers(eps, delta) {
			err = acctErrorf("internal error: per-release calibration not certified (%+v)", c)
		}
		return sigmas, c, err
	}
	split := func(i int) float64 {
		if p.Split != nil {
			return p.Split[i]
		}
		return p.Sensitivities[i]
	}
	// Σ (Δᵢ/splitᵢ)² or max Δᵢ/splitᵢ: μ = that/c (before snapping).
	var terms []float64
	worst := 0.0
	for i, d := range p.Sensitivities {
		if d == 0 {
			continue
		}
		r := d / split(i)
		terms = append(terms, r*r)
		worst = math.Max(worst, r)
	}
	sigmas := make([]float64, len(p.Sensitivities))
	if len(terms) == 0 {
		c, err := CertifyGaussian(p, sigmas, eps, delta)
		if err == nil && !c.Covers(eps, delta) {
			err = acctErrorf("failure probability %v alone exceeds δ = %v", p.FailureDelta, delta)
		}
		return sigmas, c, err
	}
	inv := math.Inf(1) // 1/μ*, rounded up: the variant allowing the largest μ
	var err error
	for _, tg := range targets {
		x, e := AnalyticGaussianSigma(tg.Epsilon, tg.Delta, 1)
		if e != nil {
			err = e
			continue
		}
		inv = math.Min(inv, x)
	}
	if math.IsInf(inv, 1) {
		return nil, Certificate{}, err
	}
	k := worst
	if !p.Disjoint && len(terms) > 1 {
		k = math.Sqrt(acctSumUp(terms...))
	}
	scale := inv * k
	for try := 0; try < 200; try++ {
		for i, d := range p.Sensitivities {
			sigmas[i] = 0
			if d > 0 {
				sigmas[i] = acctUp(scale*split(i), 2)
			}
		}
		c, err := CertifyGaussian(p, sigmas, eps, delta)
		if err != nil {
			return nil, Certificate{}, err
		}
		if c.Covers(eps, delta) {
			return sigmas, c, nil
		}
		scale = acctUp(scale, math.Ldexp(8, try/4)) // a few ulps, then faster
	}
	return nil, Certificate{}, fmt.Errorf("dp: %w: no σ certified for ε = %v, δ = %v (plan %+v)", ErrNoAccountant, eps, delta, p)
}
