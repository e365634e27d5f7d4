package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"unsafe"

	"github.com/urfave/cli/v2"

	"github.com/pairfed/pairfed/data"
	"github.com/pairfed/pairfed/experiment"
)

// The memory budget of a command that reads data (--max-memory B, by
// default data.DefaultMaxMemory) holds in two parts (issue 28, finding
// 10: a 6 MB gzip inflating to 2 GB of valid LIBSVM was read within the
// budget, and the training run that followed held several copies of it
// and died out of memory):
//
//   - while a file is read, the loader holds at most 1.25 B besides the
//     process's baseline (data.transientShare);
//   - a run whose training would hold more than B — the peak that
//     estimateMemory models for its mode and the shape of its records —
//     is refused after reading, before any training, naming --max-memory.
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

// The run's memory estimate (checkRunMemory) is a model of the peak
// resident memory of the command past the process's own baseline (the
// runtime and the binary: ≈ 24 MiB measured, inside memoryConstant), per
// mode and shape:
//
//	need = max(load, run),   load, run = PerRecord·n + Values·V
//
// (+ 16 MiB for train's run, the collector's floor; + 48 MiB for
// simulate's, its sites' fixed state), where n is the number of records and V the bytes of their stored values
// (dense: 8 a feature, n·d·8; CSR: 12 a nonzero, its float64 value and
// int32 index). The labels (8 bytes a record), the CSR row pointers (8),
// the index lists of splits and folds (8 a record each), the scores and
// ranks of AUC and the Go collector's allowance for garbage make
// PerRecord: they dominate shapes with few features per record (a record
// of 2 features is 24 bytes of table but ≈ 80 bytes at the peak), which
// an estimate in copies of the records alone under-counts (the earlier 5
// copies: 80 bytes a record of one feature, where 10⁶ such records
// peaked at 59–167 MiB past the baseline, η given to the paper protocol).
//
// Each term names the allocations it counts (memLoad, memRun); its
// coefficients are set above the peaks measured on the shapes of
// docs/results/memory.md ("The estimate against the measured peak",
// scripts/memory/estimate.sh): dense d = 1, 2, 22, 300 and CSR with 12
// nonzeros of 10⁴, n = 10⁵ … 5·10⁶, each mode. The estimate is a guard:
// it must not fall below the measured peak minus memoryConstant (the
// allowance the soft memory limit also grants above the budget).
// TestMemoryEstimateAboveLowerBound checks every mode against a lower
// bound counted independently from the allocations of a small shape.

// memShape is what the estimate reads off the tables a command loaded.
type memShape struct {
	N          int64 // records
	Values     int64 // bytes of the stored values: dense 8·n·d, CSR 12 a nonzero
	Sparse     bool  // CSR storage
	Compressed bool  // read through a decompressor: no size hint, so the loader's arrays grow
	Text       bool  // CSV, ARFF or dense text (their parsers were not measured)
}

// shapeOf returns the shape of the records of tables (nil entries skipped).
func shapeOf(tables ...*data.Table) memShape {
	var s memShape
	for _, t := range tables {
		if t == nil || t.Dataset == nil {
			continue
		}
		ds := t.Dataset
		s.N += int64(ds.N)
		s.Values += int64(cap(ds.X))*8 + int64(cap(ds.Idx))*4 + int64(cap(ds.Val))*8
		s.Sparse = s.Sparse || ds.IsSparse()
		s.Text = s.Text || t.Format != data.FormatLIBSVM
		for _, note := range t.Notes {
			if strings.HasPrefix(note, "decompressed ") {
				s.Compressed = true
			}
		}
	}
	return s
}

// memTerm is one phase's peak past the baseline: bytes per record plus a
// multiple of the value bytes.
type memTerm struct {
	PerRecord float64
	Values    float64
}

func (t memTerm) bytes(s memShape) int64 {
	return int64(t.PerRecord*float64(s.N) + t.Values*float64(s.Values))
}

// memMode is what sets the copies a command's run makes.
type memMode struct {
	Command string // train, paper (train --protocol paper), simulate, experiment, sweep, worker, coordinator, …
	Select  bool   // train: η or B chosen on folds of the training split (non-private, no --tune)
	Tune    bool   // train --tune
	Metric  bool   // --task metric
	Repeat  bool   // train: --runs k > 1, --train-size or a --test file
	Folds   int    // --folds
	Workers int    // GOMAXPROCS: selection fits that many models at once
}

// modeOf reads the mode of c's command.
func modeOf(c *cli.Context) memMode {
	m := memMode{Command: c.Command.Name, Folds: c.Int("folds"), Workers: runtime.GOMAXPROCS(0), Metric: c.String("task") == "metric"}
	if m.Command == "train" {
		if c.String("protocol") == "paper" {
			m.Command = "paper"
			return m
		}
		m.Tune = c.Bool("tune")
		private := c.IsSet("epsilon") || m.Tune
		m.Select = !private && (c.Float64("eta") == 0 || c.Float64("param-radius") == 0)
		m.Repeat = c.Int("runs") > 1 || c.Int("train-size") > 0 || c.String("test") != ""
	}
	return m
}

