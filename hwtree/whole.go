package hwtree

import (
	"fmt"
	"strings"
)

// Whole returns the whole machine's tree t is part of: for a tree
// FromSysfs discovered, the same sysfs (live or a snapshot) read again
// without the allowed-set restriction, every usable CPU, those this
// process's affinity or a cgroup leaves out included; any other tree
// (synthetic, XML, JSON, levels, or already whole) is whole as given, and
// Whole returns t. The install-time check records it, so that its results
// apply to any allowed subset of the machine.
func (t *Topology) Whole() (*Topology, error) {
	root, ok := strings.CutPrefix(t.Source, "sysfs:")
	if !ok {
		return t, nil
	}
	return fromSysfsWhole(root)
}

// fromSysfsWhole discovers the whole machine's tree from a Linux sysfs
// (root "/" or "" for the live machine, else a snapshot as FromSysfs
// reads).
func fromSysfsWhole(root string) (*Topology, error) {
	if root == "" {
		root = "/"
	}
	r, err := openSysfs(root)
	if err != nil {
		return nil, err
	}
	protos, complete, err := r.discover()
	if err != nil {
		return nil, fmt.Errorf("sysfs root %q: %w", root, err)
	}
	b := &builder{mergeLevels: true}
	obj, err := b.build(protos, complete, nil)
	if err != nil {
		return nil, fmt.Errorf("sysfs root %q: %w", root, err)
	}
	t := &Topology{Root: obj, Source: "sysfs-whole:" + root, Notes: append(r.notes, b.notes...)}
	t.finalize()
	return t, t.validate()
}
