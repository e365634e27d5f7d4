package kernel

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// Every kernel must compute its Go reference's values bit for bit (NaN
// payloads aside: Go and the hardware may propagate different ones, and
// every NaN is the same model failure). The tests draw random inputs of
// every length up to a few vector widths past each loop's tails — 0, 1, 7,
// 8, 9, 63, 64, 65, … — with NaN, ±Inf and −0 mixed in. Where the CPU lacks
// the instructions (or under the purego tag) the dispatched kernel is the
// reference and the comparison is skipped, saying so; the references are
// still checked against their specifications.

// awkward are the lengths every kernel is tried at: every length to 41
// (each tail of the 4- and 2-wide loops), and the edges of 8, 32 and 64
// lanes.
var awkward = func() []int {
	var ls []int
	for d := 0; d <= 41; d++ {
		ls = append(ls, d)
	}
	return append(ls, 63, 64, 65, 95, 96, 97, 127, 128, 129)
}()

// specialVec returns d values sc·N(0, 1), each replaced with probability
// 3/oneIn by NaN, ±Inf or −0.
func specialVec(rng *rand.Rand, d int, sc float64, oneIn int) []float64 {
	v := make([]float64, d)
	for k := range v {
		v[k] = sc * rng.NormFloat64()
		switch rng.IntN(oneIn) {
		case 0:
			v[k] = math.NaN()
		case 1:
			v[k] = math.Inf(1 - 2*rng.IntN(2))
		case 2:
			v[k] = math.Copysign(0, -1)
		}
	}
	return v
}

// sameBitsNaN reports whether a and b have the same bits, any two NaNs
// equal.
func sameBitsNaN(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if math.Float64bits(a[k]) != math.Float64bits(b[k]) && !(math.IsNaN(a[k]) && math.IsNaN(b[k])) {
			return false
		}
	}
	return true
}

func clone[T any](v []T) []T { return append([]T(nil), v...) }

func sign(s int) int {
	if s < 0 {
		return -1
	}
	return 1
}

// nearRadius returns r moved by up to four ulps either way (both
// projection decisions at the boundary).
func nearRadius(rng *rand.Rand, r float64) float64 {
	for s := rng.IntN(9) - 4; s != 0; s -= sign(s) {
		r = math.Nextafter(r, math.Inf(sign(s)))
	}
	return r
}

func needAVX2(t *testing.T) {
	if !UseAVX2 {
		t.Skip("no AVX2 (or purego): the kernel is its reference")
	}
}

func TestDiffDotMatchesRef(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := 0; trial < 20000; trial++ {
		d := awkward[trial%len(awkward)]
		w, a, b, pa, pb := specialVec(rng, d, 1, 200), specialVec(rng, d, 1, 200), specialVec(rng, d+trial%3, 1, 200), specialVec(rng, d, 1, 200), specialVec(rng, trial%7, 1, 200)
		g, want := DiffDot(w, a, b, pa, pb), DiffDotGo(w, a, b)
		if !sameBitsNaN([]float64{g}, []float64{want}) {
			t.Fatalf("trial %d d %d: DiffDot %v, DiffDotGo %v", trial, d, g, want)
		}
	}
}

// DiffDotGo is wᵀ(a − b) with pairwise's summation order: even terms and
// odd terms apart, then added.
func TestDiffDotRefOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, d := range awkward {
		w, a, b := specialVec(rng, d, 1, 1<<30), specialVec(rng, d, 1, 1<<30), specialVec(rng, d, 1, 1<<30)
		var s0, s1 float64
		for i := range w {
			if i%2 == 0 {
				s0 += w[i] * (a[i] - b[i])
			} else {
				s1 += w[i] * (a[i] - b[i])
			}
		}
		if g := DiffDotGo(w, a, b); math.Float64bits(g) != math.Float64bits(s0+s1) {
			t.Fatalf("d %d: DiffDotGo %v, even+odd %v", d, g, s0+s1)
		}
	}
}

