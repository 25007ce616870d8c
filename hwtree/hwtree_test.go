package hwtree

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cpuset"
)

// shape summarises a tree: per type, the PU sets of its objects in order.
func shape(t *Topology) map[string][]string {
	out := map[string][]string{}
	t.Walk(func(o *Object) bool {
		out[o.Type.String()] = append(out[o.Type.String()], o.CPUSet.String())
		return true
	})
	return out
}

func mustSynthetic(t *testing.T, s string) *Topology {
	t.Helper()
	topo, err := FromSynthetic(s)
	if err != nil {
		t.Fatalf("FromSynthetic(%q): %v", s, err)
	}
	return topo
}

func TestSysfsFixtureOfflineNoNUMA(t *testing.T) {
	topo, err := FromSysfs("testdata/sysfs/offline-nonuma")
	if err != nil {
		t.Fatal(err)
	}
	got := shape(topo)
	want := map[string][]string{
		"Machine":  {"0-2"},
		"Package":  {"0-2"},
		"L3Cache":  {"0-2"},
		"L2Cache":  {"0-1", "2"}, // empty shared_cpu_map: the core's mask
		"L1dCache": {"0-1", "2"},
		"L1iCache": {"0-1", "2"},
		"Core":     {"0-1", "2"},
		"PU":       {"0", "1", "2"}, // cpu3 is offline
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("shape = %v, want %v", got, want)
	}
	if topo.Symmetric() {
		t.Error("a tree with one 2-thread core and one 1-thread core is not symmetric")
	}
	if _, err := topo.Synthetic(); err == nil {
		t.Error("Synthetic() of an asymmetric tree must fail")
	}
	l3 := topo.Objects(L3Cache)[0]
	if l3.Attrs.CacheSize != 8<<20 {
		t.Errorf("L3 size = %d, want %d", l3.Attrs.CacheSize, 8<<20)
	}
	if l1 := topo.Objects(L1dCache)[0]; l1.Attrs.LineSize != 64 || l1.Attrs.CacheSize != 32<<10 {
		t.Errorf("L1d attrs = %+v", l1.Attrs)
	}
}

func TestSysfsFixtureCgroup(t *testing.T) {
	topo, err := FromSysfs("testdata/sysfs/cgroup-2pkg")
	if err != nil {
		t.Fatal(err)
	}
	got := shape(topo)
	want := map[string][]string{
		"Machine":  {"1-3"},
		"Package":  {"1", "2-3"}, // the cgroup allows CPUs 1-3
		"L3Cache":  {"1", "2-3"},
		"L2Cache":  {"1", "2", "3"},
		"L1dCache": {"1", "2", "3"},
		"Core":     {"1", "2", "3"},
		"PU":       {"1", "2", "3"},
	}
	// Die and NUMANode equal Package here and are merged away.
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("shape = %v, want %v", got, want)
	}
	if got := topo.Objects(L2Cache)[0].Attrs.CacheSize; got != 0 {
		t.Errorf("empty size file must read as unknown (0), got %d", got)
	}
	if pk := topo.Objects(Package); pk[0].OSIndex != 0 || pk[1].OSIndex != 1 {
		t.Errorf("package OS indexes = %d,%d, want 0,1", pk[0].OSIndex, pk[1].OSIndex)
	}
	found := false
	for _, n := range topo.Notes {
		found = found || strings.Contains(n, "cgroup cpuset /job")
	}
	if !found {
		t.Errorf("notes %v do not mention the cgroup restriction", topo.Notes)
	}
}

func TestSysfsErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ root, want string }{
		{filepath.Join(dir, "missing"), "no such file"},
		{dir, "has no sys/devices/system/cpu"},
		{file, "not a directory"},
	} {
		_, err := FromSysfs(c.root)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.root) {
			t.Errorf("FromSysfs(%q) error = %v, want one naming the path and saying %q", c.root, err, c.want)
		}
	}
}

