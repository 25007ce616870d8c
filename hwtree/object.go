// Package hwtree models a machine's CPU tree the way hwloc does: Machine >
// Package > [Die / Group / NUMANode] > caches > Core > PU, each object with
// its type, OS index, logical index and cpuset (the PUs below it).
//
// A tree comes from live Linux sysfs or a captured snapshot (FromSysfs),
// an hwloc synthetic string (FromSynthetic), hwloc v2 XML (FromXMLFile), or the
// JSON that Topology.MarshalJSON writes (FromJSON). Discovery from sysfs
// builds the tree from CPU masks, never from ids, as hwloc does.
package hwtree

import (
	"fmt"
	"sort"
	"strings"

	"github.com/barriertune/barriertune/cpuset"
)

// Type is an object type, named exactly as hwloc names it.
type Type int

// The object types, in hwloc's order from the root to the leaves. When two
// objects cover the same PUs, the one with the smaller Type is the parent.
const (
	Machine Type = iota
	Package
	Die
	Group
	NUMANode
	L3Cache
	L2Cache
	L1dCache
	L1iCache
	Core
	PU
	numTypes
)

var typeNames = [numTypes]string{
	"Machine", "Package", "Die", "Group", "NUMANode",
	"L3Cache", "L2Cache", "L1dCache", "L1iCache", "Core", "PU",
}

// String returns hwloc's name for the type, e.g. "L2Cache".
func (t Type) String() string {
	if t < 0 || t >= numTypes {
		return fmt.Sprintf("Type(%d)", int(t))
	}
	return typeNames[t]
}

// ParseType returns the type that s names, as hwloc's hwloc_type_sscanf,
// lstopo's --only and synthetic strings accept them: hwloc's names and
// abbreviations in any case ("Core", "core", "L3Cache", "l3", "pack",
// "numa", "pu"). A file that must hold hwloc's own name (JSON, a results
// file's tree) compares Type.String with it.
func ParseType(s string) (Type, error) {
	low := strings.ToLower(strings.TrimSpace(s))
	for i, n := range typeNames {
		if strings.ToLower(n) == low {
			return Type(i), nil
		}
	}
	if typ, ok := syntheticNames[low]; ok {
		return typ, nil
	}
	if low == "machine" {
		return Machine, nil
	}
	return 0, fmt.Errorf("unknown object type %q (accepted, any case: %s, or the abbreviations %s)", s, strings.Join(typeNames[:], ", "), syntheticAbbrevs)
}

// exactType returns the type named exactly s (hwloc's name, e.g.
// "L3Cache"), as the JSON form writes it.
func exactType(s string) (Type, error) {
	for i, n := range typeNames {
		if n == s {
			return Type(i), nil
		}
	}
	return 0, fmt.Errorf("unknown object type %q (accepted: %s)", s, strings.Join(typeNames[:], ", "))
}

const syntheticAbbrevs = "pack, socket, numa, node, l3, l2, l1, l1d, l1i"

// IsCache reports whether the type is one of the cache types.
func (t Type) IsCache() bool { return t >= L3Cache && t <= L1iCache }

// CacheLevel returns 3, 2 or 1 for cache types and 0 otherwise.
func (t Type) CacheLevel() int {
	switch t {
	case L3Cache:
		return 3
	case L2Cache:
		return 2
	case L1dCache, L1iCache:
		return 1
	}
	return 0
}

// Attrs are an object's attributes. Zero values mean unknown.
type Attrs struct {
	// CacheSize is a cache's size in bytes.
	CacheSize uint64 `json:"cache_size,omitempty"`
	// LineSize is a cache's line size in bytes.
	LineSize int `json:"line_size,omitempty"`
	// Ways is a cache's associativity (-1 for fully associative).
	Ways int `json:"ways,omitempty"`
	// CPUKind names the kind of a hybrid core ("IntelCore", "IntelAtom",
	// or "capacity=N" on Arm); empty on machines with one kind.
	CPUKind string `json:"cpu_kind,omitempty"`
	// Model is a package's CPU model string.
	Model string `json:"model,omitempty"`
	// Subtype is what a Group stands for: "Book", "Drawer", "Cluster".
	Subtype string `json:"subtype,omitempty"`
}

