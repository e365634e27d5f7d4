package data

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

// DefaultMaxBytes is a size limit after decompression (2 GiB) for callers
// that need a fixed one; Read's default limit is the memory budget.
const DefaultMaxBytes int64 = 2 << 30

// Options control how a file is parsed and how its labels become ±1.
// The zero value asks for sensible defaults: detect the format and the
// header, take the label from the last column (or from a known-dataset
// preset), refuse missing values, and map labels to ±1 with the rule
// documented on Load.
type Options struct {
	// Format is "auto" (or ""), "libsvm", "csv", "dense" or "arff". Auto
	// looks at the content, never the file name: ARFF starts with
	// @relation, @attribute or @data (after % comments); LIBSVM lines read
	// "label idx:val ..."; a line with a comma or semicolon is CSV; a line
	// of several fields separated by blanks only is dense (see Sep).
	Format string

	// Sep is the field separator of a delimited file: "" (auto), one
	// character such as "," ";" "|" or "tab" (CSV), or "space" (runs of
	// spaces and tabs: the dense format). See sep.go.
	Sep string

	// Header is "auto" (or ""), "yes" or "no" and applies to CSV only.
	// Auto treats the first record as a header when a column name was
	// given in LabelColumn or IgnoreColumns, or when some field of the
	// first record is not a number while the same field of the second
	// record is.
	Header string

	// LabelColumn selects the label of a CSV or ARFF file: a column name,
	// or a 1-based index. A string of decimal digits is always an index.
	// Default: a known-dataset preset, else for ARFF the attribute named
	// "class" (any case), else the last column.
	LabelColumn string

	// IgnoreColumns lists CSV or ARFF columns (names or 1-based indices)
	// that are neither features nor label, such as record IDs. Their
	// content is not parsed.
	IgnoreColumns []string

	// PositiveClasses lists the original labels that become +1, separated
	// by commas; an item is a label ("M"), a number ("4", which also
	// matches "4.0") or an inclusive numeric range ("1-13", "-3--1").
	// All other labels become −1.
	PositiveClasses string

	// Binarize is "" or "halves". Halves sorts the u distinct labels
	// (numerically when all are numbers) and maps labels of 0-based rank
	// k ≥ ⌊u/2⌋ to −1 and the others to +1; when u = 2 the label 1 is +1
	// and the other −1. Exclusive with PositiveClasses.
	Binarize string

	// Impute is "" or "error" (a missing value, "?" or an empty field, is
	// an error), "mean" (replace it by the mean of the column's non-missing
	// values in the same file), "drop" (drop the record), "constant:V"
	// (replace it by the number V) or "constant" with ImputeValues (replace
	// a missing value of feature j by ImputeValues[j], e.g. from a
	// feature-bounds schema). A missing label can only be dropped.
	//
	// Only the constants are public: "mean" makes every imputed value a
	// function of the other records and "drop" makes the number of records
	// depend on the data, so both are listed in Table.DataDependent (a
	// private run using them is not private end to end).
	Impute string

	// ImputeValues are the per-feature constants of Impute "constant"
	// (one per feature; ignored by the other modes).
	ImputeValues []float64

	// Categorical describes the categorical columns of a CSV, dense or
	// ARFF file (Schema.Apply sets it from a schema's "categories"): one
	// entry per feature column of the file — a column that is neither
	// the label nor ignored — in order, nil for a numeric column. The
	// loader one-hot encodes a categorical column into
	// len(Indicators) features named column=category (see Schema), so
	// Dim counts the indicators. nil: every feature column is numeric.
	Categorical []*Categorical

	// DimSource names who declared Dim (e.g. "feature-bounds schema
	// s.json"), for error messages; "" means the Dim option.
	DimSource string

	// Dim declares the number of features of a LIBSVM file: an index above
	// Dim is an error and a file whose largest index is below Dim gets
	// zero columns up to Dim. For CSV and ARFF it must match the file.
	// 0 means "as found".
	Dim int

	// Representation is "auto" (or ""), "dense" or "sparse". Auto picks
	// sparse (CSR) when it needs at most a quarter of the dense storage
	// (12 bytes per nonzero and 8 per row against 8 per cell), dense
	// otherwise.
	Representation string

	// MaxBytes bounds the input size after decompression; 0 means the
	// memory budget (MaxMemory). It protects against decompression bombs.
	MaxBytes int64

	// NoPresets disables the known-dataset presets (see Load).
	NoPresets bool

	// AllowOneClass accepts a file whose records are all of one class
	// (by default an error: nothing can be learned from it alone). The
	// federation's sites set it (`pairfed worker --single-class`): a site
	// of one class takes part in the algorithms that pool statistics
	// across sites. The class's side is +1 for the label 1, −1 for 0 and
	// −1, and otherwise what PositiveClasses says; a single label of
	// another name without PositiveClasses is an error.
	AllowOneClass bool

	// MaxMemory is the memory budget of one Read in bytes: the records'
	// storage, the parsers' buffers and the per-feature vectors of
	// training (see memory.go); 0 means DefaultMaxMemory(). It also
	// bounds the input after decompression when MaxBytes is 0.
	MaxMemory int64
}

