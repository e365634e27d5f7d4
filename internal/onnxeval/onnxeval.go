// Package onnxeval is a small ONNX reader and evaluator written for the
// tests, independently of the exporter (model.ExportONNX): it decodes a
// serialized ModelProto with its own reading of onnx.proto's field numbers
// and evaluates the default-domain operators an export may contain on
// float64 tensors, with numpy broadcasting, in node order (an exported
// graph is topologically sorted, as ONNX requires). An operator, data type,
// attribute or field it does not know is an error, so a graph that uses
// something else cannot pass unnoticed.
package onnxeval

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Tensor is a float64 tensor (bool for IsNaN's output, int64 for shapes
// and axes: kept in I).
type Tensor struct {
	Shape []int
	F     []float64
	B     []bool
	I     []int64
	Kind  string // "f64", "bool", "i64"
}

// Node is one NodeProto.
type Node struct {
	Op, Name, Domain string
	In, Out          []string
	Ints             map[string][]int64
	Int              map[string]int64
}

// Model is the decoded ModelProto (the parts the evaluator reads).
type Model struct {
	IRVersion int64
	Opsets    map[string]int64
	Nodes     []Node
	Inits     map[string]*Tensor
	Inputs    []string
	Outputs   []string
	Metadata  map[string]string
}

type field struct {
	num protowire.Number
	typ protowire.Type
	v   uint64
	b   []byte
}

// fields splits one message into its fields.
func fields(b []byte) ([]field, error) {
	var out []field
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		f := field{num: num, typ: typ}
		switch typ {
		case protowire.VarintType:
			f.v, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			f.b, n = protowire.ConsumeBytes(b)
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(b)
			f.v = uint64(v)
		case protowire.Fixed64Type:
			f.v, n = protowire.ConsumeFixed64(b)
		default:
			return nil, fmt.Errorf("onnxeval: wire type %d", typ)
		}
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		out = append(out, f)
	}
	return out, nil
}

// Decode reads a serialized ModelProto.
func Decode(b []byte) (*Model, error) {
	fs, err := fields(b)
	if err != nil {
		return nil, err
	}
	m := &Model{Opsets: map[string]int64{}, Inits: map[string]*Tensor{}, Metadata: map[string]string{}}
	var graph []byte
	for _, f := range fs {
		switch f.num {
		case 1: // ir_version
			m.IRVersion = int64(f.v)
		case 7: // graph
			graph = f.b
		case 8: // opset_import
			sub, err := fields(f.b)
			if err != nil {
				return nil, err
			}
			var dom string
			var ver int64
			for _, s := range sub {
				switch s.num {
				case 1:
					dom = string(s.b)
				case 2:
					ver = int64(s.v)
				}
			}
			m.Opsets[dom] = ver
		case 14: // metadata_props
			sub, err := fields(f.b)
			if err != nil {
				return nil, err
			}
			var k, v string
			for _, s := range sub {
				switch s.num {
				case 1:
					k = string(s.b)
				case 2:
					v = string(s.b)
				}
			}
			m.Metadata[k] = v
		case 2, 3, 4, 5, 6: // producer, domain, model_version, doc_string
		default:
			return nil, fmt.Errorf("onnxeval: ModelProto field %d not expected", f.num)
		}
	}
	if graph == nil {
		return nil, fmt.Errorf("onnxeval: no graph")
	}
	gs, err := fields(graph)
	if err != nil {
		return nil, err
	}
	for _, f := range gs {
		switch f.num {
		case 1:
			n, err := decodeNode(f.b)
			if err != nil {
				return nil, err
			}
			m.Nodes = append(m.Nodes, n)
		case 5:
			name, t, err := decodeTensor(f.b)
			if err != nil {
				return nil, err
			}
			m.Inits[name] = t
		case 11, 12:
			sub, err := fields(f.b)
			if err != nil {
				return nil, err
			}
			for _, s := range sub {
				if s.num == 1 {
					if f.num == 11 {
						m.Inputs = append(m.Inputs, string(s.b))
					} else {
						m.Outputs = append(m.Outputs, string(s.b))
					}
				}
			}
		case 2, 10, 13: // name, doc_string, value_info
		default:
			return nil, fmt.Errorf("onnxeval: GraphProto field %d not expected", f.num)
		}
	}
	return m, nil
}

