package protocol

import (
	"bytes"
	"math"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// plainFloats is []float64 under another name: msgpack's own element-wise
// codec, the reference for the registered []float64 one.
type plainFloats []float64

// The registered []float64 codec writes msgpack's own bytes and reads
// every encoding msgpack's own decoder reads (nil, empty, floats of both
// widths, integers) to the same values, and fails where it fails.
func TestFloatsCodecMatchesMsgpack(t *testing.T) {
	for _, v := range [][]float64{nil, {}, {0, math.Copysign(0, -1), 1, -2.5, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.NaN()}} {
		a, err := msgpack.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b, err := msgpack.Marshal(plainFloats(v))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("%v: registered codec wrote %x, msgpack %x", v, a, b)
		}
	}
	inputs := [][]byte{
		{0xc0},                         // nil
		{0x90},                         // empty
		{0x93, 0x01, 0xff, 0xcc, 0xc8}, // integers 1, −1, 200
		{0x92, 0xca, 0x3f, 0xc0, 0x00, 0x00, 0xcb, 0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18}, // float32 1.5, float64 π
		{0x91, 0xa1, 'x'}, // a string: error
		{0x92, 0x01},      // truncated: error
		{0xa1, 'x'},       // not an array: error
	}
	for _, in := range inputs {
		var a []float64
		var b plainFloats
		errA := msgpack.Unmarshal(in, &a)
		errB := msgpack.Unmarshal(in, &b)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("%x: registered codec error %v, msgpack %v", in, errA, errB)
		}
		if errA == nil && (!reflect.DeepEqual(a, []float64(b)) || (a == nil) != (b == nil)) {
			t.Fatalf("%x: registered codec read %#v, msgpack %#v", in, a, b)
		}
	}
}
