package main

import (
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
