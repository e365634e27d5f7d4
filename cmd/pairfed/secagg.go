package main

import (
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
	"github.com/urfave/cli/v2"
)

// secAggFlags are the job options of secure aggregation (simulate, job
// submit): carried as the job's options secagg, secagg-threshold,
// secagg-timeout and secagg-colluders (fedalgo/secure.go), checked there.
func secAggFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "secure-aggregation", Usage: "sum the sites' releases by secure aggregation with the distributed discrete Gaussian (algorithms that release sums: " + secAggAlgoList() + "): the coordinator sees only the sum of at least --secagg-threshold sites"},
		&cli.IntFlag{Name: "secagg-threshold", Usage: "secure aggregation: the survivors t a round needs (fewer: the round aborts, nothing released); the noise is calibrated for t − colluders shares", DefaultText: "⌊2K/3⌋+1 of K sites"},
		&cli.IntFlag{Name: "secagg-timeout", Usage: "secure aggregation: ticks each round step waits for the sites", DefaultText: "50"},
		&cli.IntFlag{Name: "secagg-colluders", Usage: "secure aggregation: sites that may collude with the coordinator (their noise is not counted)"},
	}
}

// secAggOptions returns the job options the flags ask for (nil without
// --secure-aggregation; the other flags then make Configure refuse).
func secAggOptions(c *cli.Context) protocol.Options {
	m := map[string]float64{}
	if c.Bool("secure-aggregation") {
		m[fedalgo.OptSecAgg] = 1
	}
	for flag, opt := range map[string]string{"secagg-threshold": fedalgo.OptSecAggThreshold, "secagg-timeout": fedalgo.OptSecAggTimeout, "secagg-colluders": fedalgo.OptSecAggColluders} {
		if c.IsSet(flag) {
			m[opt] = float64(c.Int(flag))
		}
	}
	return protocol.OptionsOf(m)
}
