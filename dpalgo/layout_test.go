package dpalgo

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// fileRole is what a source file of this package is: an algorithm file
// (private_<paper or mechanism>.go, which registers its algorithms), a file
// of the shared kit (kit*.go, named by role), or another (the federated
// site halves fed*.go, the default rule recommend.go, doc.go).
func fileRole(name string) string {
	switch {
	case strings.HasPrefix(name, "private_"):
		return "algorithm"
	case strings.HasPrefix(name, "kit"):
		return "kit"
	}
	return "other"
}

// TestNoDependencyBetweenAlgorithmFiles: an algorithm file uses only what
// it declares itself and the kit; the kit uses only the kit; nothing in
// either uses a site half or the default rule. So adding, changing or
// removing one paper's file touches no other (0 back-pointing
// dependencies between algorithm files). Identifiers are resolved as the
// parser does within a file: a name a file uses but does not declare is
// package-level (or predeclared).
func TestNoDependencyBetweenAlgorithmFiles(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	declared := map[string]string{} // package-level identifier → its file
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[n] = f
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.Name != "init" {
					declared[d.Name.Name] = n
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						declared[s.Name.Name] = n
					case *ast.ValueSpec:
						for _, id := range s.Names {
							if id.Name != "_" {
								declared[id.Name] = n
							}
						}
					}
				}
			}
		}
	}
	roles := map[string]int{}
	for n := range files {
		roles[fileRole(n)]++
	}
	if roles["algorithm"] < 8 || roles["kit"] < 5 {
		t.Fatalf("found %d algorithm files and %d kit files: the layout changed, update this test", roles["algorithm"], roles["kit"])
	}
	var bad []string
	checked := 0
	for n, f := range files {
		role := fileRole(n)
		if role == "other" {
			continue
		}
		uses := map[string]bool{}
		ast.Inspect(f, func(x ast.Node) bool {
			switch x := x.(type) {
			case *ast.SelectorExpr:
				ast.Inspect(x.X, func(y ast.Node) bool { // x.Sel is a field, method or another package's name
					if id, ok := y.(*ast.Ident); ok && id.Obj == nil {
						uses[id.Name] = true
					}
					return true
				})
				return false
			case *ast.KeyValueExpr:
				if _, ok := x.Key.(*ast.Ident); ok { // a struct literal's field name
					ast.Inspect(x.Value, func(y ast.Node) bool {
						if id, ok := y.(*ast.Ident); ok && id.Obj == nil {
							uses[id.Name] = true
						}
						return true
					})
					return false
				}
			case *ast.Ident:
				if x.Obj == nil {
					uses[x.Name] = true
				}
			}
			return true
		})
		for u := range uses {
			from, ok := declared[u]
			if !ok || from == n {
				continue
			}
			checked++
			if fileRole(from) != "kit" {
				bad = append(bad, n+" ("+role+") uses "+u+" of "+from+" ("+fileRole(from)+")")
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b + ": move what both need into a kit file named by its role")
	}
	if checked < 30 {
		t.Errorf("only %d uses across files checked", checked)
	}
}