func decodeNode(b []byte) (Node, error) {
	fs, err := fields(b)
	if err != nil {
		return Node{}, err
	}
	n := Node{Ints: map[string][]int64{}, Int: map[string]int64{}}
	for _, f := range fs {
		switch f.num {
		case 1:
			n.In = append(n.In, string(f.b))
		case 2:
			n.Out = append(n.Out, string(f.b))
		case 3:
			n.Name = string(f.b)
		case 4:
			n.Op = string(f.b)
		case 7:
			n.Domain = string(f.b)
		case 5:
			as, err := fields(f.b)
			if err != nil {
				return n, err
			}
			var name string
			var typ uint64
			var i int64
			var ints []int64
			for _, a := range as {
				switch a.num {
				case 1:
					name = string(a.b)
				case 3:
					i = int64(a.v)
				case 8:
					if a.typ == protowire.BytesType { // packed
						for p := a.b; len(p) > 0; {
							v, k := protowire.ConsumeVarint(p)
							if k < 0 {
								return n, protowire.ParseError(k)
							}
							ints, p = append(ints, int64(v)), p[k:]
						}
					} else {
						ints = append(ints, int64(a.v))
					}
				case 20:
					typ = a.v
				default:
					return n, fmt.Errorf("onnxeval: attribute field %d not expected", a.num)
				}
			}
			switch typ {
			case 2:
				n.Int[name] = i
			case 7:
				n.Ints[name] = ints
			default:
				return n, fmt.Errorf("onnxeval: attribute %s of type %d not supported", name, typ)
			}
		case 6:
		default:
			return n, fmt.Errorf("onnxeval: NodeProto field %d not expected", f.num)
		}
	}
	return n, nil
}

