package dp

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Privacy accounting.
//
// A private run is a sequence of releases: noisy values computed from one
// dataset (or from disjoint parts of it). Each is described by a Release,
// a plain value a ledger can store, charged before the value is released.
// Compose turns a list of releases into the ε, at a requested δ, that each
// accountant proves for the whole list, and the best of them:
//
//	gdp          Gaussian DP, exact for Gaussian releases (accountant_gdp.go)
//	rdp          Rényi DP + Canonne–Kamath–Steinke conversion (accountant_rdp.go)
//	rdp-classic  Rényi DP + Mironov's conversion (shown for comparison)
//	zcdp         zCDP + Bun–Steinke Prop 1.3 (accountant_zcdp.go)
//	zcdp-rdp     zCDP viewed as RDP + CKS conversion
//	basic        Σεᵢ, Σδᵢ (accountant_basic.go)
//	advanced     Dwork–Rothblum–Vadhan
//
// Every guarantee is with respect to one neighbouring relation (the one
// for which the releases' sensitivities were computed), holds for adaptive
// composition (a release may depend on earlier outputs), and is rounded
// up (accountant_float.go). Subsampling is not modelled: a release on a
// random subset must be charged as a release on the whole dataset.
//
// Parallel composition (McSherry, "Privacy Integrated Queries", SIGMOD
// 2009, and the same argument for every accountant here): releases
// tagged with a Partition are computed only from that partition's
// records. A record of partition p can change only the releases of p and
// the untagged releases (Partition ""), which read the whole dataset; the
// other partitions' releases are, given the earlier outputs, the same
// random functions on both neighbours, i.e. post-processing. So the cost
// of the run is the maximum over p of the composed cost of (untagged ∪ p).
// This needs partitions fixed independently of the records' values (e.g.
// the site holding a record) and a neighbouring relation that keeps a
// changed record inside its partition (add/remove one record, or replace
// one within a site).

// ErrInvalidAccounting is wrapped by every error about invalid accountant
// input (a release or parameter that is NaN, out of range, or
// inconsistent).
var ErrInvalidAccounting = errors.New("invalid accounting input")

// ErrNoAccountant is wrapped by Compose's error when no accountant bounds
// the releases at the requested δ (for instance δ = 0 with Gaussian
// releases, or (ε, δ) releases whose δ's already exceed it).
var ErrNoAccountant = errors.New("no accountant applies")

func acctErrorf(format string, args ...any) error {
	return fmt.Errorf("dp: %w: %s", ErrInvalidAccounting, fmt.Sprintf(format, args...))
}

// ReleaseMechanism names the kind of a release.
type ReleaseMechanism string

// The mechanisms a Release can describe.
const (
	// MechanismGaussian: N(0, σ²I) noise added to a statistic of ℓ2
	// sensitivity Δ (Release.Sensitivity, Release.Sigma).
	MechanismGaussian ReleaseMechanism = "gaussian"
	// MechanismLaplace: independent Laplace(0, b) noise per coordinate,
	// density exp(−|z|/b)/(2b), added to a statistic of ℓ1 sensitivity Δ₁
	// (Release.Sensitivity, Release.Scale): Δ₁/b-DP.
	MechanismLaplace ReleaseMechanism = "laplace"
	// MechanismPure: any ε-DP release (Release.Epsilon), e.g. the ℓ2
	// "Laplace" (Gamma) mechanism, whose RDP is not modelled separately.
	MechanismPure ReleaseMechanism = "pure"
	// MechanismZCDP: any ρ-zCDP release (Release.Rho).
	MechanismZCDP ReleaseMechanism = "zcdp"
	// MechanismApprox: any (ε, δ)-DP release (Release.Epsilon,
	// Release.Delta); δ = 0 makes it pure.
	MechanismApprox ReleaseMechanism = "approx"
)