// Object is one node of the tree.
type Object struct {
	// Type is the object's hwloc type.
	Type Type
	// OSIndex is the index the operating system gives it (for a PU, the
	// Linux CPU number); -1 when unknown or meaningless (caches).
	OSIndex int
	// LogicalIndex is its rank among objects of its type in depth-first order.
	LogicalIndex int
	// CPUSet holds the OS indexes of the PUs below it.
	CPUSet cpuset.Set
	// Attrs are its attributes.
	Attrs Attrs
	// Parent is nil for the root.
	Parent *Object
	// Children are ordered by their first PU.
	Children []*Object
	// Memory holds the NUMA nodes attached to this object because their
	// CPUs are exactly its CPUs: hwloc's memory children. They are not
	// part of the CPU tree (Walk, Objects and Canonical skip them); a NUMA
	// node whose CPUs no other object covers is a NUMANode level of the
	// tree instead. Use Topology.NUMANodes for both kinds.
	Memory []*Object
	// Depth is 0 for the root.
	Depth int
	// complete is the object's CPUs including those the allowed set (a
	// cgroup) leaves out, where discovery knew them (sysfs, XML); WriteXML
	// writes it as hwloc's complete_cpuset, so that a package kept only for
	// its memory keeps its place.
	complete cpuset.Set
}

// Topology is a CPU tree rooted at a Machine object.
type Topology struct {
	// Root is the Machine object.
	Root *Object
	// Source says where the tree came from ("sysfs:/", "synthetic:...").
	Source string
	// Notes lists what discovery noticed and worked around (overlapping
	// NUMA maps ignored, objects dropped for conflicting cpusets, ...).
	Notes []string
	// FormatVersion is, for a tree read from hwloc XML, the file's format
	// version: its <topology version="..."> ("2.0", "3.0"), or "1.x" for
	// files without one (hwloc 1.x wrote none); JSON that MarshalJSON wrote
	// for such a tree carries it too. Empty for other sources.
	FormatVersion string
}

// Walk calls fn for every object in depth-first (logical) order; returning
// false from fn skips that object's children.
func (t *Topology) Walk(fn func(o *Object) bool) {
	var rec func(o *Object)
	rec = func(o *Object) {
		if !fn(o) {
			return
		}
		for _, c := range o.Children {
			rec(c)
		}
	}
	rec(t.Root)
}

// Objects returns every object of type typ in logical order.
func (t *Topology) Objects(typ Type) []*Object {
	var out []*Object
	t.Walk(func(o *Object) bool {
		if o.Type == typ {
			out = append(out, o)
		}
		return true
	})
	return out
}

// fullSet is the object's cpuset with the CPUs the allowed set left out,
// where the source knew them.
func (o *Object) fullSet() cpuset.Set { return o.CPUSet.Or(o.complete) }

// asMemory reports whether a NUMANode of the CPU tree is shown (and written)
// as memory of its parent, as lstopo shows it: when it has no CPU objects
// and its parent's CPUs, disallowed ones included (a package a cgroup
// leaves only memory of). Other NUMANode levels are hwloc's Groups holding
// the node.
func (o *Object) asMemory() bool {
	return o.Type == NUMANode && len(o.Children) == 0 && o.Parent != nil && o.fullSet().Equal(o.Parent.fullSet())
}

// NUMANodes returns every NUMA node in logical order: NUMANode levels of
// the CPU tree and the memory of other objects (Object.Memory) alike.
func (t *Topology) NUMANodes() []*Object {
	var out []*Object
	t.Walk(func(o *Object) bool {
		if o.Type == NUMANode {
			out = append(out, o)
		}
		out = append(out, o.Memory...)
		return true
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].LogicalIndex < out[j].LogicalIndex })
	return out
}

