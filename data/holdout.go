package data

import (
	"fmt"
	"slices"

	"github.com/pairfed/pairfed/pairwise"
)

// Holdout lays one dataset out for k-fold cross-validation in place, one
// fold at a time, so that the folds' fitting and validation sets are
// slices of the dataset's own storage: views, never copies.
//
// Move(ds, fold) moves the records of fold to the end of ds, keeping the
// order of the others and of the fold's own, and returns the two parts as
// datasets sharing ds's storage: fit holds the records not in fold, in
// increasing index order, and val those of fold, in fold's order. These are
// the rows, in the same order, of ds.Subset(Complement(ds.N, fold)) and
// ds.Subset(fold), bit for bit. Restore puts every record back where it
// was, so that ds is again what it was, bit for bit.
//
// The only copy is of the fold's own records (its rows, labels, and for a
// CSR dataset the row pointers of ds): about n/k records for k folds,
// where gathering the k fitting and validation sets takes k·n. The buffers
// are kept for the next Move.
//
// Between Move and Restore, ds belongs to the Holdout: fit and val may be
// read (by any number of goroutines) and nothing may write ds, fit or val.
// A zero Holdout is ready to use; it is not safe for concurrent use.
type Holdout struct {
	ds   *pairwise.Dataset
	fold []int
	y    []float64 // the fold's labels
	x    []float64 // dense: the fold's rows
	idx  []int32   // CSR: the fold's column indices
	val  []float64 // CSR: the fold's values
	ptr  []int     // CSR: ds.Ptr as it was
}

// Move lays ds out with fold's records at its end and returns the two
// parts (see Holdout). fold must be strictly increasing indices into ds; a
// previous Move is restored first. It panics on a fold that is not
// (programmer error: data.StratifiedKFold and KFold return such folds),
// before anything is moved.
func (h *Holdout) Move(ds *pairwise.Dataset, fold []int) (fit, val *pairwise.Dataset) {
	h.move(ds, fold)
	n, m := ds.N, len(fold)
	return head(ds, n-m), ds.Slice(n-m, n)
}

// head returns the first k records of ds as a dataset sharing its storage:
// ds.Slice(0, k), but for CSR arrays from offset 0 with ds's own row
// pointers rather than a copy of them (valid while ds.Ptr is not
// rewritten: until Restore, or for good after Partition).
func head(ds *pairwise.Dataset, k int) *pairwise.Dataset {
	if ds.Ptr == nil || ds.Ptr[0] != 0 {
		return ds.Slice(0, k)
	}
	e := ds.Ptr[k]
	return &pairwise.Dataset{N: k, D: ds.D, Y: ds.Y[:k:k], Ptr: ds.Ptr[: k+1 : k+1], Idx: ds.Idx[:e:e], Val: ds.Val[:e:e]}
}

// move is Move without the parts.
func (h *Holdout) move(ds *pairwise.Dataset, fold []int) {
	for k, i := range fold {
		if i < 0 || i >= ds.N || (k > 0 && i <= fold[k-1]) {
			panic(fmt.Sprintf("data: Holdout.Move: fold[%d] = %d: a fold must be strictly increasing indices in [0, %d)", k, i, ds.N))
		}
	}
	h.Restore()
	n := ds.N
	h.ds, h.fold = ds, fold
	h.y = moveRows(ds.Y, 1, fold, h.y[:0])
	if ds.X != nil {
		h.x = moveRows(ds.X, ds.D, fold, h.x[:0])
	} else if ds.Ptr != nil {
		h.ptr = append(h.ptr[:0], ds.Ptr...)
		// Sized once for the fold's nonzeros (as moveRows sizes its
		// buffer): appending row by row would regrow them by a quarter
		// at a time, allocating about five times the fold.
		nnz := 0
		for _, i := range fold {
			nnz += ds.Ptr[i+1] - ds.Ptr[i]
		}
		h.idx, h.val = slices.Grow(h.idx[:0], nnz), slices.Grow(h.val[:0], nnz)
		for _, i := range fold {
			lo, hi := ds.Ptr[i], ds.Ptr[i+1]
			h.idx = append(h.idx, ds.Idx[lo:hi]...)
			h.val = append(h.val, ds.Val[lo:hi]...)
		}
		// The runs of other rows between the fold's move down, in
		// order, one copy each (a memmove), and their pointers with
		// them; then the fold's rows go last.
		at, r, from := h.ptr[0], 0, 0 // offset, row and first record of the next run
		run := func(to int) {
			lo, hi := h.ptr[from], h.ptr[to]
			copy(ds.Idx[at:], ds.Idx[lo:hi])
			copy(ds.Val[at:], ds.Val[lo:hi])
			for i := from; i < to; i++ {
				ds.Ptr[r] = h.ptr[i] - lo + at
				r++
			}
			at += hi - lo
		}
		for _, i := range fold {
			run(i)
			from = i + 1
		}
		run(n)
		copy(ds.Idx[at:], h.idx)
		copy(ds.Val[at:], h.val)
		for _, i := range fold {
			ds.Ptr[r] = at
			at += h.ptr[i+1] - h.ptr[i]
			r++
		}
		ds.Ptr[n] = at
	}
}

