package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/node"
	"github.com/pairfed/pairfed/protocol"
	"github.com/urfave/cli/v2"
)

func jobModelCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "model",
		Usage:     "download a completed job's model artefact (for pairfed score / evaluate)",
		ArgsUsage: "[JOB] (or --job JOB; flags go before JOB)",
		Description: `Asks the coordinator for the job (a job query: it never starts a job) and writes its model
   artefact: the global model, the job's parameters and the sites' privacy guarantees — the file the
   coordinator saved as STATE/jobs/JOB.model.json (or read that file with --state DIR on the
   coordinator's machine). A job submitted with --feature-bounds carries its schema, and the artefact
   embeds it as its preprocessing map (ready to score; missing values are imputed with the schema's
   constants). A job without one cannot score until the federation's public map is attached: give
   --feature-bounds SCHEMA (and the loader flags the sites used); the norm rule is the workers' (clip,
   or divide for algorithms that centre privately).

   --best writes the model of the job's best phase instead (jobs of several phases whose coordinator
   scores a --test file after each phase; STATE/jobs/JOB.best.model.json): selected on the
   coordinator's evaluation set, which is a NON-private selection on the evaluator's records (the sites'
   guarantees still cover the model) with an optimistic score — its artefact says so.

Examples:
   pairfed job model --nats nats://coord:4222 --feature-bounds schemas/diabetes.json --out m.json job-7
   pairfed job model --state /var/lib/pairfed --out m.json --job job-7
   pairfed job model --nats nats://coord:4222 --best --out best.json job-7`,
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "nats", Usage: "URL of the federation's NATS server"},
			federationFlag(),
			jobIDFlag(),
			&cli.StringFlag{Name: "state", Usage: "read STATE/jobs/JOB.model.json of a local coordinator instead of asking over NATS"},
			&cli.BoolFlag{Name: "best", Usage: "the model of the job's best phase on the coordinator's test file (JOB.best.model.json; jobs of several phases scored by a coordinator --test): a NON-private selection on the evaluator's records, with an optimistic score"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "model file to write"},
			signKeyFlag("the written model (a file the coordinator signed keeps its signature unless --feature-bounds changes it)"),
			featureBoundsFlag(),
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "give up waiting for the coordinator after this long"},
		}, dataFlags()...), connFlags()...),
		Action: runJobModel,
	})
}

func jobStatusCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "status",
		Usage:     "print a job's status (a job query: it never starts a job)",
		ArgsUsage: "[JOB] (or --job JOB; flags go before JOB)",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "nats", Required: true, Usage: "URL of the federation's NATS server"},
			federationFlag(),
			jobIDFlag(),
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "give up waiting for the coordinator after this long"},
		}, connFlags()...),
		Action: func(c *cli.Context) error {
			id, err := jobArg(c)
			if err != nil {
				return err
			}
			st, err := queryJob(c, id)
			if err != nil {
				return err
			}
			if err := writeJSON(c.App.Writer, st); err != nil {
				return err
			}
			if st.Status == protocol.StatusUnknown {
				return cli.Exit("", 1)
			}
			return nil
		},
	})
}

// jobIDFlag is --job, the alternative to the JOB argument (urfave/cli
// reads flags only before the first argument).
func jobIDFlag() cli.Flag {
	return &cli.StringFlag{Name: "job", Usage: "job id (or give it as the last argument, after the flags)"}
}

// jobArg is the job id: --job or the one argument.
func jobArg(c *cli.Context) (string, error) {
	id := c.String("job")
	switch {
	case id != "" && c.NArg() > 0:
		return "", usageError{fmt.Errorf("job %s: give the job id once (--job %s, and arguments %v)", c.Command.Name, id, c.Args().Slice())}
	case id == "" && c.NArg() > 1 && slices.ContainsFunc(c.Args().Tail(), func(a string) bool { return strings.HasPrefix(a, "-") }):
		tail := slices.Clone(c.Args().Tail())
		for i, a := range tail { // a cancel key is not repeated
			if k, v, ok := strings.Cut(a, "="); ok && strings.TrimLeft(k, "-") == "cancel-key" && !strings.HasPrefix(v, "@") {
				tail[i] = k + "=KEY"
			} else if i > 0 && strings.TrimLeft(tail[i-1], "-") == "cancel-key" && !strings.HasPrefix(a, "@") {
				tail[i] = "KEY"
			}
		}
		return "", usageError{fmt.Errorf("job %s: flags after the job id are not read (got %v after %s): give every flag before the id, e.g. pairfed job %s %s %s", c.Command.Name, tail, c.Args().First(), c.Command.Name, strings.Join(tail, " "), c.Args().First())}
	case id == "" && c.NArg() != 1:
		return "", usageError{fmt.Errorf("job %s: give one job id: --job ID, or ID after the flags (got %d arguments: %v)", c.Command.Name, c.NArg(), c.Args().Slice())}
	case id == "":
		id = c.Args().First()
	}
	if err := protocol.ValidName("job", id); err != nil {
		return "", usageError{err}
	}
	return id, nil
}