// Release describes Count identical releases of one mechanism, as a ledger
// stores them. Only the fields of its Mechanism may be set; the others
// must be zero (Validate rejects stray values, which are usually a
// mistake).
type Release struct {
	Mechanism ReleaseMechanism `json:"mechanism"`
	// Sensitivity is the ℓ2 sensitivity Δ (gaussian) or the ℓ1
	// sensitivity Δ₁ (laplace) of the released values, under the
	// neighbouring relation of the run — for noise added on a grid (see
	// noise.go) the sensitivity after snapping to it.
	Sensitivity float64 `json:"sensitivity,omitempty"`
	// Sigma is the Gaussian noise standard deviation σ.
	Sigma float64 `json:"sigma,omitempty"`
	// Scale is the Laplace scale b.
	Scale float64 `json:"scale,omitempty"`
	// Epsilon, Delta: a release given directly as (ε, δ)-DP (approx) or
	// ε-DP (pure).
	Epsilon float64 `json:"epsilon,omitempty"`
	Delta   float64 `json:"delta,omitempty"`
	// Rho: a release given directly as ρ-zCDP.
	Rho float64 `json:"rho,omitempty"`
	// Count is the number k of identical releases; 0 means 1.
	Count int `json:"count,omitempty"`
	// Partition names the disjoint part of the dataset the release reads
	// (e.g. a site); "" means the whole dataset. See parallel composition
	// above.
	Partition string `json:"partition,omitempty"`
	// Label is free text for ledgers and error messages.
	Label string `json:"label,omitempty"`
}

// count returns k, defaulting to 1.
func (r Release) count() int {
	if r.Count == 0 {
		return 1
	}
	return r.Count
}

// Validate checks the release: a known mechanism, its parameters finite
// and in range, the other parameters zero, Count ≥ 0. Errors wrap
// ErrInvalidAccounting and name the offending value.
func (r Release) Validate() error {
	if msg := r.problem(); msg != "" {
		return acctErrorf("%s", msg)
	}
	return nil
}

func (r Release) problem() string {
	pos := func(name string, x float64) string {
		if !(x > 0) || math.IsInf(x, 0) {
			return fmt.Sprintf("%s %s = %v must be finite and > 0", r.Mechanism, name, x)
		}
		return ""
	}
	unused := func(fields ...string) string {
		vals := map[string]float64{"sensitivity": r.Sensitivity, "sigma": r.Sigma, "scale": r.Scale,
			"epsilon": r.Epsilon, "delta": r.Delta, "rho": r.Rho}
		for _, f := range fields {
			if v := vals[f]; v != 0 {
				return fmt.Sprintf("%s release has %s = %v set, which %s releases do not use", r.Mechanism, f, v, r.Mechanism)
			}
		}
		return ""
	}
	first := func(msgs ...string) string {
		for _, m := range msgs {
			if m != "" {
				return m
			}
		}
		return ""
	}
	if r.Count < 0 {
		return fmt.Sprintf("count = %d must be ≥ 0 (0 means 1)", r.Count)
	}
	switch r.Mechanism {
	case MechanismGaussian:
		return first(pos("sensitivity Δ", r.Sensitivity), pos("σ", r.Sigma), unused("scale", "epsilon", "delta", "rho"))
	case MechanismLaplace:
		return first(pos("sensitivity Δ₁", r.Sensitivity), pos("scale b", r.Scale), unused("sigma", "epsilon", "delta", "rho"))
	case MechanismPure:
		return first(pos("ε", r.Epsilon), unused("sensitivity", "sigma", "scale", "delta", "rho"))
	case MechanismZCDP:
		return first(pos("ρ", r.Rho), unused("sensitivity", "sigma", "scale", "epsilon", "delta"))
	case MechanismApprox:
		if !(r.Epsilon >= 0) || math.IsInf(r.Epsilon, 0) {
			return fmt.Sprintf("approx ε = %v must be finite and ≥ 0", r.Epsilon)
		}
		if !(r.Delta >= 0 && r.Delta < 1) {
			return fmt.Sprintf("approx δ = %v must be in [0, 1)", r.Delta)
		}
		return unused("sensitivity", "sigma", "scale", "rho")
	default:
		return fmt.Sprintf("unknown mechanism %q (want gaussian, laplace, pure, zcdp or approx)", r.Mechanism)
	}
}

// Method names an accountant in a Report.
type Method string

// The accountants, in the order of Report.Methods.
const (
	MethodGDP        Method = "gdp"
	MethodRDP        Method = "rdp"
	MethodRDPClassic Method = "rdp-classic"
	MethodZCDP       Method = "zcdp"
	MethodZCDPViaRDP Method = "zcdp-rdp"
	MethodBasic      Method = "basic"
	MethodAdvanced   Method = "advanced"
)

