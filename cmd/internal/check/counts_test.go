package check

import (
	"slices"
	"testing"

	"github.com/barriertune/barriertune/hwtree"
)

// The default counts add each level's PUs and cores (one thread per core)
// of one object: an L3, a NUMA node, a package, the machine. The old
// defaults (2..8, powers of two, all PUs) skipped 12, 24 and 48 on the
// first tree and 24 and 48 on the second.
func TestBoundaryThreadCounts(t *testing.T) {
	for _, c := range []struct {
		synthetic string
		boundary  []int
		plans     []int // counts the plan must hold
	}{
		{"pack:2 l3:4 core:6 pu:2", []int{6, 12, 24, 48, 96}, []int{12, 24, 48, 96}},
		{"pack:2 core:24 pu:2", []int{24, 48, 96}, []int{24, 48, 96}},
		{"pack:2 numa:2 core:5 pu:1", []int{5, 10, 20}, []int{5, 10, 20}},
		{"pack:1 l3:1 core:2 pu:1", []int{2}, []int{2}},
		{"pu:1", nil, []int{2}},
	} {
		topo, err := hwtree.FromSynthetic(c.synthetic)
		if err != nil {
			t.Fatal(err)
		}
		if got := BoundaryThreadCounts(topo); !slices.Equal(got, c.boundary) {
			t.Errorf("%s: boundary counts %v, want %v", c.synthetic, got, c.boundary)
		}
		p, err := DryRun(Config{Topology: topo})
		if err != nil {
			t.Fatal(err)
		}
		var planned []int
		for _, e := range p.Threads {
			planned = append(planned, e.Threads)
		}
		for _, n := range c.plans {
			if !slices.Contains(planned, n) {
				t.Errorf("%s: the plan's counts %v lack %d", c.synthetic, planned, n)
			}
		}
		// The plan says which boundary each count is.
		for _, e := range p.Threads {
			if want := BoundaryReasons(topo)[e.Threads]; !slices.Equal(e.Boundary, want) {
				t.Errorf("%s, %d threads: plan names boundaries %v, want %v", c.synthetic, e.Threads, e.Boundary, want)
			}
		}
		// Everything the old defaults measured is still measured.
		for _, n := range DefaultThreadCounts(len(topo.PUs())) {
			if !slices.Contains(planned, n) {
				t.Errorf("%s: the plan's counts %v lack the default %d", c.synthetic, planned, n)
			}
		}
	}
}

// BoundaryReasons names each level's object: an L3 of 6 cores with SMT
// is 12 PUs and 6 cores, a package of two L3s 24 and 12.
func TestBoundaryReasons(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 l3:2 core:6 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	got := BoundaryReasons(topo)
	for n, want := range map[int]string{6: "L3Cache cores", 12: "L3Cache PUs", 24: "Package PUs", 48: "Machine PUs"} {
		if !slices.Contains(got[n], want) {
			t.Errorf("%d threads: %v, want %q among them", n, got[n], want)
		}
	}
	if !slices.Contains(got[12], "Package cores") || !slices.Contains(got[24], "Machine cores") {
		t.Errorf("cores of the package and machine: %v", got)
	}
}

// WithBoundaryCounts merges, sorted, each once, and keeps counts given.
func TestWithBoundaryCounts(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 core:3 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	got := WithBoundaryCounts([]int{2, 3, 4, 5, 6, 7, 8, 12, 24}, topo)
	if want := []int{2, 3, 4, 5, 6, 7, 8, 12, 24}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