func runJobModel(c *cli.Context) error {
	id, err := jobArg(c)
	if err != nil {
		return err
	}
	signer, err := signKeyOf(c)
	if err != nil {
		return err
	}
	var m *model.Model
	switch {
	case c.String("state") != "" && c.String("nats") != "":
		return usageError{fmt.Errorf("job model: give --nats URL or --state DIR, not both")}
	case c.String("state") != "":
		suffix := coordinator.ModelFileSuffix
		if c.Bool("best") {
			suffix = coordinator.BestModelFileSuffix
		}
		p := filepath.Join(c.String("state"), "jobs", id+suffix)
		f, err := openInput("job model", p)
		if err != nil {
			// A job that ended otherwise has a status file saying how.
			if b, serr := readInput("job model", filepath.Join(c.String("state"), "jobs", id+".json"), 16<<20); serr == nil {
				var st protocol.JobStatus
				if json.Unmarshal(b, &st) == nil && st.Status != "" && st.Status != protocol.StatusCompleted {
					return fmt.Errorf("job model: job %s is %s (%s): only a completed job has a model", id, st.Status, st.Reason)
				}
			}
			return fmt.Errorf("%w (is %s a coordinator's state directory, and did job %s complete?)", err, c.String("state"), id)
		}
		m, err = model.Decode(f, p)
		f.Close()
		if err != nil {
			return err
		}
	case c.String("nats") != "":
		st, err := queryJob(c, id)
		if err != nil {
			return err
		}
		if st.Status != protocol.StatusCompleted {
			why := ""
			if st.Reason != "" {
				why = ": " + st.Reason
			}
			return fmt.Errorf("job model: job %s is %s%s; only a completed job has a model", id, st.Status, why)
		}
		build, from := coordinator.StatusModel, "job model (from the coordinator's status)"
		if c.Bool("best") {
			build = coordinator.BestModel
		}
		if m, err = build(st); err != nil {
			return err
		}
		m.Provenance.Pairfed, m.Provenance.Created = pairfedVersion(), time.Now().UTC().Format(time.RFC3339)
		if c.Bool("best") {
			from = "job model --best (from the coordinator's status); " + m.Provenance.Command
		}
		m.Provenance.Command = from
	default:
		return usageError{fmt.Errorf("job model: give --nats URL (ask the coordinator) or --state DIR (its state directory)")}
	}
	if c.String("feature-bounds") != "" {
		opt := dataOptions(c)
		schema, _, err := loadSchema(c, &opt)
		if err != nil {
			return err
		}
		if schema.D() != m.D {
			return usageError{fmt.Errorf("job model: %s has %d features but the model of job %s has %d", c.String("feature-bounds"), schema.D(), id, m.D)}
		}
		// The sites' map of this job (experiment.SiteMap, as the workers
		// apply it).
		algo := m.Algorithm.Name
		pm, err := experiment.SiteMap(experiment.SiteFacts{CentresPrivately: fedalgo.CentresPrivately(algo), Schema: schema,
			Radius: m.Preprocessing.Radius}, nil)
		if err != nil {
			return err
		}
		m.Preprocessing = *pm
		m.Preprocessing.Loader = modelLoaderOptions(opt, opt.PositiveClasses)
		m.Preprocessing.Loader.Dim = m.D
		m.Algorithm.Settings["preprocessing"] = "attached by `pairfed job model --feature-bounds` (the sites' public map, as the workers apply it)"
		if s := m.Signature; s != nil {
			// The coordinator's signature covers the file it wrote, not the
			// map attached here: the new file is unsigned unless signed now.
			m.Signature = nil
			if signer == nil {
				fmt.Fprintf(c.App.ErrWriter, "pairfed: warning: the coordinator's signature (%s, key fingerprint %s) does not cover the map --feature-bounds attaches: %s is written unsigned (sign it with --sign-key)\n", s.Signer, s.KeyFingerprint, c.String("out"))
			}
		}
	}
	var buf bytes.Buffer
	if err := model.EncodeSigned(&buf, m, signer); err != nil {
		return err
	}
	if err := checkOutput("--out", c.String("out"), namedPath{"--feature-bounds", c.String("feature-bounds")}); err != nil {
		return err
	}
	if err := writeFileAtomic(c.String("out"), buf.Bytes()); err != nil {
		return fmt.Errorf("job model: %w", err)
	}
	scorable := "ready for pairfed score/evaluate"
	if m.Scorable() != nil {
		scorable = "NOT scorable until the federation's map is attached (--feature-bounds)"
	}
	which := "global model"
	if c.Bool("best") {
		which = fmt.Sprintf("best-phase model (phase %g, selected on the coordinator's test file: a non-private selection)", m.Algorithm.Params["best_phase"])
	}
	fmt.Fprintf(c.App.ErrWriter, "pairfed: wrote %s: job %s's %s (private: %v%s); %s\n", c.String("out"), id, which, m.Certificate.Private, signedBy(m), scorable)
	return nil
}