func TestLiveSysfs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("live discovery reads Linux sysfs")
	}
	topo, err := FromSysfs("/")
	if err != nil {
		t.Fatal(err)
	}
	allowed, _, err := liveAllowed()
	if err != nil {
		t.Fatal(err)
	}
	if !topo.Allowed().SubsetOf(allowed) || topo.Allowed().IsEmpty() {
		t.Errorf("tree PUs %s are not a non-empty subset of the affinity %s", topo.Allowed(), allowed)
	}
	if len(topo.PUs()) != topo.Allowed().Len() {
		t.Errorf("%d PU objects for %d allowed CPUs", len(topo.PUs()), topo.Allowed().Len())
	}
}

func TestSyntheticParse(t *testing.T) {
	topo := mustSynthetic(t, "pack:2 l3:2 core:4 pu:2")
	counts := map[Type]int{}
	topo.Walk(func(o *Object) bool { counts[o.Type]++; return true })
	want := map[Type]int{Machine: 1, Package: 2, L3Cache: 4, Core: 16, PU: 32}
	if !reflect.DeepEqual(counts, want) {
		t.Fatalf("counts = %v, want %v", counts, want)
	}
	// PUs are numbered depth-first: the second core's PUs are 2 and 3.
	core1 := topo.Objects(Core)[1]
	if core1.CPUSet.String() != "2-3" {
		t.Errorf("Core L#1 cpuset = %s, want 2-3", core1.CPUSet)
	}
	if got := topo.Objects(L3Cache)[3].CPUSet.String(); got != "24-31" {
		t.Errorf("L3 L#3 cpuset = %s, want 24-31", got)
	}
	// Aliases and case, sizes with units, hwloc's bracketed memory children.
	a := mustSynthetic(t, "Socket:2 [NUMANode(memory=1024)] L3Cache:1(size=32MiB) NODE:1 l1d:2 Core:1 PU:2")
	// NODE:1 below an L3 has the L3's CPUs: it is that cache's memory, as
	// hwloc attaches it, and no level of the CPU tree (sysfs and XML agree).
	if a.Objects(L3Cache)[0].Attrs.CacheSize != 32<<20 || len(a.Objects(NUMANode)) != 0 || len(a.Objects(L1dCache)) != 4 {
		t.Errorf("alias parse: %v", shape(a))
	}
	if n := len(mustSynthetic(t, "core:3").PUs()); n != 3 {
		t.Errorf("a string without a PU level gets pu:1: %d PUs, want 3", n)
	}
}

func TestSyntheticErrors(t *testing.T) {
	for s, want := range map[string]string{
		"":                 "empty",
		"pack2 core:2":     "no count",
		"pack:x pu:2":      "not an integer in 1..65536",
		"pack:0 pu:2":      "not an integer in 1..65536",
		"cpu:2 pu:2":       `unknown type "cpu"`,
		"core:2 pack:2":    "cannot be below",
		"l2:2 l3:2":        "cannot be below",
		"core:2 core:2":    "cannot be below",
		"machine:1 pu:2":   "implicit",
		"pack:2(size pu:2": "unbalanced",
		"l3:2(size=big)":   "not a byte count",
		"pu:70000":         "not an integer in 1..65536",
		"pack:257 pu:256":  "more than",
		// These panicked or tried to allocate it all.
		"[x]":                                     "is not a NUMA node",
		"[NUMANode(memory=1)]":                    "no CPU level",
		"core:4611686018427387904":                "not an integer in 1..65536",
		"pack:65536 core:65536 pu:65536":          "more than",
		"core:99999999999999999999999":            "not an integer in 1..65536",
		"l3:1(size=99999999999999999999G) core:2": "not a byte count",
		"l3:1(size=17179869184G) core:2":          "not a byte count",
		// 1.5 GB and 10 s before the memory estimate; 32,768 PUs just over.
		"pack:256 core:256": "65536 PUs in 131329 objects would take about 2056 MiB",
		"pack:2 core:16384": "at most 512 MiB",
		"group:2 group:2 group:2 group:2 group:2 group:2 group:2 group:2 group:2 group:2 group:2 group:2 group:2 group:2 group:2 group:2": "would take about",
	} {
		_, err := FromSynthetic(s)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("FromSynthetic(%q) = %v, want an error saying %q", s, err, want)
		}
	}
}

