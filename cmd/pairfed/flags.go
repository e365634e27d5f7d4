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
		&cli.StringFlag{Name: "format", Value: "auto", Action: check, Usage: "input format: auto, libsvm, csv, dense (blank-separated columns, label first) or arff (.gz/.bz2/.xz are read transparently)"},
		&cli.StringFlag{Name: "sep", Action: check, Usage: "field separator: one character (e.g. , ; |), tab, or space (runs of blanks: dense) (default: detected)"},
		&cli.StringFlag{Name: "header", Value: "auto", Action: check, Usage: "CSV header: auto, yes or no"},
		&cli.StringFlag{Name: "label-column", Action: check, Usage: "CSV/ARFF label column: name or 1-based index (default: last, or the dataset's preset)"},
		&cli.StringFlag{Name: "ignore-columns", Action: check, Usage: "comma-separated CSV/ARFF columns that are not features (e.g. an ID column)"},
		&cli.StringFlag{Name: "positive-classes", Action: check, Usage: "labels that become the positive class: list and ranges, e.g. M or 1-13 or 2,4-6"},
		&cli.StringFlag{Name: "binarize", Action: check, Usage: "multiclass to binary: halves (lower half of the sorted labels vs the upper half)"},
		&cli.StringFlag{Name: "impute", Value: "error", Action: check, Usage: "missing values (? or empty): error, constant:V (public), schema (the --feature-bounds constants, public), mean or drop (both data-dependent: a private run is then reported private: false)"},
		&cli.IntFlag{Name: "dim", Action: func(c *cli.Context, _ int) error { return checkDataOptions(c) }, Usage: "declare the number of features (LIBSVM files whose last columns never occur)"},
		&cli.StringFlag{Name: "representation", Value: "auto", Action: check, Usage: "in-memory representation: auto, dense or sparse"},
		&cli.StringFlag{Name: "memory-estimate", Hidden: true, Usage: "print the run's memory estimate (print) or print it and stop (exit): scripts/memory/estimate.sh"},
		&cli.StringFlag{Name: "max-memory", Action: check, Usage: "memory budget of a data file and its run (e.g. 512MiB, 8GiB): records, parsing and 16 vectors per feature, and its text after decompression; a file is read within 1.25 times it, and a run whose training would hold more (its records times the copies it makes) is refused before training (default: a quarter of the memory the process may use — physical, cgroup or ulimit -v —, at most 4 GiB)"},
	}
}

// testFractionFlag is --test-fraction: the share of --data held out for
// testing. A value outside (0, 1), or one that the other flags make
// meaningless, is a usage error rather than a silent default.
func testFractionFlag(usage string) cli.Flag {
	return &cli.Float64Flag{Name: "test-fraction", Value: 0.2, Usage: usage, Action: func(c *cli.Context, f float64) error {
		switch {
		case !(f >= 0.01 && f <= 0.9):
			return usageError{fmt.Errorf("--test-fraction %v is outside the accepted range [0.01, 0.9]: it is the share of --data held out for testing (e.g. 0.2; below 1%% the test AUC rests on a handful of records); to test on another file, give --test instead", f)}
		case c.IsSet("test"):
			return usageError{fmt.Errorf("--test-fraction %v has no effect with --test %s (the test set is that file); give one of them", f, c.String("test"))}
		case c.IsSet("folds"):
			return usageError{fmt.Errorf("--test-fraction %v has no effect with --folds %d (each fold is the test set in turn); give one of them", f, c.Int("folds"))}
		}
		return nil
	}}
}

// checkDataOptions validates the loader flags: a bad value is a usage error.
func checkDataOptions(c *cli.Context) error {
	if s := c.String("max-memory"); s != "" {
		if _, err := data.ParseSize(s); err != nil {
			return usageError{fmt.Errorf("--max-memory: %w", err)}
		}
	}
	opt := dataOptions(c)
	if opt.Impute == "schema" && c.String("feature-bounds") != "" {
		opt.Impute = "" // resolved from the schema when it is loaded
	}
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
	cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		if hinted := globalFlagHint(err); hinted != err {
			return usageError{hinted}
		}
		if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
			var names []string
			for _, f := range cmd.Flags {
				names = append(names, f.Names()...)
			}
			name = strings.TrimLeft(name, "-")
			if s := didYouMean(name, names); s != "" {
				s = strings.Replace(s, "mean ", "mean --", 1)
				return usageError{fmt.Errorf("%w%s", err, s)}
			}
		}
		return usageError{err}
	}
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
	var maxMemory int64
	if s := c.String("max-memory"); s != "" {
		maxMemory, _ = data.ParseSize(s) // refused by checkDataOptions
	}
	setMemoryLimit(maxMemory)
	return data.Options{
		Format:          c.String("format"),
		Sep:             c.String("sep"),
		MaxMemory:       maxMemory,
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

// checkMetricSize refuses metric learning over more features than the
// memory budget allows (its models are d×d matrices), before training.
func checkMetricSize(task string, opt data.Options, d int) error {
	if task != "metric" {
		return nil
	}
	return data.CheckMatrixDim(d, opt.MaxMemory)
}

// featureBoundsFlag is --feature-bounds, for the commands that prepare
// training data (train, simulate, worker).
func featureBoundsFlag() cli.Flag {
	return &cli.StringFlag{Name: "feature-bounds", Usage: "public feature-bounds schema (JSON; see schemas/README.md): each feature's range [lo, hi] maps to [-1, 1] per record, so a private run keeps its guarantee at no privacy cost; it may also give the positive class, label/ignored columns and the constants of --impute schema"}
}

// loadSchema reads --feature-bounds (nil when unset) and fills the loader
// options it determines; the notes say what it set.
func loadSchema(c *cli.Context, opt *data.Options) (*data.Schema, []string, error) {
	p := c.String("feature-bounds")
	if p == "" {
		return nil, nil, nil
	}
	s, err := data.LoadSchema(p)
	if err != nil {
		return nil, nil, err
	}
	if u := s.Unknown(); len(u) > 0 && c.Command.Name != "train" {
		return nil, nil, usageError{fmt.Errorf("%s has %d features marked unknown (e.g. feature %d): their ranges are estimated under DP by `pairfed train` only so far; for %s give them public bounds", p, len(u), u[0]+1, c.Command.Name)}
	}
	notes, err := s.Apply(opt)
	if err != nil {
		return nil, nil, usageError{err}
	}
	return s, notes, nil
}

// loadTrainTestSchema loads --data and, when given, --test with the same
// options, and checks that their dimensions agree and, with a schema, that
// both have its features.
func loadTrainTestSchema(c *cli.Context, opt data.Options, schema *data.Schema) (train, test *data.Table, err error) {
	if train, err = data.Load(c.String("data"), opt); err != nil {
		return nil, nil, err
	}
	if err := checkRunMemory(c, opt, train); err != nil {
		return nil, nil, err // before the test file is read beside it
	}
	if p := c.String("test"); p != "" {
		if test, err = data.Load(p, opt); err != nil {
			return nil, nil, err
		}
		if err := data.Align(train, test); err != nil {
			return nil, nil, err
		}
	}
	if err := checkRunMemory(c, opt, train, test); err != nil {
		return nil, nil, err
	}
	if schema != nil {
		for _, t := range []*data.Table{train, test} {
			if t == nil {
				continue
			}
			if err := schema.Check(t); err != nil {
				return nil, nil, err
			}
		}
	}
	return train, test, nil
}
