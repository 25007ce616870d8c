package model

import (
	"slices"

	"github.com/barriertune/barriertune/hwtree"
)

// Typical one-way latencies by the deepest level two CPUs share, from the
// ranges docs/model.md and ../shared/latency show (SMT siblings ~10 ns, one L3
// 20-50 ns, across L3s or packages 80-200 ns). TreeCosts uses them where a
// machine is known only by its tree.
const (
	SameCoreNS    = 10.0
	SameL2NS      = 15.0
	SameL3NS      = 40.0
	SamePackageNS = 80.0
	AcrossNS      = 150.0
)

// TreeCosts estimates latencies from a tree alone: two CPUs pay the typical
// latency of the deepest object they share (a core, an L2, an L3, a
// package, die, NUMA node or group, else the machine). Unknown CPUs pay
// AcrossNS. Each PU keeps its chain of ancestors and each object its
// latency, computed once at construction; a latency is the deepest object
// two chains share, found in a few steps. (A PUs² table took 134 MB and 3 s
// on a 4096-PU tree.)
type TreeCosts struct {
	index []int     // OS index -> PU, -1 when not in the tree
	chain [][]int32 // per PU, its ancestors' ids, the root first
	ns    []float64 // per object id, the latency of two CPUs whose deepest shared object it is
}

// NewTreeCosts returns the tree's estimated costs.
func NewTreeCosts(t *hwtree.Topology) *TreeCosts { return NewTreeCostsFrom(t, nil) }

// NewTreeCostsFrom is NewTreeCosts with measured latencies: byLevel maps the
// type of two CPUs' deepest shared object (as the check's floors record it:
// Core, L2Cache, L3Cache, Package, Machine, ...) to its one-way latency in
// ns; levels it lacks take the typical figures.
func NewTreeCostsFrom(t *hwtree.Topology, byLevel map[hwtree.Type]float64) *TreeCosts {
	pus := t.PUs()
	maxOS := 0
	for _, o := range pus {
		maxOS = max(maxOS, o.OSIndex)
	}
	tc := &TreeCosts{index: make([]int, maxOS+1), chain: make([][]int32, len(pus))}
	for i := range tc.index {
		tc.index[i] = -1
	}
	ids := map[*hwtree.Object]int32{}
	id := func(o *hwtree.Object) int32 {
		if v, ok := ids[o]; ok {
			return v
		}
		v := levelNS(o)
		if m, ok := byLevel[o.Type]; ok && m > 0 {
			v = m
		}
		ids[o] = int32(len(tc.ns))
		tc.ns = append(tc.ns, v)
		return ids[o]
	}
	for i, pu := range pus {
		tc.index[pu.OSIndex] = i
		var up []int32
		for o := pu; o != nil; o = o.Parent {
			up = append(up, id(o))
		}
		slices.Reverse(up)
		tc.chain[i] = up
	}
	return tc
}

func levelNS(lca *hwtree.Object) float64 {
	for o := lca; o != nil; o = o.Parent {
		switch o.Type {
		case hwtree.Core, hwtree.L1dCache, hwtree.L1iCache, hwtree.PU:
			return SameCoreNS
		case hwtree.L2Cache:
			return SameL2NS
		case hwtree.L3Cache:
			return SameL3NS
		case hwtree.Package, hwtree.Die, hwtree.NUMANode, hwtree.Group:
			return SamePackageNS
		case hwtree.Machine:
			return AcrossNS
		}
	}
	return AcrossNS
}

// Latency implements Costs.
func (tc *TreeCosts) Latency(a, b int) float64 {
	if a < 0 || b < 0 || a >= len(tc.index) || b >= len(tc.index) || tc.index[a] < 0 || tc.index[b] < 0 {
		return AcrossNS
	}
	i, j := tc.index[a], tc.index[b]
	if i == j {
		return SameCoreNS
	}
	x, y := tc.chain[i], tc.chain[j]
	k := 0
	for k+1 < len(x) && k+1 < len(y) && x[k+1] == y[k+1] {
		k++
	}
	return tc.ns[x[k]]
}
