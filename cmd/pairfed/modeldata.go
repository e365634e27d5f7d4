package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/experiment"
	"github.com/pairfed/pairfed/model"
	"github.com/pairfed/pairfed/pairwise"
)

// loadForModel reads path as the model's training file was read (its
// loader options, with idColumn ignored as a feature), refuses a file whose
// features differ from the model's, naming the difference, and returns the
// table and its records prepared by the model's map
// (experiment.PrepareModelRecords, the code training used).
func loadForModel(m *model.Model, path, idColumn string, maxMemory int64) (*data.Table, *pairwise.Dataset, error) {
	if err := m.Scorable(); err != nil {
		return nil, nil, err
	}
	var extra []string
	if idColumn != "" && !containsFold(m.Preprocessing.Loader.IgnoreColumns, idColumn) {
		extra = append(extra, idColumn)
	}
	opt := loaderOptions(m.Preprocessing.Loader, extra...)
	opt.MaxMemory = maxMemory
	if err := checkHeader(m, path, opt); err != nil {
		return nil, nil, err
	}
	t, err := data.Load(path, opt)
	if err != nil {
		return nil, nil, err
	}
	if err := checkFeatures(m, t); err != nil {
		return nil, nil, err
	}
	ds, err := experiment.PrepareModelRecords(&m.Preprocessing, t.Dataset)
	if err != nil {
		return nil, nil, err
	}
	return t, ds, nil
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
		parts = append(parts, "missing "+strings.Join(missing, ", "))
	}
	if len(unexpected) > 0 {
		parts = append(parts, "unexpected "+strings.Join(unexpected, ", "))
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

func containsFold(v []string, s string) bool {
	for _, x := range v {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// checkHeader compares the header of a CSV file with the model's features
// before loading, so that a missing, renamed or reordered column is named
// rather than reported as a count mismatch. Files it cannot read this way
// (compressed, other formats, no header) are left to checkFeatures.
func checkHeader(m *model.Model, path string, opt data.Options) error {
	if m.Features == nil || opt.Format != data.FormatCSV || opt.Header == "no" {
		return nil
	}
	header, _, err := csvHead(path, opt.Sep, 1)
	if err != nil || header == nil {
		return nil
	}
	if !looksNamed(header, m.Features) {
		return nil // no header: the loader decides
	}
	drop := make([]bool, len(header))
	find := func(ref string) int {
		if k, err := strconv.Atoi(ref); err == nil && k >= 1 && k <= len(header) {
			return k - 1
		}
		for j, h := range header {
			if strings.EqualFold(strings.TrimSpace(h), ref) {
				return j
			}
		}
		return -1
	}
	label := len(header) - 1
	if l := opt.LabelColumn; l != "" {
		if label = find(l); label < 0 {
			return fmt.Errorf("%s has no label column %q (columns: %s): score and evaluate read files in the training file's layout, label column included (score does not use its values)", path, l, strings.Join(header, ", "))
		}
	}
	drop[label] = true
	for _, ref := range opt.IgnoreColumns {
		k := find(ref)
		if k < 0 {
			return fmt.Errorf("%s has no column %q, which the model ignores (or --id-column names) (columns: %s)", path, ref, strings.Join(header, ", "))
		}
		drop[k] = true
	}
	var got []string
	for j, h := range header {
		if !drop[j] {
			got = append(got, h)
		}
	}
	if d := diffNames(m.Features, got); d != "" {
		return fmt.Errorf("%s does not have the model's features: %s", path, d)
	}
	return nil
}

// looksNamed reports whether header shares a name with the model's features.
func looksNamed(header, features []string) bool {
	for _, h := range header {
		if containsFold(features, strings.TrimSpace(h)) {
			return true
		}
	}
	return false
}

// csvReader opens path as CSV with the model's separator (or the most
// frequent of , ; tab | in the first line). Compressed files give nil.
func csvReader(path, sep string) (*csv.Reader, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(f, 1<<16)
	peek, _ := br.Peek(1 << 16)
	if len(peek) >= 2 && (peek[0] == 0x1f && peek[1] == 0x8b || bytes.HasPrefix(peek, []byte("BZh")) || bytes.HasPrefix(peek, []byte{0xfd, '7', 'z', 'X', 'Z'})) {
		f.Close()
		return nil, nil, nil
	}
	comma := ','
	switch sep {
	case "":
		first, _, _ := bytes.Cut(peek, []byte{'\n'})
		best := 0
		for _, c := range []rune{',', ';', '\t', '|'} {
			if n := bytes.Count(first, []byte(string(c))); n > best {
				best, comma = n, c
			}
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
// not plain CSV text).
func csvHead(path, sep string, _ int) ([]string, int, error) {
	r, cl, err := csvReader(path, sep)
	if err != nil || r == nil {
		return nil, 0, err
	}
	defer cl.Close()
	rec, err := r.Read()
	if err != nil {
		return nil, 0, err
	}
	for i := range rec {
		rec[i] = strings.TrimSpace(rec[i])
	}
	return rec, len(rec), nil
}

// readIDs returns column col (a name, or a 1-based index) of every data
// record of a CSV file: the IDs that `pairfed score` passes through. The
// count must match the records the loader read (n).
func readIDs(path, sep, col string, header bool, n int) ([]string, error) {
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
					return nil, fmt.Errorf("--id-column %q is not a column of %s (header: %s); give a column name of the header or a 1-based index", col, path, strings.Join(rec, ", "))
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
