package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckDataDir (probe 6, issue 28): an unset PAIRFED_DATASETS, a
// missing folder or a file skipped every dataset and exited 0.
func TestCheckDataDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, c := range []struct{ dir, want string }{
		{"", "-data is empty: give -data DIR, or set PAIRFED_DATASETS"},
		{filepath.Join(dir, "none"), "no such file or directory: PAIRFED_DATASETS or -data must name the folder"},
		{file, "is a file, not a directory"},
	} {
		if err := checkDataDir(c.dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.dir, err, c.want)
		}
	}
	if err := checkDataDir(dir); err != nil {
		t.Error(err)
	}
}
