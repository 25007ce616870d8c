package hwtree

import (
	"fmt"
	"sort"

	"github.com/barriertune/barriertune/cpuset"
)

// proto is an object found by discovery before it has a place in the tree.
// complete is its cpuset over every usable PU, before the allowed set
// restricts it; the tree is built from complete cpusets, as hwloc does, so
// that objects keep their places and order when the allowed set is small.
type proto struct {
	typ      Type
	osIndex  int
	complete cpuset.Set
	attrs    Attrs
}

// node is a proto placed in the tree under construction.
type node struct {
	proto
	children []*node
	memory   []*node       // NUMA nodes merged into this object as its memory
	byCPU    map[int]*node // the child holding each CPU, while inserting
	allowed  bool          // a PU in the allowed cpuset or a NUMANode in the allowed mems
}

// builder turns protos into a tree by cpuset inclusion.
type builder struct {
	notes []string
	// mergeLevels merges a Die identical to its parent (sysfs discovery,
	// where Linux reports a die per package). Trees hwloc already built
	// (XML) and synthetic strings keep it, as lstopo shows them.
	mergeLevels bool
	// extent widens the Machine's complete cpuset beyond the PUs found
	// (an XML file's complete_cpuset, holding CPUs it leaves out).
	extent cpuset.Set
	// strict refuses what discovery would drop or merge with a note: an
	// object that partially overlaps another, or repeats one (FromLevels:
	// a recorded tree must be a tree).
	strict bool
}

// build places every proto below the smallest object that includes its
// cpuset: larger cpusets first, and for equal cpusets the type closer to the
// root first. An object whose cpuset partially overlaps one already placed
// is dropped and noted. Identical duplicates (same type and cpuset; for NUMA
// nodes, same OS index too) are merged. Then the tree is restricted: PUs
// outside allowedCPUs and NUMA nodes outside allowedMems (when known) go, the
// CPUs below such a node staying; objects left without PUs go unless they
// hold an allowed NUMA node; redundant levels merge (mergeIdentical).
func (b *builder) build(protos []proto, allowedCPUs cpuset.Set, allowedMems *cpuset.Set) (*Object, error) {
	var pus cpuset.Builder
	for _, p := range protos {
		if p.typ == PU {
			pus.Or(p.complete)
		}
	}
	all := pus.Set()
	if all.IsEmpty() {
		return nil, fmt.Errorf("no PU found")
	}
	all = all.Or(b.extent)
	type sized struct {
		proto
		size int
	}
	order := make([]sized, len(protos))
	for i, p := range protos {
		order[i] = sized{p, p.complete.Len()} // counted once: Len is linear in the set's words
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, c := order[i], order[j]
		if a.size != c.size {
			return a.size > c.size
		}
		if a.typ != c.typ {
			return a.typ < c.typ
		}
		return a.complete.Compare(c.complete) < 0
	})
	protos = make([]proto, len(order))
	for i, o := range order {
		protos[i] = o.proto
	}
	root := &node{proto: proto{typ: Machine, osIndex: -1, complete: all}}
	seen := map[string]bool{}
	for _, p := range protos {
		key := fmt.Sprintf("%d/%s", p.typ, p.complete)
		if p.typ == NUMANode { // NUMA nodes sharing CPUs (DRAM and NVM tiers) are distinct
			key += fmt.Sprintf("/P#%d", p.osIndex)
		}
		if seen[key] {
			if b.strict {
				return nil, fmt.Errorf("%s objects with CPUs %s appear twice", p.typ, p.complete)
			}
			continue
		}
		seen[key] = true
		if !b.insert(root, p) {
			if b.strict {
				return nil, fmt.Errorf("%s with CPUs %s partially overlaps another object", p.typ, p.complete)
			}
			b.notes = append(b.notes, fmt.Sprintf("dropped %s with cpuset %s: it partially overlaps another object", p.typ, p.complete))
		}
	}
	mark(root, allowedCPUs, allowedMems)
	root.children = prune(root.children)
	if !hasPU(root) {
		return nil, fmt.Errorf("none of the CPUs %s is allowed (allowed set %s)", all, allowedCPUs)
	}
	mergeIdentical(root, allowedCPUs, all, b.mergeLevels)
	return toObject(root), nil
}

func (b *builder) insert(root *node, p proto) bool {
	if !p.complete.SubsetOf(root.complete) {
		return false
	}
	n := root
	for {
		// Siblings hold disjoint CPUs: the child holding p's first CPU is
		// the only one that can hold p; when it does not, every child p
		// meets must lie inside p (else they partially overlap). PUs are
		// leaves: nothing goes below one.
		var next *node
		if c := n.byCPU[p.complete.First()]; c != nil && c.typ != PU && p.complete.SubsetOf(c.complete) {
			next = c
		} else {
			var last *node
			for _, cpu := range p.complete.Members() {
				c := n.byCPU[cpu]
				if c == nil || c == last || c.typ == PU {
					continue
				}
				last = c
				if !c.complete.SubsetOf(p.complete) {
					return false
				}
			}
		}
		if next == nil {
			break
		}
		n = next
	}
	if p.complete.Equal(n.complete) && p.typ <= n.typ && n != root && !(p.typ == NUMANode && n.typ == NUMANode) {
		// Equal cpusets sorted by type make this impossible; guard anyway.
		return false
	}
	child := &node{proto: p}
	n.children = append(n.children, child)
	if n.byCPU == nil {
		n.byCPU = map[int]*node{}
	}
	for _, cpu := range p.complete.Members() {
		n.byCPU[cpu] = child
	}
	return true
}

