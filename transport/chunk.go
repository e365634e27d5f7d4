package transport

import (
	"bytes"
	"container/list"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
)

// Chunking splits a message larger than one wire frame into frames and
// reassembles them on the receiving side. Every frame on a chunked
// transport starts with a marker byte:
//
//	whole message: 0xF0 | payload
//	chunk (v1):    0xF1 | id [16] | index u32 | total u32 | length u64 | sha256 [32] | data
//
// Integers are big-endian. id is random per message; index < total
// counts the chunks of the message; length is the size of the whole
// payload and sha256 its hash (repeated in every chunk, so that any chunk
// can open a partial message and all must agree). Every chunk but the
// last carries exactly maxChunk−ChunkHeaderLen data bytes; receivers do
// not rely on that, only on the chunks adding up to length. The markers
// are outside the protocol's message kinds, so a peer without chunking
// rejects frames as unknown kinds instead of misreading them.
const (
	frameWhole byte = 0xF0
	frameChunk byte = 0xF1
	// ChunkHeaderLen is the size of a chunk frame's header.
	ChunkHeaderLen = 1 + 16 + 4 + 4 + 8 + sha256.Size
	// MinChunk is the smallest maxChunk (frame size) Chunked accepts.
	MinChunk = 2 * ChunkHeaderLen
)

// ChunkLimits bound what a chunked transport accepts and how much memory
// each subscription spends on partial messages. Zero fields take the
// defaults. Eviction is counted in frames, not time, so it is
// deterministic.
type ChunkLimits struct {
	// MaxMessage is the largest payload Publish accepts and a receiver
	// reassembles (default MaxMessage, 64 MiB).
	MaxMessage int
	// MaxPartials is the number of incomplete messages a subscription
	// holds; opening one more evicts the least recently extended one
	// (default 1024, one per site at protocol.MaxSites).
	MaxPartials int
	// MaxBuffered bounds the memory a subscription holds in incomplete
	// messages, each chunk counted at its real size (see heldCost: its
	// copy's allocation plus chunkOverhead) and each partial message at
	// partialOverhead more; over it, the least recently extended partials
	// are evicted, and a message that alone would exceed it is dropped
	// (default 4×MaxMessage, at least MaxMessage). A message sent in
	// MinChunk frames (65 data bytes, held in 80 plus chunkOverhead)
	// costs under 2.75 times its length, so the default holds a
	// MaxMessage payload in frames of any size. Completing a message
	// briefly adds its payload (at most MaxMessage) to what is held.
	MaxBuffered int
	// MaxAge drops a partial message that received no chunk during the
	// last MaxAge frames of its subscription (default 16384): a lost
	// chunk is never retransmitted.
	MaxAge int
}

// DefaultChunkLimits are the limits of Chunked and of the NATS transport.
var DefaultChunkLimits = ChunkLimits{MaxMessage: MaxMessage, MaxPartials: 1024, MaxBuffered: 4 * MaxMessage, MaxAge: 1 << 14}

func (l ChunkLimits) normalize() ChunkLimits {
	d := DefaultChunkLimits
	if l.MaxMessage <= 0 {
		l.MaxMessage = d.MaxMessage
	}
	if l.MaxPartials <= 0 {
		l.MaxPartials = d.MaxPartials
	}
	if l.MaxBuffered <= 0 {
		l.MaxBuffered = 4 * l.MaxMessage
	}
	if l.MaxBuffered < l.MaxMessage {
		l.MaxBuffered = l.MaxMessage
	}
	if l.MaxAge <= 0 {
		l.MaxAge = d.MaxAge
	}
	return l
}

// ChunkStats counts a chunked transport's traffic (all subscriptions).
type ChunkStats struct {
	Sent       uint64 // messages published
	SentSplit  uint64 // of which split into chunks
	SentFrames uint64 // frames published

	Frames      uint64 // frames received
	Delivered   uint64 // messages handed to handlers
	Reassembled uint64 // of which reassembled from chunks
	Malformed   uint64 // frames rejected: unknown marker, short, out of range, inconsistent with their message, over the limits
	Corrupt     uint64 // completed messages dropped: sha256 or length mismatch
	Duplicates  uint64 // chunks already held, or of a message already completed
	Evicted     uint64 // partial messages dropped by MaxPartials, MaxBuffered or MaxAge

	Partials int64 // incomplete messages held now
	Buffered int64 // memory held in them, as MaxBuffered counts it
}