// UpdateFlush against updateFlushGo: radii at the updated norm within a
// few ulps (both projection decisions), no constraint, and non-finite
// values.
func TestUpdateFlushMatchesRef(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(21, 22))
	projected := 0
	for trial := 0; trial < 30000; trial++ {
		d := awkward[trial%len(awkward)]
		w, xi, xj, sum, prev := specialVec(rng, d, 1, 200), specialVec(rng, d, 1, 200), specialVec(rng, d, 1, 200), specialVec(rng, d, 1, 200), specialVec(rng, d, 1, 200)
		a, pend := 0.1*rng.NormFloat64(), rng.Float64()
		var n2 float64
		for k := range w {
			v := w[k] + a*(xi[k]-xj[k])
			n2 += v * v
		}
		r := math.Sqrt(n2)
		switch trial % 4 {
		case 0:
			r = nearRadius(rng, r)
		case 1:
			r = math.Inf(1)
		default:
			r *= 0.5 + rng.Float64()
		}
		w1, s1, p1 := clone(w), clone(sum), clone(prev)
		w2, s2, p2 := clone(w), clone(sum), clone(prev)
		UpdateFlush(w1, xi, xj, a, r, r*r, s1, p1, pend)
		updateFlushGo(w2, xi, xj, a, r, r*r, s2, p2, pend)
		if !sameBitsNaN(w1, w2) || !sameBitsNaN(s1, s2) || !sameBitsNaN(p1, p2) {
			t.Fatalf("trial %d d %d r %v: UpdateFlush w %v sum %v prev %v; updateFlushGo w %v sum %v prev %v", trial, d, r, w1, s1, p1, w2, s2, p2)
		}
		if n2 > r*r {
			projected++
		}
	}
	if projected < 1000 {
		t.Fatalf("only %d trials projected", projected)
	}
}

// AddRepeat, dispatched and reference, must be m calls of sum += w, bit
// for bit: every length up to three chunks of 32 lanes (the masks), every
// repetition count up to 40, special values included; and the sum past
// len(w) is never written.
func TestAddRepeatMatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for trial := 0; trial < 4000; trial++ {
		d, m := trial%100, 1+rng.IntN(40)
		if trial%10 == 0 {
			d = awkward[rng.IntN(len(awkward))]
		}
		w := specialVec(rng, d, 1, 300)
		sum := specialVec(rng, d+5, 10, 300)
		want := clone(sum)
		for r := 0; r < m; r++ {
			for k, v := range w {
				want[k] += 1 * v
			}
		}
		got := clone(sum)
		addRepeatGo(got, w, m)
		if !sameBitsNaN(got, want) {
			t.Fatalf("trial %d d %d m %d: addRepeatGo %v, repeated axpy %v", trial, d, m, got, want)
		}
		got = clone(sum)
		AddRepeat(got[:d], w, m) // the tail past len(w) must survive
		if got = got[:d+5]; !sameBitsNaN(got, want) {
			t.Fatalf("trial %d d %d m %d (UseAVX2 %v): AddRepeat %v, repeated axpy %v", trial, d, m, UseAVX2, got, want)
		}
	}
}

// The active step, as the sgd-prev loop took it before it was fused:
// diffDot, the hinge or square step, and updateFlush (flush = 1) or
// DenseUpdate (flush = 0).
func stepComposed(w, xi, xj, sum, prev []float64, s, eta, pend, r float64, loss, flush int) bool {
	h := DiffDotGo(w, xi, xj)
	var dv float64
	if loss == Hinge {
		if m := 1 - s*h; !(m <= 0) {
			dv = -s
		}
	} else {
		dv = -2 * s * (1 - s*h)
	}
	if dv == 0 {
		return false
	}
	if flush == 1 {
		updateFlushGo(w, xi, xj, -eta*dv, r, r*r, sum, prev, pend)
	} else {
		DenseUpdate(w, xi, xj, -eta*dv, r, r*r)
	}
	return true
}