// modelLoaderOptions records loader options given on the command line
// (no table was read: the format stays as given, e.g. auto).
func modelLoaderOptions(opt data.Options, positive string) model.Loader {
	l := model.Loader{Format: opt.Format, Sep: opt.Sep, Header: opt.Header, LabelColumn: opt.LabelColumn,
		IgnoreColumns: opt.IgnoreColumns, PositiveClasses: positive, Impute: opt.Impute}
	if l.Format == "" {
		l.Format = "auto"
	}
	if l.Impute == "" {
		l.Impute = "error"
	}
	if opt.Impute == "constant" && opt.ImputeValues != nil {
		for _, v := range opt.ImputeValues {
			v := v
			if v != v { // NaN: no constant
				l.ImputeValues = append(l.ImputeValues, nil)
			} else {
				l.ImputeValues = append(l.ImputeValues, &v)
			}
		}
	}
	return l
}

// queryJob asks the coordinator for job id's status (protocol.JobQuery,
// repeated every 2 s: core NATS may lose a message) until it answers or
// --timeout passes.
func queryJob(c *cli.Context, id string) (*protocol.JobStatus, error) {
	fed := c.String("federation")
	client := randomToken("c-")
	msg, err := protocol.Encode(&protocol.JobQuery{Job: id, Client: client})
	if err != nil {
		return nil, usageError{err}
	}
	natsOpts, err := connOptions(c, c.String("nats"))
	if err != nil {
		return nil, err
	}
	if err := checkTimeout(c); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	t, err := connectNATS(cctx, c.String("nats"), "pairfed-client", false, natsOpts...)
	ccancel()
	if err != nil {
		return nil, err
	}
	defer t.Close()
	statuses := make(chan *protocol.JobStatus, 4)
	unsub, err := t.Subscribe(protocol.ClientSubject(fed, client), func(_ string, b []byte) {
		m, err := protocol.Decode(b)
		if err != nil {
			return
		}
		if st, ok := m.(*protocol.JobStatus); ok && st.Job == id {
			select {
			case statuses <- st:
			default:
			}
		}
	})
	if err != nil {
		return nil, err
	}
	defer unsub()
	for {
		if err := t.Publish(protocol.JobsSubject(fed), msg); err != nil {
			return nil, err
		}
		if err := loginRefused("job "+c.Command.Name, t); err != nil {
			return nil, err
		}
		timer := time.NewTimer(2 * time.Second)
		select {
		case st := <-statuses:
			timer.Stop()
			return st, nil
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("job %s: no answer from a coordinator of federation %s at %s within %v", c.Command.Name, fed, node.RedactedServers(c.String("nats")), c.Duration("timeout"))
		case <-timer.C:
		}
	}
}
