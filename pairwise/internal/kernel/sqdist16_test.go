package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSqDist16BoundMatchesRef: the dispatched kernel (AVX2 where the CPU
// has it) gives the reference's sums bit for bit, for every length 0…23,
// bounds that stop it at each check or never, and values whose terms
// round (wide exponents, signed zeros, subnormals).
func TestSqDist16BoundMatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(161, 162))
	val := func() float64 {
		switch rng.IntN(8) {
		case 0:
			return 0
		case 1:
			return math.Copysign(0, -1)
		case 2:
			return 5e-320 * rng.NormFloat64()
		case 3:
			return rng.NormFloat64() * math.Exp2(float64(rng.IntN(80)-40))
		default:
			return rng.NormFloat64()
		}
	}
	for trial := 0; trial < 4000; trial++ {
		m := trial % 24
		q := make([]float64, m)
		blk := make([]float64, 16*m+rng.IntN(3))
		for i := range q {
			q[i] = val()
		}
		for i := range blk {
			blk[i] = val()
		}
		var ref [16]float64
		SqDist16BoundGo(q, blk, math.Inf(1), &ref)
		bounds := []float64{math.Inf(1), -1, 0, math.Inf(-1)}
		for l := 0; l < 4; l++ {
			bounds = append(bounds, ref[rng.IntN(16)]*rng.Float64())
		}
		for _, bound := range bounds {
			var want, got [16]float64
			wantMask := SqDist16BoundGo(q, blk, bound, &want)
			gotMask := SqDist16Bound(q, blk, bound, &got)
			if gotMask != wantMask {
				t.Fatalf("m=%d bound=%g: mask %016b, want %016b (AVX2 %v)", m, bound, gotMask, wantMask, UseAVX2)
			}
			for l := range want {
				if keep := wantMask>>l&1 == 1; keep != !(want[l] > bound) {
					t.Fatalf("m=%d bound=%g lane %d: reference mask bit %v for sum %v", m, bound, l, keep, want[l])
				}
				if math.Float64bits(got[l]) != math.Float64bits(want[l]) {
					t.Fatalf("m=%d bound=%g lane %d: got %v, want %v (AVX2 %v)", m, bound, l, got[l], want[l], UseAVX2)
				}
			}
		}
	}
}

// TestSqDist16BoundRefStops: the reference's sums are the scalar left-to-
// right sums when it does not stop, and it stops at the first check where
// all sixteen exceed the bound (so a mutation of the stop rule shows).
func TestSqDist16BoundRefStops(t *testing.T) {
	m := 10
	q := make([]float64, m)
	blk := make([]float64, 16*m)
	for i := range blk {
		blk[i] = 1 // every term 1: partial sums are the coordinate count
	}
	var out [16]float64
	SqDist16Bound(q, blk, 100, &out)
	for l, v := range out {
		if v != 10 {
			t.Fatalf("lane %d: %v, want 10 (no stop)", l, v)
		}
	}
	SqDist16Bound(q, blk, 3.5, &out)
	for l, v := range out {
		if v != 4 {
			t.Fatalf("lane %d: %v, want 4 (stop at the first check)", l, v)
		}
	}
	blk[16*5+7] = 0 // lane 7 gets no term at a = 5: 7 after eight, 9 at the end
	SqDist16Bound(q, blk, 7.5, &out)
	if out[7] != 9 || out[0] != 10 {
		t.Fatalf("lanes 0, 7: %v, %v, want 10, 9 (lane 7 at 7 ≤ 7.5 after eight keeps it going)", out[0], out[7])
	}
}
