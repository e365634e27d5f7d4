package data

import (
	"fmt"
	"math"

	"github.com/pairfed/pairfed/pairwise"
)

// Scaler is a per-feature affine map x'_j = (x_j − Shift[j])·Scale[j]
// fitted on training data and applied unchanged to test data, so that no
// statistic of the test set leaks into training.
//
// Kind "bounds" (NewBoundsScaler) is not fitted: it maps public ranges
// [lo_j, hi_j] to [−1, 1] and clips each coordinate to [−1, 1] (Box).
type Scaler struct {
	Kind  string // "none", "minmax", "standard" or "bounds"
	Shift []float64
	Scale []float64
	// Box clips every scaled coordinate to [−1, 1] (kind "bounds"), or
	// to [BoxLo[j], BoxHi[j]] when those are set.
	Box          bool
	BoxLo, BoxHi []float64
	// MaxNorm is the largest ‖x'‖₂ a record can have after the box clip
	// (0: √d, the box's corner); Divide uses it.
	MaxNorm float64
	// Post, when not 0, multiplies every coordinate after the box clip
	// (kind "bounds"; see Divide).
	Post float64
}

// Divide returns a copy of a "bounds" scaler that also multiplies every
// coordinate by R/M after the box clip, M = MaxNorm (√d unless the schema
// knows better, e.g. one-hot groups), so that ‖x'‖₂ ≤ R holds by
// construction for every record the schema describes: the map stays linear
// on the box (no record is shrunk more than another by the ℓ2 clipping
// that follows, which then only absorbs floating-point rounding and
// records that break a one-hot declaration), at the price of records whose
// norm is typically below R.
func (s *Scaler) Divide(R float64) *Scaler {
	if s.Kind != "bounds" || !(R > 0) || math.IsInf(R, 0) {
		panic(fmt.Sprintf("data: Scaler.Divide: kind %q, R = %v (want a bounds scaler and a finite R > 0)", s.Kind, R))
	}
	c := *s
	m := s.MaxNorm
	if m == 0 {
		m = math.Sqrt(float64(len(s.Scale)))
	}
	c.Post = R / m
	return &c
}

// NewBoundsScaler returns the per-record map of public feature ranges:
//
//	x'_j = clip((x_j − m_j)/h_j, −1, 1),  m_j = (lo_j + hi_j)/2,  h_j = (hi_j − lo_j)/2,
//
// so [lo_j, hi_j] maps onto [−1, 1] and values outside land on the nearest
// end. Each output record is a function of its own input record and the
// bounds only (no statistic of any other record), so as long as the bounds
// are public — a schema written before the data was seen, or a
// differentially private estimate whose cost is charged — applying it costs
// no privacy, and the neighbouring relation of the records is preserved:
// datasets that differ in one record still differ in one record after the
// map. The map is monotone non-decreasing in every coordinate, and ‖x'‖∞ ≤ 1,
// so ‖x'‖₂ ≤ √d before the ℓ2 clipping to R that follows (ClipNorms).
// It panics unless len(lo) = len(hi) and every lo_j < hi_j is finite
// (validated inputs: Schema.Validate, dp.EstimateRanges).
func NewBoundsScaler(lo, hi []float64) *Scaler {
	if len(lo) != len(hi) {
		panic(fmt.Sprintf("data: NewBoundsScaler: %d lower but %d upper bounds", len(lo), len(hi)))
	}
	s := &Scaler{Kind: "bounds", Shift: make([]float64, len(lo)), Scale: make([]float64, len(lo)), Box: true}
	for j := range lo {
		h := hi[j]/2 - lo[j]/2
		if math.IsNaN(lo[j]) || math.IsInf(lo[j], 0) || math.IsNaN(hi[j]) || math.IsInf(hi[j], 0) || !(h > 0) || math.IsInf(1/h, 0) {
			panic(fmt.Sprintf("data: NewBoundsScaler: feature %d: bad range [%v, %v]", j+1, lo[j], hi[j]))
		}
		s.Shift[j], s.Scale[j] = lo[j]/2+hi[j]/2, 1/h
	}
	return s
}

