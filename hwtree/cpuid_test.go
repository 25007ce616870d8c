package hwtree

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cpuset"
)

// cpuidTable is one CPU's CPUID answers keyed by leaf and subleaf; a leaf
// not in it answers zeros, as a leaf above the highest does.
type cpuidTable map[[2]uint32][4]uint32

func (t cpuidTable) query(leaf, sub uint32) [4]uint32 { return t[[2]uint32{leaf, sub}] }

// with returns a copy with some answers replaced (a CPU's own APIC ID).
func (t cpuidTable) with(over cpuidTable) cpuidTable {
	out := cpuidTable{}
	for k, v := range t {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// vendorRegs encodes a 12-byte vendor string as leaf 0's EBX, ECX, EDX.
func vendorRegs(highest uint32, v string) [4]uint32 {
	w := func(s string) uint32 { return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24 }
	return [4]uint32{highest, w(v[0:4]), w(v[8:12]), w(v[4:8])}
}

// guestEPYC is what CPU 0 and CPU 1 of this project's 2-vCPU guest
// ("Oxide Virtual Turin-like Processor", family 0x1a, no topology
// extensions, no x2APIC) answered, captured with internal/rawcpuid on a
// thread pinned to each CPU. Its leaf-1 APIC IDs (0xbc, 0xe7) differ from
// /proc/cpuinfo's 0 and 1, and 0x80000008 reports one core per package:
// hwloc puts each vCPU in its own cache set.
var guestEPYC = cpuidTable{
	{0, 0}:          vendorRegs(0xd, "AuthenticAMD"),
	{1, 0}:          {0x00b00f21, 0xbcfe0800, 0xfed83203, 0x178bfbff},
	{0x80000000, 0}: vendorRegs(0x80000021, "AuthenticAMD"),
	{0x80000001, 0}: {0x00b00f21, 0x40000000, 0x440001f1, 0x25d3fbff},
	{0x80000005, 0}: {0xff60ff40, 0xff60ff40, 0x300c0140, 0x20080140},
	{0x80000006, 0}: {0x40802040, 0x60804040, 0x04006140, 0x0fe09140},
	{0x80000008, 0}: {0x00003030, 0x20000005, 0x00000000, 0x00000000},
}

func guestCPUs() map[int]cpuidTable {
	return map[int]cpuidTable{
		0: guestEPYC,
		1: guestEPYC.with(cpuidTable{{1, 0}: {0x00b00f21, 0xe7fe0800, 0xfed83203, 0x178bfbff}}),
	}
}

// skylakeClient is a 4-core, 8-thread Intel client part (family 6, model
// 0x5e) encoded from the Intel SDM's leaf-4 and leaf-0xB layouts with that
// part's caches: L1d and L1i 32 KiB 8-way, L2 256 KiB 4-way, each shared by
// the core's 2 threads; L3 8 MiB 16-way shared by 16 APIC ids. Linux
// numbers the first threads of the cores 0-3 (APIC ids 0, 2, 4, 6) and the
// second threads 4-7 (1, 3, 5, 7).
func skylakeCPUs() map[int]cpuidTable {
	base := cpuidTable{
		{0, 0}:          vendorRegs(0x16, "GenuineIntel"),
		{1, 0}:          {0x000506e3, 0x00100800, 0x7ffafbbf, 0xbfebfbff}, // HTT, 16 logical, x2APIC
		{4, 0}:          {0x1c004121, 0x01c0003f, 0x0000003f, 0},
		{4, 1}:          {0x1c004122, 0x01c0003f, 0x0000003f, 0},
		{4, 2}:          {0x1c004143, 0x00c0003f, 0x000003ff, 0},
		{4, 3}:          {0x1c03c163, 0x03c0003f, 0x00001fff, 6},
		{0x80000000, 0}: {0x80000008, 0, 0, 0},
	}
	out := map[int]cpuidTable{}
	for cpu := 0; cpu < 8; cpu++ {
		apic := uint32(cpu%4*2 + cpu/4)
		out[cpu] = base.with(cpuidTable{
			{1, 0}:   {0x000506e3, apic<<24 | 0x00100800, 0x7ffafbbf, 0xbfebfbff},
			{0xb, 0}: {1, 2, 0x100, apic},
			{0xb, 1}: {4, 8, 0x201, apic},
		})
	}
	return out
}

// zen2 is an 8-core, 16-thread AMD part (family 0x17, model 0x71, two
// core complexes) with the topology extensions, encoded from AMD's
// 0x8000001D/0x8000001E layouts with that part's caches: L1d, L1i 32 KiB
// 8-way and L2 512 KiB 8-way per core (2 threads), L3 16 MiB 16-way per
// complex (8 threads). CPU i < 8 is core i's first thread (APIC id 2i),
// CPU i+8 its second (2i+1).
func zen2CPUs() map[int]cpuidTable {
	base := cpuidTable{
		{0, 0}:          vendorRegs(0x10, "AuthenticAMD"),
		{1, 0}:          {0x00870f10, 0x00100800, 0x7ed8320b, 0x178bfbff}, // HTT, 16 logical, no x2APIC
		{0x80000000, 0}: vendorRegs(0x8000001f, "AuthenticAMD"),
		{0x80000001, 0}: {0x00870f10, 0x20000000, 0x75c237ff, 0x2fd3fbff}, // topoext (ECX bit 22)
		{0x80000008, 0}: {0x00003030, 0x010eb757, 0x0000700f, 0},
		{0x8000001d, 0}: {0x00004121, 0x01c0003f, 0x0000003f, 0},
		{0x8000001d, 1}: {0x00004122, 0x01c0003f, 0x0000003f, 0},
		{0x8000001d, 2}: {0x00004143, 0x01c0003f, 0x000003ff, 2},
		{0x8000001d, 3}: {0x0001c163, 0x03c0003f, 0x00003fff, 1},
	}
	out := map[int]cpuidTable{}
	for cpu := 0; cpu < 16; cpu++ {
		apic := uint32(cpu%8*2 + cpu/8)
		out[cpu] = base.with(cpuidTable{
			{1, 0}:          {0x00870f10, apic<<24 | 0x00100800, 0x7ed8320b, 0x178bfbff},
			{0x8000001e, 0}: {apic, 0x00000100 | uint32(cpu%8), 0, 0},
		})
	}
	return out
}

// decodeAll decodes every CPU's table, as the live reader does on pinned
// threads.
func decodeAll(t *testing.T, tables map[int]cpuidTable) func(cpuset.Set) map[int]x86Proc {
	return func(cpus cpuset.Set) map[int]x86Proc {
		out := map[int]x86Proc{}
		for _, c := range cpus.Members() {
			if tab, ok := tables[c]; ok {
				p, ok := decodeX86(tab.query)
				if !ok {
					t.Fatalf("CPU %d: decodeX86 found no leaf 1", c)
				}
				out[c] = p
			}
		}
		return out
	}
}

func TestDecodeX86Caches(t *testing.T) {
	type want struct {
		typ       Type
		size      uint64
		line      int
		ways      int
		sharing   uint32
		apic, pkg uint32
	}
	for _, tc := range []struct {
		name  string
		table cpuidTable
		want  []want
	}{
		{"guest EPYC, legacy AMD leaves", guestEPYC, []want{
			{L1dCache, 48 << 10, 64, 12, 1, 0xbc, 0xbc},
			{L1iCache, 32 << 10, 64, 8, 1, 0xbc, 0xbc},
			{L2Cache, 1 << 20, 64, 8, 1, 0xbc, 0xbc},
			{L3Cache, 1016 << 19, 64, 0, 256, 0xbc, 0xbc},
		}},
		{"Intel leaf 4, x2APIC", skylakeCPUs()[5], []want{
			{L1dCache, 32 << 10, 64, 8, 2, 3, 0},
			{L1iCache, 32 << 10, 64, 8, 2, 3, 0},
			{L2Cache, 256 << 10, 64, 4, 2, 3, 0},
			{L3Cache, 8 << 20, 64, 16, 16, 3, 0},
		}},
		{"AMD topology extensions", zen2CPUs()[12], []want{
			{L1dCache, 32 << 10, 64, 8, 2, 9, 0},
			{L1iCache, 32 << 10, 64, 8, 2, 9, 0},
			{L2Cache, 512 << 10, 64, 8, 2, 9, 0},
			{L3Cache, 16 << 20, 64, 16, 8, 9, 0},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := decodeX86(tc.table.query)
			if !ok {
				t.Fatal("decodeX86 found no leaf 1")
			}
			if len(p.caches) != len(tc.want) {
				t.Fatalf("%d caches %+v, want %d", len(p.caches), p.caches, len(tc.want))
			}
			for i, w := range tc.want {
				c := p.caches[i]
				got := want{c.typ, c.attrs.CacheSize, c.attrs.LineSize, c.attrs.Ways, c.sharing, p.apicID, p.packageID}
				if got != w {
					t.Errorf("cache %d = %+v, want %+v", i, got, w)
				}
			}
		})
	}
}

func TestDecodeX86Rules(t *testing.T) {
	// No leaf 1: nothing to decode.
	if _, ok := decodeX86(cpuidTable{{0, 0}: vendorRegs(0, "GenuineIntel")}.query); ok {
		t.Error("a CPU whose highest leaf is 0 decoded")
	}
	// A fully associative cache (EAX bit 9) has ways -1.
	full := skylakeCPUs()[0].with(cpuidTable{{4, 0}: {0x1c004321, 0x01c0003f, 0, 0}})
	p, _ := decodeX86(full.query)
	if p.caches[0].attrs.Ways != -1 {
		t.Errorf("fully associative L1d: ways %d, want -1", p.caches[0].attrs.Ways)
	}
	// Intel rounds a sharing count up to a power of two: 6 threads share
	// the APIC ids of an aligned block of 8.
	six := skylakeCPUs()[0].with(cpuidTable{
		{4, 3}:   {0x1c014163, 0x03c0003f, 0x00001fff, 6}, // sharing 6
		{0xb, 0}: {1, 2, 0x100, 13}, {0xb, 1}: {4, 8, 0x201, 13},
	})
	p, _ = decodeX86(six.query)
	if got := p.caches[3].cacheID; got != 8 {
		t.Errorf("Intel L3 shared by 6, APIC id 13: cache id %d, want 8 (13 with its low 3 bits cleared)", got)
	}
	// AMD family 0x17 with 6 enabled cores per L3 still spaces L3s by 8
	// APIC ids.
	zen24 := zen2CPUs()[0].with(cpuidTable{
		{0x8000001d, 3}: {0x00014163, 0x03c0003f, 0x00003fff, 1}, // sharing 6
		{0x8000001e, 0}: {14, 0x100, 0, 0},
	})
	p, _ = decodeX86(zen24.query)
	if got := p.caches[3].cacheID; got != 1 {
		t.Errorf("family 0x17 L3 shared by 6, APIC id 14: cache id %d, want 1 (14/8)", got)
	}
	// A vendor hwloc does not know reads leaf 4, with the plain division.
	other := skylakeCPUs()[0].with(cpuidTable{{0, 0}: vendorRegs(0x16, "VirtualCPU!!")})
	p, _ = decodeX86(other.query)
	if len(p.caches) != 4 || p.caches[3].cacheID != 0 {
		t.Errorf("unknown vendor: caches %+v, want leaf 4's four with the L3 id 0", p.caches)
	}
}

// writeSnapshot makes a sysfs snapshot of n CPUs, one package, cores of
// the given threads (Linux's numbering: CPU c is thread c/cores of core
// c%cores), with topology files and no cache directories.
func writeSnapshot(t *testing.T, n, threads int) string {
	t.Helper()
	root := t.TempDir()
	cpuDir := filepath.Join(root, "sys", "devices", "system", "cpu")
	write := func(path, v string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(cpuDir, "online"), fmt.Sprintf("0-%d", n-1))
	cores := n / threads
	for c := 0; c < n; c++ {
		var sib []string
		for th := 0; th < threads; th++ {
			sib = append(sib, strconv.Itoa(c%cores+th*cores))
		}
		topo := filepath.Join(cpuDir, "cpu"+strconv.Itoa(c), "topology")
		write(filepath.Join(topo, "core_cpus_list"), strings.Join(sib, ","))
		write(filepath.Join(topo, "core_id"), strconv.Itoa(c%cores))
		write(filepath.Join(topo, "package_cpus_list"), fmt.Sprintf("0-%d", n-1))
		write(filepath.Join(topo, "physical_package_id"), "0")
	}
	return root
}

// cacheSets lists each cache type's CPU sets, as "L2Cache 0,4 1,5".
func cacheSets(topo *Topology) []string {
	byType := map[Type][]string{}
	var walk func(o *Object)
	walk = func(o *Object) {
		switch o.Type {
		case L1dCache, L1iCache, L2Cache, L3Cache:
			byType[o.Type] = append(byType[o.Type], o.CPUSet.String())
		}
		for _, c := range o.Children {
			walk(c)
		}
	}
	walk(topo.Root)
	var out []string
	for _, t := range []Type{L3Cache, L2Cache, L1dCache, L1iCache} {
		sets := byType[t]
		sort.Strings(sets)
		out = append(out, t.String()+" "+strings.Join(sets, " "))
	}
	return out
}

func TestSysfsWithoutCacheDirectoriesReadsCPUID(t *testing.T) {
	for _, tc := range []struct {
		name       string
		n, threads int
		tables     map[int]cpuidTable
		want       []string
	}{
		{"guest EPYC", 2, 1, guestCPUs(), []string{"L3Cache 0 1", "L2Cache 0 1", "L1dCache 0 1", "L1iCache 0 1"}},
		{"Intel", 8, 2, skylakeCPUs(), []string{"L3Cache 0-7", "L2Cache 0,4 1,5 2,6 3,7", "L1dCache 0,4 1,5 2,6 3,7", "L1iCache 0,4 1,5 2,6 3,7"}},
		{"AMD", 16, 2, zen2CPUs(), []string{"L3Cache 0-3,8-11 4-7,12-15", "L2Cache 0,8 1,9 2,10 3,11 4,12 5,13 6,14 7,15",
			"L1dCache 0,8 1,9 2,10 3,11 4,12 5,13 6,14 7,15", "L1iCache 0,8 1,9 2,10 3,11 4,12 5,13 6,14 7,15"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeSnapshot(t, tc.n, tc.threads)
			topo, err := fromSysfs(root, decodeAll(t, tc.tables))
			if err != nil {
				t.Fatal(err)
			}
			if got := cacheSets(topo); strings.Join(got, "; ") != strings.Join(tc.want, "; ") {
				t.Errorf("cache sets\n got %q\nwant %q", got, tc.want)
			}
			// Without a CPUID reader (a snapshot read as such) the same
			// snapshot has no caches.
			bare, err := FromSysfs(root)
			if err != nil {
				t.Fatal(err)
			}
			if got := cacheSets(bare); strings.Join(got, "") != "L3Cache L2Cache L1dCache L1iCache " {
				t.Errorf("snapshot without a CPUID reader has caches: %q", got)
			}
		})
	}
}

func TestCPUIDCachesNotUsedWithDuplicateAPICIDs(t *testing.T) {
	tables := guestCPUs()
	tables[1] = guestEPYC // both report APIC id 0xbc
	topo, err := fromSysfs(writeSnapshot(t, 2, 1), decodeAll(t, tables))
	if err != nil {
		t.Fatal(err)
	}
	if got := cacheSets(topo); strings.Join(got, "") != "L3Cache L2Cache L1dCache L1iCache " {
		t.Errorf("duplicate APIC ids still made caches: %q", got)
	}
	if !strings.Contains(strings.Join(topo.Notes, "\n"), "same APIC ID 188") {
		t.Errorf("notes %q do not say why the caches were left out", topo.Notes)
	}
}

func TestSysfsCacheDirectoriesWinOverCPUID(t *testing.T) {
	// A snapshot with cache directories keeps them even when a CPUID
	// reader is given.
	called := false
	topo, err := fromSysfs("testdata/sysfs/offline-nonuma", func(cpuset.Set) map[int]x86Proc {
		called = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if called {
		t.Error("CPUID was read although sysfs has cache directories")
	}
	if len(topo.Objects(L1dCache)) == 0 {
		t.Error("the snapshot's sysfs caches are gone")
	}
}

// TestLiveCachesMatchLstopo compares the live tree's cache sets with what
// lstopo reports on this machine (both from sysfs, or both from CPUID where
// sysfs has no cache directories).
func TestLiveCachesMatchLstopo(t *testing.T) {
	if _, err := exec.LookPath("lstopo"); err != nil {
		t.Skip("lstopo not installed")
	}
	topo, err := FromSysfs("/")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("lstopo", "--of", "xml", "--no-io", "-").Output()
	if err != nil {
		t.Skipf("lstopo --of xml: %v", err)
	}
	ref, err := fromXML(out, "lstopo")
	if err != nil {
		t.Fatalf("reading lstopo's XML: %v", err)
	}
	// lstopo sees the whole machine; compare inside this process's CPUs.
	allowed := topo.Root.CPUSet
	for _, typ := range []Type{Package, L3Cache, L2Cache, L1dCache, L1iCache, Core, PU} {
		got := setsOf(topo, typ, allowed)
		want := setsOf(ref, typ, allowed)
		if got != want {
			t.Errorf("%s sets: ours %s, lstopo %s", typ, got, want)
		}
		t.Logf("%s: %s", typ, got)
	}
}

func setsOf(topo *Topology, typ Type, within cpuset.Set) string {
	var sets []string
	for _, o := range topo.Objects(typ) {
		if s := o.CPUSet.And(within); !s.IsEmpty() {
			sets = append(sets, s.String())
		}
	}
	sort.Strings(sets)
	return strings.Join(sets, " ")
}
