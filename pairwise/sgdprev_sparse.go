package pairwise

import (
	"context"
	"math"
	"math/rand/v2"
)

// The sgd-prev loop on sparse, high-dimensional data in O(nnz) per step.
//
// stepsSparse (sgdprev_fast.go) is bit-identical to the general loop but
// touches all d coordinates at every update: the averager's flush (sum +=
// pending·prev, prev = w), the window's sum += w_t, and ‖w‖² and the
// rescaling of the ℓ2-ball projection. With 12 nonzeros per row and
// d = 10⁴ that is ≈ 800 times the work of the update itself. The loop below
// touches only the coordinates of the pair's two rows:
//
//   - w = α·v: the projection w ← w·R/‖w‖ multiplies the scalar α, and an
//     update w += a(x_i − x_j) is v += (a/α)(x_i − x_j). ‖v‖² is kept
//     running (n2, updated per touched coordinate) with a bound eb on its
//     rounding error. Where α²(n2 + eb) ≤ R² the decision (no projection)
//     is certain whatever eb is; otherwise, when α²·n2 is within α²·eb of
//     R² (not certain) or eb has grown past 2⁻³⁶·n2 (the projection's
//     relative error), n2 is recomputed exactly (exactNorm, O(d)), summed
//     in blocks so that its own bound is ≈ √d·u·n2 (a left-to-right sum's
//     γ_d·n2 exceeded 2⁻³⁶·n2 from d = 2¹⁷ on, and every later update
//     recomputed: O(d) per step on news20-sized data).
//   - Epochs: when α falls below 2⁻¹⁰, α = m·2^x (m ∈ [½, 1), x ≤ −10)
//     becomes m and v's units change by the exact factor 2^x: a new epoch
//     begins (newEpoch, O(1)). A coordinate keeps the epoch it was last
//     touched in (ep_k) and is rescaled by 2^(M_cur − M_ep) when the loop
//     next reads it (dotSync, in the dot products of its rows), so α stays in
//     [2⁻¹⁰, 1] at every iterate, v_k within 2¹⁰|w_k|, and nothing is
//     folded over all d coordinates (the earlier fold did that, O(d), at
//     every update where a small radius and a large step shrink w by 2¹⁰
//     or more: the corners of the selection grid). A sweep (O(d)) brings
//     every coordinate to the current epoch every epochCap = max(64, d/8)
//     epochs, which bounds the epochs' memory: an epoch begins only at an
//     update, so the sweeps number at most 8·updates/d.
//   - Running averages by per-coordinate timestamps: a clock sums α over
//     the iterates counted so far, and the true running sum of coordinate k
//     is S_k + v_k·(clock − stamp_k); when v_k is about to change, that
//     is folded into S_k and stamp_k = clock. Without a projection α = 1
//     and the clock counts iterates exactly (integers below 2⁵³). With
//     epochs each epoch has its clock in its own units (K_e, restarted at
//     0), and a coordinate of epoch e adds v_k·(K_e − stamp_k): the
//     iterates of later epochs reach K_e scaled by 2^(M_later − M_e), which
//     the 7 epochs before the current one receive (liveEpochs); an older
//     clock is final, what it misses being below 2⁻⁷⁰|v_k| per iterate.
//   - AvgPaper's output Σ_{t≤T} η·w_{t−2} / Σ η (w_{−1} = w_0) is, with a
//     constant η, η·(w_{−1} + Σ_{s=0}^{T} w_s − w_T − w_{T−1}) / weight:
//     the loop counts every iterate and keeps what w_{T−1} was on the
//     coordinates the last update changed (and its projection's ratio).
//     The general loop's weight is a chain of η additions; here it is the
//     step count (the η cancels).
//
// # What is equal, and up to what
//
// Without a constraint α stays 1, a/α = a and h·α = h exactly: the iterates
// w_t, the last iterate and AvgLast's output are bit-identical to the
// general loop's, and so is every decision. The averages differ only in how
// the same real sum is rounded: the general loop adds w_s one step at a time
// (T roundings per coordinate), this loop adds v_k·(integer count) at each
// change of v_k; both are within γ_T·Σ_s |w_s,k| of the exact sum (Higham
// §4.2, γ_m = mu/(1 − mu), u = 2⁻⁵³), so the outputs differ by at most
// 2γ_{T+3}·max_s |w_s,k| per coordinate (+ the division's u). With the ℓ2
// ball the averages' bound is 2¹⁰ times that (v_k ≤ 2¹⁰|w_k| within an
// epoch, α ∈ [2⁻¹⁰, 1]: an epoch's clock rounds relative to v, as the
// fold's restarted clock did), plus the final clocks' misses, at most
// T·2⁻⁷⁰·2¹⁰·max_s |w_s,k| (far below the first term); the epochs'
// rescalings are exact powers of two except where a coordinate becomes
// subnormal (≤ 2⁻¹⁰⁷⁵ each; the epochs run for R² ≥ 2⁻⁶⁰⁰, so n2 ≈
// R²/α² stays normal, and the fold below otherwise). The iterates
// themselves differ by rounding (the rescaling is applied
// to α, not to each coordinate): per step by at most a few u·(‖w‖ + ‖a(x_i
// − x_j)‖) and the projection's 2⁻³⁷‖w‖ (eb ≤ 2⁻³⁶·n2 whenever it
// projects; an uncertain decision is recomputed); the map w ↦ Π(w − η∇f(w)) is nonexpansive for the hinge loss at
// any η and for the square and logistic losses when η·ℓ''_max·‖x_i − x_j‖²
// ≤ 2, so these differences add up, at most linearly in T, as long as no
// hinge margin falls within them (a measure-zero event the tests would
// report). TestPrevSparseLazyMatchesGeneral checks both statements over
// random sparse data, the three losses, both constraints (a ball binding
// strongly enough for an epoch at most updates and sweeps, and the fold
// path too), every output rule, checkpoints and an initial point, against
// the general loop, within the bounds it states (unchanged by the epochs).
//
// # O(d) passes
//
// Per run: the initial norm, one sweep at the output and at each window's
// reset and checkpoint (which are O(d) anyway), a sweep per epochCap
// epochs (≤ 8·updates/d), and the recomputations of n2. Those happen only
// when a projection is possible and the decision uncertain (|α²n2 − R²|
// within ≈ √d·u·n2 after a recomputation: measure zero in practice) or eb
// has grown from ≈ √d·u·n2 to 2⁻³⁶·n2 by the rows' rounding bounds, each
// update adding ≤ (m + 4)·u·(old² + new²) over its m touched coordinates;
// that is not bounded by a theorem in the number of updates (it depends
// on how much of ‖v‖² the updates touch), but counted: none mid-run on
// news20-shaped data (d = 1.36·10⁶, 450 nonzeros per row) at any radius
// and step of the selection grid, none in TestLazySparseODPasses
// (d = 2¹⁸, from an epoch at most updates to an inactive ball).

