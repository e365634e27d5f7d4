package dpalgo

import (
	"github.com/pairfed/pairfed/pairwise"
)

// postProcessReleased makes w a valid model: Π_W(w), and for metric models the
// symmetric part (W + Wᵀ)/2 (a no-op after the PSD projections, which
// symmetrize; needed only for the unconstrained "none" set). It is applied
// to released (noisy) values only, so it is post-processing and does not
// change the privacy guarantee.
func postProcessReleased(obj pairwise.Objective, w []float64) {
	obj.Project(w)
	if obj.Task() != pairwise.TaskMetric {
		return
	}
	d := obj.Data().D
	for a := 0; a < d; a++ {
		for b := a + 1; b < d; b++ {
			m := (w[a*d+b] + w[b*d+a]) / 2
			w[a*d+b], w[b*d+a] = m, m
		}
	}
}

// noisyIterates is the output rule of dp-gd and dp-pair-sgd: the last
// iterate or the uniform average of the iterates, with checkpoints of the
// same rule. Every iterate is post-processing of the noisy releases, so
// every value it hands out is too.
type noisyIterates struct {
	obj  pairwise.Objective
	last bool
	avg  []float64
	cp   pairwise.Checkpointer
}

func newNoisyIterates(obj pairwise.Objective, cfg *pairwise.RunConfig) *noisyIterates {
	return &noisyIterates{obj: obj, last: cfg.Averaging == pairwise.AvgLast, avg: make([]float64, obj.NumParams()), cp: pairwise.NewCheckpointer(cfg)}
}

// add records iterate t (w, already projected) and fires its checkpoints.
func (it *noisyIterates) add(t int, w []float64) {
	pairwise.Axpy(1, w, it.avg)
	if it.cp.Due(t) {
		it.cp.Fire(t, it.output(t, append([]float64(nil), w...)))
	}
}

// output turns w, the iterate after t steps, into the model the rule
// releases, in place: w itself or the average of the first t iterates,
// post-processed (postProcessReleased). It returns w.
func (it *noisyIterates) output(t int, w []float64) []float64 {
	if !it.last {
		copy(w, it.avg)
		pairwise.Scale(1/float64(t), w)
	}
	postProcessReleased(it.obj, w)
	return w
}