// PrevStep (the assembly when the CPU has AVX2) and prevStepGo must both be
// the composed step, bit for bit: lengths 1…129, both label signs, margins
// on both sides of 0, radii at the updated norm within a few ulps, no
// constraint, and non-finite values.
func TestPrevStepMatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	vec := func(d int, sc float64) []float64 { return specialVec(rng, d, sc, 300) }
	stepped, skipped := 0, 0
	for trial := 0; trial < 40000; trial++ {
		d := max(1, awkward[trial%len(awkward)])
		w, xi, xj := vec(d, []float64{0.01, 0.3, 3}[rng.IntN(3)]), vec(d, 1), vec(d, 1)
		pa, pb, sum, prev := vec(d, 1), vec(d, 1), vec(d, 1), vec(d, 1)
		s := float64(2*rng.IntN(2) - 1)
		loss := rng.IntN(2) // Hinge, Square
		flush := rng.IntN(2)
		eta, pend := rng.Float64(), rng.Float64()
		var n2 float64
		for _, v := range w {
			n2 += v * v
		}
		r := math.Sqrt(n2) * (0.5 + rng.Float64())
		switch trial % 4 {
		case 0:
			r = math.Inf(1)
		case 1:
			r = nearRadius(rng, r)
		}
		w0, s0, p0 := clone(w), clone(sum), clone(prev)
		want := stepComposed(w0, xi, xj, s0, p0, s, eta, pend, r, loss, flush)
		for _, k := range []struct {
			name string
			f    func(*PrevStepArgs) bool
		}{{"prevStepGo", prevStepGo}, {"PrevStep", PrevStep}} {
			w1, s1, p1 := clone(w), clone(sum), clone(prev)
			sa := PrevStepArgs{W: &w1[0], Xi: &xi[0], Xj: &xj[0], Pa: &pa[0], Pb: &pb[0], Sum: &s1[0], Prev: &p1[0],
				N: d, PLen: d, S: s, Eta: eta, Pend: pend, R: r, R2: r * r, Loss: loss, Flush: flush}
			got := k.f(&sa)
			if got != want || !sameBitsNaN(w1, w0) || !sameBitsNaN(s1, s0) || !sameBitsNaN(p1, p0) {
				t.Fatalf("trial %d (d %d loss %d flush %d s %v r %v): %s stepped %v w %v sum %v prev %v; composed stepped %v w %v sum %v prev %v",
					trial, d, loss, flush, s, r, k.name, got, w1, s1, p1, want, w0, s0, p0)
			}
		}
		if want {
			stepped++
		} else {
			skipped++
		}
	}
	if stepped < 1000 || skipped < 1000 {
		t.Fatalf("%d steps taken, %d not: both branches must be exercised", stepped, skipped)
	}
}

// The assembly reads PrevStepArgs at fixed offsets.
func TestPrevStepArgsLayout(t *testing.T) {
	var a PrevStepArgs
	got := []uintptr{unsafe.Offsetof(a.W), unsafe.Offsetof(a.Xi), unsafe.Offsetof(a.Xj), unsafe.Offsetof(a.Pa),
		unsafe.Offsetof(a.Pb), unsafe.Offsetof(a.Sum), unsafe.Offsetof(a.Prev), unsafe.Offsetof(a.N),
		unsafe.Offsetof(a.PLen), unsafe.Offsetof(a.S), unsafe.Offsetof(a.Eta), unsafe.Offsetof(a.Pend),
		unsafe.Offsetof(a.R), unsafe.Offsetof(a.R2), unsafe.Offsetof(a.Loss), unsafe.Offsetof(a.Flush)}
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("32-bit: the assembly is amd64 only")
	}
	for k, off := range got {
		if off != uintptr(8*k) {
			t.Fatalf("field %d at offset %d, the assembly reads %d", k, off, 8*k)
		}
	}
}

// DenseUpdate's four-way ‖w‖² must make the projection decision and result
// of the serial sum (pairwise's stepProject loop), bit for bit, including
// when the norm lands within rounding of the radius.
func TestDenseUpdateMatchesSerialNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	ref := func(w, xi, xj []float64, a, r float64) {
		var n2 float64
		for k := range xi {
			v := w[k] + a*(xi[k]-xj[k])
			w[k] = v
			n2 += v * v
		}
		if n2 > r*r {
			c := r / math.Sqrt(n2)
			for k := range w {
				w[k] *= c
			}
		}
	}
	near, far := 0, 0
	for trial := 0; trial < 20000; trial++ {
		d := 1 + rng.IntN(40)
		if trial%10 == 0 {
			d = awkward[rng.IntN(len(awkward))]
		}
		w, xi, xj := make([]float64, d), make([]float64, d), make([]float64, d)
		for k := range w {
			w[k], xi[k], xj[k] = rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		}
		a := 0.1 * rng.NormFloat64()
		// the norm after the update, and a radius at it within a few ulps
		// (or relatively 1e-15 … 1e-1 away, either side)
		var n2 float64
		for k := range w {
			u := w[k] + a*(xi[k]-xj[k])
			n2 += u * u
		}
		r := math.Sqrt(n2)
		switch trial % 3 {
		case 0:
			r = nearRadius(rng, r)
			near++
		default:
			r *= 1 + float64(sign(rng.IntN(2)*2-1))*math.Pow(10, -1-14*rng.Float64())
			far++
		}
		w1, w2 := clone(w), clone(w)
		DenseUpdate(w1, xi, xj, a, r, r*r)
		ref(w2, xi, xj, a, r)
		if !sameBitsNaN(w1, w2) {
			t.Fatalf("trial %d (d %d, r %v): %v vs serial %v", trial, d, r, w1, w2)
		}
	}
	if near == 0 || far == 0 {
		t.Fatal("vacuous")
	}
}

