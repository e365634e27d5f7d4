package main

import (
	"context"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/data"
)

// TestMemoryEstimateAboveLowerBound: for every mode, the run's estimate
// (estimateMemory) is at least a lower bound counted here from the
// allocations that are live together at the command's peak, on small
// shapes — so that no rewrite of the coefficients can drop a mode below
// what its run must hold. The bound counts live bytes only (no collector
// slack, no transient copies): the coefficients, set from measured peaks
// (docs/results/memory.md), are above it by that slack.
func TestMemoryEstimateAboveLowerBound(t *testing.T) {
	type shape struct {
		name       string
		n, d, nnz  int64 // nnz per record (sparse)
		sparse     bool
		compressed bool
	}
	shapes := []shape{
		{"dense d=1", 1000, 1, 0, false, false},
		{"dense d=2 gzip", 1000, 2, 0, false, true},
		{"dense d=22", 1000, 22, 0, false, false},
		{"dense d=300", 1000, 300, 0, false, false},
		{"sparse 12 of 10⁴", 1000, 10000, 12, true, false},
		{"sparse 12 of 10⁴ gzip", 1000, 10000, 12, true, true},
	}
	modes := []memMode{
		{Command: "train", Select: true},           // default: selection of η and B
		{Command: "train"},                         // η and B given, private, --tune, --task metric
		{Command: "train", Repeat: true, Folds: 5}, // --folds 5
		{Command: "train", Select: true, Repeat: true},
		{Command: "train", Tune: true},
		{Command: "train", Metric: true},
		{Command: "train", Select: true, Workers: 16},
		{Command: "paper"},
		{Command: "simulate"},
		{Command: "experiment", Folds: 3},
		{Command: "worker"},
	}
	for _, sh := range shapes {
		s := memShape{N: sh.n, Sparse: sh.sparse, Compressed: sh.compressed}
		values := 8 * sh.n * sh.d // dense: a float64 a cell
		if sh.sparse {
			values = 12 * sh.n * sh.nnz // CSR: a float64 value and an int32 index a nonzero
		}
		s.Values = values
		labels := 8 * sh.n
		ptr := int64(0)
		if sh.sparse {
			ptr = 8 * (sh.n + 1)
		}
		table := labels + ptr + values
		// The loader's end (builder.finish, builder.dataset): the class
		// numbers (int32) and the float64 labels, the record offsets,
		// and the values once.
		load := 4*sh.n + labels + 8*(sh.n+1) + values
		for _, m := range modes {
			var run int64
			switch m.Command {
			case "train":
				// The table and, while data.Partition moves the test
				// fifth, the outer split's two index lists (8 bytes a
				// record) and the fifth's copy (its values and labels).
				run = table + 8*sh.n + (values+labels)/5
				if m.Repeat || m.Folds > 1 {
					// An earlier evaluation's gathered training split
					// (4/5 of the records) beside the table.
					run = table + (values+labels)*4/5
				}
			case "paper":
				// The table, RepeatedKFold's 5 × n test indices and
				// data.Holdout's copy of a fifth.
				run = table + 5*8*sh.n + (values+labels)/5
			case "simulate":
				// The table, the gathered split (all records), the
				// prepared shards (4/5) and test split (1/5).
				run = table + 2*(values+labels)
			default:
				run = 3 * table
			}
			lower := max(load, run)
			if got := estimateMemory(m, s); got < lower {
				t.Errorf("%s, %+v: estimate %d bytes below the live bytes %d (load %d, run %d)", sh.name, m, got, lower, load, run)
			}
		}
	}
}

// TestMemoryEstimateBombRefused: the long test's gzip bomb (45 713 190
// records of 2 features, 1 GiB of table, read through gzip) is refused at
// the default cap of 4 GiB, as it must be: admitted by an estimate of 2.5
// copies, it peaked at 3.5 GiB (docs/status.md). And 5·10⁶ dense records
// of 22 features (877 MiB of table; measured peak 1225–1450 MiB) are
// admitted (default and η/B given: 1450 and 1225 MiB measured), which
// the 5-copies estimate refused.
func TestMemoryEstimateBombRefused(t *testing.T) {
	bomb := memShape{N: 45713190, Values: 45713190 * 16, Compressed: true}
	if got := estimateMemory(memMode{Command: "train", Select: true}, bomb); got <= data.DefaultMaxMemoryCap {
		t.Errorf("the gzip bomb's estimate %s is within the default cap %s", data.FormatSize(got), data.FormatSize(data.DefaultMaxMemoryCap))
	}
	dense := memShape{N: 5_000_000, Values: 5_000_000 * 22 * 8}
	for _, c := range []struct {
		m        memMode
		measured int64 // peak RSS, docs/results/memory.md
	}{{memMode{Command: "train", Select: true}, 1450 << 20}, {memMode{Command: "train"}, 1225 << 20}} {
		m := c.m
		got := estimateMemory(m, dense)
		if got > data.DefaultMaxMemoryCap {
			t.Errorf("%+v: dense 5·10⁶ × 22: estimate %s over the default cap %s", m, data.FormatSize(got), data.FormatSize(data.DefaultMaxMemoryCap))
		}
		if measured := c.measured; got < measured {
			t.Errorf("%+v: dense 5·10⁶ × 22: estimate %s below the measured peak %s", m, data.FormatSize(got), data.FormatSize(measured))
		}
	}
}

// The hidden --memory-estimate takes print or exit only: any other value
// is refused naming both, before any training.
func TestMemoryEstimateFlagValues(t *testing.T) {
	var stdout, stderr lockedBuffer
	err := runApp(t, context.Background(), &stdout, &stderr, "train", "--data", "../../datasets/diabetes", "--memory-estimate", "bogus")
	if err == nil || !strings.Contains(err.Error(), `--memory-estimate "bogus"`) || !strings.Contains(err.Error(), "want print") {
		t.Fatalf("err %v", err)
	}
	if strings.Contains(stdout.String(), "AUC") {
		t.Errorf("trained anyway: %s", stdout.String())
	}
	err = runApp(t, context.Background(), &stdout, &stderr, "train", "--data", "../../datasets/diabetes", "--memory-estimate", "exit")
	if err == nil || !strings.Contains(err.Error(), "stopped after the estimate") || !strings.Contains(stderr.String(), "memory estimate:") {
		t.Fatalf("exit: err %v\n%s", err, stderr.String())
	}
}
