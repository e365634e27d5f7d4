//go:build !amd64 || purego

package kernel

// The dispatch off amd64 and under the purego tag: no assembly is built,
// and every kernel is its Go reference (see kernel_amd64.go for the
// contracts).

var (
	UseAVX    = false
	UseAVX2   = false
	UseAVX512 = false
)

func DiffDot(w, a, b, pa, pb []float64) float64 { return DiffDotGo(w, a, b) }

func UpdateFlush(w, xi, xj []float64, a, r, r2 float64, sum, prev []float64, pend float64) {
	updateFlushGo(w, xi, xj, a, r, r2, sum, prev, pend)
}

func PrevStep(p *PrevStepArgs) bool { return prevStepGo(p) }

func AddRepeat(sum, w []float64, m int) { addRepeatGo(sum, w, m) }

func LogisticChunkSums(u, v, in, out []float64) { logisticChunkSumsGo(u, v, in, out) }

func PCGFill8(lanes *[16]uint64, dst []uint64, jump *[4]uint64) {
	if len(dst) == 0 || len(dst)%8 != 0 {
		panic("kernel: PCGFill8: len(dst) is not a positive multiple of 8")
	}
	pcgFill8Go(lanes, dst, jump)
}

func PCGDraw8(lanes *[16]uint64, dst []int, raw []uint64, jump *[4]uint64, n, limit uint64) int {
	if len(dst) == 0 || len(dst)%8 != 0 || len(raw) < len(dst) || n < 2 || n >= 1<<32 {
		panic("kernel: PCGDraw8: len(dst) is not a positive multiple of 8, raw is shorter, or n is outside [2, 2³²)")
	}
	return pcgDraw8Go(lanes, dst, raw, jump, n, limit)
}

func Prefetch(row []float64) {}

func PrefetchInt32(row []int32) {}
