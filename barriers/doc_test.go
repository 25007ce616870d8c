package barriers

import (
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestPackageDocNamesEveryAlgorithm: the package overview lists every
// catalog algorithm (formerly it omitted hybrid and goroutine), and its
// rule of thumb for more participants than CPUs names what Auto picks
// there.
func TestPackageDocNamesEveryAlgorithm(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	overview, _, _ := strings.Cut(string(src), "# Use")
	overview = strings.Join(strings.Fields(strings.ReplaceAll(overview, "//", "")), " ")
	phrase := map[string]string{
		"central": "central counter", "static-tree": "static and all-static trees", "all-static-tree": "all-static trees",
		"combining": "combining tree", "dissemination": "dissemination", "tournament": "tournament",
		"binomial": "binomial spanning tree", "butterfly": "butterfly", "pairwise": "pairwise exchange",
		"mcs": "MCS tree", "hybrid": "the hybrid", "goroutine": "goroutine barrier", "cond": "sync.Cond", "channel": "channels",
	}
	for _, n := range names() {
		p, ok := phrase[n]
		if !ok {
			t.Errorf("%s: no phrase in this test; add it, and the algorithm to doc.go's overview", n)
			continue
		}
		if !strings.Contains(overview, p) {
			t.Errorf("the package overview does not name %s (%q)", n, p)
		}
	}
	rule := string(src)[strings.Index(string(src), "more participants than CPUs"):]
	rule, _, _ = strings.Cut(rule, "# Which policy")
	if !strings.Contains(rule, oversubscribedFallback()) {
		t.Errorf("the rule of thumb for more participants than CPUs does not name %s:\n%s", oversubscribedFallback(), rule)
	}
}

// oversubscribedFallback is Auto's fallback with more participants than CPUs.
func oversubscribedFallback() string { return fallbackAlgorithm(1 << 20) }

// TestPackageDocStartsWithCode: the package documentation shows, near its
// top (`go doc ./barriers` prints it), code that calls barriers.Auto and
// Wait, and the code parses as Go.
func TestPackageDocStartsWithCode(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var code []string
	line, end := 0, 0
	for _, l := range strings.Split(string(src), "\n") {
		if !strings.HasPrefix(l, "//") {
			break
		}
		line++
		if c, ok := strings.CutPrefix(l, "//\t"); ok {
			code = append(code, c)
			end = line
		} else if len(code) > 0 {
			break
		}
	}
	text := strings.Join(code, "\n")
	if !strings.Contains(text, "barriers.Auto(") || !strings.Contains(text, ".Wait(") || end > 36 {
		t.Fatalf("the package doc's first code block (ending at line %d; want it by 36, as go doc's header adds two):\n%s", end, text)
	}
	fset := token.NewFileSet()
	if _, err := parser.ParseFile(fset, "doc_example.go", "package p\nfunc f() error {\n"+text+"\nreturn nil\n}\n", 0); err != nil {
		t.Errorf("the package doc's code does not parse: %v\n%s", err, text)
	}
}