type chunkCounters struct {
	sent, sentSplit, sentFrames                                             atomic.Uint64
	frames, delivered, reassembled, malformed, corrupt, duplicates, evicted atomic.Uint64
	partials, buffered                                                      atomic.Int64
}

// ChunkedTransport is a Transport that splits payloads over its frame
// size into chunks on an inner Transport and reassembles them for its
// subscribers. Both ends of a subject must be chunked.
type ChunkedTransport struct {
	inner      Transport
	frameLimit func() int
	lim        ChunkLimits
	c          chunkCounters
}

var _ Transport = (*ChunkedTransport)(nil)

// Chunked wraps t: frames published on t are at most maxChunk bytes
// (≥ MinChunk; it panics otherwise), messages up to MaxMessage bytes.
func Chunked(t Transport, maxChunk int) *ChunkedTransport {
	return ChunkedWith(t, maxChunk, ChunkLimits{})
}

// ChunkedWith is Chunked with explicit limits.
func ChunkedWith(t Transport, maxChunk int, lim ChunkLimits) *ChunkedTransport {
	if maxChunk < MinChunk {
		panic(fmt.Sprintf("transport: chunk size %d below %d", maxChunk, MinChunk))
	}
	return newChunked(t, func() int { return maxChunk }, lim)
}

func newChunked(t Transport, frameLimit func() int, lim ChunkLimits) *ChunkedTransport {
	return &ChunkedTransport{inner: t, frameLimit: frameLimit, lim: lim.normalize()}
}

// Stats returns the counters.
func (c *ChunkedTransport) Stats() ChunkStats {
	k := &c.c
	return ChunkStats{
		Sent: k.sent.Load(), SentSplit: k.sentSplit.Load(), SentFrames: k.sentFrames.Load(),
		Frames: k.frames.Load(), Delivered: k.delivered.Load(), Reassembled: k.reassembled.Load(),
		Malformed: k.malformed.Load(), Corrupt: k.corrupt.Load(), Duplicates: k.duplicates.Load(),
		Evicted: k.evicted.Load(), Partials: k.partials.Load(), Buffered: k.buffered.Load(),
	}
}

// wholeFrames holds the buffers of whole frames for reuse; one that grew
// beyond maxPooledFrame is left to the collector.
var wholeFrames = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledFrame = 64 << 10

// Publish sends data as one frame if it fits, else as chunks. It fails
// with ErrTooLarge over MaxMessage. If publishing a chunk fails, the
// chunks already sent are evicted by receivers in time.
func (c *ChunkedTransport) Publish(subject string, data []byte) error {
	if len(data) > c.lim.MaxMessage {
		return fmt.Errorf("transport: publish of %d bytes on %s exceeds %d: %w", len(data), subject, c.lim.MaxMessage, ErrTooLarge)
	}
	limit := max(c.frameLimit(), MinChunk)
	if 1+len(data) <= limit {
		// The inner Publish does not retain its data: the frame's buffer
		// is reused (a K-site simulation framed every message anew).
		bp := wholeFrames.Get().(*[]byte)
		f := append(append((*bp)[:0], frameWhole), data...)
		err := c.inner.Publish(subject, f)
		if cap(f) <= maxPooledFrame {
			*bp = f
			wholeFrames.Put(bp)
		}
		if err != nil {
			return err
		}
		c.c.sent.Add(1)
		c.c.sentFrames.Add(1)
		return nil
	}
	per := limit - ChunkHeaderLen
	total := (len(data) + per - 1) / per
	// The inner Publish does not retain its data: one buffer serves all.
	f := make([]byte, limit)
	f[0] = frameChunk
	if _, err := rand.Read(f[1:17]); err != nil {
		return fmt.Errorf("transport: message id: %w", err)
	}
	binary.BigEndian.PutUint32(f[21:25], uint32(total))
	binary.BigEndian.PutUint64(f[25:33], uint64(len(data)))
	sum := sha256.Sum256(data)
	copy(f[33:ChunkHeaderLen], sum[:])
	for i := 0; i < total; i++ {
		binary.BigEndian.PutUint32(f[17:21], uint32(i))
		n := copy(f[ChunkHeaderLen:], data[i*per:])
		if err := c.inner.Publish(subject, f[:ChunkHeaderLen+n]); err != nil {
			return fmt.Errorf("transport: chunk %d/%d of %d bytes on %s: %w", i+1, total, len(data), subject, err)
		}
		c.c.sentFrames.Add(1)
	}
	c.c.sent.Add(1)
	c.c.sentSplit.Add(1)
	return nil
}

