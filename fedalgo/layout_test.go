package fedalgo

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The coordinator, the workers, the simulation and the wire protocol know
// no federated algorithm: no registered name, no constant naming one and
// no call of the federated entry points of package pairwise
// (pairwise/fed*.go) may appear in their non-test sources — comments
// included. Adding an algorithm is one file in this package.
func TestNoAlgorithmOutsideFedalgo(t *testing.T) {
	var forbidden []string
	for _, name := range Names() {
		forbidden = append(forbidden, regexp.QuoteMeta(name))
	}
	// The Go constants whose value is a registered name (FedAvg, …).
	fset := token.NewFileSet()
	own, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	registered := map[string]bool{}
	for _, n := range Names() {
		registered[n] = true
	}
	for _, f := range own {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if s, _ := strconv.Unquote(lit.Value); registered[s] {
							forbidden = append(forbidden, `\b`+vs.Names[i].Name+`\b`)
						}
					}
				}
			}
		}
	}
	// The exported functions of pairwise/fed*.go: the algorithms' math.
	fedFiles, err := filepath.Glob("../dpalgo/fed*.go")
	if err != nil || len(fedFiles) == 0 {
		t.Fatalf("dpalgo/fed*.go: %v", err)
	}
	for _, f := range fedFiles {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.IsExported() {
				forbidden = append(forbidden, `dpalgo\.`+fn.Name.Name+`\b`)
			}
		}
	}
	if len(forbidden) < 2*len(Names()) {
		t.Fatalf("only %d forbidden patterns: %v", len(forbidden), forbidden)
	}
	re := regexp.MustCompile("(?i)" + strings.Join(forbidden, "|"))
	checked := 0
	for _, dir := range []string{"../coordinator", "../worker", "../simulate", "../protocol"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for i, line := range strings.Split(string(b), "\n") {
				if m := re.FindString(line); m != "" {
					t.Errorf("%s:%d names %q: federated algorithms belong in package fedalgo\n\t%s", f, i+1, m, strings.TrimSpace(line))
				}
			}
		}
	}
	if checked < 15 {
		t.Errorf("checked only %d source files", checked)
	}
}
