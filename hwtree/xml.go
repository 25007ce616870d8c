package hwtree

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/cpuset"
)

type xmlInfo struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type xmlObject struct {
	Type      string      `xml:"type,attr"`
	Subtype   string      `xml:"subtype,attr"`
	OSIndex   string      `xml:"os_index,attr"`
	CPUSet    string      `xml:"cpuset,attr"`
	Complete  string      `xml:"complete_cpuset,attr"`
	CacheSize string      `xml:"cache_size,attr"`
	LineSize  string      `xml:"cache_linesize,attr"`
	Assoc     string      `xml:"cache_associativity,attr"`
	CacheType string      `xml:"cache_type,attr"`
	Depth     string      `xml:"depth,attr"`
	Infos     []xmlInfo   `xml:"info"`
	Children  []xmlObject `xml:"object"`
	// underEqualNUMA marks a Group whose parent is a NUMANode with the same
	// cpuset: hwloc 1.x XML's form of a memory-holding Group.
	underEqualNUMA bool `xml:"-"`
}

type xmlCPUKind struct {
	CPUSet string    `xml:"cpuset,attr"`
	Infos  []xmlInfo `xml:"info"`
}

type xmlTopology struct {
	XMLName  xml.Name     `xml:"topology"`
	Version  string       `xml:"version,attr"`
	Objects  []xmlObject  `xml:"object"`
	CPUKinds []xmlCPUKind `xml:"cpukinds>cpukind"`
}

