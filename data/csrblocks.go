package data

import (
	"runtime/debug"
	"unsafe"
)

// A LIBSVM file that looks dense is parsed into blocks of CSR rows rather
// than one growing pair of arrays, so that its conversion to dense storage
// (builder.dataset) can give each block back as soon as its rows are
// written: CSR and the dense matrix are then never both resident, and no
// doubling array leaves its slack behind. The values and their order are
// those of the contiguous parse; only where they are kept differs.

// blockNNZ is the number of nonzeros after which readLIBSVM closes a block
// (at the end of a record: records never straddle blocks), 12 MiB of
// indices and values. A variable only so that a test can make blocks small
// (TestBlockedLIBSVMMatchesContiguous); nothing else writes it.
var blockNNZ = 1 << 20

// releaseBlockBytes: the dense conversion hands the dropped blocks back to
// the system each time this many bytes of them are freed.
const releaseBlockBytes = 32 << 20

// csrBlock holds the nonzeros of records row0 … row1−1; off is the
// absolute offset (in b.ptr's terms) of its first nonzero. A block whose
// rows take less room dense than as CSR (density above two thirds: 8
// bytes a cell against 12 a nonzero) is kept dense instead: dense holds
// its rows at width w (the largest index seen when it closed; the
// columns after it are zero), idx and val are nil. Its values are the
// nonzeros, at their columns: the rows are the same either way.
type csrBlock struct {
	row0, row1 int
	off        int
	idx        []int32
	val        []float64
	w          int
	dense      []float64
}

// closeBlock moves the current idx/val (the records since the last block,
// up to the record just ended) into a block, when the file looks dense so
// far (sparseSmaller would choose dense) or blocks are already in use; a
// file that looks sparse keeps its contiguous arrays (stored as they are).
// It is called at the end of a record.
func (b *builder) closeBlock(maxIdx int) {
	if len(b.idx) < blockNNZ || b.opt.Representation == Sparse {
		return
	}
	rows := len(b.ptr) - 1
	if len(b.blocks) == 0 && sparseSmaller(rows, max(maxIdx, b.opt.Dim), len(b.idx)) {
		return
	}
	b.flushBlock()
	if b.densifyBlock(&b.blocks[len(b.blocks)-1], max(maxIdx, b.opt.Dim)) {
		return // its arrays are b.idx and b.val again, for the next block
	}
	// The next block is about as large as this one.
	reserve(b.m, &b.idx, blockNNZ+blockNNZ/8, "the feature indices")
	reserve(b.m, &b.val, blockNNZ+blockNNZ/8, "the feature values")
}

// densifyBlock stores bl's rows dense at width w when that takes less
// room than its CSR arrays (and the dense rows fit the budget), giving
// the CSR arrays back to b.idx and b.val, emptied, to parse the next
// block into: a file that looks dense is then held at about its dense
// size while it is read, not at 1.5 times it. It reports whether it did.
func (b *builder) densifyBlock(bl *csrBlock, w int) bool {
	rows := bl.row1 - bl.row0
	if b.opt.Representation == Sparse || int64(rows)*int64(w)*8 >= int64(len(bl.idx))*12 ||
		b.m.charge(int64(rows)*int64(w)*8, "") != nil {
		return false
	}
	dense := make([]float64, rows*w)
	for i := bl.row0; i < bl.row1; i++ {
		row := dense[(i-bl.row0)*w : (i-bl.row0+1)*w]
		for k := b.ptr[i]; k < b.ptr[i+1]; k++ {
			row[bl.idx[k-bl.off]] = bl.val[k-bl.off]
		}
	}
	b.idx, b.val = bl.idx[:0], bl.val[:0]
	bl.idx, bl.val, bl.w, bl.dense = nil, nil, w, dense
	return true
}

// denseRows writes the rows of bl (either kind) into x, rows of width d ≥
// bl.w starting at row 0 of x, all zero before.
func (b *builder) denseRows(x []float64, d int, bl *csrBlock) {
	for i := bl.row0; i < bl.row1; i++ {
		row := x[i*d : (i+1)*d]
		if bl.dense != nil {
			copy(row, bl.dense[(i-bl.row0)*bl.w:(i-bl.row0+1)*bl.w])
			continue
		}
		for k := b.ptr[i]; k < b.ptr[i+1]; k++ {
			row[bl.idx[k-bl.off]] = bl.val[k-bl.off]
		}
	}
}

// flushBlock moves the records after the last block into a block.
func (b *builder) flushBlock() {
	row0 := 0
	if k := len(b.blocks); k > 0 {
		row0 = b.blocks[k-1].row1
	}
	rows := len(b.ptr) - 1
	if row0 == rows && len(b.idx) == 0 {
		return
	}
	b.blocks = append(b.blocks, csrBlock{row0: row0, row1: rows, off: b.base, idx: b.idx, val: b.val})
	b.base += len(b.idx)
	b.idx, b.val = nil, nil
}

// dropBlock releases a block's arrays and their charge, returning the
// bytes released.
func (b *builder) dropBlock(bl *csrBlock) int64 {
	n := int64(cap(bl.idx))*int64(unsafe.Sizeof(int32(0))) + int64(cap(bl.val))*8 + int64(cap(bl.dense))*8
	b.m.used -= n
	bl.idx, bl.val, bl.dense = nil, nil, nil
	return n
}

// concatBlocks joins the blocks and the current arrays into one pair of
// contiguous arrays (sparse storage after a file that looked dense). The
// new arrays are charged as they are filled against the transient
// allowance (limit + limit/transientShare), the blocks released as they
// are copied.
func (b *builder) concatBlocks() error {
	if len(b.blocks) == 0 {
		return nil
	}
	b.flushBlock()
	nnz := b.base
	need := int64(nnz) * 12
	if b.m.used+need > b.m.limit+b.m.limit/transientShare {
		return b.m.errorf(raiseLimit, "memory for the sparse storage: %s needed with %s in use", FormatSize(need), FormatSize(b.m.used))
	}
	b.m.used += need
	idx := make([]int32, 0, nnz)
	val := make([]float64, 0, nnz)
	var freed int64
	for i := range b.blocks {
		bl := &b.blocks[i]
		if bl.dense != nil {
			// its nonzeros, in the order the CSR held them
			for k, v := range bl.dense {
				if v != 0 {
					idx = append(idx, int32(k%bl.w))
					val = append(val, v)
				}
			}
		}
		idx = append(idx, bl.idx...)
		val = append(val, bl.val...)
		freed += b.dropBlock(bl)
		if freed >= releaseBlockBytes {
			debug.FreeOSMemory()
			freed = 0
		}
	}
	b.blocks, b.base = nil, 0
	b.idx, b.val = idx, val
	return nil
}
