package hwtree

import (
	"strings"
	"testing"
)

func TestXMLSplitCachesAreNotUnified(t *testing.T) {
	// hwloc v2 XML writes a level-2 data cache (Itanium's L2d
	// beside its L2i) as type "L2Cache" with cache_type="1"; lstopo shows
	// it as L2dCache, not L2Cache, and so must we: cache_type 1 (data) and
	// 2 (instruction) at levels 2 and 3 are split caches, which the model
	// leaves out with their children kept, as sysfs discovery does.
	for _, c := range []struct{ xml, want string }{
		{`<topology version="2.0"><object type="Machine" os_index="0" cpuset="0x00000003">` +
			`<object type="L3Cache" cpuset="0x00000003" cache_size="1048576" depth="3" cache_type="0">` +
			`<object type="L2Cache" cpuset="0x00000003" cache_size="262144" depth="2" cache_type="1">` +
			`<object type="L2iCache" cpuset="0x00000003" cache_size="262144" depth="2" cache_type="2">` +
			`<object type="L1Cache" cpuset="0x00000003" cache_size="16384" depth="1" cache_type="1">` +
			`<object type="Core" os_index="0" cpuset="0x00000003"><object type="PU" os_index="0"/><object type="PU" os_index="1"/>` +
			`</object></object></object></object></object></object></topology>`, "L3Cache>L1dCache>Core"},
		{`<topology version="2.0"><object type="Machine" os_index="0" cpuset="0x00000001">` +
			`<object type="L3Cache" cpuset="0x00000001" cache_size="1048576" depth="3" cache_type="1">` +
			`<object type="L2Cache" cpuset="0x00000001" cache_size="262144" depth="2" cache_type="0">` +
			`<object type="Core" os_index="0"><object type="PU" os_index="0"/></object></object></object></object></topology>`, "L2Cache>Core"},
		// hwloc 1.x: Cache objects with depth and cache_type.
		{`<topology><object type="Machine" os_index="0" cpuset="0x00000001">` +
			`<object type="Cache" cpuset="0x00000001" cache_size="262144" depth="2" cache_type="1">` +
			`<object type="Cache" cpuset="0x00000001" cache_size="16384" depth="1" cache_type="2">` +
			`<object type="Core" os_index="0"><object type="PU" os_index="0"/></object></object></object></object></topology>`, "L1iCache>Core"},
	} {
		topo, err := fromXML([]byte(c.xml), "split.xml")
		if err != nil {
			t.Errorf("fromXML: %v\n%s", err, c.xml)
			continue
		}
		var chain []string
		topo.Walk(func(o *Object) bool {
			if o.Type != Machine && o.Type != PU {
				chain = append(chain, o.Type.String())
			}
			return o.Type != Core
		})
		if got := strings.Join(chain, ">"); got != c.want {
			t.Errorf("levels %s, want %s\n%s", got, c.want, c.xml)
		}
	}
}

func TestXMLPackageWithOnlyAllowedMemory(t *testing.T) {
	// hwloc's export of a cgroup-restricted machine keeps a
	// package whose CPUs are all disallowed when its memory is allowed:
	// cpuset="0x0", the real CPUs in complete_cpuset, a NUMA node below.
	// lstopo lists that package (empty); we dropped it.
	x := `<topology version="2.0"><object type="Machine" os_index="0" cpuset="0x00000003" complete_cpuset="0x0000000f">` +
		`<object type="Package" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003">` +
		`<object type="Core" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003"><object type="PU" os_index="0" cpuset="0x00000001"/><object type="PU" os_index="1" cpuset="0x00000002"/></object></object>` +
		`<object type="Package" os_index="1" cpuset="0x0" complete_cpuset="0x0000000c">` +
		`<object type="NUMANode" os_index="1" cpuset="0x0" complete_cpuset="0x0000000c" local_memory="1024"/></object>` +
		`<object type="Package" os_index="2" cpuset="0x0" complete_cpuset="0x00000030"/>` +
		`</object></topology>`
	topo, err := fromXML([]byte(x), "cgroup.xml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	topo.Walk(func(o *Object) bool {
		got = append(got, o.Type.String()+"{"+o.CPUSet.String()+"}")
		return true
	})
	want := "Machine{0-1} Package{0-1} Core{0-1} PU{0} PU{1} Package{} NUMANode{}"
	if strings.Join(got, " ") != want {
		t.Errorf("tree %s\nwant %s", strings.Join(got, " "), want)
	}
}

func TestXMLVersion1Die(t *testing.T) {
	// hwloc's v1 export writes a Die as a Group with info Type=Die, which
	// hwloc reads back as a Die; we read a Group and merged it away.
	x := `<topology><object type="Machine" os_index="0" cpuset="0x00000003"><object type="Socket" os_index="0" cpuset="0x00000003">` +
		`<object type="Group" os_index="0" cpuset="0x00000001"><info name="Type" value="Die"/>` +
		`<object type="Cache" cpuset="0x00000001" cache_size="1024" depth="3" cache_type="0"><object type="Core" os_index="0" cpuset="0x00000001"><object type="PU" os_index="0" cpuset="0x00000001"/></object></object></object>` +
		`<object type="Group" os_index="1" cpuset="0x00000002"><info name="Type" value="Die"/>` +
		`<object type="Cache" cpuset="0x00000002" cache_size="1024" depth="3" cache_type="0"><object type="Core" os_index="1" cpuset="0x00000002"><object type="PU" os_index="1" cpuset="0x00000002"/></object></object></object>` +
		`</object></object></topology>`
	topo, err := fromXML([]byte(x), "v1die.xml")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := topo.Root.Canonical(), "Machine(Package(Die(L3Cache[1KiB](Core(PU)))*2))"; got != want {
		t.Errorf("tree %s, want %s", got, want)
	}
}

func TestXMLWritesCompleteCPUSet(t *testing.T) {
	// A package kept only for its allowed memory has no allowed CPU; we
	// wrote complete_cpuset="0x0" for it, and hwloc (and we) then lost its
	// place. Its complete cpuset, all CPUs included, is written now.
	in := `<topology version="2.0"><object type="Machine" os_index="0" cpuset="0x00000003" complete_cpuset="0x0000000f">` +
		`<object type="Package" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003">` +
		`<object type="Core" os_index="0" cpuset="0x00000003"><object type="PU" os_index="0" cpuset="0x00000001"/><object type="PU" os_index="1" cpuset="0x00000002"/></object></object>` +
		`<object type="Package" os_index="1" cpuset="0x0" complete_cpuset="0x0000000c">` +
		`<object type="NUMANode" os_index="1" cpuset="0x0" complete_cpuset="0x0000000c"/></object></object></topology>`
	topo, err := fromXML([]byte(in), "cgroup.xml")
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	if err := topo.WriteXML(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{`<object type="Machine" cpuset="0x00000003" complete_cpuset="0x0000000f"`, `<object type="Package" os_index="1" cpuset="0x0" complete_cpuset="0x0000000c"`} {
		if !strings.Contains(out, want) {
			t.Errorf("written XML lacks %s:\n%s", want, out)
		}
	}
	back, err := fromXML([]byte(out), "ours.xml")
	if err != nil {
		t.Fatal(err)
	}
	shapeOf := func(x *Topology) string {
		var s []string
		x.Walk(func(o *Object) bool {
			s = append(s, o.Type.String()+"{"+o.CPUSet.String()+"}")
			return true
		})
		return strings.Join(s, " ")
	}
	if got, want := shapeOf(back), shapeOf(topo); got != want {
		t.Errorf("read back %s, want %s", got, want)
	}
}
