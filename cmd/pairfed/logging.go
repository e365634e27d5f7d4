package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
)

// Structured logs: the global flags --log-format and --log-level set the
// default slog logger (on the app's ErrWriter, stderr by default), and
// every log line of the coordinator, the workers and the simulation goes
// through it (stderrLogf).

func logFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "log-format", Value: "text", Usage: "log lines on stderr: text (key=value) or json (one object per line)"},
		&cli.StringFlag{Name: "log-level", Value: "info", Usage: "least level logged: debug, info, warn or error"},
	}
}

// setupLogging is the app's Before hook.
func setupLogging(c *cli.Context) error {
	var level slog.Level
	switch strings.ToLower(c.String("log-level")) {
	case "debug":
		level = slog.LevelDebug
	case "info":
		level = slog.LevelInfo
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	default:
		return usageError{fmt.Errorf("--log-level %q: one of debug, info, warn, error", c.String("log-level"))}
	}
	var w io.Writer = os.Stderr
	if c.App.ErrWriter != nil {
		w = c.App.ErrWriter
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	switch strings.ToLower(c.String("log-format")) {
	case "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return usageError{fmt.Errorf("--log-format %q: text or json", c.String("log-format"))}
	}
	slog.SetDefault(slog.New(h))
	return nil
}

// slogLogf returns a printf-style logger for the state machines' Logf
// hooks that logs through the default slog logger: the message is the
// formatted line; the attribute component is prefix (without its
// trailing colon), or, when prefix is empty, the line's own "coordinator:"
// or "worker SITE:" prefix (then with site=SITE), else "pairfed". Lines
// about aborts, timeouts, silent sites, dropped messages, errors,
// violations and refusals are warnings, the rest information.
func slogLogf(prefix string) func(string, ...any) {
	comp := strings.TrimSuffix(strings.TrimSpace(prefix), ":")
	return func(format string, args ...any) {
		l := slog.Default()
		level := slog.LevelInfo
		line := fmt.Sprintf(format, args...)
		lower := strings.ToLower(line)
		for _, w := range []string{"warning", "abort", "timed out", " silent ", "dropped message", "error", "violation", "refus"} {
			if strings.Contains(lower, w) {
				level = slog.LevelWarn
			}
		}
		if !l.Enabled(context.Background(), level) {
			return
		}
		attrs := []any{"component", "pairfed"}
		switch {
		case comp != "":
			attrs[1] = comp
		case strings.HasPrefix(line, "coordinator: "):
			attrs[1] = "coordinator"
		case strings.HasPrefix(line, "worker "):
			if site, _, ok := strings.Cut(strings.TrimPrefix(line, "worker "), ": "); ok && !strings.Contains(site, " ") {
				attrs = []any{"component", "worker", "site", site}
			}
		}
		l.Log(context.Background(), level, line, attrs...)
	}
}
