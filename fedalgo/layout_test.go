package fedalgo

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/pairfed/pairfed/"

// processLayer is the process layer: the coordinator and the workers (pure
// state machines), the wire protocol, the transport, the store and the
// simulation that drives them. It knows the federated algorithms only
// through this package's interface (Algorithm, Lookup, the phases).
var processLayer = []string{"coordinator", "worker", "protocol", "transport", "store", "simulate"}

// algorithmPackages hold the single-site algorithms and the private
// algorithms' site halves; the process layer never imports them (it runs
// whatever fedalgo's registry names).
var algorithmPackages = []string{"algo", "algo/all", "dpalgo"}

// parsePackage parses the non-test Go files of the module directory dir
// (relative to the module root, which is "..").
func parsePackage(t *testing.T, fset *token.FileSet, dir string) map[string]*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("..", dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files[n] = f
	}
	if len(files) == 0 {
		t.Fatalf("%s: no Go files", dir)
	}
	return files
}

// moduleImports returns the module packages (paths relative to the module
// root) that the non-test files of dir import.
func moduleImports(t *testing.T, fset *token.FileSet, dir string) map[string]bool {
	out := map[string]bool{}
	for _, f := range parsePackage(t, fset, dir) {
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if rel, ok := strings.CutPrefix(p, module); ok {
				out[rel] = true
			}
		}
	}
	return out
}

// TestProcessLayerImports is the boundary between the process layer and
// the algorithms, as imports: no package of the process layer imports an
// algorithm package, and the wire protocol and the transport depend on no
// learning code at all, even indirectly (within the module).
func TestProcessLayerImports(t *testing.T) {
	fset := token.NewFileSet()
	for _, dir := range processLayer {
		imps := moduleImports(t, fset, dir)
		for _, a := range algorithmPackages {
			if imps[a] {
				t.Errorf("%s imports %s: the process layer knows algorithms only through package fedalgo", dir, a)
			}
		}
	}
	learning := map[string]bool{"pairwise": true, "fedalgo": true, "experiment": true}
	for _, a := range algorithmPackages {
		learning[a] = true
	}
	for _, dir := range []string{"protocol", "transport"} {
		seen := map[string]bool{}
		stack := []string{dir}
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for q := range moduleImports(t, fset, p) {
				if learning[q] {
					t.Errorf("%s depends on %s (through %s): the wire carries numbers, not algorithms", dir, q, p)
				}
				if !seen[q] {
					seen[q] = true
					stack = append(stack, q)
				}
			}
		}
	}
}

// TestNoAlgorithmOutsideFedalgo: adding a federated algorithm is one file
// in this package. The process layer uses no identifier declared in an
// algorithm file of this package (a file whose init registers an
// algorithm) and spells no registered name as a string literal.
func TestNoAlgorithmOutsideFedalgo(t *testing.T) {
	fset := token.NewFileSet()
	own := parsePackage(t, fset, "fedalgo")
	algoIdents := map[string]string{} // exported identifier → its algorithm file
	var algoFiles []string
	for name, f := range own {
		if !registers(f) {
			continue
		}
		algoFiles = append(algoFiles, filepath.Base(name))
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					algoIdents[d.Name.Name] = filepath.Base(name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							algoIdents[s.Name.Name] = filepath.Base(name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								algoIdents[n.Name] = filepath.Base(name)
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(algoFiles)
	if len(algoFiles) < len(Names())/2 {
		t.Fatalf("only %d algorithm files found (%v) for %d registered algorithms", len(algoFiles), algoFiles, len(Names()))
	}
	registered := map[string]bool{}
	for _, n := range Names() {
		registered[n] = true
	}
	checked := 0
	for _, dir := range processLayer {
		for name, f := range parsePackage(t, fset, dir) {
			checked++
			local := "fedalgo"
			for _, im := range f.Imports {
				if p, _ := strconv.Unquote(im.Path.Value); p == module+"fedalgo" && im.Name != nil {
					local = im.Name.Name
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok && x.Name == local {
						if file, ok := algoIdents[n.Sel.Name]; ok {
							t.Errorf("%s: %s uses fedalgo.%s of the algorithm file %s: federated algorithms belong in package fedalgo", fset.Position(n.Pos()), filepath.Base(name), n.Sel.Name, file)
						}
					}
				case *ast.BasicLit:
					if n.Kind == token.STRING {
						if s, err := strconv.Unquote(n.Value); err == nil && registered[s] {
							t.Errorf("%s: names the federated algorithm %q: the process layer takes names from jobs", fset.Position(n.Pos()), s)
						}
					}
				}
				return true
			})
		}
	}
	if checked < 15 {
		t.Errorf("checked only %d source files", checked)
	}
}

// registers reports whether f has an init function that calls Register.
func registers(f *ast.File) bool {
	found := false
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Name.Name != "init" || fn.Body == nil {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "Register" {
					found = true
				}
			}
			return !found
		})
	}
	return found
}
