//go:build long

package audit

import (
	"context"
	"fmt"
	"testing"
)

// The long federated audits (`go test -tags long ./audit -run Long`, a few
// minutes): the default 2000 trials per side of `pairfed audit` and of the
// table in docs/privacy.md, and a larger consortium — K = 10 sites of 16 records, secure
// aggregation with threshold t = 7 and κ = 2 colluders, so that the sum
// holds t − κ = 5 honest shares — at confidence 0.999 per view (a correct
// site fails a view with probability ≤ 0.1%; seeded, deterministic). ×1
// within every claim, ×0.1 caught except the listed fedGaps; and the
// tampered announcement caught for every algorithm that releases a sum.
func TestLongFederatedAudits(t *testing.T) {
	t.Parallel()
	for _, base := range fedViews() {
		for _, big := range []bool{false, true} {
			s := base
			name := fedName(s)
			if big {
				s.Sites, s.Records = 10, 16
				if s.SecureAggregation {
					s.Threshold, s.Colluders = 7, 2
				}
				name += "/K10"
			}
			for _, scale := range []float64{1, 0.1} {
				t.Run(fmt.Sprintf("%s×%g", name, scale), func(t *testing.T) {
					t.Parallel()
					s := s
					s.Epsilon, s.Seed, s.NoiseScale, s.Confidence = 1, 7, scale, 0.999
					res, err := AuditFederated(context.Background(), s)
					if err != nil {
						t.Fatal(err)
					}
					checkViews(t, s, res)
					_, gap := fedGaps[s.Algo]
					for _, v := range res.Views {
						t.Logf("%s", v.Summary())
						switch {
						case scale == 1 && !v.Consistent:
							t.Errorf("%s at ×1: ε_lb = %.3f above %.3f", v.View, v.EpsilonLowerBound, fedBar(v))
						case scale < 1 && !gap && v.Consistent:
							t.Errorf("%s at ×%g not caught: ε_lb = %.3f ≤ %.3f", v.View, scale, v.EpsilonLowerBound, fedBar(v))
						}
					}
				})
			}
		}
		if !base.SecureAggregation {
			continue
		}
		t.Run(fedName(base)+"/tampered", func(t *testing.T) {
			t.Parallel()
			s := base
			s.Epsilon, s.Seed, s.Tamper = 1, 8, TamperSensitivity
			res, err := AuditFederated(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range res.Views {
				t.Logf("%s", v.Summary())
				if v.Consistent || v.EpsilonLowerBound < 5 {
					t.Errorf("tampered %s: ε_lb = %.3f, want > 5 (the claim is %.3f)", v.View, v.EpsilonLowerBound, v.ClaimedEpsilon)
				}
			}
		})
	}
}
