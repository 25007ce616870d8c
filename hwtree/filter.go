package hwtree

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
	for _, c := range o.Children {
		removeType(c, typ)
		if c.Type == typ {
			kids = append(kids, c.Children...)
		} else {
			kids = append(kids, c)
		}
	}
	o.Children = kids
}
