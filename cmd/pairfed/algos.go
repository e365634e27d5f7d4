package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/pairfed/pairfed/pairwise"
	"github.com/urfave/cli/v2"
)

// algoRow is one algorithm as `pairfed algos` prints it.
type algoRow struct {
	Name        string   `json:"name"`
	Title       string   `json:"title"`
	Paper       string   `json:"paper"`
	Ref         string   `json:"ref"`
	Setting     string   `json:"setting"`
	Tasks       []string `json:"tasks"`
	Losses      []string `json:"losses"`
	Assumptions string   `json:"assumptions"`
	Private     bool     `json:"private"`
}

// algosWidth is the width the default table fits in when stdout is not a
// terminal (a terminal's own width is used when known).
const algosWidth = 100

func algosCommand() *cli.Command {
	return &cli.Command{
		Name:      "algos",
		Usage:     "list the algorithms (`pairfed algos NAME` for one algorithm's paper, reference and assumptions)",
		ArgsUsage: "[NAME]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
			&cli.BoolFlag{Name: "wide", Usage: "print every column in full (REF and ASSUMPTIONS included), whatever the width"},
		},
		Action: func(c *cli.Context) error {
			var rows []algoRow
			for _, a := range pairwise.Algorithms() {
				r := algoRow{Name: a.Name, Title: a.Title, Paper: a.Paper, Ref: a.Ref, Setting: a.Setting, Assumptions: a.Assumptions, Private: a.Private, Losses: a.Losses}
				for _, t := range a.Tasks {
					r.Tasks = append(r.Tasks, string(t))
				}
				if r.Losses == nil {
					r.Losses = []string{"any"}
				}
				rows = append(rows, r)
			}
			if name := c.Args().First(); name != "" {
				if c.NArg() > 1 {
					return usageError{fmt.Errorf("algos: one NAME at most, got %d (%s)", c.NArg(), strings.Join(c.Args().Slice(), " "))}
				}
				for _, r := range rows {
					if r.Name == name {
						if c.Bool("json") {
							return writeJSON(c.App.Writer, r)
						}
						printAlgo(c.App.Writer, r)
						return nil
					}
				}
				if _, err := pairwise.Lookup(name); err != nil {
					return usageError{err}
				}
				return usageError{fmt.Errorf("algos: unknown algorithm %q (run `pairfed algos` for the list)", name)}
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, rows)
			}
			if c.Bool("wide") {
				return printAlgosWide(c.App.Writer, rows)
			}
			width := terminalWidth(c.App.Writer)
			if width <= 0 {
				width = algosWidth
			}
			return printAlgosNarrow(c.App.Writer, rows, width)
		},
	}
}

// shortPaper is the paper's citation key ([Y21a]) or first author.
func shortPaper(paper string) string {
	if i := strings.Index(paper, "]"); i > 0 && strings.HasPrefix(paper, "[") {
		return paper[:i+1]
	}
	first, _, _ := strings.Cut(paper, " ")
	if strings.HasSuffix(first, ",") || strings.HasSuffix(first, ".") {
		return strings.TrimRight(first, ",.") + " et al."
	}
	return first
}

// printAlgosNarrow prints the table that fits width columns: the TITLE is
// cut to what is left ("…" marks a cut); LOSSES, REF and ASSUMPTIONS are left to
// `pairfed algos NAME` and --wide.
func printAlgosNarrow(w io.Writer, rows []algoRow, width int) error {
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPAPER\tSETTING\tTASKS\tPRIVATE\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\t\n", r.Name, shortPaper(r.Paper), r.Setting, strings.Join(r.Tasks, ","), r.Private)
	}
	tw.Flush()
	lines := strings.Split(strings.TrimSuffix(sb.String(), "\n"), "\n")
	for i, line := range lines {
		title := "TITLE"
		if i > 0 {
			title = rows[i-1].Title
		}
		if room := width - utf8.RuneCountInString(line); utf8.RuneCountInString(title) > room {
			if room < 2 {
				title = ""
			} else {
				title = string([]rune(title)[:room-1]) + "…"
			}
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(line+title, " ")); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, "(details: pairfed algos NAME; every column in full: pairfed algos --wide)")
	return err
}

func printAlgosWide(w io.Writer, rows []algoRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPAPER\tREF\tSETTING\tTASKS\tLOSSES\tPRIVATE\tASSUMPTIONS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%v\t%s\n", r.Name, shortPaper(r.Paper), r.Ref, r.Setting, strings.Join(r.Tasks, ","), strings.Join(r.Losses, ","), r.Private, r.Assumptions)
	}
	return tw.Flush()
}

// printAlgo prints one algorithm, one field a line.
func printAlgo(w io.Writer, r algoRow) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, f := range [][2]string{
		{"name", r.Name}, {"title", r.Title}, {"paper", r.Paper}, {"ref", r.Ref}, {"setting", r.Setting},
		{"tasks", strings.Join(r.Tasks, ", ")}, {"losses", strings.Join(r.Losses, ", ")},
		{"private", fmt.Sprint(r.Private)}, {"assumptions", r.Assumptions},
	} {
		fmt.Fprintf(tw, "%s:\t%s\n", f[0], f[1])
	}
	tw.Flush()
}
