package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/urfave/cli/v2"

	"github.com/pairfed/pairfed/data"
)

// The memory budget of a command that reads data (--max-memory B, by
// default data.DefaultMaxMemory) holds in two parts (issue 28, finding
// 10: a 6 MB gzip inflating to 2 GB of valid LIBSVM was read within the
// budget, and the training run that followed held several copies of it
// and died out of memory):
//
//   - while a file is read, the loader holds at most 1.25 B besides the
//     process's baseline (data.transientShare);
//   - a run whose training would hold more than B — the records read
//     times the copies the command makes of them (runCopies) — is refused
//     after reading, before any training, naming --max-memory.
//
// Between the two, the Go collector runs under a soft memory limit of
// 1.25 B + memoryConstant (setMemoryLimit), so that garbage does not
// double the resident memory as the default GOGC would. The test
// TestGzipBombDefaultBudget (long) measures the whole process's peak
// resident memory against 1.25 B + memoryConstant + the test binary's
// own baseline.

// memoryConstant is the stated allowance beside 1.25 × the budget for the
// runtime, the binary, the reader buffers and the small structures a run
// keeps (64 MiB; measured baseline ≈ 30 MiB).
const memoryConstant int64 = 64 << 20

// budgetOf returns the budget of opt (the default when unset).
func budgetOf(opt data.Options) int64 {
	if opt.MaxMemory > 0 {
		return opt.MaxMemory
	}
	return data.DefaultMaxMemory()
}

// operatorLimit is the soft memory limit the process started with
// (GOMEMLIMIT; math.MaxInt64 when unset), read once.
var operatorLimit = sync.OnceValue(func() int64 { return debug.SetMemoryLimit(-1) })

// setMemoryLimit sets the collector's soft memory limit to 1.25 × the
// data budget + memoryConstant, or the operator's GOMEMLIMIT when that is
// lower. A budget below the loader's minimum (refused by the command's
// validation) changes nothing.
func setMemoryLimit(budget int64) {
	if budget <= 0 {
		budget = data.DefaultMaxMemory()
	}
	if budget < 16<<20 {
		return
	}
	debug.SetMemoryLimit(min(budget+budget/4+memoryConstant, operatorLimit()))
}

// tableBytes is the memory the records of t take: labels, and dense
// values or sparse rows, at their capacities.
func tableBytes(t *data.Table) int64 {
	if t == nil || t.Dataset == nil {
		return 0
	}
	ds := t.Dataset
	return int64(cap(ds.Y))*8 + int64(cap(ds.X))*8 + int64(cap(ds.Ptr))*int64(unsafe.Sizeof(0)) + int64(cap(ds.Idx))*4 + int64(cap(ds.Val))*8
}

// runCopies is how many times the records of a command's files its run
// holds at its peak, an allowance from measurement (live heap after
// collections, dense and sparse LIBSVM and CSV, 2 to 10 folds): train
// held 3.9–4.2 times its records with the validation protocol and 4.7,
// 5.9 and 7.5 times with --folds 2, 5 and 10, simulate 3 times (3 sites).
// Each allowance is above what was measured.
func runCopies(c *cli.Context) float64 {
	switch c.Command.Name {
	case "train":
		return 5 + float64(c.Int("folds"))/2
	case "experiment", "sweep":
		return 5 + float64(c.Int("folds"))/2
	case "simulate":
		return 4
	}
	return 4
}

// checkRunMemory refuses a run whose records, times the copies its run
// holds, exceed the budget of opt.
func checkRunMemory(c *cli.Context, opt data.Options, tables ...*data.Table) error {
	var bytes int64
	var n int
	var name string
	for _, t := range tables {
		if t != nil {
			bytes += tableBytes(t)
			n += t.N
			if name == "" {
				name = t.Source
			}
		}
	}
	copies := runCopies(c)
	budget := budgetOf(opt)
	need := int64(float64(bytes) * copies)
	if need <= budget {
		return nil
	}
	return fmt.Errorf("data: %s: its %d records take %s in memory, and %s holds about %g copies of them while it trains (splits, scaled copies, folds): %s, %w of %s; raise --max-memory to %s or more if the machine has the memory (the process may then use 1.25 times it), or use a smaller file",
		name, n, data.FormatSize(bytes), c.Command.Name, copies, data.FormatSize(need), data.ErrMemory, data.FormatSize(budget), data.FormatSize(need))
}

// tightenGC bounds the collector's allowance for garbage once a training
// command's records (bytes of them) are loaded: a tenth of the records or
// 16 MiB, whichever is more (GOGC = 100 × that ÷ the records, between 10
// and 100), not all of the live heap (GOGC 100, Go's default). The live
// heap is then mostly the records, so under the default the garbage of
// selection and of the fits (index lists, per-fit vectors, scoring
// buffers) could grow to another copy of the records before a collection
// (10⁶ sparse records: the default's selection held 2.2× the matrix at
// GOGC 25). The records are pointer-free arrays, which a collection does
// not scan, so the extra collections cost little CPU; small data keep the
// default. Nothing changes when the operator chose GOGC.
func tightenGC(bytes int64) {
	if os.Getenv("GOGC") != "" || bytes <= 0 {
		return
	}
	headroom := max(bytes/10, 16<<20)
	debug.SetGCPercent(int(min(max(100*headroom/bytes, 10), 100)))
}
