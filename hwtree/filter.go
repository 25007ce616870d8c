package hwtree

import (
	"fmt"
	"sort"

	"github.com/barriertune/barriertune/cpuset"
)

// KeepStructure removes the levels that bring no structure, as lstopo's
// "--filter all:structure" does: working from the leaves up, every object of
// a type (other than Machine, NUMANode and PU) is removed when each object of
// that type has exactly one child that is not a NUMA node. The children take
// their places.
func (t *Topology) KeepStructure() {
	for typ := Core; typ > Machine; typ-- {
		if typ == NUMANode {
			continue
		}
		objs := t.Objects(typ)
		if len(objs) == 0 {
			continue
		}
		single := true
		for _, o := range objs {
			n := 0
			for _, c := range o.Children {
				if c.Type != NUMANode {
					n++
				}
			}
			if n != 1 {
				single = false
				break
			}
		}
		if single {
			removeType(t.Root, typ)
		}
	}
	t.finalize()
}

func removeType(o *Object, typ Type) {
	var kids []*Object
	spliced := false
	for _, c := range o.Children {
		removeType(c, typ)
		switch {
		case c.Type == typ && len(c.Memory) > 0 && !c.fullSet().Equal(o.fullSet()):
			// Its memory has no object with its CPUs left: the first node
			// becomes the level (hwloc's Group) holding its children.
			n := c.Memory[0]
			n.Children, n.Memory, n.complete = c.Children, c.Memory[1:], n.complete.Or(c.complete)
			kids = append(kids, n)
			spliced = true
		case c.Type == typ:
			kids = append(kids, c.Children...)
			o.Memory = append(o.Memory, c.Memory...)
			spliced = true
		default:
			kids = append(kids, c)
		}
	}
	if spliced {
		// The children of the removed objects take their places in
		// cpuset order, as hwloc orders the children of an object (cores
		// an L2 grouped as 0,4 then 2,6 become 0,2,4,6).
		sort.SliceStable(kids, func(i, j int) bool { return kids[i].fullSet().Compare(kids[j].fullSet()) < 0 })
	}
	o.Children = kids
}

// RemoveCaches removes every cache object, its children taking its place,
// as lstopo's --no-caches does.
func (t *Topology) RemoveCaches() {
	for _, typ := range []Type{L3Cache, L2Cache, L1dCache, L1iCache} {
		removeType(t.Root, typ)
	}
	t.finalize()
}

// Restrict keeps only the PUs in cpus, and the objects left holding one or
// holding memory (a NUMA node), as lstopo's --restrict does: a package
// whose PUs all go stays, empty, with its NUMA node. It fails, changing
// nothing, when no PU of the tree is in cpus.
func (t *Topology) Restrict(cpus cpuset.Set) error {
	if !t.Root.CPUSet.Intersects(cpus) {
		return fmt.Errorf("restrict to CPUs %q: none is in this topology (its CPUs are %s)", cpus.String(), t.Root.CPUSet)
	}
	var keep func(o *Object) bool
	keep = func(o *Object) bool {
		if o.Type == PU {
			return cpus.Has(o.OSIndex)
		}
		var kids []*Object
		for _, c := range o.Children {
			if keep(c) {
				kids = append(kids, c)
			}
		}
		o.Children = kids
		return len(kids) > 0 || len(o.Memory) > 0 || o.Type == NUMANode
	}
	keep(t.Root)
	t.finalize()
	return nil
}