// lazyMinRatio: the lazy loop runs when d ≥ lazyMinRatio × (mean nonzeros
// per row) and d ≥ lazyMinD; below, the bit-identical O(d) loop costs less
// than the bookkeeping (a9a's d = 123, 14 nonzeros: the O(d) loop).
const (
	lazyMinRatio = 16
	lazyMinD     = 512
)

// useLazySparse reports whether sgd-prev on s takes the lazy loop.
func useLazySparse(s *Dataset) bool {
	if s.X != nil || s.Ptr == nil || s.N == 0 || s.D < lazyMinD {
		return false
	}
	return int64(s.D)*int64(s.N) >= lazyMinRatio*int64(len(s.Idx))
}

// vss is coordinate k's v_k, its running sum S_k (true units) and stamp_k,
// the clock (of v_k's epoch) when S_k was last brought up to date, side by
// side: the dot product's load of v_k brings the S_k and stamp_k the
// update then reads and writes into the core's L1 with it (one cache line
// per touched coordinate, mostly, instead of one for v and one for S).
type vss struct{ v, s, st float64 }

// lazySparse is the state of the lazy loop (the file comment).
type lazySparse struct {
	f     *prevFast
	mode  Averaging
	sums  bool // paper, window or uniform: S, stamp, clock kept
	paper bool
	ball  bool

	v     []float64 // f.w: w = alpha·v (sums: vs[k].v is v_k, v a copy made by syncW)
	alpha float64
	n2    float64 // ‖v‖² ≈ n2 + n2c, running
	n2c   float64 // the compensation of n2's additions
	eb    float64 // a bound on |n2 + n2c − ‖v‖²| (+ 2u·n2 for n2c's own rounding)

	vs     []vss   // sums: v_k, S_k and stamp_k side by side
	clock  float64 // Σ α over the iterates counted in the current epoch
	counts int     // the iterates w_s, s ≤ counts, are in the clock

	// Epochs (ball, the file comment): v_k is stored in the units of
	// epoch ep[k]; its value in the current epoch's units is v_k·2^(em[cur]
	// − em[ep[k]]). ek[e] (e < cur) is epoch e's clock in its own units;
	// the liveEpochs − 1 epochs before cur keep receiving the later
	// iterates, scaled by esc[j] = 2^(em[cur] − em[cur−j]).
	epochs   bool // epochs are used (ball with R² ≥ 2⁻⁶⁰⁰); else fold
	ep       []int32
	em       []int64
	ek       []float64
	esc      [liveEpochs]float64
	cur      int32
	stale    int       // columns of the data not yet synced to cur (ep[k] != cur)
	live     int       // columns with a nonzero in some row (−1: not counted yet)
	epochCap int       // a sweep resets the epochs when cur reaches it
	tab      []float64 // sweep's scratch (per-epoch scale and clock)

	passes  int // O(d) passes (exactNorm, sweep, fold): the tests count them
	nepochs int // epochs begun (newEpoch calls)

	t      int     // steps taken
	weight float64 // the general loop's averaging weight

	// AvgPaper: the last update was at step lastUpd, w_t = c·(w_{t−1} +
	// a(x_i − x_j)) with (i, j, a) = (ui, uj, ua) and c = pc (the
	// projection's factor, 1 without), so w_{t−1} = rho·w_t − a(x_i − x_j)
	// with rho = 1/pc (the division done by Output, not at every update).
	lastUpd int
	pc      float64
	ui, uj  int
	ua      float64

	out []float64

	// prefetch: the rows are prefetched ahead (stepsSparse) only when
	// the CSR arrays exceed prefetchMinBytes; below they stay in a core's
	// cache and the four calls per step cost more than they save. (At
	// 4 MB, n = 10⁴ rows of 12 nonzeros, 1.4 MB, were not prefetched and
	// missed the 512 kB L2 here: paired 0.87–0.91 with it.)
	prefetch bool
}

