package kernel

// SqDist16BoundGo is SqDist16Bound's reference: the squared Euclidean
// distances from q (length m) to sixteen rows stored interleaved in blk
// (blk[16a + l] is row l's coordinate a, len(blk) ≥ 16m), each summed left
// to right over a — lane l is exactly Σ_a (q_a − x_{l,a})² in that order,
// the scalar loop's sum — into out. After every fourth coordinate (when
// coordinates remain) it stops if all sixteen partial sums exceed bound,
// leaving those partial sums in out: the sums only grow (each term is
// ≥ 0), so a caller that keeps distances ≤ bound loses nothing. It returns
// the mask of the lanes l with !(out[l] > bound) (bit l): the ones such a
// caller has to look at.
func SqDist16BoundGo(q, blk []float64, bound float64, out *[16]float64) uint32 {
	blk = blk[:16*len(q)]
	var s [16]float64
	for a, qa := range q {
		x := blk[16*a : 16*a+16 : 16*a+16]
		for l := range s {
			e := qa - x[l]
			s[l] += e * e
		}
		if (a+1)%4 == 0 && a+1 < len(q) {
			all := true
			for _, v := range s {
				all = all && v > bound
			}
			if all {
				break
			}
		}
	}
	*out = s
	var mask uint32
	for l, v := range s {
		if !(v > bound) {
			mask |= 1 << l
		}
	}
	return mask
}
