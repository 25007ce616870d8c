package hwtree

import (
	"fmt"
	"math/bits"

	"github.com/barriertune/barriertune/cpuset"
)

// The caches of an x86 machine whose sysfs has no cpu*/cache directories
// (some virtual machines) come from CPUID, decoded as hwloc's x86 backend
// does: leaf 4 on Intel and Zhaoxin, leaf 0x8000001D on AMD and Hygon with
// the topology extensions (else leaves 0x80000005 and 0x80000006), each
// cache's sharing count (EAX[25:14]+1) turned into a cache id from the CPU's
// APIC ID, and CPUs sharing a cache when their package ids and cache ids are
// equal. Decoding is a pure function of register values (decodeX86); only
// the live reader runs the instruction, on a thread pinned to each CPU.

// cpuidQuery answers CPUID for one logical CPU: EAX=leaf, ECX=sub in, the
// four registers EAX, EBX, ECX, EDX out.
type cpuidQuery func(leaf, sub uint32) [4]uint32

// x86Vendor is the vendor string of leaf 0, reduced to the families whose
// leaves differ.
type x86Vendor int

const (
	vendorOther x86Vendor = iota
	vendorIntel
	vendorAMD
	vendorHygon
	vendorZhaoxin
)

// x86Proc is what one logical CPU says about itself.
type x86Proc struct {
	apicID, packageID uint32
	caches            []x86Cache
}

// x86Cache is one cache a CPU reports.
type x86Cache struct {
	typ     Type   // L1dCache, L1iCache, L2Cache or L3Cache
	level   int    // 1..3
	sharing uint32 // the threads sharing it, as reported (EAX[25:14]+1)
	cacheID uint32 // equal for the CPUs of one package that share it
	attrs   Attrs
}

// cacheKind is the cache type field of leaves 4 and 0x8000001D.
const (
	cacheData        = 1
	cacheInstruction = 2
	cacheUnified     = 3
)

// fls is hwloc_flsl: the 1-based position of the highest set bit, 0 for 0.
func fls(x uint32) uint32 { return uint32(bits.Len32(x)) }

func vendorOf(b, c, d uint32) x86Vendor {
	var v [12]byte
	for i, r := range []uint32{b, d, c} {
		v[4*i], v[4*i+1], v[4*i+2], v[4*i+3] = byte(r), byte(r>>8), byte(r>>16), byte(r>>24)
	}
	switch string(v[:]) {
	case "GenuineIntel":
		return vendorIntel
	case "AuthenticAMD":
		return vendorAMD
	case "HygonGenuine":
		return vendorHygon
	case "CentaurHauls", "  Shanghai  ":
		return vendorZhaoxin
	}
	return vendorOther
}

