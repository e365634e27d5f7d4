package main

import (
	"strings"

	"github.com/pairfed/pairfed/data"
	"github.com/urfave/cli/v2"
)

// dataFlags are the loader options shared by every command that reads a file.
func dataFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "format", Value: "auto", Usage: "input format: auto, libsvm, csv or arff (.gz/.bz2/.xz are read transparently)"},
		&cli.StringFlag{Name: "header", Value: "auto", Usage: "CSV header: auto, yes or no"},
		&cli.StringFlag{Name: "label-column", Usage: "CSV/ARFF label column: name or 1-based index (default: last, or the dataset's preset)"},
		&cli.StringFlag{Name: "ignore-columns", Usage: "comma-separated CSV/ARFF columns that are not features (e.g. an ID column)"},
		&cli.StringFlag{Name: "positive-classes", Usage: "labels that become the positive class: list and ranges, e.g. M or 1-13 or 2,4-6"},
		&cli.StringFlag{Name: "binarize", Usage: "multiclass to binary: halves (lower half of the sorted labels vs the upper half)"},
		&cli.StringFlag{Name: "impute", Value: "error", Usage: "missing values (? or empty): error, mean or drop"},
		&cli.IntFlag{Name: "dim", Usage: "declare the number of features (LIBSVM files whose last columns never occur)"},
		&cli.StringFlag{Name: "representation", Value: "auto", Usage: "in-memory representation: auto, dense or sparse"},
	}
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
