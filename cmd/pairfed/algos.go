package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/pairwise"
	"github.com/pairfed/pairfed/protocol"
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
	// Federated is true for the federated algorithms (simulate, job
	// submit); SecureAggregation says whether their releases can be
	// summed by secure aggregation (--secure-aggregation).
	Federated         bool `json:"federated"`
	SecureAggregation bool `json:"secure_aggregation"`
}

// fedAlgoRows lists the registered federated algorithms: title, paper,
// reference and assumptions from the algorithm's own Doc (fedalgo.DocOf),
// privacy and secure aggregation from its methods, and the tasks and
// losses its own validator (Configure) accepts.
func fedAlgoRows() []algoRow {
	var rows []algoRow
	for _, name := range fedalgo.Names() {
		a, err := fedalgo.Lookup(name)
		if err != nil {
			continue
		}
		_, sum := a.(fedalgo.SumReleaser)
		doc, _ := fedalgo.DocOf(name)
		r := algoRow{Name: name, Title: doc.Title, Paper: doc.Paper, Ref: doc.Ref, Setting: "federated",
			Assumptions: doc.Assumptions, Private: a.Private(), Federated: true, SecureAggregation: sum}
		if r.Title == "" {
			r.Title, r.Paper = "(undocumented)", "?"
		}
		for _, task := range []string{protocol.TaskAUC, protocol.TaskMetric} {
			if fedAccepts(a, task, "") {
				r.Tasks = append(r.Tasks, task)
			}
		}
		for _, loss := range []string{"hinge", "square", "logistic"} {
			if fedAccepts(a, protocol.TaskAUC, loss) {
				r.Losses = append(r.Losses, loss)
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// fedAccepts reports whether a's validator accepts a job of the task and
// loss (ε = 1 for private algorithms; fed-oneshot with dpegd, whose
// losses are then dpegd's).
func fedAccepts(a fedalgo.Algorithm, task, loss string) bool {
	s := fedalgo.Spec{Algo: a.Name(), Task: task, Loss: loss, FeatureRadius: 1}
	if a.Private() {
		s.Epsilon = 1
	}
	if fedalgo.TakesLocalAlgo(a.Name()) {
		s.LocalAlgo = "dpegd"
	}
	return a.Configure(&s) == nil
}

// fedAlgoList is the registered federated algorithms for a flag's usage:
// "fed-avg (non-private), fed-dp-gd-grad, …".
func fedAlgoList() string {
	var parts []string
	for _, name := range fedalgo.Names() {
		if !fedalgo.Private(name) {
			name += " (not private)"
		}
		parts = append(parts, name)
	}
	return strings.Join(parts, ", ")
}

// algosWidth is the width the default table fits in when stdout is not a
// terminal (a terminal's own width is used when known).
const algosWidth = 100

func algosCommand() *cli.Command {
	return &cli.Command{
		Name:      "algos",
		Usage:     "list the algorithms, single-site and federated (`pairfed algos NAME` for one algorithm's paper, reference and assumptions)",
		ArgsUsage: "[NAME]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
			&cli.BoolFlag{Name: "wide", Usage: "print every column in full (REF and ASSUMPTIONS included), whatever the width"},
			&cli.BoolFlag{Name: "markdown", Usage: "print docs/algorithms.md: both registries as Markdown tables, then every algorithm's paper, reference, assumptions and privacy model"},
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
			rows = append(rows, fedAlgoRows()...)
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
				names := make([]string, len(rows))
				for i, r := range rows {
					names[i] = r.Name
				}
				return usageError{fmt.Errorf("algos: unknown algorithm %q%s (run `pairfed algos` for the list)", name, didYouMean(name, names))}
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, rows)
			}
			if c.Bool("markdown") {
				return printAlgosMarkdown(c.App.Writer, rows)
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

// shortPaper is the PAPER column: the paper's citation key ([Y21a]), its
// first author ("Kar et al."), "pairfed" for pairfed's own algorithms, or
// "(local)" for fed-oneshot, whose paper is its local algorithm's.
// It is the text's first word, so a paper text starts with one of these
// (TestShortPaperOfEveryAlgorithm).
func shortPaper(paper string) string {
	if i := strings.Index(paper, "]"); i > 0 && strings.HasPrefix(paper, "[") {
		return paper[:i+1]
	}
	first, _, _ := strings.Cut(paper, " ")
	first = strings.TrimSuffix(first, ":")
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", r.Name, shortPaper(r.Paper), r.Setting, strings.Join(r.Tasks, ","), privateCol(r))
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
	_, err := fmt.Fprintln(w, "(details: pairfed algos NAME; every column in full: pairfed algos --wide)\n"+
		"(setting federated: pairfed simulate or job submit --algo NAME; +secagg: --secure-aggregation)")
	return err
}

// privateCol is the PRIVATE column: true/false, "+secagg" when the
// releases can be summed by secure aggregation.
func privateCol(r algoRow) string {
	if r.SecureAggregation {
		return fmt.Sprint(r.Private) + "+secagg"
	}
	return fmt.Sprint(r.Private)
}

func printAlgosWide(w io.Writer, rows []algoRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPAPER\tREF\tSETTING\tTASKS\tLOSSES\tPRIVATE\tASSUMPTIONS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, shortPaper(r.Paper), r.Ref, r.Setting, strings.Join(r.Tasks, ","), strings.Join(r.Losses, ","), privateCol(r), r.Assumptions)
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
		if f[0] == "assumptions" && r.Federated {
			sa := "no (its releases are not one sum of site vectors)"
			if r.SecureAggregation {
				sa = "yes (--secure-aggregation: the coordinator sees only the sum)"
			}
			fmt.Fprintf(tw, "secure aggregation:\t%s\n", sa)
		}
		fmt.Fprintf(tw, "%s:\t%s\n", f[0], f[1])
	}
	tw.Flush()
}

// secAggAlgoList is the registered federated algorithms whose releases
// secure aggregation can sum (fedalgo.SumReleaser), for --secure-aggregation.
func secAggAlgoList() string {
	var names []string
	for _, name := range fedalgo.Names() {
		if a, err := fedalgo.Lookup(name); err == nil {
			if _, ok := a.(fedalgo.SumReleaser); ok {
				names = append(names, name)
			}
		}
	}
	return strings.Join(names, ", ")
}

// The help of the federated --rounds and --local-passes (simulate, job
// submit): the usage and the default, which depends on the algorithm.
const (
	roundsUsage        = "coordinator rounds: fed-avg's and fed-dp-pair-sgd's rounds (auc: its gradient rounds T), fed-dp-spauc's T, fed-dp-gd-grad's iterations T (the other algorithms fix their phases)"
	roundsDefault      = "10 for fed-avg and fed-dp-pair-sgd's metric task; ⌈θ₀/E₁⌉ within [2, 16] for fed-dp-pair-sgd's auc task (E₁ its calibrated step noise; fedalgo/fedpairsgd_sum.go); ⌈ln(n_min ε/√p)⌉ for fed-dp-gd-grad ([K22] Remark 2)"
	localPassesUsage   = "passes over a site's records per round (fed-avg, fed-dp-pair-sgd's metric task)"
	localPassesDefault = "1 for fed-avg, 10/rounds for fed-dp-pair-sgd's metric task"
)
