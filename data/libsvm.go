package data

import (
	"bytes"
	"io"
	"math"
)

// readLIBSVM parses lines "label idx:val idx:val ..." with 1-based,
// strictly increasing indices. Blank lines and "#" comments are skipped;
// explicit zeros are checked but not stored. Error columns are byte
// columns.
func readLIBSVM(lr *lineReader, b *builder) error {
	b.sparse = true
	b.ptr = append(b.ptr, 0)
	maxIdx := 0
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
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
			p = skipToken(line, p)
			tok := line[s:p]
			colon := bytes.IndexByte(tok, ':')
			if colon < 0 {
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
			case b.opt.Dim > 0 && idx > b.opt.Dim:
				return posErr(b.file, ln, s+1, "feature index %d exceeds Dim %d", idx, b.opt.Dim)
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
				b.idx = append(b.idx, int32(idx-1))
				b.val = append(b.val, v)
			}
			prev = idx
		}
		if err := b.label(lab, ln, labCol, true); err != nil {
			return err
		}
		b.ptr = append(b.ptr, len(b.idx))
		maxIdx = max(maxIdx, prev)
	}
	b.d = maxIdx
	return nil
}

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
