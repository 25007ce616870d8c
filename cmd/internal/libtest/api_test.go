package libtest

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var updateAPI = flag.Bool("update", false, "rewrite api/names.txt from the API packages' exported names")

// apiPackages are the packages other programs import: the API.
var apiPackages = []string{"barriers", "cpuset", "hwtree", "results"}

// maxTopLevel is the cap on the API's exported top-level names (constants,
// variables, functions and types), docs/architecture.md's.
const maxTopLevel = 105

// TestAPINames holds the API to api/names.txt, as Go's own api/ directory
// holds the standard library's: every exported top-level name of the API
// packages (each non-test file, whatever its build tags), every exported
// method and every exported field of an exported struct type, with its
// kind. A change to the API fails it until the file is regenerated with
// `go test ./cmd/internal/libtest -run TestAPINames -update` and the
// change is reviewed in the diff; and the top-level names may number at
// most maxTopLevel.
func TestAPINames(t *testing.T) {
	root := filepath.Join("..", "..", "..") // the module root, from this package's directory
	var got []string
	for _, pkg := range apiPackages {
		names, err := exportedNames(filepath.Join(root, pkg), pkg)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, names...)
	}
	slices.Sort(got)
	got = slices.Compact(got)
	top := 0
	for _, l := range got {
		switch l[strings.LastIndexByte(l, ' ')+1:] {
		case "const", "var", "func", "type":
			top++
		}
	}
	if top > maxTopLevel {
		t.Errorf("the API has %d exported top-level names, more than the cap of %d: put what only the tuner uses under cmd/internal/, or make it a method", top, maxTopLevel)
	}
	golden := filepath.Join(root, "api", "names.txt")
	text := strings.Join(got, "\n") + "\n"
	if *updateAPI {
		if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d lines, %d top-level names", golden, len(got), top)
		return
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (write it with -update)", err)
	}
	want := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var added, removed []string
	for _, l := range got {
		if _, found := slices.BinarySearch(want, l); !found {
			added = append(added, l)
		}
	}
	for _, l := range want {
		if _, found := slices.BinarySearch(got, l); !found {
			removed = append(removed, l)
		}
	}
	if len(added)+len(removed) > 0 || !slices.IsSorted(want) {
		t.Errorf("the API differs from api/names.txt (an API change is a promise: review it, then rerun with -update):\n  added:   %s\n  removed: %s",
			strings.Join(added, "\n           "), strings.Join(removed, "\n           "))
	}
	t.Logf("%d exported top-level names (cap %d), %d lines", top, maxTopLevel, len(got))
}

// exportedNames lists the exported names of the package in dir, one line
// each: "pkg.Name kind", "pkg.Type.Method method", "pkg.Type.Field field".
func exportedNames(dir, pkg string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var out []string
	structs := map[string]*ast.StructType{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					out = append(out, fmt.Sprintf("%s.%s func", pkg, d.Name.Name))
				} else if recv := receiverType(d.Recv.List[0].Type); ast.IsExported(recv) {
					out = append(out, fmt.Sprintf("%s.%s.%s method", pkg, recv, d.Name.Name))
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							out = append(out, fmt.Sprintf("%s.%s type", pkg, s.Name.Name))
							if st, ok := s.Type.(*ast.StructType); ok {
								structs[s.Name.Name] = st
							}
						}
					case *ast.ValueSpec:
						kind := "var"
						if d.Tok == token.CONST {
							kind = "const"
						}
						for _, n := range s.Names {
							if n.IsExported() {
								out = append(out, fmt.Sprintf("%s.%s %s", pkg, n.Name, kind))
							}
						}
					}
				}
			}
		}
	}
	for typ, st := range structs {
		for _, f := range st.Fields.List {
			for _, n := range f.Names {
				if n.IsExported() {
					out = append(out, fmt.Sprintf("%s.%s.%s field", pkg, typ, n.Name))
				}
			}
			if len(f.Names) == 0 { // embedded
				if name := receiverType(f.Type); ast.IsExported(name) {
					out = append(out, fmt.Sprintf("%s.%s.%s field", pkg, typ, name))
				}
			}
		}
	}
	return out, nil
}

// receiverType is the type name of a receiver or an embedded field
// (T, *T, pkg.T, T[P]).
func receiverType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return receiverType(e.X)
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.IndexExpr:
		return receiverType(e.X)
	case *ast.IndexListExpr:
		return receiverType(e.X)
	}
	return ""
}

// TestAPINamesCatchesAChange: the lister finds exported constants, types,
// methods and fields, and passes over unexported names.
func TestAPINamesCatchesAChange(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\n// A is a.\nconst A = 1\n\n// T is t.\ntype T struct{ X, y int }\n\n// M is m.\nfunc (T) M() {}\nfunc f() {}\n"
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := exportedNames(dir, "p")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{"p.A const", "p.T type", "p.T.M method", "p.T.X field"}
	if !slices.Equal(got, want) {
		t.Errorf("exportedNames = %q, want %q", got, want)
	}
}