func TestSyntheticRoundTrip(t *testing.T) {
	for _, s := range []string{
		"pack:2 l3:2 core:4 pu:2",
		"pack:1 l3:1(size=33554432) l2:2(size=1048576) l1d:1(size=49152) core:1 pu:1",
		"group:2 group:2 pack:2 core:3 pu:1",
		"pu:1",
	} {
		topo := mustSynthetic(t, s)
		if !topo.Symmetric() {
			t.Errorf("%q: synthetic trees are symmetric", s)
			continue
		}
		back, err := topo.Synthetic()
		if err != nil {
			t.Fatal(err)
		}
		again := mustSynthetic(t, back)
		if again.Root.Canonical() != topo.Root.Canonical() || !reflect.DeepEqual(again.CPUs(), topo.CPUs()) {
			t.Errorf("%q -> %q reads back as a different tree", s, back)
		}
	}
	if got, _ := mustSynthetic(t, "pack:2 l3:2 core:4 pu:2").Synthetic(); got != "Package:2 L3Cache:2 Core:4 PU:2" {
		t.Errorf("Synthetic() = %q", got)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	sources := []*Topology{mustSynthetic(t, "pack:2 l3:2(size=8M) core:4 pu:2")}
	for _, dir := range []string{"testdata/sysfs/offline-nonuma", "testdata/sysfs/cgroup-2pkg"} {
		topo, err := FromSysfs(dir)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, topo)
	}
	for _, topo := range sources {
		data, err := json.Marshal(topo)
		if err != nil {
			t.Fatal(err)
		}
		back, err := FromJSON(data, "round-trip")
		if err != nil {
			t.Fatalf("%s: %v\n%s", topo.Source, err, data)
		}
		data2, _ := json.Marshal(back)
		if string(data) != string(data2) {
			t.Errorf("%s: JSON differs after a round trip:\n%s\n%s", topo.Source, data, data2)
		}
		if !reflect.DeepEqual(shape(back), shape(topo)) || back.Root.Canonical() != topo.Root.Canonical() {
			t.Errorf("%s: tree differs after a round trip", topo.Source)
		}
	}
}

func TestJSONFormAndErrors(t *testing.T) {
	data, _ := json.Marshal(mustSynthetic(t, "core:1 pu:1"))
	want := `{"type":"Machine","os_index":null,"attrs":{},"children":[{"type":"Core","os_index":0,"attrs":{},"children":[{"type":"PU","os_index":0,"attrs":{},"children":[]}],` +
		`"memory":[{"type":"NUMANode","os_index":0,"attrs":{},"children":[]}]}]}`
	if string(data) != want {
		t.Errorf("JSON = %s\nwant   %s", data, want)
	}
	// Hand-written trees may leave every PU's os_index out.
	hand := `{"type":"Machine","children":[{"type":"Package","children":[{"type":"PU"},{"type":"PU"}]},{"type":"Package","children":[{"type":"PU"}]}]}`
	topo, err := FromJSON([]byte(hand), "hand")
	if err != nil {
		t.Fatal(err)
	}
	if got := topo.CPUs(); !reflect.DeepEqual(got, []int{0, 1, 2}) {
		t.Errorf("hand-written PUs numbered %v, want [0 1 2]", got)
	}
	for text, want := range map[string]string{
		`{"type":"Machine","children":[`:  "invalid topology JSON",
		`{"type":"Machine",}`:             "line 1, column",
		`{"type":"Socket","children":[]}`: `unknown object type "Socket"`,
		`{"type":"Machine","children":[{"type":"PU","os_index":1},{"type":"PU"}]}`:              "give all or none",
		`{"type":"Machine","children":[{"type":"PU","os_index":1},{"type":"PU","os_index":1}]}`: "appears twice",
		`{"type":"Machine","children":[{"type":"Core","children":[]}]}`:                         "no PU",
		`{"type":"Machine","colour":"red"}`:                                                     "unknown field",
		`{"type":"Package","children":[{"type":"PU"}]}`:                                         "root object must be a Machine",
		`{"type":"Machine","children":[{"type":"PU","children":[{"type":"PU"}]}]}`:              "must be leaves",
		// An os_index of 10^12 used to allocate 10^12 bits.
		`{"type":"Machine","children":[{"type":"PU","os_index":1000000000000}]}`: "out of range",
		`{"type":"Machine","children":[{"type":"PU","os_index":65536}]}`:         "0..65535",
	} {
		_, err := FromJSON([]byte(text), "bad.json")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "bad.json") {
			t.Errorf("FromJSON(%s) = %v, want an error naming bad.json and saying %q", text, err, want)
		}
	}
}

