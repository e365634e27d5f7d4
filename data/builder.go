package data

import (
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pairfed/pairfed/pairwise"
)

// maxDenseCells bounds N·D for dense storage (8 GiB of float64).
const maxDenseCells = 1 << 30

// classOverhead estimates the bookkeeping of one distinct label spelling
// besides its text: a class struct and an entry in each of two maps.
const classOverhead = 256

// class is one distinct original label.
type class struct {
	name      string // first spelling seen
	isNum     bool
	value     float64
	count     int
	line, col int // where it was first seen
}

// builder collects the records of one file and turns them into a Table.
// Parsers feed it either dense rows (CSV, ARFF: NaN marks a missing value
// to impute) or sparse rows (LIBSVM).
type builder struct {
	file   string
	format string
	opt    Options
	notes  []string
	m      *budget // every allocation that grows with the input is charged here

	classes    []*class
	bySpelling map[string]int32
	byKey      map[string]int32
	y          []int32 // class of each record

	d     int
	names []string // feature names, nil when unknown

	// dense rows
	x            []float64
	colMissing   []int    // missing values per feature (Impute "mean")
	firstMissing [][2]int // line, col of the first missing value per feature

	// sparse rows: ptr holds absolute offsets; idx and val the nonzeros
	// after those of blocks (see csrBlock)
	sparse bool
	ptr    []int
	idx    []int32
	val    []float64
	blocks []csrBlock
	base   int // nonzeros in blocks

	imputed, dropped int
	firstLine        int // line of the first record

	// sizeHint is the size in bytes of the (uncompressed) input when it
	// is known, 0 otherwise: the parsers reserve their arrays from it
	// (see reserve).
	sizeHint int64

	imputeMode  string  // "error", "mean", "drop" or "constant" (parseImpute)
	imputeValue float64 // the V of "constant:V"
	// dataDependent lists the decisions that depend on the records
	// (Table.DataDependent).
	dataDependent []string
}

func newBuilder(file, format string, opt Options, m *budget) *builder {
	mode, v, _ := parseImpute(opt.Impute, opt.ImputeValues) // validated by Read
	return &builder{
		file: file, format: format, opt: opt, m: m,
		bySpelling: make(map[string]int32),
		byKey:      make(map[string]int32),
		imputeMode: mode, imputeValue: v,
	}
}

// imputeConstant returns the constant that replaces a missing value of
// feature k in Impute mode "constant".
func (b *builder) imputeConstant(k int) float64 {
	if b.opt.ImputeValues != nil {
		return b.opt.ImputeValues[k]
	}
	return b.imputeValue
}

func (b *builder) note(format string, args ...any) {
	b.notes = append(b.notes, fmt.Sprintf(format, args...))
}

// label records the label s of a new record seen at line:col. With
// numeric set, s must be a number (LIBSVM).
func (b *builder) label(s []byte, line, col int, numeric bool) error {
	if err := push(b.m, &b.y, 0, "the labels"); err != nil {
		return err
	}
	b.y = b.y[:len(b.y)-1]
	if k, ok := b.bySpelling[string(s)]; ok {
		b.classes[k].count++
		b.y = append(b.y, k)
		return nil
	}
	// A new spelling: its class, two map entries and the strings
	// (classOverhead is an estimate of the struct and map entries).
	if err := b.m.charge(classOverhead+3*int64(len(s)), fmt.Sprintf("label %d (%d distinct so far)", len(b.bySpelling)+1, len(b.bySpelling))); err != nil {
		return err
	}
	if !utf8.Valid(s) {
		return b.notUTF8(s, line, col)
	}
	c := &class{name: string(s), line: line, col: col, count: 1}
	v, outcome := parseNumber(s)
	switch {
	case outcome == numOK:
		if v == 0 {
			v = 0 // −0 and 0 are one label
		}
		c.isNum, c.value = true, v
	case outcome != numBad:
		return posErr(b.file, line, col, "%s", numProblem("label", s, outcome))
	case numeric:
		return posErr(b.file, line, col, "%s (LIBSVM labels are numbers)", numProblem("label", s, outcome))
	}
	key := "s:" + c.name
	if c.isNum {
		key = "n:" + strconv.FormatFloat(v, 'g', -1, 64)
	}
	k, ok := b.byKey[key]
	if ok {
		b.classes[k].count++
	} else {
		k = int32(len(b.classes))
		b.classes = append(b.classes, c)
		b.byKey[key] = k
	}
	b.bySpelling[c.name] = k
	b.y = append(b.y, k)
	return nil
}

