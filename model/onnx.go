package model

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pairfed/pairfed/data"
	"google.golang.org/protobuf/encoding/protowire"
)

// The ONNX export (ExportONNX) writes the artefact as an ONNX model
// (onnx.proto, IR version ONNXIRVersion, default-domain opset
// ONNXOpset) that any ONNX runtime can run without pairfed: a graph over
// float64 tensors that takes the RAW numeric features of a batch of
// records — the columns the model was trained on, in the model's feature
// order, label and ignored columns removed, one-hot indicator columns as
// they are in the training file — and applies the stored preprocessing
// map exactly as experiment.PrepareModelRecords does:
//
//	x₀ = Where(IsNaN(x), c, x)            imputation constants c (loader "constant")
//	x₁ = (x₀ − shift) ⊙ scale             the data.Scaler (bounds: the midpoint and 1/half-range;
//	                                      one-hot features [0, hi] → [0, 1]; unshifted: x₀ ⊙ scale)
//	x₂ = Min(Max(x₁, boxLo), boxHi)        the per-coordinate box of a bounds map ([−1, 1], [0, 1])
//	x₃ = x₂ · post                         norm "divide": R/M
//	x' = x₃ · Min(1, R / ‖x₃‖₂)            the ℓ2 clip to R (data.ClipNorms' first factor)
//
// and then the parameters: score = x'·w (task auc, output "score", shape
// [N]), or for task metric, with a second input y prepared the same way,
// sq_distance = (x'−y')ᵀW(x'−y') per row (output "sq_distance", [N]).
// The prepared records are output too ("prepared", [N, D]; "prepared_x").
//
// The numbers are the data.Scaler that scoring uses, passed in (ExportONNX's
// sc, built by experiment.ModelScaler: this package cannot import it), so
// the graph and `pairfed score` apply the same constants; the only
// difference is floating-point summation order in the norm and the dot
// product (relative 1e-15), and data.ClipNorms' safety loop, which shrinks
// a clipped record by a further factor ≤ 1 − 2⁻⁵⁰ in the rare case the
// first product rounds above R.
//
// What the graph does not do (the caller's, said in the metadata): reading
// a file and one-hot encoding categories into the indicator columns;
// imputation by "mean" or "drop" (data-dependent: a missing value gives a
// NaN score); with imputation "error" a missing value (NaN) gives a NaN
// score where `pairfed score` refuses the file.
const (
	ONNXIRVersion = 8
	ONNXOpset     = 13
)

// onnx.proto field numbers (https://github.com/onnx/onnx/blob/main/onnx/onnx.proto).
const (
	// ModelProto
	fModelIRVersion     = 1
	fModelProducerName  = 2
	fModelProducerVer   = 3
	fModelDomain        = 4
	fModelVersion       = 5
	fModelDocString     = 6
	fModelGraph         = 7
	fModelOpsetImport   = 8
	fModelMetadataProps = 14
	// OperatorSetIdProto
	fOpsetDomain  = 1
	fOpsetVersion = 2
	// StringStringEntryProto
	fEntryKey   = 1
	fEntryValue = 2
	// GraphProto
	fGraphNode        = 1
	fGraphName        = 2
	fGraphInitializer = 5
	fGraphDocString   = 10
	fGraphInput       = 11
	fGraphOutput      = 12
	// NodeProto
	fNodeInput     = 1
	fNodeOutput    = 2
	fNodeName      = 3
	fNodeOpType    = 4
	fNodeAttribute = 5
	// AttributeProto
	fAttrName = 1
	fAttrI    = 3
	fAttrInts = 8
	fAttrType = 20
	// TensorProto
	fTensorDims     = 1
	fTensorDataType = 2
	fTensorName     = 8
	fTensorRawData  = 9
	// ValueInfoProto, TypeProto, TypeProto.Tensor, TensorShapeProto(.Dimension)
	fValueName        = 1
	fValueType        = 2
	fValueDocString   = 3
	fTypeTensor       = 1
	fTensorTypeElem   = 1
	fTensorTypeShape  = 2
	fShapeDim         = 1
	fDimValue         = 1
	fDimParam         = 2
	tensorDouble      = 11 // TensorProto.DOUBLE
	tensorInt64       = 7  // TensorProto.INT64
	attrTypeInt       = 2  // AttributeProto.INT
	attrTypeInts      = 7  // AttributeProto.INTS
	onnxBatchDimParam = "N"
)

