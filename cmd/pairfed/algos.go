package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/pairfed/pairfed/pairwise"
	"github.com/urfave/cli/v2"
)

func algosCommand() *cli.Command {
	return &cli.Command{
		Name:  "algos",
		Usage: "list the algorithms with paper, algorithm number, setting and assumptions",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(c *cli.Context) error {
			type row struct {
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
			var rows []row
			for _, a := range pairwise.Algorithms() {
				r := row{Name: a.Name, Title: a.Title, Paper: a.Paper, Ref: a.Ref, Setting: a.Setting, Assumptions: a.Assumptions, Private: a.Private, Losses: a.Losses}
				for _, t := range a.Tasks {
					r.Tasks = append(r.Tasks, string(t))
				}
				if r.Losses == nil {
					r.Losses = []string{"any"}
				}
				rows = append(rows, r)
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, rows)
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tPAPER\tREF\tSETTING\tTASKS\tLOSSES\tPRIVATE\tASSUMPTIONS")
			for _, r := range rows {
				paper := r.Paper
				if i := strings.Index(paper, "]"); i > 0 && strings.HasPrefix(paper, "[") {
					paper = paper[:i+1]
				} else if i := strings.Index(paper, "."); i > 0 {
					paper = paper[:i]
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%v\t%s\n", r.Name, paper, r.Ref, r.Setting, strings.Join(r.Tasks, ","), strings.Join(r.Losses, ","), r.Private, r.Assumptions)
			}
			return tw.Flush()
		},
	}
}