var acctMethods = []Method{MethodGDP, MethodRDP, MethodRDPClassic, MethodZCDP, MethodZCDPViaRDP, MethodBasic, MethodAdvanced}

// Estimate is one accountant's guarantee: the releases are
// (Epsilon, Delta)-DP, with Delta ≤ the requested δ, when OK.
type Estimate struct {
	Method Method `json:"method"`
	// OK reports whether the accountant applies and gives a finite ε;
	// otherwise Epsilon is +Inf and Description says why.
	OK      bool    `json:"ok"`
	Epsilon float64 `json:"epsilon"`
	// Delta is the δ the guarantee holds at: the requested δ, or less
	// (e.g. 0 for basic composition of pure releases).
	Delta float64 `json:"delta"`
	// Order is the Rényi order α of the rdp methods' conversion (0 for the
	// others).
	Order float64 `json:"order,omitempty"`
	// Partition is the partition whose composed cost is the maximum (""
	// for the whole dataset).
	Partition   string `json:"partition,omitempty"`
	Description string `json:"description"`
}

// MarshalJSON writes a non-finite Epsilon (inapplicable method) as null,
// which encoding/json cannot represent otherwise.
func (e Estimate) MarshalJSON() ([]byte, error) {
	type plain Estimate
	if !math.IsInf(e.Epsilon, 0) && !math.IsNaN(e.Epsilon) {
		return json.Marshal(plain(e))
	}
	return json.Marshal(struct {
		plain
		Epsilon *float64 `json:"epsilon"`
	}{plain: plain(e)})
}

// PartitionEstimate is the best guarantee for the records of one
// partition (the untagged releases plus the partition's own).
type PartitionEstimate struct {
	Partition string   `json:"partition"`
	Releases  int      `json:"releases"`
	Best      Estimate `json:"best"`
}

// Report is the result of Compose.
type Report struct {
	// Delta is the requested δ.
	Delta float64 `json:"delta"`
	// Releases is the number of releases (counts included).
	Releases int `json:"releases"`
	// Methods holds one estimate per accountant, in the order of the
	// Method constants; with partitions, each is the maximum over
	// partitions of that accountant's cost.
	Methods []Estimate `json:"methods"`
	// Best is the guarantee Compose proves: for each partition the
	// smallest valid ε over the accountants, then the maximum over
	// partitions. It can be smaller than every entry of Methods when
	// different partitions are best served by different accountants.
	Best Estimate `json:"best"`
	// Partitions lists each partition's best guarantee when releases are
	// tagged (nil otherwise); records in no named partition are covered by
	// every entry.
	Partitions []PartitionEstimate `json:"partitions,omitempty"`
}

// Method returns the estimate of accountant m.
func (r Report) Method(m Method) Estimate {
	for _, e := range r.Methods {
		if e.Method == m {
			return e
		}
	}
	return Estimate{Method: m, Epsilon: math.Inf(1), Description: "unknown method"}
}

