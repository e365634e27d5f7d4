package store

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sync"
	"syscall"
	"testing"

	"github.com/pairfed/pairfed/coordinator"
	"github.com/pairfed/pairfed/protocol"
	"github.com/pairfed/pairfed/worker"
)

// 50 writers setting 50 sites' budgets at once all land: the
// read-modify-write of budgets.json is serialized by its lock file
// (without it, 8 to 13 of 20 concurrent `ledger budget set` survived).
func TestUpdateBudgetsConcurrentWritersLoseNothing(t *testing.T) {
	dir := t.TempDir()
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- UpdateBudgets(dir, func(b map[string]coordinator.Budget) error {
				b[fmt.Sprintf("s%02d", i)] = coordinator.Budget{Epsilon: float64(i + 1), Delta: 1e-5}
				return nil
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := LoadBudgets(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d of %d budgets on disk", len(got), n)
	}
	for i := range n {
		if b := got[fmt.Sprintf("s%02d", i)]; b.Epsilon != float64(i+1) {
			t.Errorf("site s%02d: %+v", i, b)
		}
	}
	// A change that fails leaves the file as it was.
	if err := UpdateBudgets(dir, func(b map[string]coordinator.Budget) error { b["x"] = coordinator.Budget{}; return errors.New("no") }); err == nil {
		t.Fatal("failing change: no error")
	}
	if again, _ := LoadBudgets(dir); len(again) != n {
		t.Fatalf("failing change wrote %d budgets", len(again))
	}
}

// The watch reports a new version of budgets.json once (a replacement by
// SaveBudgets, a deletion), and keeps reporting nothing for a bad file
// after one error.
func TestBudgetsWatch(t *testing.T) {
	dir := t.TempDir()
	w := WatchBudgets(dir)
	if b, ch, err := w.Changed(); !ch || err != nil || len(b) != 0 {
		t.Fatalf("first call, no file: %v %v %v", b, ch, err)
	}
	if _, ch, err := w.Changed(); ch || err != nil {
		t.Fatalf("no file: changed %v %v", ch, err)
	}
	if err := SaveBudgets(dir, map[string]coordinator.Budget{"a": {Epsilon: 1, Delta: 1e-5}}); err != nil {
		t.Fatal(err)
	}
	b, ch, err := w.Changed()
	if !ch || err != nil || b["a"].Epsilon != 1 {
		t.Fatalf("after save: %v %v %v", b, ch, err)
	}
	if _, ch, _ := w.Changed(); ch {
		t.Fatal("unchanged file reported twice")
	}
	if err := SaveBudgets(dir, map[string]coordinator.Budget{"a": {Epsilon: 0.3, Delta: 1e-5}}); err != nil {
		t.Fatal(err)
	}
	if b, ch, _ := w.Changed(); !ch || b["a"].Epsilon != 0.3 {
		t.Fatalf("second save: %v %v", b, ch)
	}
	os.WriteFile(filepath.Join(dir, BudgetsFile), []byte(`{"a": {"epsilon": -1}}`), 0o644)
	if _, ch, err := w.Changed(); ch || err == nil {
		t.Fatalf("bad file: changed %v, err %v", ch, err)
	}
	if _, ch, err := w.Changed(); ch || err != nil {
		t.Fatalf("bad file again: changed %v, err %v (reported once)", ch, err)
	}
	os.Remove(filepath.Join(dir, BudgetsFile))
	if b, ch, err := w.Changed(); !ch || err != nil || len(b) != 0 {
		t.Fatalf("deleted: %v %v %v", b, ch, err)
	}
}

// A failed append (the disk full) leaves the ledger usable once there is
// room again: the partial line is truncated away, nothing is half
// written, and Writable tells the site before it accepts a job.
func TestLedgerRepairAfterFullDisk(t *testing.T) {
	dir := t.TempDir()
	l, _, _, err := OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rel := func(phase int) worker.Release {
		return worker.Release{Job: "j", Phase: phase, Records: 3, Epsilon: 1, Delta: 1e-5, Secure: true}
	}
	if err := l.Append(rel(1)); err != nil {
		t.Fatal(err)
	}
	full := true
	l.j.fail = func(b []byte) error {
		if !full {
			return nil
		}
		// A partial write, as a full disk leaves it.
		l.j.f.Write(b[:len(b)/2])
		return syscall.ENOSPC
	}
	if err := l.Append(rel(2)); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append on a full disk: %v", err)
	}
	if err := l.Writable(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("writable on a full disk: %v", err)
	}
	if got, err := ReadLedger(dir); err != nil || len(got) != 1 {
		t.Fatalf("after the failures: %d releases, %v", len(got), err)
	}
	full = false
	if err := l.Writable(); err != nil {
		t.Fatalf("writable with room again: %v", err)
	}
	if err := l.Append(rel(2)); err != nil {
		t.Fatalf("append with room again: %v", err)
	}
	got, err := ReadLedger(dir)
	if err != nil || len(got) != 2 || got[1].Phase != 2 {
		t.Fatalf("after repair: %+v %v", got, err)
	}
	// A probe leaves the file as it was.
	before, _ := os.ReadFile(filepath.Join(dir, LedgerFile))
	if err := l.Writable(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, LedgerFile)); string(after) != string(before) {
		t.Fatal("the probe changed the ledger")
	}
	// A ledger replaced under the process is never repaired in place.
	os.Rename(filepath.Join(dir, LedgerFile), filepath.Join(dir, "moved"))
	os.WriteFile(filepath.Join(dir, LedgerFile), nil, 0o644)
	if err := l.Writable(); err == nil {
		t.Fatal("replaced ledger: writable")
	}
	os.Remove(filepath.Join(dir, LedgerFile))
	os.Rename(filepath.Join(dir, "moved"), filepath.Join(dir, LedgerFile))
	if err := l.Append(rel(3)); err == nil {
		t.Fatal("a ledger once replaced: append accepted")
	}
}

