package hwtree

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/capped"
	"github.com/barriertune/barriertune/internal/cgroup"
	"github.com/barriertune/barriertune/internal/osal"
)

// FromSysfs discovers the tree from a Linux sysfs. root "/" (or "") reads the
// live machine and restricts it to the CPUs this process may run on
// (the process's, never the calling thread's affinity: internal/osal.Allowed)
// and the memory nodes it may use. Any other root is a
// captured snapshot holding root/sys and root/proc; the snapshot's cgroup
// cpuset (internal/cgroup reads it under root)
// restricts it instead.
//
// The tree is built from CPU masks, never from ids: PUs are the online CPUs
// that have a topology/ directory; Core from core_cpus (else
// thread_siblings); Package from package_cpus (else core_siblings); Die from
// die_cpus; Group from cluster_cpus, book_siblings and drawer_siblings; caches
// from cache/indexN (shared_cpu_map, empty meaning the core's mask); NUMA
// nodes from node/nodeN/cpumap. A missing or empty file means unknown.
// When no CPU of the live machine has a cache/ directory (some virtual
// machines), the caches come from CPUID on each CPU, as hwloc's x86 backend
// reads them (leaf 4 on Intel, 0x8000001D or 0x80000005/6 on AMD; CPUs
// share a cache when their package and the cache's APIC-ID-derived ids
// match).
//
// Outside Linux there is no live sysfs to read at "/": the error wraps
// errors.ErrUnsupported, and a tree can still be read from hwloc XML, a
// synthetic string or JSON.
func FromSysfs(root string) (*Topology, error) {
	var x86 func(cpuset.Set) map[int]x86Proc
	if root == "" || root == "/" {
		if runtime.GOOS != "linux" {
			return nil, fmt.Errorf("discovering this machine's CPU tree needs Linux sysfs (this is %s): %w; give a topology source (--synthetic, --xml, --topology)", runtime.GOOS, errors.ErrUnsupported)
		}
		x86 = liveX86Procs
	}
	return fromSysfs(root, x86)
}

// fromSysfs is FromSysfs with the CPUID reader given (tests hand a snapshot
// captured register values; nil reads no CPUID).
func fromSysfs(root string, x86 func(cpuset.Set) map[int]x86Proc) (*Topology, error) {
	live := root == "" || root == "/"
	if live {
		root = "/"
	}
	r, err := openSysfs(root)
	if err != nil {
		return nil, err
	}
	r.x86 = x86
	var allowed cpuset.Set
	var mems *cpuset.Set
	if live {
		allowed, mems, err = liveAllowed()
		if err != nil {
			return nil, fmt.Errorf("reading the allowed CPUs: %w", err)
		}
	}
	protos, complete, err := r.discover()
	if err != nil {
		return nil, fmt.Errorf("sysfs root %q: %w", root, err)
	}
	if !live {
		allowed, mems = r.cgroupCpuset()
	}
	if allowed.IsEmpty() {
		allowed = complete
	}
	b := &builder{mergeLevels: true}
	obj, err := b.build(protos, allowed, mems)
	if err != nil {
		return nil, fmt.Errorf("sysfs root %q: %w", root, err)
	}
	t := &Topology{Root: obj, Source: "sysfs:" + root, Notes: append(r.notes, b.notes...)}
	t.finalize()
	return t, t.validate()
}

type sysfsReader struct {
	root, cpuDir string
	notes        []string
	// sawCacheDir is set when some CPU has a cache/ directory.
	sawCacheDir bool
	// x86 asks the given CPUs what CPUID says about them; nil for a
	// snapshot (the live machine's CPUID says nothing about it).
	x86 func(cpuset.Set) map[int]x86Proc
}

func (r *sysfsReader) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// read returns a sysfs file's trimmed content, or "" when it is missing,
// empty or unreadable (osal.ReadSysfsValue, which caps what one file may
// hold).
func read(path string) string { return osal.ReadSysfsValue(path) }

