package hwtree

import (
	"fmt"

	"github.com/barriertune/barriertune/cpuset"
)

// FromLevels builds the tree whose PUs are cpus and whose other objects are
// those levels lists, the CPUs of each object by its type (the form in
// which a results file records a machine's tree): each object below the
// smallest object whose CPUs include its own (for equal CPUs, the type
// nearer the root above), as the other sources' trees are built. An object
// with no CPU or CPUs outside cpus, one that partially overlaps another,
// or one that repeats another of its type is refused: a recorded tree must
// be a tree. The objects carry no attributes (cache sizes, models) and no
// OS index but the PUs'.
func FromLevels(cpus cpuset.Set, levels map[Type][]cpuset.Set, source string) (*Topology, error) {
	if cpus.IsEmpty() {
		return nil, fmt.Errorf("the tree has no CPU")
	}
	for typ := range levels {
		if typ < 0 || typ >= numTypes {
			return nil, fmt.Errorf("a level of type %s cannot lie between the Machine and the PUs", typ)
		}
	}
	var protos []proto
	for typ := Machine; typ < numTypes; typ++ { // root first, whatever the map's order
		sets, ok := levels[typ]
		if !ok {
			continue
		}
		if typ == Machine || typ == PU {
			return nil, fmt.Errorf("a level of type %s cannot lie between the Machine and the PUs", typ)
		}
		for _, s := range sets {
			if s.IsEmpty() || !s.SubsetOf(cpus) {
				return nil, fmt.Errorf("%s with CPUs %q: empty or outside the tree's CPUs %s", typ, s, cpus)
			}
			protos = append(protos, proto{typ: typ, osIndex: -1, complete: s})
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