// The same on a real full file system: a small tmpfs (root only; skipped
// where mount is not permitted).
func TestLedgerFullTmpfs(t *testing.T) {
	dir := tinyTmpfs(t)
	l, _, _, err := OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Writable(); err != nil {
		t.Fatal(err)
	}
	filler := fillDisk(t, dir)
	if err := l.Writable(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("writable on a full tmpfs: %v", err)
	}
	r := worker.Release{Job: "j", Phase: 1, Records: 3, Epsilon: 1, Delta: 1e-5, Secure: true, Sigmas: make([]float64, 600)}
	if err := l.Append(r); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append on a full tmpfs: %v", err)
	}
	os.Remove(filler)
	if err := l.Writable(); err != nil {
		t.Fatalf("writable after freeing: %v", err)
	}
	if err := l.Append(r); err != nil {
		t.Fatalf("append after freeing: %v", err)
	}
	if got, err := ReadLedger(dir); err != nil || len(got) != 1 {
		t.Fatalf("ledger: %d releases, %v", len(got), err)
	}
}

// The coordinator's state on a real full file system (root only): a
// charge append and a checkpoint save fail with ENOSPC and leave what is
// on disk whole — the charges read back are the ones appended before,
// the checkpoint is the last one saved — and both work again once space
// is freed, in the same process.
func TestCoordinatorStateFullTmpfs(t *testing.T) {
	dir := tinyTmpfs(t)
	c, _, _, err := OpenCharges(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A batch of 8 charges of ≈ 700 bytes: more than a tmpfs page, so an
	// append cannot fit in the file's last page.
	charge := func(site string) []coordinator.Charge {
		var cs []coordinator.Charge
		for i := range 8 {
			cs = append(cs, coordinator.Charge{Key: fmt.Sprintf("j/%s/%d", site, i), Site: site, Job: "j", Phase: i, Epsilon: 1, Delta: 1e-3, Mechanism: "gaussian", Private: true,
				Note: fmt.Sprintf("%0600d", 0)})
		}
		return cs
	}
	if err := c.Append(charge("a")); err != nil {
		t.Fatal(err)
	}
	cp := &coordinator.Checkpoint{Version: coordinator.CheckpointVersion, Members: map[string]coordinator.MemberState{"a": {Records: 3, Dim: 2}},
		Status: map[string]*protocol.JobStatus{}, Clients: map[string]string{"j": "pairfed.f.client.c"}}
	if err := SaveCheckpoint(dir, cp); err != nil {
		t.Fatal(err)
	}
	filler := fillDisk(t, dir)
	if err := c.Append(charge("b")); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("charge append on a full tmpfs: %v", err)
	}
	bigger := *cp
	bigger.Clients = map[string]string{"j": "pairfed.f.client.c", "k": "pairfed.f.client.d"}
	if err := SaveCheckpoint(dir, &bigger); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("checkpoint save on a full tmpfs: %v", err)
	}
	if got, err := ReadCharges(dir); err != nil || len(got) != 8 || got[7].Site != "a" {
		t.Fatalf("charges on the full disk: %d charges, %v (want a's 8: the part of b's batch that fitted undone)", len(got), err)
	}
	if back, err := LoadCheckpoint(dir); err != nil || !reflect.DeepEqual(back, cp) {
		t.Fatalf("checkpoint on the full disk: %+v %v (want the last one saved)", back, err)
	}
	os.Remove(filler)
	if err := c.Append(charge("b")); err != nil {
		t.Fatalf("charge append after freeing: %v", err)
	}
	if err := SaveCheckpoint(dir, &bigger); err != nil {
		t.Fatalf("checkpoint save after freeing: %v", err)
	}
	if got, err := ReadCharges(dir); err != nil || len(got) != 16 {
		t.Fatalf("charges after freeing: %d, %v", len(got), err)
	}
	if back, err := LoadCheckpoint(dir); err != nil || !reflect.DeepEqual(back, &bigger) {
		t.Fatalf("checkpoint after freeing: %+v %v", back, err)
	}
}

// tinyTmpfs mounts a 64 KiB tmpfs on a temporary folder for the test
// (root only; the test is skipped where mount is not permitted).
func tinyTmpfs(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount -t tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir
}

// fillDisk fills dir's file system with one file, to the last byte that
// fits (whole blocks, then small writes, so that no write of any size
// fits), and returns its path: removing it frees the space.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			break
		}
	}
	for {
		if _, err := f.Write(block[:64]); err != nil {
			break
		}
	}
	f.Close()
	return filler
}
