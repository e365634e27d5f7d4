//go:build long

package main

// The memory budget at its default (issue 28, finding 10): a 6 MB gzip
// inflating to 2 GB of valid LIBSVM, read by `pairfed train` and
// `pairfed worker` with no --max-memory. Before the fix, the loader
// accepted the file of 2-feature records (1 GiB of records under the
// 4 GiB budget) and the training run that followed held several copies
// of it: at 1/8 of the scale (256 MiB of text, --max-memory 512MiB) the
// process peaked at 1.21 GiB, 2.4 times its budget, and at full scale it
// died "fatal error: out of memory". Each case runs in a child process
// whose own peak resident memory (VmHWM) is polled; it is killed at once
// if it passes the ceiling 1.25 × budget + memoryConstant + baseline, so
// that a regression fails the test without exhausting the machine.
//
// Run: go test -tags long ./cmd/pairfed -run TestGzipBombDefaultBudget -v
// (≈ 40 s a case on an idle 2-core machine, the two cases side by side;
// up to ≈ 5 GiB resident each).

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pairfed/pairfed/data"
)

// writeGzipMembers writes a gzip file of concatenated members, each of
// 1 MiB of unit repeated, until at least n bytes inflate from it: a bomb
// of n bytes is written in well under a second (one member compressed,
// then copied).
func writeGzipMembers(t *testing.T, path, unit string, n int64) int64 {
	t.Helper()
	block := strings.Repeat(unit, (1<<20)/len(unit))
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	zw.Write([]byte(block))
	zw.Close()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	var inflated int64
	for ; inflated < n; inflated += int64(len(block)) {
		if _, err := f.Write(z.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return inflated
}

// vmHWM returns the peak resident memory of process pid in bytes (0 if
// unknown).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func TestGzipBombDefaultBudget(t *testing.T) {
	if raceBuild {
		t.Skip("the race detector's shadow memory multiplies the heap: the ceiling is for the plain binary")
	}
	budget := data.DefaultMaxMemory()
	ceiling := budget + budget/4 + memoryConstant + 64<<20 // + the test binary's own baseline
	dir := t.TempDir()
	twoFeatures := filepath.Join(dir, "bomb.libsvm.gz") // 47-byte records: 1 GiB of records from 2 GB
	n := writeGzipMembers(t, twoFeatures, "+1 1:0.12345678901234567 2:0.98765432109876543\n-1 1:0.22345678901234567 2:0.18765432109876543\n", 2<<30)
	threeFeatures := filepath.Join(dir, "bomb3.libsvm.gz") // 20-byte records: 4.8 GB of records
	writeGzipMembers(t, threeFeatures, "+1 1:0.5 2:0.25 3:1\n-1 1:0.3 2:0.1 3:0.2\n", 2<<30)
	for _, p := range []string{twoFeatures, threeFeatures} {
		st, _ := os.Stat(p)
		t.Logf("%s: %.1f MB inflating to %.2f GB; budget %s, ceiling %s", filepath.Base(p), float64(st.Size())/1e6, float64(n)/1e9, data.FormatSize(budget), data.FormatSize(ceiling))
	}
	siteState := filepath.Join(dir, "site-state")
	for _, c := range []struct {
		name string
		args []string
		err  []string
	}{
		{"train, records within the budget, run over it", []string{"train", "--data", twoFeatures},
			[]string{"bomb.libsvm.gz: its 45713190 records take 1 GiB", "train needs about", "over the memory limit of " + data.FormatSize(budget), "--max-memory"}},
		{"worker, records over the budget", []string{"worker", "--nats", "nats://127.0.0.1:1", "--federation", "f", "--site", "s", "--state", siteState, "--data", threeFeatures},
			[]string{"bomb3.libsvm.gz:", "over the memory limit of " + data.FormatSize(budget), "--max-memory"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The two cases side by side: each child is its own process
			// with its own peak (VmHWM), ≈ 5 GiB at most together with
			// the other's; one after the other they took ≈ 75 s of
			// .ci/run's long stage.
			t.Parallel()
			enc, _ := json.Marshal(c.args)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperPairfedChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), childArgsEnv+"="+string(enc))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var peak int64
			killed := false
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
		wait:
			for {
				select {
				case <-done:
					break wait
				case <-tick.C:
					if h := vmHWM(cmd.Process.Pid); h > peak {
						peak = h
					}
					if peak > ceiling && !killed {
						killed = true
						cmd.Process.Kill()
					}
				}
			}
			if i := strings.LastIndex(stderr.String(), childPeakPrefix); i >= 0 {
				var kb int64
				if _, err := fmt.Sscanf(stderr.String()[i+len(childPeakPrefix):], "%d kB", &kb); err == nil {
					peak = max(peak, kb<<10)
				}
			}
			t.Logf("exit %d after %v, peak RSS %s (ceiling %s)", cmd.ProcessState.ExitCode(), time.Since(start).Round(time.Second), data.FormatSize(peak), data.FormatSize(ceiling))
			if killed || peak > ceiling {
				t.Fatalf("peak RSS %s over the ceiling %s (killed: %v)\nstderr:\n%.2000s", data.FormatSize(peak), data.FormatSize(ceiling), killed, stderr.String())
			}
			if ctx.Err() != nil {
				t.Fatalf("still running after 10 minutes")
			}
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("exit status %d, want 1\nstderr:\n%.2000s", code, stderr.String())
			}
			for _, w := range c.err {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr does not say %q:\n%.2000s", w, stderr.String())
				}
			}
			if strings.Contains(stderr.String(), "fatal error") || strings.Contains(stderr.String(), "panic") {
				t.Errorf("crashed:\n%.3000s", stderr.String())
			}
			if peak == 0 {
				t.Error("no peak measured")
			}
		})
	}
}