// decodeX86 reads one CPU's APIC ID, package id and caches through q. ok is
// false when the CPU reports no leaf 1 (nothing to decode).
func decodeX86(q cpuidQuery) (p x86Proc, ok bool) {
	l0 := q(0, 0)
	highest := l0[0]
	vendor := vendorOf(l0[1], l0[2], l0[3])
	if highest < 1 {
		return p, false
	}
	amdLike := vendor == vendorAMD || vendor == vendorHygon
	intelLike := vendor == vendorIntel || vendor == vendorZhaoxin
	l1 := q(1, 0)
	p.apicID = l1[1] >> 24
	legacyMax := uint32(1)
	if l1[3]&(1<<28) != 0 { // HTT: EBX[23:16] is the logical processor count
		legacyMax = 1 << fls(((l1[1]>>16)&0xff)-1)
	}
	p.packageID = p.apicID / legacyMax
	family := (l1[0] >> 8) & 0xf
	model := (l1[0] >> 4) & 0xf
	if family == 0xf && vendor != vendorZhaoxin && vendor != vendorOther {
		family += (l1[0] >> 20) & 0xff
	}
	if (vendor == vendorIntel && (family == 6 || family >= 0xf)) || (amdLike && (l1[0]>>8)&0xf == 0xf) ||
		(vendor == vendorZhaoxin && (family == 6 || family == 7)) {
		model += ((l1[0] >> 16) & 0xf) << 4
	}
	x2apic := l1[2]&(1<<21) != 0
	highestExt := q(0x80000000, 0)[0]
	topoext := false
	if !intelLike && highestExt >= 0x80000001 {
		topoext = q(0x80000001, 0)[2]&(1<<22) != 0
	}

	// The package: AMD's core count (0x80000008), then the topology
	// extensions' APIC ID, then the x2APIC leaves.
	if !intelLike && highestExt >= 0x80000008 && !x2apic {
		c := q(0x80000008, 0)[2]
		maxCores := (c & 0xff) + 1
		if size := (c >> 12) & 0xf; size != 0 {
			maxCores = 1 << size
		}
		p.packageID = p.apicID / maxCores
	}
	if !intelLike && topoext {
		p.apicID = q(0x8000001e, 0)[0]
	}
	leaf := uint32(0)
	switch {
	case vendor == vendorIntel && highest >= 0x1f:
		leaf = 0x1f
	case (vendor == vendorIntel || vendor == vendorAMD || vendor == vendorZhaoxin) && highest >= 0xb && x2apic:
		leaf = 0xb
	}
	if leaf != 0 {
		shift, apic, levels := uint32(0), uint32(0), 0
		for sub := uint32(0); sub < 32; sub++ {
			r := q(leaf, sub)
			if r[0] == 0 && r[1] == 0 {
				break
			}
			shift, apic = r[0]&0x1f, r[3]
			levels++
		}
		if levels > 0 {
			p.apicID, p.packageID = apic, apic>>shift
		}
	}

	// The caches.
	switch {
	case !intelLike && topoext:
		p.caches = decodeDeterministic(q, 0x8000001d, false)
	case !intelLike && highestExt >= 0x80000006:
		p.caches = decodeLegacyAMD(q, legacyMax)
	}
	if !amdLike && highest >= 4 {
		knl := vendor == vendorIntel && family == 6 && (model == 0x57 || model == 0x85)
		p.caches = append(p.caches, decodeDeterministic(q, 4, knl)...)
	}

	// Cache ids, with hwloc's vendor rules.
	for i := range p.caches {
		c := &p.caches[i]
		c.cacheID = p.apicID / c.sharing
		switch {
		case vendor == vendorIntel:
			// The sharing count rounded up to a power of two: the APIC-ID
			// bits below it name the thread inside the cache.
			c.cacheID = p.apicID &^ (1<<fls(c.sharing-1) - 1)
		case (vendor == vendorAMD && family == 0x17 || vendor == vendorHygon && family == 0x18) &&
			c.level == 3 && c.sharing == 6:
			// 24-core parts enable 6 of the 8 APIC ids of each L3.
			c.cacheID = p.apicID / 8
		case vendor == vendorAMD && (family == 0x10 && model == 9 && c.sharing >= 8 && (c.attrs.Ways == -1 || c.attrs.Ways%2 == 0) ||
			family == 0x15 && (model == 1 || model == 2) && c.sharing == 6) && c.level == 3:
			// Magny-Cours, Bulldozer and Piledriver: two L3 halves per
			// package, APIC ids laid out AAAAAABBBBBB.. per package.
			if family == 0x10 {
				if c.sharing == 16 {
					c.sharing = 12
				}
				c.sharing /= 2
				c.attrs.CacheSize /= 2
				if c.attrs.Ways != -1 {
					c.attrs.Ways /= 2
				}
			}
			c.cacheID = (p.apicID%legacyMax)/c.sharing + 2*(p.apicID/legacyMax)
		}
	}
	return p, true
}

// decodeDeterministic reads the deterministic cache parameters (leaf 4, or
// AMD's 0x8000001D with the same layout) until the null type; knl stops at
// level 3 (Knights Landing reports a bogus L3).
func decodeDeterministic(q cpuidQuery, leaf uint32, knl bool) []x86Cache {
	var out []x86Cache
	for sub := uint32(0); sub < 64; sub++ {
		r := q(leaf, sub)
		kind := r[0] & 0x1f
		if kind == 0 {
			break
		}
		level := int((r[0] >> 5) & 7)
		if knl && level == 3 {
			break
		}
		line := uint64(r[1]&0xfff) + 1
		parts := uint64((r[1]>>12)&0x3ff) + 1
		ways := uint64((r[1]>>22)&0x3ff) + 1
		sets := uint64(r[2]) + 1
		c := x86Cache{
			level:   level,
			sharing: ((r[0] >> 14) & 0xfff) + 1,
			attrs:   Attrs{CacheSize: line * parts * ways * sets, LineSize: int(line), Ways: int(ways)},
		}
		if r[0]&(1<<9) != 0 {
			c.attrs.Ways = -1
		}
		if t, ok := cacheObjectType(level, kind); ok {
			c.typ = t
			out = append(out, c)
		}
	}
	return out
}