// The directories listed are capped too: the CPU directory holds a cpuN per
// possible CPU and a dozen other entries, a cache directory a few indexN,
// (the node directory's cap is osal.MaxNodeDirEntries).
const (
	maxCPUDirEntries   = cpuset.MaxCPU + 1 + 1024
	maxCacheDirEntries = 256
)

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// readMask reads a mask file, falling back to its _list twin.
func readMask(path string) (cpuset.Set, bool) {
	if s := read(path); s != "" {
		if v, err := cpuset.ParseMask(s); err == nil {
			return v, true
		}
	}
	if s := read(path + "_list"); s != "" {
		if v, err := cpuset.ParseList(s); err == nil {
			return v, true
		}
	}
	return cpuset.Set{}, false
}

func readInt(path string) int {
	v, err := strconv.Atoi(read(path))
	if err != nil {
		return -1
	}
	return v
}

var cpuDirRE = regexp.MustCompile(`^cpu([0-9]+)$`)
var cacheIndexRE = regexp.MustCompile(`^index[0-9]+$`)

// discover reads every object with its complete cpuset (over the usable PUs).
func (r *sysfsReader) discover() ([]proto, cpuset.Set, error) {
	entries, more, err := capped.ReadDir(r.cpuDir, maxCPUDirEntries)
	if err != nil {
		return nil, cpuset.Set{}, err
	}
	if more {
		return nil, cpuset.Set{}, fmt.Errorf("%s has more than %d entries; a sysfs CPU directory has one per CPU (at most %d) and a few more", r.cpuDir, maxCPUDirEntries, cpuset.MaxCPU+1)
	}
	var present []int
	for _, e := range entries {
		if m := cpuDirRE.FindStringSubmatch(e.Name()); m != nil {
			n, _ := strconv.Atoi(m[1])
			if n <= cpuset.MaxCPU {
				present = append(present, n)
			}
		}
	}
	sort.Ints(present)
	online := osal.OnlineAmong(r.root, present)
	var usable []int
	anyTopology := false
	for _, c := range present {
		if exists(r.cpuPath(c, "topology")) {
			anyTopology = true
		}
	}
	for _, c := range present {
		if !online.Has(c) {
			continue
		}
		if anyTopology && !exists(r.cpuPath(c, "topology")) {
			continue
		}
		usable = append(usable, c)
	}
	if len(usable) == 0 {
		return nil, cpuset.Set{}, fmt.Errorf("no online CPU with a topology/ directory under %s", r.cpuDir)
	}
	complete := cpuset.Of(usable...)
	var protos []proto
	kinds := r.cpuKinds(complete)
	// AMD compute units (Bulldozer family) report two cores as
	// thread_siblings with different core_ids. As hwloc does, the first
	// multi-PU core decides, for the whole machine, whether siblings are
	// hardware threads (same core_id) or one core each (different ids).
	threadWithCoreID := -1
	for _, c := range usable {
		// As hwloc does, CPU c creates an object only when it is the first
		// CPU of the mask it reports: every object is made once, and a CPU
		// whose mask contradicts its siblings' creates nothing.
		add := func(t Type, os int, set cpuset.Set, a Attrs) {
			set = set.And(complete)
			if set.First() == c {
				protos = append(protos, proto{typ: t, osIndex: os, complete: set, attrs: a})
			}
		}
		self := cpuset.Of(c)
		topo := r.cpuPath(c, "topology")
		add(PU, c, self, Attrs{CPUKind: kinds[c]})
		core, ok := readMask(filepath.Join(topo, "core_cpus"))
		if !ok {
			core, ok = readMask(filepath.Join(topo, "thread_siblings"))
		}
		if ok {
			core = core.Or(self).And(complete)
			coreID := readInt(filepath.Join(topo, "core_id"))
			if threadWithCoreID == -1 && core.Len() > 1 {
				sibling := core.AndNot(self).First()
				other := readInt(r.cpuPath(sibling, "topology", "core_id"))
				threadWithCoreID = 0
				if coreID >= 0 && other >= 0 && other != coreID {
					threadWithCoreID = 1
				}
			}
			if threadWithCoreID == 1 {
				core = self
			}
			add(Core, coreID, core, Attrs{CPUKind: kinds[c]})
		} else {
			core = self
		}
		if pkg, ok := readMask(filepath.Join(topo, "package_cpus")); ok {
			add(Package, readInt(filepath.Join(topo, "physical_package_id")), pkg.Or(core), Attrs{})
		} else if pkg, ok := readMask(filepath.Join(topo, "core_siblings")); ok {
			add(Package, readInt(filepath.Join(topo, "physical_package_id")), pkg.Or(core), Attrs{})
		}
		if die, ok := readMask(filepath.Join(topo, "die_cpus")); ok {
			add(Die, readInt(filepath.Join(topo, "die_id")), die.Or(core), Attrs{})
		}
		for _, g := range []struct{ file, id, subtype string }{
			{"cluster_cpus", "cluster_id", "Cluster"},
			{"book_siblings", "book_id", "Book"},
			{"drawer_siblings", "drawer_id", "Drawer"},
		} {
			if set, ok := readMask(filepath.Join(topo, g.file)); ok {
				add(Group, readInt(filepath.Join(topo, g.id)), set.Or(core), Attrs{Subtype: g.subtype})
			}
		}
		protos = append(protos, r.caches(c, core, complete)...)
	}
	if !r.sawCacheDir && r.x86 != nil {
		// No cache directories anywhere (some virtual machines): the
		// caches CPUID reports, as hwloc's x86 backend adds them.
		caches, note := x86CacheProtos(r.x86(complete))
		if note != "" {
			r.note("%s", note)
		} else if len(caches) > 0 {
			r.note("sysfs has no cpu*/cache directories: caches read from CPUID")
		}
		protos = append(protos, caches...)
	}
	nodes := r.numaNodes(complete)
	if len(nodes) == 0 {
		// No (usable) NUMA information: hwloc makes one node, P#0, holding
		// every CPU, the Machine's memory.
		nodes = []proto{{typ: NUMANode, osIndex: 0, complete: complete}}
	}
	protos = append(protos, nodes...)
	return protos, complete, nil
}