// Compose returns the ε at δ that each accountant proves for the
// releases, and the best one. δ must be in [0, 1); δ = 0 asks for pure
// DP, which only basic composition of pure releases gives. Invalid input
// gives an error wrapping ErrInvalidAccounting that names the release and
// value; if no accountant applies, the report is returned with an error
// wrapping ErrNoAccountant. The input is not modified.
func Compose(releases []Release, delta float64) (Report, error) {
	if !(delta >= 0 && delta < 1) {
		return Report{}, acctErrorf("δ = %v must be in [0, 1)", delta)
	}
	for i, r := range releases {
		if msg := r.problem(); msg != "" {
			return Report{}, acctErrorf("release %d%s: %s", i, r.where(), msg)
		}
	}
	groups := acctGroups(releases)
	rep := Report{Delta: delta}
	for _, r := range releases {
		rep.Releases += r.count()
	}
	per := make([][]Estimate, len(groups))
	for i, g := range groups {
		per[i] = acctEvaluate(acctSummarize(g.releases), delta)
	}
	named := len(groups) > 1 || (len(groups) == 1 && groups[0].partition != "")
	// label attributes a group's estimate to its partition; as a total,
	// its description says it is the largest of the groups.
	label := func(i int, e Estimate, total bool) Estimate {
		e.Partition = groups[i].partition
		switch {
		case !named || !total:
		case e.OK:
			e.Description = fmt.Sprintf("partition %q (the largest of %d, by parallel composition): %s", e.Partition, len(groups), e.Description)
		default:
			e.Description = fmt.Sprintf("in partition %q: %s", e.Partition, e.Description)
		}
		return e
	}
	for m := range acctMethods {
		worst := -1
		for i := range groups {
			e := per[i][m]
			if !e.OK {
				worst = i
				break
			}
			if worst < 0 || e.Epsilon > per[worst][m].Epsilon {
				worst = i
			}
		}
		e := label(worst, per[worst][m], true)
		for i := range groups {
			e.Delta = math.Max(e.Delta, per[i][m].Delta)
		}
		if !e.OK {
			e.Delta = 0
		}
		rep.Methods = append(rep.Methods, e)
	}
	bestOf := func(es []Estimate) Estimate {
		var why []string
		for _, e := range es {
			why = append(why, fmt.Sprintf("%s: %s", e.Method, e.Description))
		}
		b := Estimate{Epsilon: math.Inf(1), Description: strings.Join(why, "; ")}
		for _, e := range es {
			if e.OK && e.Epsilon < b.Epsilon {
				b = e
			}
		}
		return b
	}
	bests := make([]Estimate, len(groups))
	worst, maxDelta := -1, 0.0
	for i := range groups {
		bests[i] = bestOf(per[i])
		if named {
			rep.Partitions = append(rep.Partitions, PartitionEstimate{Partition: groups[i].partition, Releases: acctCount(groups[i].releases), Best: label(i, bests[i], false)})
		}
		maxDelta = math.Max(maxDelta, bests[i].Delta)
		switch {
		case worst >= 0 && !bests[worst].OK:
		case worst < 0 || !bests[i].OK || bests[i].Epsilon > bests[worst].Epsilon:
			worst = i
		}
	}
	rep.Best = label(worst, bests[worst], true)
	if !rep.Best.OK {
		return rep, fmt.Errorf("dp: %w at δ = %v%s: %s", ErrNoAccountant, delta, acctWhere(groups[worst].partition, named), bests[worst].Description)
	}
	rep.Best.Delta = maxDelta
	return rep, nil
}

func acctWhere(p string, named bool) string {
	if !named {
		return ""
	}
	return fmt.Sprintf(" (partition %q)", p)
}