// legacyWays maps the 4-bit associativity of leaf 0x80000006 to ways.
var legacyWays = [16]int{0, 1, 2, 0, 4, 0, 8, 0, 16, 0, 32, 48, 64, 96, 128, -1}

// decodeLegacyAMD reads AMD's leaves 0x80000005 (private L1d, L1i) and
// 0x80000006 (private L2, L3 shared by the package's legacy count).
func decodeLegacyAMD(q cpuidQuery, legacyMax uint32) []x86Cache {
	var out []x86Cache
	add := func(level, kind int, sharing, reg uint32) {
		var size uint64
		switch level {
		case 1:
			size = uint64(reg>>24) << 10
		case 2:
			size = uint64(reg>>16) << 10
		case 3:
			size = uint64(reg>>18) << 19
		}
		if size == 0 {
			return
		}
		c := x86Cache{level: level, sharing: sharing, attrs: Attrs{CacheSize: size, LineSize: int(reg & 0xff)}}
		if level == 1 {
			c.attrs.Ways = int((reg >> 16) & 0xff)
			if c.attrs.Ways == 0xff {
				c.attrs.Ways = -1
			}
		} else {
			c.attrs.Ways = legacyWays[(reg>>12)&0xf]
		}
		if t, ok := cacheObjectType(level, uint32(kind)); ok {
			c.typ = t
			out = append(out, c)
		}
	}
	l5 := q(0x80000005, 0)
	add(1, cacheData, 1, l5[2])
	add(1, cacheInstruction, 1, l5[3])
	l6 := q(0x80000006, 0)
	if l6[2]&0xf000 != 0 {
		add(2, cacheUnified, 1, l6[2])
	}
	if l6[3]&0xf000 != 0 {
		add(3, cacheUnified, legacyMax, l6[3])
	}
	return out
}

// cacheObjectType is the tree's type for a cache level and CPUID type, as
// the sysfs reader maps them (a unified L1 is hwloc's L1Cache, here
// L1dCache; split L2/L3 and L4 have no type in the model).
func cacheObjectType(level int, kind uint32) (Type, bool) {
	switch {
	case level == 1 && (kind == cacheData || kind == cacheUnified):
		return L1dCache, true
	case level == 1 && kind == cacheInstruction:
		return L1iCache, true
	case level == 2 && kind == cacheUnified:
		return L2Cache, true
	case level == 3 && kind == cacheUnified:
		return L3Cache, true
	}
	return 0, false
}

// x86CacheProtos groups the CPUs' caches into tree objects: for each cache
// type, CPUs whose package ids and cache ids are equal share one cache, its
// attributes those the first CPU reports. procs holds the CPUs that could be
// asked. As hwloc does, nothing is made when two CPUs report the same APIC
// ID (a hypervisor that hides it): the note says so.
func x86CacheProtos(procs map[int]x86Proc) ([]proto, string) {
	if len(procs) == 0 {
		return nil, ""
	}
	cpus := make([]int, 0, len(procs))
	seen := map[uint32]int{}
	for c, p := range procs {
		cpus = append(cpus, c)
		if other, dup := seen[p.apicID]; dup {
			return nil, fmt.Sprintf("CPUID caches not used: CPUs %d and %d report the same APIC ID %d", min(c, other), max(c, other), p.apicID)
		}
		seen[p.apicID] = c
	}
	set := cpuset.Of(cpus...)
	var out []proto
	for _, t := range []Type{L3Cache, L2Cache, L1dCache, L1iCache} {
		type key struct{ pkg, id uint32 }
		groups := map[key]*proto{}
		var order []key
		for _, c := range set.Members() {
			p := procs[c]
			for _, ch := range p.caches {
				if ch.typ != t {
					continue
				}
				k := key{p.packageID, ch.cacheID}
				g, ok := groups[k]
				if !ok {
					g = &proto{typ: t, osIndex: -1, attrs: ch.attrs}
					groups[k] = g
					order = append(order, k)
				}
				g.complete = g.complete.Or(cpuset.Of(c))
				break
			}
		}
		for _, k := range order {
			out = append(out, *groups[k])
		}
	}
	return out, ""
}
