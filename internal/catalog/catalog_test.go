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
