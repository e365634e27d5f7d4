package protocol

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"reflect"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// Encode validates m and returns its wire form: the Kind byte followed by
// the msgpack array [Version, m]. It refuses invalid messages (a state
// machine never sends what Decode would reject) and encodings over
// MaxMessageSize (wrapping ErrTooLarge). m is not modified.
func Encode(m Message) ([]byte, error) {
	if m == nil {
		return nil, fmt.Errorf("protocol: encode nil message")
	}
	if newMessage(m.Kind()) == nil {
		return nil, fmt.Errorf("protocol: encode unknown %v", m.Kind())
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("protocol: encode %v: %w", m.Kind(), err)
	}
	// A pooled buffer and encoder: the result is copied out once, at its
	// size (encoding into a fresh buffer grew it several times).
	buf := encodeBufs.Get().(*codecBuffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			encodeBufs.Put(buf)
		}
	}()
	buf.WriteByte(byte(m.Kind()))
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(buf)
	if err := enc.EncodeArrayLen(2); err != nil {
		return nil, err
	}
	if err := enc.EncodeUint16(Version); err != nil {
		return nil, err
	}
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("protocol: encode %v: %w", m.Kind(), err)
	}
	if buf.Len() > MaxMessageSize {
		return nil, fmt.Errorf("protocol: encoded %v of %d bytes exceeds %d: %w", m.Kind(), buf.Len(), MaxMessageSize, ErrTooLarge)
	}
	return bytes.Clone(buf.Bytes()), nil
}

// encodeBufs holds Encode's buffers for reuse; one that grew beyond
// maxPooledBuffer is left to the collector.
var encodeBufs = sync.Pool{New: func() any { return new(codecBuffer) }}

// codecBuffer is the buffer Encode writes into and codecReader the reader
// Decode reads from. Encode and Decode set no msgpack option, so a
// []float64 written into a codecBuffer is EncodeFloat64's bytes (0xcb and
// the 8 big-endian bytes of each number), which encodeFloats then writes
// directly; decodeFloats reads such an array straight from a
// codecReader's bytes. Other writers and readers take the general path.
type codecBuffer struct{ bytes.Buffer }

type codecReader struct {
	bytes.Reader
	b []byte // what Reader reads
}

const maxPooledBuffer = 64 << 10

// Decode parses and validates one message. It never panics; on success
// the message is one of the pointer types of this package and satisfies
// its Validate. It rejects input over MaxMessageSize, unknown kinds and
// versions, unknown fields and trailing bytes.
func Decode(b []byte) (Message, error) {
	if len(b) > MaxMessageSize {
		return nil, fmt.Errorf("protocol: message of %d bytes exceeds %d: %w", len(b), MaxMessageSize, ErrTooLarge)
	}
	if len(b) < 2 {
		return nil, fmt.Errorf("protocol: message of %d bytes is too short", len(b))
	}
	k := Kind(b[0])
	m := newMessage(k)
	if m == nil {
		return nil, fmt.Errorf("protocol: unknown message %v", k)
	}
	if err := scanMsgpack(b[1:]); err != nil {
		return nil, fmt.Errorf("protocol: %v: %w", k, err)
	}
	r := &codecReader{b: b[1:]}
	r.Reset(r.b)
	dec := msgpack.GetDecoder() // Reset clears every option: set them after
	defer msgpack.PutDecoder(dec)
	dec.Reset(r)
	dec.DisallowUnknownFields(true)
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return nil, fmt.Errorf("protocol: %v: envelope: %w", k, err)
	}
	if n != 2 {
		return nil, fmt.Errorf("protocol: %v: envelope has %d elements, want 2", k, n)
	}
	v, err := dec.DecodeUint16()
	if err != nil {
		return nil, fmt.Errorf("protocol: %v: version: %w", k, err)
	}
	if !knownVersions[v] {
		return nil, fmt.Errorf("protocol: %v: unknown protocol version %d (this build speaks %d)", k, v, Version)
	}
	if err := dec.Decode(m); err != nil {
		return nil, fmt.Errorf("protocol: %v: %w", k, err)
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("protocol: %v: %d trailing bytes", k, r.Len())
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// msgpack encodes and decodes a []float64 (models, updates, gradients)
// element by element through its per-type table, a sync.Map lookup per
// number: half the cost of a site update of 2·123 numbers. These do the
// same with one Encoder or Decoder call per number — the same bytes
// (nil, an array header, a float64 each), the same values and errors
// (DecodeFloat64 accepts what the element decoder accepts). Registered
// for the exact type []float64 only.
func init() {
	msgpack.Register([]float64(nil), encodeFloats, decodeFloats)
}

func encodeFloats(e *msgpack.Encoder, v reflect.Value) error {
	if v.IsNil() {
		return e.EncodeNil()
	}
	n := v.Len()
	if err := e.EncodeArrayLen(n); err != nil {
		return err
	}
	if cb, ok := e.Writer().(*codecBuffer); ok && v.CanInterface() {
		out := cb.AvailableBuffer()
		for _, f := range v.Interface().([]float64) {
			out = binary.BigEndian.AppendUint64(append(out, msgpcode.Double), math.Float64bits(f))
		}
		cb.Write(out)
		return nil
	}
	for i := range n {
		if err := e.EncodeFloat64(v.Index(i).Float()); err != nil {
			return err
		}
	}
	return nil
}

func decodeFloats(d *msgpack.Decoder, v reflect.Value) error {
	if cr, ok := d.Buffered().(*codecReader); ok {
		pos := int(cr.Size()) - cr.Len()
		if s, used, ok := rawFloats(cr.b[pos:]); ok {
			if _, err := cr.Seek(int64(used), io.SeekCurrent); err != nil {
				return err
			}
			v.Set(reflect.ValueOf(s))
			return nil
		}
	}
	n, err := d.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n == -1 {
		v.SetZero()
		return nil
	}
	// n is at most the bytes left (scanMsgpack checked every declared
	// length against the message), so this allocation is bounded.
	s := make([]float64, n)
	for i := range s {
		if s[i], err = d.DecodeFloat64(); err != nil {
			return err
		}
	}
	v.Set(reflect.ValueOf(s))
	return nil
}

// rawFloats reads a msgpack array of float64s (0xcb each) at the start of
// b: the numbers and the bytes used. ok is false for anything else — nil,
// another element type, a short input — which the decoder's general path
// then reads (and rejects if it must).
func rawFloats(b []byte) (s []float64, used int, ok bool) {
	if len(b) == 0 {
		return nil, 0, false
	}
	var n, hdr int
	switch c := b[0]; {
	case c >= msgpcode.FixedArrayLow && c <= msgpcode.FixedArrayHigh:
		n, hdr = int(c&msgpcode.FixedArrayMask), 1
	case c == msgpcode.Array16 && len(b) >= 3:
		n, hdr = int(binary.BigEndian.Uint16(b[1:])), 3
	case c == msgpcode.Array32 && len(b) >= 5:
		n, hdr = int(binary.BigEndian.Uint32(b[1:])), 5
	default:
		return nil, 0, false
	}
	if n > (len(b)-hdr)/9 {
		return nil, 0, false
	}
	body := b[hdr : hdr+9*n]
	for k := 0; k < len(body); k += 9 {
		if body[k] != msgpcode.Double {
			return nil, 0, false
		}
	}
	s = make([]float64, n)
	for i := range s {
		s[i] = math.Float64frombits(binary.BigEndian.Uint64(body[9*i+1:]))
	}
	return s, hdr + 9*n, true
}
