package data

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// Schema is a public description of a dataset's features: for every
// feature a range [lo, hi] known before any record is read (domain
// knowledge, a data dictionary, the definition of an encoding — never the
// records themselves), and optionally how the file's labels and columns
// are to be read. Scaling and clipping derived from it are per-record maps
// (Schema.Scaler), so a private run that uses them keeps its guarantee
// with no privacy spent on preprocessing.
//
// The file format (JSON, unknown fields rejected):
//
//	{
//	  "version": 1,                       // optional; must be 1
//	  "name": "diabetes",                 // optional, free text
//	  "description": "…", "source": "…",  // optional, free text
//	  "positive_class": "1",              // optional: labels that become +1,
//	                                      // as --positive-classes ("M", "4", "1-13", "2,4")
//	  "label_column": "9",                // optional (CSV/ARFF): as --label-column
//	  "ignore_columns": ["1"],            // optional (CSV/ARFF): as --ignore-columns
//	  "features": [                       // one entry per feature, in file order
//	    {"name": "glucose", "lo": 0, "hi": 300,
//	     "impute": 0,                     // optional: replaces a missing value (--impute schema);
//	                                      // default the midpoint (lo+hi)/2, which maps to 0
//	     "source": "…"},                  // optional: where the bounds come from
//	    {"name": "onehot", "count": 10, "lo": 0, "hi": 1},
//	                                      // count k > 1: k features with the same bounds,
//	                                      // named name#1 … name#k
//	    {"name": "workclass", "count": 8, "lo": 0, "hi": 1, "onehot": "workclass"},
//	                                      // one-hot group: indicators of one categorical
//	                                      // attribute, at most one non-zero per record
//	    {"name": "ma_count", "unknown": true, "source": "…"},
//	                                      // no documented range: a private run estimates
//	                                      // it under DP (charged), like --scale private
//	    {"name": "sex", "categories": ["F", "M"], "other": false}
//	                                      // a text column of public categories: one-hot
//	                                      // encoded into the indicators sex=F, sex=M
//	  ]
//	}
//
// Every feature needs finite lo < hi, or "unknown": true (and no lo/hi)
// when no public document bounds it: `pairfed train` then estimates that
// feature's range under differential privacy from a share of the budget
// (dp.EstimateRanges over the unknown features only, charged and reported
// as for --scale private), and a non-private run fits its min and max on
// the training split. Unknown() lists them; Scaler needs them filled
// (ScalerWith). The number of features (after
// count expansion) must equal the data's: for LIBSVM files the schema
// declares it (Options.Dim), for CSV and ARFF files it must match the
// columns, and when the file names its columns (a CSV header, ARFF
// attributes) and the schema names its features, the names must agree
// (case-insensitively), which catches a schema applied to the wrong file.
//
// Categorical columns: a feature with "categories" is ONE column of the
// file holding text values (a CSV or ARFF file; not LIBSVM). The loader
// one-hot encodes it into one indicator per category, named
// name=category, which form the one-hot group name (so the map below
// counts the column once in M). A value is matched exactly (after
// trimming blanks); a value outside the list is an error naming the file,
// line, column, value and the list, unless "other": true, which maps it to
// the catch-all category: the declared one spelled "other" (any case) if
// the list has one, else an added indicator name=other. A missing value
// ("?" or empty) follows the imputation mode like a numeric one: with
// --impute schema (or constant:V) every indicator of the column is 0 (no
// category: the record's norm only shrinks), with mean each indicator gets
// its column's mean, drop drops the record, error refuses it. The
// categories are public (a data dictionary, a form's choices): listing
// the values found in the records would make the encoding data-dependent.
// A categorical feature takes no lo, hi, count, unknown, onehot or impute.
//
// The map (Scaler): a feature maps [lo, hi] onto [−1, 1]; a feature of a
// one-hot group (lo = 0) maps [0, hi] onto [0, 1], so that its zeros stay
// zeros. A record then has ‖x'‖₂ ≤ M with M² = (number of features outside
// groups) + (number of groups), which Scaler.Divide uses: for a9a's 123
// indicators of 14 attributes M = √14 instead of √123.
type Schema struct {
	Version       int             `json:"version,omitempty"`
	Name          string          `json:"name,omitempty"`
	Description   string          `json:"description,omitempty"`
	Source        string          `json:"source,omitempty"`
	PositiveClass string          `json:"positive_class,omitempty"`
	LabelColumn   string          `json:"label_column,omitempty"`
	IgnoreColumns []string        `json:"ignore_columns,omitempty"`
	Features      []SchemaFeature `json:"features"`

	// File is where the schema was read from (for messages).
	File string `json:"-"`
	// expanded features, filled by Validate.
	lo, hi, impute []float64
	names, groups  []string
	unknown        []int
	within         [][2]float64 // per unknown feature; NaN when none
	cats           []*Categorical
	// cols has one entry per feature column of the file (a count-k entry
	// is k columns, a categorical one 1): nil for a numeric column. It is
	// nil when the schema has no categorical feature.
	cols []*Categorical
}

