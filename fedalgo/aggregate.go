package fedalgo

import (
	"math"
	"slices"

	"github.com/pairfed/pairfed/protocol"
)

// Aggregate combines the sites' vectors under rule: the weighted mean,
// or, robustly and unweighted, the coordinate-wise median or trimmed mean
// (see protocol.Aggregation). vecs are in site order and of equal length.
// The mean sums w·v and divides by Σw once, except with normalized, which
// multiplies by w/Σw (gradients: a single site's gradient is then
// used exactly).
func Aggregate(rule protocol.Aggregation, vecs [][]float64, weights []float64, normalized bool) []float64 {
	p := len(vecs[0])
	out := make([]float64, p)
	if rule.Rule == protocol.AggMean || rule.Rule == "" {
		var total float64
		for _, w := range weights {
			total += w
		}
		for k, v := range vecs {
			if normalized {
				f := weights[k] / total
				for i, x := range v {
					out[i] += f * x
				}
			} else {
				for i, x := range v {
					out[i] += weights[k] * x
				}
			}
		}
		if !normalized {
			for i := range out {
				out[i] /= total
			}
		}
		return out
	}
	m := len(vecs)
	col := make([]float64, m)
	drop := 0
	if rule.Rule == protocol.AggTrimmedMean {
		drop = int(rule.Trim * float64(m))
	}
	for i := range out {
		for k, v := range vecs {
			col[k] = v[i]
		}
		slices.Sort(col)
		switch rule.Rule {
		case protocol.AggMedian:
			if m%2 == 1 {
				out[i] = col[m/2]
			} else {
				out[i] = (col[m/2-1] + col[m/2]) / 2
			}
		case protocol.AggTrimmedMean:
			kept := col[drop : m-drop]
			var s float64
			for _, x := range kept {
				s += x
			}
			out[i] = s / float64(len(kept))
		}
	}
	return out
}

// sumUpdates returns the coordinate-wise sum of the updates' vectors (nil
// without an update), the sum of their weights (record counts) and the
// noise of the sum, updatesSigma: what the combiners of summed noisy
// statistics (fed-dp-lda, fed-dp-spauc, fed-dp-pair-sgd) start from.
func sumUpdates(ups []*protocol.SiteUpdate) (sum []float64, n, sigma float64) {
	for _, u := range ups {
		if sum == nil {
			sum = make([]float64, len(u.Model))
		}
		for i, x := range u.Model {
			sum[i] += x
		}
		n += u.Weight
	}
	return sum, n, updatesSigma(ups)
}

// updatesSigma is √Σ σ_s², the noise per coordinate of the sum of the
// updates' independent Gaussian releases.
func updatesSigma(ups []*protocol.SiteUpdate) float64 {
	var v float64
	for _, u := range ups {
		v += u.Sigma * u.Sigma
	}
	return math.Sqrt(v)
}
