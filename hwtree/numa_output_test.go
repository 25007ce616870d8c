package hwtree

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cpuset"
)

// numaShape lists every NUMA node as "P#n{cpus}@parent".
func numaShape(t *Topology) []string {
	var out []string
	for _, n := range t.NUMANodes() {
		parent := "-"
		if n.Parent != nil {
			parent = n.Parent.Type.String()
		}
		out = append(out, fmt.Sprintf("P#%d{%s}@%s", n.OSIndex, n.CPUSet, parent))
	}
	return out
}

func TestNUMANodesAsLstopoShowsThem(t *testing.T) {
	// lstopo shows every NUMA node; a node whose CPUs equal an
	// object's is that object's memory, listed first below it, and a
	// machine without node/ gets node P#0. We merged such nodes away, so
	// `topo` showed no NUMA node on most machines.
	noNode := writeSysfs(t, 2, map[string][]string{
		"core_siblings": {"3", "3"}, "physical_package_id": {"0", "0"},
		"thread_siblings": {"1", "2"}, "core_id": {"0", "1"},
	})
	topo, err := FromSysfs(noNode)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := numaShape(topo), []string{"P#0{0-1}@Package"}; !reflect.DeepEqual(got, want) {
		t.Errorf("without node/: NUMA nodes %v, want %v", got, want)
	}
	var b strings.Builder
	if err := topo.WriteListing(&b, false); err != nil {
		t.Fatal(err)
	}
	want := "Machine\n  Package L#0 (P#0)\n    NUMANode L#0 (P#0)\n    Core L#0 (P#0)\n      PU L#0 (P#0)\n    Core L#1 (P#1)\n      PU L#1 (P#1)\n"
	if b.String() != want {
		t.Errorf("listing:\n%s\nwant:\n%s", b.String(), want)
	}
	if got := topo.Root.Canonical(); got != "Machine(Package(Core(PU)*2))" {
		t.Errorf("memory must not enter the CPU tree's form: %s", got)
	}

	// A NUMA level holding CPU objects is listed as the Group hwloc makes.
	syn := mustSynthetic(t, "pack:1 numa:2 core:2 pu:1")
	b.Reset()
	if err := syn.WriteListing(&b, true); err != nil {
		t.Fatal(err)
	}
	want = "Machine cpuset=0x0000000f\n  Package L#0 (P#0) cpuset=0x0000000f\n" +
		"    Group0 L#0 cpuset=0x00000003\n      NUMANode L#0 (P#0) cpuset=0x00000003\n      Core L#0 (P#0) cpuset=0x00000001\n        PU L#0 (P#0) cpuset=0x00000001\n      Core L#1 (P#1) cpuset=0x00000002\n        PU L#1 (P#1) cpuset=0x00000002\n" +
		"    Group0 L#1 cpuset=0x0000000c\n      NUMANode L#1 (P#1) cpuset=0x0000000c\n      Core L#2 (P#2) cpuset=0x00000004\n        PU L#2 (P#2) cpuset=0x00000004\n      Core L#3 (P#3) cpuset=0x00000008\n        PU L#3 (P#3) cpuset=0x00000008\n"
	if b.String() != want {
		t.Errorf("listing with cpusets:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := topo.WriteListing(&b, true, NUMANode); err != nil {
		t.Fatal(err)
	}
	if want := "NUMANode L#0 (P#0) cpuset=0x00000003\n"; b.String() != want {
		t.Errorf("--only NUMANode: %q, want %q", b.String(), want)
	}
}

func TestDisallowedNUMANodeKeepsItsCPUs(t *testing.T) {
	// hwloc removes a NUMA node the cgroup's mems disallow but keeps the
	// allowed CPUs below it (4fake-4gr1nu1pu, 16amd64-8n2c-cpusets); we
	// kept the node as a level.
	root := writeSysfs(t, 4, map[string][]string{
		"core_siblings": {"f", "f", "f", "f"}, "physical_package_id": {"0", "0", "0", "0"},
		"thread_siblings": {"1", "2", "4", "8"}, "core_id": {"0", "1", "2", "3"},
	})
	for path, data := range map[string]string{
		"sys/devices/system/node/node0/cpumap": "3",
		"sys/devices/system/node/node1/cpumap": "c",
		"proc/self/cpuset":                     "/job",
		"proc/mounts":                          "cgroup /sys/fs/cgroup/cpuset cgroup rw,cpuset 0 0",
		"sys/fs/cgroup/cpuset/job/cpuset.cpus": "0-3",
		"sys/fs/cgroup/cpuset/job/cpuset.mems": "1",
		"sys/devices/system/cpu/online":        "0-3",
	} {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	topo, err := FromSysfs(root)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := numaShape(topo), []string{"P#1{2-3}@Package"}; !reflect.DeepEqual(got, want) {
		t.Errorf("NUMA nodes %v, want %v", got, want)
	}
	if got := topo.Root.Canonical(); got != "Machine(Package(Core(PU)*2,NUMANode(Core(PU)*2)))" {
		t.Errorf("tree %s", got)
	}
}

func TestSyntheticAsymmetryNamesTheLevel(t *testing.T) {
	topo := mustSynthetic(t, "pack:2 l3:2(size=1M) core:2 pu:1")
	if _, err := topo.Synthetic(); err != nil {
		t.Fatal(err)
	}
	// Remove CPU 7: the second package's second L3 has one core left.
	if err := topo.Restrict(topo.Root.CPUSet.AndNot(cpuset.Of(7))); err != nil {
		t.Fatal(err)
	}
	_, err := topo.Synthetic()
	if err == nil {
		t.Fatal("asymmetric tree got a synthetic string")
	}
	for _, want := range []string{"depth 1 (the Package level)", "Package L#0 and Package L#1 differ", "L3Cache L#1 holding 2 Core, size=1MiB but L3Cache L#3 1 Core, size=1MiB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	topo = mustSynthetic(t, "pack:1 l3:2(size=1M) core:2 pu:1")
	_ = topo.Restrict(topo.Root.CPUSet.AndNot(cpuset.Of(3)))
	if _, err := topo.Synthetic(); err == nil || !strings.Contains(err.Error(), "depth 2 (the L3Cache level): L3Cache L#0 and L3Cache L#1 differ, L3Cache L#0 holding 2 Core, size=1MiB but L3Cache L#1 1 Core, size=1MiB") {
		t.Errorf("error %v does not name depth 2 and the two L3 caches", err)
	}
}

func TestParseType(t *testing.T) {
	for in, want := range map[string]Type{"core": Core, "CORE": Core, "L3Cache": L3Cache, "l3": L3Cache, "pack": Package,
		"Socket": Package, "numa": NUMANode, "NUMANode": NUMANode, "pu": PU, "l1": L1dCache, "L1iCache": L1iCache, "machine": Machine} {
		got, err := ParseType(in)
		if err != nil || got != want {
			t.Errorf("ParseType(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseType("cpu"); err == nil || !strings.Contains(err.Error(), `"cpu"`) || !strings.Contains(err.Error(), "L3Cache") {
		t.Errorf("ParseType(cpu): %v", err)
	}
}

func TestJSONMemoryAndXMLVersion(t *testing.T) {
	x, err := fromXML([]byte(`<topology version="2.0"><object type="Machine" os_index="0" cpuset="0x00000003">`+
		`<object type="Package" os_index="0" cpuset="0x00000003"><object type="NUMANode" os_index="4" cpuset="0x00000003"/>`+
		`<object type="Core" os_index="0" cpuset="0x00000003"><object type="PU" os_index="0"/><object type="PU" os_index="1"/></object></object></object></topology>`), "v.xml")
	if err != nil {
		t.Fatal(err)
	}
	js, err := x.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"hwloc_xml_version":"2.0"`, `"memory":[{"type":"NUMANode","os_index":4`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("JSON lacks %s: %s", want, js)
		}
	}
	back, err := FromJSON(js, "back.json")
	if err != nil {
		t.Fatal(err)
	}
	if back.FormatVersion != "2.0" || !reflect.DeepEqual(numaShape(back), numaShape(x)) {
		t.Errorf("read back: version %q, NUMA %v; want 2.0, %v", back.FormatVersion, numaShape(back), numaShape(x))
	}
	for _, bad := range []string{
		`{"type":"Machine","children":[{"type":"PU","hwloc_xml_version":"2.0"}]}`,
		`{"type":"Machine","children":[{"type":"PU"}],"memory":[{"type":"Core"}]}`,
	} {
		if _, err := FromJSON([]byte(bad), "bad.json"); err == nil {
			t.Errorf("FromJSON accepted %s", bad)
		}
	}
}

func TestDieAboveItsL3IsKept(t *testing.T) {
	// hwloc keeps a Die whose CPUs equal its only child's (an L3 per die,
	// as in fakecpuid1f-64intel64-2p4d2n2c2t) and drops only a Die equal
	// to its Package; we dropped both, losing the Die level.
	four := []string{"f", "f", "f", "f"}
	files := map[string][]string{
		"core_siblings": four, "physical_package_id": {"0", "0", "0", "0"},
		"thread_siblings": {"1", "2", "4", "8"}, "core_id": {"0", "1", "2", "3"},
		"die_cpus": {"3", "3", "c", "c"}, "die_id": {"0", "0", "1", "1"},
		"cache/index3/level": {"3", "3", "3", "3"}, "cache/index3/type": {"Unified", "Unified", "Unified", "Unified"},
		"cache/index3/shared_cpu_map": {"3", "3", "c", "c"},
	}
	topo, err := FromSysfs(writeSysfs(t, 4, files))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := topo.Root.Canonical(), "Machine(Package(Die(L3Cache(Core(PU)*2))*2))"; got != want {
		t.Errorf("die per L3: %s, want %s", got, want)
	}
	files["die_cpus"] = four // one die per package: merged into it
	topo, err = FromSysfs(writeSysfs(t, 4, files))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := topo.Root.Canonical(), "Machine(Package(L3Cache(Core(PU)*2)*2))"; got != want {
		t.Errorf("die per package: %s, want %s", got, want)
	}
}

func TestSyntheticMemoryChildren(t *testing.T) {
	// hwloc's "[NUMANode]" after a level gives each of its objects a NUMA
	// node as memory; we skipped the tokens and so lost the nodes, and a
	// string without NUMA nodes gets one for the whole machine.
	for _, c := range []struct {
		in, numa, syn string
	}{
		{"pack:2 [numa] core:2 pu:1", "P#0{0-1}@Package P#1{2-3}@Package", "Package:2 [NUMANode] Core:2 PU:1"},
		{"[NUMANode(memory=1024)] pack:2 core:1 pu:1", "P#0{0-1}@Machine", "Package:2 Core:1 PU:1"},
		{"pack:2 core:1 pu:1", "P#0{0-1}@Machine", "Package:2 Core:1 PU:1"},
		{"pack:1 l3:2(size=1M) [MemCache(size=1G)] [numa] [numa] core:1 pu:1", "P#0{0}@L3Cache P#1{0}@L3Cache P#2{1}@L3Cache P#3{1}@L3Cache", ""},
		// Logical (and, in synthetic trees, OS) indexes as hwloc gives
		// them: the nodes below an object before its own.
		{"[numa] pack:2 [numa] core:1 pu:1", "P#0{0}@Package P#1{1}@Package P#2{0-1}@Machine", "[NUMANode] Package:2 [NUMANode] Core:1 PU:1"},
		// Per-thread L1 caches below the Core, which hwloc accepts.
		{"pack:1 core:2 l1d:2(size=32K) pu:1", "P#0{0-3}@Package", "Package:1 Core:2 L1dCache:2(size=32768) PU:1"},
	} {
		topo, err := FromSynthetic(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got := strings.Join(numaShape(topo), " "); got != c.numa {
			t.Errorf("%q: NUMA nodes %s, want %s", c.in, got, c.numa)
		}
		syn, err := topo.Synthetic()
		if c.syn != "" && (err != nil || syn != c.syn) {
			t.Errorf("%q: synthetic %q, %v; want %q", c.in, syn, err, c.syn)
		}
	}
	if _, err := FromSynthetic("pack:2 [core] pu:1"); err == nil || !strings.Contains(err.Error(), `"[core]" is not a NUMA node`) {
		t.Errorf("memory child [core]: %v", err)
	}
}

func TestGroupEqualToParentMerges(t *testing.T) {
	// lstopo drops a Group with its parent's CPUs from synthetic strings
	// and XML too ("pack:2 group:1 core:2" is "Package:2 Core:2"); we kept
	// it outside sysfs. A Die stays (lstopo shows "Package:2 Die:1").
	for in, want := range map[string]string{
		"pack:2 group:1 core:2 pu:1": "Machine(Package(Core(PU)*2)*2)",
		"group:2 pack:1 core:2 pu:1": "Machine(Package(Core(PU)*2)*2)",
		"pack:2 die:1 core:2 pu:1":   "Machine(Package(Die(Core(PU)*2))*2)",
		"group:2 pack:2 core:2 pu:1": "Machine(Group(Package(Core(PU)*2)*2)*2)",
	} {
		if got := mustSynthetic(t, in).Root.Canonical(); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}

func TestHwlocMaskFormat(t *testing.T) {
	// lstopo --cpuset and hwloc's XML print zero words empty, the last one
	// as "0x0"; we printed every word in full.
	for set, want := range map[string]string{
		"":      "0x0",
		"0-3":   "0x0000000f",
		"40":    "0x00000100,0x0",
		"0,64":  "0x00000001,,0x00000001",
		"96":    "0x00000001,,,0x0",
		"31-32": "0x00000001,0x80000000",
	} {
		s, err := cpuset.ParseList(set)
		if err != nil {
			t.Fatal(err)
		}
		if got := hwlocMask(s); got != want {
			t.Errorf("hwlocMask(%s) = %s, want %s", set, got, want)
		}
		back, err := parseHwlocMask(want)
		if err != nil || !back.Equal(s) {
			t.Errorf("parseHwlocMask(%s) = %s, %v; want %s", want, back, err, set)
		}
	}
}

func TestMemoryHolderAsHwloc(t *testing.T) {
	// hwloc attaches a node to the highest object with its CPUs other than
	// the Machine: the single Core of a machine without packages (as on
	// 2ps3-2t), not the Machine.
	oneCore := writeSysfs(t, 2, map[string][]string{"thread_siblings": {"3", "3"}, "core_id": {"0", "0"}})
	topo, err := FromSysfs(oneCore)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := numaShape(topo), []string{"P#0{0-1}@Core"}; !reflect.DeepEqual(got, want) {
		t.Errorf("one core: NUMA nodes %v, want %v", got, want)
	}
	// Nodes a restriction leaves without CPUs stay listed in the Group
	// hwloc made for them, as lstopo --restrict lists them.
	syn := mustSynthetic(t, "pack:2 numa:2 core:2 pu:1")
	if err := syn.Restrict(cpuset.Range(0, 3)); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := syn.WriteListing(&b, false); err != nil {
		t.Fatal(err)
	}
	if want := "  Package L#1 (P#1)\n    Group0 L#2\n      NUMANode L#2 (P#2)\n    Group0 L#3\n      NUMANode L#3 (P#3)\n"; !strings.HasSuffix(b.String(), want) {
		t.Errorf("restricted listing:\n%s\nwant it to end with\n%s", b.String(), want)
	}
}

func TestRemoveCachesAsLstopo(t *testing.T) {
	// lstopo --no-caches orders the children the caches leave by cpuset
	// (cores an L2 grouped as 0,2 and 1,3 become 0,1,2,3), and a NUMA node
	// that was an L3's memory becomes a level (hwloc's Group) when no
	// other object has its CPUs. We kept the cache order and moved the
	// node to the L3's parent, with the wrong CPUs.
	topo, err := FromJSON([]byte(`{"type":"Machine","children":[{"type":"Package","os_index":0,"children":[
		{"type":"L2Cache","children":[{"type":"Core","os_index":0,"children":[{"type":"PU","os_index":0}]},{"type":"Core","os_index":2,"children":[{"type":"PU","os_index":2}]}]},
		{"type":"L2Cache","children":[{"type":"Core","os_index":1,"children":[{"type":"PU","os_index":1}]},{"type":"Core","os_index":3,"children":[{"type":"PU","os_index":3}]}]}]}]}`), "l2.json")
	if err != nil {
		t.Fatal(err)
	}
	topo.RemoveCaches()
	if got := topo.CPUs(); !reflect.DeepEqual(got, []int{0, 1, 2, 3}) {
		t.Errorf("PUs after --no-caches in order %v, want [0 1 2 3]", got)
	}
	topo, err = fromXML([]byte(`<topology version="2.0"><object type="Machine" os_index="0" cpuset="0x0000000f">`+
		`<object type="Package" os_index="0" cpuset="0x0000000f">`+
		`<object type="L3Cache" cpuset="0x00000003" cache_size="1024" depth="3" cache_type="0"><object type="NUMANode" os_index="0" cpuset="0x00000003"/>`+
		`<object type="Core" os_index="0" cpuset="0x00000001"><object type="PU" os_index="0"/></object><object type="Core" os_index="1" cpuset="0x00000002"><object type="PU" os_index="1"/></object></object>`+
		`<object type="L3Cache" cpuset="0x0000000c" cache_size="1024" depth="3" cache_type="0"><object type="NUMANode" os_index="1" cpuset="0x0000000c"/>`+
		`<object type="Core" os_index="2" cpuset="0x00000004"><object type="PU" os_index="2"/></object><object type="Core" os_index="3" cpuset="0x00000008"><object type="PU" os_index="3"/></object></object>`+
		`</object></object></topology>`), "snc.xml")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := numaShape(topo), []string{"P#0{0-1}@L3Cache", "P#1{2-3}@L3Cache"}; !reflect.DeepEqual(got, want) {
		t.Errorf("NUMA nodes %v, want %v", got, want)
	}
	topo.RemoveCaches()
	if got, want := numaShape(topo), []string{"P#0{0-1}@Package", "P#1{2-3}@Package"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after RemoveCaches: NUMA nodes %v, want %v", got, want)
	}
	if got := topo.Root.Canonical(); got != "Machine(Package(NUMANode(Core(PU)*2)*2))" {
		t.Errorf("after RemoveCaches: %s", got)
	}
}