func (r *sysfsReader) cpuPath(cpu int, elem ...string) string {
	return filepath.Join(append([]string{r.cpuDir, "cpu" + strconv.Itoa(cpu)}, elem...)...)
}

// caches reads cpu/cache/indexN: level, type, size, line size, ways and
// shared_cpu_map, all from that same directory.
func (r *sysfsReader) caches(cpu int, core, complete cpuset.Set) []proto {
	dir := r.cpuPath(cpu, "cache")
	entries, _, err := capped.ReadDir(dir, maxCacheDirEntries)
	if err != nil {
		return nil
	}
	r.sawCacheDir = true
	var out []proto
	for _, e := range entries {
		if !cacheIndexRE.MatchString(e.Name()) {
			continue
		}
		d := filepath.Join(dir, e.Name())
		level := readInt(filepath.Join(d, "level"))
		kind := read(filepath.Join(d, "type"))
		var t Type
		switch {
		case level == 1 && (kind == "Data" || kind == "Unified"):
			t = L1dCache
		case level == 1 && kind == "Instruction":
			t = L1iCache
		case level == 2 && kind == "Unified":
			t = L2Cache
		case level == 3 && kind == "Unified":
			t = L3Cache
		default:
			// hwloc names split level-2/3 caches L2dCache, L2iCache, ...
			// and they are not L2Cache or L3Cache; the model has no type
			// for them, nor for L4.
			continue
		}
		shared, ok := readMask(filepath.Join(d, "shared_cpu_map"))
		if !ok || shared.IsEmpty() {
			shared = core
		}
		shared = shared.Or(cpuset.Of(cpu)).And(complete)
		if shared.First() != cpu {
			continue // made by the mask's first CPU (see discover)
		}
		a := Attrs{
			CacheSize: parseSize(read(filepath.Join(d, "size"))),
			LineSize:  max(readInt(filepath.Join(d, "coherency_line_size")), 0),
			Ways:      max(readInt(filepath.Join(d, "ways_of_associativity")), 0),
		}
		out = append(out, proto{typ: t, osIndex: -1, complete: shared, attrs: a})
	}
	return out
}