func TestXMLMatchesSynthetic(t *testing.T) {
	// testdata/synthetic-pack2.xml is what hwloc 2.9's
	// `lstopo --input "pack:2 l3:1(size=33554432) core:2 pu:2" file.xml` wrote.
	x, err := FromXMLFile("testdata/synthetic-pack2.xml")
	if err != nil {
		t.Fatal(err)
	}
	s := mustSynthetic(t, "pack:2 l3:1(size=33554432) core:2 pu:2")
	if x.Root.Canonical() != s.Root.Canonical() || !reflect.DeepEqual(shape(x), shape(s)) {
		t.Errorf("XML tree %s differs from synthetic %s", x.Root.Canonical(), s.Root.Canonical())
	}
}

func TestXMLLiveVM(t *testing.T) {
	// testdata/epyc-2core-vm.xml is `lstopo file.xml` on the 2-core EPYC VM
	// this project is developed on (with its PCI devices).
	x, err := FromXMLFile("testdata/epyc-2core-vm.xml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"Machine": {"0-1"}, "Package": {"0-1"}, "L3Cache": {"0-1"},
		"L2Cache": {"0", "1"}, "L1dCache": {"0", "1"}, "L1iCache": {"0", "1"},
		"Core": {"0", "1"}, "PU": {"0", "1"},
	}
	if got := shape(x); !reflect.DeepEqual(got, want) {
		t.Errorf("shape = %v, want %v", got, want)
	}
	if x.FormatVersion != "2.0" {
		t.Errorf("FormatVersion = %q, want 2.0 (the file's <topology version>)", x.FormatVersion)
	}
	if got := x.Objects(Package)[0].Attrs.Model; !strings.Contains(got, "AMD EPYC") {
		t.Errorf("model = %q", got)
	}
	if got, _ := x.Synthetic(); got != "Package:1 L3Cache:1(size=33554432) L2Cache:2(size=1048576) L1dCache:1(size=49152) L1iCache:1(size=32768) Core:1 PU:1" {
		t.Errorf("synthetic = %q", got)
	}
}

func TestXMLErrors(t *testing.T) {
	for text, want := range map[string]string{
		`<topology><object type="Machine">`:                     "invalid hwloc XML",
		`<nottopology/>`:                                        "invalid hwloc XML",
		`<topology><object type="Package"/></topology>`:         "one root",
		`<topology><object type="Machine"></object></topology>`: "no PU",
		`<topology><object type="Machine"><object type="PU" os_index="x"/></object></topology>`: "os_index",
		// An os_index of 10^12 must be refused before allocating.
		`<topology><object type="Machine"><object type="PU" os_index="1000000000000"/></object></topology>`:                                              "not a number in 0..2147483647",
		`<topology><object type="Machine"><object type="PU" os_index="65536"/></object></topology>`:                                                      "not a CPU index in 0..65535",
		`<topology><object type="Machine"><object type="Package" os_index="1000000000000"><object type="PU" os_index="0"/></object></object></topology>`: "0..2147483647",
	} {
		_, err := fromXML([]byte(text), "bad.xml")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("fromXML(%s) = %v, want %q", text, err, want)
		}
	}
}