const prefetchMinBytes = 256 << 10

func newLazySparse(f *prevFast, mode Averaging, w []float64) *lazySparse {
	z := &lazySparse{f: f, mode: mode, v: w, alpha: 1, ball: !math.IsInf(f.r2, 1),
		paper: mode == AvgPaper, sums: mode != AvgLast, out: make([]float64, len(w)),
		prefetch: 12*len(f.data.Idx) > prefetchMinBytes}
	if z.sums {
		z.vs = make([]vss, len(w))
		for k, x := range w {
			z.vs[k].v = x
		}
	}
	if z.ball && f.r2 >= 0x1p-600 {
		z.epochs = true
		z.ep = make([]int32, len(w))
		z.em = []int64{0}
		z.epochCap = max(64, len(w)/8)
		z.live = -1
	}
	if z.paper {
		for k, x := range w {
			z.vs[k].s = x // w_{−1} = w_0
		}
		z.clock = 1 // w_0 counted
	}
	if z.ball {
		z.exactNorm()
	}
	return z
}

// exactNorm recomputes n2 = ‖v‖² (after a sweep when coordinates are in
// older epochs) and its error bound: blocks of b coordinates summed in four
// lanes, the blocks' sums added left to right, so that each square takes
// part in at most h = 1 + (⌈b/4⌉ + 3) + 2 + ⌈d/b⌉ roundings and the error
// is at most γ_h·n2 (Higham §4.2, nonnegative terms). b ≈ 2√d makes h ≈ √d
// + 6: 2⁻⁴³·n2 at d = 1.4·10⁶, below the 2⁻³⁶·n2 that triggers a
// recomputation up to d = 2³¹. (The left-to-right sum's γ_d·n2 exceeded
// that threshold from d = 2¹⁷ on: every update after the first
// recomputation recomputed again.)
func (z *lazySparse) exactNorm() {
	if z.cur != 0 {
		z.sweep()
	}
	z.passes++
	if z.sums {
		z.syncW()
	}
	v := z.v
	b := normBlock(len(v))
	var n2 float64
	for lo := 0; lo < len(v); lo += b {
		blk := v[lo:min(lo+b, len(v))]
		var s0, s1, s2, s3 float64
		k := 0
		for ; k+3 < len(blk); k += 4 {
			s0 += blk[k] * blk[k]
			s1 += blk[k+1] * blk[k+1]
			s2 += blk[k+2] * blk[k+2]
			s3 += blk[k+3] * blk[k+3]
		}
		for ; k < len(blk); k++ {
			s0 += blk[k] * blk[k]
		}
		n2 += (s0 + s1) + (s2 + s3)
	}
	h := 1 + (b+3)/4 + 3 + 2 + (len(v)+b-1)/b
	z.n2, z.n2c = n2, 0
	z.eb = float64(h) * 0x1p-53 * n2 * (1 + 0x1p-40)
}