// Validate checks the options and returns an error naming the bad field.
func (o *Options) Validate() error {
	switch o.Format {
	case "", "auto", FormatLIBSVM, FormatCSV, FormatDense, FormatARFF:
	default:
		return fmt.Errorf("data: unknown format %q (want auto, libsvm, csv, dense or arff)", o.Format)
	}
	if err := o.validateLoader(); err != nil {
		return err
	}
	switch o.Header {
	case "", "auto", "yes", "no":
	default:
		return fmt.Errorf("data: unknown header mode %q (want auto, yes or no)", o.Header)
	}
	switch o.Binarize {
	case "", "halves":
	default:
		return fmt.Errorf("data: unknown binarization %q (want halves or empty)", o.Binarize)
	}
	if _, _, err := parseImpute(o.Impute, o.ImputeValues); err != nil {
		return err
	}
	switch o.Representation {
	case "", "auto", Dense, Sparse:
	default:
		return fmt.Errorf("data: unknown representation %q (want auto, dense or sparse)", o.Representation)
	}
	if o.Dim < 0 || o.Dim > math.MaxInt32 {
		return fmt.Errorf("data: Dim %d outside [0, %d]", o.Dim, math.MaxInt32)
	}
	if o.MaxBytes < 0 {
		return fmt.Errorf("data: MaxBytes %d is negative", o.MaxBytes)
	}
	if o.PositiveClasses != "" && o.Binarize != "" {
		return fmt.Errorf("data: PositiveClasses and Binarize are exclusive")
	}
	if _, err := parseClassSpec(o.PositiveClasses); err != nil {
		return err
	}
	if err := checkColumnRef("label column", o.LabelColumn); err != nil {
		return err
	}
	for _, c := range o.IgnoreColumns {
		if c == "" {
			return fmt.Errorf("data: empty name in IgnoreColumns")
		}
		if err := checkColumnRef("ignored column", c); err != nil {
			return err
		}
	}
	return nil
}

// parseImpute parses an Impute mode: it returns the mode ("error", "mean",
// "drop" or "constant") and, for "constant:V", the value V.
func parseImpute(s string, values []float64) (mode string, v float64, err error) {
	switch s {
	case "", "error":
		return "error", 0, nil
	case "mean", "drop":
		return s, 0, nil
	case "schema":
		return "", 0, fmt.Errorf("data: --impute schema takes the per-feature constants of a feature-bounds schema: give one with --feature-bounds FILE (or use --impute constant:V)")
	case "constant":
		if values == nil {
			return "", 0, fmt.Errorf("data: impute mode constant needs a value: --impute constant:V (e.g. constant:0), or per-feature values from a schema (--impute schema with --feature-bounds)")
		}
		for j, x := range values {
			// NaN: a schema's unknown feature without a constant (an
			// error only if one of its values is missing).
			if math.IsInf(x, 0) {
				return "", 0, fmt.Errorf("data: impute value %v for feature %d is not a finite number", x, j+1)
			}
		}
		return "constant", 0, nil
	}
	if rest, ok := strings.CutPrefix(s, "constant:"); ok {
		x, ok := parseFinite(strings.TrimSpace(rest))
		if !ok {
			return "", 0, fmt.Errorf("data: impute mode %q: %q is not a finite number (e.g. --impute constant:0)", s, rest)
		}
		return "constant", x, nil
	}
	return "", 0, fmt.Errorf("data: unknown impute mode %q (want error, mean, drop, constant:V, or schema with --feature-bounds)", s)
}