// label is how notes print the class: a numeric label in its shortest
// exact form (4.0000 prints as 4, 1e3 as 1000), any other label as spelled.
func (c class) label() string {
	if c.isNum {
		return strconv.FormatFloat(c.value, 'g', -1, 64)
	}
	return c.name
}

// classList formats the classes and their counts in sorted order (see
// sortedClasses), at most ten of them.
func (b *builder) classList() string {
	var parts []string
	for i, k := range b.sortedClasses() {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("… %d more", len(b.classes)-10))
			break
		}
		parts = append(parts, fmt.Sprintf("%s: %d", b.classes[k].label(), b.classes[k].count))
	}
	return strings.Join(parts, ", ")
}

// sortedClasses returns the class indices sorted numerically when all
// labels are numbers, lexicographically otherwise.
func (b *builder) sortedClasses() []int {
	order := make([]int, len(b.classes))
	allNum := true
	for i, c := range b.classes {
		order[i] = i
		allNum = allNum && c.isNum
	}
	slices.SortFunc(order, func(i, j int) int {
		ci, cj := b.classes[i], b.classes[j]
		if allNum {
			switch {
			case ci.value < cj.value:
				return -1
			case ci.value > cj.value:
				return 1
			}
			return 0
		}
		return strings.Compare(ci.name, cj.name)
	})
	return order
}

// mapLabels decides the sign of every class.
func (b *builder) mapLabels() ([]float64, error) {
	sign := make([]float64, len(b.classes))
	for i := range sign {
		sign[i] = -1
	}
	order := b.sortedClasses()
	switch {
	case b.opt.PositiveClasses != "":
		items, err := parseClassSpec(b.opt.PositiveClasses)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			hit := false
			for i, c := range b.classes {
				if it.matches(c) {
					sign[i], hit = 1, true
				}
			}
			if !hit {
				b.note("positive class %q matches no label in this file (labels: %s)", it.text, b.classList())
			}
		}
	case b.opt.Binarize == "halves":
		b.dataDependent = append(b.dataDependent, "--binarize halves splits the distinct labels found in the records, so which labels are positive depends on the data; give the positive classes instead (--positive-classes or the schema's positive_class)")
		u := len(order)
		if u == 2 {
			for i, c := range b.classes {
				if c.isNum && c.value == 1 {
					sign[i] = 1
				}
			}
		} else {
			for rank, i := range order {
				if rank < u/2 {
					sign[i] = 1
				}
			}
		}
	default:
		switch len(b.classes) {
		case 1:
			// Reported below as a single class.
		case 2:
			c0, c1 := b.classes[0], b.classes[1]
			lo, hi := min(c0.value, c1.value), max(c0.value, c1.value)
			if c0.isNum && c1.isNum && hi == 1 && (lo == -1 || lo == 0) {
				for i, c := range b.classes {
					if c.value == 1 {
						sign[i] = 1
						b.note("positive class = %s (labels %s)", c.label(), b.classList())
					}
				}
				break
			}
			// Minority class; on a tie, the label sorting last.
			pos := order[1]
			if b.classes[order[0]].count < b.classes[order[1]].count {
				pos = order[0]
			}
			sign[pos] = 1
			b.note("positive class = minority class %s (%d of %d)", b.classes[pos].label(), b.classes[pos].count, len(b.y))
			b.dataDependent = append(b.dataDependent, fmt.Sprintf("the positive class %s was chosen as the minority class, i.e. from the label counts of the records; give it instead (--positive-classes %s or the schema's positive_class)", b.classes[pos].label(), b.classes[pos].label()))
		default:
			c := b.classes[2]
			return nil, posErr(b.file, c.line, c.col,
				"%d classes found (%s); choose the positive ones with --positive-classes (e.g. --positive-classes %s) or use --binarize halves",
				len(b.classes), b.classList(), b.classes[order[len(order)-1]].name)
		}
	}
	return sign, nil
}