// syncW copies v_k out of vs into v (f.w): exactNorm's input and the run's
// last iterate.
func (z *lazySparse) syncW() {
	v := z.v[:len(z.vs)]
	for k := range z.vs {
		v[k] = z.vs[k].v
	}
}

// normBlock is exactNorm's block length for d coordinates: ≈ 2√d, a
// multiple of 4, at least 64.
func normBlock(d int) int {
	return max(64, 4*int(math.Sqrt(float64(d))/2+1))
}

// advance counts the iterates up to w_t in the clock (α is constant since
// the last count: it changes only at updates, which advance first), and in
// the live older epochs' clocks in their units.
func (z *lazySparse) advance(t int) {
	if t > z.counts {
		inc := z.alpha * float64(t-z.counts)
		z.clock += inc
		z.counts = t
		if c := int(z.cur); c != 0 && (z.stale != 0 || z.live != len(z.v) || !lazyPlainDot) {
			// (when every column is live and synced no coordinate is
			// in an older epoch, and none will be again: their clocks
			// are read by nothing; a column no row has stays in its
			// epoch until a sweep, which reads that epoch's clock)
			for j := 1; j < liveEpochs && j <= c; j++ {
				z.ek[c-j] += inc * z.esc[j]
			}
		}
	}
}

// lazyEpochs: the tests set it false to run the fold path (the one taken
// when R² < 2⁻⁶⁰⁰) at ordinary radii.
var lazyEpochs = true

// lazyPlainDot: the tests set it false to run dotSync at every step and
// advance the older epochs' clocks at every count (the loop before the
// stale count), which must give the same bits.
var lazyPlainDot = true

// liveEpochs: the clocks of the current epoch and the liveEpochs − 1 before
// it receive the iterates counted; older epochs' clocks are final (an
// epoch shrinks the units by 2¹⁰ at least, so what an epoch's clock no
// longer receives is below 2⁻⁷⁰ of its values per iterate).
const liveEpochs = 8

// pow2 is 2^e for e ≤ 0 (0 below the subnormals): the normal range by
// its bits, inlined into dotSync's loop; the rest out of line.
func pow2(e int64) float64 {
	if e >= -1022 {
		return math.Float64frombits(uint64(e+1023) << 52)
	}
	return pow2Subnormal(e)
}

//go:noinline
func pow2Subnormal(e int64) float64 { return math.Ldexp(1, int(max(e, -1100))) }

// dotSync is sparseDot(data, i, v) after syncing row i's coordinates: a
// coordinate c in an older epoch e has S_c += v_c·(K_e − stamp_c), v_c
// rescaled by 2^(M_cur − M_e) (exact unless the result is subnormal),
// stamp_c = the current clock.
func (z *lazySparse) dotSync(i int) float64 {
	s := z.f.data
	lo, hi := s.Ptr[i], s.Ptr[i+1]
	idx, val := s.Idx[lo:hi], s.Val[lo:hi]
	val = val[:len(idx)]
	v, ep, cur := z.v, z.ep, z.cur
	em, mcur := z.em, z.em[z.cur]
	var r float64
	if z.sums {
		vs, ek, clock := z.vs, z.ek, z.clock
		for k, c := range idx {
			p := &vs[c]
			x := p.v
			if e := ep[c]; e != cur {
				p.s += x * (ek[e] - p.st)
				p.st = clock
				x *= pow2(mcur - em[e])
				p.v = x
				ep[c] = cur
				z.stale--
			}
			r += val[k] * x
		}
		return r
	}
	for k, c := range idx {
		x := v[c]
		if e := ep[c]; e != cur {
			x *= pow2(mcur - em[e])
			v[c] = x
			ep[c] = cur
			z.stale--
		}
		r += val[k] * x
	}
	return r
}

