package round

import (
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