// SchemaFeature is one entry of Schema.Features.
type SchemaFeature struct {
	Name   string   `json:"name,omitempty"`
	Lo     *float64 `json:"lo"`
	Hi     *float64 `json:"hi"`
	Impute *float64 `json:"impute,omitempty"`
	Count  int      `json:"count,omitempty"`
	// OneHot names the one-hot group of the feature: the features of a
	// group encode one categorical attribute, at most one of them is
	// non-zero in a record, and lo must be 0.
	OneHot string `json:"onehot,omitempty"`
	// Unknown marks a feature no public document bounds: lo and hi are
	// absent and the range is estimated privately (see Schema).
	Unknown bool `json:"unknown,omitempty"`
	// Within [lo, hi] (only with Unknown): a public range that is known
	// but loose — the private estimate is clamped into it, and it is kept
	// where no estimate is found (--refine-bounds writes it).
	Within []float64 `json:"within,omitempty"`
	Source string    `json:"source,omitempty"`
	// Categories makes the feature a categorical column: its public
	// categories, one-hot encoded by the loader (see Schema).
	Categories []string `json:"categories,omitempty"`
	// Other maps a value outside Categories to the catch-all category
	// instead of refusing it (see Schema).
	Other bool `json:"other,omitempty"`
}

// Categorical is a categorical column of a schema, as the loader encodes
// it: the file's column holds one of Categories (or, with Other, any
// value, the ones outside the list counting as category Other), and the
// table gets len(Indicators) features from index First on, one per
// indicator, 1 for the record's category and 0 for the others (all 0 for
// an imputed missing value).
type Categorical struct {
	// Name is the column's (the schema feature's) name.
	Name string
	// Categories are the declared categories, in order.
	Categories []string
	// Other is the index in Indicators of the catch-all category that
	// takes the values outside Categories, −1 without "other".
	Other int
	// Indicators are the categories of the indicator features, in order:
	// Categories, plus "other" when "other": true adds one.
	Indicators []string
	// First is the 0-based index of the first indicator among the
	// schema's (expanded) features.
	First int
}

// FeatureName is the name of indicator k: Name=Indicators[k].
func (c *Categorical) FeatureName(k int) string { return c.Name + "=" + c.Indicators[k] }

// maxSchemaFeatures bounds the expanded feature count of a schema.
const maxSchemaFeatures = 1 << 24

// LoadSchema reads and validates the schema file at path.
func LoadSchema(path string) (*Schema, error) {
	f, err := openRegular(path, "feature-bounds schema")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadSchema(f, path)
}