// finish maps labels, imputes and assembles the Table. lastLine is the
// number of lines read.
func (b *builder) finish(lastLine int) (*Table, error) {
	n := len(b.y)
	if n == 0 {
		msg := "no records"
		if b.dropped > 0 {
			msg = fmt.Sprintf("no records left after dropping %d with missing values", b.dropped)
		}
		return nil, posErr(b.file, max(lastLine, 1), 1, "%s", msg)
	}
	if b.opt.Dim > 0 {
		if !b.sparse && b.d != b.opt.Dim {
			if b.opt.DimSource != "" {
				return nil, posErr(b.file, b.firstLine, 1, "file has %d feature columns, but %s declares %d", b.d, b.opt.DimSource, b.opt.Dim)
			}
			return nil, posErr(b.file, b.firstLine, 1, "file has %d feature columns, but Dim is %d", b.d, b.opt.Dim)
		}
		b.d = b.opt.Dim
	}
	if b.d == 0 {
		hint := ""
		if b.sparse {
			hint = " (no feature index occurs; declare Dim)"
		}
		return nil, posErr(b.file, b.firstLine, 1, "no feature columns%s", hint)
	}
	if b.sparse && b.opt.Dim == 0 {
		// LIBSVM files imply D by their largest feature index: replacing
		// the one record that uses it changes D, and with it the shape of
		// every release.
		b.dataDependent = append(b.dataDependent, fmt.Sprintf("the number of features (%d) was read off the largest feature index in the records; declare it (--dim %d or a --feature-bounds schema)", b.d, b.d))
	}
	if err := b.impute(); err != nil {
		return nil, err
	}
	switch b.imputeMode {
	case "mean":
		b.dataDependent = append(b.dataDependent, fmt.Sprintf("--impute mean replaces a missing value by its column's mean over the records (%d values imputed), so one record can change another's features; use --impute constant:V or the schema's per-feature constants (--impute schema)", b.imputed))
	case "drop":
		b.dataDependent = append(b.dataDependent, fmt.Sprintf("--impute drop removes records with missing values (%d dropped), so the number of records depends on the data and a replaced record can become an added or removed one, which the replace-one sensitivity analyses do not cover; use --impute constant:V or --impute schema", b.dropped))
	case "constant":
		if b.imputed > 0 {
			what := fmt.Sprintf("the constant %g", b.imputeValue)
			if b.opt.ImputeValues != nil {
				what = "the per-feature constants given"
			}
			b.note("imputed %d missing values with %s (public: no record is read)", b.imputed, what)
		}
	}

	sign, err := b.mapLabels()
	if err != nil {
		return nil, err
	}
	if err := b.m.charge(int64(n)*8, "the ±1 labels"); err != nil {
		return nil, err
	}
	y := make([]float64, n)
	npos := 0
	for i, k := range b.y {
		y[i] = sign[k]
		if sign[k] > 0 {
			npos++
		}
	}
	var positive, shown []string // as spelled (Table.Positive), and sorted in shortest form (notes)
	for i, c := range b.classes {
		if sign[i] > 0 {
			positive = append(positive, c.name)
		}
	}
	for _, i := range b.sortedClasses() {
		if sign[i] > 0 {
			shown = append(shown, b.classes[i].label())
		}
	}
	if (npos == 0 || npos == n) && b.opt.AllowOneClass {
		c := b.classes[0]
		if len(b.classes) == 1 && b.opt.PositiveClasses == "" && b.opt.Binarize == "" {
			switch {
			case c.isNum && c.value == 1:
				for i := range y {
					y[i] = 1
				}
				npos = n
			case c.isNum && (c.value == 0 || c.value == -1):
			default:
				return nil, posErr(b.file, c.line, c.col, "only one class present (label %s, %d records) and its side is unknown: give --positive-classes %s if it is the positive class, or the federation's positive label otherwise", c.name, c.count, c.name)
			}
		}
		side := "−1"
		if npos == n {
			side = "+1"
		}
		b.note("one class only: all %d records are %s (labels: %s)", n, side, b.classList())
	} else if npos == 0 || npos == n {
		c := b.classes[0]
		if len(b.classes) == 1 {
			return nil, posErr(b.file, c.line, c.col, "only one class present (label %s, %d records); need both classes", c.name, c.count)
		}
		side := "−1"
		if npos == n {
			side = "+1"
		}
		if npos == 0 && b.opt.PositiveClasses != "" {
			// A positive class that matches no label: a typo or a case
			// mismatch (labels are matched exactly).
			hint := ""
			for _, cl := range b.classes {
				for _, want := range strings.Split(b.opt.PositiveClasses, ",") {
					if strings.EqualFold(strings.TrimSpace(want), cl.name) {
						hint = fmt.Sprintf("; did you mean %q? (labels are matched exactly, case included)", cl.name)
					}
				}
			}
			return nil, posErr(b.file, c.line, c.col, "positive class %q matches none of the %d records' labels (%s)%s",
				b.opt.PositiveClasses, n, b.classList(), hint)
		}
		return nil, posErr(b.file, c.line, c.col, "all %d records map to %s (labels: %s; positive classes: %q)",
			n, side, b.classList(), strings.Join(shown, ","))
	}
	if b.opt.PositiveClasses != "" || b.opt.Binarize != "" {
		b.note("positive classes %s (%d of %d records)", strings.Join(shown, ","), npos, n)
	}

	ds, rep, err := b.dataset(y)
	if err != nil {
		return nil, err
	}
	if err := ds.Validate(); err != nil {
		return nil, fmt.Errorf("data: %s: internal error: %w", b.file, err)
	}
	t := &Table{
		Dataset:        ds,
		Source:         b.file,
		Format:         b.format,
		FeatureNames:   b.names,
		Positive:       positive,
		Imputed:        b.imputed,
		Dropped:        b.dropped,
		Representation: rep,
		DimDeclared:    b.opt.Dim > 0,
		Notes:          b.notes,
		DataDependent:  b.dataDependent,
	}
	for _, c := range b.classes {
		t.Classes = append(t.Classes, c.name)
		t.Counts = append(t.Counts, c.count)
	}
	return t, nil
}

