package audit

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
)

// Every registered federated algorithm is covered or refused with a
// reason: the private ones have their site release audited, the ones that
// release a sum of site vectors (fedalgo.SumReleaser) their DDG sum too;
// a non-private one is refused by AuditFederated with the coverage's
// sentence, and so is secure aggregation for one that releases no sum. A
// new algorithm in the registry appears here without a change.
func TestFederatedCoverage(t *testing.T) {
	cov := FederatedCoverage()
	if len(cov) != len(fedalgo.Names()) {
		t.Fatalf("%d coverage rows for %d registered algorithms", len(cov), len(fedalgo.Names()))
	}
	for _, c := range cov {
		a, err := fedalgo.Lookup(c.Algo)
		if err != nil {
			t.Fatal(err)
		}
		_, sums := a.(fedalgo.SumReleaser)
		if c.Plain != a.Private() || c.SecAgg != (a.Private() && sums) {
			t.Errorf("%s: plain %v, secure aggregation %v; private %v, releases a sum %v", c.Algo, c.Plain, c.SecAgg, a.Private(), sums)
		}
		if (!c.Plain || !c.SecAgg) && c.Refusal == "" {
			t.Errorf("%s: a view is not audited and no reason is given", c.Algo)
		}
		for _, secure := range []bool{false, true} {
			if (!secure && c.Plain) || (secure && c.SecAgg) {
				continue
			}
			_, err := AuditFederated(context.Background(), FedSpec{Algo: c.Algo, SecureAggregation: secure, Epsilon: 1, Trials: 10})
			if err == nil || err.Error() != c.Refusal {
				t.Errorf("%s (secure aggregation %v): AuditFederated says %v, the coverage %q", c.Algo, secure, err, c.Refusal)
			}
		}
	}
	// The algorithms the issue names are all audited.
	want := map[string]bool{fedalgo.FedDPLDA: true, fedalgo.FedDPSSP: true, fedalgo.FedDPSSPMean: true, fedalgo.FedDPGDGrad: true,
		fedalgo.FedDPLocalSGD: true, fedalgo.FedDPEGD: true, fedalgo.FedDPPairSGD: true, fedalgo.FedDPSPAUC: true, fedalgo.FedOneShot: false}
	for _, c := range cov {
		if sums, ok := want[c.Algo]; ok && (!c.Plain || c.SecAgg != sums) {
			t.Errorf("%s: plain %v, secure aggregation %v, want true, %v", c.Algo, c.Plain, c.SecAgg, sums)
		}
	}
}

