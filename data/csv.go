package data

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// readCSV parses comma-separated records (semicolons when the first line
// has semicolons and no comma, tabs when it has tabs and neither; or
// Options.Sep) with an optional header line. Fields may be quoted with
// double quotes ("" inside stands for one quote; a quoted field may span
// lines). Blank lines are skipped. Error columns are field numbers.
func readCSV(lr *lineReader, b *builder) error {
	rr := &recordReader{lr: lr, sp: splitter{sep: ',', quotes: `"`, m: b.m}}
	sep, _, _ := parseSep(b.opt.Sep)
	if sep == 0 {
		sep = sniffSeparator(lr)
		if sep != ',' {
			b.note("separator %q", sep)
		}
	}
	rr.sp.sep = sep
	return readDelimited(lr, b, rr, -1)
}

// readDelimited reads the records of rr: an optional header line, then
// one record per line. The label is column defLabel (0-based; −1: the
// last column) unless Options.LabelColumn says otherwise.
func readDelimited(lr *lineReader, b *builder, rr *recordReader, defLabel int) error {
	first, line1, err := rr.next()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return err
	}
	b.firstLine = line1
	if first, err = copyFields(b.m, first); err != nil {
		return err
	}
	if len(first) == 1 && !rr.sp.blank && blankSeparated(first[0]) {
		return posErr(b.file, line1, 1, "no %q separator in the first record: its values are separated by blanks (a dense, whitespace-separated file); read it with --format dense (or --format auto), or name the separator with --sep", rr.sp.sep)
	}

	var second [][]byte
	line2 := 0
	header := false
	switch b.opt.Header {
	case "yes":
		header = true
	case "no":
	default:
		header = isName(b.opt.LabelColumn)
		for _, c := range b.opt.IgnoreColumns {
			header = header || isName(c)
		}
		if !header {
			second, line2, err = rr.next()
			if err != nil && err != io.EOF {
				return err
			}
			header = looksLikeHeader(first, second)
			if header {
				b.note("first line taken as a header")
			}
		}
	}
	var names []string
	if header {
		// The names, and b.names (a subset) sharing their strings.
		n := 2 * int64(len(first)) * stringHeader
		for _, f := range first {
			n += int64(len(f))
		}
		if err := b.m.charge(n, "the column names"); err != nil {
			return err
		}
		names = make([]string, len(first))
		for j, f := range first {
			names[j] = string(f)
		}
	}
	if defLabel < 0 {
		defLabel = len(first) - 1
	}
	lay, err := b.layout(names, len(first), defLabel, line1)
	if err != nil {
		return err
	}
	if !header {
		if err := b.row(lay, first, line1); err != nil {
			return err
		}
	}
	if second != nil {
		if err := b.row(lay, second, line2); err != nil {
			return err
		}
	}
	for {
		rec, ln, err := rr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := b.row(lay, rec, ln); err != nil {
			return err
		}
	}
}

// sniffSeparator returns ';' when the first non-blank line has a
// semicolon and no comma, a tab when it has a tab and neither, else ','.
func sniffSeparator(lr *lineReader) byte {
	buf, _ := lr.r.Peek(sniffSize)
	for len(buf) > 0 {
		line := buf
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			line, buf = buf[:i], buf[i+1:]
		} else {
			buf = nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if bytes.IndexByte(line, ',') < 0 && bytes.IndexByte(line, ';') >= 0 {
			return ';'
		}
		if bytes.IndexByte(line, ',') < 0 && bytes.IndexByte(line, '\t') >= 0 {
			return '\t'
		}
		return ','
	}
	return ','
}

// isName reports whether a column reference is a name (not an index).
func isName(ref string) bool { return ref != "" && !isDigits(ref) }

// looksLikeHeader guesses whether first is a header line: some field is
// text where the next record has a number, or (without a next record)
// no field is a number. NaN and Inf literals count as numbers here, so
// that they are reported rather than taken for column names.
func looksLikeHeader(first, second [][]byte) bool {
	if second == nil {
		for _, f := range first {
			if _, ok := parseNumber(f); ok != numBad || isMissing(f) {
				return false
			}
		}
		return true
	}
	for j := 0; j < len(first) && j < len(second); j++ {
		_, a := parseNumber(first[j])
		_, c := parseNumber(second[j])
		if a == numBad && !isMissing(first[j]) && c == numOK {
			return true
		}
	}
	return false
}

