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

// fedAlgoText is what the fedalgo registry does not say of a federated
// algorithm: its title, paper, reference and assumptions (the doc comment
// of its file, shortened). Name, privacy, tasks, losses and secure
// aggregation come from the registry itself (fedAlgoRows);
// TestAlgosListsFederated fails when an algorithm is registered without
// an entry here.
var fedAlgoText = map[string]struct{ title, paper, ref, assumptions string }{
	fedalgo.FedAvg: {
		"federated averaging of sgd-prev: rounds of local passes at every site, last iterates averaged (non-private baseline)",
		paperY21a, "Alg 1 at every site (fedalgo/fedavg.go)",
		"sgd-prev's; not private (the sites' updates are released as they are)"},
	fedalgo.FedDPGDGrad: {
		"noisy full pairwise gradients from every site; the coordinator averages them and steps",
		"[K22] Kang, Liu, Li, Wang. Towards Sharper Utility Bounds for Differentially Private Pairwise Learning (arXiv:2105.03033)",
		"Alg 1, Thm 1, across sites (fedalgo/dpgdgrad.go)",
		"G-Lipschitz, L-smooth loss (the coordinator steps with η = 1/L); per-site (ε, δ) over T adaptive Gaussian releases of sensitivity 4G/n_s"},
	fedalgo.FedDPLDA: {
		"dp-lda across sites: a noisy centre, then noisy pooled statistics of the centred signs, summed and solved (ridge Fisher direction)",
		"pairfed (dp-lda, sufficient-statistics perturbation with a pooled second moment)",
		"fedalgo/fedlda.go, dpalgo/private_lda.go",
		"records clipped to ‖x‖ ≤ R; linear scorer (whatever --loss); a site may hold a single class; per-site (ε, δ), two releases composed exactly"},
	fedalgo.FedDPLocalSGD: {
		"differentially private localized SGD per site: phases on disjoint halving subsets, noisy phase averages combined",
		paperY21a, "Alg 3, Thm 10, per site (fedalgo/dplocalsgd.go)",
		"(A1) G-Lipschitz, (A2) L-smooth, convex loss; bounded W; parallel composition over the disjoint subsets: per-site (ε, δ) once"},
	fedalgo.FedDPPairSGD: {
		"auc: noisy class sums once, then rounds of noisy per-record clipped logistic pair gradients (each record against the public opposite-class partner of the broadcast model) summed over sites, a projected gradient step each round; metric: noisy Poisson-subsampled previous-instance pairwise SGD at every site, averaged each round",
		"pairfed (DP-SGD of Abadi et al. 2016 adapted to pairs; auc: per-record clipped sums, exact Gaussian DP; metric: accountant of Mironov, Talwar & Zhang 2019)",
		"fedalgo/fedpairsgd.go, fedalgo/fedpairsgd_sum.go, dpalgo/kit_pairsum.go, dpalgo/private_pairsgd.go",
		"auc: records clipped to ‖x‖ ≤ R; linear scorer, logistic pair loss; any label mix per site, a single class included; 1 + T Gaussian releases per site composed exactly (secure aggregation: 2T DDG rounds); metric: both kinds of pairs at every site, all rounds composed by the subsampled-Gaussian RDP accountant"},
	fedalgo.FedDPSPAUC: {
		"square-AUC gradient made pointwise by the class statistics: noisy class sums once, then rounds of noisy clipped per-record gradient terms summed over sites and solved by conjugate gradients",
		"pairfed (SPAUC: Ying, Wen & Lyu 2016; Lei & Ying 2019 — the square-loss AUC gradient given p, m⁺, m⁻ — as noisy site sums)",
		"fedalgo/fedspauc.go, dpalgo/fedspauc.go",
		"records clipped to ‖x‖ ≤ R; linear scorer, square loss whatever --loss; any label mix per site, a single class included; 1 + T Gaussian releases per site composed exactly (Gaussian DP)"},
	fedalgo.FedDPSSP: {
		"noisy sufficient statistics released once per site, summed and solved for the ridge square-AUC optimum",
		"pairfed (sufficient-statistics perturbation, cf. Vu & Slavković 2009, Wang 2018)",
		"fedalgo/fedssp.go, dpalgo/private_ssp.go, dpalgo/kit_ssp.go",
		"records clipped to ‖x‖ ≤ R; linear scorer, square loss whatever --loss; any label mix per site; one release per site"},
	fedalgo.FedDPSSPMean: {
		"noisy class sums and count released once per site, summed: the class-mean difference",
		"pairfed (sufficient-statistics perturbation without second moments)",
		"fedalgo/fedssp.go, dpalgo/private_ssp.go, dpalgo/kit_ssp.go",
		"records clipped to ‖x‖ ≤ R; linear scorer whatever --loss; any label mix per site; one release per site"},
	fedalgo.FedDPEGD: {
		"DPEGD per site: epochs on disjoint halving subsets, noisy epoch averages combined",
		"[X21] Xue, Yang, Huai, Wang. Differentially Private Pairwise Learning Revisited. IJCAI 2021",
		"Alg 3 (DPEGD, Thm 3) per site (fedalgo/dpegd.go)",
		"convex, G-Lipschitz, L-smooth loss over a bounded C; parallel composition over the disjoint subsets: per-site (ε, δ) once"},
	fedalgo.FedOneShot: {
		"one-shot averaging: every site runs a private single-site algorithm (--local-algo) once, the models are averaged",
		"(local): the paper of the local algorithm, --local-algo (pairfed algos LOCAL)",
		"fedalgo/oneshot.go",
		"the local algorithm's; one release per site: its (ε, δ)"},
}

const paperY21a = "[Y21a] Yang, Lei, Wang, Yang, Ying. Simple Stochastic and Online Gradient Descent Algorithms for Pairwise Learning. NeurIPS 2021"

// fedAlgoRows lists the registered federated algorithms. The tasks and
// losses are those the algorithm's own validator (Configure) accepts.
func fedAlgoRows() []algoRow {
	var rows []algoRow
	for _, name := range fedalgo.Names() {
		a, err := fedalgo.Lookup(name)
		if err != nil {
			continue
		}
		_, sum := a.(fedalgo.SumReleaser)
		txt := fedAlgoText[name]
		r := algoRow{Name: name, Title: txt.title, Paper: txt.paper, Ref: txt.ref, Setting: "federated",
			Assumptions: txt.assumptions, Private: a.Private(), Federated: true, SecureAggregation: sum}
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
