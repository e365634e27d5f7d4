package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pairfed/pairfed/pairwise"
)

// sourcePathRE matches a Go source path named in a text: "dpalgo/kit_ssp.go",
// "(private_lda.go)". sourceSymbolRE matches a qualified identifier of one
// of the module's packages: "dpalgo.LDAPlan".
var (
	sourcePathRE   = regexp.MustCompile(`[A-Za-z0-9_./-]*[A-Za-z0-9_]\.go\b`)
	sourceSymbolRE = regexp.MustCompile(`\b([a-z]+)\.([A-Z][A-Za-z0-9_]*)\b`)
)

// repoIndex is what a report may name: the module's Go files (by path
// from the module root and by base name) and the top-level identifiers of
// its packages (by directory from the root).
type repoIndex struct {
	paths   map[string]bool            // "dpalgo/kit_ssp.go"
	bases   map[string]bool            // "kit_ssp.go"
	symbols map[string]map[string]bool // package directory → identifiers
}

// indexRepo walks the module at root (testdata and hidden directories
// skipped) and parses every non-test Go file's top-level declarations.
func indexRepo(t *testing.T, root string) *repoIndex {
	t.Helper()
	ix := &repoIndex{paths: map[string]bool{}, bases: map[string]bool{}, symbols: map[string]map[string]bool{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		ix.paths[rel] = true
		ix.bases[d.Name()] = true
		if strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		syms := ix.symbols[dir]
		if syms == nil {
			syms = map[string]bool{}
			ix.symbols[dir] = syms
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil {
					syms[decl.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range decl.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						syms[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, id := range s.Names {
							syms[id.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// missing returns the source paths and qualified identifiers text names
// that do not exist: a path with a directory must exist from the module
// root ("pairwise/private_x21.go" after the file moved to dpalgo/ does
// not), a bare file name must be a Go file somewhere in the module, and
// pkg.Name must be a top-level identifier of the module's package pkg
// (when pkg is one of the module's top-level packages; "fmt.Errorf" and
// the like are not checked). Import paths of other modules
// ("github.com/nats-io/nats.go") are not source paths.
func (ix *repoIndex) missing(text string) []string {
	var out []string
	for _, loc := range sourcePathRE.FindAllStringIndex(text, -1) {
		m := text[loc[0]:loc[1]]
		if strings.Contains(m, "github.com/") || strings.Contains(m, "golang.org/") || m == "_test.go" {
			continue
		}
		m = strings.TrimPrefix(m, "./")
		ok := ix.paths[m]
		if !strings.Contains(m, "/") {
			ok = ix.bases[m]
		}
		if !ok {
			out = append(out, m)
		}
	}
	for _, sm := range sourceSymbolRE.FindAllStringSubmatch(text, -1) {
		syms, isPkg := ix.symbols[sm[1]]
		if !isPkg {
			continue
		}
		if !syms[sm[2]] {
			out = append(out, sm[0])
		}
	}
	return out
}

// stringsOf appends every string (and element of a []string) field of the
// struct v points to.
func stringsOf(v any) []string {
	rv := reflect.Indirect(reflect.ValueOf(v))
	var out []string
	for i := range rv.NumField() {
		f := rv.Field(i)
		switch {
		case f.Kind() == reflect.String:
			out = append(out, f.String())
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
			for j := range f.Len() {
				out = append(out, f.Index(j).String())
			}
		}
	}
	return out
}

// TestReportPathsExist: every source file and every package-qualified
// identifier that a registry entry (both registries: title, paper, Ref,
// assumptions, PrivacyModel, the federated rows' references) or a recorded
// report names exists in the repository. The recorded reports are the
// goldens, which the golden tests hold byte for byte to what the runs print
// (privacy notes, calibration lines, help texts, `pairfed algos`), and
// docs/algorithms.md (generated from both registries, TestAlgorithmsDoc).
// So a file moved or renamed without its report strings fails here.
func TestReportPathsExist(t *testing.T) {
	root := filepath.Join("..", "..")
	ix := indexRepo(t, root)
	if !ix.paths["dpalgo/kit_ssp.go"] || !ix.symbols["dpalgo"]["LDAPlan"] {
		t.Fatalf("repository index lacks dpalgo/kit_ssp.go or dpalgo.LDAPlan: indexed %d files from %s", len(ix.paths), root)
	}
	var bad []string
	check := func(where, text string) {
		for _, m := range ix.missing(text) {
			bad = append(bad, where+": "+m)
		}
	}
	for _, a := range pairwise.Algorithms() {
		for _, s := range stringsOf(a) {
			check("single-site registry "+a.Name, s)
		}
	}
	for _, r := range fedAlgoRows() {
		for _, s := range stringsOf(&r) {
			check("federated registry "+r.Name, s)
		}
	}
	files := []string{filepath.Join(root, "docs", "algorithms.md")}
	for _, dir := range []string{
		filepath.Join(root, "algo", "all", "testdata", "golden"),
		filepath.Join(root, "simulate", "testdata", "golden"),
		filepath.Join("testdata", "cli"),
	} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		check(filepath.ToSlash(f), string(b))
	}
	if len(files) < 50 {
		t.Fatalf("only %d golden files found: the layout changed, update this test", len(files))
	}
	slices.Sort(bad)
	bad = slices.Compact(bad)
	for _, b := range bad {
		t.Errorf("names something that does not exist: %s", b)
	}
}

// TestReportPathsCatchPlanted: the check of TestReportPathsExist reports
// paths of files that moved (pairwise/private_x21.go, fedalgo/kit_pairsum.go),
// a bare name no file has and an identifier of the wrong package, and
// nothing else.
func TestReportPathsCatchPlanted(t *testing.T) {
	ix := indexRepo(t, filepath.Join("..", ".."))
	text := "proof in pairwise/private_x21.go and fedalgo/kit_pairsum.go (moved to dpalgo/kit_pairsum.go); " +
		"see private_nosuch.go, private_lda.go, ./dpalgo/private_x21.go, github.com/nats-io/nats.go; " +
		"calibrated by pairwise.LDAPlan (now dpalgo.LDAPlan), fmt.Errorf and pairwise.CalibrateGaussian"
	got := ix.missing(text)
	want := []string{"pairwise/private_x21.go", "fedalgo/kit_pairsum.go", "private_nosuch.go", "pairwise.LDAPlan"}
	if !slices.Equal(got, want) {
		t.Fatalf("missing = %q, want %q", got, want)
	}
}

// TestNoDeveloperMachinePaths: no source, script or document names the
// development machine's shared folder (a user's clone has none beside it);
// public files are found through PAIRFED_DATASETS. Only .ci/run (which
// uses the CI machine's copy when the variable is unset) and the CI timing
// notes that describe that setting may name it.
func TestNoDeveloperMachinePaths(t *testing.T) {
	bad := []string{"../" + "shared", "/work/" + "shared"}
	allowed := map[string]bool{".ci/run": true, "docs/results/test-times.md": true}
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".go", ".md", ".sh", ".json", ".txt", ".yaml", ".yml", ".env", ".service", ".html", "":
		default:
			return nil
		}
		if allowed[rel] || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, s := range bad {
			if i := strings.Index(string(b), s); i >= 0 {
				line := 1 + strings.Count(string(b[:i]), "\n")
				t.Errorf("%s:%d names %q: a user's clone has no such folder (use PAIRFED_DATASETS, or <shared datasets> in a document)", rel, line, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