// copyFields copies fs into one buffer, charging m for it.
func copyFields(m *budget, fs [][]byte) ([][]byte, error) {
	total := 0
	for _, f := range fs {
		total += len(f)
	}
	if err := m.charge(int64(total)+int64(len(fs))*sliceHeader, "the first record's fields"); err != nil {
		return nil, err
	}
	buf := make([]byte, 0, total)
	out := make([][]byte, len(fs))
	for j, f := range fs {
		k := len(buf)
		buf = append(buf, f...)
		out[j] = buf[k:len(buf):len(buf)]
	}
	return out, nil
}

// isMissing reports whether a field holds a missing value: "?" or empty.
func isMissing(f []byte) bool { return len(f) == 0 || len(f) == 1 && f[0] == '?' }

// layout says what each column of a delimited file is.
type layout struct {
	ncols int
	label int
	feat  []int // feature index of each column; −1 for the label and ignored columns
	names []string
	// cat is, per column, its categorical encoding (nil: numeric); nil
	// when the file has no categorical column.
	cat []*catColumn
}

// catColumn is a categorical column as the loader encodes it: the value
// v sets indicator index[v] (or other, when ≥ 0, for a value outside the
// list) of the column's width indicators.
type catColumn struct {
	*Categorical
	index map[string]int
	width int
}

// featName is column j's name, or "column<j+1>" without a header.
func (l *layout) featName(j int) string {
	if l.names != nil {
		return l.names[j]
	}
	return fmt.Sprintf("column%d", j+1)
}

func (l *layout) colName(j int) string {
	if l.names != nil {
		return fmt.Sprintf("%d %q", j+1, l.names[j])
	}
	return strconv.Itoa(j + 1)
}

// resolveColumn finds ref (a name in names, or a 1-based index).
func resolveColumn(what, ref string, names []string, ncols int) (int, error) {
	if isDigits(ref) {
		k, err := strconv.Atoi(ref)
		if err != nil || k < 1 || k > ncols {
			return 0, fmt.Errorf("%s %s out of range (the file has %d columns)", what, ref, ncols)
		}
		return k - 1, nil
	}
	if names == nil {
		return 0, fmt.Errorf("%s %q is a name but the file has no header (give a 1-based index, or --header yes)", what, ref)
	}
	for j, n := range names {
		if n == ref {
			return j, nil
		}
	}
	for j, n := range names {
		if strings.EqualFold(n, ref) {
			return j, nil
		}
	}
	list := strings.Join(names, ", ")
	if len(list) > 200 {
		list = list[:200] + "…"
	}
	return 0, fmt.Errorf("%s %q not found (columns: %s)", what, ref, list)
}

// layout resolves the label and ignored columns of a file with ncols
// columns (names nil without a header); defLabel is the default label
// column. Errors are reported at line:1.
func (b *builder) layout(names []string, ncols, defLabel, line int) (*layout, error) {
	if err := b.m.checkDim(ncols-1, fmt.Sprintf("%d columns", ncols)); err != nil {
		return nil, err
	}
	if err := b.m.charge(int64(ncols)*8, "the column layout"); err != nil {
		return nil, err
	}
	l := &layout{ncols: ncols, label: defLabel, names: names, feat: make([]int, ncols)}
	if b.opt.LabelColumn != "" {
		k, err := resolveColumn("label column", b.opt.LabelColumn, names, ncols)
		if err != nil {
			return nil, &ParseError{File: b.file, Line: line, Col: 1, Err: err}
		}
		l.label = k
	}
	for j := range l.feat {
		l.feat[j] = 0
	}
	l.feat[l.label] = -1
	for _, ref := range b.opt.IgnoreColumns {
		k, err := resolveColumn("ignored column", ref, names, ncols)
		if err != nil {
			return nil, &ParseError{File: b.file, Line: line, Col: 1, Err: err}
		}
		if k == l.label {
			return nil, posErr(b.file, line, 1, "column %s is both the label and ignored", l.colName(k))
		}
		l.feat[k] = -1
	}
	d, fc := 0, 0 // features, feature columns
	cats := b.opt.Categorical
	for j := range l.feat {
		if l.feat[j] < 0 {
			continue
		}
		l.feat[j] = d
		var c *Categorical
		if fc < len(cats) {
			c = cats[fc]
		}
		fc++
		if c == nil {
			d++
			if names != nil {
				b.names = append(b.names, names[j])
			}
			continue
		}
		cc, err := b.catColumn(c)
		if err != nil {
			return nil, err
		}
		if l.cat == nil {
			if err := b.m.charge(int64(ncols)*8, "the column layout"); err != nil {
				return nil, err
			}
			l.cat = make([]*catColumn, ncols)
		}
		l.cat[j] = cc
		d += cc.width
		if names != nil {
			// Named as the file names the column, so that Schema.Check
			// reports a schema applied to the wrong file.
			for _, v := range c.Indicators {
				n := names[j] + "=" + v
				if err := b.m.charge(int64(len(n))+stringHeader, "the feature names"); err != nil {
					return nil, err
				}
				b.names = append(b.names, n)
			}
		}
	}
	if cats != nil && fc != len(cats) {
		who := b.opt.DimSource
		if who == "" {
			who = "Options.Categorical"
		}
		return nil, posErr(b.file, line, 1, "the file has %d feature columns (besides the label and ignored columns) but %s describes %d (its categorical columns count once each): the schema must list every feature column of the file, in order", fc, who, len(cats))
	}
	if l.cat != nil {
		if err := b.m.checkDim(d, fmt.Sprintf("%d columns one-hot encoded into %d features", ncols, d)); err != nil {
			return nil, err
		}
	}
	b.d = d
	if b.imputeMode == "constant" && b.opt.ImputeValues != nil && len(b.opt.ImputeValues) != d {
		return nil, posErr(b.file, line, 1, "%d per-feature impute values given (from the schema) but the file has %d features", len(b.opt.ImputeValues), d)
	}
	if b.imputeMode == "mean" {
		if err := b.m.charge(int64(d)*(8+16), "the per-column counts of missing values"); err != nil {
			return nil, err
		}
		b.colMissing = make([]int, d)
		b.firstMissing = make([][2]int, d)
	}
	return l, nil
}