// ReadSchema parses and validates a schema; name is used in messages.
// Unknown fields, a second JSON value, missing or non-finite bounds,
// lo ≥ hi and duplicate feature names are errors naming the feature.
func ReadSchema(r io.Reader, name string) (*Schema, error) {
	raw, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("data: feature bounds %s: %w", name, err)
	}
	// A byte-order mark (editors on Windows write one) is not JSON but
	// says nothing: skip it.
	raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("data: feature bounds %s: the file is empty: a schema is one JSON object, {\"features\": [{\"name\": …, \"lo\": …, \"hi\": …}, …]} (schemas/README.md)", name)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var s Schema
	if err := dec.Decode(&s); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line := 1 + bytes.Count(raw[:min(int(se.Offset), len(raw))], []byte{'\n'})
			return nil, fmt.Errorf("data: feature bounds %s:%d: invalid JSON: %v", name, line, err)
		case errors.As(err, &te):
			return nil, fmt.Errorf("data: feature bounds %s: field %q: %v is not a %v (numbers are JSON numbers, names and classes JSON strings)", name, te.Field, te.Value, te.Type)
		case strings.Contains(err.Error(), "unknown field"):
			return nil, fmt.Errorf("data: feature bounds %s: %v (allowed: version, name, description, source, positive_class, label_column, ignore_columns, features; per feature: name, lo, hi, impute, count, onehot, unknown, source, categories, other)", name, err)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			line := 1 + bytes.Count(raw, []byte{'\n'})
			return nil, fmt.Errorf("data: feature bounds %s:%d: the JSON ends in the middle of a value (a truncated file, or an unclosed { or [)", name, line)
		}
		return nil, fmt.Errorf("data: feature bounds %s: %w", name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("data: feature bounds %s: more than one JSON value in the file", name)
	}
	s.File = name
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// Validate checks the schema and expands Count. Errors name the file and
// the feature (1-based, after expansion) and say how to fix it.
func (s *Schema) Validate() error {
	where := "feature bounds"
	if s.File != "" {
		where += " " + s.File
	}
	if s.Version != 0 && s.Version != 1 {
		return fmt.Errorf("data: %s: version %d is not supported (want 1)", where, s.Version)
	}
	if len(s.Features) == 0 {
		return fmt.Errorf("data: %s: no features: list one {\"lo\": …, \"hi\": …} per feature under \"features\"", where)
	}
	if _, err := parseClassSpec(s.PositiveClass); err != nil {
		return fmt.Errorf("data: %s: positive_class: %w", where, err)
	}
	if err := checkColumnRef("label_column", s.LabelColumn); err != nil {
		return fmt.Errorf("data: %s: %w", where, err)
	}
	for _, c := range s.IgnoreColumns {
		if c == "" {
			return fmt.Errorf("data: %s: empty name in ignore_columns", where)
		}
		if err := checkColumnRef("ignore_columns", c); err != nil {
			return fmt.Errorf("data: %s: %w", where, err)
		}
	}
	s.lo, s.hi, s.impute, s.names, s.groups, s.unknown, s.within = nil, nil, nil, nil, nil, nil, nil
	s.cats, s.cols = nil, nil
	seen := make(map[string]int)
	explicitGroups := make(map[string]bool)
	var cols []*Categorical
	for i, f := range s.Features {
		if f.Categories != nil || f.Other {
			c, err := s.addCategorical(where, i, f, seen)
			if err != nil {
				return err
			}
			cols = append(cols, c)
			continue
		}
		if f.OneHot != "" {
			explicitGroups[f.OneHot] = true
		}
		k := f.Count
		if k == 0 {
			k = 1
		}
		entry := fmt.Sprintf("features[%d]", i)
		if f.Name != "" {
			entry += fmt.Sprintf(" (%q)", f.Name)
		}
		if k < 0 || len(s.lo)+k > maxSchemaFeatures {
			return fmt.Errorf("data: %s: %s: count %d must be ≥ 1 (and the total ≤ %d)", where, entry, f.Count, maxSchemaFeatures)
		}
		if f.Within != nil {
			if !f.Unknown {
				return fmt.Errorf("data: %s: %s: \"within\" is the public range of an \"unknown\": true feature (its estimate is clamped into it); give \"lo\" and \"hi\" instead, or add \"unknown\": true", where, entry)
			}
			if len(f.Within) != 2 || math.IsNaN(f.Within[0]) || math.IsInf(f.Within[0], 0) || math.IsNaN(f.Within[1]) || math.IsInf(f.Within[1], 0) || !(f.Within[0] < f.Within[1]) {
				return fmt.Errorf("data: %s: %s: \"within\": %v must be two finite numbers [lo, hi] with lo < hi", where, entry, f.Within)
			}
		}
		if f.Unknown {
			if f.Lo != nil || f.Hi != nil {
				return fmt.Errorf("data: %s: %s: \"unknown\": true takes no \"lo\" or \"hi\" (drop them, or drop \"unknown\" if the bounds are documented)", where, entry)
			}
			if f.OneHot != "" {
				return fmt.Errorf("data: %s: %s: a one-hot indicator is bounded by [0, 1]: it cannot be \"unknown\"", where, entry)
			}
			// Placeholder [−1, 1] until ScalerWith fills the estimate.
			lo, hi := -1.0, 1.0
			f.Lo, f.Hi = &lo, &hi
		} else if f.Lo == nil || f.Hi == nil {
			return fmt.Errorf("data: %s: %s: both \"lo\" and \"hi\" are required (or \"unknown\": true when no public document bounds the feature)", where, entry)
		}
		lo, hi := *f.Lo, *f.Hi
		if math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsNaN(hi) || math.IsInf(hi, 0) {
			return fmt.Errorf("data: %s: %s: bounds [%v, %v] must be finite", where, entry, lo, hi)
		}
		if lo > hi {
			return fmt.Errorf("data: %s: %s: lo = %v is above hi = %v: swap them (lo is the smallest value the feature can take)", where, entry, lo, hi)
		}
		if lo == hi {
			return fmt.Errorf("data: %s: %s: lo = hi = %v: a constant feature carries no information: drop its column with ignore_columns, or widen the range", where, entry, lo)
		}
		if h := hi/2 - lo/2; !(h > 0) || math.IsInf(1/h, 0) {
			return fmt.Errorf("data: %s: %s: range [%v, %v] is too narrow to scale in float64", where, entry, lo, hi)
		}
		if f.OneHot != "" && lo != 0 {
			return fmt.Errorf("data: %s: %s: a feature of one-hot group %q needs lo = 0 (its zeros stay zeros), not %v", where, entry, f.OneHot, lo)
		}
		imp := lo/2 + hi/2
		if f.Unknown {
			imp = math.NaN() // no midpoint: --impute schema needs "impute"
		}
		if f.OneHot != "" {
			imp = 0 // a missing indicator: not this category
		}
		if f.Impute != nil {
			imp = *f.Impute
			if math.IsNaN(imp) || math.IsInf(imp, 0) {
				return fmt.Errorf("data: %s: %s: impute value %v must be finite", where, entry, imp)
			}
		}
		for c := 1; c <= k; c++ {
			name := f.Name
			if k > 1 && name != "" {
				name = fmt.Sprintf("%s#%d", f.Name, c)
			}
			if name != "" {
				key := strings.ToLower(name)
				if prev, dup := seen[key]; dup {
					return fmt.Errorf("data: %s: feature %d has the same name %q as feature %d", where, len(s.lo)+1, name, prev)
				}
				seen[key] = len(s.lo) + 1
			}
			s.lo, s.hi, s.impute = append(s.lo, lo), append(s.hi, hi), append(s.impute, imp)
			s.names = append(s.names, name)
			s.groups = append(s.groups, f.OneHot)
			if f.Unknown {
				s.unknown = append(s.unknown, len(s.lo)-1)
				w := [2]float64{math.NaN(), math.NaN()}
				if f.Within != nil {
					w = [2]float64{f.Within[0], f.Within[1]}
				}
				s.within = append(s.within, w)
			}
			cols = append(cols, nil)
		}
	}
	for _, c := range s.cats {
		if explicitGroups[c.Name] {
			return fmt.Errorf("data: %s: categorical feature %q has the name of a one-hot group of other features (\"onehot\": %q): its indicators form their own group; rename one", where, c.Name, c.Name)
		}
	}
	if len(s.cats) > 0 {
		s.cols = cols
	}
	return nil
}

