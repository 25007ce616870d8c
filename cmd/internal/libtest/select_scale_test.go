package libtest

import (
	"slices"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/check"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

// TestSelectLargeMachine moves large placements of a 128-CPU machine
// (2 packages, 2 NUMA nodes each, 2 L3s each, 8 cores of 2 PUs) into
// subsets: a whole package into the other, one PU per core of a node into
// another package, and a class that needs both packages gives way to the
// next class that fits, or the nearest rule.
func TestSelectLargeMachine(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 numa:2 l3:2 core:8 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	all := topo.CPUs()
	var scatter []int // one PU of each core of node 0
	for i := 0; i < 32; i += 2 {
		scatter = append(scatter, all[i])
	}
	both := append(slices.Clone(all[:16]), all[64:80]...) // one L3 of each package
	f := &results.File{Schema: results.Schema, Machine: check.CurrentMachine(topo)}
	f.Threads = []results.Threads{
		{Threads: 16, Complete: true, Best: &results.Choice{CPUs: scatter, MedianNs: 400, Spec: results.Spec{Algorithm: "dissemination", Policy: "spin"}}},
		{Threads: 32, Complete: true, Best: &results.Choice{CPUs: both, MedianNs: 700, Spec: results.Spec{Algorithm: "butterfly", Policy: "spin"}},
			Measurements: []results.Measurement{{CPUs: all[:32], Summary: results.Summary{MedianNs: 800}, Spec: results.Spec{Algorithm: "central", Policy: "spin"}}}},
		{Threads: 64, Complete: true, Best: &results.Choice{CPUs: all[:64], MedianNs: 900, Spec: results.Spec{Algorithm: "mcs", Policy: "spin"}}},
	}
	sel, err := f.Selector()
	if err != nil {
		t.Fatal(err)
	}
	pkg1 := topo.Objects(hwtree.Package)[1].CPUSet
	for _, c := range []struct {
		n       int
		allowed cpuset.Set
		rule    string
		alg     string
		cpus    []int // nil: any inside allowed
	}{
		{64, pkg1, results.Measured, "mcs", pkg1.Members()},
		{16, pkg1, results.Measured, "dissemination", nil},
		{32, pkg1, results.Measured, "central", all[64:96]},
		{32, cpuset.Range(0, 31), results.Measured, "central", all[:32]},
		{32, cpuset.Range(0, 15).Or(cpuset.Range(64, 79)), results.Measured, "butterfly", both},
		{32, cpuset.Range(0, 14).Or(cpuset.Range(64, 80)), results.RuleNearest, "butterfly", append(all[:15:15], all[64:81]...)},
		{32, cpuset.Range(0, 30), results.RuleOversubscribed, "goroutine", nil},
	} {
		got, err := sel.Select(c.n, c.allowed)
		if err != nil || got.Rule != c.rule || got.Algorithm != c.alg || !cpuset.Of(got.CPUs...).SubsetOf(c.allowed) || c.cpus != nil && !slices.Equal(got.CPUs, c.cpus) {
			t.Errorf("%d threads in %s: %s %s %v (%v); want %s %s %v", c.n, c.allowed, got.Rule, got.Algorithm, got.CPUs, err, c.rule, c.alg, c.cpus)
		}
	}
	// The scattered class keeps its shape: one PU on each of 16 cores.
	got, _ := sel.Select(16, pkg1)
	cores := map[int]bool{}
	for _, c := range got.CPUs {
		cores[c/2] = true
	}
	if len(cores) != 16 {
		t.Errorf("16 scattered threads moved onto %d cores: %v", len(cores), got.CPUs)
	}
}

// BenchmarkSelectSubset: one selection on a 128-CPU machine that moves a
// 32-thread class into the other package (the tree is built once, as
// barriers.Tuned caches it).
func BenchmarkSelectSubset(b *testing.B) {
	topo, err := hwtree.FromSynthetic("pack:2 numa:2 l3:2 core:8 pu:2")
	if err != nil {
		b.Fatal(err)
	}
	all := topo.CPUs()
	f := &results.File{Schema: results.Schema, Machine: check.CurrentMachine(topo), Threads: []results.Threads{
		{Threads: 32, Complete: true, Best: &results.Choice{CPUs: all[:32], MedianNs: 800, Spec: results.Spec{Algorithm: "central", Policy: "spin"}}}}}
	sel, err := f.Selector()
	if err != nil {
		b.Fatal(err)
	}
	pkg1 := topo.Objects(hwtree.Package)[1].CPUSet
	for b.Loop() {
		if s, err := sel.Select(32, pkg1); err != nil || s.Rule != results.Measured {
			b.Fatal(s, err)
		}
	}
}

// BenchmarkSelectorBuild: reading a 128-CPU machine's recorded tree.
func BenchmarkSelectorBuild(b *testing.B) {
	topo, err := hwtree.FromSynthetic("pack:2 numa:2 l3:2 core:8 pu:2")
	if err != nil {
		b.Fatal(err)
	}
	f := &results.File{Schema: results.Schema, Machine: check.CurrentMachine(topo)}
	for b.Loop() {
		if _, err := f.Selector(); err != nil {
			b.Fatal(err)
		}
	}
}