func TestCanonicalForms(t *testing.T) {
	a := mustSynthetic(t, "pack:2 l3:2 core:4 pu:2")
	forms := a.CanonicalForms()
	pk := a.Objects(Package)
	if forms[pk[0]] != forms[pk[1]] {
		t.Error("the two packages of a synthetic tree must share a form")
	}
	if got := a.Root.Canonical(); got != "Machine(Package(L3Cache(Core(PU*2)*4)*2)*2)" {
		t.Errorf("canonical = %s", got)
	}
	// Child order does not matter; cache size and CPU kind do.
	j1 := `{"type":"Machine","children":[{"type":"Core","children":[{"type":"PU"}]},{"type":"Core","children":[{"type":"PU"},{"type":"PU"}]}]}`
	j2 := `{"type":"Machine","children":[{"type":"Core","children":[{"type":"PU"},{"type":"PU"}]},{"type":"Core","children":[{"type":"PU"}]}]}`
	t1, _ := FromJSON([]byte(j1), "j1")
	t2, _ := FromJSON([]byte(j2), "j2")
	if t1.Root.Canonical() != t2.Root.Canonical() || t1.CanonicalHash() != t2.CanonicalHash() {
		t.Error("isomorphic trees must share a canonical form and hash")
	}
	if mustSynthetic(t, "l2:2(size=1M) pu:1").Root.Canonical() == mustSynthetic(t, "l2:2(size=2M) pu:1").Root.Canonical() {
		t.Error("cache size must enter the canonical form")
	}
	k := `{"type":"Machine","children":[{"type":"Core","attrs":{"cpu_kind":"IntelCore"},"children":[{"type":"PU"}]},{"type":"Core","attrs":{"cpu_kind":"IntelAtom"},"children":[{"type":"PU"}]}]}`
	tk, _ := FromJSON([]byte(k), "k")
	if tk.Symmetric() {
		t.Error("cores of different kinds are not symmetric")
	}
}

// TestCanonicalIsomorphism checks canonical forms against brute force: for
// random small trees, a tree and a random reshuffle of its children share a
// form, and two trees share a form only if their sorted nested encodings do.
func TestCanonicalIsomorphism(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var gen func(depth int) *Object
	gen = func(depth int) *Object {
		if depth == 0 {
			return &Object{Type: PU}
		}
		o := &Object{Type: []Type{Package, L3Cache, L2Cache, Core}[4-depth]}
		for i := 0; i < 1+rng.Intn(3); i++ {
			o.Children = append(o.Children, gen(depth-1))
		}
		return o
	}
	var clone func(o *Object) *Object
	clone = func(o *Object) *Object {
		c := &Object{Type: o.Type, Attrs: o.Attrs}
		for _, k := range o.Children {
			c.Children = append(c.Children, clone(k))
		}
		rng.Shuffle(len(c.Children), func(i, j int) { c.Children[i], c.Children[j] = c.Children[j], c.Children[i] })
		return c
	}
	// naive is an independent encoding: sorted, with no grouping.
	var naive func(o *Object) string
	naive = func(o *Object) string {
		var parts []string
		for _, c := range o.Children {
			parts = append(parts, naive(c))
		}
		sort.Strings(parts)
		return o.Type.String() + "{" + strings.Join(parts, ";") + "}"
	}
	var trees []*Object
	for i := 0; i < 200; i++ {
		o := gen(1 + rng.Intn(4))
		trees = append(trees, o)
		if o.Canonical() != clone(o).Canonical() {
			t.Fatalf("a reshuffled copy has another form: %s", o.Canonical())
		}
	}
	for i := range trees {
		for j := range trees {
			same := trees[i].Canonical() == trees[j].Canonical()
			if same != (naive(trees[i]) == naive(trees[j])) {
				t.Fatalf("canonical and naive forms disagree on %s vs %s", naive(trees[i]), naive(trees[j]))
			}
		}
	}
}

