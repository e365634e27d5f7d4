package dpalgo

import "github.com/pairfed/pairfed/pairwise"

// bothTasks is the Tasks of an algorithm defined for AUC and metric
// learning alike.
var bothTasks = []pairwise.Task{pairwise.TaskAUC, pairwise.TaskMetric}
