package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// noProgressFlag turns the progress line off.
// calibrationFlag is --calibration of the commands that run private
// algorithms.
// jobCalibration is a federated job's --calibration: "" (the default,
// exact) unless given, so that a job without it encodes as before.
func jobCalibration(c *cli.Context) string {
	if !c.IsSet("calibration") {
		return ""
	}
	return c.String("calibration")
}

func calibrationFlag() cli.Flag {
	return &cli.StringFlag{Name: "calibration", Value: "exact", Usage: "noise of private algorithms: exact (the smallest σ the exact Gaussian-DP accountant certifies for the proven sensitivity) or paper (the paper's printed σ, refused unless certified)"}
}

func noProgressFlag() cli.Flag {
	return &cli.BoolFlag{Name: "no-progress", Usage: "do not draw the progress line on stderr (it is drawn only when stderr is a terminal; --json output goes to stdout and is unaffected)"}
}

// terminal is a writer that says whether it is a terminal (tests use it to
// fake one).
type ttyWriter interface{ IsTerminal() bool }

// isTerminal reports whether w is a terminal: an *os.File on a terminal
// device (golang.org/x/term), or a writer that says so.
func isTerminal(w io.Writer) bool {
	switch f := w.(type) {
	case *os.File:
		return term.IsTerminal(int(f.Fd()))
	case ttyWriter:
		return f.IsTerminal()
	}
	return false
}

// terminalWidth is w's width in columns, or 0 when unknown.
func terminalWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil {
			return cols
		}
	}
	return 0
}

// startProgress returns the progress line of a command that runs total
// runs, drawn on the command's stderr, or nil (whose methods do nothing)
// when stderr is not a terminal or with --no-progress or --verbose (whose
// log lines share stderr). --json does not turn it off: the JSON goes to
// stdout, the progress line to stderr.
func startProgress(c *cli.Context, label string, total int) *progress {
	for _, f := range []string{"no-progress", "verbose"} {
		if c.Bool(f) {
			return nil
		}
	}
	w := c.App.ErrWriter
	if w == nil {
		w = os.Stderr
	}
	if !isTerminal(w) {
		return nil
	}
	p := newProgress(w, label, time.Now)
	p.cols = terminalWidth(w)
	p.Update(0, total)
	return p
}

// progress draws one self-overwriting line:
//
//	sweep [########------------]  12/30 runs  40%  elapsed 0:12  ETA 0:18
//
// at most once per every (the first update, and reaching the total, are
// always drawn); Finish redraws the final state and ends the line.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	now   func() time.Time
	every time.Duration
	cols  int // terminal width (0: unknown); lines are cut to cols−1

	start       time.Time
	last        time.Time
	done, total int
	drawn       bool // a line is on the terminal
	width       int  // runes of the line drawn last
	finished    bool
}

// progressEvery is the minimum interval between two redraws.
const progressEvery = 200 * time.Millisecond

func newProgress(w io.Writer, label string, now func() time.Time) *progress {
	return &progress{w: w, label: label, now: now, every: progressEvery, start: now()}
}

// Update records that done of total runs are finished and redraws the
// line unless the last redraw is more recent than p.every. Safe for
// concurrent use; a nil p does nothing.
func (p *progress) Update(done, total int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return
	}
	p.done, p.total = done, total
	t := p.now()
	if p.drawn && done < total && t.Sub(p.last) < p.every {
		return
	}
	p.draw(t)
}

// OnRun is Update with the signature of experiment.Spec.OnRun.
func (p *progress) OnRun() func(done, total int) {
	if p == nil {
		return nil
	}
	return p.Update
}

// Finish draws the final state and ends the line (so that what follows on
// stderr, e.g. an error, starts on its own line). Later updates are
// ignored. A nil p does nothing.
func (p *progress) Finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return
	}
	p.finished = true
	if !p.drawn {
		return
	}
	p.draw(p.now())
	fmt.Fprint(p.w, "\n")
}

// draw writes the line for the current state at time t.
func (p *progress) draw(t time.Time) {
	line := p.render(t.Sub(p.start))
	if p.cols > 1 {
		if r := []rune(line); len(r) > p.cols-1 {
			line = string(r[:p.cols-1])
		}
	}
	n := utf8.RuneCountInString(line)
	pad := ""
	if n < p.width {
		pad = strings.Repeat(" ", p.width-n) // blank what the longer last line left
	}
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
	p.drawn, p.last, p.width = true, t, n
}

// progressBarWidth is the number of cells of the bar.
const progressBarWidth = 20

// render formats the line for elapsed time el.
func (p *progress) render(el time.Duration) string {
	frac := 0.0
	if p.total > 0 {
		frac = min(max(float64(p.done)/float64(p.total), 0), 1)
	}
	fill := int(frac * progressBarWidth)
	bar := strings.Repeat("#", fill) + strings.Repeat("-", progressBarWidth-fill)
	eta := "--:--"
	if p.done > 0 && p.total > 0 {
		eta = fmtClock(time.Duration(float64(el) * float64(max(p.total-p.done, 0)) / float64(p.done)))
	}
	return fmt.Sprintf("%s [%s] %*d/%d runs %3d%%  elapsed %s  ETA %s",
		p.label, bar, len(fmt.Sprint(p.total)), p.done, p.total, int(frac*100), fmtClock(el), eta)
}

// fmtClock formats d as m:ss, or h:mm:ss from an hour on (rounded to
// whole seconds).
func fmtClock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s < 0 {
		s = 0
	}
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
