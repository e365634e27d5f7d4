package data

import (
	"bytes"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// Parallel bzip2 decoding.
//
// A bzip2 stream is "BZh" and a level digit, then blocks, each opening
// with the 48-bit magic 0x314159265359 and the block's CRC (32 bits),
// then an end-of-stream magic 0x177245385090, the stream's combined CRC
// and padding to a byte; streams may follow one another. Blocks are not
// byte-aligned, but each is decodable alone: the bits of one block,
// preceded by a stream header and followed by an end-of-stream marker
// whose combined CRC is that block's CRC (the combined CRC of a one-block
// stream), form a valid one-block stream that compress/bzip2 decodes and
// checks (its block CRC). So the input is cut at every bit position that
// holds the block magic and the pieces are decoded on several goroutines,
// their output delivered in order.
//
// The magic may also occur by chance inside a block's Huffman-coded bits
// (about once per 2⁴⁸ bit positions: once in 30 TB of input). A piece
// cut there is a truncated block: its decode fails before it produces
// any output (a bzip2 block's output comes after the whole block was
// decoded), and the reader then decodes it joined with the next piece,
// and so on. A piece that fails after producing output is corrupt, and
// its error ends the read. At each end of stream the combined CRC the
// stream stores is checked against the CRCs of the blocks decoded, and a
// stream without its end (a truncated file) is an error, as for the
// serial decoder. The end-of-stream magic found by chance inside a block
// is told apart by what must follow a real one: the end of the input or
// the next stream's header, right after its CRC and padding.
//
// Memory: at most bzWorkers pieces are decoded at once, each with the
// decoder's block arrays (≈ 4 MiB at level 9) and bzQueue chunks of
// bzChunk bytes of output ahead of the reader; a piece's compressed bits
// are at most bzMaxPiece bytes (a valid block is at most ≈ 2.3 MB:
// 900 000 symbols of ≤ 20-bit codes and its tables), so a stream that
// shows no block boundary for longer is refused as corrupt.
const (
	bzBlockMagic = 0x314159265359
	bzEOSMagic   = 0x177245385090
	bzMask48     = 1<<48 - 1
	bzChunk      = 256 << 10
	bzQueue      = 4
	bzMaxPiece   = 3 << 20
	bzMaxWorkers = 4
)

// bzParallelCost is the memory the parallel decoder of w workers holds at
// most beyond the reader's own buffers, charged to the load's budget:
// the compressed bits of the pieces queued and decoding (2w + 3 at most,
// each ≤ bzMaxPiece), w decoders' block arrays (≈ 4.5 MiB at level 9)
// and the output chunks ahead of the reader.
func bzParallelCost(w int) int64 {
	return int64(2*w+3)*bzMaxPiece + int64(w)*(9<<19) + int64(w+1)*(bzQueue+1)*bzChunk
}

// bzWorkers is the number of goroutines a bzip2 input is decoded on: up
// to GOMAXPROCS (the parser runs beside them), at most bzMaxWorkers; 1
// means the serial decoder.
func bzWorkers() int { return min(runtime.GOMAXPROCS(0), bzMaxWorkers) }

// bzPiece is one block (or, after a join, several pieces) of a stream:
// its bits start at bit start of b and run for n bits.
type bzPiece struct {
	level byte
	b     []byte
	start uint
	n     int64
	// end marks the item after a stream's last block: crc is the stored
	// combined CRC. final marks the end of the input; truncated that it
	// came before an end of stream.
	end, final, truncated bool
	crc                   uint32
	err                   error // a scan error, reported at this point
}

// blockCRC is the CRC stored in the piece's block header.
func (p *bzPiece) blockCRC() uint32 {
	return uint32(readBitsAt(p.b, int64(p.start)+48, 32))
}

// readBitsAt returns the k ≤ 57 bits of b starting at bit pos (MSB
// first); bits past the end of b read as 0.
func readBitsAt(b []byte, pos int64, k uint) uint64 {
	var v uint64
	i := pos / 8
	for j := int64(0); j < 8; j++ {
		v <<= 8
		if i+j < int64(len(b)) {
			v |= uint64(b[i+j])
		}
	}
	return (v << uint(pos%8)) >> (64 - k)
}

// bitWriter appends bits MSB first.
type bitWriter struct {
	b    []byte
	acc  uint64
	nacc uint
}

func (w *bitWriter) write(v uint64, n uint) {
	for n > 0 {
		k := min(n, 8)
		w.acc = w.acc<<k | (v>>(n-k))&(1<<k-1)
		w.nacc += k
		n -= k
		for w.nacc >= 8 {
			w.b = append(w.b, byte(w.acc>>(w.nacc-8)))
			w.nacc -= 8
		}
	}
}

func (w *bitWriter) writeBits(b []byte, start uint, n int64) {
	pos := int64(start)
	for n >= 56 {
		w.write(readBitsAt(b, pos, 56), 56)
		pos, n = pos+56, n-56
	}
	if n > 0 {
		w.write(readBitsAt(b, pos, uint(n)), uint(n))
	}
}

func (w *bitWriter) bytes() []byte {
	if w.nacc > 0 {
		w.write(0, 8-w.nacc)
	}
	return w.b
}

// bzOneBlockStream is the one-stream form of the pieces ps: a header of
// their level, their bits, an end of stream with the first piece's CRC.
func bzOneBlockStream(ps []*bzPiece) []byte {
	var n int64
	for _, p := range ps {
		n += p.n
	}
	w := &bitWriter{b: make([]byte, 0, 4+n/8+12)}
	w.b = append(w.b, 'B', 'Z', 'h', ps[0].level)
	for _, p := range ps {
		w.writeBits(p.b, p.start, p.n)
	}
	w.write(bzEOSMagic, 48)
	w.write(uint64(ps[0].blockCRC()), 32)
	return w.bytes()
}

// bzScanner cuts a bzip2 input into pieces at the block magics.
type bzScanner struct {
	r       io.Reader
	buf     []byte // bytes from the current piece's first byte on
	start   uint   // bit of buf[0] where the current piece starts
	scan    int64  // next bit position of buf to test for a magic
	eof     bool
	level   byte       // the current stream's level; 0 between streams
	pending []*bzPiece // items found, not yet returned
	empty   int        // consecutive reads that returned no byte and no error
}

// fill reads more input into buf; false when none came (at the end).
func (s *bzScanner) fill() (bool, error) {
	if s.eof {
		return false, nil
	}
	var chunk [64 << 10]byte
	n, err := s.r.Read(chunk[:])
	s.buf = append(s.buf, chunk[:n]...)
	if err == io.EOF {
		s.eof = true
		err = nil
	}
	if s.empty++; n > 0 || err != nil {
		s.empty = 0
	} else if s.empty == 100 {
		err = io.ErrNoProgress // as bufio and readAhead do
	}
	return n > 0, err
}

// need reads until buf holds k bytes or the input ends; it reports
// whether buf holds k bytes.
func (s *bzScanner) need(k int64) (bool, error) {
	for int64(len(s.buf)) < k && !s.eof {
		if _, err := s.fill(); err != nil {
			return false, err
		}
	}
	return int64(len(s.buf)) >= k, nil
}

func isBzHeader(h []byte) bool {
	return len(h) >= 4 && h[0] == 'B' && h[1] == 'Z' && h[2] == 'h' && h[3] >= '1' && h[3] <= '9'
}

// cut returns the piece from the current start up to bit pos of buf and
// makes pos the new start.
func (s *bzScanner) cut(pos int64) *bzPiece {
	nb := (pos + 7) / 8
	p := &bzPiece{level: s.level, b: s.buf[:nb:nb], start: s.start, n: pos - int64(s.start)}
	rest := make([]byte, int64(len(s.buf))-pos/8, max(int64(len(s.buf))-pos/8, 1<<20))
	copy(rest, s.buf[pos/8:])
	s.buf, s.start = rest, uint(pos%8)
	s.scan = int64(s.start)
	return p
}

// next returns the next item: a piece of a block (what lies between two
// magics), the end of a stream (end, with its stored CRC), or the final
// item (final: the end of the input, or err).
func (s *bzScanner) next() *bzPiece {
	for len(s.pending) == 0 {
		s.step()
	}
	p := s.pending[0]
	s.pending = s.pending[1:]
	return p
}

// step finds the next items and appends them to pending.
func (s *bzScanner) step() {
	final := func(err error, truncated bool) {
		s.pending = append(s.pending, &bzPiece{final: true, err: err, truncated: truncated})
	}
	if s.level == 0 {
		ok, err := s.need(4)
		switch {
		case err != nil:
			final(err, false)
		case !ok && len(s.buf) == 0:
			final(nil, false) // the input ends after a stream: done
		case !ok || !isBzHeader(s.buf):
			final(bzip2.StructuralError("bad magic value in continuation file"), false)
		default:
			s.level = s.buf[3]
			s.buf = s.buf[4:]
			s.start, s.scan = 0, 0
		}
		return
	}
	for {
		pos, v := s.findMagic()
		if pos < 0 {
			break
		}
		s.scan = pos + 1
		begins := pos == int64(s.start)
		if v == bzBlockMagic {
			if !begins {
				s.pending = append(s.pending, s.cut(pos))
				return
			}
			continue // the current piece's own magic
		}
		// An end of stream is followed by its CRC, padding to a byte,
		// then the end of the input or the next stream's header; a
		// magic followed by anything else is data.
		after := (pos + 48 + 32 + 7) / 8
		ok, err := s.need(after + 4)
		if err != nil {
			final(err, false)
			return
		}
		if ok && !isBzHeader(s.buf[after:]) || !ok && int64(len(s.buf)) != after {
			continue
		}
		if !begins {
			s.pending = append(s.pending, s.cut(pos))
		}
		// The end of stream now starts at bit s.start of buf.
		crc := uint32(readBitsAt(s.buf, int64(s.start)+48, 32))
		after = (int64(s.start) + 48 + 32 + 7) / 8
		s.pending = append(s.pending, &bzPiece{end: true, crc: crc})
		s.buf = s.buf[after:]
		s.level, s.start, s.scan = 0, 0, 0
		return
	}
	if int64(len(s.buf)) > bzMaxPiece {
		final(bzip2.StructuralError(fmt.Sprintf("no block boundary within %d bytes", bzMaxPiece)), false)
		return
	}
	ok, err := s.fill()
	if err != nil {
		final(err, false)
		return
	}
	if !ok && s.eof {
		// The input ended before the end of its stream.
		if n := int64(len(s.buf)) * 8; n > int64(s.start) {
			p := s.cut(n)
			p.truncated = true
			s.pending = append(s.pending, p)
		}
		final(nil, true)
	}
}

// bzPatterns[m][k] are the four bytes that a magic (m: block, end of
// stream) starting at bit k of a byte fills wholly, in its next four
// bytes: a fast byte search for them finds every candidate position.
var bzPatterns = func() (p [2][8][]byte) {
	for m, magic := range [2]uint64{bzBlockMagic, bzEOSMagic} {
		for k := range 8 {
			v := magic << (16 - k) // the magic at bits k…k+47 of 64
			p[m][k] = []byte{byte(v >> 48), byte(v >> 40), byte(v >> 32), byte(v >> 24)}
		}
	}
	return p
}()

// findMagic returns the first bit position ≥ s.scan of buf where either
// magic lies wholly inside buf, and which; −1 if none. With none, scan
// moves up to where a magic may still begin in bytes yet to come.
func (s *bzScanner) findMagic() (int64, uint64) {
	best, bestV := int64(-1), uint64(0)
	n := int64(len(s.buf))
	for m, magic := range [2]uint64{bzBlockMagic, bzEOSMagic} {
		for k := range int64(8) {
			// The pattern sits at byte b0 + 1 for a magic at bit 8·b0 + k.
			from := max(s.scan-k+7, 0)/8 + 1
			for from+4 <= n {
				j := bytes.Index(s.buf[from:], bzPatterns[m][k])
				if j < 0 {
					break
				}
				pos := (from+int64(j)-1)*8 + k
				if best >= 0 && pos >= best || pos+48 > n*8 {
					break
				}
				if readBitsAt(s.buf, pos, 48) == magic {
					best, bestV = pos, magic
					break
				}
				from += int64(j) + 1
			}
		}
	}
	if best < 0 {
		s.scan = max(s.scan, (n-8)*8)
	}
	return best, bestV
}

// bzJob is a piece, or pieces joined, being decoded.
type bzJob struct {
	parts   []*bzPiece
	out     chan []byte
	cancel  chan struct{}
	err     error // set before out is closed
	emitted bool  // the decode produced output (set before out is closed)
}

func newBzJob(parts []*bzPiece) *bzJob {
	return &bzJob{parts: parts, out: make(chan []byte, bzQueue), cancel: make(chan struct{})}
}

// run decodes the job's one-block stream into out, bzChunk bytes at a
// time, until done, canceled or quit.
func (j *bzJob) run(quit <-chan struct{}) {
	defer close(j.out)
	select {
	case <-j.cancel:
		j.err = errBzCanceled
		return
	default:
	}
	zr := bzip2.NewReader(bytes.NewReader(bzOneBlockStream(j.parts)))
	for {
		buf := make([]byte, bzChunk)
		n := 0
		var err error
		for n < len(buf) && err == nil {
			var k int
			k, err = zr.Read(buf[n:])
			n += k
		}
		if n > 0 {
			select {
			case j.out <- buf[:n]:
				j.emitted = true
			case <-j.cancel:
				j.err = errBzCanceled
				return
			case <-quit:
				j.err = errBzCanceled
				return
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			j.err = err
			return
		}
	}
}

var errBzCanceled = errors.New("bzip2: piece abandoned")

// bzParallel is the parallel decoder's reader.
type bzParallel struct {
	order    chan *bzJob // every item, in input order (a job per item)
	jobs     chan *bzJob // block pieces for the workers
	quit     chan struct{}
	stopOnce sync.Once

	cur      *bzJob
	chunk    []byte
	combined uint32
	err      error
	ahead    []*bzJob // items taken from order for a join, unused
}

// newBzParallel decodes the bzip2 input r (from its "BZh" header) on
// workers goroutines.
func newBzParallel(r io.Reader, workers int) *bzParallel {
	return newBzParallelFrom((&bzScanner{r: r}).next, workers)
}

// newBzParallelFrom decodes the items next returns (a bzScanner's).
func newBzParallelFrom(next func() *bzPiece, workers int) *bzParallel {
	z := &bzParallel{order: make(chan *bzJob, workers+2), jobs: make(chan *bzJob, workers), quit: make(chan struct{})}
	go z.scan(next)
	for range workers {
		go func() {
			for {
				select {
				case j := <-z.jobs:
					j.run(z.quit)
				case <-z.quit:
					return
				}
			}
		}()
	}
	return z
}

func (z *bzParallel) scan(next func() *bzPiece) {
	for {
		p := next()
		j := newBzJob([]*bzPiece{p})
		select {
		case z.order <- j:
		case <-z.quit:
			return
		}
		if p.end || p.final {
			close(j.out)
			if p.final {
				return
			}
			continue
		}
		select {
		case z.jobs <- j:
		case <-z.quit:
			return
		}
	}
}

// stop ends the scanner and the workers (once the reader is done).
func (z *bzParallel) stop() { z.stopOnce.Do(func() { close(z.quit) }) }

// take returns the next item in input order.
func (z *bzParallel) take() *bzJob {
	if len(z.ahead) > 0 {
		j := z.ahead[0]
		z.ahead = z.ahead[1:]
		return j
	}
	return <-z.order
}

func (z *bzParallel) Read(p []byte) (int, error) {
	for len(z.chunk) == 0 {
		if z.err != nil {
			return 0, z.err
		}
		if z.cur == nil {
			j := z.take()
			switch p := j.parts[0]; {
			case p.final:
				z.err = p.err
				if z.err == nil {
					z.err = io.EOF
					if p.truncated {
						z.err = io.ErrUnexpectedEOF
					}
				}
			case p.end:
				if p.crc != z.combined {
					z.err = bzip2.StructuralError("file checksum mismatch")
				}
				z.combined = 0
			default:
				z.cur = j
			}
			continue
		}
		c, ok := <-z.cur.out
		if ok {
			z.chunk = c
			break
		}
		j := z.cur
		switch {
		case j.err != nil && !j.emitted:
			z.join()
		case j.err != nil:
			z.err = j.err
		default:
			z.combined = (z.combined<<1 | z.combined>>31) ^ j.parts[0].blockCRC()
			if j.parts[len(j.parts)-1].truncated {
				z.err = io.ErrUnexpectedEOF
			}
			z.cur = nil
		}
	}
	n := copy(p, z.chunk)
	z.chunk = z.chunk[n:]
	return n, nil
}

// join decodes the failed piece z.cur joined with the next one: the
// block magic that began the next piece was data inside this block.
func (z *bzParallel) join() {
	j := z.cur
	var size int64
	for _, p := range j.parts {
		size += p.n / 8
	}
	next := z.take()
	np := next.parts[0]
	if np.end || np.final || size+np.n/8 > bzMaxPiece {
		z.err = j.err
		z.ahead = append([]*bzJob{next}, z.ahead...)
		return
	}
	close(next.cancel)
	joined := newBzJob(append(append([]*bzPiece(nil), j.parts...), np))
	go joined.run(z.quit)
	z.cur = joined
}
