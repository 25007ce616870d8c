package catalog

import (
	"testing"

	"github.com/barriertune/barriertune/barriers"
)

// Every name ranks at its catalog index and resolves with barriers.Lookup;
// an unknown name ranks last.
func TestNamesAndRank(t *testing.T) {
	names := Names()
	if len(names) != len(barriers.Algorithms()) || names[0] != "central" {
		t.Fatalf("Names() = %v", names)
	}
	for i, n := range names {
		if got := Rank(n); got != i {
			t.Errorf("Rank(%q) = %d, want %d", n, got, i)
		}
		if _, err := barriers.Lookup(n); err != nil {
			t.Errorf("Lookup(%q): %v", n, err)
		}
	}
	if got := Rank("not-an-algorithm"); got != len(names) {
		t.Errorf("Rank(unknown) = %d, want %d", got, len(names))
	}
}

// TakesFanIn is the entries' FanIn: the trees take one, the others and an
// unknown name do not.
func TestFacts(t *testing.T) {
	for _, a := range barriers.Algorithms() {
		if TakesFanIn(a.Name) != a.FanIn {
			t.Errorf("%s: TakesFanIn %v, entry %+v", a.Name, TakesFanIn(a.Name), a)
		}
	}
	for _, n := range []string{"combining", "static-tree", "all-static-tree"} {
		if !TakesFanIn(n) {
			t.Errorf("%s takes no fan-in", n)
		}
	}
	if TakesFanIn("nope") || TakesFanIn("central") || TakesFanIn("dissemination") {
		t.Error("a fan-in for central, dissemination or an unknown name")
	}
}