// newEpoch moves the power-of-two part of α into the units of v, lazily:
// α = m·2^x with m ∈ [½, 1) (x ≤ −10, α < 2⁻¹⁰) becomes m, and the
// current epoch's v is 2^x times the last epoch's — applied to a
// coordinate when it is next touched (dotSync). n2, its compensation and its
// bound are scaled by 2^(2x) (exact: n2 ≥ R²/α² stays normal for R² ≥
// 2⁻⁶⁰⁰; coordinates that become subnormal when synced change ‖v‖² by less
// than 2⁻²⁰⁹⁰ each, far below u·n2). O(liveEpochs); a sweep every
// epochCap epochs (O(d)) bounds the epochs' memory.
func (z *lazySparse) newEpoch() {
	z.nepochs++
	m, x := math.Frexp(z.alpha)
	z.alpha = m
	z.n2 = math.Ldexp(z.n2, 2*x)
	z.n2c = math.Ldexp(z.n2c, 2*x)
	z.eb = math.Ldexp(z.eb, 2*x)
	z.ek = append(z.ek, z.clock)
	z.em = append(z.em, z.em[z.cur]+int64(x))
	z.cur++
	if z.live < 0 {
		z.live = liveColumns(z.f.data)
	}
	z.stale = z.live // every column the rows read is in an older epoch now
	z.clock = 0
	c := int(z.cur)
	for j := 1; j < liveEpochs; j++ {
		z.esc[j] = 0
		if j <= c {
			z.esc[j] = pow2(z.em[c] - z.em[c-j])
		}
	}
	if c >= z.epochCap {
		z.sweep()
	}
}

// liveColumns counts the columns that hold a nonzero in some row: the
// coordinates dotSync can reach (a column no row has is never read or
// written by a step, so it need not be synced for the plain dot).
func liveColumns(s *Dataset) int {
	seen := make([]bool, s.D)
	n := 0
	for _, c := range s.Idx {
		if !seen[c] {
			seen[c] = true
			n++
		}
	}
	return n
}

// sweep brings every coordinate to the current epoch (S_k up to date, v_k
// rescaled) and restarts the epochs and the clock: one O(d) pass.
func (z *lazySparse) sweep() {
	if z.cur == 0 {
		return
	}
	z.passes++
	c := int(z.cur)
	// tab[2e] = 2^(em[cur] − em[e]), tab[2e+1] = epoch e's clock
	if cap(z.tab) < 2*(c+1) {
		z.tab = make([]float64, 2*(c+1))
	}
	tab := z.tab[:2*(c+1)]
	for e := 0; e <= c; e++ {
		tab[2*e] = pow2(z.em[c] - z.em[e])
		if e < c {
			tab[2*e+1] = z.ek[e]
		} else {
			tab[2*e+1] = z.clock
		}
	}
	v, ep := z.v, z.ep[:len(z.v)]
	if z.sums {
		vs := z.vs[:len(ep)]
		for k := range vs {
			p := &vs[k]
			x, e := p.v, ep[k]
			p.s += x * (tab[2*e+1] - p.st)
			p.st = 0
			p.v = x * tab[2*e]
			ep[k] = 0
		}
		z.clock = 0
	} else {
		for k, x := range v {
			v[k] = x * tab[2*int(ep[k])]
			ep[k] = 0
		}
	}
	z.cur = 0
	z.stale = 0
	z.em = z.em[:1]
	z.em[0] = 0
	z.ek = z.ek[:0]
	z.esc = [liveEpochs]float64{}
}

