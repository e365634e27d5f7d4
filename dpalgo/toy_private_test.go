package dpalgo_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	_ "github.com/pairfed/pairfed/algo/all"
	"github.com/pairfed/pairfed/audit"
	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dp"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/simulate"
)

// This file alone adds a private single-site algorithm — no other file
// knows it — and runs it through the three paths a private algorithm
// serves: `pairfed train` (experiment.Run), `pairfed audit` (audit.Audit)
// and federated one-shot averaging (fed-oneshot, simulated in process):
// the proof that a private algorithm is one file of this package.
//
// dp-toy-direction: the noisy label-weighted sum of the records,
//
//	w = Π_C(Σ_i y_i x_i + N(0, σ² I_d)),
//
// the class-mean difference direction up to the class counts, a linear
// AUC scorer.
//
// Proof. Records satisfy ‖x‖ ≤ R (checked by PrivateSetup) and y = ±1.
// Replacing one record (x, y) by (x′, y′) changes the sum by
// y x − y′x′, of norm ≤ 2R (removing or adding one changes it by ≤ R):
// Δ₂ = 2R. One Gaussian release of ℓ2 sensitivity Δ₂ with the σ that
// pairwise.CalibrateGaussian certifies by the exact Gaussian-DP
// accountant (the secure sampler's snapping allowance and discrete-noise
// δ term for the d coordinates included) is (ε, δ)-DP; the projection is
// post-processing.
const toyName = "dp-toy-direction"

var toyAlg = &pairwise.Algorithm{
	Name:         toyName,
	Title:        "test only: the noisy label-weighted sum of the records",
	Paper:        "pairfed (a test's toy)",
	Ref:          "dpalgo/toy_private_test.go",
	Setting:      "one-shot",
	Tasks:        []pairwise.Task{pairwise.TaskAUC},
	Assumptions:  "records with ‖x‖ ≤ R, labels ±1",
	Private:      true,
	PrivacyModel: "record-level (ε, δ)-DP: one Gaussian release of Σ y_i x_i, Δ₂ = 2R",
}

func init() {
	toyAlg.Run = runToy
	pairwise.Register(toyAlg)
}

func runToy(ctx context.Context, obj pairwise.Objective, cfg pairwise.RunConfig, rng *rand.Rand) (*pairwise.Result, error) {
	_, rep, err := pairwise.PrivateSetup(toyAlg, obj, &cfg)
	if err != nil {
		return nil, err
	}
	pr := cfg.Privacy
	sens := 2 * pr.FeatureRadius
	sig, err := pairwise.CalibrateGaussian(toyName, pr, rep, nil, nil, pairwise.GaussOption{
		Plan: dp.GaussianPlan{Sensitivities: []float64{sens}},
		How:  "2R: replacing one record moves Σ y_i x_i by ‖y x − y′x′‖ ≤ 2R",
	})
	if err != nil {
		return nil, err
	}
	s := obj.Data()
	w := make([]float64, obj.NumParams())
	for i := 0; i < s.N; i++ {
		s.AddScaled(w, i, s.Y[i])
	}
	pr.Noise.AddGaussian(w, sig[0]) // the release
	obj.Project(w)
	rep.Releases = 1
	rep.Formula = "σ: the smallest the exact Gaussian-DP accountant certifies for Δ₂ = 2R"
	rep.Accountant = "one Gaussian release (exact Gaussian DP); the model is post-processing"
	return &pairwise.Result{W: w, Steps: 1, Privacy: rep}, nil
}