// LogisticChunkSums (AVX assembly on CPUs that have it) gives the same
// bits as logisticChunkSumsGo for every length modulo 4 and values over
// the product form's whole range; and the reference is its specification
// (four lane sums, combined (s₀ + s₂) + (s₁ + s₃), then the rest in order).
func TestLogisticChunkSumsMatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 11))
	draw := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			switch i % 5 {
			case 0:
				x[i] = math.Exp((2*rng.Float64() - 1) * 350)
			default:
				x[i] = math.Exp((2*rng.Float64() - 1) * 4)
			}
		}
		return x
	}
	for _, nu := range []int{0, 1, 3, 8, 17} {
		for _, nv := range append(clone(awkward), 512, 517) {
			u, v := draw(nu), draw(nv)
			in0 := draw(nv)
			inA, inB, inC := clone(in0), clone(in0), clone(in0)
			outA, outB, outC := make([]float64, nu), make([]float64, nu), make([]float64, nu)
			LogisticChunkSums(u, v, inA, outA)
			logisticChunkSumsGo(u, v, inB, outB)
			// the specification, written plainly
			m := nv &^ 3
			for k, e := range u {
				var lane [4]float64
				for l := 0; l < m; l++ {
					c := 4 / (1 + e*v[l])
					lane[l%4] += c
					inC[l] += c
				}
				s := (lane[0] + lane[2]) + (lane[1] + lane[3])
				for l := m; l < nv; l++ {
					c := 4 / (1 + e*v[l])
					s += c
					inC[l] += c
				}
				outC[k] = s
			}
			if !sameBitsNaN(outB, outC) || !sameBitsNaN(inB, inC) {
				t.Fatalf("|u| %d |v| %d: logisticChunkSumsGo out %v in %v; specification out %v in %v", nu, nv, outB, inB, outC, inC)
			}
			if !sameBitsNaN(outA, outB) || !sameBitsNaN(inA, inB) {
				t.Fatalf("|u| %d |v| %d (UseAVX %v): LogisticChunkSums out %v in %v; logisticChunkSumsGo out %v in %v", nu, nv, UseAVX, outA, inA, outB, inB)
			}
		}
	}
}

// The LCG of math/rand/v2's PCG: multiplier and increment as halves.
const (
	mulHi, mulLo = 0x2360ed051fc65da4, 0x4385df649fccf645
	incHi, incLo = 0x5851f42d4c957f2d, 0x14057b7ef767814f
)

// jumpOf returns the LCG's step taken k times as {M high, M low, C high,
// C low}.
func jumpOf(k int) [4]uint64 {
	mh, ml, ch, cl := uint64(0), uint64(1), uint64(0), uint64(0)
	for range k {
		mh, ml = pcgAffine(mh, ml, mulHi, mulLo, 0, 0)
		ch, cl = pcgAffine(ch, cl, mulHi, mulLo, incHi, incLo)
	}
	return [4]uint64{mh, ml, ch, cl}
}

// lanesAfter returns the states after 1…8 steps from hi·2⁶⁴ + lo, high
// halves then low.
func lanesAfter(hi, lo uint64) [16]uint64 {
	var lanes [16]uint64
	for i := range 8 {
		hi, lo = pcgAffine(hi, lo, mulHi, mulLo, incHi, incLo)
		lanes[i], lanes[8+i] = hi, lo
	}
	return lanes
}

// PCGFill8's reference is math/rand/v2's PCG output for output, with lanes
// left at the last group's states; the AVX-512 assembly is the reference,
// also for arbitrary jumps.
func TestPCGFill8MatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	jump := jumpOf(8)
	for trial := 0; trial < 300; trial++ {
		hi, lo := rng.Uint64(), rng.Uint64()
		n := 8 * (1 + trial%40)
		ref := rand.NewPCG(hi, lo)
		lanes := lanesAfter(hi, lo)
		dst := make([]uint64, n)
		pcgFill8Go(&lanes, dst, &jump)
		for k, x := range dst {
			if w := ref.Uint64(); x != w {
				t.Fatalf("trial %d draw %d: pcgFill8Go %#x, rand.PCG %#x", trial, k, x, w)
			}
		}
		last := lanesAfter(hi, lo) // the states after n−7 … n steps
		for range n/8 - 1 {
			pcgStep8(&last, &jump)
		}
		if lanes != last {
			t.Fatalf("trial %d: lanes %x, want %x", trial, lanes, last)
		}
		if !UseAVX512 {
			continue
		}
		j := jump
		if trial%2 == 1 {
			j = [4]uint64{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()}
		}
		l1, l2 := lanesAfter(hi, lo), lanesAfter(hi, lo)
		d1, d2 := make([]uint64, n), make([]uint64, n)
		PCGFill8(&l1, d1, &j)
		pcgFill8Go(&l2, d2, &j)
		if l1 != l2 || string(u64bytes(d1)) != string(u64bytes(d2)) {
			t.Fatalf("trial %d: PCGFill8 differs from pcgFill8Go", trial)
		}
	}
	if !UseAVX512 {
		t.Log("no AVX-512F/DQ (or purego): PCGFill8 is its reference; the reference was checked")
	}
}