func TestFederatedRejectsBadRequests(t *testing.T) {
	for _, s := range []FedSpec{
		{Algo: "fed-nope", Epsilon: 1},
		{Algo: fedalgo.FedDPLDA, Epsilon: 0},
		{Algo: fedalgo.FedDPLDA, Epsilon: 1, Delta: 0, DeltaSet: true},
		{Algo: fedalgo.FedDPLDA, Epsilon: 1, Trials: 5},
		{Algo: fedalgo.FedDPLDA, Epsilon: 1, NoiseScale: -1},
		{Algo: fedalgo.FedDPLDA, Epsilon: 1, Tamper: TamperSensitivity},
		{Algo: fedalgo.FedDPLDA, Epsilon: 1, SecureAggregation: true, Tamper: "clip"},
		{Algo: fedalgo.FedDPLDA, Epsilon: 1, Threshold: 2},
		{Algo: fedalgo.FedDPLDA, Epsilon: 1, SecureAggregation: true, Sites: 1},
		{Algo: fedalgo.FedDPLDA, Epsilon: 1, SecureAggregation: true, Threshold: 9},
		{Algo: fedalgo.FedDPLDA, Epsilon: 1, SecureAggregation: true, Threshold: 3, Colluders: 3},
		{Algo: fedalgo.FedDPLDA, Epsilon: 1, Records: 1},
		{Algo: fedalgo.FedDPLDA, Epsilon: 1, Sites: 1000},
	} {
		if _, err := AuditFederated(context.Background(), s); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
}

// fedGaps are the federated audits that do not catch noise ×0.1, with the
// reason; the tests assert that they stay uncaught at ×0.1 (so that the
// list stays true: a change that closes one fails with "remove it") and
// that ×0.03 is caught.
var fedGaps = map[string]string{
	fedalgo.FedDPLocalSGD: "[Y21a] Alg 3's phase sensitivity min{2B, 2c_k·η_k·Γ} holds on a Binomial high-probability event over how often the canary is drawn, which the worst of 32 sampling seeds reaches only about a quarter of (realized μ ≈ 0.064 of 0.268 at ×1) — the single-site dp-local-sgd gap of the metric table",
}

// fedViews are the audited (algorithm, secure aggregation) pairs.
func fedViews() (out []FedSpec) {
	for _, c := range FederatedCoverage() {
		if isToyFed(c.Algo) {
			continue
		}
		if c.Plain {
			out = append(out, FedSpec{Algo: c.Algo})
		}
		if c.SecAgg {
			out = append(out, FedSpec{Algo: c.Algo, SecureAggregation: true})
		}
	}
	return out
}

func fedName(s FedSpec) string {
	if s.SecureAggregation {
		return s.Algo + "/secagg"
	}
	return s.Algo + "/plain"
}

// fedBar is the ε a view is held to.
func fedBar(v FedView) float64 {
	if v.Reference != "" {
		return v.ReferenceEpsilon
	}
	return v.ClaimedEpsilon
}

// checkViews checks the shape of a result: one view without secure
// aggregation, the sum and the one-share view with it; no reference (no
// federated algorithm's AUC site release is subsampled today: fed-dp-pair-
// sgd's AUC form releases Gaussian sums).
func checkViews(t *testing.T, s FedSpec, res *FedAuditResult) {
	t.Helper()
	want := []string{ViewSiteRelease}
	if s.SecureAggregation {
		want = []string{ViewSecAggSum, ViewOneShare}
	}
	if len(res.Views) != len(want) {
		t.Fatalf("%d views, want %v", len(res.Views), want)
	}
	for i, v := range res.Views {
		if v.View != want[i] {
			t.Errorf("view %d is %q, want %q", i, v.View, want[i])
		}
		if v.Releases < 1 || !(v.Sigma > 0) {
			t.Errorf("%s: %d releases, σ = %g", v.View, v.Releases, v.Sigma)
		}
		if v.Reference != "" {
			t.Errorf("%s: reference %q (%g)", v.View, v.Reference, v.ReferenceEpsilon)
		}
		if v.Reference != "" && !(v.ReferenceEpsilon > v.ClaimedEpsilon) {
			t.Errorf("%s: reference ε %g not above the claim %g", v.View, v.ReferenceEpsilon, v.ClaimedEpsilon)
		}
		if v.Consistent != (v.EpsilonLowerBound <= fedBar(v)) {
			t.Errorf("%s: ε_lb = %g against %g but consistent = %v", v.View, v.EpsilonLowerBound, fedBar(v), v.Consistent)
		}
	}
	if s.SecureAggregation {
		sum, one := res.Views[0], res.Views[1]
		// One share certifies less than the sum of t − κ of them, and its
		// noise (its kept copies) is √(keep/((t − κ)·m)) of the sum's.
		if !(one.ClaimedEpsilon > sum.ClaimedEpsilon) {
			t.Errorf("one share's local-only ε %g is not above the sum's %g", one.ClaimedEpsilon, sum.ClaimedEpsilon)
		}
		if res.Copies < 1 || res.Keep < 1 || res.Keep > res.Copies || (s.Degree > 0 && res.Copies != 1) {
			t.Errorf("%d noise copies per site, %d kept (degree %d)", res.Copies, res.Keep, s.Degree)
		}
		if n := (res.Threshold - res.Colluders) * res.Copies; s.Degree == 0 && math.Abs(sum.Sigma/one.Sigma-math.Sqrt(float64(n)/float64(res.Keep))) > 1e-9 {
			t.Errorf("σ of the sum %g / σ of one share %g, want √(%d/%d)", sum.Sigma, one.Sigma, n, res.Keep)
		}
	}
}

// The fast federated audits (seconds each; the default 2000 trials per
// side are docs/privacy.md's table's and the long test's). At noise ×1 every
// view of every audited (algorithm, secure aggregation) pair gives ε_lb ≤
// its claim — the job's ε for the site release and the DDG sum of t − κ
// shares, the one-share local-only ε for one share — with 400 trials per side
// at confidence 0.999: a correct site fails a view with probability ≤
// 0.1%, so ≤ 2.5% over today's 25 views; the seeds are fixed, so the
// outcome is deterministic. No release exceeds its stated sensitivity.
//
// The default `go test` audits the smokeFedRespects views (same trials
// and assertions); TestLongFederatedRespectsTheClaimAtFullNoise
// (audit_long_test.go, build tag long) every view.
func TestFederatedRespectsTheClaimAtFullNoise(t *testing.T) {
	t.Parallel()
	fedRespects(t, smokeViews(t, smokeFedRespects))
}

// smokeFedRespects: a one-phase site release without and with secure
// aggregation (fed-dp-lda), a multi-phase one (fed-dpegd) and fed-oneshot
// (≤ 0.7 s each without -race).
var smokeFedRespects = []string{"fed-dpegd/plain", "fed-dp-lda/secagg", "fed-oneshot/plain"}

// smokeViews returns the views of fedViews named in names (fedName),
// failing the test if one of them is not an audited view.
func smokeViews(t *testing.T, names []string) []FedSpec {
	t.Helper()
	var out []FedSpec
	for _, s := range fedViews() {
		if slices.Contains(names, fedName(s)) {
			out = append(out, s)
		}
	}
	if len(out) != len(names) {
		t.Errorf("smoke set %v: only %d of them are audited views", names, len(out))
	}
	return out
}

// fedRespects audits the views at full noise (above).
func fedRespects(t *testing.T, views []FedSpec) {
	for _, s := range views {
		t.Run(fedName(s), func(t *testing.T) {
			s.Epsilon, s.Trials, s.Seed, s.Confidence = 1, 400, 1, 0.999
			res, err := AuditFederated(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			checkViews(t, s, res)
			for _, v := range res.Views {
				t.Logf("%s", v.Summary())
				if !v.Consistent {
					t.Errorf("%s: ε_lb = %.3f exceeds %.3f at full noise: the site leaks more than claimed", v.View, v.EpsilonLowerBound, fedBar(v))
				}
				if v.SensitivityAttained > 1+1e-6 {
					t.Errorf("%s: a release differs by %.4f× its stated sensitivity between D and D'", v.View, v.SensitivityAttained)
				}
			}
		})
	}
}

// At noise ×0.1 every view is caught (ε_lb above its claim), except the
// fedGaps, which must stay uncaught at ×0.1 and be caught at ×0.03. A
// view whose worst case attains its stated sensitivity has μ ≈ 2.7 at
// ×0.1 (the sum) or 4.3 (one share); with 400 trials per side the test
// shows ε_lb ≈ 3–4.6 (the most 400 trials can show at 95% is
// ln(0.98·400/3.7) ≈ 4.7). Deterministic seeds.
//
// The default `go test` audits the smokeFedCatch views (same trials and
// assertions); TestLongFederatedCatchesTooLittleNoise every view.
func TestFederatedCatchesTooLittleNoise(t *testing.T) {
	t.Parallel()
	fedCatches(t, smokeViews(t, smokeFedCatch))
}

// smokeFedCatch: a multi-phase site release, a secure sum of a
// subsampled algorithm, a one-shot statistic, fed-oneshot and the fedGaps
// path (×0.1 uncaught, ×0.03 caught) — ≤ 0.5 s each without -race.
var smokeFedCatch = []string{"fed-dpegd/plain", "fed-dp-pair-sgd/secagg", "fed-dp-ssp-mean/plain", "fed-oneshot/plain", "fed-dp-local-sgd/plain"}

// fedCatches audits the views at noise ×0.1 (above).
func fedCatches(t *testing.T, views []FedSpec) {
	for _, s := range views {
		t.Run(fedName(s), func(t *testing.T) {
			s.Epsilon, s.Trials, s.Seed, s.NoiseScale = 1, 400, 2, 0.1
			res, err := AuditFederated(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			checkViews(t, s, res)
			gap, isGap := fedGaps[s.Algo]
			for _, v := range res.Views {
				t.Logf("%s", v.Summary())
				switch caught := !v.Consistent; {
				case isGap && caught:
					t.Errorf("%s: noise ×0.1 is now caught (ε_lb = %.3f > %.3f): the gap (%s) is closed — remove %s from fedGaps", v.View, v.EpsilonLowerBound, fedBar(v), gap, s.Algo)
				case !isGap && !caught:
					t.Errorf("%s: noise ×0.1 not caught: ε_lb = %.3f ≤ %.3f; realized loss %.4g of the stated %.4g", v.View, v.EpsilonLowerBound, fedBar(v), v.RealizedLoss, v.StatedLoss)
				}
			}
			if !isGap {
				return
			}
			s.NoiseScale = 0.03
			res, err = AuditFederated(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range res.Views {
				t.Logf("×0.03: %s", v.Summary())
				if v.Consistent {
					t.Errorf("%s: noise ×0.03 not caught either: ε_lb = %.3f ≤ %.3f", v.View, v.EpsilonLowerBound, fedBar(v))
				}
			}
		})
	}
}

// Regression (issue 23, finding 6): a coordinator that divides the
// announced DDG sensitivity and γ by 1000 made fed-dp-lda sites add 1000×
// less noise, and the site's check — computed from the announced values —
// could not see it. The tampered audit builds the site's DDG from the
// announced values as that site code did (fedalgo.SecAgg.DDG → dp.NewDDG)
// and must catch the sums it releases by a wide margin, while that check
// certifies the same ε as the honest announcement (to 10⁻⁴: Δ/γ is
// unchanged). With 200 trials per side and no error on either side the
// test shows ε_lb = ln(0.98/(1 − 0.025^(1/200))) ≈ 3.98; a correct DDG at
// ×1 shows ≤ 0.5 here (the honest run, below): the bar 3 separates them.
// Deterministic seeds.
func TestTamperedAnnouncementIsCaught(t *testing.T) {
	base := FedSpec{Algo: fedalgo.FedDPLDA, SecureAggregation: true, Epsilon: 1, Trials: 200, Seed: 5}
	honest, err := AuditFederated(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	s := base
	s.Tamper = TamperSensitivity
	res, err := AuditFederated(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("honest: σ = %.4g per site; tampered: σ = %.4g per site; old check ε %.10g (tampered) vs %.10g (honest)", honest.SiteSigma, res.SiteSigma, res.TamperedCheckEpsilon, res.HonestCheckEpsilon)
	if got := honest.SiteSigma / res.SiteSigma; math.Abs(got-TamperFactor) > 1e-6*TamperFactor {
		t.Errorf("the tampered site adds σ = %g, the honest %g: ratio %g, want %d", res.SiteSigma, honest.SiteSigma, got, TamperFactor)
	}
	if math.Abs(res.TamperedCheckEpsilon-res.HonestCheckEpsilon) > 1e-4 || !(res.HonestCheckEpsilon <= 1) {
		t.Errorf("the old check certifies ε = %.10g from the tampered announcement and %.10g from the honest one: want the same to 10⁻⁴ (the check cannot see the tampering) and ≤ 1", res.TamperedCheckEpsilon, res.HonestCheckEpsilon)
	}
	for i, v := range res.Views {
		t.Logf("tampered %s", v.Summary())
		t.Logf("honest   %s", honest.Views[i].Summary())
		if !honest.Views[i].Consistent {
			t.Errorf("honest %s: ε_lb = %.3f above %.3f", v.View, honest.Views[i].EpsilonLowerBound, honest.Views[i].ClaimedEpsilon)
		}
		if v.Consistent || v.EpsilonLowerBound < 3 {
			t.Errorf("tampered %s: ε_lb = %.3f against the claim %.3f: the 1000× smaller noise is not caught", v.View, v.EpsilonLowerBound, v.ClaimedEpsilon)
		}
		if math.Abs(v.SensitivityAttained-TamperFactor) > 0.01*TamperFactor {
			t.Errorf("tampered %s: the real vectors differ by %.4g× the announced Δ, want ≈ %d", v.View, v.SensitivityAttained, TamperFactor)
		}
		if !strings.Contains(strings.Join(v.Notes, " "), "tampered announcement") {
			t.Errorf("tampered %s: no note of the tampering", v.View)
		}
	}
}

// toyFed is a test-only federated algorithm: one phase in which every
// site releases the mean of its records' first coordinate plus Gaussian
// noise calibrated exactly for the job's (ε, δ) and a STATED sensitivity
// stated·2R/n (the true one is 2R/n); with leak, its update also carries
// the un-noised mean (in Last), which the noise does not cover.
type toyFed struct {
	name   string
	stated float64
	leak   bool
}

func (a toyFed) Name() string { return a.name }
func (toyFed) Private() bool  { return true }
func (toyFed) Configure(s *fedalgo.Spec) error {
	if s.Loss == "" {
		s.Loss = "square"
	}
	if s.ParamRadius == 0 {
		s.ParamRadius = 1
	}
	return nil
}
func (toyFed) Plan(s *fedalgo.Spec, _ []fedalgo.SiteInfo, _ int) (*fedalgo.Plan, error) {
	return &fedalgo.Plan{Phases: 1, Epsilon: s.Epsilon, Delta: s.Delta}, nil
}
func (a toyFed) NewSite(job *protocol.JobAnnounce, env fedalgo.SiteEnv) (fedalgo.Site, error) {
	return &toySite{a: a, job: job, env: env}, nil
}
func (toyFed) NewCombiner(*protocol.JobAnnounce, []float64) (fedalgo.Combiner, error) {
	return toyComb{}, nil
}

type toySite struct {
	a   toyFed
	job *protocol.JobAnnounce
	env fedalgo.SiteEnv
}

func (s *toySite) Step(_ context.Context, _ int, model []float64) (*protocol.SiteUpdate, *fedalgo.Release, error) {
	ds, R := s.env.Data, s.job.FeatureRadius
	n := float64(ds.N)
	v := make([]float64, len(model))
	for i := 0; i < ds.N; i++ {
		v[0] += ds.Row(i)[0] / n
	}
	sens := s.a.stated * 2 * R / n
	sigma := sens / gaussianMu(s.job.Epsilon, s.job.Delta)
	clean := slices.Clone(v)
	s.env.Noise.AddGaussian(v, sigma)
	u := &protocol.SiteUpdate{Model: v, Weight: n, Sigma: sigma}
	if s.a.leak {
		u.Last = clean
	}
	return u, &fedalgo.Release{Records: ds.N, Mechanism: "gaussian", Sigma: sigma, Sensitivity: sens, Epsilon: s.job.Epsilon, Delta: s.job.Delta}, nil
}

type toyComb struct{}

func (toyComb) Combine(model []float64, _ []*protocol.SiteUpdate, _ protocol.Aggregation) []float64 {
	return model
}
func (toyComb) Final(model []float64) []float64 { return slices.Clone(model) }
func (toyComb) State() []float64                { return nil }

// The test-only algorithms (skipped by the registry-wide tests above).
var toyFeds = []toyFed{{"fed-audit-toy", 1, false}, {"fed-audit-toy-third", 1.0 / 3, false}, {"fed-audit-toy-leak", 1, true}}

func init() {
	for _, a := range toyFeds {
		fedalgo.Register(a)
	}
}

func isToyFed(name string) bool { return strings.HasPrefix(name, "fed-audit-toy") }

// The federated audit fails real bugs through the fedalgo interfaces
// alone, as a new algorithm would be audited: a site stating a third of
// its true sensitivity (σ exactly calibrated for the wrong Δ, so its
// release is 3μ-GDP, μ = 0.268 at (1, 1e-5)) is caught at ε = 1 (expected
// ε_lb ≈ 1.4 with 4000 trials per side, as the single-site
// TestWhiteBoxCatchesUnderstatedSensitivity), with realized/stated
// sensitivity exactly 3; the same site with the true sensitivity passes
// (false failure ≤ 5%, seeded: deterministic); a site whose update
// carries the un-noised value is refused by the replay.
func TestFederatedCatchesToyBugs(t *testing.T) {
	spec := FedSpec{Epsilon: 1, Trials: 4000, Seed: 3}
	spec.Algo = "fed-audit-toy"
	good, err := AuditFederated(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	spec.Algo = "fed-audit-toy-third"
	bad, err := AuditFederated(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	g, b := good.Views[0], bad.Views[0]
	t.Logf("correct: %s", g.Summary())
	t.Logf("a third of Δ stated: %s", b.Summary())
	if !g.Consistent || math.Abs(g.SensitivityAttained-1) > 1e-6 {
		t.Errorf("correct toy site: ε_lb = %.3f (want ≤ 1), attained %.6f (want 1)", g.EpsilonLowerBound, g.SensitivityAttained)
	}
	if b.Consistent || math.Abs(b.SensitivityAttained-3) > 1e-6 {
		t.Errorf("understated sensitivity: ε_lb = %.3f (want > 1), attained %.6f (want 3)", b.EpsilonLowerBound, b.SensitivityAttained)
	}
	spec.Algo, spec.Trials = "fed-audit-toy-leak", 10
	if _, err := AuditFederated(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "does not cover") {
		t.Errorf("a site sending its un-noised value was not refused: %v", err)
	}
}

// SecAgg+ (FedSpec.Degree): the audited sum holds the sparse floor of
// honest shares the sites' charge counts (4 at 40 sites, degree 34, not
// t − κ = 27), is consistent with the claim at full noise and caught at
// ×0.1 (Clopper–Pearson at confidence 0.999 per side, 400 trials; seeds
// fixed: deterministic); a negative degree is refused.
func TestFederatedAuditSparseSecAgg(t *testing.T) {
	s := FedSpec{Algo: fedalgo.FedDPSSP, SecureAggregation: true, Sites: 40, Degree: 34, Epsilon: 1, Trials: 400, Seed: 1, Confidence: 0.999}
	for _, scale := range []float64{1, 0.1} {
		s.NoiseScale = scale
		res, err := AuditFederated(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		sigma := map[string]float64{}
		for _, v := range res.Views {
			sigma[v.View] = v.Sigma
		}
		// The sum's σ is one share's × √(shares): 4 shares, not 27.
		if n := math.Pow(sigma[ViewSecAggSum]/sigma[ViewOneShare], 2); math.Abs(n-4) > 1e-6 {
			t.Fatalf("noise ×%g: the audited sum holds %.4g shares, want the sparse floor 4", scale, n)
		}
		for _, v := range res.Views {
			if v.View == ViewSecAggSum && v.Consistent != (scale == 1) {
				t.Fatalf("noise ×%g: %s", scale, v.Summary())
			}
		}
	}
	s.Degree, s.NoiseScale = -1, 1
	if _, err := AuditFederated(context.Background(), s); err == nil {
		t.Fatal("degree −1 accepted")
	}
}

// A fed-oneshot audit with a local algorithm whose noise sits inside its
// objective is refused with the single-site black-box audit named.
func TestFedAuditRefusesNoiseInObjective(t *testing.T) {
	for _, local := range []string{"dp-objpert", "dp-select"} {
		_, err := AuditFederated(context.Background(), FedSpec{Algo: "fed-oneshot", LocalAlgo: local, Epsilon: 1, Trials: 20})
		if err == nil || !strings.Contains(err.Error(), "--mode blackbox") {
			t.Errorf("%s: err = %v, want a refusal naming the black-box audit", local, err)
		}
	}
}
