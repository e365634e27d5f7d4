package protocol

import (
	"encoding/binary"
	"fmt"
)

// scanMsgpack walks the msgpack encoding in b without allocating and
// checks that it is exactly one well-formed value whose every declared
// length fits in the bytes that remain.
//
// Decode runs it before handing bytes to msgpack/v5 because v5.4.1
// allocates a declared array length up front (decodeSliceValue's
// allocation limit test, `flags&disableAllocLimitFlag != 1`, is always
// true), so a 5-byte header "dd 93 30 30 30" would make the decoder
// allocate 2.47e9 float64s — ~20 GB — before noticing the message is
// 60 bytes long. Every array element and map key/value needs at least one
// byte, so a count larger than the remaining input is a lie and is
// rejected here in O(len(b)) time.
func scanMsgpack(b []byte) error {
	pos := 0
	pending := 1 // values still to read
	need := func(n uint64, what string) error {
		if n > uint64(len(b)-pos) {
			return fmt.Errorf("msgpack: %s of %d bytes at offset %d overruns the %d-byte message", what, n, pos, len(b))
		}
		return nil
	}
	// length reads an n-byte big-endian length at pos.
	length := func(n int) (uint64, error) {
		if err := need(uint64(n), "length"); err != nil {
			return 0, err
		}
		var v uint64
		switch n {
		case 1:
			v = uint64(b[pos])
		case 2:
			v = uint64(binary.BigEndian.Uint16(b[pos:]))
		case 4:
			v = uint64(binary.BigEndian.Uint32(b[pos:]))
		}
		pos += n
		return v, nil
	}
	skip := func(n uint64, what string) error {
		if err := need(n, what); err != nil {
			return err
		}
		pos += int(n)
		return nil
	}
	// items adds n values (arrays: n, maps: 2n) after checking that the
	// rest of the input could hold them.
	items := func(n uint64, what string) error {
		if n > uint64(len(b)-pos) {
			return fmt.Errorf("msgpack: %s declares %d elements at offset %d but only %d bytes remain", what, n, pos, len(b)-pos)
		}
		pending += int(n)
		return nil
	}
	for pending > 0 {
		if pos >= len(b) {
			return fmt.Errorf("msgpack: truncated at offset %d", pos)
		}
		c := b[pos]
		pos++
		pending--
		var err error
		switch {
		case c <= 0x7f, c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
			// fixint, nil, bool: the byte is the value
		case c >= 0x80 && c <= 0x8f:
			err = items(2*uint64(c&0x0f), "map")
		case c >= 0x90 && c <= 0x9f:
			err = items(uint64(c&0x0f), "array")
		case c >= 0xa0 && c <= 0xbf:
			err = skip(uint64(c&0x1f), "string")
		default:
			err = scanCode(c, length, skip, items)
		}
		if err != nil {
			return err
		}
	}
	if pos != len(b) {
		return fmt.Errorf("msgpack: %d trailing bytes", len(b)-pos)
	}
	return nil
}

// scanCode handles the msgpack type codes 0xc1–0xdf that carry a size.
func scanCode(c byte, length func(int) (uint64, error), skip func(uint64, string) error, items func(uint64, string) error) error {
	sized := func(lenBytes int, what string, extra uint64, then func(uint64, string) error, mult uint64) error {
		n, err := length(lenBytes)
		if err != nil {
			return err
		}
		return then(mult*n+extra, what)
	}
	switch c {
	case 0xc4, 0xd9: // bin8, str8
		return sized(1, "string", 0, skip, 1)
	case 0xc5, 0xda: // bin16, str16
		return sized(2, "string", 0, skip, 1)
	case 0xc6, 0xdb: // bin32, str32
		return sized(4, "string", 0, skip, 1)
	case 0xc7: // ext8: length, type, data
		return sized(1, "ext", 1, skip, 1)
	case 0xc8:
		return sized(2, "ext", 1, skip, 1)
	case 0xc9:
		return sized(4, "ext", 1, skip, 1)
	case 0xca: // float32
		return skip(4, "float32")
	case 0xcb: // float64
		return skip(8, "float64")
	case 0xcc, 0xd0:
		return skip(1, "integer")
	case 0xcd, 0xd1:
		return skip(2, "integer")
	case 0xce, 0xd2:
		return skip(4, "integer")
	case 0xcf, 0xd3:
		return skip(8, "integer")
	case 0xd4:
		return skip(2, "fixext")
	case 0xd5:
		return skip(3, "fixext")
	case 0xd6:
		return skip(5, "fixext")
	case 0xd7:
		return skip(9, "fixext")
	case 0xd8:
		return skip(17, "fixext")
	case 0xdc:
		return sized(2, "array", 0, items, 1)
	case 0xdd:
		return sized(4, "array", 0, items, 1)
	case 0xde:
		return sized(2, "map", 0, items, 2)
	case 0xdf:
		return sized(4, "map", 0, items, 2)
	}
	return fmt.Errorf("msgpack: invalid type code 0x%02x", c)
}
