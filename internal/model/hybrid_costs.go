package model

import "github.com/barriertune/barriertune/hwtree"

// Typical one-way latencies by the deepest level two CPUs share, from the
// ranges issue 9 and ../shared/latency show (SMT siblings ~10 ns, one L3
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
// AcrossNS. The table is computed once, at construction.
type TreeCosts struct {
	index []int // OS index -> row, -1 when not in the tree
	ns    [][]float64
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
	tc := &TreeCosts{index: make([]int, maxOS+1), ns: make([][]float64, len(pus))}
	for i := range tc.index {
		tc.index[i] = -1
	}
	for i, o := range pus {
		tc.index[o.OSIndex] = i
		tc.ns[i] = make([]float64, len(pus))
	}
	for i, a := range pus {
		tc.ns[i][i] = SameCoreNS
		for j := 0; j < i; j++ {
			lca := t.Covering(a.CPUSet.Or(pus[j].CPUSet))
			v := levelNS(lca)
			if lca != nil {
				if m, ok := byLevel[lca.Type]; ok && m > 0 {
					v = m
				}
			}
			tc.ns[i][j], tc.ns[j][i] = v, v
		}
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
	return tc.ns[tc.index[a]][tc.index[b]]
}
