package hwtree

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/internal/text"
)

// syntheticNames maps hwloc's synthetic type names and abbreviations
// (lowercased) to types.
var syntheticNames = map[string]Type{
	"pack": Package, "package": Package, "socket": Package,
	"die":   Die,
	"group": Group,
	"numa":  NUMANode, "node": NUMANode, "numanode": NUMANode,
	"l3": L3Cache, "l3cache": L3Cache,
	"l2": L2Cache, "l2cache": L2Cache,
	"l1": L1dCache, "l1d": L1dCache, "l1cache": L1dCache, "l1dcache": L1dCache,
	"l1i": L1iCache, "l1icache": L1iCache,
	"core": Core,
	"pu":   PU,
}

const syntheticAccepted = "pack/package/socket, die, group, numa/node, l3/l3cache, l2/l2cache, l1/l1d/l1dcache, l1i/l1icache, core, pu; each as TYPE:COUNT, optionally with (size=N[K|M|G])"

// maxSyntheticPUs bounds the PUs a synthetic string may describe.
const maxSyntheticPUs = 1 << 16

// FromSynthetic builds a tree from an hwloc synthetic string such as
// "pack:2 l3:2 core:4 pu:2": each level names a type (hwloc's names and
// abbreviations, any case) and how many children every object of the level
// above has. Caches may carry a size, "l3:2(size=32M)". A string that does
// not end with a PU level gets "pu:1". "[NUMANode]" after a level gives each
// of its objects a NUMA node as memory (at the start, the Machine); a string
// without any NUMA node gets one for the whole machine, as hwloc does. PUs
// are numbered depth-first from 0; other objects get their logical index as
// OS index.
func FromSynthetic(s string) (*Topology, error) {
	tokens, err := syntheticTokens(s)
	if err != nil {
		return nil, err
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("synthetic %q: empty (want levels such as \"pack:2 core:4 pu:2\"; accepted: %s)", elide(s), syntheticAccepted)
	}
	type level struct {
		typ    Type
		count  int
		attrs  Attrs
		memory int // NUMA nodes attached to each object: "[NUMANode]" tokens after it
	}
	var levels []level
	rootMemory := 0
	total := 1
	memTotal := 0
	for _, tok := range tokens {
		if strings.HasPrefix(tok, "[") {
			// hwloc's memory children, "[NUMANode(memory=N)]", attached to
			// every object of the level before (the Machine at the start).
			inner, ok := strings.CutSuffix(tok[1:], "]")
			name, _, _ := strings.Cut(inner, "(")
			name = strings.ToLower(name)
			switch {
			case !ok:
				return nil, fmt.Errorf("synthetic %q: memory child %q lacks its closing ']'", elide(s), elide(tok))
			case name == "memcache":
				continue // memory-side caches are not modelled
			case syntheticNames[name] != NUMANode:
				return nil, fmt.Errorf("synthetic %q: memory child %q is not a NUMA node (want [NUMANode] or [NUMANode(memory=N)])", elide(s), elide(tok))
			}
			memTotal += total
			if memTotal > maxSyntheticPUs {
				return nil, fmt.Errorf("synthetic %q: more than %d NUMA nodes", elide(s), maxSyntheticPUs)
			}
			if len(levels) == 0 {
				rootMemory++
			} else {
				levels[len(levels)-1].memory++
			}
			continue
		}
		spec, attrText, _ := strings.Cut(tok, "(")
		name, countText, ok := strings.Cut(spec, ":")
		if !ok {
			return nil, fmt.Errorf("synthetic %q: level %q has no count (want TYPE:COUNT; accepted: %s)", elide(s), elide(tok), syntheticAccepted)
		}
		typ, known := syntheticNames[strings.ToLower(name)]
		if !known {
			if strings.EqualFold(name, "machine") {
				return nil, fmt.Errorf("synthetic %q: the Machine is implicit; start with the level below it", elide(s))
			}
			return nil, fmt.Errorf("synthetic %q: unknown type %q (accepted: %s)", elide(s), elide(name), syntheticAccepted)
		}
		count, err := strconv.Atoi(countText)
		if err != nil || count < 1 || count > maxSyntheticPUs {
			return nil, fmt.Errorf("synthetic %q: count %q of %s is not an integer in 1..%d", elide(s), elide(countText), elide(name), maxSyntheticPUs)
		}
		for _, l := range levels {
			if syntheticOrderBroken(l.typ, typ) {
				return nil, fmt.Errorf("synthetic %q: %s cannot be below %s (caches go from L3 down to L1, then Core, then PU; only Group may repeat)", elide(s), typ, l.typ)
			}
		}
		total *= count // both factors are at most maxSyntheticPUs: no overflow
		if total > maxSyntheticPUs {
			return nil, fmt.Errorf("synthetic %q: more than %d objects per level", elide(s), maxSyntheticPUs)
		}
		var attrs Attrs
		if attrText != "" {
			if attrs, err = syntheticAttrs(strings.TrimSuffix(attrText, ")"), typ); err != nil {
				return nil, fmt.Errorf("synthetic %q: level %q: %w", elide(s), elide(tok), err)
			}
		}
		levels = append(levels, level{typ: typ, count: count, attrs: attrs})
	}
	if len(levels) == 0 {
		return nil, fmt.Errorf("synthetic %q: no CPU level, only memory children (want levels such as \"pack:2 core:4 pu:2\"; accepted: %s)", elide(s), syntheticAccepted)
	}
	hasNUMA := rootMemory > 0
	for _, l := range levels {
		hasNUMA = hasNUMA || l.typ == NUMANode || l.memory > 0
	}
	if !hasNUMA {
		rootMemory = 1 // hwloc gives a machine without NUMA nodes one, P#0
	}
	if levels[len(levels)-1].typ != PU {
		levels = append(levels, level{typ: PU, count: 1})
	}
	// Each object holds CPU sets as wide as its highest CPU: the tree's
	// memory grows with objects times PUs. Refuse before building what
	// would not fit a small machine (256 packages of 256 cores took 1.5 GB
	// and 10 s).
	objects, perLevel := 1, 1
	for _, l := range levels {
		perLevel *= l.count
		objects += perLevel
	}
	pus := perLevel
	if est := syntheticBytes(objects, pus); est > maxSyntheticBytes {
		return nil, fmt.Errorf("synthetic %q: %d PUs in %d objects would take about %d MiB (each object holds CPU sets up to %d bits wide); at most %d MiB: give fewer PUs or fewer levels", elide(s), pus, objects, est>>20, pus, maxSyntheticBytes>>20)
	}
	counters := map[Type]int{}
	var build func(depth int) *Object
	build = func(depth int) *Object {
		l := levels[depth]
		o := &Object{Type: l.typ, OSIndex: counters[l.typ], Attrs: l.attrs}
		if l.typ.IsCache() {
			o.OSIndex = -1
		}
		counters[l.typ]++
		if depth+1 < len(levels) {
			for i := 0; i < levels[depth+1].count; i++ {
				o.Children = append(o.Children, build(depth+1))
			}
		}
		return o
	}
	root := &Object{Type: Machine, OSIndex: -1}
	for i := 0; i < levels[0].count; i++ {
		root.Children = append(root.Children, build(0))
	}
	t := &Topology{Root: root, Source: "synthetic:" + s}
	t.finalize()
	if err := t.validate(); err != nil {
		return nil, err
	}
	// Place the objects by cpuset inclusion as the XML and sysfs readers
	// do, so that a NUMA level lands where hwloc attaches it (a NUMA node
	// with its package's CPUs is that package's memory, not a level).
	var protos []proto
	nextNode := counters[NUMANode]
	t.Walk(func(o *Object) bool {
		if o.Type != Machine {
			protos = append(protos, proto{typ: o.Type, osIndex: o.OSIndex, complete: o.CPUSet, attrs: o.Attrs})
		}
		mem := rootMemory
		if o.Depth > 0 {
			mem = levels[o.Depth-1].memory
		}
		for range mem {
			protos = append(protos, proto{typ: NUMANode, osIndex: nextNode, complete: o.CPUSet})
			nextNode++
		}
		return true
	})
	b := &builder{}
	built, err := b.build(protos, t.Root.CPUSet, nil)
	if err != nil {
		return nil, fmt.Errorf("synthetic %q: %w", elide(s), err)
	}
	t = &Topology{Root: built, Source: "synthetic:" + s, Notes: b.notes}
	t.finalize()
	for _, n := range t.NUMANodes() {
		n.OSIndex = n.LogicalIndex // hwloc numbers synthetic NUMA nodes in logical order
	}
	return t, t.validate()
}

