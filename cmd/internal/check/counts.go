package check

import (
	"slices"

	"github.com/barriertune/barriertune/hwtree"
)

// boundaryLevels are the levels of the tree whose objects' sizes are
// default thread counts: a program that runs on one L3, one NUMA node,
// one package or the whole machine, with a thread per PU or per core,
// runs these counts, and the best algorithm and placement change there.
func boundaryLevels() []hwtree.Type {
	return []hwtree.Type{hwtree.L3Cache, hwtree.NUMANode, hwtree.Package, hwtree.Machine}
}

// maxBoundaryCounts caps the counts BoundaryThreadCounts adds (two per
// level), so that the budget's cuts (which skip the largest counts first)
// are not spent on a tree of many levels.
const maxBoundaryCounts = 8

// BoundaryThreadCounts returns the thread counts at the tree's
// boundaries: for each of L3, NUMA node, package and machine present in
// topo, the PUs of its first object and its cores (one thread per core),
// each at least 2, smallest first, at most maxBoundaryCounts. The check
// measures them besides DefaultThreadCounts (WithBoundaryCounts).
func BoundaryThreadCounts(topo *hwtree.Topology) []int {
	var out []int
	for n := range BoundaryReasons(topo) {
		out = append(out, n)
	}
	slices.Sort(out)
	if len(out) > maxBoundaryCounts {
		out = out[:maxBoundaryCounts]
	}
	return out
}

// BoundaryReasons names, for each of topo's boundary thread counts, the
// boundaries it is ("L3Cache PUs", "Package cores"): one object's PUs, or
// its cores with one thread per core.
func BoundaryReasons(topo *hwtree.Topology) map[int][]string {
	out := map[int][]string{}
	if topo == nil || topo.Root == nil {
		return out
	}
	add := func(n int, why string) {
		if n >= 2 && !slices.Contains(out[n], why) {
			out[n] = append(out[n], why)
		}
	}
	for _, typ := range boundaryLevels() {
		var first *hwtree.Object
		switch typ {
		case hwtree.Machine:
			first = topo.Root
		case hwtree.NUMANode:
			if nodes := topo.NUMANodes(); len(nodes) > 0 {
				first = nodes[0]
			}
		default:
			first = firstOf(topo.Root, typ)
		}
		if first == nil {
			continue
		}
		pus := first.CPUSet.Len()
		add(pus, typ.String()+" PUs")
		if cores := coresIn(topo.Root, first); cores > 0 && cores < pus {
			add(cores, typ.String()+" cores")
		}
	}
	return out
}

// firstOf is the first object of type typ under o, depth first.
func firstOf(o *hwtree.Object, typ hwtree.Type) *hwtree.Object {
	if o.Type == typ {
		return o
	}
	for _, c := range o.Children {
		if f := firstOf(c, typ); f != nil {
			return f
		}
	}
	return nil
}

// coresIn counts the Core objects whose CPUs are all in obj's (0 when the
// tree has no cores).
func coresIn(root, obj *hwtree.Object) int {
	n := 0
	var walk func(o *hwtree.Object)
	walk = func(o *hwtree.Object) {
		if !o.CPUSet.Intersects(obj.CPUSet) {
			return
		}
		if o.Type == hwtree.Core {
			if o.CPUSet.SubsetOf(obj.CPUSet) {
				n++
			}
			return
		}
		for _, c := range o.Children {
			walk(c)
		}
	}
	walk(root)
	return n
}

// WithBoundaryCounts is counts with BoundaryThreadCounts(topo) merged in,
// sorted, each once: the default thread counts of a check on topo.
func WithBoundaryCounts(counts []int, topo *hwtree.Topology) []int {
	out := append(slices.Clone(counts), BoundaryThreadCounts(topo)...)
	slices.Sort(out)
	return slices.Compact(out)
}
