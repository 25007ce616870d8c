package hwtree

import (
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/text"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// jsonObject is the JSON form of an object: exactly what `barriertune topo
// --json` prints and FromJSON reads.
type jsonObject struct {
	Type     string        `json:"type"`
	OSIndex  *int          `json:"os_index"`
	Attrs    Attrs         `json:"attrs"`
	Children []*jsonObject `json:"children"`
	// Memory holds the NUMA nodes attached to the object (Object.Memory).
	Memory []*jsonObject `json:"memory,omitempty"`
	// HwlocXMLVersion is, on the root only, the hwloc XML format version
	// the tree was read from (Topology.FormatVersion).
	HwlocXMLVersion string `json:"hwloc_xml_version,omitempty"`
}

func toJSON(o *Object) *jsonObject {
	j := &jsonObject{Type: o.Type.String(), Attrs: o.Attrs, Children: []*jsonObject{}}
	if o.OSIndex >= 0 {
		idx := o.OSIndex
		j.OSIndex = &idx
	}
	for _, c := range o.Children {
		j.Children = append(j.Children, toJSON(c))
	}
	for _, m := range o.Memory {
		j.Memory = append(j.Memory, toJSON(m))
	}
	return j
}

// MarshalJSON writes the tree as nested objects {"type", "os_index" (a number
// or null), "attrs", "children"}, rooted at the Machine; "memory" lists an
// object's NUMA nodes where it has some, and the root carries
// "hwloc_xml_version" when the tree was read from hwloc XML.
func (t *Topology) MarshalJSON() ([]byte, error) {
	j := toJSON(t.Root)
	j.HwlocXMLVersion = t.FormatVersion
	return json.Marshal(j)
}

// FromJSON reads a tree in the form MarshalJSON writes, so any tree can be
// written by hand. PUs either all carry an os_index or none do (then they
// are numbered depth-first from 0).
func FromJSON(data []byte, source string) (*Topology, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var root jsonObject
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("%s: %w", source, jsonError(data, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: trailing data after the root object", source)
	}
	withIndex, without := 0, 0
	var conv func(j *jsonObject, path string) (*Object, error)
	conv = func(j *jsonObject, path string) (*Object, error) {
		if j == nil {
			return nil, fmt.Errorf("%s: null object", path)
		}
		typ, err := exactType(j.Type)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		o := &Object{Type: typ, OSIndex: -1, Attrs: j.Attrs}
		if j.OSIndex != nil {
			limit := maxOSIndex
			if typ == PU {
				limit = cpuset.MaxCPU
			}
			if *j.OSIndex < 0 || *j.OSIndex > limit {
				return nil, fmt.Errorf("%s: os_index %d of %s is out of range (want a number in 0..%d or null)", path, *j.OSIndex, typ, limit)
			}
			o.OSIndex = *j.OSIndex
		}
		if typ == PU {
			if j.OSIndex != nil {
				withIndex++
			} else {
				without++
			}
		}
		if j.HwlocXMLVersion != "" && path != "root" {
			return nil, fmt.Errorf("%s: hwloc_xml_version belongs on the root object only", path)
		}
		for i, c := range j.Children {
			child, err := conv(c, fmt.Sprintf("%s.children[%d]", path, i))
			if err != nil {
				return nil, err
			}
			o.Children = append(o.Children, child)
		}
		for i, m := range j.Memory {
			mp := fmt.Sprintf("%s.memory[%d]", path, i)
			if m == nil || m.Type != "NUMANode" || len(m.Children) > 0 || len(m.Memory) > 0 {
				return nil, fmt.Errorf("%s: memory holds NUMANode objects without children", mp)
			}
			node, err := conv(m, mp)
			if err != nil {
				return nil, err
			}
			o.Memory = append(o.Memory, node)
		}
		return o, nil
	}
	obj, err := conv(&root, "root")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if withIndex > 0 && without > 0 {
		return nil, fmt.Errorf("%s: %s an os_index and %d do not; give all or none", source, text.PluralOf(withIndex, "PU has", "PUs have"), without)
	}
	t := &Topology{Root: obj, Source: "json:" + source, FormatVersion: root.HwlocXMLVersion}
	if without > 0 {
		for i, p := range t.PUs() {
			p.OSIndex = i
		}
	}
	t.finalize()
	if err := t.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return t, nil
}

// FromJSONFile reads FromJSON's form from a file.
func FromJSONFile(path string) (*Topology, error) {
	data, err := readCapped(path)
	if err != nil {
		return nil, fmt.Errorf("topology file: %w", err)
	}
	return FromJSON(data, path)
}

// jsonError adds the line and column to JSON syntax and type errors.
func jsonError(data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 {
		return fmt.Errorf("invalid topology JSON: %w", err)
	}
	line, col := 1, 1
	for _, b := range data[:min(int(off), len(data))] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Errorf("invalid topology JSON at line %d, column %d: %w", line, col, err)
}
