package libtest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLayers: every import points down the floors docs/architecture.md
// draws, as Go's own tree keeps src/internal (the runtime's support) apart
// from src/cmd/internal (the tools'):
//
//	programs    cmd/barriertune, cmd/scripts/*
//	the tuner   cmd/internal/*
//	the API     barriers > results > hwtree
//	its support internal/* (importable by the whole module, used by the API)
//	the ground  cpuset (imports nothing of the module)
//
// No API or root internal/ package imports anything under cmd/; a root
// internal/ package imports no API package but cpuset; on the API floor
// hwtree imports neither results nor barriers, and results not barriers;
// and every root internal/ package is one an API package or its tests
// link (with barriers' build tags: internal/cpuhog is the tests' CPU
// hog), or it belongs under cmd/internal/.
func TestLayers(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH:", err)
	}
	const mod = "github.com/barriertune/barriertune"
	out, err := exec.Command(gobin, "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, mod+"/...").Output()
	if err != nil {
		t.Skip("go list:", err)
	}
	api := []string{mod + "/barriers", mod + "/results", mod + "/hwtree", mod + "/cpuset"}
	rank := map[string]int{mod + "/barriers": 3, mod + "/results": 2, mod + "/hwtree": 1, mod + "/cpuset": 0}
	support := func(p string) bool { return strings.HasPrefix(p, mod+"/internal/") }
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		p, imports := f[0], f[1:]
		lower := slices.Contains(api, p) || support(p)
		for _, q := range imports {
			if !strings.HasPrefix(q, mod+"/") {
				continue
			}
			checked++
			switch {
			case lower && strings.HasPrefix(q, mod+"/cmd/"):
				t.Errorf("%s imports %s: the API and its support import nothing of the tuner", p, q)
			case support(p) && slices.Contains(api, q) && q != mod+"/cpuset":
				t.Errorf("%s imports %s: the API's support imports no API package but cpuset", p, q)
			case p == mod+"/cpuset":
				t.Errorf("cpuset imports %s: it imports nothing of the module", q)
			case slices.Contains(api, p) && slices.Contains(api, q) && rank[q] >= rank[p]:
				t.Errorf("%s imports %s: on the API floor imports run barriers > results > hwtree > cpuset", p, q)
			}
		}
	}
	if checked == 0 {
		t.Fatal("go list named no import of the module: nothing was checked")
	}
	out, err = exec.Command(gobin, append([]string{"list", "-deps", "-test", "-tags", "barriertrace,sharing"}, api...)...).Output()
	if err != nil {
		t.Skip("go list -deps:", err)
	}
	linked := strings.Fields(string(out))
	all, err := exec.Command(gobin, "list", mod+"/internal/...").Output()
	if err != nil {
		t.Skip("go list:", err)
	}
	for _, p := range strings.Fields(string(all)) {
		if !slices.Contains(linked, p) {
			t.Errorf("%s is in the root internal/ but no API package or its tests link it: the tuner's, it belongs under cmd/internal/", p)
		}
	}
}