// catColumn prepares the encoding of the categorical column c, charging
// its lookup table.
func (b *builder) catColumn(c *Categorical) (*catColumn, error) {
	n := int64(len(c.Indicators)) * (classOverhead / 2)
	for _, v := range c.Categories {
		n += int64(len(v))
	}
	if err := b.m.charge(n, "the categories of column "+strconv.Quote(c.Name)); err != nil {
		return nil, err
	}
	cc := &catColumn{Categorical: c, index: make(map[string]int, len(c.Categories)), width: len(c.Indicators)}
	for k, v := range c.Categories {
		cc.index[v] = k
	}
	if cc.width == 0 || c.Other >= cc.width {
		return nil, fmt.Errorf("data: categorical column %q: %d indicators, other %d: build it with a schema (Schema.Apply)", c.Name, cc.width, c.Other)
	}
	return cc, nil
}

// categorical encodes the value f of the categorical column j (feature
// indices k…) into x[k:k+width]; missing values follow the impute mode
// (constant: all indicators 0). It reports whether the record is to be
// dropped.
func (b *builder) categorical(l *layout, cc *catColumn, x []float64, f []byte, line, j int) (drop bool, err error) {
	k := l.feat[j]
	xs := x[k : k+cc.width]
	if isMissing(f) {
		switch b.imputeMode {
		case "constant":
			clear(xs) // no category: every indicator 0
			b.imputed++
		case "mean":
			for i := range xs {
				if b.colMissing[k+i] == 0 {
					b.firstMissing[k+i] = [2]int{line, j + 1}
				}
				b.colMissing[k+i]++
				xs[i] = math.NaN()
			}
			// impute counts each of the width indicators: one value.
			b.imputed -= cc.width - 1
		case "drop":
			return true, nil
		default:
			return false, posErr(b.file, line, j+1, "missing value in categorical column %s (use --impute schema or constant:V, which set all its indicators to 0 and keep a run private, or mean|drop, which do not)", l.colName(j))
		}
		return false, nil
	}
	i, ok := cc.index[string(f)]
	if !ok {
		if cc.Other < 0 {
			return false, posErr(b.file, line, j+1, "value %s in categorical column %s is not one of its categories (%s) in %s: add it to the column's \"categories\" if it is a genuine category (the list is public: the same for every file read with this schema), or set \"other\": true to map values outside the list to a catch-all category", quoteShort(f), l.colName(j), catList(cc.Categories), b.schemaName())
		}
		i = cc.Other
	}
	clear(xs)
	xs[i] = 1
	return false, nil
}

// catList formats categories for messages, at most 20.
func catList(cats []string) string {
	q := make([]string, 0, min(len(cats), 21))
	for i, v := range cats {
		if i == 20 {
			q = append(q, fmt.Sprintf("… %d more", len(cats)-20))
			break
		}
		q = append(q, strconv.Quote(v))
	}
	return strings.Join(q, ", ")
}

