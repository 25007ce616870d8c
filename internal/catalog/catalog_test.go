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

// The facts by name are the entries' fields: the trees take a fan-in, the
// blocking baselines and goroutine park; an unknown name has neither.
func TestFacts(t *testing.T) {
	for _, a := range barriers.Algorithms() {
		if TakesFanIn(a.Name) != a.FanIn || Parks(a.Name) != a.Parks {
			t.Errorf("%s: TakesFanIn %v Parks %v, entry %+v", a.Name, TakesFanIn(a.Name), Parks(a.Name), a)
		}
	}
	for _, n := range []string{"combining", "static-tree", "all-static-tree"} {
		if !TakesFanIn(n) {
			t.Errorf("%s takes no fan-in", n)
		}
	}
	for _, n := range []string{"cond", "channel", "goroutine"} {
		if !Parks(n) {
			t.Errorf("%s does not park", n)
		}
	}
	if TakesFanIn("nope") || Parks("nope") || TakesFanIn("central") || Parks("central") {
		t.Error("a fact for central or an unknown name")
	}
}
