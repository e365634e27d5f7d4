package main

import (
	"fmt"
	"runtime"
	"text/tabwriter"

	"github.com/pairfed/pairfed/experiment"
	"github.com/urfave/cli/v2"
)

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "measure per-step speed and allocations of the pairwise SGD step (same cases as `go test -bench Step ./experiment`)",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(c *cli.Context) error {
			cases := experiment.Bench()
			if c.Bool("json") {
				return writeJSON(c.App.Writer, map[string]any{"gomaxprocs": runtime.GOMAXPROCS(0), "cases": cases})
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "case\tns/step\tpair-steps/s\tallocs/step\tB/step")
			for _, b := range cases {
				fmt.Fprintf(tw, "%s\t%.1f\t%.3g\t%.4f\t%.2f\n", b.Name, b.NsPerStep, b.PairStepsPerSecond, b.AllocsPerStep, b.BytesPerStep)
			}
			return tw.Flush()
		},
	}
}
