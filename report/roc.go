package report

import (
	"errors"
	"fmt"
	"math"

	"github.com/pairfed/pairfed/pairwise"
)

// ROC is the ROC curve of a linear model on a test set.
type ROC struct {
	// FPR and TPR are pairwise.ROC's points, from (0, 0) to (1, 1), one
	// per distinct score.
	FPR, TPR []float64
	// AUC is the area under the piecewise-linear curve (trapezoids),
	// computed on the counts of false and true positives, so that it equals
	// pairwise.AUC's count of correctly ranked pairs (ties ½).
	AUC float64
	// LinearAUC is pairwise.LinearAUC of the model on the same records.
	LinearAUC            float64
	Positives, Negatives int
	// TestFile and Scale say where the records came from (shown as given).
	TestFile, Scale string
}

// NewROC scores every record of test with the linear model w (s = wᵀx)
// and returns its ROC curve. It fails when the dimensions differ or a
// class is absent (no curve exists).
func NewROC(w []float64, test *pairwise.Dataset) (*ROC, error) {
	if test == nil || test.N == 0 {
		return nil, errors.New("report: the test set is empty")
	}
	if test.D != len(w) {
		return nil, fmt.Errorf("report: the test set has d = %d features, the model %d parameters", test.D, len(w))
	}
	scores := pairwise.ScoresTo(make([]float64, test.N), w, test)
	r := &ROC{}
	for i, s := range scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("report: the score of test record %d is %v", i+1, s)
		}
		if test.Y[i] > 0 {
			r.Positives++
		} else {
			r.Negatives++
		}
	}
	if r.Positives == 0 || r.Negatives == 0 {
		return nil, fmt.Errorf("report: the test set has %d positive and %d negative records: an ROC curve needs both", r.Positives, r.Negatives)
	}
	r.FPR, r.TPR = pairwise.ROC(scores, test.Y)
	r.AUC = trapezoidArea(r.FPR, r.TPR, r.Negatives, r.Positives)
	r.LinearAUC = pairwise.AUC(scores, test.Y)
	return r, nil
}

// trapezoidArea is the area under the ROC points (fpr, tpr) of a set with
// n negatives and p positives. It works on the integer counts behind the
// rates: Σ Δfp·(tp + tp_prev)/2 / (n·p) is then exact in floating point
// for any realistic n and p (all terms are multiples of ½ below 2⁵³), the
// same rational as pairwise.AUC's.
func trapezoidArea(fpr, tpr []float64, n, p int) float64 {
	N, P := float64(n), float64(p)
	var area, fp0, tp0 float64
	for i := range fpr {
		fp, tp := math.Round(fpr[i]*N), math.Round(tpr[i]*P)
		area += (fp - fp0) * (tp + tp0) / 2
		fp0, tp0 = fp, tp
	}
	return area / (N * P)
}
