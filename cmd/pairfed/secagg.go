package main

import (
	"crypto/ed25519"
	"fmt"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/secagg/round"
	"github.com/urfave/cli/v2"
)

// secAggFlags are the job options of secure aggregation (simulate, job
// submit): carried as the job's options secagg, secagg-threshold,
// secagg-timeout, secagg-colluders, secagg-degree and secagg-keep-all
// (fedalgo/secure.go),
// checked there.
func secAggFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "secure-aggregation", Usage: "sum the sites' releases by secure aggregation with the distributed discrete Gaussian (algorithms that release sums: " + secAggAlgoList() + "): the coordinator sees only the sum of at least --secagg-threshold sites"},
		&cli.IntFlag{Name: "secagg-threshold", Usage: "secure aggregation: the survivors t a round needs (fewer: the round aborts, nothing released); the noise is calibrated for t − colluders shares", DefaultText: "⌊2K/3⌋+1 of K sites"},
		&cli.IntFlag{Name: "secagg-timeout", Usage: "secure aggregation: ticks a round step waits after its last answer, per 16 sites", DefaultText: "50"},
		&cli.IntFlag{Name: "secagg-colluders", Usage: "secure aggregation: sites that may collude with the coordinator (their noise is not counted)"},
		&cli.BoolFlag{Name: "secagg-keep-all", Usage: "secure aggregation: every site draws all its noise from its secure source. Without it each site draws part of it from a seed it reveals only when every site is in the sum, and the coordinator subtracts that part, so a round nobody drops holds one central release's noise instead of K/(t − colluders) of it; the job's guarantee is the same either way, but a site's local-only ε (its own noise alone, if every other site colluded) is then its kept part's. This flag keeps the whole share", DefaultText: "off (removable copies)"},
		&cli.IntFlag{Name: "secagg-degree", Usage: "secure aggregation: run SecAgg+ — each site masks with and shares among about this many random neighbours instead of all others (per-site cost O(degree) instead of O(K)); the noise is calibrated for the sparse graph's floor of honest shares, printed with the plan. 0: the complete graph", DefaultText: "0 (complete graph)"},
	}
}

// secAggOptions returns the job options the flags ask for (nil without
// --secure-aggregation; the other flags then make Configure refuse).
func secAggOptions(c *cli.Context) protocol.Options {
	m := map[string]float64{}
	if c.Bool("secure-aggregation") {
		m[fedalgo.OptSecAgg] = 1
	}
	for flag, opt := range map[string]string{"secagg-threshold": fedalgo.OptSecAggThreshold, "secagg-timeout": fedalgo.OptSecAggTimeout, "secagg-colluders": fedalgo.OptSecAggColluders, "secagg-degree": fedalgo.OptSecAggDegree} {
		if c.IsSet(flag) {
			m[opt] = float64(c.Int(flag))
		}
	}
	if c.Bool("secagg-keep-all") {
		m[fedalgo.OptSecAggKeepAll] = 1
	}
	return protocol.OptionsOf(m)
}

// secAggRosterFlag is the roster of the sites' secure aggregation public
// keys (coordinator and worker); secAggKeyFlag the site's own signing key
// (worker). Both files are written by pairfed deploy init (secagg/round,
// keys.go, has their format).
func secAggRosterFlag() cli.Flag {
	return &cli.StringFlag{Name: "secagg-roster", Usage: "secure aggregation: the roster of every site's Ed25519 public key (JSON, from pairfed deploy init); needed for jobs with secure aggregation, whose rounds are signed against a lying coordinator"}
}

func secAggKeyFlag() cli.Flag {
	return &cli.StringFlag{Name: "secagg-key", Usage: "secure aggregation: this site's Ed25519 signing key (PEM, from pairfed deploy init; keep it 0600, it is not the NATS nkey); with --secagg-roster"}
}

// loadSecAggRoster reads --secagg-roster (nil when not given).
func loadSecAggRoster(c *cli.Context) (map[string]ed25519.PublicKey, error) {
	path := c.String("secagg-roster")
	if path == "" {
		return nil, nil
	}
	b, err := readInput("--secagg-roster", path, 16<<20)
	if err != nil {
		return nil, err
	}
	r, err := round.ParseRoster(b)
	if err != nil {
		return nil, fmt.Errorf("--secagg-roster %s: %w", path, err)
	}
	return r, nil
}

// loadSecAggKeys reads --secagg-key and --secagg-roster (both or
// neither; the roster must list the key under site's name).
func loadSecAggKeys(c *cli.Context, site string) (ed25519.PrivateKey, map[string]ed25519.PublicKey, error) {
	if c.IsSet("secagg-key") != c.IsSet("secagg-roster") {
		return nil, nil, fmt.Errorf("--secagg-key and --secagg-roster go together: the site signs with its key and checks the others' signatures with the roster")
	}
	path := c.String("secagg-key")
	if path == "" {
		return nil, nil, nil
	}
	b, err := readInput("--secagg-key", path, 1<<20)
	if err != nil {
		return nil, nil, err
	}
	k, err := round.ParseSigningKey(b)
	if err != nil {
		return nil, nil, fmt.Errorf("--secagg-key %s: %w", path, err)
	}
	r, err := loadSecAggRoster(c)
	if err != nil {
		return nil, nil, err
	}
	if pk, ok := r[site]; !ok || !pk.Equal(k.Public()) {
		return nil, nil, fmt.Errorf("--secagg-roster does not list the public key of --secagg-key under site %s: a key or roster of another site or deployment?", site)
	}
	return k, r, nil
}