// elide shortens a value an error quotes (text.MaxValue bytes at most),
// so that a huge input is never echoed whole.
func elide(s string) string { return text.Elide(s, text.MaxValue) }

// syntheticOrderBroken reports whether below may not appear under above:
// caches, Core and PU keep their order; Package, Die, Group and NUMANode may
// sit anywhere above the Core (NUMA nodes inside an L3, groups above
// packages); caches may also sit below the Core; no type but Group repeats.
func syntheticOrderBroken(above, below Type) bool {
	if above == below {
		return below != Group
	}
	ordered := func(t Type) bool { return t.IsCache() || t == Core || t == PU }
	switch {
	case above == PU:
		return true // PUs are leaves
	case above.IsCache() && below.IsCache():
		return below < above // L3 above L2 above L1d above L1i
	case ordered(above) && ordered(below):
		return false // caches may sit below the Core (per-thread L1s), as hwloc allows
	case ordered(above):
		return above == Core // only caches and the PU below a Core
	}
	return false
}

// syntheticTokens splits on spaces outside parentheses.
func syntheticTokens(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("synthetic %q: unbalanced ')'", elide(s))
			}
		case (r == ' ' || r == '\t' || r == '\n') && depth == 0:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteRune(r)
	}
	if depth != 0 {
		return nil, fmt.Errorf("synthetic %q: unbalanced '('", elide(s))
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out, nil
}