func decodeTensor(b []byte) (string, *Tensor, error) {
	fs, err := fields(b)
	if err != nil {
		return "", nil, err
	}
	var name string
	var dt uint64
	var raw []byte
	t := &Tensor{Shape: []int{}}
	for _, f := range fs {
		switch f.num {
		case 1:
			t.Shape = append(t.Shape, int(f.v))
		case 2:
			dt = f.v
		case 8:
			name = string(f.b)
		case 9:
			raw = f.b
		default:
			return "", nil, fmt.Errorf("onnxeval: TensorProto field %d not expected", f.num)
		}
	}
	size := 1
	for _, d := range t.Shape {
		size *= d
	}
	if len(raw) != 8*size {
		return "", nil, fmt.Errorf("onnxeval: tensor %s: %d raw bytes for %d elements", name, len(raw), size)
	}
	switch dt {
	case 11:
		t.Kind, t.F = "f64", make([]float64, size)
		for i := range t.F {
			t.F[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	case 7:
		t.Kind, t.I = "i64", make([]int64, size)
		for i := range t.I {
			t.I[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	default:
		return "", nil, fmt.Errorf("onnxeval: tensor %s: data type %d", name, dt)
	}
	return name, t, nil
}

// Matrix returns an [n, d] float64 tensor.
func Matrix(rows [][]float64) *Tensor {
	t := &Tensor{Kind: "f64", Shape: []int{len(rows), 0}}
	if len(rows) > 0 {
		t.Shape[1] = len(rows[0])
	}
	for _, r := range rows {
		t.F = append(t.F, r...)
	}
	return t
}

// Run evaluates the graph on the named inputs and returns every output.
func (m *Model) Run(inputs map[string]*Tensor) (map[string]*Tensor, error) {
	if m.Opsets[""] < 13 {
		return nil, fmt.Errorf("onnxeval: default opset %d < 13", m.Opsets[""])
	}
	env := map[string]*Tensor{}
	for k, v := range m.Inits {
		env[k] = v
	}
	for _, name := range m.Inputs {
		t, ok := inputs[name]
		if !ok {
			return nil, fmt.Errorf("onnxeval: input %s not given", name)
		}
		env[name] = t
	}
	for _, n := range m.Nodes {
		if n.Domain != "" {
			return nil, fmt.Errorf("onnxeval: node %s: domain %q", n.Name, n.Domain)
		}
		in := make([]*Tensor, len(n.In))
		for i, s := range n.In {
			if in[i] = env[s]; in[i] == nil {
				return nil, fmt.Errorf("onnxeval: node %s: input %s undefined", n.Name, s)
			}
		}
		out, err := eval(n, in)
		if err != nil {
			return nil, fmt.Errorf("onnxeval: node %s (%s): %w", n.Name, n.Op, err)
		}
		env[n.Out[0]] = out
	}
	res := map[string]*Tensor{}
	for _, o := range m.Outputs {
		if res[o] = env[o]; res[o] == nil {
			return nil, fmt.Errorf("onnxeval: output %s not computed", o)
		}
	}
	return res, nil
}

func eval(n Node, in []*Tensor) (*Tensor, error) {
	arity := map[string]int{"Identity": 1, "IsNaN": 1, "Where": 3, "Sub": 2, "Mul": 2, "Div": 2, "Max": 2, "Min": 2,
		"ReduceL2": 1, "ReduceSum": 2, "MatMul": 2, "Reshape": 2}
	k, ok := arity[n.Op]
	if !ok {
		return nil, fmt.Errorf("operator not supported")
	}
	if len(in) != k {
		return nil, fmt.Errorf("%d inputs, want %d", len(in), k)
	}
	switch n.Op {
	case "Identity":
		return in[0], nil
	case "IsNaN":
		t := &Tensor{Kind: "bool", Shape: in[0].Shape, B: make([]bool, len(in[0].F))}
		for i, v := range in[0].F {
			t.B[i] = math.IsNaN(v)
		}
		return t, nil
	case "Where":
		c := &Tensor{Kind: "f64", Shape: in[0].Shape, F: make([]float64, len(in[0].B))}
		for i, b := range in[0].B {
			if b {
				c.F[i] = 1
			}
		}
		// Three-way broadcast: do cond and x, then cond and y.
		ca, err := broadcast(c, in[1], func(c, a float64) float64 {
			if c != 0 {
				return a
			}
			return math.NaN()
		})
		if err != nil {
			return nil, err
		}
		cb, err := broadcast(c, in[2], func(c, b float64) float64 {
			if c == 0 {
				return b
			}
			return math.NaN()
		})
		if err != nil {
			return nil, err
		}
		if !sameShape(ca.Shape, cb.Shape) || !sameShape(ca.Shape, c.Shape) {
			return nil, fmt.Errorf("where: shapes %v %v %v (only a full-shape condition is supported)", c.Shape, ca.Shape, cb.Shape)
		}
		for i := range ca.F {
			if c.F[i] == 0 {
				ca.F[i] = cb.F[i]
			}
		}
		return ca, nil
	case "Sub":
		return broadcast(in[0], in[1], func(a, b float64) float64 { return a - b })
	case "Mul":
		return broadcast(in[0], in[1], func(a, b float64) float64 { return a * b })
	case "Div":
		return broadcast(in[0], in[1], func(a, b float64) float64 { return a / b })
	case "Max":
		return broadcast(in[0], in[1], func(a, b float64) float64 { return math.Max(a, b) })
	case "Min":
		return broadcast(in[0], in[1], func(a, b float64) float64 { return math.Min(a, b) })
	case "ReduceL2", "ReduceSum":
		var axes []int64
		if n.Op == "ReduceL2" {
			axes = n.Ints["axes"]
		} else {
			axes = in[1].I
		}
		keep, ok := n.Int["keepdims"]
		if !ok {
			keep = 1
		}
		t := in[0]
		if len(t.Shape) != 2 || len(axes) != 1 || axes[0] != 1 && axes[0] != -1 {
			return nil, fmt.Errorf("reduce over axes %v of shape %v not supported", axes, t.Shape)
		}
		r, c := t.Shape[0], t.Shape[1]
		out := &Tensor{Kind: "f64", Shape: []int{r}, F: make([]float64, r)}
		if keep != 0 {
			out.Shape = []int{r, 1}
		}
		for i := 0; i < r; i++ {
			var s float64
			for j := 0; j < c; j++ {
				v := t.F[i*c+j]
				if n.Op == "ReduceL2" {
					s += v * v
				} else {
					s += v
				}
			}
			if n.Op == "ReduceL2" {
				s = math.Sqrt(s)
			}
			out.F[i] = s
		}
		return out, nil
	case "MatMul":
		a, b := in[0], in[1]
		if len(a.Shape) != 2 || len(b.Shape) != 2 || a.Shape[1] != b.Shape[0] {
			return nil, fmt.Errorf("matmul of %v and %v", a.Shape, b.Shape)
		}
		r, k, c := a.Shape[0], a.Shape[1], b.Shape[1]
		out := &Tensor{Kind: "f64", Shape: []int{r, c}, F: make([]float64, r*c)}
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				var s float64
				for l := 0; l < k; l++ {
					s += a.F[i*k+l] * b.F[l*c+j]
				}
				out.F[i*c+j] = s
			}
		}
		return out, nil
	case "Reshape":
		s := in[1].I
		if len(s) != 1 || s[0] != -1 {
			return nil, fmt.Errorf("reshape to %v not supported", s)
		}
		return &Tensor{Kind: in[0].Kind, Shape: []int{len(in[0].F)}, F: in[0].F}, nil
	}
	return nil, fmt.Errorf("unreachable")
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// broadcast applies f elementwise with numpy broadcasting (rank ≤ 2).
func broadcast(a, b *Tensor, f func(a, b float64) float64) (*Tensor, error) {
	if a.Kind != "f64" || b.Kind != "f64" {
		return nil, fmt.Errorf("operands %s and %s: want float64", a.Kind, b.Kind)
	}
	if len(a.Shape) > 2 || len(b.Shape) > 2 {
		return nil, fmt.Errorf("rank > 2")
	}
	pad := func(s []int) [2]int {
		p := [2]int{1, 1}
		copy(p[2-len(s):], s)
		return p
	}
	sa, sb := pad(a.Shape), pad(b.Shape)
	var so [2]int
	for i := range so {
		switch {
		case sa[i] == sb[i]:
			so[i] = sa[i]
		case sa[i] == 1:
			so[i] = sb[i]
		case sb[i] == 1:
			so[i] = sa[i]
		default:
			return nil, fmt.Errorf("shapes %v and %v do not broadcast", a.Shape, b.Shape)
		}
	}
	rank := max(len(a.Shape), len(b.Shape))
	out := &Tensor{Kind: "f64", Shape: so[2-rank:], F: make([]float64, so[0]*so[1])}
	at := func(t *Tensor, s [2]int, i, j int) float64 {
		if s[0] == 1 {
			i = 0
		}
		if s[1] == 1 {
			j = 0
		}
		return t.F[i*s[1]+j]
	}
	for i := 0; i < so[0]; i++ {
		for j := 0; j < so[1]; j++ {
			out.F[i*so[1]+j] = f(at(a, sa, i, j), at(b, sb, i, j))
		}
	}
	return out, nil
}
