package check

import (
	"slices"
	"testing"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

func TestOversubscribedThreadCounts(t *testing.T) {
	for n, want := range map[int][]int{0: {2, 4}, 1: {2, 4}, 2: {4, 8}, 6: {12, 24}, barriers.MaxParticipants / 2: {barriers.MaxParticipants}, barriers.MaxParticipants: nil} {
		if got := OversubscribedThreadCounts(n); !slices.Equal(got, want) {
			t.Errorf("OversubscribedThreadCounts(%d) = %v, want %v", n, got, want)
		}
	}
	if got := WithOversubscribedCounts([]int{2, 4, 3}, 2); !slices.Equal(got, []int{2, 3, 4, 8}) {
		t.Errorf("WithOversubscribedCounts([2 4 3], 2) = %v, want [2 3 4 8]", got)
	}
}

// TestDefaultCheckMeasuresOversubscribed: a default check on 2 PUs
// measures 2, 4 and 8 threads, the two larger round-robin with goroutines,
// so the selection for 8 threads on those CPUs is measured;
// counts given explicitly are measured as given.
func TestDefaultCheckMeasuresOversubscribed(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:1 core:2 pu:1")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := prepareFor(Config{Topology: topo}, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Threads, []int{2, 4, 8}) {
		t.Fatalf("default thread counts on 2 PUs: %v, want [2 4 8]", cfg.Threads)
	}
	if cfg, err := prepareFor(Config{Topology: topo, Threads: []int{2}}, true); err != nil || !slices.Equal(cfg.Threads, []int{2}) {
		t.Fatalf("--threads 2: %v, %v; want [2] alone", cfg.Threads, err)
	}
	f := simulate(t, Config{Topology: topo})
	for _, n := range []int{4, 8} {
		e := f.Lookup(n)
		if e == nil || e.Best == nil || e.Threads != n || e.Best.Pinned || len(e.Best.CPUs) != n {
			t.Fatalf("%d threads: entry %+v, want a measured unpinned best", n, e)
		}
		sel, err := f.Select(n, topo.Allowed())
		if err != nil {
			t.Fatal(err)
		}
		if sel.Rule != results.Measured || !sel.Best {
			t.Errorf("%d threads on the 2 PUs: rule %s (%s), want measured", n, sel.Rule, sel.Why)
		}
	}
}
