package algname_test

import (
	"slices"
	"testing"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/internal/algname"
)

// TestAllIsTheCatalog: the names are barriers' catalog, in its order; an
// algorithm added to barriers without its name here fails.
func TestAllIsTheCatalog(t *testing.T) {
	var want []string
	for _, a := range barriers.Algorithms() {
		want = append(want, a.Name)
	}
	if got := algname.All(); !slices.Equal(got, want) {
		t.Errorf("algname.All() = %v\nbarriers.Algorithms() = %v", got, want)
	}
}