// Subscribe calls h with every message reassembled on subject. Frames
// that are malformed, duplicated or belong to messages that fail their
// hash are counted in Stats and never reach h.
func (c *ChunkedTransport) Subscribe(subject string, h func(string, []byte)) (func(), error) {
	r := newReassembler(c.lim, &c.c)
	var mu sync.Mutex
	unsub, err := c.inner.Subscribe(subject, func(s string, frame []byte) {
		mu.Lock()
		p, ok := r.add(s, frame)
		mu.Unlock()
		if ok {
			h(s, p)
		}
	})
	if err != nil {
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			unsub()
			mu.Lock()
			r.reset()
			mu.Unlock()
		})
	}, nil
}

// Close closes the inner transport.
func (c *ChunkedTransport) Close() error { return c.inner.Close() }

type msgKey struct {
	subject string
	id      [16]byte
}

type partial struct {
	key    msgKey
	total  uint32
	length uint64
	sum    [sha256.Size]byte
	chunks map[uint32][]byte
	bytes  int    // payload bytes held
	cost   int    // memory held, as counted against MaxBuffered
	last   uint64 // frame sequence of the latest chunk
	elem   *list.Element
}

// Estimates of the bookkeeping a reassembler holds besides chunk data
// (upper bounds for 64-bit Go maps and lists, growth slack included).
const (
	// chunkOverhead is one chunk's entry in its partial's map: a slot
	// of a uint32 key and a slice header (32 bytes) and its control
	// byte, at a load as low as 7/16 right after the table doubled (77
	// bytes), rounded up.
	chunkOverhead = 96
	// partialOverhead is one partial message: its struct, its list
	// element, its entry in the partials map (a key with the subject's
	// string header) and its chunks map's header and first group.
	partialOverhead = 512
)

// heldCost is the memory one chunk of n data bytes holds once copied:
// the allocation bytes.Clone makes (its size class) and its map entry.
// Chunks are copied so that a frame's other bytes (its header, or a
// larger buffer the frame came in) are never retained.
func heldCost(data []byte) ([]byte, int) {
	c := bytes.Clone(data)
	return c, cap(c) + chunkOverhead
}

// doneRing is how many completed (or failed) message ids a subscription
// remembers to recognize late duplicates: at most doneRing keys, each
// with a subject NATS bounds (its control line, 4 KiB by default).
const doneRing = 1024

// reassembler holds one subscription's partial messages. It is not safe
// for concurrent use.
type reassembler struct {
	lim      ChunkLimits
	c        *chunkCounters
	seq      uint64
	partials map[msgKey]*partial
	lru      list.List // *partial, least recently extended first
	buffered int
	done     map[msgKey]struct{}
	ring     []msgKey
	next     int
}

func newReassembler(lim ChunkLimits, c *chunkCounters) *reassembler {
	return &reassembler{lim: lim, c: c, partials: map[msgKey]*partial{}, done: map[msgKey]struct{}{}}
}

