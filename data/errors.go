package data

import "fmt"

// ParseError reports a problem at a position of an input file.
//
// Line is 1-based and counts the lines of the decompressed content (a CSV
// record whose quoted field spans lines is reported at its first line).
// Col is 1-based; its unit depends on where the problem is:
//   - in a CSV record or an ARFF @data row it is the field number (the
//     first field is 1, ignored and label columns count);
//   - in a LIBSVM line, an ARFF header line, or where the input itself
//     broke off (corrupt compressed stream, size limit), it is the byte
//     column (the first byte of the line is 1; a tab is one byte).
//
// Problems with the file as a whole (no records, a single class, too many
// classes) are reported at the record or label that shows them.
type ParseError struct {
	File      string
	Line, Col int
	Err       error
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("data: %s:%d:%d: %v", e.File, e.Line, e.Col, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// posErr builds a *ParseError with a formatted message; a %w verb wraps.
func posErr(file string, line, col int, format string, args ...any) error {
	return &ParseError{File: file, Line: line, Col: col, Err: fmt.Errorf(format, args...)}
}
