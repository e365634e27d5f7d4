package data

import (
	"bytes"
	"fmt"
	"strings"
)

// Separators. A dense file is read like a CSV file whose fields are
// separated by runs of blanks (spaces and tabs), with leading and trailing
// blanks ignored and no quoting: the layout of the UCI, ESL and
// LIBSVM-dense distributions ("label v1 v2 ...", e.g. "6.0000 -1 -0.73").
// Its label is the first column unless LabelColumn says otherwise, and
// lines starting with "#" are comments.

// minMaxMemory is the smallest memory budget Options accepts.
const minMaxMemory = 16 << 20

// parseSep interprets Options.Sep: the separator byte of a CSV file (0:
// detect), or blank for the runs of blanks of a dense file.
func parseSep(s string) (sep byte, blank bool, err error) {
	switch strings.ToLower(s) {
	case "":
		return 0, false, nil
	case "space", "spaces", "blank", "blanks", "whitespace", " ":
		return 0, true, nil
	case "tab", `\t`, "\t":
		return '\t', false, nil
	}
	if len(s) == 1 && !strings.ContainsAny(s, "\"'\n\r.+-0123456789eE") &&
		!('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z') && s[0] >= ' ' && s[0] < 0x7f {
		return s[0], false, nil
	}
	return 0, false, fmt.Errorf("data: separator %q: want one punctuation character (e.g. \",\" \";\" \"|\"), \"tab\", or \"space\" (runs of blanks: the dense format)", s)
}

// validateLoader checks the options this file and memory.go add.
func (o *Options) validateLoader() error {
	_, blank, err := parseSep(o.Sep)
	if err != nil {
		return err
	}
	switch {
	case o.Sep != "" && (o.Format == FormatLIBSVM || o.Format == FormatARFF):
		return fmt.Errorf("data: a separator (--sep %q) applies to CSV and dense files, not to format %s", o.Sep, o.Format)
	case o.Sep != "" && !blank && o.Format == FormatDense:
		return fmt.Errorf("data: dense files are separated by blanks; for --sep %q use --format csv (or auto)", o.Sep)
	}
	if o.MaxMemory < 0 || o.MaxMemory > 0 && o.MaxMemory < minMaxMemory {
		return fmt.Errorf("data: memory limit %d bytes is below %s; give a size such as 512MiB or 4GiB (0: the default, %s)",
			o.MaxMemory, FormatSize(minMaxMemory), FormatSize(DefaultMaxMemory()))
	}
	limit := o.MaxMemory
	if limit == 0 {
		limit = DefaultMaxMemory()
	}
	if o.Dim > 0 && maxDimBytes(o.Dim) > limit {
		return fmt.Errorf("data: Dim %d: training over %d features needs at least %d vectors of %d float64 values (%s), over the memory limit of %s (at most %d features fit); raise --max-memory if the machine has the memory",
			o.Dim, o.Dim, vectorsPerFeature, o.Dim, FormatSize(maxDimBytes(o.Dim)), FormatSize(limit), MaxDim(limit))
	}
	return nil
}

// resolveFormat applies Options.Sep to the format: a blank separator
// makes "auto" and "csv" dense, another separator makes "auto" CSV.
// sniffed is the detected format, used for "auto" without a separator.
func resolveFormat(opt Options, sniff func() string) string {
	_, blank, _ := parseSep(opt.Sep)
	switch opt.Format {
	case "", "auto":
		switch {
		case blank:
			return FormatDense
		case opt.Sep != "":
			return FormatCSV
		}
		return sniff()
	case FormatCSV:
		if blank {
			return FormatDense
		}
	}
	return opt.Format
}

// readDense parses a dense (blank-separated) file; see readDelimited.
func readDense(lr *lineReader, b *builder) error {
	rr := &recordReader{lr: lr, sp: splitter{blank: true, m: b.m}, skip: func(t []byte) bool { return t[0] == '#' }}
	if b.opt.LabelColumn == "" {
		b.note("dense file: label in column 1 (--label-column to choose another)")
	}
	return readDelimited(lr, b, rr, 0)
}

// blankSeparated reports whether a single field holds two or more
// blank-separated numbers: a dense line read with the wrong separator.
func blankSeparated(f []byte) bool {
	fs := bytes.Fields(f)
	if len(fs) < 2 {
		return false
	}
	for _, x := range fs[:min(len(fs), 3)] {
		if _, ok := parseNumber(x); ok != numOK {
			return false
		}
	}
	return true
}

// looksDense reports whether a LIBSVM line is blank-separated numbers
// without any index: a dense line read as LIBSVM.
func looksDense(line []byte) bool {
	fs := bytes.Fields(line)
	if len(fs) < 2 {
		return false
	}
	for _, x := range fs {
		if _, ok := parseNumber(x); ok != numOK {
			return false
		}
	}
	return true
}
