package protocol

import (
	"bytes"

	"github.com/vmihailenco/msgpack/v5"
)

// encodeUnchecked encodes without validation, with any version: tests use
// it to build malformed-but-parseable input.
func encodeUnchecked(m Message, version uint16) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte(byte(m.Kind()))
	enc := msgpack.NewEncoder(&buf)
	if err := enc.EncodeArrayLen(2); err != nil {
		return nil, err
	}
	if err := enc.EncodeUint16(version); err != nil {
		return nil, err
	}
	var v any = m
	if p, ok := m.(*joinPlusMsg); ok {
		v = p.V
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