func loadDiabetes(t *testing.T) *data.Table {
	t.Helper()
	tab, err := data.Load("../datasets/diabetes", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestToyPrivateAlgorithmTrains: `pairfed train` runs it — the registry
// finds it, the certifier certifies its report, and it learns: the class
// direction ranks diabetes above chance (0.5; it measures 0.70 with these
// seeds: at ε = 4, σ ≈ 2 against a sum of norm in the tens, the noise
// barely moves the direction, so the bound 0.6 leaves room for any seed).
func TestToyPrivateAlgorithmTrains(t *testing.T) {
	tab := loadDiabetes(t)
	rep, err := experiment.Run(context.Background(), experiment.Spec{Algo: toyName, Epsilon: 4, FeatureRadius: 1, Runs: 2, Folds: 2, Seed: 3}, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Privacy == nil || rep.Privacy.PrivacyReport == nil {
		t.Fatalf("no privacy report: %+v", rep)
	}
	pr := rep.Privacy.PrivacyReport
	if pr.Releases != 1 || len(pr.Sigmas) != 1 || !(pr.Sigmas[0] > 0) || pr.CertifiedEpsilon > 4 || pr.CertifiedEpsilon < 3 {
		t.Fatalf("report: releases %d, σ %v, certified ε %v (want one release certified at ε ≤ 4)", pr.Releases, pr.Sigmas, pr.CertifiedEpsilon)
	}
	if !(rep.AUC.Mean > 0.6) {
		t.Fatalf("AUC %.3f: the noisy class direction should rank diabetes well above chance", rep.AUC.Mean)
	}
	// The paper calibration is refused for pairfed's own mechanisms.
	if _, err := experiment.Run(context.Background(), experiment.Spec{Algo: toyName, Epsilon: 4, FeatureRadius: 1, Runs: 1, Folds: 2, Seed: 3, Calibration: pairwise.CalibrationPaper}, tab, nil); err == nil {
		t.Fatal("--calibration paper accepted for a mechanism with no printed σ")
	}
}

// TestToyPrivateAlgorithmAudits: `pairfed audit` runs it: the white-box
// audit of its noisy release finds no ε above the claim at the real noise,
// and catches a deliberate break (a tenth of the noise: the release is then
// ≈ 10ε-DP, far outside the claim).
func TestToyPrivateAlgorithmAudits(t *testing.T) {
	ctx := context.Background()
	res, err := audit.Audit(ctx, audit.AuditSpec{Algo: toyName, Epsilon: 1, Trials: 2000, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Consistent || res.EpsilonLowerBound > 1 {
		t.Fatalf("the audit of the real mechanism: ε ≥ %.3f, consistent %v", res.EpsilonLowerBound, res.Consistent)
	}
	broken, err := audit.Audit(ctx, audit.AuditSpec{Algo: toyName, Epsilon: 1, Trials: 2000, Seed: 7, NoiseScale: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if broken.Consistent || !(broken.EpsilonLowerBound > 1) {
		t.Fatalf("the audit missed a tenth of the noise: ε ≥ %.3f, consistent %v", broken.EpsilonLowerBound, broken.Consistent)
	}
}

// TestToyPrivateAlgorithmFederates: fed-oneshot runs it as its local
// algorithm at every site of a simulated federation (each site releases its
// own noisy direction once; the coordinator averages them). It measures
// 0.65 here (a third of the records per site); chance is 0.5.
func TestToyPrivateAlgorithmFederates(t *testing.T) {
	tab := loadDiabetes(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	spec := simulate.Spec{Sites: 3, Seed: 5, Transport: "mem", Tick: 5 * time.Millisecond,
		Job: coordinator.JobConfig{Algo: fedalgo.FedOneShot, LocalAlgo: toyName, Epsilon: 4, Delta: 1e-5}}
	tr, err := simulate.RunTrial(ctx, spec, tab, nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := tr.Outcome
	if out.Job.Algo != fedalgo.FedOneShot || len(out.Result.Sites) != 3 || len(out.Privacy) != 3 {
		t.Fatalf("job %s, %d sites, %d privacy statements", out.Job.Algo, len(out.Result.Sites), len(out.Privacy))
	}
	for _, p := range out.Privacy {
		if p.Epsilon > 4 || len(p.Sigmas) != 1 || !(p.Sigmas[0] > 0) {
			t.Fatalf("site %s: ε %v, σ %v (want one release at ε ≤ 4)", p.Site, p.Epsilon, p.Sigmas)
		}
	}
	if math.IsNaN(tr.AUC) || !(tr.AUC > 0.6) {
		t.Fatalf("federated AUC %.3f: the averaged noisy directions should rank diabetes well above chance", tr.AUC)
	}
}