// memLoad is the loader's peak (data.Read, LIBSVM). While it parses: the
// labels as class numbers (builder.y, int32: 4 bytes a record) and the
// record offsets (builder.ptr, int: 8); at its end the labels as float64
// (builder.finish: 8) beside them, and the dense matrix filled block by
// block while the parsed blocks are given back (builder.dataset: ≈ 1 V,
// a block in flight); CSR keeps idx and val as parsed. With a size hint
// (an uncompressed regular file) the arrays are reserved once from the
// file's size (readLIBSVM after reserveAfterLines); without one (gzip,
// bzip2, xz) they grow by append and hold the old array and the new while
// they move (CSR idx and val: 2.25 V at a growth). The collector runs at
// Go's default GOGC while the file is read (tightenGC applies after it),
// so garbage of up to the live heap adds to the resident peak between
// collections: the per-record terms are about twice the 20 live bytes.
// Measured at 10⁶ records (past the baseline): dense d = 1, 2, 22: 43,
// 72, 255 bytes a record plain, 53, 77, 264 compressed; CSR 12 nonzeros
// (V = 144 bytes a record): 170 plain, 357 compressed; at 5·10⁶ dense
// d = 1, 2: 38, 46 and CSR 169; at 45.7·10⁶ records of d = 2 read
// through gzip (TestGzipBombDefaultBudget): 58. Where the collector's
// timing puts a peak above the model (d = 2 at 10⁶: 72 against 61), the
// difference is within memoryConstant.
func memLoad(s memShape) memTerm {
	switch {
	case s.Sparse && s.Compressed:
		return memTerm{PerRecord: 32, Values: 2.6}
	case s.Sparse:
		return memTerm{PerRecord: 32, Values: 1.15}
	case s.Compressed:
		return memTerm{PerRecord: 48, Values: 1.3}
	}
	return memTerm{PerRecord: 40, Values: 1.3}
}

// memRun is the peak of the run once the records are read, the table
// itself included (its labels and row pointers in PerRecord); train adds
// the collector's 16 MiB floor (estimateMemory). The measurements it is
// set from are in bytes a record past the baseline, at 10⁶ records (d =
// 1 and 22), 10⁵ (d = 300) and 5·10⁶ (d = 1, 2, 22), GOMAXPROCS 2; V is
// 8, 16, 176 and 2400 bytes a record. At 10⁶ records and fewer the
// collector's floor is a good part of them.
func memRun(m memMode, s memShape) memTerm {
	switch m.Command {
	case "train":
	case "paper":
		// [Y21a]'s protocol (experiment.Paper): a scaled copy of the
		// whole table beside it (sc.Apply: 1 V), RepeatedKFold's test
		// index lists (5 repeats × n indices: 40 bytes a record, kept
		// for every split), data.Holdout's copy of a fold, and on 2
		// workers (PaperSpec.Workers) each fit's objective and its
		// checkpoint scores; the test phase's splits. Measured: d = 1
		// 157 (10⁶), d = 22 860 (10⁵, less a fixed 17 MiB; 10⁶ ran
		// past 9 minutes at ≥ 852).
		return memTerm{PerRecord: 176, Values: 5}
	case "simulate":
		// The table; the outer split gathered (train.Subset: 1.0 V and
		// its labels); every site's shard gathered and prepared
		// (simulate.Prepare: tr.Subset, then PrepareModelRecords'
		// scaled copy: 0.8 V each) and the prepared test split (0.2 V);
		// the workers' and the coordinator's state, at Go's default
		// GOGC. Measured (4 sites): d = 1 91, d = 22 751, d = 300 ≈
		// 9360, CSR 12 nonzeros of 10⁴ 635 (10⁶). estimateMemory adds
		// 48 MiB for the sites' and the coordinator's fixed state and
		// the collector's slack on it (CSR at 10⁵ records: 51 MiB
		// beyond the per-record terms).
		return memTerm{PerRecord: 80, Values: 4.5}
	default:
		// Commands not measured since issue 27 (experiment, sweep,
		// worker, coordinator): the older allowance of 5 + folds/2
		// copies, with a per-record term for records of few features.
		return memTerm{PerRecord: 112, Values: 5 + float64(m.Folds)/2}
	}
	// train. A single evaluation (η and B given, or private): the table
	// (labels 8 a record, CSR row pointers 8, V); the outer split's
	// index lists (data.StratifiedSplit or PublicSizeSplit: the
	// per-class lists and the two sides, 8 + 8 a record) and the test
	// records' copy while data.Partition moves them (0.2 V and their
	// labels); the fit's state and the evaluation's scores and ranks
	// (pairwise.AUCScratch, the exact objective's sorted scores: 8–16 a
	// record); the collector's allowance past the live heap, a tenth of
	// the records (tightenGC). Measured: d = 1 62 (10⁶), 40 (5·10⁶);
	// d = 2 50 (5·10⁶); d = 22 263 (10⁶), 252 (5·10⁶); d = 300 3020.
	t := memTerm{PerRecord: 44, Values: 1.45}
	switch {
	case m.Folds > 1:
		// Every fold but the last is gathered and scaled beside the
		// table (experiment.Run: sp.train.Dataset(), prepare's copy),
		// and the fold lists (8 a record). --folds 5: 157, 167 (d = 2),
		// 605, 6931.
		t = memTerm{PerRecord: 160, Values: 3.2}
	case m.Repeat:
		// Every run but the last gathers and scales its split beside
		// the table (as folds), --train-size a subsample of it and a
		// --test table its own. --runs 3: 112, 114 (d = 2), 570, 6931.
		t = memTerm{PerRecord: 96, Values: 3.2}
	case m.Metric:
		// Metric learning's selection (pairs, KNN scoring, d×d models).
		// Measured: d = 1 147 (10⁶); d = 22 ≥ 933 at 10⁵ (less the
		// collector's floor; stopped in its selection after 2.5
		// minutes: a lower bound).
		t = memTerm{PerRecord: 128, Values: 6}
	case m.Tune:
		// --tune: data.Holdout's copy of the scoring fifth and each
		// candidate's state. 62, 294, 3156.
		t = memTerm{PerRecord: 44, Values: 1.5}
	}
	if m.Select {
		// Selection (experiment.selectParams) holds data.Holdout's fold
		// buffer (a third of the training split: 0.27 V and its
		// labels), the fold lists (8 a record) and, on each of
		// GOMAXPROCS workers, a fit's state and its AUCScratch over
		// the validation fold (scores and merge buffer: ≈ 20 bytes a
		// record a worker, measured from GOMAXPROCS 1 to 4). Default
		// at GOMAXPROCS 2: d = 1 81 (10⁶), d = 2 87 (5·10⁶), d = 22
		// 294 (10⁶) and 299 (5·10⁶), d = 300 3177.
		t.PerRecord += 28 + 20*float64(min(max(m.Workers, 2), len(experiment.DefaultGrid)*len(experiment.DefaultGrid))-2)
		t.Values += 0.05
		if s.Sparse {
			// On CSR records also Holdout's copy of the row pointers
			// (8 a record) and the parallel fits' sparse state: sparse
			// 10⁶ default 289 bytes a record (V = 144), 218 with η and
			// B given.
			t.PerRecord += 8
			t.Values += 0.3
		}
	}
	return t
}

