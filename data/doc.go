// Package data turns benchmark files into the in-memory datasets that the
// pairwise learners train on, and prepares them for private training.
//
// It is the I/O edge of the project: pairwise, dp and the coordinator and
// worker state machines never open files; cmd/pairfed calls Load (or Read)
// once per file and hands the resulting *pairwise.Dataset to the pure core.
//
// # Reading
//
// Load and Read parse LIBSVM, CSV, dense (blank-separated columns, label
// first: the UCI/ESL/LIBSVM-dense layout) and ARFF text, transparently
// decompressed from gzip, bzip2 or xz (recognised by magic bytes, never by
// extension),
// and return a Table: the ±1-labelled Dataset plus what was decided on the
// way (original class labels, which of them are positive, imputations,
// presets used) as Notes for the run log. Options documents every knob; the
// zero value detects the format and refuses anything doubtful (missing
// values, more than two classes) with an error that names the file, line
// and column (see ParseError for how columns are counted) and the flag that
// resolves it. A few UCI files whose layout cannot be guessed (label in
// column 2, an ID column, ...) get known-dataset presets by file name.
//
// Dense storage is used unless CSR needs at most a quarter of its bytes
// (under about 16% of the values nonzero; then CSR);
// Options.Representation overrides.
//
// Every Read runs under a memory budget (Options.MaxMemory, default
// DefaultMaxMemory): each allocation that grows with the input is charged
// before it is made, the feature count D must leave room for the
// per-feature vectors of training, and the decompressed text is bounded by
// the same number; over it, Read fails with ErrMemory (or ErrTooLarge) at
// the line that asked (memory.go).
//
// # Preparing
//
// FitScaler fits a min-max or standardising map on training data only and
// Scaler.Apply applies it to any split. ClipNorms (Clip for user input)
// bounds every record's L2 norm by R: the differential-privacy sensitivity
// bounds in package dp assume ‖x‖ ≤ R, so clipping must be the last
// transformation before training. StratifiedSplit, StratifiedKFold, KFold
// and Complement make reproducible splits from an injected *rand.Rand.
// Align reconciles the feature count of LIBSVM train and test files.
//
// # Privacy of the preparation
//
// A private run is private end to end only if each record is prepared from
// itself and public information. Schema (a feature-bounds file, LoadSchema)
// gives public per-feature ranges, a public positive class, public
// imputation constants and the public categories of text columns, which
// the loaders one-hot encode (Options.Categorical; an unlisted value is an
// error or, declared, a catch-all category — never a category learnt from
// the records); NewBoundsScaler is its per-record map. Decisions
// that read the records — mean imputation, dropping records, the
// minority-class label, halves binarization, a LIBSVM dimension read off
// the largest index — are listed in Table.DataDependent with their reason
// and public alternative, and callers report such runs not private.
//
// Nothing here modifies its inputs: every transformation returns new
// storage.
package data
