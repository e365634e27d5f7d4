package pairwise

import (
	"context"
	"math/rand/v2"
)

// RunPrevSGD runs T steps of SGD pairing each draw with the previous
// instance ([Y21a] Alg 1's pairing) under schedule sched: the specialized
// loop of sgdprev_fast.go when it applies to obj and cfg — on CSR data
// with d ≥ 512 and d ≥ 16 × (mean nonzeros per row) its lazy O(nnz) form
// of sgdprev_sparse.go — with the same bits, and otherwise the general
// loop, RunPairSGD with a PrevInstance source.
func RunPrevSGD(ctx context.Context, obj Objective, cfg RunConfig, rng *rand.Rand, T int, sched Schedule) (*Result, error) {
	f := newPrevFast(obj, &cfg, sched)
	switch {
	case f == nil:
		return RunPairSGD(ctx, obj, cfg, rng, &PrevInstance{N: obj.Data().N}, T, sched)
	case useLazySparse(f.data):
		return f.runLazy(ctx, cfg, rng, T, sched)
	default:
		return f.run(ctx, cfg, rng, T, sched)
	}
}