// schemaName names the schema of the options in messages.
func (b *builder) schemaName() string {
	if b.opt.DimSource != "" {
		return b.opt.DimSource
	}
	return "the schema"
}

// row parses one record of a delimited file seen at line.
func (b *builder) row(l *layout, fields [][]byte, line int) error {
	if len(fields) != l.ncols {
		return posErr(b.file, line, min(len(fields), l.ncols)+1, "record has %d fields, want %d", len(fields), l.ncols)
	}
	if b.firstLine == 0 {
		b.firstLine = line
	}
	start := len(b.x)
	if cap(b.x)-start < b.d {
		var err error
		if err = growSlice(b.m, &b.x, b.d, fmt.Sprintf("the records (%d so far, of %d features)", len(b.y)+1, b.d)); err != nil {
			return err
		}
	}
	b.x = b.x[:start+b.d]
	x := b.x[start:]
	drop := false
	for j, f := range fields {
		k := l.feat[j]
		if k < 0 {
			continue
		}
		f = bytes.TrimSpace(f)
		if l.cat != nil && l.cat[j] != nil {
			d, err := b.categorical(l, l.cat[j], x, f, line, j)
			if err != nil {
				return err
			}
			drop = drop || d
			continue
		}
		if isMissing(f) {
			switch b.imputeMode {
			case "constant":
				x[k] = b.imputeConstant(k)
				if math.IsNaN(x[k]) {
					return posErr(b.file, line, j+1, "missing value of feature %d, which the schema marks unknown without an \"impute\" constant: add one to the schema, or use --impute constant:V", k+1)
				}
				b.imputed++
			case "mean":
				if b.colMissing[k] == 0 {
					b.firstMissing[k] = [2]int{line, j + 1}
				}
				b.colMissing[k]++
				x[k] = math.NaN()
			case "drop":
				drop = true
			default:
				return posErr(b.file, line, j+1, "missing value in column %s (use --impute constant:V or schema, which keep a run private, or mean|drop, which do not)", l.colName(j))
			}
			continue
		}
		v, outcome := parseNumber(f)
		if outcome != numOK {
			hint := ""
			if blankSeparated(f) {
				hint = " (blank-separated numbers in one field: a dense, whitespace-separated file? read it with --format dense or --format auto)"
			} else if outcome == numBad {
				hint = fmt.Sprintf(" (a text category? declare the column categorical in a --feature-bounds schema, e.g. {\"name\": %q, \"categories\": [%q, …]} (see schemas/README.md), or skip it with --ignore-columns %d)", l.featName(j), f, j+1)
			}
			return posErr(b.file, line, j+1, "%s in column %s%s", numProblem("feature value", f, outcome), l.colName(j), hint)
		}
		x[k] = v
	}
	lab := bytes.TrimSpace(fields[l.label])
	if isMissing(lab) {
		if b.imputeMode != "drop" {
			return posErr(b.file, line, l.label+1, "missing label in column %s (records without a label can only be dropped: --impute drop)", l.colName(l.label))
		}
		drop = true
	}
	if drop {
		b.x = b.x[:start]
		b.dropped++
		return nil
	}
	return b.label(lab, line, l.label+1, false)
}

// errOpenQuote reports a line that ends inside a quoted field.
var errOpenQuote = errors.New("unterminated quoted field")

// splitter splits a line into fields at sep, honouring quotes.
type splitter struct {
	sep     byte
	blank   bool // fields are separated by runs of blanks (sep and quotes unused)
	quotes  string
	fields  [][]byte
	scratch []byte
	m       *budget
}

// add appends a field, charging the budget when the field list grows.
func (s *splitter) add(f []byte) error {
	return push(s.m, &s.fields, f, "the fields of one line")
}