// addCategorical validates the categorical entry f (features[i]) and
// appends its indicators: bounds [0, 1], impute 0, group f.Name.
func (s *Schema) addCategorical(where string, i int, f SchemaFeature, seen map[string]int) (*Categorical, error) {
	entry := fmt.Sprintf("features[%d]", i)
	if f.Name != "" {
		entry += fmt.Sprintf(" (%q)", f.Name)
	}
	switch {
	case f.Name == "":
		return nil, fmt.Errorf("data: %s: %s: a categorical feature needs a \"name\" (its indicators are named name=category)", where, entry)
	case f.Categories == nil:
		return nil, fmt.Errorf("data: %s: %s: \"other\" applies to a categorical feature: list its public categories under \"categories\"", where, entry)
	case len(f.Categories) == 0:
		return nil, fmt.Errorf("data: %s: %s: \"categories\" is empty: list the column's public categories", where, entry)
	case f.Lo != nil || f.Hi != nil || f.Count != 0 || f.Unknown || f.OneHot != "" || f.Impute != nil:
		return nil, fmt.Errorf("data: %s: %s: a categorical feature takes no \"lo\", \"hi\", \"count\", \"unknown\", \"onehot\" or \"impute\" (its indicators are 0 or 1 and form their own one-hot group; a missing value imputes all of them to 0): drop them", where, entry)
	}
	c := &Categorical{Name: f.Name, Other: -1, First: len(s.lo)}
	declared := make(map[string]bool, len(f.Categories))
	for _, v := range f.Categories {
		switch {
		case strings.TrimSpace(v) != v || v == "":
			return nil, fmt.Errorf("data: %s: %s: category %q is empty or has leading or trailing blanks (values are matched after trimming them)", where, entry, v)
		case v == "?":
			return nil, fmt.Errorf("data: %s: %s: \"?\" marks a missing value, not a category (missing values follow --impute)", where, entry)
		case declared[v]:
			return nil, fmt.Errorf("data: %s: %s: category %q is listed twice", where, entry, v)
		}
		declared[v] = true
		if f.Other && c.Other < 0 && strings.EqualFold(v, "other") {
			c.Other = len(c.Indicators)
		}
		c.Categories = append(c.Categories, v)
		c.Indicators = append(c.Indicators, v)
	}
	if f.Other && c.Other < 0 {
		c.Other = len(c.Indicators)
		c.Indicators = append(c.Indicators, "other")
	}
	if len(s.lo)+len(c.Indicators) > maxSchemaFeatures {
		return nil, fmt.Errorf("data: %s: %s: %d categories take the features over %d", where, entry, len(c.Indicators), maxSchemaFeatures)
	}
	for k := range c.Indicators {
		name := c.FeatureName(k)
		key := strings.ToLower(name)
		if prev, dup := seen[key]; dup {
			return nil, fmt.Errorf("data: %s: feature %d has the same name %q as feature %d (categories differing only in case give indicators of the same name)", where, len(s.lo)+1, name, prev)
		}
		seen[key] = len(s.lo) + 1
		s.lo, s.hi, s.impute = append(s.lo, 0), append(s.hi, 1), append(s.impute, 0)
		s.names = append(s.names, name)
		s.groups = append(s.groups, f.Name)
	}
	s.cats = append(s.cats, c)
	return c, nil
}

