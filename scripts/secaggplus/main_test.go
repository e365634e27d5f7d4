package main

import (
	"math"
	"testing"
)

// exactTail2XY is P[2X + Y ≥ m] by convolving the two binomial laws.
func exactTail2XY(nx, ny int, p float64, m int) float64 {
	pmf := func(n int) []float64 {
		out := make([]float64, n+1)
		for k := 0; k <= n; k++ {
			out[k] = math.Exp(logChoose(n, k) + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
		}
		return out
	}
	px, py := pmf(nx), pmf(ny)
	tail := 0.0
	for x, a := range px {
		for y, b := range py {
			if 2*x+y >= m {
				tail += a * b
			}
		}
	}
	return tail
}

// The Chernoff bounds must never be below the exact probabilities they
// bound (else the printed floor would be optimistic), and must not be
// vacuous where the exact tail is tiny.
func TestBoundsAboveExact(t *testing.T) {
	for _, c := range []struct {
		nx, ny int
		p      float64
		m      int
	}{{10, 0, 0.1, 5}, {45, 20, 0.05, 12}, {190, 100, 0.1, 80}, {6, 30, 0.3, 20}, {0, 50, 0.2, 25}} {
		exact := exactTail2XY(c.nx, c.ny, c.p, c.m)
		bound := math.Exp(logTail2XY(c.nx, c.ny, c.p, c.m))
		if bound < exact*(1-1e-9) {
			t.Errorf("tail(%+v): bound %g below exact %g", c, bound, exact)
		}
		if exact < 1e-6 && bound > 1e3*exact+1e-4 {
			t.Errorf("tail(%+v): bound %g vacuous against exact %g", c, bound, exact)
		}
	}
	for _, c := range []struct {
		n int
		p float64
		m int
	}{{100, 0.5, 30}, {64, 0.95, 40}, {20, 0.9, 12}, {1000, 0.1, 50}} {
		exact := 0.0
		for k := 0; k < c.m; k++ {
			exact += math.Exp(logChoose(c.n, k) + float64(k)*math.Log(c.p) + float64(c.n-k)*math.Log1p(-c.p))
		}
		if bound := math.Exp(logBinLower(c.n, c.p, c.m)); bound < exact*(1-1e-9) {
			t.Errorf("lower(%+v): bound %g below exact %g", c, bound, exact)
		}
	}
}

// More colluders or a sparser graph can only lower the floor, and the
// complete-graph floor t − κ caps it.
func TestFloorMonotone(t *testing.T) {
	K := 512
	tt := 2*K/3 + 1
	prev := 0
	for _, k := range []float64{96, 192, 384} {
		r, ok := size(K, tt, 0, k, 1e-10, 0.05, 1e-6)
		if !ok {
			t.Fatalf("k=%v: no live τ", k)
		}
		if r.floor < prev || r.floor > tt {
			t.Errorf("k=%v: floor %d after %d (cap %d)", k, r.floor, prev, tt)
		}
		prev = r.floor
	}
	r0, _ := size(K, tt, 0, 192, 1e-10, 0.05, 1e-6)
	r1, ok := size(K, tt, 25, 192, 1e-10, 0.05, 1e-6)
	if ok && r1.floor > r0.floor {
		t.Errorf("colluders raised the floor: %d > %d", r1.floor, r0.floor)
	}
}
