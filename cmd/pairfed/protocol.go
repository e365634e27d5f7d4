package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// paperIgnores are the `train` flags the paper protocol cannot honour: it
// fixes its own splits (5 folds × 5 repeats of the training file), scaling
// (min-max on the whole file), no clipping, its own (η, β) grid and no
// privacy.
var paperIgnores = []string{"test", "test-fraction", "folds", "runs", "train-size", "task", "radius", "param-radius",
	"constraint", "lambda", "eta", "steps", "scale", "epsilon", "delta", "noise-seed", "noise-scale", "calibration"}

// refuseFlags returns a usage error naming every flag of names that was
// given, or nil.
func refuseFlags(c *cli.Context, protocol string, names []string) error {
	var set []string
	for _, n := range names {
		if c.IsSet(n) {
			set = append(set, "--"+n)
		}
	}
	if len(set) == 0 {
		return nil
	}
	return usageError{fmt.Errorf("train: --protocol %s cannot honour %s (it fixes its own splits, scaling and (η, β) grid, as [Y21a]'s code does): drop them, or use --protocol validation", protocol, strings.Join(set, ", "))}
}