// ONNXInput is the name of the graph's input of raw features (task
// metric: ONNXInput and ONNXInputY).
const (
	ONNXInput  = "features"
	ONNXInputY = "features_y"
)

// graph accumulates the encoded parts of a GraphProto.
type graph struct {
	nodes, inits [][]byte
	n            int
}

func pbString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func pbBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func pbVarint(b []byte, num protowire.Number, v int64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}

// constant adds a float64 initializer of the given shape and returns its name.
func (g *graph) constant(name string, dims []int64, v []float64) string {
	var t []byte
	for _, d := range dims {
		t = pbVarint(t, fTensorDims, d)
	}
	t = pbVarint(t, fTensorDataType, tensorDouble)
	t = pbString(t, fTensorName, name)
	raw := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(x))
	}
	t = pbBytes(t, fTensorRawData, raw)
	g.inits = append(g.inits, t)
	return name
}

// int64s adds an int64 initializer (a shape or axes) and returns its name.
func (g *graph) int64s(name string, v []int64) string {
	var t []byte
	t = pbVarint(t, fTensorDims, int64(len(v)))
	t = pbVarint(t, fTensorDataType, tensorInt64)
	t = pbString(t, fTensorName, name)
	raw := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(x))
	}
	t = pbBytes(t, fTensorRawData, raw)
	g.inits = append(g.inits, t)
	return name
}

// attr is an integer (list) attribute of a node.
type attr struct {
	name string
	ints []int64 // one value and !list: INT
	list bool
}

// node adds a node and returns its output's name (out, or a fresh one).
func (g *graph) node(op, out string, attrs []attr, in ...string) string {
	g.n++
	if out == "" {
		out = fmt.Sprintf("t%d_%s", g.n, strings.ToLower(op))
	}
	var b []byte
	for _, s := range in {
		b = pbString(b, fNodeInput, s)
	}
	b = pbString(b, fNodeOutput, out)
	b = pbString(b, fNodeName, fmt.Sprintf("n%d_%s", g.n, op))
	b = pbString(b, fNodeOpType, op)
	for _, a := range attrs {
		var ab []byte
		ab = pbString(ab, fAttrName, a.name)
		if a.list {
			for _, v := range a.ints {
				ab = pbVarint(ab, fAttrInts, v)
			}
			ab = pbVarint(ab, fAttrType, attrTypeInts)
		} else {
			ab = pbVarint(ab, fAttrI, a.ints[0])
			ab = pbVarint(ab, fAttrType, attrTypeInt)
		}
		b = pbBytes(b, fNodeAttribute, ab)
	}
	g.nodes = append(g.nodes, b)
	return out
}

// valueInfo encodes a float64 tensor of shape [N, dims…] (dim 0 symbolic).
func valueInfo(name, doc string, dims ...int64) []byte {
	var shape []byte
	shape = pbBytes(shape, fShapeDim, pbString(nil, fDimParam, onnxBatchDimParam))
	for _, d := range dims {
		shape = pbBytes(shape, fShapeDim, pbVarint(nil, fDimValue, d))
	}
	var tt []byte
	tt = pbVarint(tt, fTensorTypeElem, tensorDouble)
	tt = pbBytes(tt, fTensorTypeShape, shape)
	var b []byte
	b = pbString(b, fValueName, name)
	b = pbBytes(b, fValueType, pbBytes(nil, fTypeTensor, tt))
	if doc != "" {
		b = pbString(b, fValueDocString, doc)
	}
	return b
}

