package fedalgo

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg"
	"github.com/pairfed/pairfed/secagg/round"
)

// secureRun plays a multi-phase secure aggregation job in this process:
// the algorithm's plan and PlanSecAgg, every site's SumVector encoded with
// its DDG share (seeded noise), each phase summed by the SecAgg protocol
// (secagg.RunInMemory, drops[phase] the sites' drop points) and combined
// by CombineSum. It checks, every phase, that the protocol's sum equals
// the plain sum mod 2^b of the included sites' noisy integer encodings,
// and that the decoded sum is the sum of their real vectors up to the
// DDG's noise. It returns the final model, or the error of the first
// phase whose round aborted (with the phases completed).
func secureRun(t *testing.T, algo string, threshold int, data []*pairwise.Dataset, drops map[int]map[uint32]int) ([]float64, int, error) {
	t.Helper()
	spec := Spec{ID: "j", Algo: algo, Task: "auc", FeatureRadius: 1, Epsilon: 1, Seed: 5,
		Options: protocol.OptionsOf(map[string]float64{OptSecAgg: 1, OptSecAggThreshold: float64(threshold)})}
	if algo == FedDPGDGrad {
		spec.Rounds = 4
	}
	a, err := Configure(&spec)
	if err != nil {
		t.Fatal(err)
	}
	K, d := len(data), data[0].D
	infos, names := make([]SiteInfo, K), make([]string, K)
	for i, ds := range data {
		names[i] = fmt.Sprintf("s%d", i+1)
		infos[i] = SiteInfo{Name: names[i], Records: ds.N}
	}
	plan, err := a.Plan(&spec, infos, d)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := PlanSecAgg(a, &spec, infos, d, plan)
	if err != nil {
		t.Fatal(err)
	}
	job := &protocol.JobAnnounce{Job: "j", Algo: algo, Task: "auc", Loss: spec.Loss, Params: d, Phases: plan.Phases, Eta: plan.Eta,
		ParamRadius: spec.ParamRadius, FeatureRadius: 1, Epsilon: plan.Epsilon, Delta: plan.Delta, Sites: names, Options: opts}
	if err := job.Validate(); err != nil {
		t.Fatal(err)
	}
	sec, err := SecAggOf(job)
	if err != nil || sec == nil {
		t.Fatalf("SecAggOf: %v", err)
	}
	dim, _, _, err := a.(SumReleaser).SumShape(&spec, infos, d)
	if err != nil {
		t.Fatal(err)
	}
	fl, err := sec.Floors(K)
	if err != nil {
		t.Fatal(err)
	}
	g, err := sec.DDG(dim, K, fl.Copies)
	if err != nil {
		t.Fatal(err)
	}
	// The guarantee: certified for the whole job at t − κ shares, and
	// what a site is charged after each phase never decreases.
	prev := 0.0
	for k := 1; k <= plan.Phases; k++ {
		w, err := SumRoundWeights(a, plan.Phases, k)
		if err != nil {
			t.Fatal(err)
		}
		gu, err := round.ChargeFloors(g, w, sec.Threshold, sec.Colluders, fl.Floor, fl.Collusion, fl.Keep, job.Delta-sec.Fail)
		if err != nil {
			t.Fatal(err)
		}
		if gu.Collusion > job.Epsilon*(1+1e-9) || gu.Collusion < prev {
			t.Fatalf("phase %d: charge ε = %v (previous %v, job ε = %v)", k, gu.Collusion, prev, job.Epsilon)
		}
		prev = gu.Collusion
	}
	if prev < 0.99*job.Epsilon {
		t.Errorf("the job's guarantee ε = %v is not tight against the job's %v", prev, job.Epsilon)
	}
	sites := make([]SumSite, K)
	noises := make([]*dp.Mechanism, K)
	for i, ds := range data {
		loss, err := pairwise.LossByName(pairwise.TaskAUC, job.Loss)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := pairwise.NewObjective(ds, pairwise.ObjectiveConfig{Task: pairwise.TaskAUC, Loss: loss, Constraint: "l2", Radius: job.ParamRadius})
		if err != nil {
			t.Fatal(err)
		}
		noises[i] = dp.NewSeededNoise(uint64(100 + i)).(*dp.Mechanism)
		s, err := a.NewSite(job, SiteEnv{Data: ds, Obj: obj, Noise: noises[i], Rand: rand.New(rand.NewPCG(uint64(i), 9))})
		if err != nil {
			t.Fatal(err)
		}
		sites[i] = s.(SumSite)
	}
	comb, err := a.NewCombiner(job, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc := comb.(SumCombiner)
	model := make([]float64, d)
	mask := uint64(1)<<g.Bits - 1
	sigma := sec.SiteSigma(fl.Copies)
	for k := 1; k <= plan.Phases; k++ {
		ids := make([]uint32, K)
		enc := map[uint32][]uint64{}
		vecs := map[uint32][]float64{}
		for i, s := range sites {
			v, _, err := s.SumVector(context.Background(), k, model)
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = uint32(i + 1)
			vecs[ids[i]] = v
			enc[ids[i]] = make([]uint64, g.D)
			if err := g.Encode(enc[ids[i]], v, noises[i]); err != nil {
				t.Fatal(err)
			}
		}
		roundID := make([]byte, 32)
		roundID[0] = byte(k)
		cfg := secagg.Config{RoundID: roundID, Sites: ids, Threshold: sec.Threshold, Bits: g.Bits, Dim: g.D}
		res, _, err := secagg.RunInMemory(cfg, enc, drops[k], crand.Reader)
		if err != nil {
			if res.Sum != nil {
				t.Fatalf("phase %d: aborted round returned a sum", k)
			}
			return nil, k - 1, err
		}
		plain := make([]uint64, g.D)
		real := make([]float64, dim)
		var included []SiteInfo
		for _, id := range res.Included {
			for j, x := range enc[id] {
				plain[j] = (plain[j] + x) & mask
			}
			for j, x := range vecs[id] {
				real[j] += x
			}
			included = append(included, infos[id-1])
		}
		for _, id := range ids {
			_, dropped := drops[k][id]
			if slices.Contains(res.Included, id) == (dropped && drops[k][id] <= secagg.DropMasked) {
				t.Fatalf("phase %d: included %v, drops %v", k, res.Included, drops[k])
			}
		}
		if !slices.Equal(res.Sum, plain) {
			t.Fatalf("phase %d: the secure sum differs from the plain sum of the included sites' encodings", k)
		}
		// Decoded: Σ vectors + noise of |U3| shares, each N_ℤ(0, s²)·γ
		// after an orthogonal map; rounding adds < γ per coordinate per
		// site before it. A coordinate beyond 7σ_sum + K·γ·√D fails with
		// probability < 10⁻¹¹ each (Gaussian tail; the discrete
		// Gaussian's is no heavier), a few hundred coordinates in all.
		dec := make([]float64, dim)
		if err := g.Decode(dec, res.Sum); err != nil {
			t.Fatal(err)
		}
		bound := 7*sigma*math.Sqrt(float64(len(res.Included))) + float64(K)*g.Params().Gamma*math.Sqrt(float64(g.D))
		for j := range dec {
			if math.Abs(dec[j]-real[j]) > bound {
				t.Fatalf("phase %d coordinate %d: decoded %v, sum of vectors %v (bound %v)", k, j, dec[j], real[j], bound)
			}
		}
		model = sc.CombineSum(model, dec, included, sigma*math.Sqrt(float64(len(included))))
	}
	return model, plan.Phases, nil
}

func siteData(K, n, d int) []*pairwise.Dataset {
	rng := rand.New(rand.NewPCG(3, 4))
	out := make([]*pairwise.Dataset, K)
	for i := range out {
		ds := dyadicData(n, d, rng)
		// A signal on feature 0, records kept in the unit ball.
		for r := 0; r < n; r++ {
			ds.X[r*d] = ds.Y[r] / 4
			nrm := pairwise.Norm2(ds.X[r*d : (r+1)*d])
			if nrm > 1 {
				for j := r * d; j < (r+1)*d; j++ {
					ds.X[j] /= nrm
				}
			}
		}
		out[i] = ds
	}
	return out
}

// A multi-phase secure run (fed-dp-gd-grad: 4 sequential rounds; fed-dp-lda: 2;
// fed-dp-local-sgd: ⌈log₂ n⌉ parallel phases; fed-dpegd: ⌊log₂ n⌋): every phase's secure sum
// equals the plain sum of the sites' noisy integer encodings; a site
// dropping mid-phase (after sharing its keys, before its masked input)
// leaves a sum of exactly the survivors when at least t remain, and the
// round aborts with no sum when fewer do.
func TestSecAggMultiPhase(t *testing.T) {
	const K = 5
	data := siteData(K, 40, 4)
	for _, algo := range []string{FedDPGDGrad, FedDPLocalSGD, FedDPEGD, FedDPLDA, FedDPSPAUC} {
		t.Run(algo, func(t *testing.T) {
			w, phases, err := secureRun(t, algo, K, data, nil)
			if err != nil || len(w) != 4 || phases < 2 {
				t.Fatalf("no dropout: %v after %d phases (model %v)", err, phases, w)
			}
			for _, x := range w {
				if math.IsNaN(x) || math.Abs(x) > 1+1e-9 {
					t.Fatalf("model %v outside the unit ball", w)
				}
			}
			// Site 2 drops in phase 2: t = K − 1 survivors suffice.
			drop := map[int]map[uint32]int{2: {2: secagg.DropMasked}}
			if _, phases, err := secureRun(t, algo, K-1, data, drop); err != nil || phases < 2 {
				t.Fatalf("one dropout, t = K − 1: %v after %d phases", err, phases)
			}
			// Sites 2 and 4 drop in phase 2: fewer than t, the round aborts.
			drop = map[int]map[uint32]int{2: {2: secagg.DropMasked, 4: secagg.DropMasked}}
			_, phases, err = secureRun(t, algo, K-1, data, drop)
			if err == nil || phases != 1 || !strings.Contains(err.Error(), "secagg") {
				t.Fatalf("two dropouts, t = K − 1: %v after %d phases, want an abort in phase 2", err, phases)
			}
		})
	}
}

// The DDG's integer sensitivity Δ/γ + √D + 2⁻³⁰·c/γ must be the first two
// terms (the third is a floating-point margin, meant to be negligible) for
// sites as large as ijcnn1's: the clip c of a multi-phase job stays within
// a small multiple of Δ·n, not Δ·4^K.
func TestSecAggPhasesClipMargin(t *testing.T) {
	sites := make([]SiteInfo, 8)
	for i := range sites {
		sites[i] = SiteInfo{Name: fmt.Sprintf("s%d", i), Records: 6249}
	}
	for _, algo := range []string{FedDPGDGrad, FedDPLocalSGD, FedDPEGD, FedDPLDA, FedDPSPAUC} {
		spec := Spec{ID: "j", Algo: algo, Task: "auc", FeatureRadius: 1, Epsilon: 1, Options: protocol.OptionsOf(map[string]float64{OptSecAgg: 1, OptSecAggThreshold: 8})}
		a, err := Configure(&spec)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := a.Plan(&spec, sites, 22)
		if err != nil {
			t.Fatal(err)
		}
		opts, err := PlanSecAgg(a, &spec, sites, 22, plan)
		if err != nil {
			t.Fatal(err)
		}
		job := &protocol.JobAnnounce{Job: "j", Algo: algo, Task: "auc", Params: 22, Phases: plan.Phases, Delta: plan.Delta, Sites: []string{"a", "b", "c", "d", "e", "f", "g", "h"}, Options: opts}
		sec, err := SecAggOf(job)
		if err != nil {
			t.Fatal(err)
		}
		g, err := sec.DDG(22, 8, 1)
		if err != nil {
			t.Fatal(err)
		}
		p := g.Params()
		ideal := p.Sensitivity/p.Gamma + math.Sqrt(float64(g.D))
		if got := g.IntegerSensitivity(); got > 1.001*ideal {
			t.Errorf("%s: integer sensitivity %v, %.3g%% above Δ/γ + √D = %v (clip c/Δ = %.3g)", algo, got, 100*(got/ideal-1), ideal, p.Clip/p.Sensitivity)
		}
	}
}

// The weights of the registry's SumWeighted algorithms are valid for
// their phase counts (1 each for the others), fed-dp-lda's are dp-lda's
// split of μ² (1/√3, 1), its centre's round alone the cheaper. WeightVector and
// UnweightSum are inverse: the decoded sum and its σ come back to the
// vector's units.
func TestSumWeights(t *testing.T) {
	lda, err := Lookup(FedDPLDA)
	if err != nil {
		t.Fatal(err)
	}
	w, err := SumRoundWeights(lda, 2, 2)
	if err != nil || len(w) != 2 || math.Abs(w[0]*math.Sqrt(3)-1) > 1e-15 || w[1] != 1 {
		t.Fatalf("fed-dp-lda's weights %v (%v), want (1/√3, 1)", w, err)
	}
	if w1, err := SumRoundWeights(lda, 2, 1); err != nil || len(w1) != 1 || w1[0] != w[0] {
		t.Fatalf("fed-dp-lda's weights after phase 1: %v (%v)", w1, err)
	}
	if _, err := SumRoundWeights(lda, 3, 3); err == nil {
		t.Fatal("fed-dp-lda with 3 phases: weights accepted")
	}
	g, err := dp.NewDDG(dp.DDGParams{Dim: 45, Clip: 100, Sensitivity: 2, Scale: 1e4, Sites: 4})
	if err != nil {
		t.Fatal(err)
	}
	r1, err1 := g.EpsilonWeighted(w[:1], 4, 1e-5)
	r2, err2 := g.EpsilonWeighted(w[1:], 4, 1e-5)
	if err1 != nil || err2 != nil || !(r1 < r2) {
		t.Fatalf("the centre's round alone ε = %v, the statistics' %v (%v, %v): want the centre's smaller", r1, r2, err1, err2)
	}
	for _, name := range Names() {
		a, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := a.(SumWeighted); !ok {
			for _, k := range []int{1, 2, 5} {
				if w, err := SumRoundWeights(a, k, k); err != nil || len(w) != min(k, SumReleases(a, k, k)) {
					t.Fatalf("%s, %d phases: weights %v (%v)", name, k, w, err)
				}
			}
		}
	}
	orig := []float64{3, -1.5, 0.25}
	v := WeightVector(orig, w[0])
	if orig[0] != 3 || orig[1] != -1.5 || orig[2] != 0.25 {
		t.Fatalf("WeightVector changed its input: %v", orig)
	}
	sigma := UnweightSum(v, 0.7*w[0], w[0])
	if math.Abs(v[0]-3) > 1e-15 || math.Abs(v[1]+1.5) > 1e-15 || math.Abs(v[2]-0.25) > 1e-15 || math.Abs(sigma-0.7) > 1e-15 {
		t.Fatalf("weighted and unweighted: %v, σ %v", v, sigma)
	}
	if u := WeightVector(orig, 1); &u[0] != &orig[0] {
		t.Fatal("weight 1 copied the vector")
	}
}