// add takes one frame (owned by the reassembler from now on) and returns
// a payload when the frame completes one.
func (r *reassembler) add(subject string, f []byte) ([]byte, bool) {
	r.c.frames.Add(1)
	r.seq++
	r.expire()
	if len(f) == 0 {
		r.c.malformed.Add(1)
		return nil, false
	}
	switch f[0] {
	case frameWhole:
		if len(f)-1 > r.lim.MaxMessage {
			r.c.malformed.Add(1)
			return nil, false
		}
		r.c.delivered.Add(1)
		return f[1:], true
	case frameChunk:
	default:
		r.c.malformed.Add(1)
		return nil, false
	}
	if len(f) <= ChunkHeaderLen {
		r.c.malformed.Add(1)
		return nil, false
	}
	var k msgKey
	k.subject = subject
	copy(k.id[:], f[1:17])
	index := binary.BigEndian.Uint32(f[17:21])
	total := binary.BigEndian.Uint32(f[21:25])
	length := binary.BigEndian.Uint64(f[25:33])
	sum := f[33:ChunkHeaderLen]
	data := f[ChunkHeaderLen:]
	if total == 0 || index >= total || length == 0 || length > uint64(r.lim.MaxMessage) ||
		uint64(total) > length || uint64(len(data)) > length {
		r.c.malformed.Add(1)
		return nil, false
	}
	if _, ok := r.done[k]; ok {
		r.c.duplicates.Add(1)
		return nil, false
	}
	p := r.partials[k]
	if p == nil {
		for len(r.partials) >= r.lim.MaxPartials {
			r.evict(r.lru.Front().Value.(*partial))
		}
		// The subject is the sender's choice under a wildcard
		// subscription: its bytes count too.
		p = &partial{key: k, total: total, length: length, chunks: map[uint32][]byte{}, cost: partialOverhead + len(subject)}
		copy(p.sum[:], sum)
		p.elem = r.lru.PushBack(p)
		r.partials[k] = p
		r.c.partials.Add(1)
		r.buffered += p.cost
		r.c.buffered.Add(int64(p.cost))
	} else {
		if p.total != total || p.length != length || !bytes.Equal(p.sum[:], sum) {
			r.c.malformed.Add(1)
			return nil, false
		}
		if _, dup := p.chunks[index]; dup {
			r.c.duplicates.Add(1)
			return nil, false
		}
		if uint64(p.bytes+len(data)) > p.length {
			r.c.malformed.Add(1)
			return nil, false
		}
		r.lru.MoveToBack(p.elem)
	}
	p.last = r.seq
	held, cost := heldCost(data)
	if p.cost+cost > r.lim.MaxBuffered {
		// This message alone would hold more than the limit (a sender
		// of tiny chunks): it can never complete.
		r.remove(p)
		r.markDone(k)
		r.c.malformed.Add(1)
		return nil, false
	}
	// Make room: evict the least recently extended other partials (p is
	// not the front while another one exists: the check above keeps p
	// alone within the limit).
	for r.buffered+cost > r.lim.MaxBuffered {
		front := r.lru.Front().Value.(*partial)
		if front == p {
			r.lru.MoveToBack(p.elem)
			continue
		}
		r.evict(front)
	}
	p.chunks[index] = held
	p.bytes += len(held)
	p.cost += cost
	r.buffered += cost
	r.c.buffered.Add(int64(cost))
	if uint32(len(p.chunks)) < p.total {
		return nil, false
	}
	r.remove(p)
	r.markDone(k)
	if uint64(p.bytes) != p.length {
		r.c.corrupt.Add(1)
		return nil, false
	}
	out := make([]byte, 0, p.length)
	for i := uint32(0); i < p.total; i++ {
		out = append(out, p.chunks[i]...)
	}
	if sha256.Sum256(out) != p.sum {
		r.c.corrupt.Add(1)
		return nil, false
	}
	r.c.reassembled.Add(1)
	r.c.delivered.Add(1)
	return out, true
}

// expire evicts the partials that received no chunk in MaxAge frames.
func (r *reassembler) expire() {
	for e := r.lru.Front(); e != nil; e = r.lru.Front() {
		p := e.Value.(*partial)
		if r.seq-p.last <= uint64(r.lim.MaxAge) {
			return
		}
		r.evict(p)
	}
}

func (r *reassembler) evict(p *partial) {
	r.remove(p)
	r.c.evicted.Add(1)
}

func (r *reassembler) remove(p *partial) {
	r.lru.Remove(p.elem)
	delete(r.partials, p.key)
	r.buffered -= p.cost
	r.c.buffered.Add(-int64(p.cost))
	r.c.partials.Add(-1)
}

func (r *reassembler) markDone(k msgKey) {
	if len(r.ring) < doneRing {
		r.ring = append(r.ring, k)
	} else {
		delete(r.done, r.ring[r.next])
		r.ring[r.next] = k
		r.next = (r.next + 1) % doneRing
	}
	r.done[k] = struct{}{}
}

// reset drops every partial (on unsubscribe).
func (r *reassembler) reset() {
	for e := r.lru.Front(); e != nil; e = r.lru.Front() {
		r.remove(e.Value.(*partial))
	}
}
