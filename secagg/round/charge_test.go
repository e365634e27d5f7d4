package round

import (
	"math"
	"sync"
	"testing"

	"github.com/pairfed/pairfed/dp"
)

// The charge at the threshold is never below what any completed round
// gives (survivors n ∈ [t, K], colluders c: n − c noise shares), and
// collusion only raises it.
func TestChargeNeverUnderCounts(t *testing.T) {
	const K, delta = 8, 1e-6
	g, err := dp.NewDDG(dp.DDGParams{Dim: 16, Clip: 10, Sensitivity: 2, Scale: 600, Sites: K})
	if err != nil {
		t.Fatal(err)
	}
	th := 6
	for c := 0; c < th; c++ {
		ch, err := Charge(g, 1, th, c, delta)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Collusion < ch.Coordinator {
			t.Fatalf("collusion ε %v below coordinator ε %v", ch.Collusion, ch.Coordinator)
		}
		for n := th; n <= K; n++ {
			actual, err := g.Epsilon(1, n-c, delta)
			if err != nil {
				t.Fatal(err)
			}
			if actual > ch.Collusion {
				t.Fatalf("t=%d c=%d n=%d: round gives ε %v > charged %v", th, c, n, actual, ch.Collusion)
			}
			coord, _ := g.Epsilon(1, n, delta)
			if coord > ch.Coordinator {
				t.Fatalf("n=%d: coordinator ε %v > charged %v", n, coord, ch.Coordinator)
			}
		}
	}
	if _, err := Charge(g, 1, th, th, delta); err == nil {
		t.Fatal("t colluders accepted (no honest share left)")
	}
}

// The local-only guarantee is one share's (n = 1, every other site and
// the coordinator colluding): never below the threshold's, equal to it
// when t − κ = 1, and larger than it when more shares are counted.
func TestChargeLocal(t *testing.T) {
	const delta = 1e-6
	g, err := dp.NewDDG(dp.DDGParams{Dim: 16, Clip: 10, Sensitivity: 2, Scale: 600, Sites: 8})
	if err != nil {
		t.Fatal(err)
	}
	one, err := g.Epsilon(3, 1, delta)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ t, k int }{{6, 0}, {6, 3}, {6, 5}, {2, 1}} {
		ch, err := Charge(g, 3, c.t, c.k, delta)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Local != one {
			t.Errorf("t=%d κ=%d: local ε %v, want one share's %v", c.t, c.k, ch.Local, one)
		}
		if c.t-c.k > 1 && !(ch.Local > ch.Collusion) {
			t.Errorf("t=%d κ=%d: local ε %v not above the %d shares' %v", c.t, c.k, ch.Local, c.t-c.k, ch.Collusion)
		}
	}
}

// The memo changes no value: concurrent callers with the same inputs get
// what the direct computation gives, and other inputs are not confused
// with them.
func TestChargeMemo(t *testing.T) {
	g, err := dp.NewDDG(dp.DDGParams{Dim: 12, Clip: 1, Sensitivity: 2, Scale: 30, Sites: 9, RotationSeed: 77})
	if err != nil {
		t.Fatal(err)
	}
	want, err := charge(g, []float64{1, 1}, 6, 1, 6, 5, 1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	other, err := charge(g, []float64{1, 1}, 5, 1, 5, 4, 1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	got := make([]Guarantee, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = Charge(g, 2, 6, 1, 1e-5)
		}()
	}
	wg.Wait()
	for i, gu := range got {
		if gu != want {
			t.Fatalf("caller %d: %+v, want %+v", i, gu, want)
		}
	}
	if gu, _ := Charge(g, 2, 5, 1, 1e-5); gu != other || gu == want {
		t.Fatalf("t = 5: %+v, want %+v", gu, other)
	}
	// Weights are part of the key: a lighter first release is cheaper,
	// and two weightings of the same count are not confused.
	g, err = dp.NewDDG(dp.DDGParams{Dim: 12, Clip: 1, Sensitivity: 2, Scale: 3000, Sites: 9, RotationSeed: 77})
	if err != nil {
		t.Fatal(err)
	}
	if want, err = charge(g, []float64{1, 1}, 6, 1, 6, 5, 1, 1e-5); err != nil || math.IsInf(want.Collusion, 1) {
		t.Fatalf("weights (1, 1): %+v, %v", want, err)
	}
	light, err := charge(g, []float64{0.5, 1}, 6, 1, 6, 5, 1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if gu, _ := ChargeFloors(g, []float64{0.5, 1}, 6, 1, 6, 5, 1, 1e-5); gu != light || !(gu.Collusion < want.Collusion) {
		t.Fatalf("weights (½, 1): %+v, want %+v below %+v", gu, light, want)
	}
	if gu, _ := ChargeFloors(g, []float64{1, 0.5}, 6, 1, 6, 5, 1, 1e-5); gu != light {
		t.Fatalf("weights (1, ½): %+v, want (½, 1)'s %+v (composition is symmetric)", gu, light)
	}
	if _, err := ChargeFloors(g, []float64{1, 1.5}, 6, 1, 6, 5, 1, 1e-5); err == nil {
		t.Fatal("a weight above 1 accepted")
	}
}

// ChargeFloors counts the floors it is given: a sparse variant's floor
// below t gives a larger ε than the complete graph's at t (fewer honest
// shares in the sum), Charge is ChargeFloors at t and t − κ, and floors
// outside [1, t] / [1, t − κ], or a collusion floor above the other, are
// refused.
func TestChargeFloors(t *testing.T) {
	g, err := dp.NewDDG(dp.DDGParams{Dim: 12, Clip: 1, Sensitivity: 2, Scale: 3e5, Sites: 40, RotationSeed: 77})
	if err != nil {
		t.Fatal(err)
	}
	full, err := Charge(g, 2, 27, 3, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	same, err := ChargeFloors(g, []float64{1, 1}, 27, 3, 27, 24, 1, 1e-5)
	if err != nil || same != full {
		t.Fatalf("ChargeFloors at t, t − κ = %+v (%v), Charge = %+v", same, err, full)
	}
	sparse, err := ChargeFloors(g, []float64{1, 1}, 27, 3, 12, 9, 1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if !(sparse.Coordinator > full.Coordinator && sparse.Collusion > full.Collusion) || sparse.Floor != 12 || sparse.CollusionFloor != 9 {
		t.Fatalf("floors 12 / 9: %+v; at t: %+v", sparse, full)
	}
	for _, f := range [][2]int{{0, 0}, {28, 24}, {27, 25}, {10, 11}, {-1, 1}} {
		if _, err := ChargeFloors(g, []float64{1, 1}, 27, 3, f[0], f[1], 1, 1e-5); err == nil {
			t.Fatalf("floors %v accepted", f)
		}
	}
}
