package data

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/ulikunitz/xz"
)

// ErrTooLarge is wrapped by the error returned when an input exceeds
// Options.MaxBytes after decompression.
var ErrTooLarge = errors.New("input exceeds MaxBytes")

// maxLine bounds the length of one line (256 MiB).
const maxLine = 256 << 20

// readBufSize is the size of the buffered reader under the parsers.
const readBufSize = 64 << 10

// sniffSize is how much decompressed input format detection looks at.
const sniffSize = 64 << 10

// guardReader counts the bytes read from r, fails once more than max bytes
// have been read, annotates decompression errors and makes every error
// sticky.
type guardReader struct {
	r    io.Reader
	n    int64
	max  int64
	kind string // compression, "" for none
	err  error
}

func (g *guardReader) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	g.n += int64(n)
	if g.n > g.max {
		n -= int(g.n - g.max)
		g.err = fmt.Errorf("%w (%d bytes after decompression): the text of a file is limited like its memory (%s); if the file is genuine, raise --max-memory", ErrTooLarge, g.max, FormatSize(g.max))
		return n, g.err
	}
	if err != nil {
		if err != io.EOF && g.kind != "" {
			err = fmt.Errorf("corrupt or truncated %s stream: %w", g.kind, err)
		}
		g.err = err
	}
	return n, err
}

// open detects compression by magic bytes and returns a line reader over
// the decompressed content, the compression name ("" for none) and an
// error for a broken compressed header.
func open(r io.Reader, name string, maxBytes int64) (*lineReader, string, error) {
	return openBudget(r, name, maxBytes, &budget{limit: math.MaxInt64, file: name})
}

// openBudget is open with the line buffer charged to m.
func openBudget(r io.Reader, name string, maxBytes int64, m *budget) (*lineReader, string, error) {
	raw := bufio.NewReaderSize(r, 64<<10)
	magic, _ := raw.Peek(6)
	var (
		src         io.Reader = raw
		kind        string
		stopDecoder = func() {}
	)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		kind = "gzip"
		zr, err := gzip.NewReader(raw)
		if err != nil {
			return nil, kind, posErr(name, 1, 1, "corrupt or truncated gzip stream: %w", err)
		}
		src = zr
	case bytes.HasPrefix(magic, []byte("BZh")):
		kind = "bzip2"
		src = bzip2.NewReader(raw)
		// On several cores, block by block in parallel (bzip2par.go),
		// when its buffers take at most a quarter of the budget.
		if w := bzWorkers(); w > 1 && m.used+bzParallelCost(w) <= m.limit/4 {
			if err := m.charge(bzParallelCost(w), "parallel bzip2 decoding"); err != nil {
				return nil, kind, err
			}
			z := newBzParallel(raw, w)
			src, stopDecoder = z, z.stop
		}
	case bytes.HasPrefix(magic, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}):
		kind = "xz"
		// The decoder allocates the dictionary the stream declares.
		head, _ := raw.Peek(64)
		if err := m.charge(min(xzDictCap(head), maxBytes), "the xz dictionary the file declares"); err != nil {
			return nil, kind, err
		}
		zr, err := xz.NewReader(raw)
		if err != nil {
			return nil, kind, posErr(name, 1, 1, "corrupt or truncated xz stream: %w", err)
		}
		src = zr
	}
	var stop func()
	if kind != "" {
		// Decompress on a goroutine, ahead of the parser: the two then
		// run on two cores (bzip2 decoding is the slow part of reading
		// ijcnn1.trn.bz2).
		if err := m.charge(readAheadBufs*readAheadSize, "read-ahead buffers"); err != nil {
			stopDecoder()
			return nil, kind, err
		}
		ra := newReadAhead(src)
		src, stop = ra, func() { ra.stop(); stopDecoder() }
	}
	g := &guardReader{r: src, max: maxBytes, kind: kind}
	lr := &lineReader{r: bufio.NewReaderSize(g, readBufSize), name: name, m: m, stop: stop}
	m.lr = lr
	// A UTF-8 byte order mark is not part of the first line.
	if b, _ := lr.r.Peek(3); bytes.Equal(b, []byte{0xef, 0xbb, 0xbf}) {
		lr.r.Discard(3)
	}
	// Lines ended by CR alone (classic Mac OS): a carriage return with
	// no line feed anywhere in the start of the input. Such a file is
	// read with each CR as a line break (a CR LF pair as one break).
	if b, _ := lr.r.Peek(sniffSize); bytes.IndexByte(b, '\r') >= 0 && bytes.IndexByte(b, '\n') < 0 {
		lr.r = bufio.NewReaderSize(&crReader{r: lr.r}, readBufSize)
		lr.crOnly = true
	}
	return lr, kind, nil
}

