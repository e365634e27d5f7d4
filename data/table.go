package data

import (
	"fmt"
	"io"
	"os"

	"github.com/pairfed/pairfed/pairwise"
)

// Table is a dataset loaded from a file, with what is known about how its
// records and labels were read.
type Table struct {
	*pairwise.Dataset

	Source         string   // path or name given to Load/Read
	Format         string   // FormatLIBSVM, FormatCSV, FormatDense or FormatARFF
	Classes        []string // original labels, in the order first found
	Counts         []int    // records per entry of Classes
	Positive       []string // the entries of Classes mapped to +1
	FeatureNames   []string // from a CSV header or ARFF attributes; nil when unknown
	Imputed        int      // missing values replaced by a column mean
	Dropped        int      // records dropped for missing values
	Representation string   // Dense or Sparse
	DimDeclared    bool     // D was fixed by Options.Dim
	Notes          []string // decisions taken, for the run log
	// DataDependent lists the loading decisions that depend on the
	// records themselves (mean imputation, dropped records, a positive
	// class chosen by the label counts, halves binarization), each with
	// the reason and the public alternative. A private run on such a
	// table is not private end to end: the DP analyses assume that each
	// record is prepared from itself and public information only.
	DataDependent []string
}

// Load reads the dataset at path. See Read.
func Load(path string, opt Options) (*Table, error) {
	if path == "" {
		return nil, fmt.Errorf("data: empty file name: give the path of a data file")
	}
	f, err := openRegular(path, "data file")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path, opt)
}

// Read parses a dataset from r; name is used in messages, as
// Table.Source, and (its base name) to look up a known-dataset preset.
//
// The input may be compressed with gzip, bzip2 or xz, recognised by its
// magic bytes. Every problem with the content (syntax, values, labels,
// compression, size) is reported as a *ParseError naming name, line and
// column (read errors too, at the byte where the input broke off).
// Invalid or inapplicable Options, a file that cannot be opened, and a
// dense matrix too large to allocate give plain errors.
//
// When Options.PositiveClasses and Options.Binarize are empty, labels map
// to ±1 as follows: numeric labels {−1, +1} or {0, 1}: 1 is +1; any other
// two labels: the minority class is +1 (on a tie, the label sorting last;
// numerically if both are numbers), and a note says so; more than two
// labels: an error listing them.
//
// Known-dataset presets, keyed by base file name (compression suffix
// removed), fill the options the caller left empty and add a note:
//
//	wdbc.data                     label column 2, ignore column 1, positive M
//	breast-cancer-wisconsin.data  label column 11, ignore column 1, positive 4
//	hepatitis.data                label column 1, positive 1 (DIE)
//	pima-indians-diabetes.csv     label column 9, positive 1
//	messidor_features.arff        label Class, positive 1
//
// The representation follows Options.Representation; "auto" picks sparse
// (CSR) when it needs at most a quarter of the dense storage (12 bytes per
// nonzero and 8 per row against 8 per cell: under about 16 % nonzero).
func Read(r io.Reader, name string, opt Options) (*Table, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	m := &budget{limit: opt.MaxMemory, file: name}
	if m.limit == 0 {
		m.limit = DefaultMaxMemory()
	}
	if opt.MaxBytes == 0 {
		// Inflated bytes count against the same budget: parsing more
		// text than the memory limit is refused too.
		opt.MaxBytes = m.limit
	}
	// The reader's own buffers (raw, decompressor, lines, sniffing).
	m.used = readerOverhead
	lr, kind, err := openBudget(r, name, opt.MaxBytes, m)
	if err != nil {
		return nil, err
	}
	defer lr.close()
	if err := lr.checkText(); err != nil {
		return nil, err
	}
	format := resolveFormat(opt, lr.sniff)
	var notes []string
	if kind != "" {
		notes = append(notes, "decompressed "+kind)
	}
	if lr.crOnly {
		notes = append(notes, "line endings: CR alone (classic Mac OS), read as line breaks")
	}
	if n := applyPreset(&opt, name, format); n != "" {
		notes = append(notes, n)
	}
	b := newBuilder(name, format, opt, m)
	b.notes = notes
	if f, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok && kind == "" {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			b.sizeHint = st.Size()
		}
	}
	switch format {
	case FormatLIBSVM:
		if opt.LabelColumn != "" || len(opt.IgnoreColumns) > 0 {
			if opt.DimSource != "" {
				return nil, fmt.Errorf("data: %s: LabelColumn and IgnoreColumns do not apply to LIBSVM files (%s sets label_column or ignore_columns: is it the schema of a CSV or ARFF file?)", name, opt.DimSource)
			}
			return nil, fmt.Errorf("data: %s: LabelColumn and IgnoreColumns do not apply to LIBSVM files", name)
		}
		if opt.Categorical != nil {
			return nil, fmt.Errorf("data: %s: a LIBSVM file has no categorical columns (its values are numbers), but %s declares \"categories\": is it the schema of a CSV or ARFF file?", name, opt.DimSource)
		}
		err = readLIBSVM(lr, b)
	case FormatCSV:
		err = readCSV(lr, b)
	case FormatDense:
		err = readDense(lr, b)
	case FormatARFF:
		err = readARFF(lr, b)
	}
	if err != nil {
		return nil, err
	}
	return b.finish(lr.line)
}

// Align makes train and test agree on the number of features D, which
// LIBSVM files only imply through their largest index. When neither table
// had D declared (Options.Dim) and both are LIBSVM, the one with fewer
// features gets zero columns up to the other's D (its storage is copied,
// never modified) and a note; otherwise a mismatch is an error.
func Align(train, test *Table) error {
	if train.D == test.D {
		return nil
	}
	if train.DimDeclared || test.DimDeclared || train.Format != FormatLIBSVM || test.Format != FormatLIBSVM {
		return fmt.Errorf("data: dimension mismatch: %s has %d features but %s has %d; train and test must have the same features",
			train.Source, train.D, test.Source, test.D)
	}
	small, large := train, test
	if small.D > large.D {
		small, large = large, small
	}
	small.Note(fmt.Sprintf("padded from %d to %d features to match %s (LIBSVM omits trailing zero features)",
		small.D, large.D, large.Source))
	small.Dataset = pad(small.Dataset, large.D)
	return nil
}

// Note appends a note to t.Notes.
func (t *Table) Note(s string) { t.Notes = append(t.Notes, s) }

// pad returns a copy of ds with d ≥ ds.D features, the new ones zero.
func pad(ds *pairwise.Dataset, d int) *pairwise.Dataset {
	out := &pairwise.Dataset{N: ds.N, D: d, Y: append([]float64(nil), ds.Y...)}
	if ds.IsSparse() {
		out.Ptr = append([]int(nil), ds.Ptr...)
		out.Idx = append([]int32(nil), ds.Idx...)
		out.Val = append([]float64(nil), ds.Val...)
		return out
	}
	out.X = make([]float64, ds.N*d)
	for i := 0; i < ds.N; i++ {
		copy(out.X[i*d:], ds.Row(i))
	}
	return out
}