// addRow does v += b·x_i on row i's coordinates, first folding each one's
// running sum into S_k (sums), and returns (ball) the row's change d of
// ‖v‖², summed in two lanes, and the bound g on its rounding error: update
// adds d to n2 by TwoSum with the rounding error carried in n2c
// (Neumaier), so that the error bound grows with the squares touched, not
// with n2 at every touch. One pass per row; the four variants keep the
// flags out of the loop.
func (z *lazySparse) addRow(i int, b float64) (d, g float64) {
	s := z.f.data
	lo, hi := s.Ptr[i], s.Ptr[i+1]
	idx, val := s.Idx[lo:hi], s.Val[lo:hi]
	val = val[:len(idx)]
	v := z.v
	if !z.ball {
		if z.sums {
			clock, vs := z.clock, z.vs
			for k, c := range idx {
				p := &vs[c]
				p.s += p.v * (clock - p.st)
				p.st = clock
				p.v += b * val[k]
			}
			return 0, 0
		}
		for k, c := range idx {
			v[c] += b * val[k]
		}
		return 0, 0
	}
	var d0, d1, e0, e1 float64
	if z.sums {
		clock, vs := z.clock, z.vs
		k := 0
		for ; k+1 < len(idx); k += 2 {
			p := &vs[idx[k]]
			o0 := p.v
			p.s += o0 * (clock - p.st)
			p.st = clock
			n0 := o0 + b*val[k]
			p.v = n0
			p = &vs[idx[k+1]]
			o1 := p.v
			p.s += o1 * (clock - p.st)
			p.st = clock
			n1 := o1 + b*val[k+1]
			p.v = n1
			p0, q0, p1, q1 := o0*o0, n0*n0, o1*o1, n1*n1
			d0 += q0 - p0
			e0 += p0 + q0
			d1 += q1 - p1
			e1 += p1 + q1
		}
		if k < len(idx) {
			p := &vs[idx[k]]
			old := p.v
			p.s += old * (clock - p.st)
			p.st = clock
			nv := old + b*val[k]
			p.v = nv
			o2, w2 := old*old, nv*nv
			d0 += w2 - o2
			e0 += o2 + w2
		}
	} else {
		k := 0
		for ; k+1 < len(idx); k += 2 {
			c0, c1 := idx[k], idx[k+1]
			o0 := v[c0]
			n0 := o0 + b*val[k]
			v[c0] = n0
			o1 := v[c1]
			n1 := o1 + b*val[k+1]
			v[c1] = n1
			p0, q0, p1, q1 := o0*o0, n0*n0, o1*o1, n1*n1
			d0 += q0 - p0
			e0 += p0 + q0
			d1 += q1 - p1
			e1 += p1 + q1
		}
		if k < len(idx) {
			c := idx[k]
			old := v[c]
			nv := old + b*val[k]
			v[c] = nv
			o2, w2 := old*old, nv*nv
			d0 += w2 - o2
			e0 += o2 + w2
		}
	}
	// each square and difference rounded once, the row's sum of m terms
	// with ≤ m roundings (Higham §4.2): γ_{m+3}·Σ(old² + new²)
	return d0 + d1, float64(len(idx)+4) * 0x1p-53 * (e0 + e1) * (1 + 0x1p-40)
}

// diffDotVS is sparseDotVS(s, i, vs) − sparseDotVS(s, j, vs), and diffDotCSR
// the same with sparseDot on v: the same sums. Out of line on purpose:
// inlined into steps, whose many live values leave no register for the
// dot's loop counter, the loop kept it on the stack (a store and a load
// per nonzero, on its dependency chain).
//
//go:noinline
func diffDotVS(s *Dataset, i, j int, vs []vss) float64 {
	return sparseDotVS(s, i, vs) - sparseDotVS(s, j, vs)
}

//go:noinline
func diffDotCSR(s *Dataset, i, j int, v []float64) float64 {
	return sparseDot(s, i, v) - sparseDot(s, j, v)
}

// sparseDotVS is sparseDot(s, i, v) with v_k read from vs: the same sum.
func sparseDotVS(s *Dataset, i int, vs []vss) float64 {
	lo, hi := s.Ptr[i], s.Ptr[i+1]
	idx, val := s.Idx[lo:hi], s.Val[lo:hi]
	val = val[:len(idx)]
	var r float64
	for k, c := range idx {
		r += val[k] * vs[c].v
	}
	return r
}