// fromXML is FromXMLFile's reader of the file's bytes; source names them
// in errors.
func fromXML(data []byte, source string) (*Topology, error) {
	var doc xmlTopology
	capped := &xmlCaps{d: xml.NewDecoder(bytes.NewReader(data))}
	if err := xml.NewTokenDecoder(capped).Decode(&doc); err != nil {
		if capped.err != nil {
			return nil, fmt.Errorf("%s: %w", source, capped.err)
		}
		return nil, fmt.Errorf("%s: invalid hwloc XML (want the output of `lstopo file.xml`): %w", source, err)
	}
	if len(doc.Objects) != 1 || (doc.Objects[0].Type != "Machine" && doc.Objects[0].Type != "System") {
		return nil, fmt.Errorf("%s: hwloc XML must hold one root <object type=\"Machine\">", source)
	}
	r := &xmlReader{}
	extent, err := r.walk(&doc.Objects[0], true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	pus := r.pus.Set()
	if pus.IsEmpty() {
		return nil, fmt.Errorf("%s: the XML has no PU object", source)
	}
	kinds := map[int]string{}
	for _, k := range doc.CPUKinds {
		set, err := parseHwlocMask(k.CPUSet)
		if err != nil {
			return nil, fmt.Errorf("%s: cpukind: %w", source, err)
		}
		name := infoValue(k.Infos, "CoreType")
		for _, c := range set.And(pus).Members() {
			kinds[c] = name
		}
	}
	for i := range r.protos {
		p := &r.protos[i]
		if p.typ == PU || p.typ == Core {
			if k := kinds[p.complete.First()]; k != "" {
				p.attrs.CPUKind = k
			}
		}
	}
	// Objects are placed by their complete cpusets (disallowed CPUs
	// included) and restricted to the PUs the file holds, as sysfs
	// discovery does: a package whose CPUs a cgroup disallows but whose
	// memory it allows stays, holding its NUMA node.
	b := &builder{extent: extent}
	root, err := b.build(r.protos, pus, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	version := strings.TrimSpace(doc.Version)
	if version == "" {
		version = "1.x"
	}
	t := &Topology{Root: root, Source: "xml:" + source, Notes: append(r.notes, b.notes...), FormatVersion: version}
	t.finalize()
	return t, t.validate()
}

// FromXMLFile reads a tree from an hwloc XML file as `lstopo file.xml`
// writes it (v2; v1's Socket and Cache objects are read too), of at most
// 64 MiB. I/O and Misc objects are skipped; cache types the model lacks
// (L4, split L2/L3) are skipped with their children kept. The CPU objects
// are then placed by cpuset inclusion, as sysfs discovery places them.
func FromXMLFile(path string) (*Topology, error) {
	data, err := readCapped(path)
	if err != nil {
		return nil, fmt.Errorf("hwloc XML file: %w", err)
	}
	return fromXML(data, path)
}

// Caps on hwloc XML, checked while the file is decoded, so that a huge or
// deeply nested file is refused at the first object over the cap instead
// of after building a tree of it: the largest machines hwloc describes have
// tens of thousands of PUs, a few objects per PU and trees about 15 deep.
const (
	// maxXMLObjects bounds the <object> elements of an hwloc XML file.
	maxXMLObjects = 1 << 20
	// maxXMLDepth bounds how deeply elements nest.
	maxXMLDepth = 256
)

// xmlCaps counts the elements its decoder yields and stops the decoding at
// the first one over maxXMLObjects, maxXMLDepth or cpuset.MaxCPU+1 PUs.
type xmlCaps struct {
	d                  *xml.Decoder
	objects, pus, deep int
	err                error // why it stopped, when a cap did
}

// Token implements xml.TokenReader.
func (c *xmlCaps) Token() (xml.Token, error) {
	tok, err := c.d.Token()
	if err != nil {
		return tok, err
	}
	switch t := tok.(type) {
	case xml.StartElement:
		c.deep++
		if c.deep > maxXMLDepth {
			c.err = fmt.Errorf("elements nested more than %d deep (line %d); hwloc XML nests about 15", maxXMLDepth, c.line())
		}
		if t.Name.Local == "object" {
			c.objects++
			if c.objects > maxXMLObjects {
				c.err = fmt.Errorf("more than %d objects (line %d), the most an hwloc XML file may hold", maxXMLObjects, c.line())
			}
			for _, a := range t.Attr {
				if a.Name.Local == "type" && a.Value == "PU" {
					c.pus++
				}
			}
			if c.pus > cpuset.MaxCPU+1 {
				c.err = fmt.Errorf("more than %d PU objects (line %d); CPU indexes go up to %d", cpuset.MaxCPU+1, c.line(), cpuset.MaxCPU)
			}
		}
	case xml.EndElement:
		c.deep--
	}
	if c.err != nil {
		return nil, c.err
	}
	return tok, nil
}

func (c *xmlCaps) line() int {
	line, _ := c.d.InputPos()
	return line
}

type xmlReader struct {
	protos []proto
	pus    cpuset.Builder
	notes  []string
}

// walk converts o and its subtree, returning its complete cpuset: the PUs
// below it and, where the file gives one, its complete_cpuset (CPUs the
// file leaves out as disallowed).
func (r *xmlReader) walk(o *xmlObject, isRoot bool) (cpuset.Set, error) {
	var below cpuset.Set
	var children cpuset.Builder // the children's sets, OR-ed into below after the loop
	typ, keep, descend := xmlType(o)
	if !descend {
		return below, nil
	}
	if typ != PU && strings.TrimSpace(o.Complete) != "" {
		set, err := parseHwlocMask(o.Complete)
		if err != nil {
			return below, fmt.Errorf("%s object: complete_cpuset: %w", elide(o.Type), err)
		}
		below = set
	}
	if !keep && !isRoot && !xmlKnownType(o.Type) {
		r.notes = append(r.notes, fmt.Sprintf("XML object of unknown type %q skipped; its children kept", elide(o.Type)))
	}
	for i := range o.Children {
		c := &o.Children[i]
		if (o.Type == "NUMANode" || o.Type == "Node") && o.CPUSet != "" && strings.TrimSpace(c.CPUSet) == strings.TrimSpace(o.CPUSet) {
			c.underEqualNUMA = true
		}
		s, err := r.walk(c, false)
		if err != nil {
			return below, err
		}
		children.Or(s)
	}
	if len(o.Children) > 0 {
		below = below.Or(children.Set())
	}
	if typ == Group && o.Subtype == "" && (o.underEqualNUMA || holdsEqualNUMANode(o)) {
		// hwloc's memory-holding Group (a NUMA node whose CPUs no other
		// object covers exactly): the NUMANode stands for it, as in sysfs.
		keep = false
	}
	if isRoot || !keep {
		return below, nil
	}
	os := -1
	if o.OSIndex != "" {
		v, err := strconv.Atoi(o.OSIndex)
		if err != nil || v < 0 || v > maxOSIndex {
			return below, fmt.Errorf("%s object: os_index %q is not a number in 0..%d", elide(o.Type), elide(o.OSIndex), maxOSIndex)
		}
		os = v
	}
	switch typ {
	case PU:
		if os < 0 || os > cpuset.MaxCPU {
			return below, fmt.Errorf("PU object: os_index %q is not a CPU index in 0..%d", elide(o.OSIndex), cpuset.MaxCPU)
		}
		if r.pus.Has(os) {
			return below, fmt.Errorf("PU P#%d appears twice", os)
		}
		below = cpuset.Of(os)
		r.pus.Add(os)
	case NUMANode:
		// v2 NUMA nodes are memory children: their cpuset says where they are.
		set, err := parseHwlocMask(o.CPUSet)
		if err != nil {
			return below, fmt.Errorf("NUMANode P#%d: %w", os, err)
		}
		below = below.Or(set)
		if below.IsEmpty() {
			// A CPU-less node (GPU memory, CXL): noted, not placed, as
			// sysfs discovery does; it must not sink below a PU.
			r.notes = append(r.notes, fmt.Sprintf("NUMANode P#%d has no CPU; not placed in the CPU tree", os))
			return below, nil
		}
	}
	if typ.IsCache() {
		os = -1
	}
	a := Attrs{Subtype: o.Subtype, Model: infoValue(o.Infos, "CPUModel")}
	if typ.IsCache() {
		a.CacheSize, _ = strconv.ParseUint(o.CacheSize, 10, 64)
		a.LineSize, _ = strconv.Atoi(o.LineSize)
		a.Ways, _ = strconv.Atoi(o.Assoc)
	}
	if typ != Group {
		a.Subtype = ""
	}
	r.protos = append(r.protos, proto{typ: typ, osIndex: os, complete: below, attrs: a})
	return below, nil
}

// xmlType maps an XML object type; keep says whether it becomes an object,
// descend whether its children are read.
func xmlType(o *xmlObject) (t Type, keep, descend bool) {
	switch o.Type {
	case "Machine", "System":
		return Machine, true, true
	case "Package", "Socket":
		return Package, true, true
	case "Die":
		return Die, true, true
	case "Group":
		if infoValue(o.Infos, "Type") == "Die" { // hwloc 1.x XML has no Die type
			return Die, true, true
		}
		return Group, true, true
	case "NUMANode", "Node":
		return NUMANode, true, true
	case "L3Cache", "L2Cache":
		// hwloc writes a level-2/3 data (1) or instruction (2) cache as
		// L2Cache/L3Cache with that cache_type; lstopo shows it as
		// L2dCache/L2iCache, a split cache the model has no type for.
		if ct := strings.TrimSpace(o.CacheType); ct == "1" || ct == "2" {
			return 0, false, true
		}
		if o.Type == "L3Cache" {
			return L3Cache, true, true
		}
		return L2Cache, true, true
	case "L1Cache", "L1dCache":
		return L1dCache, true, true
	case "L1iCache":
		return L1iCache, true, true
	case "Core":
		return Core, true, true
	case "PU":
		return PU, true, true
	case "Cache": // hwloc v1: depth and cache_type say which
		switch o.Depth + "/" + o.CacheType {
		case "1/0", "1/1":
			return L1dCache, true, true
		case "1/2":
			return L1iCache, true, true
		case "2/0":
			return L2Cache, true, true
		case "3/0":
			return L3Cache, true, true
		}
		return 0, false, true
	case "L4Cache", "L5Cache", "L2dCache", "L2iCache", "L3dCache", "L3iCache", "MemCache":
		return 0, false, true
	case "Misc", "Bridge", "PCIDev", "OSDev":
		return 0, false, false // I/O and Misc objects never hold CPUs
	}
	// A type this reader does not know (a newer hwloc's): skip the object
	// itself but keep the CPU objects below it.
	return 0, false, true
}

// xmlKnownType reports whether xmlType knows the XML type name.
func xmlKnownType(name string) bool {
	switch name {
	case "Machine", "System", "Package", "Socket", "Die", "Group", "NUMANode", "Node",
		"L3Cache", "L2Cache", "L1Cache", "L1dCache", "L1iCache", "Core", "PU", "Cache",
		"L4Cache", "L5Cache", "L2dCache", "L2iCache", "L3dCache", "L3iCache", "MemCache",
		"Misc", "Bridge", "PCIDev", "OSDev":
		return true
	}
	return false
}

func infoValue(infos []xmlInfo, name string) string {
	for _, i := range infos {
		if i.Name == name {
			return i.Value
		}
	}
	return ""
}

// maxMaskWords is how many 32-bit words hold CPUs 0..cpuset.MaxCPU.
const maxMaskWords = (cpuset.MaxCPU + 1) / 32

// parseHwlocMask reads hwloc's cpuset attribute: comma-separated 32-bit
// words, each "0x"-prefixed, most significant first; a leading "0xf...f"
// word means "and every higher CPU", which the PU set bounds anyway.
func parseHwlocMask(s string) (cpuset.Set, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return cpuset.Set{}, nil
	}
	if n := strings.Count(s, ",") + 1; n > maxMaskWords+1 {
		return cpuset.Set{}, fmt.Errorf("cpuset %q has %d words; CPUs 0..%d need at most %d", elide(s), n, cpuset.MaxCPU, maxMaskWords)
	}
	words := strings.Split(s, ",")
	if strings.EqualFold(words[0], "0xf...f") {
		words = words[1:]
	}
	for i, w := range words {
		w = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(w), "0x"), "0X")
		if w == "" {
			w = "0"
		}
		words[i] = w
	}
	return cpuset.ParseMask(strings.Join(words, ","))
}

// holdsEqualNUMANode reports whether o has a NUMANode child with o's cpuset.
func holdsEqualNUMANode(o *xmlObject) bool {
	for _, c := range o.Children {
		if (c.Type == "NUMANode" || c.Type == "Node") && strings.TrimSpace(c.CPUSet) == strings.TrimSpace(o.CPUSet) && c.CPUSet != "" {
			return true
		}
	}
	return false
}
