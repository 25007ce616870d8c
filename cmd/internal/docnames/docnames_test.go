package docnames

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// apiPackages are the importable packages whose names the docs mention,
// by their directory under the module root.
var apiPackages = []string{"barriers", "results", "hwtree", "cpuset"}

// mention matches pkg.Name and pkg.Type.Member; the character before pkg
// must not continue a path or an identifier (a path such as
// internal/results is another package, and the name must be exported, so a
// file name such as results.json is not a mention); a range such as
// 1..barriers.MaxParticipants is one.
var mention = regexp.MustCompile(`(^|[^\w./-]|\.\.)(barriers|results|hwtree|cpuset)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)

// decls is what one package declares at top level.
type decls struct {
	names   map[string]bool            // every top-level name: func, type, var, const
	typeOf  map[string]string          // var or const name -> its declared type name, when written
	members map[string]map[string]bool // type name -> its methods and fields
	embeds  map[string][]string        // type name -> the same package's types it embeds
	aliases map[string]string          // alias or defined-as-another-type name -> that type
}

func newDecls() *decls {
	return &decls{names: map[string]bool{}, typeOf: map[string]string{}, members: map[string]map[string]bool{}, embeds: map[string][]string{}, aliases: map[string]string{}}
}

func (d *decls) member(typ, name string) {
	if d.members[typ] == nil {
		d.members[typ] = map[string]bool{}
	}
	d.members[typ][name] = true
}

// typeName is the name of a type expression of this package (T, *T,
// T[P]), or "".
func typeName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return typeName(t.X)
	case *ast.IndexExpr:
		return typeName(t.X)
	case *ast.IndexListExpr:
		return typeName(t.X)
	}
	return ""
}

// parsePackage reads the non-test Go files of dir, all build tags
// included, and fails on any file it cannot parse.
func parsePackage(t *testing.T, dir string) *decls {
	t.Helper()
	d := newDecls()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s (%v)", dir, err)
	}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", path, err)
		}
		for _, decl := range f.Decls {
			switch g := decl.(type) {
			case *ast.FuncDecl:
				if g.Recv == nil {
					d.names[g.Name.Name] = true
				} else if len(g.Recv.List) == 1 {
					d.member(typeName(g.Recv.List[0].Type), g.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range g.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						d.names[s.Name.Name] = true
						d.typeSpec(s)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							d.names[n.Name] = true
							if s.Type != nil {
								d.typeOf[n.Name] = typeName(s.Type)
							}
						}
					}
				}
			}
		}
	}
	return d
}

// typeSpec records a type's fields, interface methods, embedded types and
// the type it is defined as.
func (d *decls) typeSpec(s *ast.TypeSpec) {
	name := s.Name.Name
	switch tt := s.Type.(type) {
	case *ast.StructType:
		for _, f := range tt.Fields.List {
			if len(f.Names) == 0 {
				if e := typeName(f.Type); e != "" {
					d.member(name, e)
					d.embeds[name] = append(d.embeds[name], e)
				}
			}
			for _, n := range f.Names {
				d.member(name, n.Name)
			}
		}
	case *ast.InterfaceType:
		for _, m := range tt.Methods.List {
			for _, n := range m.Names {
				d.member(name, n.Name)
			}
			if len(m.Names) == 0 {
				d.embeds[name] = append(d.embeds[name], typeName(m.Type))
			}
		}
	default:
		if e := typeName(s.Type); e != "" {
			d.aliases[name] = e
		}
	}
}

// hasMember reports whether typ (following embedded types and, for an
// alias, the aliased type) has a method or field called name.
func (d *decls) hasMember(typ, name string, seen map[string]bool) bool {
	if typ == "" || seen[typ] {
		return false
	}
	seen[typ] = true
	if d.members[typ][name] {
		return true
	}
	for _, e := range d.embeds[typ] {
		if d.hasMember(e, name, seen) {
			return true
		}
	}
	return d.hasMember(d.aliases[typ], name, seen)
}

// source is one text the test reads and where its lines start.
type source struct {
	path string // relative to the module root
	text string
	line int // the first line of text in the file
}

// moduleRoot is the directory above this one that holds go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// sources returns README.md, every docs/**/*.md and every comment of every
// Go file under the root; it fails on a file it cannot read or parse and
// names what it leaves out (testdata, hidden directories) in the log.
func sources(t *testing.T, root string) []source {
	t.Helper()
	var out []source
	var skipped []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if e.IsDir() {
			if rel != "." && (strings.HasPrefix(e.Name(), ".") || e.Name() == "testdata") {
				skipped = append(skipped, rel+"/")
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case rel == "README.md" || (strings.HasPrefix(rel, "docs"+string(filepath.Separator)) && strings.HasSuffix(rel, ".md")):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out = append(out, source{path: rel, text: string(b), line: 1})
		case strings.HasSuffix(rel, ".go"):
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return fmt.Errorf("parse %s: %w", rel, err)
			}
			for _, cg := range f.Comments {
				for _, c := range cg.List {
					out = append(out, source{path: rel, text: c.Text, line: fset.Position(c.Slash).Line})
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("not read (hidden or testdata directories): %s; CHANGELOG.md (history: it names what existed then)", strings.Join(skipped, " "))
	return out
}

// TestNamedDeclared fails for every qualified name of barriers, results,
// hwtree or cpuset mentioned in README.md, docs/ and Go comments that its
// package does not declare, and for every mention of a type's member
// whose type has no such method or field.
func TestNamedDeclared(t *testing.T) {
	root := moduleRoot(t)
	pkgs := map[string]*decls{}
	for _, p := range apiPackages {
		pkgs[p] = parsePackage(t, filepath.Join(root, p))
	}
	var stale []string
	checked := 0
	for _, s := range sources(t, root) {
		for i, ln := range strings.Split(s.text, "\n") {
			for _, m := range mention.FindAllStringSubmatch(ln, -1) {
				pkg, name, sel := m[2], m[3], m[4]
				d := pkgs[pkg]
				checked++
				where := fmt.Sprintf("%s:%d", s.path, s.line+i)
				if !d.names[name] {
					stale = append(stale, fmt.Sprintf("%s: %s.%s is not declared", where, pkg, name))
					continue
				}
				if sel == "" {
					continue
				}
				typ := name
				if tn, ok := d.typeOf[name]; ok {
					typ = tn // a value: its type's members
				}
				if !d.hasMember(typ, sel, map[string]bool{}) {
					stale = append(stale, fmt.Sprintf("%s: %s.%s.%s: %s has no method or field %s", where, pkg, name, sel, typ, sel))
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no mention found: the scan reads nothing")
	}
	sort.Strings(stale)
	for _, s := range stale {
		t.Error(s)
	}
	t.Logf("%d mentions checked", checked)
}
