// Package modeldata reads the records a model artefact scores or is
// evaluated on (`pairfed score`, `pairfed evaluate`): the file is read as
// the model's training file was (its loader options), its columns are
// checked against the model's features — a missing, renamed or reordered
// column is named — and its records are prepared by the model's own map
// (experiment.PrepareModelRecords, the code training used). It is the
// library behind those two commands; cmd/pairfed only maps flags onto it.
package modeldata

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/pairwise"
)

// Labels says whether Load may read a file without the label column
// (score) or needs it (evaluate, and --reference files).
type Labels int

const (
	// NeedLabels refuses a file without the model's label column.
	NeedLabels Labels = iota
	// LabelsOptional reads a CSV file without the label column (or with
	// an empty or single-valued one) with placeholder labels.
	LabelsOptional
)

// Load reads path as the model's training file was read (its
// loader options, with idColumn ignored as a feature), refuses a file whose
// features differ from the model's, naming the difference, and returns the
// table and its records prepared by the model's map
// (experiment.PrepareModelRecords, the code training used). With
// LabelsOptional a CSV file without the label column is read with
// placeholder labels (placeholderLabels): the table's labels are then
// meaningless and unlabeled is true.
func Load(m *model.Model, path, idColumn string, maxMemory int64, lab Labels) (t *data.Table, ds *pairwise.Dataset, placeholderWhy string, err error) {
	if err := m.Scorable(); err != nil {
		return nil, nil, "", err
	}
	opt := LoaderOptions(m.Preprocessing.Loader)
	if sc := m.Preprocessing.Schema; sc != nil {
		// What the schema sets in the loader options (label, classes,
		// columns, the number of features, imputation constants, and
		// whatever it learns to set) is set by the schema itself, as
		// training did: data.Schema.Apply.
		if _, err := sc.Apply(&opt); err != nil {
			return nil, nil, "", fmt.Errorf("the model's schema and its loader options disagree: %w", err)
		}
	}
	if idColumn != "" && !ContainsFold(opt.IgnoreColumns, idColumn) {
		opt.IgnoreColumns = append(append([]string(nil), opt.IgnoreColumns...), idColumn)
	}
	opt.MaxMemory = maxMemory
	ph, err := placeholderLabels(m, path, opt, idColumn, lab)
	if err != nil {
		return nil, nil, "", err
	}
	header := ph.header
	if ph.text != nil {
		if lab == NeedLabels {
			return nil, nil, "", fmt.Errorf("%s has no label column (%s): %s needs labelled records in the training file's layout", path, ph.what, "evaluation")
		}
		opt = ph.opt
	} else if opt.Format == data.FormatCSV && opt.Header != "no" && m.Features != nil {
		header = csvHead(path, opt.Sep)
	}
	if err := checkHeader(m, path, header, opt); err != nil {
		return nil, nil, "", err
	}
	if ph.text != nil {
		t, err = data.Read(bytes.NewReader(ph.text), path, opt)
	} else {
		t, err = data.Load(path, opt)
	}
	if err != nil {
		// Probe 4 (issue 28): a CSV file for a LIBSVM model failed as
		// `bad label "a,b,c,label"`, a LIBSVM file for a CSV model as "no
		// feature columns", an index beyond d as "exceeds Dim 8": the
		// loader's error did not say these come from the model.
		return nil, nil, "", fmt.Errorf("%w\n(%s reads its data as %s: give --data a file in that layout)", err, "the model", modelLayout(m, opt))
	}
	if ph.extra && t.N > 1 {
		t.Dataset = t.Subset([]int{0}) // the placeholder's second record
	}
	if err := checkFeatures(m, t); err != nil {
		return nil, nil, "", err
	}
	if ds, err = experiment.PrepareModelRecords(&m.Preprocessing, t.Dataset); err != nil {
		return nil, nil, "", err
	}
	return t, ds, ph.what, nil
}

