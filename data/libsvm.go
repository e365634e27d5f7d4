package data

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
)

// readLIBSVM parses lines "label idx:val idx:val ..." with 1-based,
// strictly increasing indices. Blank lines and "#" comments are skipped;
// explicit zeros are checked but not stored. Error columns are byte
// columns.
func readLIBSVM(lr *lineReader, b *builder) error {
	b.sparse = true
	if err := push(b.m, &b.ptr, 0, "the record offsets"); err != nil {
		return err
	}
	maxIdx := 0
	var read int64 // bytes of the lines so far
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if read += int64(len(line)) + 1; lr.line == reserveAfterLines && b.sizeHint > 0 {
			// The arrays for the rest of the file, estimated from its
			// size and the first lines (+5 %), when the estimate takes
			// at most a quarter of what the budget has left: a wrong
			// estimate then never makes a file fail that fits (one too
			// small grows as before; the excess of one too large is
			// given back by trim below).
			f := 1.05 * float64(b.sizeHint) / float64(read)
			nnz, recs := int(f*float64(len(b.idx))), int(f*float64(len(b.y)))
			if !sparseSmaller(len(b.y), max(maxIdx, b.opt.Dim), len(b.idx)) && b.opt.Representation != Sparse {
				nnz = min(nnz, blockNNZ+blockNNZ/8) // looks dense: parsed in blocks (closeBlock)
			}
			if int64(nnz)*12+int64(recs)*12 <= (b.m.limit-b.m.used)/4 {
				reserve(b.m, &b.idx, nnz-len(b.idx), "the feature indices")
				reserve(b.m, &b.val, nnz-len(b.val), "the feature values")
				reserve(b.m, &b.ptr, recs+1-len(b.ptr), "the record offsets")
				reserve(b.m, &b.y, recs-len(b.y), "the labels")
			}
		}
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		p := 0
		p = skipSpace(line, p)
		if p == len(line) {
			continue
		}
		ln := lr.line
		if b.firstLine == 0 {
			b.firstLine = ln
		}
		// Label.
		s := p
		p = skipToken(line, p)
		lab := line[s:p]
		if bytes.IndexByte(lab, ':') >= 0 {
			return posErr(b.file, ln, s+1, "missing label (line starts with feature %q)", lab)
		}
		labCol := s + 1
		// Features.
		prev := 0
		for {
			p = skipSpace(line, p)
			if p == len(line) {
				break
			}
			s = p
			// The usual feature in one scan (fastFeature); anything else
			// takes the general path below, which reports every problem.
			limit := maxIdx // a new largest index has its dimension checked below
			if b.opt.Dim > 0 {
				limit = b.opt.Dim
			}
			if idx, v, e, ok := fastFeature(line, p, prev, limit); ok {
				if v != 0 {
					if err := push(b.m, &b.idx, int32(idx-1), "the feature indices"); err != nil {
						return err
					}
					if err := push(b.m, &b.val, v, "the feature values"); err != nil {
						return err
					}
				}
				prev, p = idx, e
				continue
			}
			p = skipToken(line, p)
			tok := line[s:p]
			colon := bytes.IndexByte(tok, ':')
			if colon < 0 {
				if looksDense(line) {
					return posErr(b.file, ln, s+1, "feature %q is not index:value: this line holds blank-separated numbers without indices, which looks like a dense whitespace-separated file; read it with --format dense (or --format auto)", tok)
				}
				return posErr(b.file, ln, s+1, "feature %q is not index:value", tok)
			}
			if string(tok[:colon]) == "qid" {
				return posErr(b.file, ln, s+1, "qid (ranking data) is not supported")
			}
			idx, ok := parseIndex(tok[:colon])
			switch {
			case !ok && isDigits(string(tok[:colon])):
				return posErr(b.file, ln, s+1, "feature index %s too large", tok[:colon])
			case !ok:
				return posErr(b.file, ln, s+1, "bad feature index %q", tok[:colon])
			case idx == 0:
				return posErr(b.file, ln, s+1, "feature index 0 (LIBSVM indices are 1-based)")
			case idx <= prev:
				return posErr(b.file, ln, s+1, "feature index %d after %d (indices must be strictly increasing)", idx, prev)
			case b.opt.Dim > 0 && idx > b.opt.Dim && b.opt.DimSource != "":
				return posErr(b.file, ln, s+1, "feature index %d, but %s declares %d features: is it this file's schema? (a LIBSVM file's features are its indices 1…%d)", idx, b.opt.DimSource, b.opt.Dim, b.opt.Dim)
			case b.opt.Dim > 0 && idx > b.opt.Dim:
				return posErr(b.file, ln, s+1, "feature index %d exceeds Dim %d", idx, b.opt.Dim)
			case idx > maxIdx && b.opt.Dim == 0:
				// A new largest index: the dimension it implies must fit.
				if err := b.m.checkDim(idx, fmt.Sprintf("feature index %d", idx)); err != nil {
					var pe *ParseError
					if errors.As(err, &pe) {
						pe.Line, pe.Col = ln, s+1
					}
					return err
				}
				maxIdx = idx
			}
			raw := tok[colon+1:]
			v, outcome := parseNumber(raw)
			if outcome != numOK {
				if len(raw) == 0 {
					return posErr(b.file, ln, s+colon+2, "missing value for feature %d", idx)
				}
				return posErr(b.file, ln, s+colon+2, "%s", numProblem("feature value", raw, outcome))
			}
			if v != 0 {
				if err := push(b.m, &b.idx, int32(idx-1), "the feature indices"); err != nil {
					return err
				}
				if err := push(b.m, &b.val, v, "the feature values"); err != nil {
					return err
				}
			}
			prev = idx
		}
		if err := b.label(lab, ln, labCol, true); err != nil {
			return err
		}
		if err := push(b.m, &b.ptr, b.base+len(b.idx), "the record offsets"); err != nil {
			return err
		}
		b.closeBlock(maxIdx)
	}
	b.d = maxIdx
	trim(b.m, &b.idx)
	trim(b.m, &b.val)
	trim(b.m, &b.ptr)
	trim(b.m, &b.y)
	return nil
}

// fastFeature parses the feature at line[p:] when it is the usual
// index:value — 1 to 9 digits, ':', a number parseExact takes, up to the
// next blank — with prev < index ≤ limit; it returns the index, the value
// and the end of the token. ok is false for anything else (the caller's
// general path then parses it and reports what is wrong).
func fastFeature(line []byte, p, prev, limit int) (idx int, v float64, end int, ok bool) {
	q := p
	for q < len(line) && q-p < 9 && '0' <= line[q] && line[q] <= '9' {
		idx = idx*10 + int(line[q]-'0')
		q++
	}
	if q == p || q == len(line) || line[q] != ':' || idx <= prev || idx > limit {
		return 0, 0, 0, false
	}
	end = skipToken(line, q+1)
	v, ok = parseExact(line[q+1 : end])
	return idx, v, end, ok
}

// reserveAfterLines is the line after which readLIBSVM reserves its arrays
// for the whole file when its size is known.
const reserveAfterLines = 1000

// parseIndex parses a positive decimal integer of at most MaxInt32.
func parseIndex(s []byte) (int, bool) {
	if len(s) == 0 || len(s) > 10 {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= math.MaxInt32
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' }

func skipSpace(line []byte, p int) int {
	for p < len(line) && isSpace(line[p]) {
		p++
	}
	return p
}

func skipToken(line []byte, p int) int {
	for p < len(line) && !isSpace(line[p]) {
		p++
	}
	return p
}