// crReader turns the line endings of r into LF: a CR alone and a CR LF
// pair each become one LF.
type crReader struct {
	r      io.Reader
	lastCR bool // the last byte returned was a CR turned into LF
}

func (c *crReader) Read(p []byte) (int, error) {
	for {
		n, err := c.r.Read(p)
		w := 0
		for _, ch := range p[:n] {
			switch {
			case ch == '\r':
				ch = '\n'
				c.lastCR = true
			case ch == '\n' && c.lastCR:
				c.lastCR = false
				continue
			default:
				c.lastCR = false
			}
			p[w] = ch
			w++
		}
		if w > 0 || err != nil || n == 0 {
			return w, err
		}
	}
}

// lineReader returns the lines of its input without their line endings
// and numbers them from 1.
type lineReader struct {
	r    *bufio.Reader
	name string
	line int    // number of the line last returned
	long []byte // holds lines longer than the buffer
	m    *budget
	stop func() // ends the read-ahead goroutine, if any
	// crOnly: the lines end in CR alone, read as line breaks (crReader).
	crOnly bool
}

// close releases the reader's goroutine (a no-op without one).
func (lr *lineReader) close() {
	if lr.stop != nil {
		lr.stop()
		lr.stop = nil
	}
}

// readAhead reads its source on a goroutine into readAheadBufs buffers of
// readAheadSize bytes, up to two buffers ahead of its reader. stop ends the
// goroutine (it must be called once the reader is done, or on error).
type readAhead struct {
	full chan readChunk // filled buffers, in order
	free chan []byte    // buffers the reader is done with
	done chan struct{}
	cur  []byte // the unread part of the current buffer
	buf  []byte // the current buffer, returned to free when used up
	err  error  // the source's error after cur (io.EOF at the end)
}

type readChunk struct {
	b   []byte
	err error
}

const (
	readAheadBufs = 3
	readAheadSize = 256 << 10
)

func newReadAhead(src io.Reader) *readAhead {
	ra := &readAhead{full: make(chan readChunk, readAheadBufs), free: make(chan []byte, readAheadBufs), done: make(chan struct{})}
	for range readAheadBufs {
		ra.free <- make([]byte, readAheadSize)
	}
	go ra.run(src)
	return ra
}

func (ra *readAhead) run(src io.Reader) {
	for {
		var buf []byte
		select {
		case buf = <-ra.free:
		case <-ra.done:
			return
		}
		n := 0
		var err error
		for empty := 0; n < len(buf) && err == nil; { // the source's own error, as is
			var k int
			k, err = src.Read(buf[n:])
			n += k
			if empty++; k > 0 {
				empty = 0
			} else if empty == 100 {
				err = io.ErrNoProgress // as bufio does
			}
		}
		select {
		case ra.full <- readChunk{buf[:n], err}:
		case <-ra.done:
			return
		}
		if err != nil {
			return
		}
	}
}

func (ra *readAhead) Read(p []byte) (int, error) {
	for len(ra.cur) == 0 {
		if ra.err != nil {
			return 0, ra.err
		}
		if ra.buf != nil {
			ra.free <- ra.buf[:cap(ra.buf)] // never blocks: free holds every buffer
		}
		c := <-ra.full
		ra.cur, ra.buf, ra.err = c.b, c.b, c.err
	}
	n := copy(p, ra.cur)
	ra.cur = ra.cur[n:]
	return n, nil
}

func (ra *readAhead) stop() { close(ra.done) }