// D returns the number of features (after count expansion and one-hot
// encoding of the categorical columns).
func (s *Schema) D() int { return len(s.lo) }

// FeatureNames returns the names of the D features ("" where the schema
// names none): count-k entries as name#1 … name#k, categorical columns as
// their indicators name=category. A table read with the schema has these
// features, in this order.
func (s *Schema) FeatureNames() []string { return append([]string(nil), s.names...) }

// Categoricals returns copies of the schema's categorical columns, in file
// order (nil when it has none). A model trained with the schema can compare
// them with a scoring schema's: equal names, categories and Other mean the
// same indicator features.
func (s *Schema) Categoricals() []Categorical {
	var out []Categorical
	for _, c := range s.cats {
		cc := *c
		cc.Categories = append([]string(nil), c.Categories...)
		cc.Indicators = append([]string(nil), c.Indicators...)
		out = append(out, cc)
	}
	return out
}

// Unknown returns the (0-based) indices of the features marked unknown.
func (s *Schema) Unknown() []int { return append([]int(nil), s.unknown...) }

// Within returns the public ranges the unknown features' estimates are
// clamped into, indexed like Unknown (NaN, NaN where the schema gives
// none).
func (s *Schema) Within() (lo, hi []float64) {
	lo, hi = make([]float64, len(s.within)), make([]float64, len(s.within))
	for k, w := range s.within {
		lo[k], hi[k] = w[0], w[1]
	}
	return lo, hi
}

