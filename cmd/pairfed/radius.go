package main

import (
	"fmt"

	"github.com/pairfed/pairfed/experiment"
	"github.com/urfave/cli/v2"
)

// radiusUsage is the --radius help of the single-machine commands.
const radiusUsage = "per-record L2 clipping radius R after scaling (0: no clipping, which is refused for private algorithms: they need R > 0)"

// radiusDefault is the help's default of --radius (experiment.DefaultFeatureRadius).
const radiusDefault = "1 for private algorithms; no clipping for the others, where it would only cost accuracy"

// featureRadius is --radius when given, else experiment.DefaultFeatureRadius
// of algo: non-private runs are not clipped unless asked.
func featureRadius(c *cli.Context, algo string) float64 {
	if c.IsSet("radius") {
		return c.Float64("radius")
	}
	return experiment.DefaultFeatureRadius(algo)
}

// Accepted range of --radius (besides 0, no clipping): records are
// clipped to ‖x‖ ≤ R after scaling, so R sets every sensitivity; 1e308
// made the private algorithms' bounds infinite and their messages point
// at the loss instead (issue 28, finding 7).
const minRadius, maxRadius = 1e-6, 1e6

// checkRadius refuses a positive --radius outside [minRadius, maxRadius]
// before any work.
func checkRadius(c *cli.Context) error {
	if !c.IsSet("radius") {
		return nil
	}
	r := c.Float64("radius")
	if !(r > maxRadius || (r > 0 && r < minRadius)) {
		return nil // a negative or NaN R: refused by the run's validation
	}
	return usageError{fmt.Errorf("%s: --radius %g is outside the accepted range [%g, %g] (the L2 radius each record is clipped to after scaling: about 1 for features scaled to [-1, 1], √d at most; 0: no clipping, non-private runs only)", c.Command.Name, r, minRadius, maxRadius)}
}
