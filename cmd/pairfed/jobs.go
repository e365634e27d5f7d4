package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/node"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/transport"
	"github.com/urfave/cli/v2"
)

// This file holds the job-object subcommands: `job list` and `job cancel`
// (protocol.JobList/JobPage, protocol.JobCancel).

func jobListCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:  "list",
		Usage: "list every job the coordinator knows (queued, running, finished)",
		Description: `Asks the coordinator for its jobs (a job list: it never starts a job), page by page (at most 100
   jobs a reply), and prints one line per job: id, algorithm, status, whether its result is private
   (yes, or NOT with the reason), its sites, and when it was submitted and finished (UTC; "-" when
   the coordinator does not know, e.g. a job refused on arrival). A queued or running job's status
   says who may cancel it: "(cancel: its key only)" (its cancel key or the coordinator's admin key;
   see job cancel) or "(cancel: any client)" (submitted without a cancel key).

Examples:
   pairfed job list --nats nats://coord:4222
   pairfed job list --nats nats://coord:4222 --json`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "nats", Required: true, Usage: "URL of the federation's NATS server"},
			federationFlag(),
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object: {\"jobs\": [...], \"total\": N}"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "give up waiting for the coordinator after this long"},
		}, connFlags()...),
		Action: runJobList,
	})
}

func jobCancelCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "cancel",
		Usage:     "cancel a queued or running job",
		ArgsUsage: "[JOB] (or --job JOB; flags go before JOB)",
		Description: `A queued job leaves the queue (nothing was announced, no site is charged). A running job is
   aborted through the coordinator's abort path: every participant is sent an Abort and releases
   nothing further; the phases already aggregated stay charged in the ledgers (those releases
   happened). The job's status becomes failed, "cancelled by <client> …". A job that already ended
   is left as it is.

   Who may cancel: a job submitted by this version of job submit carries the hash of a cancel key,
   and only that key (--cancel-key, printed by job submit or in its --cancel-key-out file) or the
   coordinator operator's admin key (the file admin.key in the coordinator's state directory, made
   at its first start) cancels it; other holders of the client login are refused and the job runs
   on. A job submitted without a key (older clients) may be cancelled by any client of the
   deployment's client account. job list says which rule applies to each queued or running job.
   The canceller's client token and the key it used are in the status and the coordinator's log
   (never the key itself). Prefer --cancel-key @FILE: a key on the command line is visible to
   other users of the host.

Exit status: 0 cancelled, 1 the job had already ended, is unknown, or the key was refused.

Examples:
   pairfed job cancel --nats nats://coord:4222 --cancel-key @job-7.key job-7
   pairfed job cancel --nats nats://coord:4222 --cancel-key @/var/lib/pairfed/coord/admin.key job-7   # the operator`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "nats", Required: true, Usage: "URL of the federation's NATS server"},
			federationFlag(),
			jobIDFlag(),
			&cli.StringFlag{Name: "cancel-key", Usage: "the job's cancel key (64 hex digits, printed by job submit), or @FILE to read it from FILE (job submit --cancel-key-out, or the operator's STATE/admin.key)"},
			&cli.BoolFlag{Name: "json", Usage: "print the job's status as JSON"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "give up waiting for the coordinator after this long"},
		}, connFlags()...),
		Action: runJobCancel,
	})
}

// maxListPages bounds the pages `job list` asks for (100 jobs each): a
// coordinator that keeps answering Next is not followed for ever.
const maxListPages = 10000

func runJobList(c *cli.Context) error {
	var all []protocol.JobSummary
	after, total := "", 0
	for range maxListPages {
		m, _, err := askCoordinator(c, "job list", func(client string) protocol.Message {
			return &protocol.JobList{Client: client, After: after}
		}, func(m protocol.Message) bool { _, ok := m.(*protocol.JobPage); return ok })
		if err != nil {
			return err
		}
		p := m.(*protocol.JobPage)
		all, total = append(all, p.Jobs...), p.Total
		if p.Next == "" || p.Next <= after {
			break
		}
		after = p.Next
	}
	if c.Bool("json") {
		if all == nil {
			all = []protocol.JobSummary{}
		}
		return writeJSON(c.App.Writer, struct {
			Jobs  []protocol.JobSummary `json:"jobs"`
			Total int                   `json:"total"`
		}{all, total})
	}
	printJobList(c.App.Writer, all)
	return nil
}