// estimateMemory is the estimate of the peak of mode m on records of
// shape s, past the process's baseline. Text formats (CSV, ARFF, dense
// text: their parsers were not measured since issue 27) keep the older
// allowance as a floor: 5 + folds/2 copies of the records (4 for
// simulate).
func estimateMemory(m memMode, s memShape) int64 {
	run := memRun(m, s).bytes(s)
	if m.Command == "train" || m.Command == "paper" {
		// The collector's allowance has a floor of 16 MiB (tightenGC):
		// at 10⁵ records it is most of what the run holds past its
		// records (measured: 17 MiB of the paper protocol's peak at
		// 10⁵ records beyond its per-record terms).
		run += 16 << 20
	}
	if m.Command == "simulate" {
		run += 48 << 20 // see memRun
	}
	need := max(memLoad(s).bytes(s), run)
	if s.Text {
		records := s.Values + 8*s.N // and the labels
		if s.Sparse {
			records += 8 * s.N // and the row pointers
		}
		copies := 5 + float64(m.Folds)/2
		if m.Command == "simulate" {
			copies = 4
		}
		need = max(need, int64(copies*float64(records)))
	}
	return need
}

// checkRunMemory refuses a run whose estimated peak (estimateMemory)
// exceeds the budget of opt.
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
	m := modeOf(c)
	need := estimateMemory(m, shapeOf(tables...))
	budget := budgetOf(opt)
	if v := c.String("memory-estimate"); v != "" {
		if v != "print" && v != "exit" {
			return fmt.Errorf("--memory-estimate %q: want print (print the estimate and go on) or exit (print it and stop)", v)
		}
		// scripts/memory/estimate.sh: the estimate beside the measured peak.
		fmt.Fprintf(c.App.ErrWriter, "pairfed: memory estimate: %d bytes, records %d bytes, n %d, mode %+v\n", need, bytes, n, m)
		if v == "exit" && (c.String("test") == "" || len(tables) > 1) {
			return fmt.Errorf("--memory-estimate exit: stopped after the estimate")
		}
	}
	if need <= budget {
		return nil
	}
	return fmt.Errorf("data: %s: its %d records take %s in memory, and %s needs about %s while it runs (%.1f times the records: splits, folds, index lists, scores): %w of %s; raise --max-memory to %s or more if the machine has the memory (the process may then use 1.25 times it), or use a smaller file",
		name, n, data.FormatSize(bytes), m.Command, data.FormatSize(need), float64(need)/float64(max(bytes, 1)), data.ErrMemory, data.FormatSize(budget), data.FormatSize(need))
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