func syntheticAttrs(text string, typ Type) (Attrs, error) {
	var a Attrs
	for _, kv := range strings.Fields(text) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return a, fmt.Errorf("attribute %q is not KEY=VALUE", elide(kv))
		}
		switch strings.ToLower(k) {
		case "size", "memory":
			if !typ.IsCache() {
				continue // memory sizes of NUMA nodes are not modelled
			}
			n, err := parseByteSize(v)
			if err != nil {
				return a, err
			}
			a.CacheSize = n
		case "kind":
			a.CPUKind = v
		default:
			// hwloc knows more attributes (indexes=, linesize=); they do
			// not change the CPU tree.
		}
	}
	return a, nil
}

// maxByteSize bounds cache and memory sizes (1 PiB), against overflow.
const maxByteSize = 1 << 50

// parseByteSize reads "32768", "32K", "32KB", "32KiB", "8M", "1G".
func parseByteSize(v string) (uint64, error) {
	s := strings.TrimSpace(v)
	upper := strings.ToUpper(s)
	mult := uint64(1)
	for _, u := range []struct {
		suffix string
		mult   uint64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(upper, u.suffix) {
			s, mult = s[:len(s)-len(u.suffix)], u.mult
			break
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > maxByteSize/mult {
		return 0, fmt.Errorf("size %q is not a byte count up to 1 PiB (want N, NK, NM or NG)", elide(v))
	}
	return n * mult, nil
}

// maxSyntheticBytes caps what a synthetic tree may take (syntheticBytes'
// estimate): 512 MiB, about 32,000 PUs with a core per PU; real machines of
// a few thousand PUs take tens of MiB.
const maxSyntheticBytes = 512 << 20

// syntheticBytes estimates a synthetic tree's memory: each object keeps
// about four CPU sets (its own and those building it), each on average
// half as wide as the tree's PUs, in 64-bit words.
func syntheticBytes(objects, pus int) int64 {
	return int64(objects) * int64(pus/128+1) * 8 * 4
}
