package dp

import (
	"math"

	"github.com/pairfed/pairfed/internal/memo"
)

// The subsampled Gaussian with the secure sampler's noise.
//
// SubsampledGaussianEpsilon certifies the Poisson-subsampled Gaussian with
// continuous noise (its file comment argues the discrete sampler through
// Rényi divergences, the remove direction only up to the sampler's
// floating-point weights). The secure functions below certify the noise
// AddGaussian actually draws by the coupling of discrete_gdp.go instead,
// as CalibrateGaussian does for the unsampled releases: a run that draws N
// noise coordinates from the secure sampler (every step draws its p
// coordinates whether or not a record is sampled, so N = steps·p, fixed in
// advance) is within total variation N·η of the same run with continuous
// Gaussian noise, for every dataset, whatever the subsampling; so if the
// continuous run is (ε₀, δ₀)-DP by any accountant, the real one is
// (ε₀, δ₀ + (1 + e^ε₀)·N·η)-DP (the theorem of discrete_gdp.go, whose
// chain of inequalities uses nothing of the mechanism but the coupling),
// and likewise for the multiplicative variant (ε₀ + 2Nθ, e^(Nθ)·(δ₀ +
// (1 + e^ε)·N·η_r')). SecureGaussianTargets states both.

// SecureSubsampledGaussianEpsilon returns the smallest ε (rounded up; +Inf
// if none) at which steps Poisson-subsampled Gaussian steps with rate q and
// multiplier z, whose noise is coords coordinates drawn from the secure
// sampler, are (ε, delta)-DP under rel, and the RDP order of the continuous
// bound it used (see the file comment). coords = 0 gives
// SubsampledGaussianEpsilon (ideal continuous noise). A failure
// probability δ_f is accounted by passing delta − δ_f.
//
// For each variant it iterates e ← shift + ε_cont(rest(e)) from e = 0,
// rest(e) = δ/mult − (1 + e^e)·N·tv: the sequence increases (rest
// decreases in e), and the first e the next step does not raise is
// certified — the continuous run is (e − shift, rest(e))-DP, so the real
// one is (e, mult·(rest(e) + term(e))) = (e, δ)-DP.
func SecureSubsampledGaussianEpsilon(q, z float64, steps int, delta float64, rel Neighbouring, coords int64) (eps float64, order int, err error) {
	// Pure and costly (an RDP curve per variant): every run of an algorithm
	// and every site of a job certifies the same arguments, so the results
	// are remembered (memo.go).
	r := subsampledMemo.Get(subsampledKey{q, z, steps, delta, rel, coords}, func() subsampledResult {
		eps, order, err := secureSubsampledGaussianEpsilon(q, z, steps, delta, rel, coords)
		return subsampledResult{eps, order, err}
	})
	return r.eps, r.order, r.err
}

// subsampledKey is every argument of SecureSubsampledGaussianEpsilon
// (floats compared exactly: NaN never hits, so it is recomputed).
type subsampledKey struct {
	q, z   float64
	steps  int
	delta  float64
	rel    Neighbouring
	coords int64
}

type subsampledResult struct {
	eps   float64
	order int
	err   error
}

var subsampledMemo = memo.New[subsampledKey, subsampledResult](1 << 12)

func secureSubsampledGaussianEpsilon(q, z float64, steps int, delta float64, rel Neighbouring, coords int64) (eps float64, order int, err error) {
	if coords < 0 {
		return 0, 0, acctErrorf("noise coordinate count %d must be ≥ 0", coords)
	}
	if coords == 0 {
		return SubsampledGaussianEpsilon(q, z, steps, delta, rel)
	}
	if err := acctCheckDelta("δ", delta); err != nil {
		return 0, 0, err
	}
	eps = math.Inf(1)
	for _, v := range discreteVariants(delta, 0, coords) {
		e := 0.0
		for try := 0; try < 64; try++ {
			e1 := math.Min(e, v.cap)
			rest := acctDown(acctDown(delta/v.mult, 4)-v.term(e1), 4)
			if !(rest > 0) {
				break
			}
			next, ord, err := SubsampledGaussianEpsilon(q, z, steps, rest, rel)
			if err != nil {
				return 0, 0, err
			}
			next = acctUp(next+v.shift, 2)
			if next > v.cap || math.IsInf(next, 1) {
				break // past the variant's cap: the other variant decides
			}
			if next <= e {
				if e < eps {
					eps, order = e, ord
				}
				break
			}
			e = next
		}
	}
	return eps, order, nil
}

// SecureSubsampledGaussianMultiplier returns the smallest noise multiplier
// z (up to the bisection's 1e-9 relative precision and a few final raises)
// for which SecureSubsampledGaussianEpsilon certifies ε ≤ eps at delta:
// the continuous multiplier for each target of SecureGaussianTargets (the
// discrete term taken out of δ first), the smallest of them, raised until
// the secure certificate covers eps.
func SecureSubsampledGaussianMultiplier(q float64, steps int, eps, delta float64, rel Neighbouring, coords int64) (float64, error) {
	// The search (a bisection of a few dozen curves per target) is pure in
	// its arguments: every site of a job and every run with the same
	// numbers asks it once (memo.go).
	r := multiplierMemo.Get(multiplierKey{q, steps, eps, delta, rel, coords}, func() multiplierResult {
		z, err := secureSubsampledGaussianMultiplier(q, steps, eps, delta, rel, coords)
		return multiplierResult{z, err}
	})
	return r.z, r.err
}

// multiplierKey is every argument of SecureSubsampledGaussianMultiplier.
type multiplierKey struct {
	q          float64
	steps      int
	eps, delta float64
	rel        Neighbouring
	coords     int64
}

type multiplierResult struct {
	z   float64
	err error
}

var multiplierMemo = memo.New[multiplierKey, multiplierResult](1 << 10)

func secureSubsampledGaussianMultiplier(q float64, steps int, eps, delta float64, rel Neighbouring, coords int64) (float64, error) {
	if coords == 0 {
		return SubsampledGaussianMultiplier(q, steps, eps, delta, rel)
	}
	if err := acctCheckPositive("ε", eps); err != nil {
		return 0, err
	}
	if err := acctCheckDelta("δ", delta); err != nil {
		return 0, err
	}
	targets := SecureGaussianTargets(eps, delta, 0, coords)
	if len(targets) == 0 {
		return 0, acctErrorf("(ε, δ) = (%v, %v) leaves nothing for the Gaussian noise after the discrete-noise term of %d coordinates (discrete_gdp.go); raise δ", eps, delta, coords)
	}
	z := math.Inf(1)
	var err error
	for _, t := range targets {
		zt, e := SubsampledGaussianMultiplier(q, steps, t.Epsilon, t.Delta, rel)
		if e != nil {
			err = e
			continue
		}
		z = math.Min(z, zt)
	}
	if math.IsInf(z, 1) {
		return 0, err
	}
	for try := 0; try < 16; try++ {
		got, _, err := SecureSubsampledGaussianEpsilon(q, z, steps, delta, rel, coords)
		if err != nil {
			return 0, err
		}
		if got <= eps {
			return z, nil
		}
		z *= 1 + 1e-9*math.Ldexp(1, try)
	}
	return 0, acctErrorf("no noise multiplier certified for ε = %v, δ = %v (q = %v, %d steps, %d secure coordinates)", eps, delta, q, steps, coords)
}