// CheckApply reports whether Apply may scale ds: it must have the fitted
// dimension, and sparse data with D > 1000 is refused unless the map sends
// 0 to 0 in every feature (FixesZero: Apply then keeps it sparse); any
// other map would make the output dense.
func (s *Scaler) CheckApply(ds *pairwise.Dataset) error {
	if ds.D != len(s.Scale) {
		return fmt.Errorf("data: the data has %d features but the %s scaling has %d", ds.D, s.Kind, len(s.Scale))
	}
	if s.Kind != "none" && ds.IsSparse() && ds.D > maxScaleDim && !s.FixesZero() {
		return fmt.Errorf("data: %s scaling of sparse data with d=%d > %d would densify it (it moves the zeros of %d features, e.g. feature %d: 0 ↦ %g); use --scale none, or bounds whose midpoint is 0 (lo = −hi) or one-hot groups, which keep zeros", s.Kind, ds.D, maxScaleDim, s.movedZeros(), s.firstMovedZero()+1, s.mapOne(s.firstMovedZero(), 0))
	}
	return nil
}

// maxScaleDim is the largest D for which a sparse dataset may be scaled
// densely: a map that moves zeros makes the output dense.
const maxScaleDim = 1000

// mapOne is the scaler's map of value v in feature j (Apply's operations).
func (s *Scaler) mapOne(j int, v float64) float64 {
	if s.Kind == "none" {
		return v
	}
	v = (v - s.Shift[j]) * s.Scale[j]
	if s.Box && s.BoxLo != nil {
		v = max(s.BoxLo[j], min(s.BoxHi[j], v))
	} else if s.Box {
		v = max(-1, min(1, v))
	}
	if s.Post != 0 {
		v *= s.Post
	}
	return v
}

// FixesZero reports whether the map sends 0 to 0 (+0 or −0) in every
// feature: then a sparse record's image has the same zeros, and Apply
// keeps sparse data sparse.
func (s *Scaler) FixesZero() bool { return s.firstMovedZero() < 0 }

func (s *Scaler) firstMovedZero() int {
	for j := range s.Scale {
		if s.mapOne(j, 0) != 0 {
			return j
		}
	}
	return -1
}

func (s *Scaler) movedZeros() int {
	c := 0
	for j := range s.Scale {
		if s.mapOne(j, 0) != 0 {
			c++
		}
	}
	return c
}

