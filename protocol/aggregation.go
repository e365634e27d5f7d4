package protocol

import (
	"fmt"
	"strconv"
	"strings"
)

// Aggregation is how the coordinator combines the sites' updates of a
// phase (JobSubmit.Aggregation, JobAnnounce.Aggregation):
//
//	"" or "mean"        the weighted mean (the algorithms' definition)
//	"median"            the coordinate-wise median (unweighted)
//	"trimmed-mean:β"    per coordinate, drop the ⌊βm⌋ smallest and largest
//	                    of the m values and average the rest (0 < β < ½)
//
// Robust rules bound what one misbehaving site can do to the model. They
// are post-processing of the sites' releases, so every site's record-level
// DP guarantee is unchanged; they are not the papers' algorithms, whose
// utility bounds assume the mean.
type Aggregation struct {
	Rule string  // "mean", "median" or "trimmed-mean"
	Trim float64 // β of trimmed-mean
}

// Aggregation rules.
const (
	AggMean        = "mean"
	AggMedian      = "median"
	AggTrimmedMean = "trimmed-mean"
)

// ParseAggregation parses an aggregation string (see Aggregation).
func ParseAggregation(s string) (Aggregation, error) {
	switch {
	case s == "" || s == AggMean:
		return Aggregation{Rule: AggMean}, nil
	case s == AggMedian:
		return Aggregation{Rule: AggMedian}, nil
	case strings.HasPrefix(s, AggTrimmedMean+":"):
		b, err := strconv.ParseFloat(strings.TrimPrefix(s, AggTrimmedMean+":"), 64)
		if err != nil || !(b > 0 && b < 0.5) {
			return Aggregation{}, fmt.Errorf("protocol: aggregation %q: the trimmed fraction β must be a number in (0, 0.5)", s)
		}
		return Aggregation{Rule: AggTrimmedMean, Trim: b}, nil
	}
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return Aggregation{}, fmt.Errorf("protocol: unknown aggregation %q (want mean, median or trimmed-mean:β)", s)
}

// Tasks (JobAnnounce.Task, JobSubmit.Task) and evaluation metrics
// (JobStatus.Metric).
const (
	TaskAUC    = "auc"
	TaskMetric = "metric"
	MetricKNN3 = "knn3"
)
