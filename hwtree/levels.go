package hwtree

import (
	"fmt"

	"github.com/barriertune/barriertune/cpuset"
)

// Level is one type of object of a tree and the CPUs of each of its
// objects: the form in which a results file records a machine's tree.
type Level struct {
	Type Type
	Sets []cpuset.Set
}

// FromLevels builds the tree whose PUs are cpus and whose other objects are
// the levels' objects, each below the smallest object whose CPUs include
// its own (for equal CPUs, the type nearer the root above), as the other
// sources' trees are built. An object with no CPU or CPUs outside cpus, one
// that partially overlaps another, or one that repeats another of its type
// is refused: a recorded tree must be a tree. The objects carry no
// attributes (cache sizes, models) and no OS index but the PUs'.
func FromLevels(cpus cpuset.Set, levels []Level, source string) (*Topology, error) {
	if cpus.IsEmpty() {
		return nil, fmt.Errorf("the tree has no CPU")
	}
	var protos []proto
	for _, l := range levels {
		if l.Type == Machine || l.Type == PU || l.Type < 0 || l.Type >= numTypes {
			return nil, fmt.Errorf("a level of type %s cannot lie between the Machine and the PUs", l.Type)
		}
		for _, s := range l.Sets {
			if s.IsEmpty() || !s.SubsetOf(cpus) {
				return nil, fmt.Errorf("%s with CPUs %q: empty or outside the tree's CPUs %s", l.Type, s, cpus)
			}
			protos = append(protos, proto{typ: l.Type, osIndex: -1, complete: s})
		}
	}
	for _, c := range cpus.Members() {
		protos = append(protos, proto{typ: PU, osIndex: c, complete: cpuset.Of(c)})
	}
	b := &builder{strict: true}
	obj, err := b.build(protos, cpus, nil)
	if err != nil {
		return nil, err
	}
	t := &Topology{Root: obj, Source: source}
	t.finalize()
	return t, t.validate()
}
