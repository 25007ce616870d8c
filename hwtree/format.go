package hwtree

import (
	"fmt"
	"io"
	"strings"
)

// WriteListing writes the tree in the style of lstopo's console output: one
// object a line, indented by depth, with its logical index (L#), OS index
// (P#) and attributes.
func (t *Topology) WriteListing(w io.Writer) error {
	var err error
	t.Walk(func(o *Object) bool {
		if err == nil {
			_, err = fmt.Fprintf(w, "%s%s\n", strings.Repeat("  ", o.Depth), o.Label())
		}
		return err == nil
	})
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
		attrs = append(attrs, "size="+FormatSize(o.Attrs.CacheSize))
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

// FormatSize prints a byte count as lstopo does: the largest binary unit
// that divides it exactly ("32KiB", "16MiB"), or bytes.
func FormatSize(b uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for b >= 1024 && b%1024 == 0 && i < len(units)-1 {
		b /= 1024
		i++
	}
	return fmt.Sprintf("%d%s", b, units[i])
}