// placeholder is placeholderLabels' result: text is nil when the file
// needs none (it has the label column, or is not plain CSV).
type placeholder struct {
	text   []byte
	opt    data.Options
	header []string // the header with the placeholder column, if any
	extra  bool     // a second record was added (a one-record file)
	what   string   // how the label column was found missing (or unusable)
}

// placeholderLabels handles a CSV file of records to score that lacks the
// model's label column (their outcome is unknown): it returns the file's
// text with a placeholder label column where the training file had its
// label — at the label's 1-based index, or last (default, or a label named
// by the header) — and the options that read it. The loader needs both
// classes, so the placeholders alternate "1" (positive) and "0"; a
// one-record file gets a copy of its record, dropped after loading. The
// placeholders are never used: score writes wᵀx' only. Detection: a
// label named by the header is missing from it; a label given by index
// (or the default last column) is missing when the records have one field
// fewer than d + 1 + the ignored columns.
//
// With LabelsOptional, a label column that is present but holds no
// label, or one label only, is replaced by placeholders the same way
// (probe 5, issue 28: score refused new patients whose outcome column was
// empty, "missing label … --impute drop", or all "no", "only one class
// present": score does not use labels).
func placeholderLabels(m *model.Model, path string, opt data.Options, idColumn string, lab Labels) (placeholder, error) {
	var ph placeholder
	if opt.Format != data.FormatCSV {
		return ph, nil
	}
	r, cl, err := csvReader(path, opt.Sep)
	if err != nil || r == nil {
		return ph, nil // the loader reports what is wrong
	}
	comma := r.Comma
	// The records are held as strings while the label column is looked
	// at (and rewritten with placeholders): they are charged against half
	// the memory budget, the loader's table taking the rest.
	budget := opt.MaxMemory
	if budget <= 0 {
		budget = data.DefaultMaxMemory()
	}
	var recs [][]string
	var held int64
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			cl.Close()
			return ph, nil // the loader reports it with its position
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		held += int64(len(rec))*int64(unsafe.Sizeof("")) + int64(unsafe.Sizeof(rec))
		for _, c := range rec {
			held += int64(len(c))
		}
		if held > budget/2 {
			cl.Close()
			return ph, fmt.Errorf("%s: its records held as text to check the label column (%d read so far) pass half the memory limit of %s: give --max-memory a larger budget, or score the file in parts", path, len(recs)+1, data.FormatSize(budget))
		}
		recs = append(recs, rec)
	}
	cl.Close()
	if len(recs) == 0 {
		return ph, nil
	}
	first := recs[0]
	// A training file with a header gave the model its feature names.
	header := opt.Header == "yes" || opt.Header != "no" && m.Features != nil && looksNamed(first, fileColumns(m))
	label := opt.LabelColumn
	pos, name := len(first), "label"
	if label != "" && !isIndex(label) {
		name = label
	}
	replace := false
	k := -1 // the label column of a header that names it
	if header && lab == LabelsOptional {
		k = labelColumn(m, first, label, opt)
	}
	switch {
	case k >= 0:
		why := unusableLabels(recs[1:], k)
		if why == "" {
			return ph, nil
		}
		replace, pos, name = true, k, first[k]
		ph.what = fmt.Sprintf("its label column %q holds %s", first[k], why)
	case header:
		// The header names the columns: the file lacks the label when its
		// columns other than the ignored ones are exactly the model's
		// features (anything else is labelled, or wrong: checkHeader and
		// the loader name the problem).
		if label != "" && !isIndex(label) && findColumn(first, label) >= 0 {
			return ph, nil
		}
		if diffNames(fileColumns(m), dropColumns(first, opt.IgnoreColumns, -1)) != "" {
			return ph, nil
		}
		ph.what = "its header has the model's features and no label"
	case m.Features == nil && (label == "" || isIndex(label)):
		want := m.D + 1 + len(opt.IgnoreColumns)
		if len(first) != want-1 {
			return ph, nil
		}
		ph.what = fmt.Sprintf("%d columns where the training layout has %d", len(first), want)
	default:
		return ph, nil
	}
	if isIndex(label) && !replace {
		k, _ := strconv.Atoi(label)
		if k < 1 || k > len(first)+1 {
			return ph, nil
		}
		pos = k - 1
	}
	// An ID column given by index counts in the file as it is: shift it
	// past an inserted column (the model's own ignored columns count in
	// the training layout, which has the label).
	if isIndex(idColumn) && !replace && !ContainsFold(m.Preprocessing.Loader.IgnoreColumns, idColumn) {
		if k, _ := strconv.Atoi(idColumn); k-1 >= pos {
			ig := append([]string(nil), opt.IgnoreColumns...)
			for i, c := range ig {
				if c == idColumn {
					ig[i] = strconv.Itoa(k + 1)
				}
			}
			opt.IgnoreColumns = ig
		}
	}
	insert := func(rec []string, v string) []string {
		if replace {
			out := append([]string(nil), rec...)
			if pos < len(out) && v != name {
				out[pos] = v
			}
			return out
		}
		out := make([]string, 0, len(rec)+1)
		out = append(append(append(out, rec[:pos]...), v), rec[pos:]...)
		return out
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Comma = comma
	data0 := 0
	if header {
		w.Write(insert(first, name))
		ph.header = insert(first, name)
		data0 = 1
	}
	rows := recs[data0:]
	if len(rows) == 1 {
		rows, ph.extra = append(rows, rows[0]), true
	}
	for i, rec := range rows {
		w.Write(insert(rec, []string{"1", "0"}[i%2]))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return ph, err
	}
	opt.PositiveClasses, opt.Binarize, opt.Sep = "1", "", string(comma)
	if comma == '\t' {
		opt.Sep = "tab"
	}
	if header {
		opt.Header = "yes"
	} else {
		opt.Header = "no"
	}
	ph.text, ph.opt = buf.Bytes(), opt
	return ph, nil
}

