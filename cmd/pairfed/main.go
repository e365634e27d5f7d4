// Command pairfed trains pairwise models (AUC maximization, similarity metric
// learning) on one machine or across sites with differential privacy.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newApp().RunContext(ctx, os.Args); err != nil {
		if ctx.Err() != nil {
			// A signal ended the command: say so (state files are
			// consistent: every write is atomic or an fsynced append).
			fmt.Fprintln(os.Stderr, "pairfed: interrupted by a signal:", err)
		} else {
			fmt.Fprintln(os.Stderr, "pairfed:", err)
		}
		os.Exit(exitCode(err))
	}
}

// usageError marks errors in the command line (exit status 2).
type usageError struct{ error }

func exitCode(err error) int {
	if _, ok := err.(usageError); ok {
		return 2
	}
	if ec, ok := err.(cli.ExitCoder); ok {
		return ec.ExitCode()
	}
	return 1
}

func newApp() *cli.App {
	return &cli.App{
		Name:                 "pairfed",
		Usage:                "private pairwise learning (AUC maximization, metric learning), on one machine or federated",
		EnableBashCompletion: true,
		Flags:                append(logFlags(), profileFlags()...),
		Before: func(c *cli.Context) error {
			if err := setupLogging(c); err != nil {
				return err
			}
			return startProfile(c)
		},
		After: stopProfile,
		Commands: []*cli.Command{
			trainCommand(),
			scoreCommand(),
			evaluateCommand(),
			exportCommand(),
			cardCommand(),
			algosCommand(),
			benchCommand(),
			auditCommand(),
			simulateCommand(),
			coordinatorCommand(),
			workerCommand(),
			jobCommand(),
			deployCommand(),
			experimentCommand(),
			ledgerCommand(),
			reportCommand(),
		},
	}
}