// Bounds returns copies of the per-feature lower and upper bounds (the
// placeholder [−1, 1] for unknown features).
func (s *Schema) Bounds() (lo, hi []float64) {
	return append([]float64(nil), s.lo...), append([]float64(nil), s.hi...)
}

// ImputeValues returns the per-feature constants for Impute "constant"
// (--impute schema): each feature's "impute" value, or the midpoint of its
// range, which the schema's scaling maps to 0.
// An unknown feature without an "impute" constant has NaN (no midpoint).
func (s *Schema) ImputeValues() []float64 { return append([]float64(nil), s.impute...) }

// Apply fills the loader options that the caller left unset from the
// schema: the positive class, the label and ignored columns, and the
// number of features (Dim). It returns an error when the caller set one of
// them to something else (the schema and the flags would disagree) or
// chose a data-dependent label rule (Binarize) while the schema names the
// positive class. Notes say what was taken from the schema.
func (s *Schema) Apply(o *Options) ([]string, error) {
	where := "feature bounds " + s.File
	var notes []string
	if s.PositiveClass != "" {
		switch {
		case o.Binarize != "":
			return nil, fmt.Errorf("data: %s gives positive_class %q; --binarize %s would override it (drop one)", where, s.PositiveClass, o.Binarize)
		case o.PositiveClasses == "":
			o.PositiveClasses = s.PositiveClass
			notes = append(notes, fmt.Sprintf("positive class %s from %s", s.PositiveClass, where))
		case o.PositiveClasses != s.PositiveClass:
			return nil, fmt.Errorf("data: --positive-classes %q disagrees with positive_class %q of %s (drop one)", o.PositiveClasses, s.PositiveClass, where)
		}
	}
	if s.LabelColumn != "" {
		switch o.LabelColumn {
		case "":
			o.LabelColumn = s.LabelColumn
		case s.LabelColumn:
		default:
			return nil, fmt.Errorf("data: --label-column %q disagrees with label_column %q of %s (drop one)", o.LabelColumn, s.LabelColumn, where)
		}
	}
	if s.IgnoreColumns != nil {
		if o.IgnoreColumns == nil {
			o.IgnoreColumns = append([]string(nil), s.IgnoreColumns...)
		} else if strings.Join(o.IgnoreColumns, ",") != strings.Join(s.IgnoreColumns, ",") {
			return nil, fmt.Errorf("data: --ignore-columns %q disagrees with ignore_columns %q of %s (drop one)", strings.Join(o.IgnoreColumns, ","), strings.Join(s.IgnoreColumns, ","), where)
		}
	}
	switch o.Dim {
	case 0:
		o.Dim, o.DimSource = s.D(), where
	case s.D():
	default:
		return nil, fmt.Errorf("data: --dim %d disagrees with the %d features of %s", o.Dim, s.D(), where)
	}
	if s.cols != nil {
		// One entry per feature column; the loader expands them (Dim is
		// the expanded count).
		o.Categorical = append([]*Categorical(nil), s.cols...)
		notes = append(notes, fmt.Sprintf("%d categorical columns one-hot encoded with the categories of %s", len(s.cats), where))
	}
	if o.Impute == "schema" {
		// An unknown feature without "impute" has NaN here: a missing
		// value of it is an error when read (csv.go), not before.
		o.Impute, o.ImputeValues = "constant", s.ImputeValues()
		notes = append(notes, "missing values are imputed with the per-feature constants of "+where)
	}
	return notes, nil
}

// Check verifies that t has the schema's features: the same number and,
// when both name them, the same names (case-insensitively, in order).
func (s *Schema) Check(t *Table) error {
	where := "feature bounds " + s.File
	if t.D != s.D() {
		return fmt.Errorf("data: %s has %d features but %s has %d: the schema must list every feature of the file, in order", t.Source, t.D, where, s.D())
	}
	if t.FeatureNames == nil {
		return nil
	}
	for j, n := range t.FeatureNames {
		sn := s.names[j]
		if sn != "" && !strings.EqualFold(strings.TrimSpace(n), sn) {
			return fmt.Errorf("data: feature %d is %q in %s but %q in %s: is the schema for this file? (fix the order or the names)", j+1, n, t.Source, sn, where)
		}
	}
	return nil
}