// labelColumn is the 0-based index of the label column in a header row
// (first) of a file read with opt, or -1: the column the label names, the
// 1-based index it gives, or — no label column given — the last column
// when the others (without the ignored ones) are the model's features.
func labelColumn(m *model.Model, first []string, label string, opt data.Options) int {
	switch {
	case label != "" && !isIndex(label):
		return findColumn(first, label)
	case isIndex(label):
		if k, _ := strconv.Atoi(label); k >= 1 && k <= len(first) {
			return k - 1
		}
		return -1
	case len(first) > 1 && diffNames(fileColumns(m), dropColumns(first[:len(first)-1], opt.IgnoreColumns, -1)) == "":
		return len(first) - 1
	}
	return -1
}

// unusableLabels says why the column k of rows holds no labels a loader
// can read as two classes: every cell empty, or one label only ("" when
// it holds two labels or more, or a row is too short: the loader then
// names the problem).
func unusableLabels(rows [][]string, k int) string {
	vals := map[string]int{}
	empty := 0
	for _, r := range rows {
		if k >= len(r) {
			return ""
		}
		if v := strings.TrimSpace(r[k]); v == "" {
			empty++
		} else if vals[v]++; len(vals) > 1 {
			return ""
		}
	}
	switch {
	case len(rows) == 0:
		return ""
	case len(vals) == 0:
		return "no label (every cell is empty)"
	}
	for v, n := range vals {
		if empty > 0 {
			return fmt.Sprintf("one label only (%q, %d records; %d empty)", v, n, empty)
		}
		return fmt.Sprintf("one label only (%q, %d records)", v, n)
	}
	return ""
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// checkFeatures compares the loaded table's features with the model's.
func checkFeatures(m *model.Model, t *data.Table) error {
	if m.Features != nil && t.FeatureNames != nil {
		if d := diffNames(m.Features, t.FeatureNames); d != "" {
			return fmt.Errorf("%s does not have the model's features: %s", t.Source, d)
		}
	}
	if t.D != m.D {
		return fmt.Errorf("%s has %d features but the model has %d: score files must have the training file's columns (label and ignored columns included)", t.Source, t.D, m.D)
	}
	if s := m.Preprocessing.Schema; s != nil {
		if err := s.Check(t); err != nil {
			return err
		}
	}
	return nil
}

// diffNames describes how got differs from want ("" when equal, names
// compared case-insensitively as the loader does).
func diffNames(want, got []string) string {
	norm := func(v []string) []string {
		out := make([]string, len(v))
		for i, s := range v {
			out[i] = strings.ToLower(strings.TrimSpace(s))
		}
		return out
	}
	w, g := norm(want), norm(got)
	if strings.Join(w, "\x00") == strings.Join(g, "\x00") {
		return ""
	}
	in := func(v []string, s string) bool {
		for _, x := range v {
			if x == s {
				return true
			}
		}
		return false
	}
	var missing, unexpected []string
	for i, s := range w {
		if !in(g, s) {
			missing = append(missing, strconv.Quote(want[i]))
		}
	}
	for i, s := range g {
		if !in(w, s) {
			unexpected = append(unexpected, strconv.Quote(got[i]))
		}
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "missing "+someNames(missing))
	}
	if len(unexpected) > 0 {
		parts = append(parts, "unexpected "+someNames(unexpected))
	}
	if len(missing) == 1 && len(unexpected) == 1 {
		parts = append(parts, fmt.Sprintf("(renamed? %s is %s in the model)", unexpected[0], missing[0]))
	}
	if len(parts) == 0 {
		for i := range w {
			if w[i] != g[i] {
				parts = append(parts, fmt.Sprintf("reordered: column %q is feature %d in the file, but the model's feature %d is %q", got[i], i+1, i+1, want[i]))
				break
			}
		}
	}
	return strings.Join(parts, "; ") + fmt.Sprintf(" (the model's features, in order: %s)", strings.Join(want, ", "))
}

