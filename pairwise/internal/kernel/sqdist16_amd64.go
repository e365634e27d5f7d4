//go:build !purego

package kernel

//go:noescape
func sqDist16BoundAVX(q, blk []float64, bound float64, out *[16]float64) uint32

// SqDist16Bound computes SqDist16BoundGo's values and mask, bit for bit:
// with AVX2 four lanes per instruction (sqdist16_amd64.s), else the
// reference.
func SqDist16Bound(q, blk []float64, bound float64, out *[16]float64) uint32 {
	if UseAVX2 {
		if len(blk) < 16*len(q) {
			panic("kernel: SqDist16Bound: blk shorter than 16·len(q)")
		}
		return sqDist16BoundAVX(q, blk, bound, out)
	}
	return SqDist16BoundGo(q, blk, bound, out)
}