// split returns the fields of line, valid until the next call. Unquoted
// fields are trimmed of spaces and tabs; quoted ones are unquoted. On an
// error it also returns the 1-based number of the offending field.
func (s *splitter) split(line []byte) ([][]byte, int, error) {
	s.fields = s.fields[:0]
	if s.blank {
		for i := skipSpace(line, 0); i < len(line); i = skipSpace(line, i) {
			j := skipToken(line, i)
			if err := s.add(line[i:j]); err != nil {
				return nil, 0, err
			}
			i = j
		}
		return s.fields, 0, nil
	}
	if cap(s.scratch) < len(line) {
		var err error
		s.scratch = s.scratch[:0]
		if err = growSlice(s.m, &s.scratch, len(line), "a line's unquoted text"); err != nil {
			return nil, 0, err
		}
	}
	// Unquoted text is never longer than the line, so appending to
	// scratch never reallocates and earlier fields stay valid.
	s.scratch = s.scratch[:0]
	i := 0
	for {
		j := i
		for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
			j++
		}
		if j < len(line) && strings.IndexByte(s.quotes, line[j]) >= 0 {
			q := line[j]
			start := len(s.scratch)
			k := j + 1
			for {
				if k >= len(line) {
					return nil, len(s.fields) + 1, errOpenQuote
				}
				c := line[k]
				k++
				if c == q {
					if k < len(line) && line[k] == q {
						s.scratch = append(s.scratch, q)
						k++
						continue
					}
					break
				}
				s.scratch = append(s.scratch, c)
			}
			if err := s.add(s.scratch[start:len(s.scratch):len(s.scratch)]); err != nil {
				return nil, 0, err
			}
			for k < len(line) && (line[k] == ' ' || line[k] == '\t') {
				k++
			}
			if k == len(line) {
				return s.fields, 0, nil
			}
			if line[k] != s.sep {
				return nil, len(s.fields), fmt.Errorf("text after the closing quote")
			}
			i = k + 1
			continue
		}
		k := bytes.IndexByte(line[i:], s.sep)
		if k < 0 {
			if err := s.add(trimBlank(line[i:])); err != nil {
				return nil, 0, err
			}
			return s.fields, 0, nil
		}
		if err := s.add(trimBlank(line[i : i+k])); err != nil {
			return nil, 0, err
		}
		i += k + 1
	}
}

// quoteState is the state of a quote scan at the end of a line.
type quoteState struct {
	q          byte // the open quote, 0 outside quotes
	fieldStart bool // only blanks since the last separator
}

// scan advances st over chunk, with the quoting rules of split.
func (s *splitter) scan(chunk []byte, st quoteState) quoteState {
	for k := 0; k < len(chunk); k++ {
		c := chunk[k]
		switch {
		case st.q != 0:
			if c == st.q {
				if k+1 < len(chunk) && chunk[k+1] == st.q {
					k++
					continue
				}
				st.q = 0
			}
		case c == s.sep:
			st.fieldStart = true
		case st.fieldStart && (c == ' ' || c == '\t'):
		case st.fieldStart && strings.IndexByte(s.quotes, c) >= 0:
			st.q, st.fieldStart = c, false
		default:
			st.fieldStart = false
		}
	}
	return st
}

func trimBlank(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// recordReader yields the records of a delimited file, skipping blank
// lines and lines for which skip returns true.
type recordReader struct {
	lr   *lineReader
	sp   splitter
	acc  []byte
	skip func(line []byte) bool
}

// next returns the fields of the next record and the line it starts on,
// or io.EOF.
func (rr *recordReader) next() ([][]byte, int, error) {
	for {
		line, err := rr.lr.next()
		if err != nil {
			return nil, 0, err
		}
		t := bytes.TrimSpace(line)
		if len(t) == 0 || rr.skip != nil && rr.skip(t) {
			continue
		}
		start := rr.lr.line
		fields, fieldNo, err := rr.sp.split(line)
		if err == errOpenQuote {
			// A quoted field spans lines: gather lines until the quote
			// state says it closed, then split once.
			rr.acc = rr.acc[:0]
			if err = growSlice(rr.sp.m, &rr.acc, len(line), "a quoted field spanning lines"); err != nil {
				return nil, 0, err
			}
			rr.acc = append(rr.acc, line...)
			st := rr.sp.scan(line, quoteState{fieldStart: true})
			for st.q != 0 {
				more, e := rr.lr.next()
				if e == io.EOF {
					return nil, 0, posErr(rr.lr.name, start, fieldNo, "unterminated quoted field")
				}
				if e != nil {
					return nil, 0, e
				}
				if len(rr.acc) > maxLine {
					return nil, 0, posErr(rr.lr.name, start, fieldNo, "quoted field longer than %d bytes", maxLine)
				}
				if e = growSlice(rr.sp.m, &rr.acc, 1+len(more), "a quoted field spanning lines"); e != nil {
					return nil, 0, e
				}
				rr.acc = append(rr.acc, '\n')
				rr.acc = append(rr.acc, more...)
				st = rr.sp.scan(more, st)
			}
			fields, fieldNo, err = rr.sp.split(rr.acc)
		}
		var pe *ParseError
		if errors.As(err, &pe) {
			return nil, 0, err
		}
		if err != nil {
			return nil, 0, posErr(rr.lr.name, start, fieldNo, "%v", err)
		}
		return fields, start, nil
	}
}