// Restore puts back the records the last Move moved (nothing when there is
// none). It may be called more than once.
func (h *Holdout) Restore() {
	ds, fold := h.ds, h.fold
	if ds == nil {
		return
	}
	h.ds, h.fold = nil, nil
	restoreRows(ds.Y, 1, fold, h.y)
	if ds.X != nil {
		restoreRows(ds.X, ds.D, fold, h.x)
		return
	}
	if ds.Ptr == nil {
		return
	}
	// The runs of other rows move back up, last first (each to an equal
	// or higher offset, past every run still to move), and the fold's
	// rows come from the copy.
	r := ds.N - len(fold)       // one past the last row of the runs still to move
	end, to := len(h.idx), ds.N // the end of the fold's rows still in the copy; of the next run
	for k := len(fold) - 1; k >= -1; k-- {
		from := 0
		if k >= 0 {
			from = fold[k] + 1
		}
		r -= to - from
		lo, hi := h.ptr[from], h.ptr[to]
		cur := ds.Ptr[r]
		copy(ds.Idx[lo:hi], ds.Idx[cur:cur+hi-lo])
		copy(ds.Val[lo:hi], ds.Val[cur:cur+hi-lo])
		if k >= 0 {
			i := fold[k]
			start := end - (h.ptr[i+1] - h.ptr[i])
			copy(ds.Idx[h.ptr[i]:], h.idx[start:end])
			copy(ds.Val[h.ptr[i]:], h.val[start:end])
			end, to = start, i
		}
	}
	copy(ds.Ptr, h.ptr)
}

// moveRows moves the rows (of width w) of a listed in fold to its end,
// keeping both parts' order, and returns buf with the fold's rows appended.
// The rows between two of the fold's move down in one copy (a memmove).
func moveRows(a []float64, w int, fold []int, buf []float64) []float64 {
	// Sized once, with a row to spare: the folds of a k-fold split differ
	// by at most one record, so the buffer kept for the next Move is not
	// regrown (nor doubled past the need) at every fold.
	buf = slices.Grow(buf[:0], (len(fold)+1)*w)
	for _, i := range fold {
		buf = append(buf, a[i*w:i*w+w]...)
	}
	at, from := 0, 0 // the next run's destination and start
	for _, i := range fold {
		at += copy(a[at:], a[from:i*w])
		from = i*w + w
	}
	at += copy(a[at:], a[from:])
	copy(a[at:], buf)
	return buf
}

// restoreRows undoes moveRows(a, w, fold, …), whose appended rows are buf:
// the runs between the fold's rows move back up, last first (each to an
// equal or higher offset, past every run still to move), and the fold's
// rows come from buf.
func restoreRows(a []float64, w int, fold []int, buf []float64) {
	end := len(a) - len(buf) // the end of the runs still to move
	to := len(a)             // the end of the next run's destination
	for k := len(fold) - 1; k >= -1; k-- {
		lo := 0 // the next run's destination start
		if k >= 0 {
			lo = fold[k]*w + w
		}
		n := to - lo
		copy(a[lo:to], a[end-n:end])
		end -= n
		if k >= 0 {
			copy(a[lo-w:lo], buf[k*w:k*w+w])
			to = lo - w
		}
	}
}

// Partition lays ds out as Holdout.Move does, for good: the records of fold
// go to the end of ds, in fold's order, the others before them in
// increasing index order, and the two parts are returned as datasets
// sharing ds's storage — the rows, in the same order, of
// ds.Subset(Complement(ds.N, fold)) and ds.Subset(fold), bit for bit. There
// is no way back: ds, fit and val are then the caller's to read and write
// (scale in place), and ds's own order is lost. It is the split of a table
// the caller needs no more, without a copy of the records: the only one is
// of fold's rows while they move, dropped before Partition returns. fold
// must be strictly increasing indices into ds (Move's panic otherwise).
func Partition(ds *pairwise.Dataset, fold []int) (fit, val *pairwise.Dataset) {
	var h Holdout
	h.move(ds, fold)
	n, m := ds.N, len(fold)
	return head(ds, n-m), ds.Slice(n-m, n)
}
