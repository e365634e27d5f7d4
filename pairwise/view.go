package pairwise

import (
	"fmt"
	"slices"
)

// View is the records Rows of Data, in that order, read through the index:
// a fold, a split or a validation part of one stored dataset, without a
// copy of any feature. Rows nil means every record of Data, in order.
//
// A view costs 8 bytes per record. Reading it is bit-identical to reading
// the gathered copy (LinearAUCView, ScoresViewTo, KNNAccuracyView), but its
// rows are scattered in memory: scoring a test fold (a fifth of the
// records) through a view takes 2–6× the time of scoring its gathered copy
// on the ijcnn1 and w8a shapes (BenchmarkViewScores). So a fold read many
// times — a training fold (the sgd-prev loops index rows by position, and
// an indirection would cost every draw) or a test fold scored at every
// checkpoint — is made contiguous: where the folds partition one dataset
// the caller owns (selection's inner folds, the paper protocol's splits),
// data.Holdout lays one fold at a time out in that dataset's own storage
// and Slice reads its parts; otherwise Gather or GatherTo copies it.
type View struct {
	Data *Dataset
	Rows []int // indices into Data; nil: all of Data
}

// All returns the view of every record of s.
func (s *Dataset) All() View { return View{Data: s} }

// View returns the view of the records rows of s, in that order. rows is
// kept, not copied: the caller must not modify it while the view is in use.
// It panics on an index outside [0, N) (programmer error).
func (s *Dataset) View(rows []int) View {
	for _, i := range rows {
		if i < 0 || i >= s.N {
			panic(fmt.Sprintf("pairwise: View: record %d outside [0, %d)", i, s.N))
		}
	}
	if rows == nil {
		rows = []int{} // an empty view, not all of s
	}
	return View{Data: s, Rows: rows}
}

// Len returns the number of records in the view.
func (v View) Len() int {
	if v.Rows == nil {
		return v.Data.N
	}
	return len(v.Rows)
}

// Index returns the index in v.Data of the view's k-th record.
func (v View) Index(k int) int {
	if v.Rows == nil {
		return k
	}
	return v.Rows[k]
}

// Label returns the label of the view's k-th record.
func (v View) Label(k int) float64 { return v.Data.Y[v.Index(k)] }

// Labels returns the labels of the view's records: v.Data.Y itself for a
// view of all records (do not modify it), otherwise a new slice.
func (v View) Labels() []float64 {
	if v.Rows == nil {
		return v.Data.Y
	}
	y := make([]float64, len(v.Rows))
	for k, i := range v.Rows {
		y[k] = v.Data.Y[i]
	}
	return y
}

// Sub returns the view of the view's records idx (positions in v), in that
// order: the indices compose, no feature is copied. It panics on a position
// outside [0, Len()).
func (v View) Sub(idx []int) View {
	rows := make([]int, len(idx))
	n := v.Len()
	for k, p := range idx {
		if p < 0 || p >= n {
			panic(fmt.Sprintf("pairwise: View.Sub: position %d outside [0, %d)", p, n))
		}
		rows[k] = v.Index(p)
	}
	return View{Data: v.Data, Rows: rows}
}

// Dataset returns the view's records as a dataset: v.Data itself for a view
// of all records (shared: do not modify it), otherwise Gather().
func (v View) Dataset() *Dataset {
	if v.Rows == nil {
		return v.Data
	}
	return v.Gather()
}

// Gather returns a new contiguous dataset holding the view's records in
// order, in v.Data's representation (the copy training reads).
func (v View) Gather() *Dataset { return v.GatherTo(nil) }

// Subset returns a new dataset holding the rows idx in that order (copied):
// s.View(idx).Gather().
func (s *Dataset) Subset(idx []int) *Dataset { return s.View(idx).Gather() }

// GatherTo writes the view's records into dst, reusing its storage where
// large enough, and returns it (a new dataset when dst is nil). dst must not
// share storage with v.Data. The result is the dataset Gather returns, with
// capacities that may differ.
func (v View) GatherTo(dst *Dataset) *Dataset {
	s := v.Data
	if dst == nil {
		dst = &Dataset{}
	}
	n, d := v.Len(), s.D
	dst.N, dst.D = n, d
	dst.Y = resize(dst.Y, n)
	for k := range n {
		dst.Y[k] = s.Y[v.Index(k)]
	}
	if s.X != nil {
		dst.Ptr, dst.Idx, dst.Val = nil, nil, nil
		dst.X = resize(dst.X, n*d)
		for k := range n {
			i := v.Index(k)
			copy(dst.X[k*d:(k+1)*d], s.X[i*d:(i+1)*d])
		}
		return dst
	}
	dst.X = nil
	nnz := 0
	for k := range n {
		i := v.Index(k)
		nnz += s.Ptr[i+1] - s.Ptr[i]
	}
	dst.Ptr = resize(dst.Ptr, n+1)
	dst.Idx = resize(dst.Idx, nnz)
	dst.Val = resize(dst.Val, nnz)
	at := 0
	dst.Ptr[0] = 0
	for k := range n {
		i := v.Index(k)
		a, b := s.Ptr[i], s.Ptr[i+1]
		copy(dst.Idx[at:], s.Idx[a:b])
		copy(dst.Val[at:], s.Val[a:b])
		at += b - a
		dst.Ptr[k+1] = at
	}
	return dst
}

// resize returns a non-nil slice of length n, s's storage when its
// capacity allows.
func resize[T any](s []T, n int) []T {
	if s != nil && cap(s) >= n {
		return s[:n]
	}
	return slices.Grow(s[:0], n)[:n]
}

// ScoresViewTo writes s_k = wᵀx for the view's k-th record into dst (len
// Len()) and returns it: the same values ScoresTo computes on the gathered
// records.
func ScoresViewTo(dst, w []float64, v View) []float64 {
	s := v.Data
	if v.Rows == nil {
		return ScoresTo(dst, w, s)
	}
	if s.X != nil { // Dot's dense branch, hoisted out of the loop
		d := s.D
		for k, i := range v.Rows {
			dst[k] = dot(s.X[i*d:i*d+d], w)
		}
		return dst
	}
	for k, i := range v.Rows {
		dst[k] = s.Dot(i, w)
	}
	return dst
}

// LinearAUCView returns the AUC of the linear scorer w on the view's
// records: LinearAUC of the gathered records, without gathering them.
func LinearAUCView(w []float64, v View) float64 {
	return AUC(ScoresViewTo(make([]float64, v.Len()), w, v), v.Labels())
}