// PUs returns the PUs in depth-first order.
func (t *Topology) PUs() []*Object { return t.Objects(PU) }

// CPUs returns the PUs' OS indexes in depth-first order: the rank order that
// placements and barriers use.
func (t *Topology) CPUs() []int {
	pus := t.PUs()
	out := make([]int, len(pus))
	for i, p := range pus {
		out[i] = p.OSIndex
	}
	return out
}

// Allowed returns the set of PUs in the tree.
func (t *Topology) Allowed() cpuset.Set { return t.Root.CPUSet }

// Covering returns the deepest object whose cpuset contains every CPU of set,
// or nil when set is empty or holds a CPU outside the tree. Among a chain of
// objects with the same cpuset, the deepest one is returned.
func (t *Topology) Covering(set cpuset.Set) *Object {
	if set.IsEmpty() || !set.SubsetOf(t.Root.CPUSet) {
		return nil
	}
	o := t.Root
	for {
		var next *Object
		for _, c := range o.Children {
			if set.SubsetOf(c.CPUSet) {
				next = c
				break
			}
		}
		if next == nil {
			return o
		}
		o = next
	}
}

// finalize sets parents, depths, cpusets (from the PUs) and logical indexes.
func (t *Topology) finalize() {
	var counters [numTypes]int
	var rec func(o *Object, parent *Object, depth int) cpuset.Set
	rec = func(o *Object, parent *Object, depth int) cpuset.Set {
		o.Parent, o.Depth = parent, depth
		if o.Type != NUMANode {
			o.LogicalIndex = counters[o.Type]
			counters[o.Type]++
		}
		var s cpuset.Set
		if o.Type == PU {
			if o.OSIndex >= 0 && o.OSIndex <= cpuset.MaxCPU { // validate reports the others
				s = cpuset.Of(o.OSIndex)
			}
		} else {
			var b cpuset.Builder
			for _, c := range o.Children {
				b.Or(rec(c, o, depth+1))
			}
			s = b.Set()
		}
		o.CPUSet = s
		// NUMA nodes are numbered as hwloc numbers its NUMA level: those
		// below an object first, then the object's own memory (a NUMANode
		// level is the memory of the Group hwloc makes for it).
		if o.Type == NUMANode {
			o.LogicalIndex = counters[NUMANode]
			counters[NUMANode]++
		}
		for _, m := range o.Memory {
			m.Parent, m.Depth, m.Children, m.Memory = o, depth+1, nil, nil
			m.LogicalIndex = counters[NUMANode]
			counters[NUMANode]++
			m.CPUSet = s
		}
		return s
	}
	rec(t.Root, nil, 0)
}

// validate checks the invariants every source must meet.
func (t *Topology) validate() error {
	if t.Root == nil || t.Root.Type != Machine {
		return fmt.Errorf("the root object must be a Machine")
	}
	seen := map[int]bool{}
	var err error
	t.Walk(func(o *Object) bool {
		if err != nil {
			return false
		}
		for _, c := range o.Children {
			if c.Type == Machine {
				err = fmt.Errorf("a Machine object cannot be the child of %s L#%d", o.Type, o.LogicalIndex)
				return false
			}
		}
		if o.Type == PU {
			if len(o.Children) > 0 {
				err = fmt.Errorf("PU P#%d has children; PUs must be leaves", o.OSIndex)
			} else if o.OSIndex < 0 || o.OSIndex > cpuset.MaxCPU {
				err = fmt.Errorf("PU L#%d has OS index %d; it needs one in 0..%d", o.LogicalIndex, o.OSIndex, cpuset.MaxCPU)
			} else if seen[o.OSIndex] {
				err = fmt.Errorf("PU P#%d appears twice", o.OSIndex)
			}
			seen[o.OSIndex] = true
		}
		return true
	})
	if err != nil {
		return err
	}
	if len(seen) == 0 {
		return fmt.Errorf("the tree has no PU")
	}
	return nil
}
