package store

import (
	"os"
	"path/filepath"
	"syscall"
)

// linkCount returns the number of hard links of an open file (ok false
// where the platform does not say).
func linkCount(f *os.File) (uint64, bool) {
	fi, err := f.Stat()
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Nlink), true
}

// stateFiles are the files of a coordinator's or a site's state
// directory.
var stateFiles = []string{LedgerFile, ChargesFile, CheckpointFile, BudgetsFile}

// InStateDir reports whether path names a file of a state directory, or
// any file inside one (a directory holding one of its journals or its
// checkpoint, or that directory's jobs/), so that a command writing an
// output file (an export, a report) never overwrites state it does not
// own. It returns the state directory found.
func InStateDir(path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		for _, name := range stateFiles {
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
				return dir, true
			}
		}
		if dir == filepath.Dir(dir) {
			return "", false
		}
	}
}