func mark(n *node, cpus cpuset.Set, mems *cpuset.Set) {
	switch n.typ {
	case PU:
		n.allowed = cpus.Has(n.osIndex)
	case NUMANode:
		n.allowed = mems == nil || mems.Has(n.osIndex)
	}
	for _, c := range n.children {
		mark(c, cpus, mems)
	}
}

// prune removes disallowed PUs and NUMA nodes and the objects left empty.
// A disallowed NUMA node holding allowed CPUs goes as hwloc removes it: its
// CPU objects take its place.
func prune(children []*node) []*node {
	var out []*node
	for _, c := range children {
		c.children = prune(c.children)
		switch {
		case c.typ == NUMANode && !c.allowed:
			out = append(out, c.children...)
		case c.typ == PU || c.typ == NUMANode:
			if c.allowed {
				out = append(out, c)
			}
		case len(c.children) > 0:
			out = append(out, c)
		}
	}
	return out
}

func hasPU(n *node) bool {
	if n.typ == PU {
		return true
	}
	for _, c := range n.children {
		if hasPU(c) {
			return true
		}
	}
	return false
}

func allowedSet(n *node, cpus cpuset.Set) cpuset.Set { return n.complete.And(cpus) }

// mergeIdentical removes Die objects whose allowed cpuset equals their
// parent's, Group objects equal to their parent or to their only child, and
// NUMA nodes equal to their parent (they become its memory), as hwloc merges
// redundant levels.
func mergeIdentical(n *node, cpus, all cpuset.Set, levels bool) {
	full := func(x *node) cpuset.Set { return x.complete.And(all) } // offline CPUs left out
	for i := 0; i < len(n.children); i++ {
		c := n.children[i]
		mergeIdentical(c, cpus, all, levels)
		cs := allowedSet(c, cpus)
		redundant := false
		switch c.typ {
		case Die:
			// hwloc keeps a Die above its only child (an L3 per die) and
			// drops one equal to its Package.
			redundant = levels && cs.Equal(allowedSet(n, cpus)) && !cs.IsEmpty()
		case Group:
			// hwloc merges such groups from every source (its Group
			// filter keeps structure only).
			redundant = cs.Equal(allowedSet(n, cpus)) && !cs.IsEmpty() ||
				len(c.children) == 1 && cs.Equal(allowedSet(c.children[0], cpus))
		}
		var target *node // where c's memory goes when c is removed
		switch {
		case c.typ == NUMANode && len(c.children) > 0:
			// A NUMA node with exactly the CPUs of an object adds no CPU
			// structure: it becomes the memory of the highest such object
			// other than the Machine and the PUs, as hwloc attaches memory
			// (the Package when an L3 shares its CPUs, the Core of 2ps3-2t
			// rather than the Machine, an L3 with one Core below it);
			// else of the Machine when it has those CPUs. Without one it stays a
			// level (hwloc's Group holding it). Complete cpusets decide,
			// as in hwloc: a package a cgroup leaves one core of keeps its
			// node (16amd64-8n2c-cpusets). One holding no allowed PU
			// (memory a cgroup allows under a disallowed package) is kept
			// as a leaf.
			parentEqual := full(c).Equal(full(n))
			if parentEqual && n.typ != Machine {
				target = n
			}
			for d := c; target == nil && len(d.children) > 0; {
				var eq *node
				for _, k := range d.children {
					if k.typ != PU && full(k).Equal(full(c)) {
						eq = k
					}
				}
				if eq == nil {
					break
				}
				if eq.typ != NUMANode {
					target = eq
				}
				d = eq
			}
			if target == nil && parentEqual {
				target = n
			}
			redundant = target != nil
		case redundant:
			target = n
			if len(c.children) == 1 && cs.Equal(allowedSet(c.children[0], cpus)) && !cs.Equal(allowedSet(n, cpus)) {
				target = c.children[0]
			}
		}
		if redundant {
			// Its NUMA nodes (and itself, when it is one) become memory.
			mem := c.memory
			if c.typ == NUMANode {
				mem = append([]*node{{proto: c.proto, allowed: c.allowed}}, mem...)
			}
			target.memory = append(target.memory, mem...)
			repl := append([]*node{}, n.children[:i]...)
			repl = append(repl, c.children...)
			repl = append(repl, n.children[i+1:]...)
			n.children = repl
			i--
		}
	}
}

// toObject converts the built nodes into Objects, ordering children by their
// complete cpusets (hwloc's order, stable when the allowed set is small).
func toObject(n *node) *Object {
	o := &Object{Type: n.typ, OSIndex: n.osIndex, Attrs: n.attrs, complete: n.complete}
	kids := append([]*node{}, n.children...)
	sort.SliceStable(kids, func(i, j int) bool {
		if c := kids[i].complete.Compare(kids[j].complete); c != 0 {
			return c < 0
		}
		return kids[i].osIndex < kids[j].osIndex
	})
	for _, c := range kids {
		o.Children = append(o.Children, toObject(c))
	}
	mem := append([]*node{}, n.memory...)
	sort.SliceStable(mem, func(i, j int) bool { return mem[i].osIndex < mem[j].osIndex })
	for _, m := range mem {
		o.Memory = append(o.Memory, &Object{Type: NUMANode, OSIndex: m.osIndex, Attrs: m.attrs, complete: m.complete})
	}
	return o
}