// impute replaces the NaN markers of dense rows by column means.
func (b *builder) impute() error {
	if b.sparse || b.colMissing == nil {
		return nil
	}
	d := b.d
	for j, m := range b.colMissing {
		if m == 0 {
			continue
		}
		var sum float64
		cnt := 0
		for i := j; i < len(b.x); i += d {
			if v := b.x[i]; !math.IsNaN(v) {
				sum += v
				cnt++
			}
		}
		if cnt == 0 {
			p := b.firstMissing[j]
			name := ""
			if b.names != nil {
				name = " " + strconv.Quote(b.names[j])
			}
			return posErr(b.file, p[0], p[1], "column %d%s has only missing values; cannot impute its mean", p[1], name)
		}
		mean := sum / float64(cnt)
		if math.IsInf(mean, 0) { // the sum overflowed
			mean = 0
			for i := j; i < len(b.x); i += d {
				if v := b.x[i]; !math.IsNaN(v) {
					mean += v / float64(cnt)
				}
			}
		}
		for i := j; i < len(b.x); i += d {
			if math.IsNaN(b.x[i]) {
				b.x[i] = mean
			}
		}
		b.imputed += m
	}
	if b.imputed > 0 {
		b.note("imputed %d missing values with column means of this file", b.imputed)
	}
	return nil
}

// sparseSmaller is the "auto" rule: CSR when it takes at most a quarter of
// the dense storage — 12 bytes per nonzero (value and column index) and 8
// per row pointer, against 8 bytes per cell. Row operations then touch at
// most about a sixth as many values, so CSR is also the faster one; the
// experiment package keeps such data sparse through scaling
// (Scaler.ApplyUnshifted). a9a (11 % dense, d = 123) is stored sparse,
// ijcnn1 (59 %, d = 22) dense.
func sparseSmaller(n, d, nnz int) bool {
	return 12*float64(nnz)+8*float64(n+1) <= 2*float64(n)*float64(d)
}

