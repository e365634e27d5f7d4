package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/pairfed/pairfed/deploy"
	"github.com/urfave/cli/v2"
)

// `pairfed deploy init`: the files of a multi-site deployment (package
// deploy; deploy/README.md is the operator's guide).

func deployCommand() *cli.Command {
	return &cli.Command{
		Name:        "deploy",
		Usage:       "generate a secure multi-site deployment (TLS, credentials, per-site permissions, leaf nodes)",
		Subcommands: []*cli.Command{deployInitCommand()},
	}
}

func deployInitCommand() *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "generate a CA, certificates, credentials, the hub and leaf-node nats-server configs, systemd units, a compose file and a job script",
		Description: `Example (three hospitals, a hub reachable as hub.example.org):
   pairfed deploy init --federation study1 --sites a,b,c --hub-host hub.example.org --out ./study1

Writes into --out (which must not exist or be empty): ca/ (keep ca-key.pem
offline), hub/, coordinator/, client/ and site-NAME/ for every site, each to be
copied to PREFIX/<directory> on its host; INSTALL.md says what goes where and
deploy/README.md of the repository walks through it. Secrets are written 0600.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "federation", Required: true, Usage: "federation name (a subject token)"},
			&cli.StringFlag{Name: "sites", Required: true, Usage: "comma-separated site names (subject tokens)"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "output directory (must not exist or be empty)"},
			&cli.StringSliceFlag{Name: "hub-host", Usage: "DNS name or IP address of the hub as sites and the coordinator reach it (repeatable; the first is used in URLs; default localhost)"},
			&cli.StringFlag{Name: "hub-bind", Value: "0.0.0.0", Usage: "address the hub listens on"},
			&cli.StringFlag{Name: "hub-nodes", Usage: "make the hub a cluster: comma-separated hosts of its 2 to 9 nodes (3 survive the loss of any one); nodes on one host (a host named twice) listen on the base ports plus their index"},
			&cli.IntFlag{Name: "cluster-port", Value: deploy.DefaultClusterPort, Usage: "the hub nodes' route port (with --hub-nodes)"},
			&cli.IntFlag{Name: "client-port", Value: deploy.DefaultClientPort, Usage: "the hub's client port (coordinator, job clients, direct workers)"},
			&cli.IntFlag{Name: "leaf-port", Value: deploy.DefaultLeafPort, Usage: "the hub's leaf-node port (sites' leaf servers)"},
			&cli.StringFlag{Name: "site-ports", Value: fmt.Sprint(deploy.DefaultSitePort), Usage: "loopback port of each site's leaf server: one for all sites, or a comma-separated port per site (several sites on one host)"},
			&cli.StringFlag{Name: "prefix", Value: deploy.DefaultPrefix, Usage: "absolute directory where each host installs its role directory (the configs and units refer to it)"},
			&cli.StringFlag{Name: "state-dir", Value: deploy.DefaultStateDir, Usage: "absolute directory of the coordinator's and workers' state"},
			&cli.StringFlag{Name: "pairfed-bin", Value: deploy.DefaultPairfed, Usage: "path of the pairfed binary in the units"},
			&cli.StringFlag{Name: "nats-server-bin", Value: deploy.DefaultNATSServer, Usage: "path of the nats-server binary in the units"},
			&cli.IntFlag{Name: "cert-days", Value: deploy.DefaultCertDays, Usage: "validity of the hub, coordinator, client and site certificates"},
			&cli.IntFlag{Name: "ca-days", Value: deploy.DefaultCADays, Usage: "validity of the CA certificate"},
		},
		Action: runDeployInit,
	}
}

// maxValidityDays bounds --cert-days and --ca-days (100 years).
const maxValidityDays = 36500

func runDeployInit(c *cli.Context) error {
	var sites []string
	for i, s := range strings.Split(c.String("sites"), ",") {
		if s = strings.TrimSpace(s); s == "" {
			// Probe 4: "a,,c" silently became two sites.
			return usageError{fmt.Errorf("deploy init: --sites %q: name %d is empty (a doubled or trailing comma?): give each site once, e.g. --sites a,b,c", c.String("sites"), i+1)}
		}
		sites = append(sites, s)
	}
	var ports []int
	for _, p := range strings.Split(c.String("site-ports"), ",") {
		var n int
		if _, err := fmt.Sscanf(strings.TrimSpace(p), "%d", &n); err != nil || fmt.Sprint(n) != strings.TrimSpace(p) {
			return usageError{fmt.Errorf("deploy init: --site-ports %q: %q is not a port", c.String("site-ports"), p)}
		}
		ports = append(ports, n)
	}
	var hubNodes []string
	if s := c.String("hub-nodes"); s != "" {
		for _, h := range strings.Split(s, ",") {
			hubNodes = append(hubNodes, strings.TrimSpace(h))
		}
	}
	// At most 100 years: the validity is a time.Duration (≈ 292 years at
	// most), and 1e9 days overflowed into "negative validity".
	for _, f := range []string{"cert-days", "ca-days"} {
		if d := c.Int(f); d <= 0 || d > maxValidityDays {
			return usageError{fmt.Errorf("deploy init: --%s %d outside [1, %d] days (e.g. 825 for certificates, 3650 for the CA)", f, d, maxValidityDays)}
		}
	}
	cfg := deploy.Config{
		Federation: c.String("federation"), Sites: sites, HubHosts: c.StringSlice("hub-host"), HubBind: c.String("hub-bind"),
		ClientPort: c.Int("client-port"), LeafPort: c.Int("leaf-port"), SitePorts: ports,
		HubNodes: hubNodes, ClusterPort: c.Int("cluster-port"),
		Prefix: c.String("prefix"), StateDir: c.String("state-dir"), Pairfed: c.String("pairfed-bin"), NATSServer: c.String("nats-server-bin"),
		CertValidity: time.Duration(c.Int("cert-days")) * 24 * time.Hour, CAValidity: time.Duration(c.Int("ca-days")) * 24 * time.Hour,
	}
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	out := c.String("out")
	if err := checkOutputDir("--out", out); err != nil {
		return err
	}
	m, err := deploy.Generate(cfg, out)
	if err != nil {
		return err
	}
	w := c.App.Writer
	fmt.Fprintf(w, "federation %s: %d sites (%s), hub %s (leaf nodes %s)\n", m.Federation, len(m.Sites), strings.Join(m.Sites, ", "), m.HubURL, m.LeafURL)
	if len(m.HubNodes) > 0 {
		fmt.Fprintf(w, "the hub is a cluster of %d nodes: %s (one directory per node's host)\n", len(m.HubNodes), strings.Join(m.HubNodes, ", "))
	}
	secrets := 0
	for _, f := range m.Files {
		if f.Secret {
			secrets++
		}
	}
	fmt.Fprintf(w, "wrote %d files into %s (%d secret, mode 0600); see %s/INSTALL.md\n", len(m.Files), out, secrets, out)
	fmt.Fprintf(w, "keep %s/ca/ca-key.pem offline: it can issue certificates the hub accepts\n", out)
	if len(cfg.HubHosts) == 1 && cfg.HubHosts[0] == "localhost" {
		fmt.Fprintln(w, "note: no --hub-host: the sites dial localhost, which only works when everything runs on one host")
	}
	return nil
}