// update applies step t's update w ← Π(w + a(x_i − x_j)).
func (z *lazySparse) update(t, i, j int, a float64) {
	if z.sums {
		z.advance(t - 1)
	}
	if z.paper {
		z.lastUpd, z.pc, z.ui, z.uj, z.ua = t, 1, i, j, a
	}
	b := a / z.alpha // α = 1: b = a exactly
	di, gi := z.addRow(i, b)
	dj, gj := z.addRow(j, -b)
	if !z.ball {
		return
	}
	// each row's change d of ‖v‖² added to n2 by TwoSum(n2, d) (t +
	// err = n2 + d exactly), the error carried in n2c (Neumaier), in
	// registers; eb grows by the rows' bounds g
	n2, n2c := z.n2, z.n2c
	t1 := n2 + di
	bb := t1 - n2
	n2c += (n2 - (t1 - bb)) + (di - bb)
	n2 = t1
	t1 = n2 + dj
	bb = t1 - n2
	n2c += (n2 - (t1 - bb)) + (dj - bb)
	n2 = t1
	z.n2, z.n2c = n2, n2c
	z.eb += gi
	z.eb += gj
	r2, a2 := z.f.r2, z.alpha*z.alpha
	n2 += n2c
	if eb := z.eb + 0x1p-52*math.Abs(n2); a2*(n2+eb)*(1+0x1p-40) > r2 && (eb > 0x1p-36*n2 || math.Abs(a2*n2-r2) <= a2*eb*(1+0x1p-40)) {
		// a projection is possible and the decision is not certain,
		// or the bound has grown past 2⁻³⁶‖v‖² (the projection's
		// relative error): recompute. Inside the ball (α²(n2 + eb) ≤
		// R²) the decision is certain whatever eb is.
		z.exactNorm()
		n2 = z.n2
	}
	if n2 *= a2; n2 > r2 {
		c := z.f.r / math.Sqrt(n2)
		z.alpha *= c
		z.pc = c
		if z.alpha < foldBelow {
			if z.epochs && lazyEpochs {
				z.newEpoch()
			} else {
				z.fold()
			}
		}
	}
}

// foldBelow: a new epoch begins (or, without epochs, α is folded into v)
// once α falls below 2⁻¹⁰. v_k = w_k/α then never exceeds 2¹⁰|w_k|, so
// the clock's rounding is ≤ u·clock·|v_k| ≤ 2¹⁰u·clock·|w_k| per sync, and
// each epoch (or fold) restarts the clock. A higher threshold begins
// epochs more often, each one making the coordinates touched next re-sync.
const foldBelow = 0x1p-10

// fold moves α into v, v ← α·v and α = 1, after bringing every S_k up to
// date and restarting the clock at 0, and recomputes ‖v‖²: two O(d)
// passes. Only without epochs (R² < 2⁻⁶⁰⁰, where n2 could leave the
// normal range under newEpoch's rescaling).
func (z *lazySparse) fold() {
	z.passes++
	a, v := z.alpha, z.v
	if z.sums {
		clock, vs := z.clock, z.vs
		for k := range vs {
			p := &vs[k]
			x := p.v
			p.s += x * (clock - p.st)
			p.st = 0
			p.v = x * a
		}
		z.clock = 0
	} else {
		for k, x := range v {
			v[k] = x * a
		}
	}
	z.alpha = 1
	z.exactNorm()
}

// steps walks the draws idx (stepsSparse's walk).
func (z *lazySparse) steps(idx []int) {
	f := z.f
	s, eta, loss := f.data, f.eta, f.loss
	pos := f.pos
	act := f.active(idx)
	if z.sums {
		z.weight += float64(len(idx)) // steps; AvgPaper's weight is η·steps
	}
	v, vs := z.v, z.vs
	pf := z.prefetch
	for ai, ta := range act {
		tA := int(ta)
		if an := ai + prefetchAhead; pf && an < len(act) {
			tn := int(act[an])
			pj := f.prev
			if tn > 0 {
				pj = idx[tn-1]
			}
			prefetchRow(s, idx[tn])
			prefetchRow(s, pj)
		}
		i, j := idx[tA], f.prev
		if tA > 0 {
			j = idx[tA-1]
		}
		var h float64
		if z.stale == 0 && lazyPlainDot {
			// every coordinate is in the current epoch (cur = 0, or
			// all synced since it began): the plain dot, the same sum
			if z.sums {
				h = diffDotVS(s, i, j, vs)
			} else {
				h = diffDotCSR(s, i, j, v)
			}
		} else {
			h = z.dotSync(i) - z.dotSync(j)
		}
		if z.alpha != 1 {
			h *= z.alpha
		}
		sg := float64(int(pos[i>>6]>>(i&63)&1)*2 - 1) // (y_i − y_j)/2
		var dv float64
		switch loss {
		case prevHinge:
			if m := 1 - sg*h; !(m <= 0) {
				dv = -sg
			}
		case prevSquare:
			dv = -2 * sg * (1 - sg*h)
		default:
			c := 2 * sg // y_i − y_j
			dv = -c * sigmoidNeg(c*h)
		}
		if dv != 0 {
			z.update(z.t+tA+1, i, j, -eta*dv)
		}
	}
	z.t += len(idx)
	f.prev = idx[len(idx)-1]
}