func TestCovering(t *testing.T) {
	topo := mustSynthetic(t, "pack:2 l3:2 core:4 pu:2")
	for set, want := range map[string]string{
		"0":    "PU L#0",
		"0-1":  "Core L#0",
		"0,2":  "L3Cache L#0",
		"0,8":  "Package L#0",
		"0,16": "Machine",
		"":     "<nil>",
		"99":   "<nil>",
	} {
		s, _ := cpuset.ParseList(set)
		got := "<nil>"
		if o := topo.Covering(s); o != nil {
			got = o.Type.String()
			if o.Type != Machine {
				got += fmt.Sprintf(" L#%d", o.LogicalIndex)
			}
		}
		if got != want {
			t.Errorf("Covering(%q) = %s, want %s", set, got, want)
		}
	}
}

func TestKeepStructure(t *testing.T) {
	topo := mustSynthetic(t, "pack:2 l3:1 l2:4 core:1 pu:1")
	topo.KeepStructure()
	// Every Package has one child and goes; each L3 has four, so it stays;
	// the single-child L2 and Core levels go.
	if got := topo.Root.Canonical(); got != "Machine(L3Cache(PU*4)*2)" {
		t.Errorf("after KeepStructure: %s", got)
	}
}

func TestListing(t *testing.T) {
	var b strings.Builder
	topo, err := FromSysfs("testdata/sysfs/cgroup-2pkg")
	if err != nil {
		t.Fatal(err)
	}
	if err := topo.WriteListing(&b, false); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"Machine\n",
		"\n  Package L#0 (P#0)\n",
		"\n    L3Cache L#0 (size=16MiB)\n",
		"\n            PU L#2 (P#3)\n",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("listing lacks %q:\n%s", line, b.String())
		}
	}
}

func TestFileSizeCap(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 64 MiB file")
	}
	path := filepath.Join(t.TempDir(), "big.xml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxFileSize + 1); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	f.Close()
	for name, read := range map[string]func(string) (*Topology, error){"XML": FromXMLFile, "JSON": FromJSONFile} {
		if _, err := read(path); err == nil || !strings.Contains(err.Error(), "bytes (64 MiB) are accepted") {
			t.Errorf("%s reader on a file over the cap: %v, want an error naming the 64 MiB cap", name, err)
		}
	}
}

func TestXMLUnknownTypeKeepsPUs(t *testing.T) {
	// An object of a type the reader does not know (a newer
	// hwloc's) used to drop the PUs below it silently.
	x, err := fromXML([]byte(`<topology version="3.0"><object type="Machine" os_index="0">
<object type="Package" os_index="0"><object type="Frob" os_index="0"><object type="Core" os_index="0">
<object type="PU" os_index="0"/><object type="PU" os_index="1"/></object></object></object>
<object type="Misc"><object type="PU" os_index="7"/></object></object></topology>`), "frob.xml")
	if err != nil {
		t.Fatal(err)
	}
	if got := x.CPUs(); !reflect.DeepEqual(got, []int{0, 1}) {
		t.Errorf("CPUs = %v, want [0 1]", got)
	}
	if got := x.Root.Canonical(); got != "Machine(Package(Core(PU*2)))" {
		t.Errorf("tree = %s", got)
	}
	if x.FormatVersion != "3.0" {
		t.Errorf("FormatVersion = %q, want 3.0", x.FormatVersion)
	}
	if !strings.Contains(strings.Join(x.Notes, "; "), `"Frob" skipped`) {
		t.Errorf("notes %q do not mention the skipped Frob object", x.Notes)
	}
}