func (r Release) where() string {
	var parts []string
	if r.Label != "" {
		parts = append(parts, fmt.Sprintf("%q", r.Label))
	}
	if r.Partition != "" {
		parts = append(parts, fmt.Sprintf("partition %q", r.Partition))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func acctCount(rs []Release) int {
	n := 0
	for _, r := range rs {
		n += r.count()
	}
	return n
}

type acctGroup struct {
	partition string
	releases  []Release
}

// acctGroups splits releases for parallel composition: one group per named
// partition (its releases plus the untagged ones), in name order; with no
// named partition, one group of everything. Records in no named partition
// need no group of their own: for them the partitions' releases have cost
// 0, below what any group's bound assumes, so the bound of (untagged ∪ p)
// covers them too.
func acctGroups(rs []Release) []acctGroup {
	var global []Release
	byName := map[string][]Release{}
	for _, r := range rs {
		if r.Partition == "" {
			global = append(global, r)
		} else {
			byName[r.Partition] = append(byName[r.Partition], r)
		}
	}
	if len(byName) == 0 {
		return []acctGroup{{releases: global}}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	var gs []acctGroup
	for _, n := range names {
		g := append(append([]Release(nil), global...), byName[n]...)
		gs = append(gs, acctGroup{partition: n, releases: g})
	}
	return gs
}

// acctPure is a group of identical pure releases: ε-DP (pure, or approx
// with δ = 0) or Laplace with c = Δ₁/b.
type acctPure struct {
	laplace bool
	eps     float64 // ε, or c = Δ₁/b rounded up
	count   float64
}

// acctSummary is what the accountants need to know of a group.
type acctSummary struct {
	releases  int
	gaussians int     // Gaussian releases (with counts)
	muSq      float64 // Σ k(Δ/σ)², rounded up
	zcdps     int
	rho       float64 // Σ kρ of zcdp releases, rounded up
	pures     []acctPure
	pureN     int
	pureEps   float64 // Σ kε over pures (basic composition), rounded up
	// approx releases with δ > 0: the tail of the RDP/zCDP accountants
	approxN     int
	approxEps   float64
	approxDelta float64
	// over every pure, laplace and approx release (basic/advanced)
	dpN      int
	dpEps    float64
	dpDelta  float64
	maxEps   float64
	maxDelta float64
}

func acctSummarize(rs []Release) acctSummary {
	var s acctSummary
	var mu2, rho, pEps, aEps, aDelta []float64
	type key struct {
		laplace bool
		eps     float64
	}
	pures := map[key]float64{}
	for _, r := range rs {
		k := r.count()
		kf := float64(k)
		s.releases += k
		switch {
		case r.Mechanism == MechanismGaussian:
			q := r.Sensitivity / r.Sigma
			mu2 = append(mu2, kf*q*q)
			s.gaussians += k
		case r.Mechanism == MechanismZCDP:
			rho = append(rho, kf*r.Rho)
			s.zcdps += k
		case r.Mechanism == MechanismApprox && r.Delta > 0:
			aEps = append(aEps, kf*r.Epsilon)
			aDelta = append(aDelta, kf*r.Delta)
			s.approxN += k
			s.maxEps = math.Max(s.maxEps, r.Epsilon)
			s.maxDelta = math.Max(s.maxDelta, r.Delta)
		default: // pure, laplace, approx with δ = 0
			e, lap := r.Epsilon, r.Mechanism == MechanismLaplace
			if lap {
				e = acctUp(r.Sensitivity/r.Scale, 2)
			}
			pures[key{lap, e}] += kf
			pEps = append(pEps, kf*e)
			s.pureN += k
			s.maxEps = math.Max(s.maxEps, e)
		}
	}
	if s.gaussians > 0 {
		// + the smallest normal float: a guard against underflow of tiny
		// (Δ/σ)² terms.
		s.muSq = acctSumUp(mu2...) + 0x1p-1022
	}
	if s.zcdps > 0 {
		s.rho = acctSumUp(rho...)
	}
	if s.pureN > 0 {
		s.pureEps = acctSumUp(pEps...)
	}
	if s.approxN > 0 {
		s.approxEps = acctSumUp(aEps...)
		s.approxDelta = acctSumUp(aDelta...)
	}
	keys := make([]key, 0, len(pures))
	for k := range pures {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].laplace != keys[j].laplace {
			return !keys[i].laplace
		}
		return keys[i].eps < keys[j].eps
	})
	for _, k := range keys {
		s.pures = append(s.pures, acctPure{laplace: k.laplace, eps: k.eps, count: pures[k]})
	}
	s.dpN = s.pureN + s.approxN
	if s.dpN > 0 {
		s.dpEps = acctSumUp(s.pureEps, s.approxEps)
		s.dpDelta = s.approxDelta
	}
	return s
}

// acctNA is an inapplicable estimate.
func acctNA(m Method, why string) Estimate {
	return Estimate{Method: m, Epsilon: math.Inf(1), Description: "not applicable: " + why}
}

// acctTail handles the releases an accountant does not model natively but
// knows as (εᵢ, δᵢ)-DP: they are added by basic composition ([DR14]
// Thm 3.16), so the native part gets δ − Σδᵢ. It returns that δ, or ok =
// false with the reason.
func acctTail(delta, tailDelta float64) (nativeDelta float64, why string) {
	if tailDelta == 0 {
		if delta > 0 {
			return delta, ""
		}
		return 0, "needs δ > 0"
	}
	if !(tailDelta < delta) {
		return 0, fmt.Sprintf("the (ε, δ) releases already use δ = %.3g ≥ the requested δ = %v", tailDelta, delta)
	}
	d := acctDown(delta-tailDelta, 2)
	if !(d > 0) {
		return 0, fmt.Sprintf("no δ left after the (ε, δ) releases' δ = %.3g", tailDelta)
	}
	return d, ""
}

func acctTailText(n int, eps, delta float64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; plus %d (ε, δ) release(s) by basic composition (Dwork & Roth Thm 3.16): +%.6g to ε, %.3g of δ", n, eps, delta)
}

// acctFinish fills a valid estimate (OK unless ε is infinite).
func acctFinish(m Method, eps, delta float64, desc string) Estimate {
	if math.IsInf(eps, 1) || math.IsNaN(eps) {
		return acctNA(m, "no finite ε ("+desc+")")
	}
	return Estimate{Method: m, OK: true, Epsilon: eps, Delta: delta, Description: desc}
}

// acctEvaluate runs every accountant on one group at δ, in the order of
// acctMethods.
func acctEvaluate(s acctSummary, delta float64) []Estimate {
	out := make([]Estimate, 0, len(acctMethods))
	if s.releases == 0 {
		for _, m := range acctMethods {
			out = append(out, Estimate{Method: m, OK: true, Description: "no releases"})
		}
		return out
	}
	out = append(out, acctGDP(s, delta))
	rdp, classic := acctRDP(s, delta)
	out = append(out, rdp, classic)
	z, zr := acctZCDP(s, delta)
	out = append(out, z, zr)
	b, a := acctBasic(s, delta)
	out = append(out, b, a)
	return out
}

func acctGDP(s acctSummary, delta float64) Estimate {
	const m = MethodGDP
	if s.zcdps > 0 {
		return acctNA(m, fmt.Sprintf("%d zcdp release(s): Gaussian DP composes Gaussian releases (and adds ε-DP and (ε, δ) ones by basic composition)", s.zcdps))
	}
	if s.gaussians == 0 {
		return acctNA(m, "no Gaussian releases (basic composition covers the rest)")
	}
	tailN, tailEps, tailDelta := s.dpN, s.dpEps, s.dpDelta
	nd, why := acctTail(delta, tailDelta)
	if why != "" {
		return acctNA(m, why)
	}
	mu := acctUp(math.Sqrt(s.muSq), 2)
	eps, err := GaussianDPEpsilon(mu, nd)
	if err != nil {
		return acctNA(m, err.Error())
	}
	exact := "exact"
	if tailN > 0 {
		exact = "exact for the Gaussian part"
	}
	desc := fmt.Sprintf("Gaussian DP (Dong, Roth & Su 2019, Thm 2.7 and Cor 3.3): %d Gaussian release(s) compose to μ-GDP, μ = √Σk(Δ/σ)² = %.6g; ε from δ(ε) = Φ(−ε/μ+μ/2) − e^ε Φ(−ε/μ−μ/2) (DRS Cor 2.13, Balle & Wang 2018 Thm 8) by bisection, rounded up (%s)",
		s.gaussians, mu, exact)
	return acctFinish(m, acctSumUp(eps, tailEps), delta, desc+acctTailText(tailN, tailEps, tailDelta))
}

// rdpCurveUp returns an upper bound on the group's composed RDP at order
// α (Mironov Prop 1): Gaussian and zcdp releases contribute α(μ²/2 + ρ),
// Laplace and pure releases their per-release bounds times their count.
func (s acctSummary) rdpCurveUp(alpha float64) float64 {
	terms := make([]float64, 0, len(s.pures)+1)
	if lin := s.muSq/2 + s.rho; lin > 0 {
		terms = append(terms, alpha*lin)
	}
	for _, p := range s.pures {
		if p.laplace {
			terms = append(terms, p.count*LaplaceRDP(alpha, p.eps, 1))
		} else {
			terms = append(terms, p.count*PureRDP(alpha, p.eps))
		}
	}
	return acctSumUp(terms...)
}

func acctRDP(s acctSummary, delta float64) (rdp, classic Estimate) {
	nd, why := acctTail(delta, s.approxDelta)
	if why != "" {
		return acctNA(MethodRDP, why), acctNA(MethodRDPClassic, why)
	}
	native := s.gaussians + s.zcdps + s.pureN
	if native == 0 {
		why := "only (ε, δ) releases, which have no RDP curve (basic composition covers them)"
		return acctNA(MethodRDP, why), acctNA(MethodRDPClassic, why)
	}
	bestK, bestC := math.Inf(1), math.Inf(1)
	var aK, aC float64
	for _, a := range rdpOrders {
		k, c := rdpToDPUp(a, s.rdpCurveUp(a), nd)
		if k < bestK {
			bestK, aK = k, a
		}
		if c < bestC {
			bestC, aC = c, a
		}
	}
	what := fmt.Sprintf("Rényi DP (Mironov 2017): %d release(s) (Gaussian α·Δ²/2σ², Laplace Prop 6, ε-DP via the randomized-response bound, zCDP ρα) summed per order on %d orders α ∈ [%.4g, %.4g]",
		native, len(rdpOrders), rdpOrders[0], rdpOrders[len(rdpOrders)-1])
	tail := acctTailText(s.approxN, s.approxEps, s.approxDelta)
	rdp = acctFinish(MethodRDP, acctSumUp(bestK, s.approxEps), delta,
		fmt.Sprintf("%s, converted by Canonne, Kamath & Steinke 2020 Prop 12 at α = %.4g%s", what, aK, tail))
	rdp.Order = aK
	classic = acctFinish(MethodRDPClassic, acctSumUp(bestC, s.approxEps), delta,
		fmt.Sprintf("%s, converted by the classic ε(α) + log(1/δ)/(α−1) (Mironov Prop 3) at α = %.4g%s", what, aC, tail))
	classic.Order = aC
	return rdp, classic
}

func acctZCDP(s acctSummary, delta float64) (bs, viaRDP Estimate) {
	nd, why := acctTail(delta, s.approxDelta)
	if why != "" {
		return acctNA(MethodZCDP, why), acctNA(MethodZCDPViaRDP, why)
	}
	native := s.gaussians + s.zcdps + s.pureN
	tail := acctTailText(s.approxN, s.approxEps, s.approxDelta)
	if native == 0 {
		why := "only (ε, δ) releases, which are not zCDP (basic composition covers them)"
		return acctNA(MethodZCDP, why), acctNA(MethodZCDPViaRDP, why)
	}
	terms := []float64{s.muSq / 2, s.rho}
	for _, p := range s.pures {
		terms = append(terms, p.count*p.eps*p.eps/2)
	}
	rho := acctSumUp(terms...)
	what := fmt.Sprintf("zCDP (Bun & Steinke 2016): %d release(s) sum to ρ = %.6g (Gaussian Δ²/2σ² Prop 1.6, ε-DP ε²/2 Prop 1.4, composition Lemma 2.3)", native, rho)
	e1 := zcdpEpsilonUp(rho, nd)
	bs = acctFinish(MethodZCDP, acctSumUp(e1, s.approxEps), delta,
		what+", converted by ε = ρ + 2√(ρ log(1/δ)) (Prop 1.3)"+tail)
	e2, a, _ := ZCDPEpsilonViaRDP(rho, nd)
	viaRDP = acctFinish(MethodZCDPViaRDP, acctSumUp(e2, s.approxEps), delta,
		fmt.Sprintf("%s, viewed as (α, ρα)-RDP and converted by Canonne, Kamath & Steinke 2020 Prop 12 at α = %.4g (tighter than Prop 1.3)%s", what, a, tail))
	viaRDP.Order = a
	return bs, viaRDP
}

func acctBasic(s acctSummary, delta float64) (basic, advanced Estimate) {
	if n := s.gaussians + s.zcdps; n > 0 {
		why := fmt.Sprintf("%d Gaussian or zcdp release(s) have no (ε, δ) of their own at a fixed δ split", n)
		return acctNA(MethodBasic, why), acctNA(MethodAdvanced, why)
	}
	if s.dpDelta > delta {
		basic = acctNA(MethodBasic, fmt.Sprintf("Σδᵢ = %.3g exceeds δ = %v", s.dpDelta, delta))
	} else {
		basic = acctFinish(MethodBasic, s.dpEps, s.dpDelta,
			fmt.Sprintf("basic composition (Dwork & Roth 2014 Thm 3.16; Laplace ε = Δ₁/b, Thm 3.6) of %d release(s): ε = Σεᵢ, δ = Σδᵢ = %.3g", s.dpN, s.dpDelta))
	}
	k := float64(s.dpN)
	kd := acctUp(k*s.maxDelta, 2)
	dp := acctDown(delta-kd, 2)
	if !(dp > 0) {
		advanced = acctNA(MethodAdvanced, fmt.Sprintf("needs δ' = δ − k·max δᵢ > 0, have δ = %v, k·max δᵢ = %.3g", delta, kd))
		return basic, advanced
	}
	e, _ := advancedUp(k, s.maxEps, s.maxDelta, dp)
	advanced = acctFinish(MethodAdvanced, e, delta,
		fmt.Sprintf("advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth Thm 3.20) of k = %d release(s), each (max ε = %.6g, max δ = %.3g)-DP, slack δ' = %.3g: ε = √(2k ln(1/δ'))ε + kε(e^ε − 1)",
			s.dpN, s.maxEps, s.maxDelta, dp))
	return basic, advanced
}
