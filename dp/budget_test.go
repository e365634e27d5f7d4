package dp

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// BudgetRest leaves parts + rest ≤ total exactly (checked with big.Rat,
// independently of the big.Float it uses) and within a few ulps of the
// float difference; the random totals include the ε − ε/50 + ε/50 > ε
// cases the plain difference gets wrong (counted: the test fails if none
// occurred, so it cannot pass vacuously).
func TestBudgetRest(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	moved := 0
	for i := 0; i < 20000; i++ {
		total := math.Ldexp(r.Float64()+0.5, r.IntN(40)-30)
		parts := []float64{total / 50}
		if i%2 == 1 {
			parts = []float64{total * 0.05, total * 0.01}
		}
		plain := total
		for _, p := range parts {
			plain -= p
		}
		rest := BudgetRest(total, parts...)
		sum := new(big.Rat).SetFloat64(rest)
		for _, p := range parts {
			sum.Add(sum, new(big.Rat).SetFloat64(p))
		}
		if sum.Cmp(new(big.Rat).SetFloat64(total)) > 0 {
			t.Fatalf("total %v parts %v: rest %v makes the exact sum exceed the total", total, parts, rest)
		}
		if rest != plain {
			moved++
			if rest < plain-4*(math.Nextafter(plain, math.Inf(1))-plain) {
				t.Fatalf("total %v: rest %v is more than 4 ulps below %v", total, rest, plain)
			}
		}
	}
	if moved == 0 {
		t.Fatal("no case needed the exact check: the test exercised nothing")
	}
	if got := BudgetRest(1, 2); !(got < 0) {
		t.Errorf("BudgetRest(1, 2) = %v, want negative", got)
	}
}
