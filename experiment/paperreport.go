package experiment

import (
	"fmt"
	"slices"
)

// PaperDetails is what only the paper protocol reports.
type PaperDetails struct {
	CVAUC       float64   `json:"cv_auc"`     // the selection score of (η, β), on test folds
	Checkpoint  int       `json:"checkpoint"` // the iteration whose mean AUC is reported
	Checkpoints []int     `json:"checkpoints"`
	Curve       []float64 `json:"curve"` // mean AUC at every checkpoint
}

// PaperReport puts a paper-protocol result in the Report shape every
// `pairfed train` prints: auc is a Summary over the test-phase folds at
// the chosen checkpoint, eta and param_radius list the chosen η and β once
// per fold, n_train and n_test are one fold's sizes.
func PaperReport(res *PaperResult, dataset string) *Report {
	rep := &Report{Algorithm: res.Algo, Dataset: dataset, Task: "auc", Loss: res.Loss, Protocol: "paper",
		NTrain: res.NTrain, NTest: res.NTest, D: res.D, Runs: res.Runs,
		AUC:     &Summary{Mean: res.AUC, Std: res.Std, Values: res.Values},
		Seconds: res.Seconds, SecondsPerRun: res.Seconds / float64(max(res.Runs, 1)),
		WallSeconds: res.Seconds, TrainSeconds: res.TrainSeconds,
		Eta:         slices.Repeat([]float64{res.Eta}, res.Runs),
		ParamRadius: slices.Repeat([]float64{res.Beta}, res.Runs),
		Paper:       &PaperDetails{CVAUC: res.CVAUC, Checkpoint: res.Checkpoint, Checkpoints: res.Checkpoints, Curve: res.Curve},
	}
	rep.PairSteps = res.PairGrads
	if res.Seconds > 0 {
		rep.PairStepsPerSecond = float64(res.PairGrads) / res.Seconds
	}
	rep.Notes = append(rep.Notes, "objective not computed by this protocol (0)",
		fmt.Sprintf("[Y21a] code protocol: η and β selected on test folds (CV AUC %.4f); AUC is the best checkpoint's mean (t = %d) — --protocol validation is the honest alternative", res.CVAUC, res.Checkpoint),
		fmt.Sprintf("algorithm time %.4g s per run (checkpoint evaluation excluded, as the authors' code times it); wall time %.4g s for selection and %d runs", res.SecondsPerRun, res.Seconds, res.Runs))
	return rep
}