// imputeConstants returns the per-feature constants that replace a
// missing value, or nil when the stored rule is not a constant (then a
// missing value stays NaN). A feature without a constant gets NaN.
func imputeConstants(l Loader, d int) ([]float64, error) {
	switch {
	case l.Impute == "constant" && l.ImputeValues != nil:
		c := make([]float64, d)
		for j, v := range l.ImputeValues {
			c[j] = math.NaN()
			if v != nil {
				c[j] = *v
			}
		}
		return c, nil
	case strings.HasPrefix(l.Impute, "constant:"):
		v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(l.Impute, "constant:")), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("model: impute rule %q: not a finite constant", l.Impute)
		}
		c := make([]float64, d)
		for j := range c {
			c[j] = v
		}
		return c, nil
	}
	return nil, nil
}

// prepare adds the nodes of the preprocessing map applied to input in and
// returns the prepared tensor's name. Constants are shared (added once).
func (g *graph) prepare(m *Model, sc *data.Scaler, imp []float64, in, out string, first bool) string {
	d := int64(m.D)
	x := in
	p := &m.Preprocessing
	if imp != nil {
		if first {
			g.constant("impute_values", []int64{d}, imp)
		}
		x = g.node("Where", "", nil, g.node("IsNaN", "", nil, x), "impute_values", x)
	}
	if sc.Kind != "none" {
		if first {
			g.constant("scale_shift", []int64{d}, sc.Shift)
			g.constant("scale_factor", []int64{d}, sc.Scale)
		}
		if !p.Unshifted {
			x = g.node("Sub", "", nil, x, "scale_shift")
		}
		x = g.node("Mul", "", nil, x, "scale_factor")
	}
	if sc.Box {
		if first {
			lo, hi := sc.BoxLo, sc.BoxHi
			if lo == nil {
				lo, hi = make([]float64, d), make([]float64, d)
				for j := range lo {
					lo[j], hi[j] = -1, 1
				}
			}
			g.constant("box_lo", []int64{d}, lo)
			g.constant("box_hi", []int64{d}, hi)
		}
		x = g.node("Max", "", nil, g.node("Min", "", nil, x, "box_hi"), "box_lo") // max(lo, min(hi, v)), data.Scaler.Apply's order
	}
	if sc.Post != 0 {
		if first {
			g.constant("divide_factor", nil, []float64{sc.Post})
		}
		x = g.node("Mul", "", nil, x, "divide_factor")
	}
	if p.Radius > 0 {
		if first {
			g.constant("radius", nil, []float64{p.Radius})
			g.constant("one", nil, []float64{1})
		}
		n := g.node("ReduceL2", "", []attr{{name: "axes", ints: []int64{1}, list: true}, {name: "keepdims", ints: []int64{1}}}, x)
		f := g.node("Min", "", nil, g.node("Div", "", nil, "radius", n), "one")
		x = g.node("Mul", "", nil, x, f)
	}
	return g.node("Identity", out, nil, x)
}