func TestXMLMemoryChildren(t *testing.T) {
	// hwloc v2 XML puts NUMA nodes (and MemCaches) as memory
	// children beside PUs, under a Core or a PU, and CPU-less nodes with an
	// empty cpuset; these were refused with "PU P#0 has children".
	for x, want := range map[string]string{
		`<topology version="2.0"><object type="Machine" os_index="0" cpuset="0x00000003"><object type="Package" os_index="0" cpuset="0x00000003">` +
			`<object type="Core" os_index="0" cpuset="0x00000001"><object type="PU" os_index="0" cpuset="0x00000001"><object type="NUMANode" os_index="0" cpuset="0x00000001" local_memory="1000"/></object></object>` +
			`<object type="Core" os_index="1" cpuset="0x00000002"><object type="NUMANode" os_index="1" cpuset="0x00000002"/><object type="PU" os_index="1" cpuset="0x00000002"/></object>` +
			`</object><object type="NUMANode" os_index="2" cpuset="0x0"/></object></topology>`: "Machine(Package(Core(PU)*2))", // nodes 0 and 1: memory of the Cores
		`<topology version="2.0"><object type="Machine" os_index="0" cpuset="0x00000003"><object type="MemCache" cpuset="0x00000003"><object type="NUMANode" os_index="0" cpuset="0x00000003"/></object>` +
			`<object type="Package" os_index="0" cpuset="0x00000003"><object type="Core" os_index="0" cpuset="0x00000003"><object type="PU" os_index="0" cpuset="0x00000001"/><object type="PU" os_index="1" cpuset="0x00000002"/></object></object></object></topology>`: "Machine(Package(Core(PU*2)))",
	} {
		topo, err := fromXML([]byte(x), "mem.xml")
		if err != nil {
			t.Errorf("fromXML: %v\n%s", err, x)
			continue
		}
		if got := topo.Root.Canonical(); got != want {
			t.Errorf("tree %s, want %s", got, want)
		}
	}
}