func u64bytes(v []uint64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 8*len(v))
}

// PCGDraw8's reference reduces rand.PCG's outputs by Lemire's
// multiply-shift, stops at the first group with a low half below limit
// (its raw outputs and states kept), and the assembly is the reference —
// with limit = n (a stop almost never happens), random limits (stops at
// random groups) and limit = 2⁶⁴ − 1 (a stop at the first group).
func TestPCGDraw8MatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	jump := jumpOf(8)
	stops := 0
	for trial := 0; trial < 600; trial++ {
		hi, lo := rng.Uint64(), rng.Uint64()
		m := 8 * (1 + trial%40)
		n := 3 + rng.Uint64N(1<<32-3)
		limit := n
		switch trial % 3 {
		case 1:
			limit = rng.Uint64()
			limit = max(n, limit>>(rng.IntN(8))) // stops at about one group in 2ⁱ/8
		case 2:
			if trial%6 == 2 {
				limit = ^uint64(0)
			}
		}
		// the specification
		ref := rand.NewPCG(hi, lo)
		want, wantRaw := make([]int, m), make([]uint64, m)
		wantK := m
		for k := 0; k < m; k += 8 {
			var x [8]uint64
			stop := false
			for i := range x {
				x[i] = ref.Uint64()
				if _, l := bits.Mul64(x[i], n); l < limit {
					stop = true
				}
			}
			if stop {
				copy(wantRaw[k:], x[:])
				wantK = k
				break
			}
			for i := range x {
				h, _ := bits.Mul64(x[i], n)
				want[k+i] = int(h)
			}
		}
		lanes := lanesAfter(hi, lo)
		dst, raw := make([]int, m), make([]uint64, m+trial%3)
		k := pcgDraw8Go(&lanes, dst, raw, &jump, n, limit)
		if k != wantK || !equal(dst[:k], want[:k]) || (k < m && !equal(raw[k:k+8], wantRaw[k:k+8])) {
			t.Fatalf("trial %d n %d limit %d: pcgDraw8Go stopped at %d (want %d)", trial, n, limit, k, wantK)
		}
		last := lanesAfter(hi, lo)
		for range max(0, min(k, m-8)) / 8 {
			pcgStep8(&last, &jump)
		}
		if lanes != last {
			t.Fatalf("trial %d: lanes %x, want %x", trial, lanes, last)
		}
		if k < m {
			stops++
		}
		if !UseAVX512 {
			continue
		}
		l1 := lanesAfter(hi, lo)
		d1, r1 := make([]int, m), make([]uint64, len(raw))
		k1 := PCGDraw8(&l1, d1, r1, &jump, n, limit)
		if k1 != k || l1 != lanes || !equal(d1, dst) || !equal(r1, raw) {
			t.Fatalf("trial %d n %d limit %d: PCGDraw8 (stop %d) differs from pcgDraw8Go (stop %d)", trial, n, limit, k1, k)
		}
	}
	if stops < 100 || stops > 500 {
		t.Fatalf("%d of 600 trials stopped: both outcomes must be exercised", stops)
	}
	if !UseAVX512 {
		t.Log("no AVX-512F/DQ (or purego): PCGDraw8 is its reference; the reference was checked")
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The dispatched kernels refuse slices shorter than their contract — the
// assembly would read past them — with a panic, as the references' bounds
// checks do.
func TestShortSlicesPanic(t *testing.T) {
	short, long := make([]float64, 3), make([]float64, 4)
	for name, f := range map[string]func(){
		"DiffDot":           func() { DiffDot(long, short, long, nil, nil) },
		"UpdateFlush":       func() { UpdateFlush(long, long, long, 0, 1, 1, short, long, 0) },
		"AddRepeat":         func() { AddRepeat(short, long, 1) },
		"LogisticChunkSums": func() { LogisticChunkSums(long, long, short, long) },
		"PCGFill8":          func() { var l [16]uint64; PCGFill8(&l, make([]uint64, 12), &[4]uint64{}) },
		"PCGDraw8":          func() { var l [16]uint64; PCGDraw8(&l, make([]int, 8), make([]uint64, 7), &[4]uint64{}, 3, 3) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s with a short slice did not panic", name)
				}
			}()
			f()
		}()
	}
}
