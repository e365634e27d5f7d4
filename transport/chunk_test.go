package transport

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/pairfed/pairfed/protocol"
)

func payload(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// recorder is a Transport that keeps what is published on it.
type recorder struct{ frames [][]byte }

func (r *recorder) Publish(_ string, d []byte) error {
	r.frames = append(r.frames, append([]byte(nil), d...))
	return nil
}
func (r *recorder) Subscribe(string, func(string, []byte)) (func(), error) { return func() {}, nil }
func (r *recorder) Close() error                                           { return nil }

// framesOf returns the frames Chunked(·, maxChunk) publishes for data.
func framesOf(t testing.TB, data []byte, maxChunk int) [][]byte {
	t.Helper()
	rec := &recorder{}
	if err := Chunked(rec, maxChunk).Publish("s", data); err != nil {
		t.Fatal(err)
	}
	return rec.frames
}

func chunkIndex(f []byte) int {
	if len(f) < ChunkHeaderLen || f[0] != frameChunk {
		return -1
	}
	return int(binary.BigEndian.Uint32(f[17:21]))
}

// memPair is a chunked receiver on a Mem hub and a raw endpoint to inject
// frames to it.
type memPair struct {
	hub  *Mem
	wire Transport
	rcv  *ChunkedTransport
	got  [][]byte
}

func newMemPair(t *testing.T, lim ChunkLimits) *memPair {
	p := &memPair{hub: NewMem()}
	p.wire = p.hub.Connect("wire")
	p.rcv = ChunkedWith(p.hub.Connect("rcv"), MinChunk, lim)
	if _, err := p.rcv.Subscribe("s", func(_ string, d []byte) { p.got = append(p.got, d) }); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *memPair) feed(t *testing.T, frames ...[]byte) {
	t.Helper()
	for _, f := range frames {
		if err := p.wire.Publish("s", f); err != nil {
			t.Fatal(err)
		}
	}
	p.hub.Flush(0)
}

var roundTripSizes = func(maxChunk int) []int {
	return []int{0, 1, maxChunk - 1, maxChunk, maxChunk + 1, 600_000, 5 << 20}
}

func TestChunkedRoundTripMem(t *testing.T) {
	for _, mc := range []int{1000, 64 << 10, MaxPayload} {
		t.Run(fmt.Sprint(mc), func(t *testing.T) {
			hub := NewMem()
			a, b := Chunked(hub.Connect("a"), mc), Chunked(hub.Connect("b"), mc)
			var got [][]byte
			if _, err := b.Subscribe("s", func(_ string, d []byte) { got = append(got, d) }); err != nil {
				t.Fatal(err)
			}
			sizes := roundTripSizes(mc)
			var wantFrames, wantSplit uint64
			for i, n := range sizes {
				if err := a.Publish("s", payload(n, uint64(i))); err != nil {
					t.Fatal(err)
				}
				if 1+n <= mc {
					wantFrames++
				} else {
					per := mc - ChunkHeaderLen
					wantFrames += uint64((n + per - 1) / per)
					wantSplit++
				}
			}
			hub.Flush(0)
			if len(got) != len(sizes) {
				t.Fatalf("%d messages delivered, want %d", len(got), len(sizes))
			}
			for i, n := range sizes {
				if !bytes.Equal(got[i], payload(n, uint64(i))) {
					t.Fatalf("message %d (%d bytes) differs (got %d bytes)", i, n, len(got[i]))
				}
			}
			s := a.Stats()
			if s.Sent != 7 || s.SentSplit != wantSplit || s.SentFrames != wantFrames {
				t.Errorf("sender stats %+v, want 7 sent, %d split, %d frames", s, wantSplit, wantFrames)
			}
			if pub, _ := hub.Stats(); uint64(pub) != wantFrames {
				t.Errorf("hub carried %d frames, want %d", pub, wantFrames)
			}
			r := b.Stats()
			if r.Delivered != 7 || r.Reassembled != wantSplit || r.Malformed+r.Corrupt+r.Duplicates+r.Evicted != 0 || r.Partials != 0 || r.Buffered != 0 {
				t.Errorf("receiver stats %+v", r)
			}
		})
	}
}

func natsRoundTrip(t *testing.T, s *server.Server, sizes []int) (pubStats, subStats ChunkStats) {
	pub, err := ConnectInProcess(s, "pub")
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	sub, err := ConnectInProcess(s, "sub")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ch := make(chan []byte, len(sizes))
	unsub, err := sub.Subscribe("pairfed.t.big", func(_ string, d []byte) { ch <- d })
	if err != nil {
		t.Fatal(err)
	}
	defer unsub()
	for i, n := range sizes {
		if err := pub.Publish("pairfed.t.big", payload(n, uint64(i))); err != nil {
			t.Fatalf("publish %d bytes: %v", n, err)
		}
	}
	for i, n := range sizes {
		select {
		case d := <-ch:
			if !bytes.Equal(d, payload(n, uint64(i))) {
				t.Fatalf("message %d (%d bytes) differs (got %d bytes)", i, n, len(d))
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("timeout waiting for message %d (%d bytes)", i, n)
		}
	}
	return pub.ChunkStats(), sub.ChunkStats()
}

func TestChunkedRoundTripNATS(t *testing.T) {
	s, err := StartEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	sizes := roundTripSizes(MaxPayload)
	ps, ss := natsRoundTrip(t, s, sizes)
	// MaxPayload, MaxPayload+1 and 5 MB are split; 600 kB fits a frame.
	if ps.Sent != 7 || ps.SentSplit != 3 || ps.SentFrames != 1+1+1+2+2+1+6 {
		t.Errorf("publisher stats %+v", ps)
	}
	if ss.Delivered != 7 || ss.Reassembled != 3 || ss.Malformed+ss.Corrupt+ss.Duplicates+ss.Evicted != 0 {
		t.Errorf("subscriber stats %+v", ss)
	}
	if err := func() error {
		p, err := ConnectInProcess(s, "big")
		if err != nil {
			return err
		}
		defer p.Close()
		return p.Publish("x", make([]byte, MaxMessage+1))
	}(); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over MaxMessage: %v", err)
	}
}

// TestChunkedNATSSmallServerLimit: frames shrink to a server's smaller
// max_payload.
func TestChunkedNATSSmallServerLimit(t *testing.T) {
	s, err := server.NewServer(&server.Options{DontListen: true, NoLog: true, NoSigs: true, MaxPayload: 4096})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	defer s.Shutdown()
	ps, ss := natsRoundTrip(t, s, []int{0, 4095, 4096, 600_000})
	per := 4096 - ChunkHeaderLen
	if want := uint64(1 + 1 + 2 + (600_000+per-1)/per); ps.SentFrames != want {
		t.Errorf("%d frames, want %d", ps.SentFrames, want)
	}
	if ss.Reassembled != 2 {
		t.Errorf("subscriber stats %+v", ss)
	}
}

func TestChunkedOutOfOrderDuplicates(t *testing.T) {
	p := newMemPair(t, ChunkLimits{})
	a, b := payload(10_000, 1), payload(5_000, 2)
	fa, fb := framesOf(t, a, 1000), framesOf(t, b, 1000)
	if len(fa) != 11 || len(fb) != 6 {
		t.Fatalf("%d and %d frames", len(fa), len(fb))
	}
	// a reversed, b interleaved, duplicates of both, and a duplicate of a
	// chunk of a after a completed.
	var order [][]byte
	for i := len(fa) - 1; i >= 1; i-- {
		order = append(order, fa[i])
		if i < len(fb) {
			order = append(order, fb[i], fb[i])
		}
		if i == 5 {
			order = append(order, fa[7])
		}
	}
	order = append(order, fa[0], fb[0], fa[3], fb[2])
	p.feed(t, order...)
	if len(p.got) != 2 || !bytes.Equal(p.got[0], a) || !bytes.Equal(p.got[1], b) {
		t.Fatalf("delivered %d messages, want a then b", len(p.got))
	}
	s := p.rcv.Stats()
	if s.Duplicates != 5+1+2 || s.Reassembled != 2 || s.Malformed+s.Corrupt+s.Evicted != 0 || s.Partials != 0 || s.Buffered != 0 {
		t.Errorf("stats %+v", s)
	}

	// Delays of the hub reorder chunks between two chunked endpoints.
	hub := NewMem()
	snd, rcv := Chunked(hub.Connect("a"), 1000), Chunked(hub.Connect("b"), 1000)
	var got [][]byte
	_, _ = rcv.Subscribe("s", func(_ string, d []byte) { got = append(got, d) })
	hub.SetFilter(func(e Envelope) Action { return Action{Delay: (chunkIndex(e.Data) * 7) % 5} })
	_ = snd.Publish("s", a)
	_ = snd.Publish("s", b)
	hub.Flush(0)
	if len(got) != 2 || !(bytes.Equal(got[0], a) && bytes.Equal(got[1], b) || bytes.Equal(got[0], b) && bytes.Equal(got[1], a)) {
		t.Fatalf("delayed: delivered %d messages", len(got))
	}
}

// cost is what MaxBuffered counts for chunks of these data lengths in
// one partial message.
func cost(lens ...int) int64 {
	c := int64(partialOverhead + len("s"))
	for _, n := range lens {
		_, k := heldCost(make([]byte, n))
		c += int64(k)
	}
	return c
}

func TestChunkedDroppedChunkEvicted(t *testing.T) {
	hub := NewMem()
	lim := ChunkLimits{MaxAge: 8}
	snd, rcv := ChunkedWith(hub.Connect("a"), 1000, lim), ChunkedWith(hub.Connect("b"), 1000, lim)
	var got [][]byte
	_, _ = rcv.Subscribe("s", func(_ string, d []byte) { got = append(got, d) })
	dropped := false
	hub.SetFilter(func(e Envelope) Action {
		if chunkIndex(e.Data) == 2 && !dropped {
			dropped = true
			return Action{Drop: true}
		}
		return Action{}
	})
	big := payload(10_000, 3)
	_ = snd.Publish("s", big)
	hub.Flush(0)
	if s := rcv.Stats(); len(got) != 0 || s.Partials != 1 || s.Buffered != cost(935, 935, 935, 935, 935, 935, 935, 935, 935, 650) {
		t.Fatalf("after a lost chunk: %d delivered, stats %+v", len(got), s)
	}
	for i := 0; i < 8; i++ {
		_ = snd.Publish("s", []byte{byte(i)})
		hub.Flush(0)
		if s := rcv.Stats(); s.Evicted != 0 {
			t.Fatalf("evicted after %d later frames", i+1)
		}
	}
	_ = snd.Publish("s", []byte("ninth"))
	hub.Flush(0)
	if s := rcv.Stats(); s.Evicted != 1 || s.Partials != 0 || s.Buffered != 0 || len(got) != 9 {
		t.Fatalf("after MaxAge frames: %d delivered, stats %+v", len(got), s)
	}
	// The same message again gets through.
	_ = snd.Publish("s", big)
	hub.Flush(0)
	if len(got) != 10 || !bytes.Equal(got[9], big) {
		t.Fatal("retransmission not delivered")
	}
}

func TestChunkedPartialBounds(t *testing.T) {
	// MaxPartials: a third open message evicts the oldest.
	p := newMemPair(t, ChunkLimits{MaxPartials: 2})
	m := [][][]byte{framesOf(t, payload(3000, 1), 1000), framesOf(t, payload(3000, 2), 1000), framesOf(t, payload(3000, 3), 1000)}
	p.feed(t, m[0][0], m[1][0], m[1][1], m[2][0])
	if s := p.rcv.Stats(); s.Evicted != 1 || s.Partials != 2 {
		t.Fatalf("MaxPartials: %+v", s)
	}
	p.feed(t, m[1][2], m[1][3], m[2][1], m[2][2], m[2][3], m[0][1], m[0][2], m[0][3])
	if len(p.got) != 2 {
		t.Fatalf("%d delivered, want messages 1 and 2", len(p.got))
	}

	// MaxBuffered: the least recently extended partial goes first. Room
	// for two partials of two chunks each, not for a fifth chunk.
	two := cost(935, 935)
	p = newMemPair(t, ChunkLimits{MaxMessage: 4000, MaxBuffered: int(2*two + 100)})
	p.feed(t, m[0][0], m[0][1], m[1][0], m[1][1])
	if s := p.rcv.Stats(); s.Evicted != 0 || s.Buffered != 2*two {
		t.Fatalf("MaxBuffered: %+v", s)
	}
	p.feed(t, m[0][2]) // message 1 goes
	if s := p.rcv.Stats(); s.Evicted != 1 || s.Buffered != cost(935, 935, 935) || s.Partials != 1 {
		t.Fatalf("MaxBuffered: %+v", s)
	}
	p.feed(t, m[0][3], m[1][2], m[1][3])
	if len(p.got) != 1 || !bytes.Equal(p.got[0], payload(3000, 1)) {
		t.Fatalf("%d delivered, want message 0 only", len(p.got))
	}
	if s := p.rcv.Stats(); s.Partials != 1 || s.Buffered != cost(935, 195) {
		t.Fatalf("after: %+v", s)
	}
}

func TestChunkedCorruptAndMalformed(t *testing.T) {
	p := newMemPair(t, ChunkLimits{MaxMessage: 100_000})
	data := payload(5000, 4)
	fr := framesOf(t, data, 1000)
	bad := append([]byte(nil), fr[1]...)
	bad[ChunkHeaderLen+10] ^= 1
	p.feed(t, fr[0], bad, fr[2], fr[3], fr[4], fr[5])
	if s := p.rcv.Stats(); len(p.got) != 0 || s.Corrupt != 1 || s.Partials != 0 || s.Buffered != 0 {
		t.Fatalf("corrupt chunk: %d delivered, stats %+v", len(p.got), s)
	}
	p.feed(t, fr[1]) // the good chunk, late: the message is done with
	if s := p.rcv.Stats(); len(p.got) != 0 || s.Duplicates != 1 {
		t.Fatalf("late chunk of a failed message: stats %+v", s)
	}

	other := framesOf(t, data, 1000)
	with := func(f []byte, off int, v uint64, size int) []byte {
		f = append([]byte(nil), f...)
		switch size {
		case 4:
			binary.BigEndian.PutUint32(f[off:], uint32(v))
		case 8:
			binary.BigEndian.PutUint64(f[off:], v)
		}
		return f
	}
	malformed := [][]byte{
		{},
		{0x01, 2, 3},
		other[0][:ChunkHeaderLen],      // no data
		other[0][:20],                  // short header
		with(other[0], 17, 6, 4),       // index ≥ total
		with(other[0], 21, 0, 4),       // total 0
		with(other[0], 25, 0, 8),       // length 0
		with(other[0], 25, 100_001, 8), // over MaxMessage
		with(other[0], 25, 3, 8),       // more chunks than bytes
		append([]byte{frameWhole}, make([]byte, 100_001)...), // whole, over MaxMessage
	}
	p.feed(t, malformed...)
	if s := p.rcv.Stats(); s.Malformed != uint64(len(malformed)) || s.Partials != 0 {
		t.Fatalf("malformed: stats %+v, want %d malformed", s, len(malformed))
	}
	// Chunks that disagree with the first one of their message.
	p.feed(t, other[0], with(other[1], 21, 7, 4), with(other[1], 25, 4999, 8))
	if s := p.rcv.Stats(); s.Malformed != uint64(len(malformed))+2 || s.Partials != 1 {
		t.Fatalf("inconsistent: stats %+v", s)
	}
	bh := append([]byte(nil), other[1]...)
	bh[40] ^= 1 // hash differs
	p.feed(t, bh)
	if s := p.rcv.Stats(); s.Malformed != uint64(len(malformed))+3 || s.Partials != 1 || s.Buffered != cost(935) {
		t.Fatalf("hash mismatch between chunks: stats %+v", s)
	}
	p.feed(t, other[1:]...)
	if s := p.rcv.Stats(); len(p.got) != 1 || !bytes.Equal(p.got[0], data) || s.Duplicates != 1 || s.Partials != 0 {
		t.Fatal("the consistent chunks did not make the message")
	}
}

func TestChunkedLimits(t *testing.T) {
	c := ChunkedWith(&recorder{}, 1000, ChunkLimits{MaxMessage: 5000})
	if err := c.Publish("s", make([]byte, 5001)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over MaxMessage: %v", err)
	}
	if err := c.Publish("s", make([]byte, 5000)); err != nil {
		t.Error(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic for a chunk size below MinChunk")
		}
	}()
	Chunked(&recorder{}, MinChunk-1)
}

// TestProtocolFitsTransport: every message the protocol encodes must fit
// the transport.
func TestProtocolFitsTransport(t *testing.T) {
	if protocol.MaxMessageSize > MaxMessage {
		t.Fatalf("protocol.MaxMessageSize %d over transport.MaxMessage %d", protocol.MaxMessageSize, MaxMessage)
	}
}

func TestChunkedConcurrentNATSPublishers(t *testing.T) {
	s, err := StartEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	sub, err := ConnectInProcess(s, "sub")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	const pubs, each = 4, 3
	var mu sync.Mutex
	got := map[int]bool{}
	done := make(chan struct{})
	_, err = sub.Subscribe("s", func(_ string, d []byte) {
		mu.Lock()
		defer mu.Unlock()
		if !bytes.Equal(d, payload(len(d), uint64(len(d)))) || got[len(d)] {
			t.Errorf("message of %d bytes corrupt or repeated", len(d))
		}
		got[len(d)] = true
		if len(got) == pubs*each {
			close(done)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < pubs; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := ConnectInProcess(s, fmt.Sprint("pub", i))
			if err != nil {
				t.Error(err)
				return
			}
			defer p.Close()
			for j := 0; j < each; j++ {
				n := 1_500_000 + i*1000 + j // distinct lengths name the messages
				if err := p.Publish("s", payload(n, uint64(n))); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("timeout")
	}
	if st := sub.ChunkStats(); st.Reassembled != pubs*each || st.Malformed+st.Corrupt+st.Evicted != 0 {
		t.Errorf("stats %+v", st)
	}
}

// FuzzReassembler feeds arbitrary frames (each prefixed by a 2-byte
// length) to a reassembler with small limits: it must not panic and must
// keep its bounds.
func FuzzReassembler(f *testing.F) {
	enc := func(frames ...[]byte) []byte {
		var b []byte
		for _, fr := range frames {
			b = binary.BigEndian.AppendUint16(b, uint16(len(fr)))
			b = append(b, fr...)
		}
		return b
	}
	fr := framesOf(f, payload(1000, 5), MinChunk+100)
	f.Add(enc(fr...))
	f.Add(enc(fr[2], fr[0], fr[1], fr[1], fr[3], fr[4], fr[5]))
	f.Add(enc(fr[0], fr[1]))
	f.Add(enc([]byte{frameWhole, 1, 2, 3}, []byte{frameChunk}, nil))
	f.Fuzz(func(t *testing.T, in []byte) {
		lim := ChunkLimits{MaxMessage: 2048, MaxPartials: 3, MaxBuffered: 3000, MaxAge: 5}.normalize()
		var c chunkCounters
		r := newReassembler(lim, &c)
		for len(in) >= 2 {
			n := int(binary.BigEndian.Uint16(in))
			in = in[2:]
			n = min(n, len(in))
			frame := append([]byte(nil), in[:n]...)
			in = in[n:]
			subject := "s"
			if n%2 == 1 {
				subject = "t"
			}
			out, ok := r.add(subject, frame)
			if ok && len(out) > lim.MaxMessage {
				t.Fatalf("delivered %d bytes over MaxMessage", len(out))
			}
			if len(r.partials) > lim.MaxPartials || r.buffered > lim.MaxBuffered || r.buffered < 0 {
				t.Fatalf("%d partials, %d bytes buffered", len(r.partials), r.buffered)
			}
			if c.partials.Load() != int64(len(r.partials)) || c.buffered.Load() != int64(r.buffered) || r.lru.Len() != len(r.partials) {
				t.Fatal("counters out of step")
			}
		}
		r.reset()
		if c.partials.Load() != 0 || c.buffered.Load() != 0 {
			t.Fatal("reset left partials")
		}
	})
}

// A peer that sends a message in chunks of one data byte makes the
// receiver hold far more than the data (each chunk's copy and map entry):
// what MaxBuffered counts is the real cost, so the message is dropped
// once it alone would exceed the limit, and the heap stays near it.
func TestChunkedTinyChunksAccounted(t *testing.T) {
	const maxMsg, maxBuf = 1 << 20, 4 << 20
	p := newMemPair(t, ChunkLimits{MaxMessage: maxMsg, MaxBuffered: maxBuf})
	f := make([]byte, ChunkHeaderLen+1)
	f[0] = frameChunk
	f[1] = 7 // id
	binary.BigEndian.PutUint32(f[21:25], maxMsg)
	binary.BigEndian.PutUint64(f[25:33], maxMsg)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	// Chunks up to the limit are held (and counted).
	_, per := heldCost(f[ChunkHeaderLen:])
	n := (maxBuf - partialOverhead - 1) / per
	for i := 0; i < n; i++ {
		binary.BigEndian.PutUint32(f[17:21], uint32(i))
		p.feed(t, f)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	s := p.rcv.Stats()
	if s.Partials != 1 || s.Buffered != int64(partialOverhead+1+n*per) || s.Malformed != 0 {
		t.Fatalf("after %d chunks: %+v", n, s)
	}
	// The count is the real size: the live heap grew by no more than
	// counted (the map's growth slack included), where counting only the
	// data bytes would have admitted 4 Mi chunks.
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if grown > s.Buffered {
		t.Errorf("live heap grew by %d bytes holding %d chunks, counted %d", grown, n, s.Buffered)
	}
	t.Logf("%d one-byte chunks: %d bytes counted, live heap +%d", n, s.Buffered, grown)
	// One more would take the message over MaxBuffered: it is dropped.
	binary.BigEndian.PutUint32(f[17:21], uint32(n))
	p.feed(t, f)
	if s := p.rcv.Stats(); s.Malformed != 1 || s.Partials != 0 || s.Buffered != 0 || len(p.got) != 0 {
		t.Fatalf("stats %+v", s)
	}
	// Later chunks of the dropped message are duplicates, not a new partial.
	binary.BigEndian.PutUint32(f[17:21], uint32(n+1))
	p.feed(t, f)
	if s := p.rcv.Stats(); s.Duplicates != 1 || s.Partials != 0 {
		t.Errorf("after the drop: %+v", s)
	}
	// An honest message of MaxMessage bytes in the smallest frames fits
	// under the default limits.
	p = newMemPair(t, ChunkLimits{MaxMessage: maxMsg})
	data := payload(maxMsg, 9)
	p.feed(t, framesOf(t, data, MinChunk)...)
	if len(p.got) != 1 || !bytes.Equal(p.got[0], data) {
		t.Fatalf("a %d-byte message in %d-byte frames was not delivered: %+v", maxMsg, MinChunk, p.rcv.Stats())
	}
}
