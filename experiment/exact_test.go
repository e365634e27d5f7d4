package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/dp"
)

// PublicSizeSplit's sizes depend on n only: diabetes (268 / 500) and the
// same table with one negative label flipped (267 / 501) both give
// 614 training and 154 test records (data.StratifiedSplit gives 614 and
// 615), every class keeps its share of the test split within one record,
// and the split is a partition of the records.
func TestPublicSizeSplitSizesFromNOnly(t *testing.T) {
	tab := loadBundled(t, "diabetes")
	y := slices.Clone(tab.Y)
	flipped := slices.Clone(y)
	neg := slices.IndexFunc(y, func(v float64) bool { return v < 0 })
	flipped[neg] = -flipped[neg] // 267 / 501: 53 + 100 test records stratified
	stratSizes := map[int]bool{}
	for _, labels := range [][]float64{y, flipped} {
		for seed := range uint64(5) {
			tr, te, err := PublicSizeSplit(labels, 0.2, rand.New(rand.NewPCG(seed, 1)))
			if err != nil {
				t.Fatal(err)
			}
			if len(tr) != 614 || len(te) != 154 {
				t.Fatalf("sizes %d/%d, want 614/154 whatever the labels", len(tr), len(te))
			}
			seen := make([]bool, len(labels))
			for _, i := range append(slices.Clone(tr), te...) {
				if seen[i] {
					t.Fatalf("record %d in both parts", i)
				}
				seen[i] = true
			}
			pos, all := 0, 0
			for _, v := range labels {
				if v > 0 {
					all++
				}
			}
			for _, i := range te {
				if labels[i] > 0 {
					pos++
				}
			}
			if want := float64(all) * 154 / float64(len(labels)); float64(pos) < want-1 || float64(pos) > want+1 {
				t.Errorf("%d positives in the test split, want %.1f ± 1", pos, want)
			}
			str, _, _ := data.StratifiedSplit(labels, 0.2, rand.New(rand.NewPCG(seed, 1)))
			stratSizes[len(str)] = true
		}
	}
	if len(stratSizes) < 2 {
		t.Errorf("the stratified split's size did not move with the flip (%v): the example no longer shows the problem", stratSizes)
	}
	if _, _, err := PublicSizeSplit([]float64{1}, 0.2, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("one record split")
	}
}

// --tune's report carries the selection's certificate, not the chosen
// candidate's: certified (ε, δ) = the request's δ and SelectionEpsilon at
// the per-run μ (≤ the request), and K is only in the diagnostics (not in
// the privacy statement nor in the tune section of the JSON).
func TestTuneCertificateIsTheSelections(t *testing.T) {
	tab, err := data.Load("../datasets/diabetes", data.Options{Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Tune: true, Epsilon: 1, Delta: 1e-4, DeltaSet: true, Runs: 2, Seed: 5, FeatureRadius: 1, Scale: "none"}
	rep, err := Run(context.Background(), spec, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Privacy
	tr := rep.Tune[len(rep.Tune)-1]
	want, err := dp.SelectionEpsilon(dp.Selection{Gamma: tr.Gamma}, tr.PerRunMu, 1e-4)
	if err != nil {
		t.Fatal(err)
	}
	if p.CertifiedEpsilon != want || p.CertifiedDelta != 1e-4 || want > 1 {
		t.Errorf("certified (%v, %v), want the selection's (%v, 1e-4); the candidate ran at (%v, %v)", p.CertifiedEpsilon, p.CertifiedDelta, want, tr.PerRunEpsilon, tr.PerRunDelta)
	}
	if d := rep.Diagnostics; d == nil || len(d.TuneRuns) != 2 || d.TuneRuns[1] != tr.Runs || !strings.Contains(d.Note, "not covered") {
		t.Errorf("diagnostics %+v: want K of both selections, labelled not covered", d)
	}
	priv, _ := json.Marshal(p)
	tune, _ := json.Marshal(rep.Tune)
	for _, s := range []string{string(priv), string(tune)} {
		if strings.Contains(s, `"runs"`) || strings.Contains(s, fmt.Sprintf("after %d runs", tr.Runs)) {
			t.Errorf("K appears outside the diagnostics: %s", s)
		}
	}
	if !strings.Contains(p.Neighbours, "replace-one") || !strings.Contains(p.Neighbours, "n = 614") {
		t.Errorf("neighbouring relation %q", p.Neighbours)
	}
}

// δ ≥ 1/n_train for a private run is refused before anything runs (naming
// the value, the bound and the fix); the default δ = 1/(10·n) is untouched
// and seeded what-if runs keep running.
func TestDeltaAtLeastOneOverNRefused(t *testing.T) {
	tab := loadBundled(t, "diabetes")
	_, err := Run(context.Background(), Spec{Algo: "dp-ssp-mean", Epsilon: 1, Delta: 0.5, DeltaSet: true, FeatureRadius: 1, Scale: "none", Seed: 1}, tab, nil)
	if err == nil || !strings.Contains(err.Error(), "--delta 0.5") || !strings.Contains(err.Error(), "1/n = 0.00163") || !strings.Contains(err.Error(), "n = 614") {
		t.Fatalf("δ = 0.5: %v", err)
	}
	rep, err := Run(context.Background(), Spec{Algo: "dp-ssp-mean", Epsilon: 1, FeatureRadius: 1, Scale: "none", Seed: 1}, tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rep.Privacy.Delta, dp.DefaultDelta(614); got != want {
		t.Errorf("default δ %v, want 1/(10·614) = %v", got, want)
	}
	if _, err := Run(context.Background(), Spec{Algo: "dp-ssp-mean", Epsilon: 1, Delta: 0.5, DeltaSet: true, FeatureRadius: 1, Scale: "none", Seed: 1, Seeded: true, NoiseSeed: 2}, tab, nil); err != nil {
		t.Errorf("seeded what-if run refused: %v", err)
	}
}

// Repeated releases state their total in ε and δ.
func TestRepeatedReleaseNoteStatesDelta(t *testing.T) {
	n := RepeatedReleaseNote(3, "models", 1, 1e-5, 0.5)
	for _, s := range []string{"(ε, δ) = (3, 3e-05)", "μ·√n = 0.866"} {
		if !strings.Contains(n, s) {
			t.Errorf("%q lacks %q", n, s)
		}
	}
}

// Stratified k-fold (kept for private runs) has fold sizes from n alone:
// a flipped label leaves every fold's size unchanged.
func TestStratifiedFoldSizesFromNOnly(t *testing.T) {
	tab := loadBundled(t, "diabetes")
	y := slices.Clone(tab.Y)
	flipped := slices.Clone(y)
	neg := slices.IndexFunc(y, func(v float64) bool { return v < 0 })
	flipped[neg] = -flipped[neg]
	for k := 2; k <= 10; k++ {
		a, err1 := data.StratifiedKFold(y, k, rand.New(rand.NewPCG(1, 2)))
		b, err2 := data.StratifiedKFold(flipped, k, rand.New(rand.NewPCG(1, 2)))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		for f := range a {
			want := len(y) / k
			if f < len(y)%k {
				want++
			}
			if len(a[f]) != want || len(b[f]) != want {
				t.Errorf("k = %d, fold %d: sizes %d and %d, want %d", k, f, len(a[f]), len(b[f]), want)
			}
		}
	}
}
