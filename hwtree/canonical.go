package hwtree

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Canonical returns the object's canonical form: a string that two subtrees
// share exactly when they are isomorphic as attributed trees (same types,
// cache sizes and CPU kinds at every place, children matched in any order).
// OS and logical indexes do not enter it. Children with equal forms are
// grouped with a count, so a form stays short on large symmetric machines:
// "Package(L3Cache[32MiB](Core(PU*2)*8))".
func (o *Object) Canonical() string {
	return canonical(o, map[*Object]string{})
}

// CanonicalForms returns the canonical form of every object, computed
// bottom-up once for the whole tree.
func (t *Topology) CanonicalForms() map[*Object]string {
	memo := map[*Object]string{}
	canonical(t.Root, memo)
	return memo
}

// CanonicalHash is a short fingerprint of the whole tree's shape: the first
// 16 hex digits of the SHA-256 of the root's canonical form.
func (t *Topology) CanonicalHash() string {
	sum := sha256.Sum256([]byte(t.Root.Canonical()))
	return hex.EncodeToString(sum[:8])
}

func canonical(o *Object, memo map[*Object]string) string {
	if s, ok := memo[o]; ok {
		return s
	}
	var b strings.Builder
	b.WriteString(o.Type.String())
	var attrs []string
	if o.Attrs.CacheSize > 0 {
		attrs = append(attrs, formatSize(o.Attrs.CacheSize))
	}
	if o.Attrs.CPUKind != "" {
		attrs = append(attrs, "kind="+o.Attrs.CPUKind)
	}
	if len(attrs) > 0 {
		b.WriteString("[" + strings.Join(attrs, ",") + "]")
	}
	if len(o.Children) > 0 {
		counts := map[string]int{}
		for _, c := range o.Children {
			counts[canonical(c, memo)]++
		}
		forms := make([]string, 0, len(counts))
		for f := range counts {
			forms = append(forms, f)
		}
		sort.Strings(forms)
		b.WriteByte('(')
		for i, f := range forms {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(f)
			if counts[f] > 1 {
				b.WriteString("*" + strconv.Itoa(counts[f]))
			}
		}
		b.WriteByte(')')
	}
	s := b.String()
	memo[o] = s
	return s
}

// Symmetric reports whether every object's children have identical subtrees
// (hwloc's symmetric_subtree on the root): then one synthetic string
// describes the whole tree.
func (t *Topology) Symmetric() bool {
	forms := t.CanonicalForms()
	sym := true
	t.Walk(func(o *Object) bool {
		for _, c := range o.Children[min(1, len(o.Children)):] {
			if forms[c] != forms[o.Children[0]] {
				sym = false
			}
		}
		return sym
	})
	return sym
}

// Synthetic returns the hwloc synthetic string of a symmetric tree, e.g.
// "Package:2 L3Cache:1(size=33554432) Core:8 PU:2", which FromSynthetic reads
// back into the same tree. It returns an error when the tree is not
// symmetric.
func (t *Topology) Synthetic() (string, error) {
	if err := t.asymmetry(); err != nil {
		return "", err
	}
	var levels []string
	// One NUMA node for the whole machine is what FromSynthetic (and
	// hwloc) give a string without one: it goes unsaid.
	nodes := t.NUMANodes()
	memory := func(o *Object) {
		if len(nodes) == 1 && nodes[0].CPUSet.Equal(t.Root.CPUSet) && nodes[0].Parent == o {
			return
		}
		for range o.Memory {
			levels = append(levels, "[NUMANode]")
		}
	}
	memory(t.Root)
	for o := t.Root; len(o.Children) > 0; o = o.Children[0] {
		c := o.Children[0]
		level := fmt.Sprintf("%s:%d", c.Type, len(o.Children))
		var attrs []string
		if c.Attrs.CacheSize > 0 {
			attrs = append(attrs, fmt.Sprintf("size=%d", c.Attrs.CacheSize))
		}
		if c.Attrs.CPUKind != "" {
			attrs = append(attrs, "kind="+c.Attrs.CPUKind)
		}
		if len(attrs) > 0 {
			level += "(" + strings.Join(attrs, " ") + ")"
		}
		levels = append(levels, level)
		memory(c)
	}
	return strings.Join(levels, " "), nil
}

// asymmetry names the first level, from the root down, where objects that
// should be alike are not: hwloc refuses to export a synthetic string for
// such a tree too.
func (t *Topology) asymmetry() error {
	forms := t.CanonicalForms()
	level := []*Object{t.Root}
	for depth := 1; len(level) > 0; depth++ {
		var next []*Object
		for _, o := range level {
			for _, c := range o.Children {
				if first := o.Children[0]; forms[c] != forms[first] {
					a, b := differing(first, c, forms)
					return fmt.Errorf("the tree is not symmetric at depth %d (the %s level): %s and %s differ, %s holding %s but %s %s; only symmetric trees have a synthetic string (hwloc refuses them too)",
						depth, first.Type, first.label(), c.label(), a.label(), childSummary(a), b.label(), childSummary(b))
				}
			}
			next = append(next, o.Children...)
		}
		for _, c := range next {
			if first := next[0]; len(c.Memory) != len(first.Memory) {
				return fmt.Errorf("the tree is not symmetric at depth %d (the %s level): %s has %d NUMA nodes as memory but %s has %d; only symmetric trees have a synthetic string (hwloc refuses them too)",
					depth, first.Type, first.label(), len(first.Memory), c.label(), len(c.Memory))
			}
		}
		level = next
	}
	return nil
}

// label is "Package L#1", or "Machine".
func (o *Object) label() string {
	if o.Type == Machine {
		return "Machine"
	}
	return fmt.Sprintf("%s L#%d", o.Type, o.LogicalIndex)
}

// childSummary describes an object's children and attributes briefly:
// "4 Core", "2 L3Cache, 1 Core", "size=1MiB".
func childSummary(o *Object) string {
	var parts []string
	count := map[Type]int{}
	var order []Type
	for _, c := range o.Children {
		if count[c.Type] == 0 {
			order = append(order, c.Type)
		}
		count[c.Type]++
	}
	for _, typ := range order {
		parts = append(parts, fmt.Sprintf("%d %s", count[typ], typ))
	}
	if len(parts) == 0 {
		parts = append(parts, "no children")
	}
	if o.Attrs.CacheSize > 0 {
		parts = append(parts, "size="+formatSize(o.Attrs.CacheSize))
	}
	if o.Attrs.CPUKind != "" {
		parts = append(parts, "kind="+o.Attrs.CPUKind)
	}
	return strings.Join(parts, ", ")
}

// differing descends from two objects with different forms to the first
// pair whose own children or attributes differ, so that the error names
// the level where the trees part.
func differing(a, b *Object, forms map[*Object]string) (*Object, *Object) {
	for childSummary(a) == childSummary(b) {
		next := false
		for i := range a.Children {
			if forms[a.Children[i]] != forms[b.Children[i]] {
				a, b, next = a.Children[i], b.Children[i], true
				break
			}
		}
		if !next {
			break
		}
	}
	return a, b
}