// output returns the run's output at the current step (a view valid until
// the next call); w is ignored (windowed's signature).
func (z *lazySparse) Output([]float64) []float64 {
	z.sweep()
	out, v, a := z.out, z.v, z.alpha
	if !z.sums {
		for k, x := range v {
			out[k] = a * x
		}
		return out
	}
	vs := z.vs[:len(out)]
	if z.weight == 0 {
		for k := range vs {
			out[k] = a * vs[k].v
		}
		return out
	}
	t := z.t
	z.advance(t)
	clock := z.clock
	if !z.paper {
		for k := range vs {
			p := &vs[k]
			out[k] = (p.s + p.v*(clock-p.st)) / z.weight
		}
		return out
	}
	// AvgPaper: η·X/(η·t) with X = Σ_{s=−1}^{t−2} w_s is X/t; the
	// general loop's weight is the chain η + η + … (t roundings), this
	// one exact: the outputs agree within the file comment's bound.
	wt := z.weight
	rho := 1.0
	last := z.lastUpd == t && t > 0
	if last {
		rho = 1 / z.pc
	}
	for k := range vs {
		p := &vs[k]
		x := p.v
		cur := a * x
		out[k] = (p.s + x*(clock-p.st) - cur - cur*rho) / wt
	}
	if last {
		// w_{t−1} = rho·w_t − a(x_i − x_j) on the pair's coordinates
		ds := z.f.data
		for _, r := range [2]struct {
			i int
			a float64
		}{{z.ui, z.ua}, {z.uj, -z.ua}} {
			lo, hi := ds.Ptr[r.i], ds.Ptr[r.i+1]
			for k, c := range ds.Idx[lo:hi] {
				out[c] += r.a * ds.Val[lo+k] / wt
			}
		}
	}
	return out
}

// reset starts a new window (AvgWindow).
func (z *lazySparse) Reset() {
	if z.mode != AvgWindow {
		return
	}
	z.advance(z.t)
	z.sweep()
	for k := range z.vs {
		z.vs[k].s, z.vs[k].st = 0, 0
	}
	z.clock, z.weight = 0, 0
}

// runLazy is prevFast.run (sgdprev_fast.go) with the lazy sparse loop.
func (f *prevFast) runLazy(ctx context.Context, cfg RunConfig, rng *rand.Rand, T int, sched Schedule) (*Result, error) {
	r, _, err := f.runLazyState(ctx, cfg, rng, T, sched)
	return r, err
}

// startLazy sets f up for T steps of the lazy loop (η, the initial model,
// the loop's state as f.lazySteps, i_0 and the draws' source) and returns
// that state; f.steps then takes them.
func (f *prevFast) startLazy(cfg RunConfig, rng *rand.Rand, T int, sched Schedule) *lazySparse {
	if cfg.Schedule != "" {
		sched = cfg.Schedule
	}
	f.eta = sched.Eta(cfg.Eta, 1, T)
	f.w = cfg.InitialModel(f.d)
	mode := cfg.Averaging
	if mode == "" {
		mode = AvgPaper
	}
	z := newLazySparse(f, mode, f.w)
	f.lazySteps = z.steps
	if T >= 1 {
		f.prev = rng.IntN(f.n) // PrevInstance draws i_0 before the first step
	}
	f.src = pcgSource(rng)
	return z
}

// runLazyState is runLazy returning the loop's final state too (the tests
// read its counts).
func (f *prevFast) runLazyState(ctx context.Context, cfg RunConfig, rng *rand.Rand, T int, sched Schedule) (*Result, *lazySparse, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	z := f.startLazy(cfg, rng, T, sched)
	defer func() { f.lazySteps = nil }()
	cp := NewCheckpointer(&cfg)
	if err := cp.segments(ctx, T, func(k int) { f.steps(rng, k) }, func(t int) { cp.Window(t, T, nil, z) }); err != nil {
		return nil, nil, err
	}
	var grads int64
	if T > 0 {
		grads = int64(T)
	}
	out := append([]float64(nil), z.Output(nil)...)
	if z.sums {
		z.syncW() // Output swept: every v_k is in the current epoch
	}
	if z.alpha != 1 {
		scale(z.alpha, f.w)
	}
	return &Result{W: out, Last: f.w, Steps: T, PairGrads: grads}, z, nil
}