// parseSize reads sysfs cache sizes such as "32K" or "8192K"; 0 if unknown.
func parseSize(s string) uint64 {
	n, err := parseByteSize(s)
	if err != nil {
		return 0
	}
	return n
}

// numaNodes places the NUMA nodes (osal.NodesAt reads them). Nodes without
// CPUs (GPU memory, CXL tiers) are noted, not placed: the CPU tree has no
// place for them. When two nodes' CPU maps overlap the kernel's NUMA
// information is wrong and every node is ignored, as hwloc does.
func (r *sysfsReader) numaNodes(complete cpuset.Set) []proto {
	nodes, err := osal.NodesAt(r.root)
	if errors.Is(err, osal.ErrNodeDirFull) {
		r.note("%v: NUMA nodes ignored", err)
	}
	if err != nil {
		return nil
	}
	var out []proto
	var cpuless []string
	for _, n := range nodes {
		set := n.CPUs.And(complete)
		if set.IsEmpty() {
			cpuless = append(cpuless, strconv.Itoa(n.ID))
			continue
		}
		out = append(out, proto{typ: NUMANode, osIndex: n.ID, complete: set})
	}
	if len(cpuless) > 0 {
		sort.Strings(cpuless)
		r.note("NUMA nodes without online CPUs (memory only) are not in the CPU tree: %s", strings.Join(cpuless, ","))
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[i].complete.Intersects(out[j].complete) {
				r.note("NUMA nodes %d and %d have overlapping CPU maps; NUMA information ignored", out[i].osIndex, out[j].osIndex)
				return nil
			}
		}
	}
	return out
}

// cpuKinds reads the hybrid core kinds Linux exposes for Intel
// (sys/devices/cpu_core/cpus, cpu_atom/cpus); empty on other machines.
func (r *sysfsReader) cpuKinds(complete cpuset.Set) map[int]string {
	kinds := map[int]string{}
	for _, k := range []struct{ dir, name string }{{"cpu_core", "IntelCore"}, {"cpu_atom", "IntelAtom"}} {
		if s := read(filepath.Join(r.root, "sys", "devices", k.dir, "cpus")); s != "" {
			if set, err := cpuset.ParseList(s); err == nil {
				for _, c := range set.And(complete).Members() {
					kinds[c] = k.name
				}
			}
		}
	}
	if len(kinds) > 0 && len(kinds) < complete.Len() {
		// A kind known for some CPUs only is no basis for telling them apart.
		return map[int]string{}
	}
	return kinds
}

// cgroupCpuset returns the snapshot's cgroup cpuset restriction
// (internal/cgroup, the one reader of the cgroup files, under the
// snapshot's root). Empty results mean no restriction.
func (r *sysfsReader) cgroupCpuset() (cpuset.Set, *cpuset.Set) {
	l := cgroup.Read(r.root)
	if l.CPUs.IsEmpty() {
		return cpuset.Set{}, nil
	}
	r.note("cgroup cpuset %s restricts the CPUs to %s", l.Cpuset, l.CPUs)
	return l.CPUs, l.Mems
}

// openSysfs checks that root holds a sysfs CPU directory and returns its
// reader (root "/" for the live machine, else a snapshot directory).
func openSysfs(root string) (*sysfsReader, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("sysfs root %q: %w", root, errors.Unwrap(err))
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("sysfs root %q is not a directory (want a directory holding sys/ and proc/)", root)
	}
	cpuDir := filepath.Join(root, "sys", "devices", "system", "cpu")
	if _, err := os.Stat(cpuDir); err != nil {
		return nil, fmt.Errorf("sysfs root %q has no sys/devices/system/cpu (want a live / or a snapshot directory holding sys/ and proc/)", root)
	}
	return &sysfsReader{root: root, cpuDir: cpuDir}, nil
}