// next returns the next line (without "\n" or "\r\n"), valid until the
// following call, or io.EOF after the last one. A read error is returned
// positioned at the byte where the input broke off.
func (lr *lineReader) next() ([]byte, error) {
	b, err := lr.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		lr.long = lr.long[:0]
		for {
			if len(lr.long)+len(b) > maxLine {
				return nil, posErr(lr.name, lr.line+1, 1, "line longer than %d bytes", maxLine)
			}
			if gerr := growSlice(lr.m, &lr.long, len(b), fmt.Sprintf("a line over %s long", FormatSize(int64(len(lr.long)+len(b))))); gerr != nil {
				var pe *ParseError
				if errors.As(gerr, &pe) {
					pe.Line = lr.line + 1
				}
				return nil, gerr
			}
			lr.long = append(lr.long, b...)
			if err != bufio.ErrBufferFull {
				break
			}
			b, err = lr.r.ReadSlice('\n')
		}
		b = lr.long
	}
	if err != nil && err != io.EOF {
		return nil, posErr(lr.name, lr.line+1, len(b)+1, "%w", err)
	}
	if len(b) == 0 && err == io.EOF {
		return nil, io.EOF
	}
	lr.line++
	b = bytes.TrimSuffix(b, []byte{'\n'})
	b = bytes.TrimSuffix(b, []byte{'\r'})
	if i := bytes.IndexByte(b, '\r'); i >= 0 {
		return nil, posErr(lr.name, lr.line, i+1, "a carriage return (CR) inside the line: the file mixes line endings (CR alone, as classic Mac OS wrote them, besides LF or CR LF); convert every line ending to LF, e.g. perl -pi -e 's/\\r\\n?/\\n/g' FILE")
	}
	return b, nil
}

// sniff guesses the format of the buffered start of the input.
func (lr *lineReader) sniff() string {
	buf, _ := lr.r.Peek(sniffSize)
	return detectFormat(buf)
}

// checkText refuses input whose start holds a NUL byte: no LIBSVM, CSV or
// ARFF file does, and the parsers would otherwise report a confusing
// field-level error about binary data (an unsupported archive such as
// zip, an image, a model file).
func (lr *lineReader) checkText() error {
	buf, _ := lr.r.Peek(sniffSize)
	if bytes.HasPrefix(buf, []byte{0xff, 0xfe}) || bytes.HasPrefix(buf, []byte{0xfe, 0xff}) {
		return posErr(lr.name, 1, 1, "UTF-16 text (a byte order mark): convert the file to UTF-8 or ASCII, e.g. iconv -f UTF-16 -t UTF-8")
	}
	i := bytes.IndexByte(buf, 0)
	if i < 0 {
		return nil
	}
	line := 1 + bytes.Count(buf[:i], []byte{'\n'})
	col := i - bytes.LastIndexByte(buf[:i], '\n')
	return posErr(lr.name, line, col, "binary content (a NUL byte): not a LIBSVM, CSV or ARFF text file or a dense (blank-separated) one (compressed input must be gzip, bzip2 or xz)")
}

// detectFormat implements the "auto" format rule on the start of a file.
func detectFormat(buf []byte) string {
	sawLine := false
	for len(buf) > 0 {
		var line []byte
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			line, buf = buf[:i], buf[i+1:]
		} else {
			line, buf = buf, nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] == '%' { // ARFF comment
			continue
		}
		if line[0] == '@' {
			kw := bytes.ToLower(line[:min(len(line), 10)])
			if bytes.HasPrefix(kw, []byte("@relation")) || bytes.HasPrefix(kw, []byte("@attribute")) ||
				bytes.HasPrefix(kw, []byte("@data")) {
				return FormatARFF
			}
			return FormatCSV
		}
		if line[0] == '#' { // LIBSVM comment
			continue
		}
		if bytes.IndexByte(line, ',') >= 0 || bytes.IndexByte(line, ';') >= 0 {
			return FormatCSV
		}
		fields := bytes.Fields(line)
		if bytes.IndexByte(fields[0], ':') >= 0 {
			return FormatCSV
		}
		if len(fields) == 1 {
			// A label-only line (an all-zero LIBSVM record, or a
			// one-column CSV); look further.
			sawLine = true
			continue
		}
		if bytes.IndexByte(fields[1], ':') >= 0 {
			return FormatLIBSVM
		}
		// Several fields separated by blanks only.
		return FormatDense
	}
	if sawLine {
		return FormatLIBSVM
	}
	return FormatCSV
}
