package protocol

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
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
	buf := encodeBufs.Get().(*bytes.Buffer)
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
var encodeBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

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
	r := bytes.NewReader(b[1:])
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