func checkColumnRef(what, s string) error {
	if s == "" || !isDigits(s) {
		return nil
	}
	k, err := strconv.Atoi(s)
	if err != nil || k < 1 {
		return fmt.Errorf("data: %s %q: column indices are 1-based", what, s)
	}
	return nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Format names, as stored in Table.Format.
const (
	FormatLIBSVM = "libsvm"
	FormatCSV    = "csv"
	FormatARFF   = "arff"
	FormatDense  = "dense" // blank-separated columns, label first by default
)

// Representation names, as stored in Table.Representation.
const (
	Dense  = "dense"
	Sparse = "sparse"
)

// preset describes a known UCI file whose layout cannot be guessed.
type preset struct {
	format   string
	label    string
	ignore   []string
	positive string
	header   string
	why      string
}

// presets are keyed by base file name (without a compression suffix).
var presets = map[string]preset{
	"wdbc.data": {format: FormatCSV, label: "2", ignore: []string{"1"}, positive: "M", header: "no",
		why: "M = malignant"},
	"breast-cancer-wisconsin.data": {format: FormatCSV, label: "11", ignore: []string{"1"}, positive: "4", header: "no",
		why: "4 = malignant"},
	"hepatitis.data": {format: FormatCSV, label: "1", positive: "1", header: "no",
		why: "1 = DIE"},
	"pima-indians-diabetes.csv": {format: FormatCSV, label: "9", positive: "1", header: "no",
		why: "1 = diabetic"},
	"messidor_features.arff": {format: FormatARFF, label: "Class", positive: "1",
		why: "1 = signs of diabetic retinopathy"},
}

// presetName strips directories and compression suffixes from name.
func presetName(name string) string {
	base := filepath.Base(name)
	for _, ext := range []string{".gz", ".bz2", ".xz"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

// applyPreset fills the options the user left unset from the preset for
// name, if any, and returns a note describing what was used.
func applyPreset(o *Options, name, format string) string {
	if o.NoPresets {
		return ""
	}
	key := presetName(name)
	p, ok := presets[key]
	if !ok || p.format != format {
		return ""
	}
	var used []string
	if o.LabelColumn == "" {
		o.LabelColumn = p.label
		used = append(used, "label column "+p.label)
	}
	if o.IgnoreColumns == nil && p.ignore != nil {
		o.IgnoreColumns = p.ignore
		used = append(used, "ignored column "+strings.Join(p.ignore, ","))
	}
	if o.PositiveClasses == "" && o.Binarize == "" {
		o.PositiveClasses = p.positive
		used = append(used, "positive class "+p.positive+" ("+p.why+")")
	}
	if (o.Header == "" || o.Header == "auto") && p.header != "" {
		o.Header = p.header
		used = append(used, "header "+p.header)
	}
	if len(used) == 0 {
		return ""
	}
	return "preset for " + key + ": " + strings.Join(used, ", ")
}

// classItem is one item of a PositiveClasses list.
type classItem struct {
	text     string
	isNum    bool
	isRange  bool
	lo, hi   float64
	spelling string
}

// parseClassSpec parses a PositiveClasses list.
func parseClassSpec(s string) ([]classItem, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var items []classItem
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("data: positive classes %q: empty item", s)
		}
		it := classItem{text: f, spelling: f}
		if v, ok := parseFinite(f); ok {
			it.isNum, it.lo, it.hi = true, v, v
		} else if lo, hi, ok := parseRange(f); ok {
			if lo > hi {
				return nil, fmt.Errorf("data: positive classes %q: empty range %s", s, f)
			}
			it.isRange, it.lo, it.hi = true, lo, hi
		}
		items = append(items, it)
	}
	return items, nil
}

// parseRange parses "a-b" with a and b finite numbers (each may be signed).
func parseRange(s string) (lo, hi float64, ok bool) {
	for i := 1; i < len(s)-1; i++ {
		if s[i] != '-' || s[i-1] == 'e' || s[i-1] == 'E' {
			continue
		}
		a, okA := parseFinite(s[:i])
		b, okB := parseFinite(s[i+1:])
		if okA && okB {
			return a, b, true
		}
	}
	return 0, 0, false
}

// parseFinite parses a finite float.
func parseFinite(s string) (float64, bool) {
	v, outcome := parseNumber([]byte(s))
	return v, outcome == numOK
}

// matches reports whether the class c is selected by it.
func (it classItem) matches(c *class) bool {
	if c.isNum && (it.isNum || it.isRange) {
		return it.lo <= c.value && c.value <= it.hi
	}
	return !it.isRange && it.spelling == c.name
}
