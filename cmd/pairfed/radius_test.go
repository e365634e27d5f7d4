package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// radiusFixture writes a 16-feature CSV (letter-like: min-max scaling maps
// every feature onto [−1, 1], so records have norms up to 4) in which
// feature 1 alone ranks perfectly: positives in [0.3, 1], negatives in
// [0, 0.25] (one record at −1 and one at 1 pin its range); features 2–16
// are ±1 noise on a random half of the records, 0 on the rest. Unclipped,
// w = e₁ has AUC 1. Clipped to R = 1, a positive at s with 15 noisy
// features (norm √(s²+15) ≥ 3.9) scores at most 1/4, below many quiet
// negatives in [0, 0.25]: clipping reorders the very direction that ranks
// (about a quarter × a third of the pairs; the exact AUC is computed).
func radiusFixture(t *testing.T) (string, float64) {
	rng := rand.New(rand.NewPCG(16, 1))
	var sb strings.Builder
	type rec struct {
		y bool
		x []float64
	}
	var recs []rec
	for i := 0; i < 400; i++ {
		r := rec{y: i%2 == 0, x: make([]float64, 16)}
		switch {
		case i == 0:
			r.x[0] = 1 // pins feature 1's range to [−1, 1]: min-max scaling keeps it
		case i == 1:
			r.x[0] = -1
		case r.y:
			r.x[0] = 0.3 + 0.7*rng.Float64()
		default:
			r.x[0] = 0.25 * rng.Float64()
		}
		if rng.IntN(2) == 0 {
			for j := 1; j < 16; j++ {
				r.x[j] = float64(2*rng.IntN(2) - 1)
			}
		}
		recs = append(recs, r)
		lab := 0
		if r.y {
			lab = 1
		}
		fmt.Fprintf(&sb, "%d", lab)
		for _, v := range r.x {
			fmt.Fprintf(&sb, ",%g", v)
		}
		sb.WriteByte('\n')
	}
	// The AUC of e₁ on the records clipped to R = 1 (the fixture is already
	// on [−1, 1] per feature, so min-max scaling moves it little).
	clipped := func(r rec) float64 {
		var n2 float64
		for _, v := range r.x {
			n2 += v * v
		}
		if n2 > 1 {
			return r.x[0] / math.Sqrt(n2)
		}
		return r.x[0]
	}
	var good, pairs float64
	for _, p := range recs {
		for _, q := range recs {
			if p.y && !q.y {
				pairs++
				if clipped(p) > clipped(q) {
					good++
				}
			}
		}
	}
	path := filepath.Join(t.TempDir(), "fixture.csv")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, good / pairs
}

// TestDefaultRadiusCostsNoAUC (issue 16 item 2): a non-private run is not
// clipped unless asked: its default equals --radius 0 exactly (same seeds,
// same computation), and on the fixture, where clipping provably breaks
// the ranking direction (e₁'s clipped AUC < 1, computed above), the
// explicit --radius 1 run does worse than the default. Deterministic: fixed
// seeds, no false failures.
func TestDefaultRadiusCostsNoAUC(t *testing.T) {
	path, e1Clipped := radiusFixture(t)
	if e1Clipped > 0.99 {
		t.Fatalf("fixture: clipping leaves e₁'s AUC at %.4f; the construction should break it", e1Clipped)
	}
	run := func(extra ...string) map[string]any {
		t.Helper()
		args := append([]string{"train", "--data", path, "--label-column", "1", "--eta", "1", "--param-radius", "10", "--runs", "2", "--json", "--no-progress"}, extra...)
		out, err := runCLI(t, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &m); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return m
	}
	auc := func(m map[string]any) float64 { return m["auc"].(map[string]any)["mean"].(float64) }
	def, none, one := run(), run("--radius", "0"), run("--radius", "1")
	if r := def["feature_radius"].(float64); r != 0 {
		t.Errorf("default non-private run clips to R = %v, want no clipping", r)
	}
	if auc(def) != auc(none) {
		t.Errorf("default AUC %.4f ≠ --radius 0 AUC %.4f", auc(def), auc(none))
	}
	if !(auc(one) < auc(def)) {
		t.Errorf("--radius 1 AUC %.4f not below the default's %.4f on a fixture where clipping breaks the ranking (e₁ clipped: %.4f)", auc(one), auc(def), e1Clipped)
	}
	t.Logf("AUC default %.4f, --radius 1 %.4f; e₁ clipped %.4f", auc(def), auc(one), e1Clipped)
	// Private algorithms keep the R their proofs need.
	out, err := runCLI(t, "train", "--data", path, "--label-column", "1", "--algo", "dp-gd", "--epsilon", "1", "--noise-seed", "1", "--json", "--no-progress")
	if err != nil {
		t.Fatal(err, out)
	}
	if !strings.Contains(out, `"feature_radius": 1`) {
		t.Errorf("private default radius is not 1:\n%s", out)
	}
}
