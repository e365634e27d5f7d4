package audit

import (
	"context"
	"testing"

	"github.com/pairfed/pairfed/pairwise"
)

// Every private algorithm must pass its own audit: the empirical lower bound
// on ε stays at or below the claimed ε. The audit's confidence bounds fail
// a correct mechanism with probability ≤ 5% per algorithm; the seeds are
// fixed, so this test is deterministic (it was checked to pass, and a
// failure after a change means the change made the mechanism leak more —
// or moved the seeds into the 5% tail, which a rerun with another seed
// distinguishes).
func TestAuditEveryPrivateAlgorithmIsConsistent(t *testing.T) {
	for _, a := range pairwise.Algorithms() {
		if !a.Private {
			continue
		}
		a := a
		t.Run(a.Name, func(t *testing.T) {
			res, err := Audit(context.Background(), AuditSpec{Algo: a.Name, Epsilon: 1, Trials: 300, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: ε_lb = %.3f (claimed 1), FPR %.3f FNR %.3f, %s", a.Name, res.EpsilonLowerBound, res.FPR, res.FNR, res.Loss)
			if !res.Consistent || res.EpsilonLowerBound > 1 {
				t.Fatalf("audit lower bound %.3f exceeds the claimed ε = 1", res.EpsilonLowerBound)
			}
		})
	}
}

// With the noise deliberately scaled down 10×, the audit must catch the
// violation: ε_lb > claimed ε. dp-gd-grad ([K22] Alg 1) is the canonical
// case: its release is a sum of noisy full gradients, and the canary's
// gradient reaches the Lipschitz bound.
func TestAuditCatchesTenfoldTooLittleNoise(t *testing.T) {
	for _, algo := range []string{"dp-gd-grad"} {
		res, err := Audit(context.Background(), AuditSpec{Algo: algo, Epsilon: 1, Trials: 1000, Seed: 2, NoiseScale: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		if res.EpsilonLowerBound <= 1 {
			t.Fatalf("%s with σ/10: ε_lb = %.3f, want > 1", algo, res.EpsilonLowerBound)
		}
	}
}

func TestAuditRejectsBadRequests(t *testing.T) {
	for _, s := range []AuditSpec{{Algo: "sgd-prev", Epsilon: 1}, {Algo: "dp-gd-grad", Epsilon: 0}, {Algo: "nope", Epsilon: 1}, {Algo: "dp-gd-grad", Epsilon: 1, Trials: 3}} {
		if _, err := Audit(context.Background(), s); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
}