func printJobList(w io.Writer, jobs []protocol.JobSummary) {
	if len(jobs) == 0 {
		fmt.Fprintln(w, "no jobs")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tALGORITHM\tSTATUS\tPRIVATE\tSITES\tSUBMITTED\tFINISHED")
	for _, j := range jobs {
		private := "yes"
		if !j.Private {
			private = "NOT"
			if j.Privacy != "" {
				private += ": " + strings.TrimPrefix(j.Privacy, "NOT private: ")
			}
		}
		status := j.Status
		switch {
		case strings.HasPrefix(j.Reason, coordinator.CancelPrefix):
			status += " (" + strings.SplitN(j.Reason, " while ", 2)[0] + ")"
		case strings.Contains(j.Reason, coordinator.CancelByKeyNote):
			status += " (cancel: its key only)"
		case strings.Contains(j.Reason, coordinator.CancelByAnyNote):
			status += " (cancel: any client)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.Job, orDash(j.Algo), status, private, orDash(strings.Join(j.Sites, ",")), unixText(j.Submitted), unixText(j.Finished))
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func unixText(t int64) string {
	if t <= 0 {
		return "-"
	}
	return time.Unix(t, 0).UTC().Format("2006-01-02 15:04:05")
}

func runJobCancel(c *cli.Context) error {
	id, err := jobArg(c)
	if err != nil {
		return err
	}
	key, err := cancelKeyArg(c.String("cancel-key"))
	if err != nil {
		return err
	}
	m, client, err := askCoordinator(c, "job cancel", func(client string) protocol.Message {
		return &protocol.JobCancel{Job: id, Client: client, Key: key}
	}, func(m protocol.Message) bool { st, ok := m.(*protocol.JobStatus); return ok && st.Job == id })
	if err != nil {
		return err
	}
	st := m.(*protocol.JobStatus)
	if c.Bool("json") {
		if err := writeJSON(c.App.Writer, st); err != nil {
			return err
		}
	}
	if st.Status == protocol.StatusFailed && strings.HasPrefix(st.Reason, coordinator.CancelPrefix+client+" ") {
		// Cancelled by this request (an earlier cancel names another client).
		if !c.Bool("json") {
			fmt.Fprintf(c.App.Writer, "job %s: %s\n", id, st.Reason)
		}
		return nil
	}
	if r, ok := strings.CutPrefix(st.Reason, coordinator.CancelRefusedPrefix); ok {
		return cli.Exit(fmt.Sprintf("job cancel: refused: %s; nothing was cancelled, job %s is still %s", r, id, st.Status), 1)
	}
	why := ""
	if st.Reason != "" {
		why = ": " + st.Reason
	}
	return cli.Exit(fmt.Sprintf("job cancel: job %s is %s%s; nothing was cancelled", id, st.Status, why), 1)
}

// cancelKeyArg parses --cancel-key: empty (no key), the key's hex, or
// @FILE holding it (job submit --cancel-key-out, or a coordinator's
// admin.key).
func cancelKeyArg(v string) ([]byte, error) {
	if v == "" {
		return nil, nil
	}
	text, from := v, "the value"
	if path, ok := strings.CutPrefix(v, "@"); ok {
		if path == "" {
			return nil, usageError{fmt.Errorf("job cancel: --cancel-key @ names no file: give @FILE (the file job submit --cancel-key-out wrote, or the coordinator's STATE/admin.key) or the key's 64 hex digits")}
		}
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, usageError{fmt.Errorf("job cancel: --cancel-key @%s: no such file: give the file job submit --cancel-key-out wrote (or the coordinator's STATE/admin.key, on its host), or the key job submit printed", path)}
		}
		b, err := readInput("--cancel-key", path, 4096)
		if errors.Is(err, fs.ErrPermission) {
			return nil, usageError{fmt.Errorf("job cancel: --cancel-key @%s: this user may not read it (permission denied): run job cancel as the file's owner (a coordinator's admin.key is readable by the coordinator's user only), or give the key itself", path)}
		}
		if err != nil {
			return nil, usageError{fmt.Errorf("job cancel: %w", err)}
		}
		text, from = string(b), path
	}
	key, err := hex.DecodeString(strings.TrimSpace(text))
	if err != nil || len(key) != protocol.CancelKeyLen {
		return nil, usageError{fmt.Errorf("job cancel: --cancel-key: %s is not a cancel key: %s (want %d hex digits, as job submit printed it or wrote it with --cancel-key-out; @FILE reads it from FILE)", from, cancelKeyFault(strings.TrimSpace(text)), 2*protocol.CancelKeyLen)}
	}
	return key, nil
}

// cancelKeyFault says what is wrong with a --cancel-key text that is not
// the hex of a key, without repeating the text (it may be a key with a
// typo): a byte order mark, the first character that is not a hex digit
// (by position), or the number of digits.
func cancelKeyFault(text string) string {
	if strings.HasPrefix(text, "\ufeff") {
		return "it starts with a byte order mark (an editor saved it as UTF-8 with BOM): save it as plain text"
	}
	for i, r := range text {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			what := fmt.Sprintf("%q", r)
			if unicode.IsSpace(r) {
				what = "a blank"
			}
			return fmt.Sprintf("character %d is %s, not a hex digit (give the key alone, not the line it was printed on)", utf8.RuneCountInString(text[:i])+1, what)
		}
	}
	if text == "" {
		return "it is empty"
	}
	return fmt.Sprintf("%d hex digits", len(text))
}

// askCoordinator publishes the message build(client) on the federation's
// jobs subject, client a fresh token, every 2 s (core NATS may lose a
// message; every request here is idempotent) until a reply on the
// client's subject satisfies want, or --timeout passes. It returns the
// reply and the client token.
func askCoordinator(c *cli.Context, what string, build func(client string) protocol.Message, want func(protocol.Message) bool) (reply protocol.Message, client string, err error) {
	fed := c.String("federation")
	client = randomToken("c-")
	msg, err := protocol.Encode(build(client))
	if err != nil {
		return nil, client, usageError{err}
	}
	natsOpts, err := connOptions(c, c.String("nats"))
	if err != nil {
		return nil, client, err
	}
	if err := checkTimeout(c); err != nil {
		return nil, client, err
	}
	ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	t, err := connectNATS(cctx, c.String("nats"), "pairfed-client", false, natsOpts...)
	ccancel()
	if err != nil {
		return nil, client, err
	}
	defer t.Close()
	replies := make(chan protocol.Message, 4)
	unsub, err := t.Subscribe(protocol.ClientSubject(fed, client), func(_ string, b []byte) {
		m, err := protocol.Decode(b)
		if err != nil || !want(m) {
			return
		}
		select {
		case replies <- m:
		default:
		}
	})
	if err != nil {
		return nil, client, err
	}
	defer unsub()
	for {
		if err := t.Publish(protocol.JobsSubject(fed), msg); err != nil {
			return nil, client, err
		}
		if err := loginRefused(what, t); err != nil {
			return nil, client, err
		}
		timer := time.NewTimer(2 * time.Second)
		select {
		case m := <-replies:
			timer.Stop()
			return m, client, nil
		case <-ctx.Done():
			timer.Stop()
			return nil, client, fmt.Errorf("%s: no answer from a coordinator of federation %s at %s within %v", what, fed, node.RedactedServers(c.String("nats")), c.Duration("timeout"))
		case <-timer.C:
		}
	}
}

// loginRefused reports a permission violation of a job command's login
// (the server's answer to its subscription or publication, read after a
// round trip). Probe 5 (issue 28): a job command given a site's login on
// a coordinator --site-logins server logged the violations and waited its
// whole --timeout for "no answer from a coordinator".
func loginRefused(what string, t *transport.NATS) error {
	nc := t.Conn()
	_ = nc.FlushTimeout(2 * time.Second)
	if err := nc.LastError(); errors.Is(err, nats.ErrPermissionViolation) {
		return fmt.Errorf("%s: the NATS server does not let this login use the federation's job subjects (%v): job commands log in as client — with coordinator --site-logins, nats://client:PASSWORD@HOST:PORT with the password in the coordinator's STATE/logins/client (a site's login serves only that site's worker); with pairfed deploy init, the client's files", what, err)
	}
	return nil
}
