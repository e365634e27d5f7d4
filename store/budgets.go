package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pairfed/pairfed/coordinator"
)

// budgetsLockFile is the lock beside budgets.json that serializes its
// read-modify-write (UpdateBudgets): `pairfed ledger budget set` runs
// while the coordinator or site holds the state directory's own lock, so
// it cannot take that one.
const budgetsLockFile = BudgetsFile + ".lock"

// UpdateBudgets applies change to dir's budgets and saves them, holding an
// exclusive flock on dir/budgets.json.lock from the read to the rename:
// two concurrent updates (two `ledger budget set` for two sites) both
// land, where a plain load-modify-save lost one of them. change may
// return an error, which leaves the file as it was. The lock file is
// empty and stays (the kernel releases the flock when the descriptor is
// closed or the process dies).
func UpdateBudgets(dir string, change func(map[string]coordinator.Budget) error) error {
	fd, err := unix.Open(filepath.Join(dir, budgetsLockFile), unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("store: lock budgets: %w", err)
	}
	defer unix.Close(fd)
	for {
		err = unix.Flock(fd, unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("store: lock budgets: %w", err)
	}
	budgets, err := LoadBudgets(dir)
	if err != nil {
		return err
	}
	if err := change(budgets); err != nil {
		return err
	}
	return SaveBudgets(dir, budgets)
}

// fileID identifies one version of a file: a replacement (SaveBudgets
// renames a new file over the old) changes the inode, an edit in place
// the size or modification time.
type fileID struct {
	exists     bool
	dev, ino   uint64
	size       int64
	mtime      time.Time
	ctimeNanos int64
}

func statID(path string) (fileID, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return fileID{}, nil
	}
	if err != nil {
		return fileID{}, err
	}
	id := fileID{exists: true, size: fi.Size(), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.dev, id.ino = uint64(st.Dev), uint64(st.Ino)
		id.ctimeNanos = st.Ctim.Sec*1e9 + st.Ctim.Nsec
	}
	return id, nil
}

// BudgetsWatch re-reads a state directory's budgets.json when it changed:
// a running coordinator or site asks it at every job admission, so that
// `pairfed ledger budget set` takes effect on the next job without a
// restart. It is not safe for concurrent use.
type BudgetsWatch struct {
	dir  string
	last fileID
	bad  string // the last error reported (reported once)
}

// WatchBudgets returns a watch of dir/budgets.json. Its first Changed
// reads the file (changed: true) whatever the caller loaded before, so
// that no version written in between is missed; the caller compares.
func WatchBudgets(dir string) *BudgetsWatch {
	return &BudgetsWatch{dir: dir, last: fileID{exists: true, ino: ^uint64(0)}}
}

// Changed returns the budgets and true when the file changed since the
// last call (a deleted file: no budgets), or nil and false. A file that
// does not read or decode is an error, reported once per version: the
// caller keeps the budgets it has (a site never loosens its budget on a
// bad file) and the next valid version is picked up.
func (w *BudgetsWatch) Changed() (map[string]coordinator.Budget, bool, error) {
	id, err := statID(filepath.Join(w.dir, BudgetsFile))
	if err != nil {
		return nil, false, w.report(fmt.Errorf("store: %w", err))
	}
	if id == w.last {
		return nil, false, nil
	}
	b, err := LoadBudgets(w.dir)
	if err != nil {
		// Not recorded as seen: retried (and reported once) until fixed.
		return nil, false, w.report(err)
	}
	w.last, w.bad = id, ""
	return b, true, nil
}

func (w *BudgetsWatch) report(err error) error {
	if err.Error() == w.bad {
		return nil
	}
	w.bad = err.Error()
	return err
}
