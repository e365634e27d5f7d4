package main

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// xdr builds an R serialization stream by hand (the format rda.go reads).
type xdr struct{ b []byte }

func (w *xdr) i(v int32) *xdr {
	w.b = binary.BigEndian.AppendUint32(w.b, uint32(v))
	return w
}

func (w *xdr) str(s string) *xdr { // a CHARSXP
	w.i(rChar | 1<<18) // UTF-8 flag as R writes it (ignored by the reader)
	w.i(int32(len(s)))
	w.b = append(w.b, s...)
	return w
}

func (w *xdr) sym(s string) *xdr { w.i(rSym); return w.str(s) }

func (w *xdr) strs(ss ...string) *xdr {
	w.i(rStr).i(int32(len(ss)))
	for _, s := range ss {
		w.str(s)
	}
	return w
}

// frame returns a serialized .rda holding df = data.frame(x = c(1.5, 2,
// 3), f = factor(c("b", "a", "b"))), with row.names as R writes them
// (c(NA, −3)) and the "x" symbol referenced twice (a REFSXP).
func frame() []byte {
	w := &xdr{b: []byte("RDX2\nX\n")}
	w.i(2).i(0x40003).i(0x20300)
	w.i(rList | 1<<10).sym("df") // pairlist (tag "df", car, cdr)
	w.i(rVec | 1<<8 | 1<<9).i(2) // a list with attributes, 2 columns
	w.i(rReal).i(3)              // x
	for _, v := range []float64{1.5, 2, 3} {
		w.b = binary.BigEndian.AppendUint64(w.b, math.Float64bits(v))
	}
	w.i(rInt | 1<<8 | 1<<9).i(3).i(2).i(1).i(2) // f's codes
	w.i(rList|1<<10).sym("levels").strs("a", "b")
	w.i(rList | 1<<10).sym("class").strs("factor")
	w.i(rNil)
	w.i(rList|1<<10).sym("names").strs("x", "f") // the frame's attributes
	w.i(rList | 1<<10).sym("row.names").i(rInt).i(2).i(math.MinInt32).i(-3)
	w.i(rList | 1<<10).i(rRef | 3<<8).strs("data.frame") // tag: a reference to "class"
	w.i(rNil)
	w.i(rNil) // the top pairlist's cdr
	return w.b
}

func TestRDAFrame(t *testing.T) {
	objs, err := parseRDA(frame())
	if err != nil {
		t.Fatal(err)
	}
	names, cols, err := frameColumns(objs["df"])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, ",") != "x,f" {
		t.Fatalf("names %v", names)
	}
	x, err := numeric("x", cols[0])
	if err != nil || len(x) != 3 || x[0] != 1.5 || x[2] != 3 {
		t.Errorf("x = %v, %v", x, err)
	}
	f, err := factorLabels("f", cols[1])
	if err != nil || strings.Join(f, ",") != "b,a,b" {
		t.Errorf("f = %v, %v", f, err)
	}
	if _, err := numeric("f", cols[1]); err == nil || !strings.Contains(err.Error(), "not a number") {
		t.Errorf("a factor of letters read as numbers: %v", err)
	}
	if _, err := factorLabels("x", cols[0]); err == nil {
		t.Error("a numeric column read as a factor")
	}
	if got := objs["df"].attr["class"].strs; len(got) != 1 || got[0] != "data.frame" {
		t.Errorf("class %v (the reference to the symbol \"class\")", got)
	}
}

// Every truncation of a valid file, a still-compressed one, and lengths
// beyond the input give an error, never a panic or a large allocation.
func TestRDABadInput(t *testing.T) {
	b := frame()
	for n := 0; n < len(b); n++ {
		if _, err := parseRDA(b[:n]); err == nil {
			t.Errorf("truncated at %d of %d bytes: no error", n, len(b))
		}
	}
	if _, err := parseRDA([]byte("\xfd7zXZ\x00\x00")); err == nil || !strings.Contains(err.Error(), "compressed") {
		t.Errorf("xz input: %v", err)
	}
	huge := (&xdr{b: []byte("RDX2\nX\n")}).i(2).i(0).i(0).i(rList | 1<<10).sym("v").i(rReal).i(1 << 30).b
	if _, err := parseRDA(huge); err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Errorf("a length of 2³⁰ reals in a short file: %v", err)
	}
	long := (&xdr{b: []byte("RDX2\nX\n")}).i(2).i(0).i(0).i(rList | 1<<10).sym("v").i(rReal).i(-1).i(0x7fffffff).i(0).b
	if _, err := parseRDA(long); err == nil {
		t.Error("a 64-bit length beyond the input: no error")
	}
	ref := (&xdr{b: []byte("RDX2\nX\n")}).i(2).i(0).i(0).i(rList | 1<<10).sym("v").i(rRef | 9<<8).b
	if _, err := parseRDA(ref); err == nil || !strings.Contains(err.Error(), "reference") {
		t.Errorf("a dangling reference: %v", err)
	}
	deep := (&xdr{b: []byte("RDX2\nX\n")}).i(2).i(0).i(0)
	for i := 0; i < 2000; i++ {
		deep.i(rVec).i(1)
	}
	if _, err := parseRDA(deep.b); err == nil {
		t.Error("2000 nested lists: no error")
	}
	ver := (&xdr{b: []byte("RDX2\nX\n")}).i(7).i(0).i(0).b
	if _, err := parseRDA(ver); err == nil || !strings.Contains(err.Error(), "version 7") {
		t.Errorf("version 7: %v", err)
	}
}

// Whatever the bytes, parseRDA returns (an error or objects) without
// panicking; frameColumns, numeric and factorLabels likewise on what it
// returns. The seeds run with go test; `go test -fuzz FuzzRDA` explores.
func FuzzRDA(f *testing.F) {
	f.Add(frame())
	f.Add([]byte("RDX3\nX\n\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x05UTF-8\x00\x00\x00\xfe"))
	f.Fuzz(func(t *testing.T, b []byte) {
		objs, err := parseRDA(b)
		if err != nil {
			return
		}
		for _, o := range objs {
			names, cols, err := frameColumns(o)
			if err != nil {
				continue
			}
			for i, c := range cols {
				numeric(names[i], c)
				factorLabels(names[i], c)
			}
		}
	})
}