// Scaler returns the schema's per-record map: NewBoundsScaler's, except
// that features of one-hot groups map [0, hi] onto [0, 1] (box [0, 1]),
// and MaxNorm counts each group once (see Schema). It panics when the
// schema has unknown features: use ScalerWith.
func (s *Schema) Scaler() *Scaler {
	if len(s.unknown) > 0 {
		panic(fmt.Sprintf("data: Schema.Scaler: %s has %d unknown features: use ScalerWith", s.File, len(s.unknown)))
	}
	return s.ScalerWith(nil, nil)
}

// ScalerWith is Scaler with the ranges of the unknown features given:
// lo[k], hi[k] for feature Unknown()[k] (public, or a charged DP
// estimate), so the map stays per record.
func (s *Schema) ScalerWith(lo, hi []float64) *Scaler {
	if len(lo) != len(s.unknown) || len(hi) != len(s.unknown) {
		panic(fmt.Sprintf("data: Schema.ScalerWith: %d/%d ranges for %d unknown features", len(lo), len(hi), len(s.unknown)))
	}
	bl, bh := s.Bounds()
	for k, j := range s.unknown {
		bl[j], bh[j] = lo[k], hi[k]
	}
	sc := NewBoundsScaler(bl, bh)
	seen := make(map[string]bool)
	var m2 float64
	for j, g := range s.groups {
		if g == "" {
			m2++
			continue
		}
		if sc.BoxLo == nil {
			sc.BoxLo, sc.BoxHi = make([]float64, len(s.lo)), make([]float64, len(s.lo))
			for k := range sc.BoxLo {
				sc.BoxLo[k], sc.BoxHi[k] = -1, 1
			}
		}
		sc.Shift[j], sc.Scale[j], sc.BoxLo[j] = 0, 1/s.hi[j], 0
		if !seen[g] {
			seen[g] = true
			m2++
		}
	}
	sc.MaxNorm = math.Sqrt(m2)
	return sc
}

// Describe summarises the schema for run notes.
func (s *Schema) Describe() string {
	name := s.Name
	if name == "" {
		name = s.File
	}
	u := ""
	if len(s.unknown) > 0 {
		u = fmt.Sprintf("; %d features have no public range (\"unknown\") and use the estimated ones", len(s.unknown))
	}
	if len(s.cats) > 0 {
		u += fmt.Sprintf("; %d categorical columns are one-hot encoded with their public categories (indicators in [0, 1], one group each)", len(s.cats))
	}
	return fmt.Sprintf("feature bounds %s (%s, %d features): each feature's public range [lo, hi] maps to [−1, 1] and is clipped to it, per record (no privacy spent)%s", s.File, name, s.D(), u)
}

// Refined returns a copy of the schema in which every numeric feature
// with public bounds (not a one-hot indicator, not a categorical column's
// indicator, not already unknown) is marked unknown within its public
// range ("within": [lo, hi]), so that a private run estimates its range
// under DP and clamps the estimate into the public one
// (--refine-bounds). The copy keeps every feature's impute constant (the
// public midpoint when the schema gave none), its names and its order; a
// count-k entry becomes k single entries named name#1 … name#k, as the
// schema names them.
func (s *Schema) Refined() (*Schema, error) {
	c := *s
	c.Features = nil
	for _, f := range s.Features {
		if f.Categories != nil || f.Other || f.OneHot != "" || f.Unknown {
			c.Features = append(c.Features, f)
			continue
		}
		k := f.Count
		if k == 0 {
			k = 1
		}
		imp := *f.Lo/2 + *f.Hi/2
		if f.Impute != nil {
			imp = *f.Impute
		}
		for i := 1; i <= k; i++ {
			g := SchemaFeature{Name: f.Name, Unknown: true, Within: []float64{*f.Lo, *f.Hi}, Impute: &imp, Source: f.Source}
			if k > 1 && f.Name != "" {
				g.Name = fmt.Sprintf("%s#%d", f.Name, i)
			}
			c.Features = append(c.Features, g)
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}
