package configsets

import (
	"strings"
	"testing"

	"github.com/barriertune/barriertune/hwtree"
)

// TestExactLabelsTellClassesApart: every set the exact method lists for a
// thread count on a symmetric tree has its own label (formerly two
// classes printed the same config "(a2, b0)" with empty labels), and a
// balanced label is the one Representatives gives the same class.
func TestExactLabelsTellClassesApart(t *testing.T) {
	checked := 0
	for _, syn := range []string{"pack:2 core:2 pu:2", "pack:2 l3:2 core:4 pu:2", "pack:3 core:3 pu:2", "core:4 pu:1", "pack:2 numa:2 core:2 pu:2"} {
		topo, err := hwtree.FromSynthetic(syn)
		if err != nil {
			t.Fatal(err)
		}
		sp := NewSpace(topo)
		for threads := 1; threads <= min(len(topo.PUs()), 8); threads++ {
			seq, err := sp.Enumerate(threads, Exact)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string][]int{}
			for s := range seq {
				if s.Label == "" || !(strings.HasPrefix(s.Label, "balanced ") || strings.HasPrefix(s.Label, "uneven [")) {
					t.Errorf("%s, %d threads: set %v has label %q", syn, threads, s.CPUs, s.Label)
				}
				if other, dup := seen[s.Label]; dup {
					t.Errorf("%s, %d threads: sets %v and %v share the label %q", syn, threads, other, s.CPUs, s.Label)
				}
				seen[s.Label] = s.CPUs
			}
			reps, err := sp.Representatives(threads, 3)
			if err != nil {
				t.Fatal(err)
			}
			// A representative labelled "balanced U" is in the class the
			// enumeration labels "balanced U" too.
			for _, r := range reps {
				if !strings.HasPrefix(r.Label, "balanced ") {
					continue
				}
				checked++
				if sp.spreadLabel(r.CPUs) != r.Label {
					t.Errorf("%s: representative %v is %q but its spread is %q", syn, r.CPUs, r.Label, sp.spreadLabel(r.CPUs))
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no balanced representative was compared")
	}
}
