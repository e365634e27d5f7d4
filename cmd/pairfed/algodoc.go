package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/pairfed/pairfed/pairwise"
)

// algorithmsDocCommand is the command that writes docs/algorithms.md;
// TestAlgorithmsDoc fails while the committed file differs from its output.
const algorithmsDocCommand = "go run ./cmd/pairfed algos --markdown > docs/algorithms.md"

// printAlgosMarkdown writes docs/algorithms.md from the rows `pairfed
// algos` prints (the single-site registry of pairwise and the federated one
// of fedalgo), so that the list of algorithms in the docs cannot drift from
// the code: a table per registry, then one section per algorithm with its
// paper, reference, assumptions and, for single-site private algorithms,
// the registry's privacy model.
func printAlgosMarkdown(w io.Writer, rows []algoRow) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Algorithms\n\n")
	fmt.Fprintf(&b, "<!-- Generated: %s. Do not edit; TestAlgorithmsDoc (cmd/pairfed) fails while this file differs from that output. -->\n\n", algorithmsDocCommand)
	fmt.Fprintf(&b, "Every registered algorithm, generated from the two registries by\n`%s`\n", algorithmsDocCommand)
	fmt.Fprintf(&b, "(the rows of `pairfed algos`). Single-site algorithms run with `pairfed train`\n")
	fmt.Fprintf(&b, "(`--algo NAME`); federated ones with `pairfed simulate` or `pairfed job submit`.\n")
	fmt.Fprintf(&b, "Losses, projections and the update rules of the papers: [manual.md](manual.md#the-algorithms).\n\n")

	var single, fed []algoRow
	for _, r := range rows {
		if r.Federated {
			fed = append(fed, r)
		} else {
			single = append(single, r)
		}
	}
	fmt.Fprintf(&b, "## Single-site (%d)\n\n", len(single))
	fmt.Fprintf(&b, "| name | paper | ref | setting | tasks | losses | private |\n|---|---|---|---|---|---|---|\n")
	for _, r := range single {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s | %s | %s | %s | %s |\n", r.Name, r.Name, mdCell(shortPaper(r.Paper)), mdCell(r.Ref), r.Setting,
			strings.Join(r.Tasks, ", "), strings.Join(r.Losses, ", "), yesNo(r.Private))
	}
	fmt.Fprintf(&b, "\n## Federated (%d)\n\n", len(fed))
	fmt.Fprintf(&b, "| name | paper | tasks | losses | private | secure aggregation |\n|---|---|---|---|---|---|\n")
	for _, r := range fed {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s | %s | %s | %s |\n", r.Name, r.Name, mdCell(shortPaper(r.Paper)),
			strings.Join(r.Tasks, ", "), strings.Join(r.Losses, ", "), yesNo(r.Private), yesNo(r.SecureAggregation))
	}
	fmt.Fprintf(&b, "\n## Details\n")
	for _, r := range append(single, fed...) {
		fmt.Fprintf(&b, "\n### %s\n\n%s.\n\n", r.Name, strings.TrimSuffix(r.Title, "."))
		fmt.Fprintf(&b, "- paper: %s\n- reference: %s\n- setting: %s; tasks: %s; losses: %s\n",
			r.Paper, r.Ref, r.Setting, strings.Join(r.Tasks, ", "), strings.Join(r.Losses, ", "))
		if r.Federated {
			sa := "no (its releases are not one sum of site vectors)"
			if r.SecureAggregation {
				sa = "yes (`--secure-aggregation`: the coordinator sees only the sum)"
			}
			fmt.Fprintf(&b, "- private: %s; secure aggregation: %s\n", yesNo(r.Private), sa)
		} else {
			fmt.Fprintf(&b, "- private: %s\n", yesNo(r.Private))
		}
		fmt.Fprintf(&b, "- assumptions: %s\n", r.Assumptions)
		if a, err := pairwise.Lookup(r.Name); err == nil && !r.Federated && a.PrivacyModel != "" {
			fmt.Fprintf(&b, "- privacy: %s\n", a.PrivacyModel)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCell makes s safe inside a Markdown table cell.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
