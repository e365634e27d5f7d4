//go:build !purego

package kernel

import "golang.org/x/sys/cpu"

// The dispatch on amd64: the assembly where the CPU has the instructions,
// else the reference. Kernels whose assembly reads memory through slice
// lengths check them first, as the reference's own bounds checks would
// (panicking on a programmer error rather than reading out of bounds).

var (
	// UseAVX selects logisticChunkAVX (logistic_amd64.s).
	UseAVX = cpu.X86.HasAVX
	// UseAVX2 selects the AVX2 kernels of the sgd-prev step
	// (sgdprev_amd64.s).
	UseAVX2 = cpu.X86.HasAVX2
	// UseAVX512 selects pcgFill8 and pcgDraw8 (pcg_amd64.s), which need
	// AVX-512F and DQ.
	UseAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ
)

//go:noescape
func diffDotAVX(w, a, b, pa, pb []float64) float64

//go:noescape
func updateFlushAVX(w, xi, xj, sum, prev []float64, a, pend, r, r2 float64)

//go:noescape
func prevStepAVX(p *PrevStepArgs) bool

//go:noescape
func addRepeatAVX(sum, w []float64, m int)

//go:noescape
func logisticChunkAVX(u, v, in, out []float64)

//go:noescape
func pcgFill8(lanes *[16]uint64, dst []uint64, jump *[4]uint64)

//go:noescape
func pcgDraw8(lanes *[16]uint64, dst []int, raw []uint64, jump *[4]uint64, n, limit uint64) int

//go:noescape
func prefetch(row []float64)

//go:noescape
func prefetchInt32(row []int32)

// DiffDot returns wᵀ(a − b) (len(a), len(b) ≥ len(w)) after prefetching
// the cache lines of pa and pb, the rows of a later step.
func DiffDot(w, a, b, pa, pb []float64) float64 {
	if UseAVX2 {
		if len(a) < len(w) || len(b) < len(w) {
			panic("kernel: DiffDot: a or b shorter than w")
		}
		return diffDotAVX(w, a, b, pa, pb)
	}
	prefetch(pa)
	prefetch(pb)
	return DiffDotGo(w, a, b)
}

// UpdateFlush is DenseUpdate(w, xi, xj, a, r, r2) followed by the
// averager's flush sum += pend·prev, prev = w, in one pass (updateFlushGo);
// w, xj, sum and prev have length ≥ len(xi).
func UpdateFlush(w, xi, xj []float64, a, r, r2 float64, sum, prev []float64, pend float64) {
	if UseAVX2 {
		n := len(xi)
		w = w[:n] // the assembly runs over len(w)
		if len(xj) < n || len(sum) < n || len(prev) < n {
			panic("kernel: UpdateFlush: xj, sum or prev shorter than xi")
		}
		updateFlushAVX(w, xi, xj, sum, prev, a, pend, r, r2)
		return
	}
	updateFlushGo(w, xi, xj, a, r, r2, sum, prev, pend)
}

// PrevStep is one active sgd-prev step of the hinge or square loss (score,
// step, update, projection and, with Flush, the averager's flush) in one
// call (prevStepGo): it reports whether w changed. p's pointers must
// address p.N (rows to prefetch: p.PLen) valid values each.
func PrevStep(p *PrevStepArgs) bool {
	if UseAVX2 {
		return prevStepAVX(p)
	}
	return prevStepGo(p)
}

// AddRepeat does sum[k] += w[k] m times for each k < len(w)
// (len(sum) ≥ len(w)): m calls of axpy(1, w, sum).
func AddRepeat(sum, w []float64, m int) {
	if UseAVX2 {
		if len(sum) < len(w) {
			panic("kernel: AddRepeat: sum shorter than w")
		}
		addRepeatAVX(sum, w, m)
		return
	}
	addRepeatGo(sum, w, m)
}

// LogisticChunkSums sets out[k] to the sum over l of c_kl = 4/(1 + u_k·v_l)
// and adds c_kl over k to in[l] (len(in) ≥ len(v), len(out) ≥ len(u)), in
// logisticChunkSumsGo's order.
func LogisticChunkSums(u, v, in, out []float64) {
	if UseAVX {
		if len(in) < len(v) || len(out) < len(u) {
			panic("kernel: LogisticChunkSums: in shorter than v or out shorter than u")
		}
		logisticChunkAVX(u, v, in, out)
		return
	}
	logisticChunkSumsGo(u, v, in, out)
}

// PCGFill8 runs eight PCG-DXSM states side by side: lanes holds the high
// halves, then the low halves, of eight states; for each group of eight
// it writes their outputs to dst, then (if more groups follow) moves every
// lane by jump = {M high, M low, C high, C low}, s ↦ s·M + C; at the end
// lanes holds the states of the last group written. len(dst) is a
// positive multiple of 8.
func PCGFill8(lanes *[16]uint64, dst []uint64, jump *[4]uint64) {
	if len(dst) == 0 || len(dst)%8 != 0 {
		panic("kernel: PCGFill8: len(dst) is not a positive multiple of 8")
	}
	if UseAVX512 {
		pcgFill8(lanes, dst, jump)
		return
	}
	pcgFill8Go(lanes, dst, jump)
}

// PCGDraw8 is PCGFill8 with Lemire's reduction of each output x to
// dst[k] = ⌊x·n / 2⁶⁴⌋, 2 ≤ n < 2³². A group in which some x·n mod 2⁶⁴ is
// below limit (≥ n: a possible redraw) is not reduced: its outputs go to
// raw[k:k+8], lanes holds its states, and PCGDraw8 returns k, the number
// of draws reduced; otherwise it returns len(dst). len(dst) is a positive
// multiple of 8, len(raw) ≥ len(dst).
func PCGDraw8(lanes *[16]uint64, dst []int, raw []uint64, jump *[4]uint64, n, limit uint64) int {
	if len(dst) == 0 || len(dst)%8 != 0 || len(raw) < len(dst) || n < 2 || n >= 1<<32 {
		panic("kernel: PCGDraw8: len(dst) is not a positive multiple of 8, raw is shorter, or n is outside [2, 2³²)")
	}
	if UseAVX512 {
		return pcgDraw8(lanes, dst, raw, jump, n, limit)
	}
	return pcgDraw8Go(lanes, dst, raw, jump, n, limit)
}

// Prefetch asks the CPU to bring row's cache lines into cache
// (PREFETCHT0, prefetch_amd64.s): a hint that never changes a result.
func Prefetch(row []float64) { prefetch(row) }

// PrefetchInt32 is Prefetch for a row of CSR column indices.
func PrefetchInt32(row []int32) { prefetchInt32(row) }