// fitSparse fits s (minmax or standard) on CSR data in O(nnz + d), the
// implicit zeros counted: a column's range includes 0 when it has fewer
// than n stored values; its mean is Σx/n and its variance (Σ(x − mean)² over
// the stored values + (n − stored)·mean²)/n (two passes). The minmax map is
// the one the dense fit gives (min and max are exact); the standard map
// equals Welford's up to rounding. Used where the dense fit (O(n·d)) was
// refused: sparse data with d > 1000.
func fitSparse(s *Scaler, ds *pairwise.Dataset) {
	d, n := ds.D, ds.N
	cnt := make([]int, d)
	for _, j := range ds.Idx {
		cnt[j]++
	}
	if s.Kind == "minmax" {
		lo, hi := make([]float64, d), make([]float64, d)
		seen := make([]bool, d)
		for k, j := range ds.Idx {
			v := ds.Val[k]
			if !seen[j] || v < lo[j] {
				lo[j] = v
			}
			if !seen[j] || v > hi[j] {
				hi[j] = v
			}
			seen[j] = true
		}
		for j := range lo {
			if cnt[j] < n { // an implicit zero
				lo[j], hi[j] = min(lo[j], 0), max(hi[j], 0)
			}
			s.Shift[j] = lo[j]/2 + hi[j]/2
			if half := hi[j]/2 - lo[j]/2; half > 0 {
				s.Scale[j] = 1 / half
			}
			if math.IsInf(s.Scale[j], 0) {
				s.Scale[j] = 0
			}
		}
		return
	}
	mean, m2 := s.Shift, make([]float64, d)
	for k, j := range ds.Idx {
		mean[j] += ds.Val[k]
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	for k, j := range ds.Idx {
		e := ds.Val[k] - mean[j]
		m2[j] += e * e
	}
	for j := range mean {
		m2[j] += float64(n-cnt[j]) * mean[j] * mean[j]
		sd := math.Sqrt(m2[j] / float64(n))
		if sd > 0 && !math.IsInf(sd, 0) {
			s.Scale[j] = 1 / sd
		}
		if math.IsInf(s.Scale[j], 0) || math.IsNaN(s.Scale[j]) {
			s.Scale[j] = 0
		}
	}
}

// FitScaler fits a scaler of the given kind on ds:
//
//   - "none": the identity;
//   - "minmax": each feature's training range [min, max] maps to [−1, 1]
//     (a constant feature maps to 0); test values may fall outside;
//   - "standard": each feature gets zero mean and unit variance (the
//     population variance, dividing by n); a constant feature maps to 0.
//
// For sparse data the implicit zeros count. Because minmax and standard
// maps move zeros, they are refused for sparse data with D > 1000 (Apply
// would densify it); FitScalerSparse fits them there for ApplyUnshifted.
// ds is not modified.
func FitScaler(kind string, ds *pairwise.Dataset) (*Scaler, error) {
	return fitScaler(kind, ds, false)
}

// FitScalerSparse is FitScaler that also fits minmax and standard maps on
// sparse data with d > 1000 (fitSparse, O(nnz + d)), for a caller that
// applies such a map only with ApplyUnshifted, or after CheckApply (which
// refuses it: applied with its shift it would densify the data).
func FitScalerSparse(kind string, ds *pairwise.Dataset) (*Scaler, error) {
	return fitScaler(kind, ds, true)
}

func fitScaler(kind string, ds *pairwise.Dataset, sparseOK bool) (*Scaler, error) {
	d := ds.D
	s := &Scaler{Kind: kind, Shift: make([]float64, d), Scale: make([]float64, d)}
	switch kind {
	case "none", "":
		s.Kind = "none"
		for j := range s.Scale {
			s.Scale[j] = 1
		}
		return s, nil
	case "minmax", "standard":
	default:
		return nil, fmt.Errorf("data: unknown scaling %q (want none, minmax or standard)", kind)
	}
	if ds.N == 0 {
		return nil, fmt.Errorf("data: cannot fit a scaler on an empty dataset")
	}
	if ds.IsSparse() && d > maxScaleDim {
		if !sparseOK {
			return nil, fmt.Errorf("data: %s scaling of sparse data with d=%d > %d would densify it; use --scale none", kind, d, maxScaleDim)
		}
		fitSparse(s, ds)
		return s, nil
	}
	row := make([]float64, d)
	if kind == "minmax" {
		lo, hi := make([]float64, d), make([]float64, d)
		for i := 0; i < ds.N; i++ {
			ds.DenseRowTo(row, i)
			for j, v := range row {
				if i == 0 || v < lo[j] {
					lo[j] = v
				}
				if i == 0 || v > hi[j] {
					hi[j] = v
				}
			}
		}
		for j := range lo {
			// Halves first, so that neither the midpoint nor the
			// half-range overflows.
			s.Shift[j] = lo[j]/2 + hi[j]/2
			if half := hi[j]/2 - lo[j]/2; half > 0 {
				s.Scale[j] = 1 / half
			}
			if math.IsInf(s.Scale[j], 0) { // half-range subnormal
				s.Scale[j] = 0
			}
		}
		return s, nil
	}
	// Standard: Welford's update for mean and variance.
	mean, m2 := s.Shift, make([]float64, d)
	for i := 0; i < ds.N; i++ {
		ds.DenseRowTo(row, i)
		for j, v := range row {
			delta := v - mean[j]
			mean[j] += delta / float64(i+1)
			m2[j] += delta * (v - mean[j])
		}
	}
	for j := range mean {
		sd := math.Sqrt(m2[j] / float64(ds.N))
		if math.IsNaN(sd) || math.IsInf(sd, 0) || math.IsInf(mean[j], 0) {
			return nil, fmt.Errorf("data: feature %d: values too large to standardize", j+1)
		}
		if sd > 0 {
			s.Scale[j] = 1 / sd
		}
		if math.IsInf(s.Scale[j], 0) {
			s.Scale[j] = 0
		}
	}
	return s, nil
}

// Apply returns a new dense dataset with the scaler applied to every
// record of ds (labels copied). Kind "none", and sparse data with D > 1000
// under a map that sends 0 to 0 in every feature (FixesZero: bounds with
// midpoint 0, one-hot groups), return a copy in ds's representation: the
// same values where ds stores one, zeros elsewhere. ds is not modified. It panics if ds.D differs from the
// fitted dimension (call Align first).
func (s *Scaler) Apply(ds *pairwise.Dataset) *pairwise.Dataset {
	if ds.D != len(s.Scale) {
		panic(fmt.Sprintf("data: Scaler.Apply: dataset has d=%d, scaler was fitted on d=%d", ds.D, len(s.Scale)))
	}
	if s.Kind == "none" {
		return clone(ds)
	}
	if ds.IsSparse() && ds.D > maxScaleDim && s.FixesZero() {
		// the zeros stay zeros: map the stored values in the CSR copy
		// (the same operations as below on each of them). Below
		// maxScaleDim the dense output is kept (the results and goldens
		// of the small sparse sets, a9a, w8a, were computed on it).
		out := clone(ds)
		for k, j := range out.Idx {
			out.Val[k] = s.mapOne(int(j), out.Val[k])
		}
		return out
	}
	d := ds.D
	out := &pairwise.Dataset{N: ds.N, D: d, Y: append([]float64(nil), ds.Y...), X: make([]float64, ds.N*d)}
	for i := 0; i < ds.N; i++ {
		s.mapRow(ds.DenseRowTo(out.X[i*d:(i+1)*d], i))
	}
	return out
}

// mapRow maps one dense row in place: shift and scale, the box clip
// (per-feature bounds or [−1, 1]), then the post factor — Apply's and
// ApplyInPlace's one definition of the map, so their values agree bit for
// bit.
func (s *Scaler) mapRow(row []float64) {
	for j, v := range row {
		row[j] = (v - s.Shift[j]) * s.Scale[j]
	}
	if s.Box && s.BoxLo != nil {
		for j, v := range row {
			row[j] = max(s.BoxLo[j], min(s.BoxHi[j], v))
		}
	} else if s.Box {
		for j, v := range row {
			row[j] = max(-1, min(1, v))
		}
	}
	if s.Post != 0 {
		for j := range row {
			row[j] *= s.Post
		}
	}
}

// ApplyInPlace is Apply written over ds's own storage, for a dataset the
// caller owns and no longer needs unscaled (a gathered split): the same
// operations in the same order, so the values are bit-identical to
// Apply's, without a second matrix. It returns ds, or Apply's new dense
// copy when ds is sparse and the map would densify it (the case Apply
// turns sparse into dense). ds.Y is kept.
func (s *Scaler) ApplyInPlace(ds *pairwise.Dataset) *pairwise.Dataset {
	if ds.D != len(s.Scale) {
		panic(fmt.Sprintf("data: Scaler.ApplyInPlace: dataset has d=%d, scaler was fitted on d=%d", ds.D, len(s.Scale)))
	}
	if s.Kind == "none" {
		return ds
	}
	if ds.IsSparse() {
		if ds.D > maxScaleDim && s.FixesZero() {
			for k, j := range ds.Idx {
				ds.Val[k] = s.mapOne(int(j), ds.Val[k])
			}
			return ds
		}
		return s.Apply(ds)
	}
	d := ds.D
	for i := 0; i < ds.N; i++ {
		s.mapRow(ds.X[i*d : (i+1)*d])
	}
	return ds
}

// ApplyUnshiftedInPlace is ApplyUnshifted written over ds's own storage
// (bit-identical values, ds.Y kept); it returns ds.
func (s *Scaler) ApplyUnshiftedInPlace(ds *pairwise.Dataset) *pairwise.Dataset {
	if ds.D != len(s.Scale) || (s.Kind != "minmax" && s.Kind != "standard") {
		panic(fmt.Sprintf("data: Scaler.ApplyUnshiftedInPlace: kind %q, dataset d=%d, scaler d=%d (want minmax or standard, equal d)", s.Kind, ds.D, len(s.Scale)))
	}
	if ds.X != nil {
		for i := 0; i < ds.N; i++ {
			row := ds.X[i*ds.D : (i+1)*ds.D]
			for j, v := range row {
				row[j] = v * s.Scale[j]
			}
		}
		return ds
	}
	for k, j := range ds.Idx {
		ds.Val[k] *= s.Scale[j]
	}
	return ds
}

// ApplyUnshifted returns ds with only the scaling part of a "minmax" or
// "standard" map applied, x̃_i = Scale ⊙ x_i, in ds's representation
// (implicit zeros stay zero, so sparse data stays sparse). The full map's
// record is x'_i = x̃_i − Scale ⊙ Shift, one vector c for every record, so
// every difference x'_i − x'_j = x̃_i − x̃_j (up to rounding), and with it
// every pairwise loss wᵀ(x_i − x_j), every distance, score difference and
// ranking: for a pairwise.Algorithm with ShiftInvariant set the model is
// the full map's. The scores wᵀx'_i = wᵀx̃_i − wᵀc differ by a constant,
// which AUC ignores. What does depend on c — the norms ‖x'_i‖ that
// clipping reads — must use Apply (Shift stays in the Scaler for that).
// ds is not modified; labels are copied. It panics for other kinds or a
// dimension mismatch (programmer errors).
func (s *Scaler) ApplyUnshifted(ds *pairwise.Dataset) *pairwise.Dataset {
	if ds.D != len(s.Scale) || (s.Kind != "minmax" && s.Kind != "standard") {
		panic(fmt.Sprintf("data: Scaler.ApplyUnshifted: kind %q, dataset d=%d, scaler d=%d (want minmax or standard, equal d)", s.Kind, ds.D, len(s.Scale)))
	}
	out := clone(ds)
	if out.X != nil {
		for i := 0; i < out.N; i++ {
			row := out.X[i*out.D : (i+1)*out.D]
			for j, v := range row {
				row[j] = v * s.Scale[j]
			}
		}
		return out
	}
	for k, j := range out.Idx {
		out.Val[k] *= s.Scale[j]
	}
	return out
}

// clone returns a deep copy of ds.
func clone(ds *pairwise.Dataset) *pairwise.Dataset {
	return &pairwise.Dataset{
		N: ds.N, D: ds.D,
		Y:   append([]float64(nil), ds.Y...),
		X:   append([]float64(nil), ds.X...),
		Ptr: append([]int(nil), ds.Ptr...),
		Idx: append([]int32(nil), ds.Idx...),
		Val: append([]float64(nil), ds.Val...),
	}
}

// ClipNorms returns a copy of ds (same representation) in which every
// record is scaled to x·min(1, R/‖x‖), so that ‖x‖ ≤ R holds for every
// output record as computed in floating point, and the number of records
// that were scaled down. Records already within R are copied bit for bit.
// This bound is what the sensitivity analysis of the private algorithms
// relies on. ds is not modified. It panics unless R is positive and
// finite; see Clip for user-supplied radii.
func ClipNorms(ds *pairwise.Dataset, R float64) (out *pairwise.Dataset, clipped int) {
	if !(R > 0) || math.IsInf(R, 0) {
		panic(fmt.Sprintf("data: ClipNorms: radius %v is not positive and finite", R))
	}
	out = clone(ds)
	return out, ClipNormsInPlace(out, R)
}

// ClipNormsInPlace is ClipNorms on ds itself: every record is scaled to
// x·min(1, R/‖x‖) in its own storage (the same values ClipNorms writes to
// its copy), without a second copy of the matrix. For a dataset the caller
// owns alone, such as the fresh output of Scaler.Apply. It panics unless R
// is positive and finite.
func ClipNormsInPlace(ds *pairwise.Dataset, R float64) (clipped int) {
	if !(R > 0) || math.IsInf(R, 0) {
		panic(fmt.Sprintf("data: ClipNormsInPlace: radius %v is not positive and finite", R))
	}
	var orig []float64 // clipTo's scratch, kept from row to row
	for i := 0; i < ds.N; i++ {
		var x []float64
		if ds.X != nil {
			x = ds.X[i*ds.D : (i+1)*ds.D]
		} else {
			x = ds.Val[ds.Ptr[i]:ds.Ptr[i+1]]
		}
		if clipTo(x, R, &orig) {
			clipped++
		}
	}
	return clipped
}

// clipTo scales x in place to norm at most R, reporting whether it did;
// *scratch holds a copy of x while it does (reused: one buffer for every
// row, not a copy of each clipped row left to the collector).
func clipTo(x []float64, R float64, scratch *[]float64) bool {
	n := norm2(x)
	if n <= R {
		return false
	}
	orig := append((*scratch)[:0], x...)
	*scratch = orig
	f := R / n
	for try := 0; ; try++ {
		for j, v := range orig {
			x[j] = v * f
		}
		if norm2(x) <= R {
			return true
		}
		if try == 64 { // unreachable in practice; stay safe
			clear(x)
			return true
		}
		f *= 1 - 0x1p-50
	}
}

// norm2 returns ‖x‖ for the clipping test. In the normal range it is the
// larger of two roundings of the sum of squares (a plain loop and the
// two-lane loop of pairwise.Dataset.SqNorm), so a record that passes here
// also passes a check made with SqNorm. Outside that range it rescales by
// max|x_j| to avoid overflow and underflow.
func norm2(x []float64) float64 {
	var plain float64
	for _, v := range x {
		plain += v * v
	}
	if plain > 0x1p-900 && !math.IsInf(plain, 0) {
		return math.Sqrt(max(plain, pairwise.Dot(x, x)))
	}
	var m float64
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	if m == 0 {
		return 0
	}
	var s float64
	for _, v := range x {
		s += (v / m) * (v / m)
	}
	return m * math.Sqrt(s)
}

// Clip clips records to norm R for a radius given by a user: R = 0 means
// no clipping and returns ds itself; a negative, NaN or infinite R is an
// error. See ClipNorms.
func Clip(ds *pairwise.Dataset, R float64) (*pairwise.Dataset, int, error) {
	switch {
	case R == 0:
		return ds, 0, nil
	case !(R > 0) || math.IsInf(R, 0):
		return nil, 0, fmt.Errorf("data: clipping radius %v must be positive and finite (0 disables clipping)", R)
	}
	out, n := ClipNorms(ds, R)
	return out, n, nil
}
