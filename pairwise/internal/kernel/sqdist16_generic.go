//go:build !amd64 || purego

package kernel

// SqDist16Bound is SqDist16BoundGo off amd64 and under purego.
func SqDist16Bound(q, blk []float64, bound float64, out *[16]float64) uint32 {
	return SqDist16BoundGo(q, blk, bound, out)
}
