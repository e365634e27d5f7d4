//go:build !amd64

package pairwise

// havePCG8 is false off amd64: pcg.fill draws one state at a time.
var havePCG8 = false

func pcgFill8(lanes *[16]uint64, dst []uint64, jump *[4]uint64) {
	panic("pairwise: pcgFill8 without AVX-512")
}

func pcgDraw8(lanes *[16]uint64, dst []int, raw []uint64, jump *[4]uint64, n, limit uint64) int {
	panic("pairwise: pcgDraw8 without AVX-512")
}
