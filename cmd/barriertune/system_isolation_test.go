//go:build unix

package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/check"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

// TestSystemFileIsTheTests: the system-wide file every command of these
// tests reads is the tests' own (isolate), in process and in the CLI run
// as a subprocess, so that `go test` passes on a node where `sudo
// barriertune check --system` wrote /etc/barriertune/results.json. A file
// of this machine put there is found as "the system-wide file"; had a
// command looked at results.SystemPath instead, it would not be.
func TestSystemFileIsTheTests(t *testing.T) {
	sys := testSystemFile()
	if sys == results.SystemPath || strings.HasPrefix(sys, filepath.Dir(results.SystemPath)) {
		t.Fatalf("the tests' system-wide file is %s: the machine's own", sys)
	}
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME"} {
		if v := os.Getenv(k); !strings.HasPrefix(v, filepath.Dir(filepath.Dir(filepath.Dir(sys)))) {
			t.Errorf("$%s=%s: not the tests' own directory (isolate)", k, v)
		}
	}
	for _, k := range []string{results.ResultsEnv, results.ForceEnv, "XDG_CONFIG_DIRS"} {
		if v, set := os.LookupEnv(k); set {
			t.Errorf("$%s=%s is set for the tests", k, v)
		}
	}
	live, err := hwtree.FromSysfs("/")
	if err != nil {
		t.Skip(err)
	}
	mine, err := os.ReadFile(recordedFile(t, live, check.WholeTopology(live), []int{2}))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(sys), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sys, mine, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(sys)) })
	want := "file: " + sys + " (the system-wide file)"
	code, out, errOut := execLine("show")
	if code != 0 || !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
		t.Errorf("show in process: exit %d, want %q:\n%s%s", code, want, out, errOut)
	}
	r := runCLI(t, nil, "show")
	if r.code != 0 || !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), want) {
		t.Errorf("show as a subprocess: exit %d, want %q:\n%s%s", r.code, want, r.stdout, r.stderr)
	}
}

// TestLookupGoesThroughTheRoot: the commands find results files only
// through globalOptions.finder, whose system-wide file the tests set, and
// the tests run the CLI only with testSystemFile: a command that called
// results.FindHere or HereFinder itself, or a test that ran execute or
// newRootCmd with another file, would read the machine's real
// /etc/barriertune/results.json.
func TestLookupGoesThroughTheRoot(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range pkgs {
		for name, file := range pkg.Files {
			test := strings.HasSuffix(name, "_test.go")
			ast.Inspect(file, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if id, ok := n.X.(*ast.Ident); ok && id.Name == "results" {
						switch n.Sel.Name {
						case "FindHere", "HereFinder":
							if name != "root.go" {
								t.Errorf("%s: results.%s: find results files through globalOptions.finder", fset.Position(n.Pos()), n.Sel.Name)
							}
						case "SystemPath":
							if test && name != "system_isolation_test.go" {
								t.Errorf("%s: a test names results.SystemPath: use testSystemFile", fset.Position(n.Pos()))
							}
						}
					}
				case *ast.CallExpr:
					id, ok := n.Fun.(*ast.Ident)
					if !ok || !test || (id.Name != "execute" && id.Name != "newRootCmd") {
						return true
					}
					arg := n.Args[0]
					if id.Name == "execute" {
						arg = n.Args[1]
					}
					if c, ok := arg.(*ast.CallExpr); !ok || !isIdent(c.Fun, "testSystemFile") {
						t.Errorf("%s: %s without testSystemFile()", fset.Position(n.Pos()), id.Name)
					}
				}
				return true
			})
		}
	}
}

// isIdent reports whether e is the identifier name.
func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