// ExportONNX returns m as a serialized ONNX ModelProto (see the comment on
// ONNXIRVersion). sc is the data.Scaler of m's preprocessing map, built by
// experiment.ModelScaler (the one scoring uses). A model whose map was not
// recorded (Scorable) is refused.
func ExportONNX(m *Model, sc *data.Scaler) ([]byte, error) {
	if err := m.Scorable(); err != nil {
		return nil, err
	}
	if sc == nil || len(sc.Scale) != m.D || len(sc.Shift) != m.D {
		return nil, fmt.Errorf("model: ExportONNX: the scaler does not have the model's %d features", m.D)
	}
	imp, err := imputeConstants(m.Preprocessing.Loader, m.D)
	if err != nil {
		return nil, err
	}
	d := int64(m.D)
	g := &graph{}
	var inputs, outputs [][]byte
	inputs = append(inputs, valueInfo(ONNXInput, "raw numeric features in the model's feature order (metadata_props: feature_names)", d))
	switch m.Task {
	case "auc":
		x := g.prepare(m, sc, imp, ONNXInput, "prepared", true)
		g.constant("weights", []int64{d, 1}, m.Weights)
		s := g.node("MatMul", "", nil, x, "weights")
		g.node("Reshape", "score", nil, s, g.int64s("score_shape", []int64{-1}))
		outputs = append(outputs, valueInfo("score", ScoreMeaning), valueInfo("prepared", "the prepared records x' the weights apply to", d))
	case "metric":
		inputs = append(inputs, valueInfo(ONNXInputY, "the second record of each pair, raw, same layout", d))
		x := g.prepare(m, sc, imp, ONNXInput, "prepared_x", true)
		y := g.prepare(m, sc, imp, ONNXInputY, "prepared_y", false)
		diff := g.node("Sub", "", nil, x, y)
		// (x−y)ᵀW(x−y) = Σ_a diff_a (W diff)_a: row-wise diff · (diff Wᵀ).
		wt := make([]float64, len(m.Metric))
		for a := 0; a < m.D; a++ {
			for b := 0; b < m.D; b++ {
				wt[b*m.D+a] = m.Metric[a*m.D+b]
			}
		}
		g.constant("metric_transposed", []int64{d, d}, wt)
		t := g.node("MatMul", "", nil, diff, "metric_transposed")
		g.node("ReduceSum", "sq_distance", []attr{{name: "keepdims", ints: []int64{0}}}, g.node("Mul", "", nil, diff, t), g.int64s("sum_axes", []int64{1}))
		outputs = append(outputs, valueInfo("sq_distance", "squared Mahalanobis distance (x'−y')ᵀW(x'−y') of each row pair; NOT a probability"),
			valueInfo("prepared_x", "the prepared records x'", d))
	default:
		return nil, fmt.Errorf("model: ExportONNX: task %q", m.Task)
	}

	var gb []byte
	for _, n := range g.nodes {
		gb = pbBytes(gb, fGraphNode, n)
	}
	gb = pbString(gb, fGraphName, "pairfed_"+m.Task)
	for _, t := range g.inits {
		gb = pbBytes(gb, fGraphInitializer, t)
	}
	gb = pbString(gb, fGraphDocString, "pairfed model "+m.Checksum+": the stored preprocessing map (imputation constants, scaling, box, divide, ℓ2 clip to R) then the parameters")
	for _, v := range inputs {
		gb = pbBytes(gb, fGraphInput, v)
	}
	for _, v := range outputs {
		gb = pbBytes(gb, fGraphOutput, v)
	}

	meta, err := ONNXMetadata(m)
	if err != nil {
		return nil, err
	}
	var b []byte
	b = pbVarint(b, fModelIRVersion, ONNXIRVersion)
	b = pbBytes(b, fModelOpsetImport, pbVarint(pbString(nil, fOpsetDomain, ""), fOpsetVersion, ONNXOpset))
	b = pbString(b, fModelProducerName, "pairfed")
	b = pbString(b, fModelProducerVer, m.Provenance.Pairfed)
	b = pbString(b, fModelDomain, "org.pairfed")
	b = pbVarint(b, fModelVersion, Version)
	b = pbString(b, fModelDocString, m.ScoreMeaning)
	b = pbBytes(b, fModelGraph, gb)
	for _, kv := range meta {
		b = pbBytes(b, fModelMetadataProps, pbString(pbString(nil, fEntryKey, kv[0]), fEntryValue, kv[1]))
	}
	return b, nil
}

