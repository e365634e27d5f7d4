package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/fedalgo"
	"github.com/pairfed/pairfed/internal/golden"
	"github.com/pairfed/pairfed/pairwise"
)

// TestAlgorithmsDoc: docs/algorithms.md is exactly what `pairfed algos
// --markdown` prints, so a new, renamed or re-described algorithm of
// either registry fails here until the file is regenerated
// (algorithmsDocCommand, or this test with -rewrite). It also checks that
// the output has a section for every algorithm of both registries, so a
// generator that dropped one registry cannot pass by being recorded.
func TestAlgorithmsDoc(t *testing.T) {
	out, err := runCLI(t, "algos", "--markdown")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range pairwise.Algorithms() {
		names = append(names, a.Name)
	}
	names = append(names, fedalgo.Names()...)
	if len(names) < 30 {
		t.Fatalf("only %d algorithms registered: the registries are not linked in", len(names))
	}
	for _, name := range names {
		if !strings.Contains(out, "\n### "+name+"\n") || !strings.Contains(out, "| [`"+name+"`](#"+name+") |") {
			t.Errorf("pairfed algos --markdown has no row or section for %s", name)
		}
	}
	path := filepath.Join("..", "..", "docs", "algorithms.md")
	if *rewrite {
		golden.Check(t, path, []byte(out), true)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: write it with `%s`", err, algorithmsDocCommand)
	}
	if !bytes.Equal([]byte(out), want) {
		t.Errorf("docs/algorithms.md is stale: %s\nregenerate it with `%s` (from the repository root)", golden.FirstDiff([]byte(out), want), algorithmsDocCommand)
	}
}
