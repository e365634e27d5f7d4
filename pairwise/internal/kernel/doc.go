// Package kernel holds the assembly kernels of pairwise's hot loops beside
// their Go references, as gonum keeps its internal/asm.
//
// Every kernel is an ordinary Go function with one dispatch style: the
// choice between assembly and Go reference is made once, at init, from
// golang.org/x/sys/cpu into the Use* variables below, and each kernel reads
// its variable at the call. Off amd64, and on amd64 under the purego build
// tag, no assembly is built (kernel_generic.go): the Use* variables are
// false and every kernel runs its reference. No kernel panics for want of
// an instruction set.
//
//	kernel             assembly (needs)             reference (ref.go)
//	DiffDot            diffDotAVX (AVX2)            DiffDotGo
//	UpdateFlush        updateFlushAVX (AVX2)        updateFlushGo
//	PrevStep           prevStepAVX (AVX2)           prevStepGo
//	AddRepeat          addRepeatAVX (AVX2)          addRepeatGo
//	LogisticChunkSums  logisticChunkAVX (AVX)       logisticChunkSumsGo
//	SqDist16Bound      sqDist16BoundAVX (AVX2)      SqDist16BoundGo (sqdist16.go)
//	PCGFill8           pcgFill8 (AVX-512F, DQ)      pcgFill8Go
//	PCGDraw8           pcgDraw8 (AVX-512F, DQ)      pcgDraw8Go
//	Prefetch(Int32)    PREFETCHT0 (amd64)           none: a hint
//	DenseUpdate        —                            itself
//
// Each assembly kernel computes its reference's values bit for bit: lane by
// lane the same IEEE operations in the same order, no FMA, and integer
// arithmetic mod 2⁶⁴ (kernel_test.go checks it on random inputs of every
// awkward length, special values included). So on amd64 results — model
// bits, the goldens of pairwise and cmd/pairfed — do not depend on the CPU
// or the tag; only speed does. (Other architectures run the same Go, but
// the Go spec lets a compiler fuse x·y + z into one rounding, as arm64's
// does; whether their bits equal amd64's is not tested here.)
//
// The Use* variables also tell callers whether the fast shape of a loop
// pays (pairwise's sgd-prev loop fuses a whole step into PrevStep only when
// UseAVX2). Tests may set them false to run the references on any machine;
// nothing else writes them.
package kernel
