package main

// A reader for the subset of R's XDR serialization (format versions 2 and
// 3) that data frames of numbers and factors use: the .rda files of
// Debian's r-cran-mlbench, decompressed by fetch.sh (xz -dc), start with
// "RDX2\n" or "RDX3\n" and hold a pairlist of (name, object). Every
// length is checked against what is left of the input, so a damaged file
// gives an error, not a panic or a huge allocation.

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// R's SEXP types and special items that these files use.
const (
	rSym      = 1
	rList     = 2
	rClosure  = 3
	rEnv      = 4
	rPromise  = 5
	rLang     = 6
	rChar     = 9
	rLgl      = 10
	rInt      = 13
	rReal     = 14
	rCplx     = 15
	rStr      = 16
	rDot      = 17
	rVec      = 19
	rExpr     = 20
	rRaw      = 24
	rAltrep   = 238
	rAttrList = 239
	rAttrLang = 240
	rBaseEnv  = 241
	rEmptyEnv = 242
	rNSpace   = 249
	rPackage  = 248
	rPersist  = 247
	rBaseNS   = 250
	rMissing  = 251
	rUnbound  = 252
	rGlobal   = 253
	rNil      = 254
	rRef      = 255
)

// rObj is one R object: its type, its payload (ints for logical, integer
// and factor codes, reals, strings, or items for lists and pairlists), the
// pairlist tag and its attributes by name.
type rObj struct {
	typ   int
	ints  []int32
	reals []float64
	strs  []string
	items []*rObj
	tag   string
	attr  map[string]*rObj
}

type rReader struct {
	b    []byte
	off  int
	refs []*rObj
}

func (r *rReader) int32() (int32, error) {
	if len(r.b)-r.off < 4 {
		return 0, fmt.Errorf("truncated at byte %d", r.off)
	}
	v := int32(binary.BigEndian.Uint32(r.b[r.off:]))
	r.off += 4
	return v, nil
}

// length reads a vector length (−1 announces a 64-bit one) and checks that
// at least min bytes per element remain.
func (r *rReader) length(min int) (int, error) {
	n, err := r.int32()
	if err != nil {
		return 0, err
	}
	l := int64(n)
	if n == -1 {
		hi, err := r.int32()
		if err != nil {
			return 0, err
		}
		lo, err := r.int32()
		if err != nil {
			return 0, err
		}
		l = int64(hi)<<32 | int64(uint32(lo))
	}
	if l < 0 || l > int64(len(r.b)-r.off)/int64(min) { // divided: l·min could overflow
		return 0, fmt.Errorf("length %d at byte %d exceeds the %d bytes left", l, r.off, len(r.b)-r.off)
	}
	return int(l), nil
}

// parseRDA reads a decompressed .rda file and returns its objects by name.
func parseRDA(b []byte) (map[string]*rObj, error) {
	if len(b) < 7 || (string(b[:5]) != "RDX2\n" && string(b[:5]) != "RDX3\n") || string(b[5:7]) != "X\n" {
		return nil, fmt.Errorf("not an XDR .rda file (want \"RDX2\\nX\\n\" or \"RDX3\\nX\\n\" at the start; is it still compressed?)")
	}
	r := &rReader{b: b, off: 7}
	ver, err := r.int32()
	if err != nil {
		return nil, err
	}
	if ver != 2 && ver != 3 {
		return nil, fmt.Errorf("serialization version %d (2 or 3 supported)", ver)
	}
	r.off += 8 // the writer's and the minimal reader's R versions
	if ver == 3 {
		n, err := r.length(1)
		if err != nil {
			return nil, err
		}
		r.off += n // the native encoding's name
	}
	top, err := r.item(0)
	if err != nil {
		return nil, err
	}
	out := map[string]*rObj{}
	for o := top; o != nil && o.typ == rList; {
		if len(o.items) != 2 {
			break
		}
		out[o.tag] = o.items[0]
		o = o.items[1]
	}
	return out, nil
}

