// Package golden compares a test's output with a recorded file, or
// records it: the one golden-file check of the project's tests (the CLI's
// help and JSON outputs, the registries' models and privacy reports, the
// federated runs, the sweep).
package golden

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Check compares got with the file at path; with record it writes got
// there instead (creating its folder). A difference fails t naming the
// file and its first differing line, a missing file names the flag that
// records it.
func Check(t testing.TB, path string, got []byte, record bool) {
	t.Helper()
	if record {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (record it with -rewrite)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from its golden: %s (re-record with -rewrite after checking the difference)", path, FirstDiff(got, want))
	}
}

// FirstDiff describes the first line at which got and want differ.
func FirstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got  %s\n want %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines, the golden has %d", len(g), len(w))
}
