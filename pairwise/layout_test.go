// The file graph's type-check from source is a static analysis with no
// concurrency in it: under the race detector it took 7 s and checks
// nothing more, so it runs in the plain `go test ./...` and in .ci/run's
// purego pass, not under -race.

//go:build !race

package pairwise

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// fileGraph is the engine's files (non-test) as nodes and an edge f → g
// when f uses a name g declares: a package-level function, type,
// variable or constant, or a method or field of a type of the package
// (resolved by go/types, so a method call counts where the parser alone
// would not see it).
func fileGraph(t *testing.T) (files []string, edges map[string]map[string]bool) {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var parsed []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, n)
		parsed = append(parsed, f)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	pkg, err := conf.Check("pairwise", fset, parsed, info)
	if err != nil {
		t.Fatalf("type-checking the package from source (it needs the module cache: go mod download): %v", err)
	}
	edges = map[string]map[string]bool{}
	for _, f := range files {
		edges[f] = map[string]bool{}
	}
	add := func(at token.Pos, obj types.Object) {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			return
		}
		if v, ok := obj.(*types.Var); ok && !v.IsField() && obj.Parent() != pkg.Scope() {
			return // a local variable or parameter
		}
		if _, ok := obj.(*types.Func); !ok && obj.Parent() != nil && obj.Parent() != pkg.Scope() {
			if v, ok := obj.(*types.Var); !ok || !v.IsField() {
				return // a local constant or type
			}
		}
		from := fset.Position(at).Filename
		to := fset.Position(obj.Pos()).Filename
		if from != to {
			edges[from][to] = true
		}
	}
	for id, obj := range info.Uses {
		add(id.Pos(), obj)
	}
	for se, sel := range info.Selections {
		add(se.Sel.Pos(), sel.Obj())
	}
	return files, edges
}

// fileLevels lays the files out in levels, each file above every file it
// uses, where it can: within a group of files that use each other in a
// cycle (a strongly connected component) some edge must point back up,
// and the group's files are put in the order (tried exhaustively; the
// groups are small) that needs the fewest such edges. levels is the
// longest chain of files once those edges are left out; back lists them.
func fileLevels(files []string, edges map[string]map[string]bool) (levels int, back []string) {
	comp := sccs(files, edges)
	skip := map[[2]string]bool{}
	for _, c := range comp {
		if len(c) < 2 {
			continue
		}
		best := -1
		var bestOrder []string
		permute(append([]string(nil), c...), 0, func(order []string) {
			pos := map[string]int{}
			for i, f := range order {
				pos[f] = i
			}
			n := 0
			for _, a := range order {
				for b := range edges[a] {
					if p, ok := pos[b]; ok && p >= pos[a] {
						n++ // a uses a file placed at or above it
					}
				}
			}
			if best < 0 || n < best {
				best, bestOrder = n, append([]string(nil), order...)
			}
		})
		pos := map[string]int{}
		for i, f := range bestOrder {
			pos[f] = i
		}
		for _, a := range bestOrder {
			for b := range edges[a] {
				if p, ok := pos[b]; ok && p >= pos[a] {
					skip[[2]string{a, b}] = true
					back = append(back, a+" → "+b)
				}
			}
		}
	}
	sort.Strings(back)
	lvl := map[string]int{}
	var level func(f string) int
	level = func(f string) int {
		if l, ok := lvl[f]; ok {
			return l
		}
		lvl[f] = 1
		l := 1
		for g := range edges[f] {
			if !skip[[2]string{f, g}] {
				l = max(l, 1+level(g))
			}
		}
		lvl[f] = l
		return l
	}
	for _, f := range files {
		levels = max(levels, level(f))
	}
	return levels, back
}

// sccs returns the strongly connected components (Tarjan).
func sccs(files []string, edges map[string]map[string]bool) [][]string {
	index, low, on := map[string]int{}, map[string]int{}, map[string]bool{}
	var stack []string
	var out [][]string
	next := 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		on[v] = true
		var ws []string
		for w := range edges[v] {
			ws = append(ws, w)
		}
		sort.Strings(ws)
		for _, w := range ws {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var c []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				c = append(c, w)
				if w == v {
					break
				}
			}
			sort.Strings(c)
			out = append(out, c)
		}
	}
	for _, f := range files {
		if _, seen := index[f]; !seen {
			visit(f)
		}
	}
	return out
}

// permute calls fn with every order of s[k:] after s[:k].
func permute(s []string, k int, fn func([]string)) {
	if k == len(s) {
		fn(s)
		return
	}
	for i := k; i < len(s); i++ {
		s[k], s[i] = s[i], s[k]
		permute(s, k+1, fn)
		s[k], s[i] = s[i], s[k]
	}
}

// TestFileLevels measures the engine's file layout (docs/results/
// package-shares.md: `go test ./pairwise -run TestFileLevels -v` prints
// the levels and the edges that point back up) and fails when any two
// files use each other in a cycle, or when an edge must point back up. The
// last cycle, sgdprev_fast.go ↔ sgdprev_sparse.go, went when the choice
// between the two loops moved to sgdprev.go and the fast loop reached the
// lazy one through a function field. A cycle usually means a helper sits
// outside its natural file; move it
// (as Subset went to view.go, PrivateSetup and certifiedRun to
// registry.go, Calibration to private.go, regProps to loss.go).
func TestFileLevels(t *testing.T) {
	files, edges := fileGraph(t)
	n := 0
	for _, f := range files {
		n += len(edges[f])
	}
	levels, back := fileLevels(files, edges)
	t.Logf("%d files, %d edges, %d levels, %d edges pointing back up: %s", len(files), n, levels, len(back), strings.Join(back, ", "))
	for _, c := range sccs(files, edges) {
		if len(c) > 1 {
			t.Errorf("files %v use each other in a cycle", c)
		}
	}
	if len(back) > 0 {
		t.Errorf("%d edges point back up: %s", len(back), strings.Join(back, ", "))
	}
}
