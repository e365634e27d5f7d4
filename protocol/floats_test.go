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

// Encode writes float arrays straight into its buffer and Decode reads
// them straight from the message: the bytes are a plain msgpack encoder's,
// and arrays the direct read declines (other number encodings) go through
// the general path to the same values; a truncated array is refused.
func TestCodecFloatsDirect(t *testing.T) {
	plain := func(m Message) []byte {
		var buf bytes.Buffer
		buf.WriteByte(byte(m.Kind()))
		enc := msgpack.NewEncoder(&buf)
		if err := enc.EncodeArrayLen(2); err != nil {
			t.Fatal(err)
		}
		if err := enc.EncodeUint16(Version); err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode(m); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	model := make([]float64, 40) // array16 from 16 elements on
	for i := range model {
		model[i] = math.Ldexp(float64(i)-17.5, i-20)
	}
	msgs := []Message{
		&PhaseStart{Job: "j", Phase: 1, Model: model[:3]},
		&PhaseStart{Job: "j", Phase: 2, Model: model},
		&SiteUpdate{Job: "j", Site: "s", Phase: 1, Model: model[:20], Last: model[5:25], Weight: 3, Sigmas: []float64{0.5}},
		&Result{Job: "j", Phases: 1, Model: model[:1], Sites: []string{"s"}},
	}
	for _, m := range msgs {
		b, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		if want := plain(m); !bytes.Equal(b, want) {
			t.Fatalf("%v: Encode %x, plain msgpack %x", m.Kind(), b, want)
		}
		got, err := Decode(b)
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Fatalf("%v: Decode %+v, %v; want %+v", m.Kind(), got, err, m)
		}
		for cut := len(b) - 1; cut > len(b)-20 && cut > 1; cut-- {
			if _, err := Decode(b[:cut]); err == nil {
				t.Fatalf("%v cut to %d bytes decoded", m.Kind(), cut)
			}
		}
	}
	// A model written with an integer and a float32 element: the direct
	// read declines, the general path reads 1, 2, 1.5.
	var buf bytes.Buffer
	buf.WriteByte(byte(KindPhaseStart))
	enc := msgpack.NewEncoder(&buf)
	_ = enc.EncodeArrayLen(2)
	_ = enc.EncodeUint16(Version)
	_ = enc.EncodeMapLen(3)
	_ = enc.EncodeString("job")
	_ = enc.EncodeString("j")
	_ = enc.EncodeString("phase")
	_ = enc.EncodeInt(1)
	_ = enc.EncodeString("model")
	_ = enc.EncodeArrayLen(3)
	_ = enc.EncodeInt(1)
	_ = enc.EncodeFloat64(2)
	_ = enc.EncodeFloat32(1.5)
	got, err := Decode(buf.Bytes())
	if err != nil || !reflect.DeepEqual(got, &PhaseStart{Job: "j", Phase: 1, Model: []float64{1, 2, 1.5}}) {
		t.Fatalf("mixed encodings: %+v, %v", got, err)
	}
}