// someNames joins names for a message: all of up to 20, else the first
// 20 and how many more (probe 6: a header of a million columns made a
// message of 10 MB).
func someNames(v []string) string {
	if len(v) <= 20 {
		return strings.Join(v, ", ")
	}
	return strings.Join(v[:20], ", ") + fmt.Sprintf(", … (%d more)", len(v)-20)
}

// ContainsFold reports whether v holds s up to Unicode case folding.
func ContainsFold(v []string, s string) bool {
	for _, x := range v {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// checkHeader compares a CSV file's header with the model's features
// before loading, so that a missing, renamed or reordered column is named
// rather than reported as a count mismatch. A nil header (no header, a
// compressed file, another format) is left to checkFeatures.
func checkHeader(m *model.Model, path string, header []string, opt data.Options) error {
	if m.Features == nil || header == nil || !looksNamed(header, fileColumns(m)) {
		return nil
	}
	// Probe 5 (issue 28): a column named twice (an ID column exported
	// twice) was reported as `unexpected "patient_id"`.
	// One pass with the names folded as findColumn compares them (a
	// header of many columns must not cost their square).
	seen := make(map[string]int, len(header))
	for j, h := range header {
		h = strings.TrimSpace(h)
		if isIndex(h) {
			continue
		}
		key := strings.ToLower(h)
		if k, dup := seen[key]; dup {
			return fmt.Errorf("%s has two columns named %q (columns %d and %d): remove or rename one", path, h, k+1, j+1)
		}
		seen[key] = j
	}
	for _, ref := range opt.IgnoreColumns {
		if findColumn(header, ref) < 0 {
			return fmt.Errorf("%s has no column %q, which the model ignores (or --id-column names) (columns: %s)", path, ref, someNames(header))
		}
	}
	label := len(header) - 1
	if l := opt.LabelColumn; l != "" {
		if label = findColumn(header, l); label < 0 {
			if d := diffNames(fileColumns(m), dropColumns(header, opt.IgnoreColumns, -1)); d != "" {
				return fmt.Errorf("%s does not have the model's features: %s", path, d)
			}
			return fmt.Errorf("%s has no label column %q (columns: %s): evaluation needs labelled records in the training file's layout", path, l, someNames(header))
		}
	}
	got := dropColumns(header, opt.IgnoreColumns, label)
	if d := diffNames(fileColumns(m), got); d != "" {
		return fmt.Errorf("%s does not have the model's features: %s", path, d)
	}
	return nil
}

// findColumn returns the 0-based column of ref (a 1-based index or a
// name, case-insensitively) in header, or −1.
func findColumn(header []string, ref string) int {
	if k, err := strconv.Atoi(ref); err == nil && k >= 1 && k <= len(header) && isIndex(ref) {
		return k - 1
	}
	for j, h := range header {
		if strings.EqualFold(strings.TrimSpace(h), ref) {
			return j
		}
	}
	return -1
}

// dropColumns returns header without the columns refs and the column
// label (−1: none).
func dropColumns(header, refs []string, label int) []string {
	drop := make([]bool, len(header))
	if label >= 0 {
		drop[label] = true
	}
	for _, ref := range refs {
		if k := findColumn(header, ref); k >= 0 {
			drop[k] = true
		}
	}
	var out []string
	for j, h := range header {
		if !drop[j] {
			out = append(out, strings.TrimSpace(h))
		}
	}
	return out
}

// looksNamed reports whether header shares a name with the model's features.
func looksNamed(header, features []string) bool {
	for _, h := range header {
		if ContainsFold(features, strings.TrimSpace(h)) {
			return true
		}
	}
	return false
}

// csvReader opens path as CSV with the model's separator (or the one the
// loader would detect). Compressed files give nil.
func csvReader(path, sep string) (*csv.Reader, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(f, 1<<16)
	peek, _ := br.Peek(1 << 16)
	// A UTF-8 byte order mark (Excel's "CSV UTF-8") is no part of the
	// first column's name: the loader drops it, and so must the header
	// check (probe 6: "has no column "patient_id"" of a file whose
	// first column was "\ufeffpatient_id").
	if bytes.HasPrefix(peek, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
		peek = peek[3:]
	}
	if len(peek) >= 2 && (peek[0] == 0x1f && peek[1] == 0x8b || bytes.HasPrefix(peek, []byte("BZh")) || bytes.HasPrefix(peek, []byte{0xfd, '7', 'z', 'X', 'Z'})) {
		f.Close()
		return nil, nil, nil
	}
	comma := ','
	switch sep {
	case "":
		// The loader's rule (data's sniffSeparator): ';' when the first
		// non-blank line has one and no comma, a tab likewise, else ','.
		rest := peek
		for len(rest) > 0 {
			var line []byte
			line, rest, _ = bytes.Cut(rest, []byte{'\n'})
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			if !bytes.ContainsRune(line, ',') && bytes.ContainsRune(line, ';') {
				comma = ';'
			} else if !bytes.ContainsRune(line, ',') && bytes.ContainsRune(line, '\t') {
				comma = '\t'
			}
			break
		}
	case "tab", `\t`, "\t":
		comma = '\t'
	default:
		if len(sep) != 1 {
			f.Close()
			return nil, nil, nil // dense: no CSV reader
		}
		comma = rune(sep[0])
	}
	r := csv.NewReader(br)
	r.Comma, r.FieldsPerRecord, r.LazyQuotes, r.ReuseRecord = comma, -1, true, false
	return r, f, nil
}

// csvHead returns the first record of a CSV file (nil when the file is
// not plain CSV text or cannot be read).
func csvHead(path, sep string) []string {
	r, cl, err := csvReader(path, sep)
	if err != nil || r == nil {
		return nil
	}
	defer cl.Close()
	rec, err := r.Read()
	if err != nil {
		return nil
	}
	for i := range rec {
		rec[i] = strings.TrimSpace(rec[i])
	}
	return rec
}

// ReadIDs returns column col (a name, or a 1-based index) of every data
// record of a CSV file: the IDs that `pairfed score` passes through. The
// count must match the records the loader read (n).
func ReadIDs(path, sep, col string, header bool, n int) ([]string, error) {
	r, cl, err := csvReader(path, sep)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, fmt.Errorf("--id-column %s: %s is compressed or not a delimited file: IDs are read from plain CSV files only", col, path)
	}
	defer cl.Close()
	k := -1
	if v, err := strconv.Atoi(col); err == nil && v >= 1 {
		k = v - 1
	}
	var ids []string
	first := true
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("--id-column: %s: %w", path, err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if first {
			first = false
			if k < 0 {
				for j, h := range rec {
					if strings.EqualFold(strings.TrimSpace(h), col) {
						k = j
					}
				}
				if k < 0 || !header {
					return nil, fmt.Errorf("--id-column %q is not a column of %s (header: %s); give a column name of the header or a 1-based index", col, path, someNames(rec))
				}
			}
			if header {
				continue
			}
		}
		if k >= len(rec) {
			return nil, fmt.Errorf("--id-column %s: a record of %s has only %d fields", col, path, len(rec))
		}
		if len(ids) == n {
			return nil, fmt.Errorf("--id-column %s: %s has more records than the %d the loader read (records dropped for missing values?): IDs would not line up", col, path, n)
		}
		ids = append(ids, strings.TrimSpace(rec[k]))
	}
	if len(ids) != n {
		return nil, fmt.Errorf("--id-column %s: %d IDs but %d records read: IDs would not line up", col, len(ids), n)
	}
	return ids, nil
}

// fileColumns returns the names of the feature columns a file scored by
// m has, in order: the model's features, except that the indicator
// features of a categorical schema column (sex=F, sex=M) are one column
// of the file (sex), as in the training file.
func fileColumns(m *model.Model) []string {
	sch := m.Preprocessing.Schema
	if sch == nil || len(sch.Categoricals()) == 0 {
		return m.Features
	}
	first := map[int]data.Categorical{}
	for _, c := range sch.Categoricals() {
		first[c.First] = c
	}
	var out []string
	for i := 0; i < len(m.Features); i++ {
		if c, ok := first[i]; ok {
			out = append(out, c.Name)
			i += len(c.Indicators) - 1
			continue
		}
		out = append(out, m.Features[i])
	}
	return out
}

// modelLayout describes the file layout the model reads: its training
// file's format and its number of features.
func modelLayout(m *model.Model, opt data.Options) string {
	format := opt.Format
	if format == "" {
		format = "its training file's format"
	}
	switch {
	case format == data.FormatCSV && len(m.Features) > 0:
		names := m.Features
		if len(names) > 10 {
			names = append(names[:10:10], "…")
		}
		return fmt.Sprintf("%s records with the model's d = %d feature columns (%s) and its label column", format, m.D, strings.Join(names, ", "))
	case format == data.FormatCSV:
		return fmt.Sprintf("%s records with the model's d = %d feature columns and its label column", format, m.D)
	}
	return fmt.Sprintf("%s records of the model's d = %d features (feature indices 1 to %d)", format, m.D, m.D)
}

// LoaderOptions are the data.Options that read a file as the model's
// training file was read, with extra columns ignored (an ID column).
func LoaderOptions(l model.Loader, extraIgnore ...string) data.Options {
	opt := data.Options{Format: l.Format, Sep: l.Sep, Header: l.Header, LabelColumn: l.LabelColumn,
		IgnoreColumns:   append(append([]string(nil), l.IgnoreColumns...), extraIgnore...),
		PositiveClasses: l.PositiveClasses, Impute: l.Impute, Dim: l.Dim}
	if l.ImputeValues != nil {
		for _, v := range l.ImputeValues {
			if v == nil {
				opt.ImputeValues = append(opt.ImputeValues, math.NaN())
			} else {
				opt.ImputeValues = append(opt.ImputeValues, *v)
			}
		}
	}
	return opt
}