// dataset builds the storage, choosing the representation.
func (b *builder) dataset(y []float64) (*pairwise.Dataset, string, error) {
	n, d := len(y), b.d
	nnz := b.base + len(b.val)
	if !b.sparse {
		nnz = 0
		for _, v := range b.x {
			if v != 0 {
				nnz++
			}
		}
	}
	rep := b.opt.Representation
	if rep == "" || rep == "auto" {
		rep = Dense
		if sparseSmaller(n, d, nnz) {
			rep = Sparse
		}
		if rep == Sparse || b.sparse {
			b.note("representation %s (n=%d, d=%d, density %.3g%%)", rep, n, d, 100*float64(nnz)/(float64(n)*float64(d)))
		}
	}
	ds := &pairwise.Dataset{N: n, D: d, Y: y}
	switch {
	case rep == Dense && b.sparse:
		if int64(n)*int64(d) > maxDenseCells || b.m.charge(int64(n)*int64(d)*8, "") != nil {
			return nil, "", fmt.Errorf("data: %s: dense storage of %d×%d values needs %s, over the memory limit of %s with %s in use; use --representation sparse (or auto), or raise --max-memory",
				b.file, n, d, FormatSize(int64(n)*int64(d)*8), FormatSize(b.m.limit), FormatSize(b.m.used))
		}
		ds.X = make([]float64, n*d)
		b.flushBlock()
		var freed int64
		for bi := range b.blocks {
			bl := &b.blocks[bi]
			b.denseRows(ds.X, d, bl)
			freed += b.dropBlock(bl)
			if freed >= releaseBlockBytes {
				// The densified rows take fresh pages: give the
				// block's back so that CSR and dense are not both
				// resident.
				debug.FreeOSMemory()
				freed = 0
			}
		}
		b.blocks = nil
	case rep == Dense:
		ds.X = b.x
	case b.sparse:
		if err := b.concatBlocks(); err != nil {
			return nil, "", err
		}
		ds.Ptr, ds.Idx, ds.Val = b.ptr, b.idx, b.val
	default:
		if err := b.m.charge(int64(n+1)*8+int64(nnz)*12, "sparse storage"); err != nil {
			return nil, "", err
		}
		ds.Ptr = make([]int, n+1)
		ds.Idx = make([]int32, 0, nnz)
		ds.Val = make([]float64, 0, nnz)
		for i := 0; i < n; i++ {
			for j, v := range b.x[i*d : (i+1)*d] {
				if v != 0 {
					ds.Idx = append(ds.Idx, int32(j))
					ds.Val = append(ds.Val, v)
				}
			}
			ds.Ptr[i+1] = len(ds.Idx)
		}
	}
	return ds, rep, nil
}

// notUTF8 refuses the label s at line:col, which is not UTF-8 text: a
// label in Latin-1 or Windows-1252 (é is the byte 0xe9) would be a class
// of its own beside the same word in UTF-8 (é is 0xc3 0xa9), so a file
// that mixes the two encodings would be read with one class too many. The
// message names the first byte that is not UTF-8, and the first label
// that was UTF-8 beyond ASCII, if any (then the file mixes encodings).
func (b *builder) notUTF8(s []byte, line, col int) error {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		i += n
	}
	mixed := ""
	for _, c := range b.classes {
		for _, r := range c.name {
			if r >= utf8.RuneSelf {
				mixed = fmt.Sprintf("; line %d has the label %q in UTF-8, so the file mixes encodings", c.line, c.name)
				break
			}
		}
		if mixed != "" {
			break
		}
	}
	fix := "convert the file to UTF-8, e.g. iconv -f latin1 -t utf-8 FILE > FILE.utf8"
	if mixed != "" {
		fix = "convert its Latin-1 lines to UTF-8 (iconv over the whole file would garble the lines already in UTF-8)"
	}
	return posErr(b.file, line, col, "label %q is not UTF-8 text (byte 0x%02x: Latin-1 or Windows-1252?)%s; %s", s, s[i], mixed, fix)
}