func TestSysfsNULPadded(t *testing.T) {
	// Some ARM kernels pad sysfs values with NUL bytes; the
	// Package and Core levels vanished. Pad every file of a fixture and
	// expect the same tree.
	src := "testdata/sysfs/offline-nonuma"
	want, err := FromSysfs(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	err = filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		out := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.HasPrefix(rel, "sys") {
			data = append(data, 0, 0, 0, 0)
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := FromSysfs(dst)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(shape(got), shape(want)) || got.Root.Canonical() != want.Root.Canonical() {
		t.Errorf("NUL-padded sysfs gives %v, want %v", shape(got), shape(want))
	}
}

// writeSysfs writes a minimal sysfs snapshot: for CPU i, files[name][i] is
// the content of cpuI/topology/NAME, or, for names starting "cache/", of
// cpuI/cache/... .
func writeSysfs(t *testing.T, n int, files map[string][]string) string {
	t.Helper()
	root := t.TempDir()
	for name, vals := range files {
		for i := 0; i < n; i++ {
			rel := filepath.Join("topology", name)
			if strings.HasPrefix(name, "cache/") {
				rel = name
			}
			path := filepath.Join(root, "sys/devices/system/cpu", fmt.Sprintf("cpu%d", i), rel)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(vals[i]+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

func TestSysfsComputeUnitsAndClusters(t *testing.T) {
	pkg := []string{"f", "f", "f", "f"}
	for name, c := range map[string]struct {
		files map[string][]string
		want  string
	}{
		// AMD compute units: siblings with different core_ids are two
		// cores sharing an L2 (hwloc makes one Core per thread).
		"compute units": {map[string][]string{
			"core_siblings": pkg, "physical_package_id": {"0", "0", "0", "0"},
			"thread_siblings": {"3", "3", "c", "c"}, "core_id": {"0", "1", "2", "3"},
			"cache/index2/level": {"2", "2", "2", "2"}, "cache/index2/type": {"Unified", "Unified", "Unified", "Unified"},
			"cache/index2/shared_cpu_map": {"3", "3", "c", "c"},
		}, "Machine(Package(L2Cache(Core(PU)*2)*2))"},
		// Hyper-threads share a core_id: one Core with two PUs.
		"hyper-threads": {map[string][]string{
			"core_siblings": pkg, "physical_package_id": {"0", "0", "0", "0"},
			"thread_siblings": {"3", "3", "c", "c"}, "core_id": {"0", "0", "1", "1"},
		}, "Machine(Package(Core(PU*2)*2))"},
		// Clusters (ARM, recent x86) are a Group level between Package and Core.
		"clusters": {map[string][]string{
			"core_siblings": pkg, "physical_package_id": {"0", "0", "0", "0"},
			"thread_siblings": {"1", "2", "4", "8"}, "core_id": {"0", "1", "2", "3"},
			"cluster_cpus": {"3", "3", "c", "c"}, "cluster_id": {"0", "0", "1", "1"},
		}, "Machine(Package(Group(Core(PU)*2)*2))"},
	} {
		topo, err := FromSysfs(writeSysfs(t, 4, c.files))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := topo.Root.Canonical(); got != c.want {
			t.Errorf("%s: tree %s, want %s", name, got, c.want)
		}
	}
}

func TestXMLVersion1(t *testing.T) {
	// hwloc 1.x XML: no version attribute, Socket and Cache(depth, cache_type).
	x, err := fromXML([]byte(`<topology><object type="Machine" os_index="0" cpuset="0x00000003">
<object type="Socket" os_index="0" cpuset="0x00000003"><object type="Cache" cpuset="0x00000003" cache_size="1048576" depth="2" cache_linesize="64" cache_type="0">
<object type="Core" os_index="0" cpuset="0x00000003"><object type="PU" os_index="0" cpuset="0x00000001"/><object type="PU" os_index="1" cpuset="0x00000002"/>
</object></object></object></object></topology>`), "v1.xml")
	if err != nil {
		t.Fatal(err)
	}
	if got := x.Root.Canonical(); !strings.HasPrefix(got, "Machine(Package(L2Cache") || !strings.HasSuffix(got, "(Core(PU*2))))") {
		t.Errorf("tree = %s, want Machine(Package(L2Cache(Core(PU*2))))", got)
	}
	if x.FormatVersion != "1.x" {
		t.Errorf("FormatVersion = %q, want 1.x", x.FormatVersion)
	}
}

func TestRestrictAndRemoveCaches(t *testing.T) {
	topo := mustSynthetic(t, "pack:2 l3:1(size=1M) core:2 pu:2")
	if err := topo.Restrict(cpuset.Of(1, 2, 3)); err != nil {
		t.Fatal(err)
	}
	if got := topo.Root.CPUSet.String(); got != "1-3" {
		t.Errorf("restricted CPUs = %s, want 1-3", got)
	}
	if got := len(topo.Objects(Package)); got != 1 {
		t.Errorf("%d packages left, want 1 (the second holds no allowed PU)", got)
	}
	if got := len(topo.Objects(Core)); got != 2 {
		t.Errorf("%d cores left, want 2", got)
	}
	if err := topo.Restrict(cpuset.Of(9)); err == nil || !strings.Contains(err.Error(), "none is in this topology") {
		t.Errorf("Restrict to an absent CPU: %v", err)
	}
	topo.RemoveCaches()
	if got := topo.Root.Canonical(); got != "Machine(Package(Core(PU),Core(PU*2)))" && got != "Machine(Package(Core(PU*2),Core(PU)))" {
		t.Errorf("without caches: %s", got)
	}
}
