package hwtree

import (
	"fmt"
	"io"
	"strings"
)

// WriteListing writes the tree in the style of lstopo's verbose console
// output (lstopo -v): one object a line, indented by depth, with its logical
// index (L#), OS index (P#) and attributes. NUMA nodes are shown as lstopo
// shows them: an object's memory (Object.Memory) is listed first below it,
// and a NUMANode level is listed as the Group that hwloc creates for it
// ("Group0 L#n"), with the NUMANode as its memory.
//
// lstopo's console filters that only change what is printed are its
// arguments (its tree filters are Topology methods: RemoveCaches,
// Restrict): cpusets appends each object's cpuset in hwloc's form
// (" cpuset=0x0000000f"), as lstopo --cpuset does; only, when given,
// lists just the objects of these types, one a line in logical order
// without indentation, as lstopo --only does (type after type).
func (t *Topology) WriteListing(w io.Writer, cpusets bool, only ...Type) error {
	var b strings.Builder
	line := func(depth int, label string, o *Object) {
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString(label)
		if cpusets {
			b.WriteString(" cpuset=" + hwlocMask(o.CPUSet))
		}
		b.WriteByte('\n')
	}
	if len(only) > 0 {
		for _, typ := range only {
			objs := t.Objects(typ)
			if typ == NUMANode {
				objs = t.NUMANodes()
			}
			for _, o := range objs {
				line(0, o.Label(), o)
			}
		}
	} else {
		groups := 0
		t.Walk(func(o *Object) bool {
			depth := o.Depth
			if o.Type == NUMANode && !o.asMemory() {
				line(depth, fmt.Sprintf("Group0 L#%d", groups), o)
				groups++
				line(depth+1, o.Label(), o)
			} else {
				line(depth, o.Label(), o)
			}
			for _, m := range o.Memory {
				line(depth+1, m.Label(), m)
			}
			return true
		})
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Label is the object's one-line description, e.g.
// "L2Cache L#1 (size=512KiB linesize=64)" or "PU L#3 (P#3)".
func (o *Object) Label() string {
	name := o.Type.String()
	if o.Type == Group && o.Attrs.Subtype != "" {
		name += "(" + o.Attrs.Subtype + ")"
	}
	var attrs []string
	if o.OSIndex >= 0 && !o.Type.IsCache() {
		attrs = append(attrs, fmt.Sprintf("P#%d", o.OSIndex))
	}
	if o.Attrs.CacheSize > 0 {
		attrs = append(attrs, "size="+formatSize(o.Attrs.CacheSize))
	}
	if o.Attrs.LineSize > 0 {
		attrs = append(attrs, fmt.Sprintf("linesize=%d", o.Attrs.LineSize))
	}
	if o.Attrs.Ways != 0 {
		attrs = append(attrs, fmt.Sprintf("ways=%d", o.Attrs.Ways))
	}
	if o.Attrs.CPUKind != "" {
		attrs = append(attrs, "kind="+o.Attrs.CPUKind)
	}
	if o.Attrs.Model != "" {
		attrs = append(attrs, fmt.Sprintf("CPUModel=%q", o.Attrs.Model))
	}
	s := name
	if o.Type != Machine {
		s += fmt.Sprintf(" L#%d", o.LogicalIndex)
	}
	if len(attrs) > 0 {
		s += " (" + strings.Join(attrs, " ") + ")"
	}
	return s
}

// formatSize prints a byte count as lstopo does: the largest binary unit
// that divides it exactly ("32KiB", "16MiB"), or bytes.
func formatSize(b uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for b >= 1024 && b%1024 == 0 && i < len(units)-1 {
		b /= 1024
		i++
	}
	return fmt.Sprintf("%d%s", b, units[i])
}