// ONNXMetadata returns the metadata_props of the export, in order: the
// certificate summary, the expected input layout and what the caller must
// do before the graph.
func ONNXMetadata(m *Model) ([][2]string, error) {
	p := &m.Preprocessing
	feats := FeatureNames(m)
	fj, err := json.Marshal(feats)
	if err != nil {
		return nil, err
	}
	c := &m.Certificate
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	meta := [][2]string{
		{"pairfed.model_checksum", m.Checksum},
		{"pairfed.task", m.Task},
		{"pairfed.score_meaning", m.ScoreMeaning},
		{"pairfed.feature_names", string(fj)},
		{"pairfed.input", fmt.Sprintf("input %q: float64 [N, %d], the raw numeric values of the features in pairfed.feature_names order (the training file's columns without the label and ignored columns)", ONNXInput, m.D)},
		{"pairfed.positive_classes", p.Loader.PositiveClasses},
		{"privacy.private", strconv.FormatBool(c.Private)},
		{"privacy.epsilon", num(c.Epsilon)},
		{"privacy.delta", num(c.Delta)},
		{"privacy.mechanism", c.Mechanism},
		{"privacy.accountant", c.Accountant},
		{"privacy.neighbouring", c.Neighbouring},
		{"privacy.why", c.Why},
		{"preprocessing.scale", p.Scale},
		{"preprocessing.norm", p.Norm},
		{"preprocessing.radius", num(p.Radius)},
		{"preprocessing.impute", onnxImputeNote(p.Loader)},
	}
	if g := oneHotLayout(p.Schema, feats); g != "" {
		meta = append(meta, [2]string{"preprocessing.onehot", g})
	}
	if s := m.Signature; s != nil {
		meta = append(meta, [2]string{"pairfed.model_signer", fmt.Sprintf("%s (key fingerprint %s) signed the model file with checksum pairfed.model_checksum; this ONNX file itself carries no signature", s.Signer, s.KeyFingerprint)})
	}
	return meta, nil
}

// onnxImputeNote says what the graph does with a NaN input.
func onnxImputeNote(l Loader) string {
	switch {
	case l.Impute == "constant" && l.ImputeValues != nil, strings.HasPrefix(l.Impute, "constant:"):
		return "a NaN input is replaced by the stored constant of its feature (as pairfed score does; a feature without a constant stays NaN, which pairfed refuses)"
	case l.Impute == "mean" || l.Impute == "drop":
		return "imputation " + l.Impute + " depends on the scoring file and is the caller's: impute (or drop) before the graph; a NaN input gives a NaN score"
	}
	return "missing values are an error for pairfed score; a NaN input gives a NaN score: check inputs before the graph"
}

// oneHotLayout lists the one-hot groups of the schema ("group: name#1 …
// (columns i–j)"), or "" when there are none: the caller writes 1 in the
// column of the category and 0 in the group's others.
func oneHotLayout(s *data.Schema, feats []string) string {
	if s == nil {
		return ""
	}
	var parts []string
	j := 0
	for _, f := range s.Features {
		k := max(f.Count, 1)
		if f.OneHot != "" {
			parts = append(parts, fmt.Sprintf("%s: columns %d–%d (%s … %s), one indicator 1 and the others 0", f.OneHot, j+1, j+k, feats[j], feats[j+k-1]))
		}
		j += k
	}
	return strings.Join(parts, "; ")
}

// FeatureNames returns the model's feature names: Features, else the
// names of its schema (name, or name#k for a count), else "feature j".
func FeatureNames(m *Model) []string {
	if m.Features != nil {
		return m.Features
	}
	out := make([]string, 0, m.D)
	if s := m.Preprocessing.Schema; s != nil {
		for _, f := range s.Features {
			k := max(f.Count, 1)
			for c := 1; c <= k; c++ {
				name := f.Name
				if k > 1 && name != "" {
					name = fmt.Sprintf("%s#%d", f.Name, c)
				}
				out = append(out, name)
			}
		}
	}
	if len(out) != m.D {
		out = out[:0]
	}
	for j := len(out); j < m.D; j++ {
		out = append(out, "")
	}
	for j, n := range out {
		if n == "" {
			out[j] = fmt.Sprintf("feature %d", j+1)
		}
	}
	return out
}