func (r *rReader) item(depth int) (*rObj, error) {
	if depth > 1000 {
		return nil, fmt.Errorf("nesting deeper than 1000 at byte %d", r.off)
	}
	flags, err := r.int32()
	if err != nil {
		return nil, err
	}
	typ := int(flags & 0xff)
	hasAttr, hasTag := flags&(1<<9) != 0, flags&(1<<10) != 0
	switch typ {
	case rNil, rEmptyEnv, rBaseEnv, rGlobal, rUnbound, rMissing, rBaseNS:
		return nil, nil
	case rRef:
		i := int(flags >> 8)
		if i == 0 {
			v, err := r.int32()
			if err != nil {
				return nil, err
			}
			i = int(v)
		}
		if i < 1 || i > len(r.refs) {
			return nil, fmt.Errorf("reference %d of %d at byte %d", i, len(r.refs), r.off)
		}
		return r.refs[i-1], nil
	case rPersist, rPackage, rNSpace:
		o := &rObj{typ: typ}
		r.refs = append(r.refs, o)
		if _, err := r.int32(); err != nil { // 0
			return nil, err
		}
		n, err := r.length(4)
		if err != nil {
			return nil, err
		}
		for i := 0; i < n; i++ {
			if _, err := r.item(depth + 1); err != nil {
				return nil, err
			}
		}
		return o, nil
	case rSym:
		c, err := r.item(depth + 1)
		if err != nil {
			return nil, err
		}
		o := &rObj{typ: rSym}
		if c != nil && len(c.strs) == 1 {
			o.strs = c.strs
		}
		r.refs = append(r.refs, o)
		return o, nil
	case rEnv:
		o := &rObj{typ: rEnv}
		r.refs = append(r.refs, o)
		if _, err := r.int32(); err != nil { // locked
			return nil, err
		}
		for i := 0; i < 4; i++ { // enclosure, frame, hash table, attributes
			if _, err := r.item(depth + 1); err != nil {
				return nil, err
			}
		}
		return o, nil
	case rList, rLang, rClosure, rPromise, rDot, rAttrList, rAttrLang:
		o := &rObj{typ: rList}
		if hasAttr || typ == rAttrList || typ == rAttrLang { // R reads these two's attributes whatever the flag
			if o.attr, err = r.attrs(depth); err != nil {
				return nil, err
			}
		}
		if hasTag {
			t, err := r.item(depth + 1)
			if err != nil {
				return nil, err
			}
			if t != nil && len(t.strs) == 1 {
				o.tag = t.strs[0]
			}
		}
		car, err := r.item(depth + 1)
		if err != nil {
			return nil, err
		}
		cdr, err := r.item(depth + 1)
		if err != nil {
			return nil, err
		}
		o.items = []*rObj{car, cdr}
		return o, nil
	case rAltrep:
		for i := 0; i < 3; i++ { // class info, state, attributes: not used here
			if _, err := r.item(depth + 1); err != nil {
				return nil, err
			}
		}
		return &rObj{typ: rAltrep}, nil
	}
	o := &rObj{typ: typ}
	switch typ {
	case rChar:
		n, err := r.int32()
		if err != nil {
			return nil, err
		}
		if n == -1 {
			o.strs = []string{"NA"}
			return o, nil
		}
		if n < 0 || int(n) > len(r.b)-r.off {
			return nil, fmt.Errorf("string of %d bytes at byte %d exceeds the %d bytes left", n, r.off, len(r.b)-r.off)
		}
		o.strs = []string{string(r.b[r.off : r.off+int(n)])}
		r.off += int(n)
		return o, nil
	case rLgl, rInt:
		n, err := r.length(4)
		if err != nil {
			return nil, err
		}
		o.ints = make([]int32, n)
		for i := range o.ints {
			o.ints[i], _ = r.int32()
		}
	case rReal:
		n, err := r.length(8)
		if err != nil {
			return nil, err
		}
		o.reals = make([]float64, n)
		for i := range o.reals {
			o.reals[i] = math.Float64frombits(binary.BigEndian.Uint64(r.b[r.off:]))
			r.off += 8
		}
	case rCplx:
		n, err := r.length(16)
		if err != nil {
			return nil, err
		}
		r.off += 16 * n
	case rRaw:
		n, err := r.length(1)
		if err != nil {
			return nil, err
		}
		r.off += n
	case rStr, rVec, rExpr:
		n, err := r.length(4)
		if err != nil {
			return nil, err
		}
		for i := 0; i < n; i++ {
			it, err := r.item(depth + 1)
			if err != nil {
				return nil, err
			}
			if typ == rStr {
				s := "NA"
				if it != nil && len(it.strs) == 1 {
					s = it.strs[0]
				}
				o.strs = append(o.strs, s)
			} else {
				o.items = append(o.items, it)
			}
		}
	default:
		return nil, fmt.Errorf("object of R type %d at byte %d is not supported", typ, r.off-4)
	}
	if hasAttr {
		if o.attr, err = r.attrs(depth); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// attrs reads an attribute pairlist into a map by tag.
func (r *rReader) attrs(depth int) (map[string]*rObj, error) {
	l, err := r.item(depth + 1)
	if err != nil {
		return nil, err
	}
	m := map[string]*rObj{}
	for o := l; o != nil && o.typ == rList && len(o.items) == 2; o = o.items[1] {
		m[o.tag] = o.items[0]
	}
	return m, nil
}

// frameColumns returns a data frame's column names and columns, in order;
// numeric reads a column as numbers (a factor through its levels, as
// mlbench's 0/1 indicators are stored) and factorLabels as level names.
func frameColumns(df *rObj) (names []string, cols []*rObj, err error) {
	if df == nil || df.typ != rVec || df.attr["names"] == nil {
		return nil, nil, fmt.Errorf("not a data frame (a list with names)")
	}
	names = df.attr["names"].strs
	if len(names) != len(df.items) {
		return nil, nil, fmt.Errorf("data frame: %d names for %d columns", len(names), len(df.items))
	}
	return names, df.items, nil
}

// numeric returns a column's values as float64: doubles and integers as
// they are, a factor's levels parsed as numbers. NA is an error.
func numeric(name string, c *rObj) ([]float64, error) {
	if c == nil {
		return nil, fmt.Errorf("column %s is empty", name)
	}
	switch c.typ {
	case rReal:
		for i, v := range c.reals {
			if math.IsNaN(v) {
				return nil, fmt.Errorf("column %s: NA at row %d", name, i+1)
			}
		}
		return c.reals, nil
	case rInt, rLgl:
		var lv []float64
		if l := c.attr["levels"]; l != nil {
			for _, s := range l.strs {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil {
					return nil, fmt.Errorf("column %s: factor level %q is not a number", name, s)
				}
				lv = append(lv, v)
			}
		}
		out := make([]float64, len(c.ints))
		for i, v := range c.ints {
			switch {
			case v == math.MinInt32:
				return nil, fmt.Errorf("column %s: NA at row %d", name, i+1)
			case lv != nil && (v < 1 || int(v) > len(lv)):
				return nil, fmt.Errorf("column %s: factor code %d outside its %d levels", name, v, len(lv))
			case lv != nil:
				out[i] = lv[v-1]
			default:
				out[i] = float64(v)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("column %s has R type %d, not numbers or a factor", name, c.typ)
}

// factorLabels returns a factor column's level name per row.
func factorLabels(name string, c *rObj) ([]string, error) {
	if c == nil || c.typ != rInt || c.attr["levels"] == nil {
		return nil, fmt.Errorf("column %s is not a factor", name)
	}
	lv := c.attr["levels"].strs
	out := make([]string, len(c.ints))
	for i, v := range c.ints {
		if v < 1 || int(v) > len(lv) {
			return nil, fmt.Errorf("column %s: factor code %d at row %d outside its %d levels", name, v, i+1, len(lv))
		}
		out[i] = lv[v-1]
	}
	return out, nil
}
