package hwtree

import (
	"fmt"
	"io"
	"strings"

	"github.com/barriertune/barriertune/cpuset"
)

// WriteXML writes the tree as hwloc v2 XML, the form `lstopo --input FILE`
// reads. hwloc attaches NUMA nodes as memory children, never as parents of
// CPU objects: a NUMANode of this model is written as a memory child of its
// parent when their cpusets are equal, else of a Group that takes its place
// and holds its children. A tree without NUMA node gets one, P#0, on the
// Machine, since hwloc 2 requires one.
func (t *Topology) WriteXML(w io.Writer) error {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n<topology version=\"2.0\">\n")
	nodes := t.NUMANodes()
	// An object's nodeset: the NUMA nodes in its subtree and those attached
	// to it or to an ancestor (whose CPUs include its CPUs).
	numaSet := func(o *Object) cpuset.Set {
		if len(nodes) == 0 {
			return cpuset.Of(0)
		}
		var ns cpuset.Set
		add := func(n *Object) { ns = ns.Or(cpuset.Of(max(n.OSIndex, 0))) }
		var sub func(x *Object)
		sub = func(x *Object) {
			if x.Type == NUMANode {
				add(x)
			}
			for _, m := range x.Memory {
				add(m)
			}
			for _, c := range x.Children {
				sub(c)
			}
		}
		sub(o)
		for p := o.Parent; p != nil; p = p.Parent {
			if p.Type == NUMANode {
				add(p)
			}
			for _, m := range p.Memory {
				add(m)
			}
		}
		return ns
	}
	gp := 0
	var rec func(o *Object, depth int, memory []*Object)
	rec = func(o *Object, depth int, memory []*Object) {
		gp++
		ind := strings.Repeat("  ", depth)
		typ := o.Type.String()
		if o.Type == NUMANode { // a NUMANode in CPU position becomes a Group
			typ = "Group"
		}
		fmt.Fprintf(&b, "%s<object type=\"%s\"", ind, typ)
		if o.Type == Group && o.Attrs.Subtype != "" {
			fmt.Fprintf(&b, " subtype=\"%s\"", xmlEscape(o.Attrs.Subtype))
		}
		if o.OSIndex >= 0 && !o.Type.IsCache() && o.Type != NUMANode {
			fmt.Fprintf(&b, " os_index=\"%d\"", o.OSIndex)
		}
		mask := hwlocMask(o.CPUSet)
		ns := hwlocMask(numaSet(o))
		fmt.Fprintf(&b, " cpuset=\"%s\" complete_cpuset=\"%s\"", mask, hwlocMask(o.CPUSet.Or(o.complete)))
		if o.Type == Machine {
			fmt.Fprintf(&b, " allowed_cpuset=\"%s\"", mask)
		}
		fmt.Fprintf(&b, " nodeset=\"%s\" complete_nodeset=\"%s\"", ns, ns)
		if o.Type == Machine {
			fmt.Fprintf(&b, " allowed_nodeset=\"%s\"", ns)
		}
		fmt.Fprintf(&b, " gp_index=\"%d\"", gp)
		if o.Type.IsCache() {
			depthAttr, cacheType := 1, 0
			switch o.Type {
			case L3Cache:
				depthAttr = 3
			case L2Cache:
				depthAttr = 2
			case L1dCache:
				cacheType = 1
			case L1iCache:
				cacheType = 2
			}
			fmt.Fprintf(&b, " cache_size=\"%d\" depth=\"%d\" cache_linesize=\"%d\" cache_associativity=\"%d\" cache_type=\"%d\"",
				o.Attrs.CacheSize, depthAttr, o.Attrs.LineSize, o.Attrs.Ways, cacheType)
		}
		if o.Type == PU {
			b.WriteString("/>\n")
			return
		}
		b.WriteString(">\n")
		if o.Type == Package && o.Attrs.Model != "" {
			fmt.Fprintf(&b, "%s  <info name=\"CPUModel\" value=\"%s\"/>\n", ind, xmlEscape(o.Attrs.Model))
		}
		if o.Type == NUMANode {
			memory = append(memory, o)
		}
		memory = append(memory, o.Memory...)
		for _, c := range o.Children {
			if c.asMemory() || c.Type == NUMANode && c.CPUSet.Equal(o.CPUSet) && !c.CPUSet.IsEmpty() {
				memory = append(memory, c)
			}
		}
		for _, m := range memory {
			gp++
			ms, mc := hwlocMask(m.CPUSet), hwlocMask(m.CPUSet.Or(m.complete))
			idx := max(m.OSIndex, 0)
			nsm := hwlocMask(cpuset.Of(idx))
			fmt.Fprintf(&b, "%s  <object type=\"NUMANode\" os_index=\"%d\" cpuset=\"%s\" complete_cpuset=\"%s\" nodeset=\"%s\" complete_nodeset=\"%s\" gp_index=\"%d\"/>\n",
				ind, idx, ms, mc, nsm, nsm, gp)
		}
		for _, c := range o.Children {
			if c.asMemory() || c.Type == NUMANode && c.CPUSet.Equal(o.CPUSet) && !c.CPUSet.IsEmpty() {
				// Written as a memory child above; its children are ours.
				for _, g := range c.Children {
					rec(g, depth+1, nil)
				}
				continue
			}
			rec(c, depth+1, nil)
		}
		fmt.Fprintf(&b, "%s</object>\n", ind)
	}
	var rootMem []*Object
	if len(nodes) == 0 {
		rootMem = []*Object{{Type: NUMANode, OSIndex: 0, CPUSet: t.Root.CPUSet}}
	}
	rec(t.Root, 1, rootMem)
	b.WriteString("</topology>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// hwlocMask writes a set as hwloc prints bitmaps (hwloc_bitmap_snprintf):
// comma-separated 32-bit words, most significant first, each "0x%08x";
// zero words are left empty, except the last, written "0x0"; the empty set
// is "0x0". lstopo --cpuset and hwloc's XML use this form.
func hwlocMask(s cpuset.Set) string {
	m := s.Members()
	if len(m) == 0 {
		return "0x0"
	}
	words := make([]uint32, m[len(m)-1]/32+1)
	for _, c := range m {
		words[c/32] |= 1 << uint(c%32)
	}
	parts := make([]string, len(words))
	for i, w := range words {
		switch {
		case w != 0:
			parts[len(words)-1-i] = fmt.Sprintf("0x%08x", w)
		case i == 0:
			parts[len(words)-1-i] = "0x0"
		}
	}
	return strings.Join(parts, ",")
}

func xmlEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
