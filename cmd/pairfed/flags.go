package main

import (
	"fmt"
	"strings"

	"github.com/pairfed/pairfed/data"
	"github.com/urfave/cli/v2"
)

// dataFlags are the loader options shared by every command that reads a file.
// A bad value is a usage error (exit status 2) before anything is read.
func dataFlags() []cli.Flag {
	check := func(c *cli.Context, _ string) error { return checkDataOptions(c) }
	return []cli.Flag{
		&cli.StringFlag{Name: "format", Value: "auto", Action: check, Usage: "input format: auto, libsvm, csv or arff (.gz/.bz2/.xz are read transparently)"},
		&cli.StringFlag{Name: "header", Value: "auto", Action: check, Usage: "CSV header: auto, yes or no"},
		&cli.StringFlag{Name: "label-column", Action: check, Usage: "CSV/ARFF label column: name or 1-based index (default: last, or the dataset's preset)"},
		&cli.StringFlag{Name: "ignore-columns", Action: check, Usage: "comma-separated CSV/ARFF columns that are not features (e.g. an ID column)"},
		&cli.StringFlag{Name: "positive-classes", Action: check, Usage: "labels that become the positive class: list and ranges, e.g. M or 1-13 or 2,4-6"},
		&cli.StringFlag{Name: "binarize", Action: check, Usage: "multiclass to binary: halves (lower half of the sorted labels vs the upper half)"},
		&cli.StringFlag{Name: "impute", Value: "error", Action: check, Usage: "missing values (? or empty): error, mean or drop"},
		&cli.IntFlag{Name: "dim", Action: func(c *cli.Context, _ int) error { return checkDataOptions(c) }, Usage: "declare the number of features (LIBSVM files whose last columns never occur)"},
		&cli.StringFlag{Name: "representation", Value: "auto", Action: check, Usage: "in-memory representation: auto, dense or sparse"},
	}
}

// checkDataOptions validates the loader flags: a bad value is a usage error.
func checkDataOptions(c *cli.Context) error {
	opt := dataOptions(c)
	if err := opt.Validate(); err != nil {
		return usageError{err}
	}
	return nil
}

// withUsageErrors makes the command-line errors that urfave/cli reports
// itself usage errors (exit status 2), like those of the actions: an
// unparsable flag value (e.g. --epsilon abc) and a missing required flag.
// The required flags are checked in Before (cli's own check would return
// an error of its own type, exit status 1); their usage says "(required)".
func withUsageErrors(cmd *cli.Command) *cli.Command {
	cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return usageError{err} }
	var required []string
	for _, f := range cmd.Flags {
		if sf, ok := f.(*cli.StringFlag); ok && sf.Required {
			sf.Required = false
			sf.Usage += " (required)"
			required = append(required, sf.Name)
		}
	}
	before := cmd.Before
	cmd.Before = func(c *cli.Context) error {
		for _, name := range required {
			if !c.IsSet(name) {
				return usageError{fmt.Errorf("%s: required flag --%s not set", cmd.Name, name)}
			}
		}
		if before != nil {
			return before(c)
		}
		return nil
	}
	return cmd
}

// dataOptions reads dataFlags.
func dataOptions(c *cli.Context) data.Options {
	var ignore []string
	if s := c.String("ignore-columns"); s != "" {
		ignore = strings.Split(s, ",")
	}
	return data.Options{
		Format:          c.String("format"),
		Header:          c.String("header"),
		LabelColumn:     c.String("label-column"),
		IgnoreColumns:   ignore,
		PositiveClasses: c.String("positive-classes"),
		Binarize:        c.String("binarize"),
		Impute:          c.String("impute"),
		Dim:             c.Int("dim"),
		Representation:  c.String("representation"),
	}
}

// loadTrainTest loads --data and, when given, --test with the same options,
// and checks that their dimensions agree.
func loadTrainTest(c *cli.Context, opt data.Options) (train, test *data.Table, err error) {
	if train, err = data.Load(c.String("data"), opt); err != nil {
		return nil, nil, err
	}
	if p := c.String("test"); p != "" {
		if test, err = data.Load(p, opt); err != nil {
			return nil, nil, err
		}
		if err := data.Align(train, test); err != nil {
			return nil, nil, err
		}
	}
	return train, test, nil
}
