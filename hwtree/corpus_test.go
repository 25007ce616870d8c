package hwtree

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/bzip2"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// corpusDir returns ../shared/hwloc-linux relative to the module root, or
// skips the test when it is absent (a fresh clone has no ../shared).
func corpusDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("module root not found")
		}
		dir = parent
	}
	c := filepath.Join(dir, "..", "shared", "hwloc-linux")
	if _, err := os.Stat(c); err != nil {
		t.Skipf("no hwloc corpus at %s: %v", c, err)
	}
	return c
}

// scratchDir returns a fresh directory removed after the test, on tmpfs
// (/dev/shm) when there is one: unpacking thousands of small files on a
// disk-backed temp directory is fifty times slower.
func scratchDir(t testing.TB) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "barriertune-test-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

// untar unpacks a .tar.bz2 into dst and returns the directory holding sys/.
func untar(t testing.TB, archive, dst string) string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(bzip2.NewReader(f))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		name := filepath.Clean(h.Name)
		if strings.HasPrefix(name, "..") || filepath.IsAbs(name) {
			continue
		}
		if !neededForDiscovery(name) {
			continue
		}
		p := filepath.Join(dst, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(out, tr); err != nil {
				t.Fatal(err)
			}
			out.Close()
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			_ = os.Symlink(h.Linkname, p)
		}
	}
	var root string
	_ = filepath.WalkDir(dst, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "sys" && root == "" {
			root = filepath.Dir(path)
			return filepath.SkipAll
		}
		return nil
	})
	if root == "" {
		t.Fatalf("%s holds no sys/ directory", archive)
	}
	return root
}

// neededForDiscovery keeps the parts of a snapshot that CPU discovery reads
// (creating the thousands of PCI and power-management files is slow).
func neededForDiscovery(name string) bool {
	parts := strings.Split(filepath.ToSlash(name), "/")
	for i, p := range parts {
		switch p {
		case "proc", "dev":
			return true
		case "sys":
			rest := strings.Join(parts[i+1:], "/")
			if rest == "" || rest == "devices" || rest == "devices/system" || rest == "fs" {
				return true
			}
			for _, keep := range []string{"devices/system/cpu", "devices/system/node", "devices/cpu_core", "devices/cpu_atom", "fs/cgroup"} {
				if rest == keep || strings.HasPrefix(rest, keep+"/") {
					return !strings.Contains(rest, "/cpuidle") && !strings.Contains(rest, "/cpufreq")
				}
			}
			return false
		}
	}
	return true
}

// comparedTypes are the types the corpus README compares.
var comparedTypes = []string{"Package", "L3Cache", "L2Cache", "L1dCache", "Core"}

// puSets is, per compared type, the sorted list of PU sets (as strings), and
// under "PU" the set of all PUs.
type puSets map[string][]string

var consoleLine = regexp.MustCompile(`^( *)(\S+?)(?:\([^)]*\))?(?: L#\d+)?(?: \((.*)\))?$`)
var pIndex = regexp.MustCompile(`^P#(\d+)`)

// parseConsole reads lstopo's console listing.
func parseConsole(r io.Reader) (puSets, error) {
	type open struct {
		indent int
		typ    string
		pus    []int
		os     int   // P# of a NUMANode
		numa   []int // P# of the NUMA nodes listed as this object's memory
	}
	var stack []*open
	out := puSets{}
	closeTo := func(indent int) {
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				stack[len(stack)-1].pus = append(stack[len(stack)-1].pus, top.pus...)
				if top.typ == "NUMANode" {
					stack[len(stack)-1].numa = append(stack[len(stack)-1].numa, top.os)
				}
				if top.typ == "MemCache" { // memory side: its nodes are its parent's
					stack[len(stack)-1].numa = append(stack[len(stack)-1].numa, top.numa...)
					top.numa = nil
				}
			}
			for _, n := range top.numa {
				out["NUMANode"] = append(out["NUMANode"], fmt.Sprintf("P#%d%s", n, intsKey(top.pus)))
			}
			for _, ct := range comparedTypes {
				if top.typ == ct {
					out[ct] = append(out[ct], intsKey(top.pus))
				}
			}
			if top.typ == "PU" {
				out["PU"] = append(out["PU"], intsKey(top.pus))
			}
		}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		m := consoleLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		indent := len(m[1])
		closeTo(indent)
		o := &open{indent: indent, typ: m[2]}
		if o.typ == "PU" {
			pm := pIndex.FindStringSubmatch(m[3])
			if pm == nil {
				return nil, fmt.Errorf("PU line without P#: %q", line)
			}
			n, _ := strconv.Atoi(pm[1])
			o.pus = []int{n}
		}
		if o.typ == "NUMANode" {
			pm := pIndex.FindStringSubmatch(m[3])
			if pm == nil {
				return nil, fmt.Errorf("NUMANode line without P#: %q", line)
			}
			o.os, _ = strconv.Atoi(pm[1])
		}
		stack = append(stack, o)
	}
	closeTo(0)
	for k := range out {
		sort.Strings(out[k])
	}
	return out, sc.Err()
}

func intsKey(v []int) string {
	s := append([]int{}, v...)
	sort.Ints(s)
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = strconv.Itoa(x)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// treeSets computes the same sets from a discovered tree.
func treeSets(t *Topology) puSets {
	out := puSets{}
	t.Walk(func(o *Object) bool {
		key := intsKey(o.CPUSet.Members())
		switch o.Type {
		case Package, L3Cache, L2Cache, L1dCache, Core:
			out[o.Type.String()] = append(out[o.Type.String()], key)
		case PU:
			out["PU"] = append(out["PU"], key)
		}
		return true
	})
	for _, n := range t.NUMANodes() {
		out["NUMANode"] = append(out["NUMANode"], fmt.Sprintf("P#%d%s", n.OSIndex, intsKey(n.CPUSet.Members())))
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out
}

func diffSets(want, got puSets) []string {
	var diffs []string
	for _, k := range append(append([]string{}, comparedTypes...), "PU") {
		w, g := strings.Join(want[k], " "), strings.Join(got[k], " ")
		if w != g {
			diffs = append(diffs, fmt.Sprintf("%s: lstopo %d objects [%s]\n\t\tours %d objects [%s]", k, len(want[k]), trunc(w), len(got[k]), trunc(g)))
		}
	}
	return diffs
}

// diffNUMA compares the NUMA nodes (OS index and the PUs of the object
// they are attached to) with lstopo's listing. The tree may lack the nodes
// that discovery noted as CPU-less: lstopo places them by their memory
// locality, which sysfs discovery does not read (notes of hwloc XML name
// the nodes the same way).
func diffNUMA(want, got puSets, notes ...[]string) string {
	g := strings.Join(got["NUMANode"], " ")
	if w := strings.Join(want["NUMANode"], " "); w == g {
		return ""
	}
	cpuless := map[string]bool{}
	cpulessRE := regexp.MustCompile(`NUMANode P#(\d+) has no CPU`)
	for _, ns := range notes {
		for _, n := range ns {
			if _, list, ok := strings.Cut(n, "NUMA nodes without online CPUs (memory only) are not in the CPU tree: "); ok {
				for _, x := range strings.Split(list, ",") {
					cpuless[x] = true
				}
			}
			if m := cpulessRE.FindStringSubmatch(n); m != nil {
				cpuless[m[1]] = true
			}
		}
	}
	var kept []string
	for _, n := range want["NUMANode"] {
		if !cpuless[strings.SplitN(strings.TrimPrefix(n, "P#"), "{", 2)[0]] {
			kept = append(kept, n)
		}
	}
	w := strings.Join(kept, " ")
	if w == g {
		return ""
	}
	return fmt.Sprintf("lstopo [%s]\n\t\tours [%s]", trunc(w), trunc(g))
}

func trunc(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// knownMismatches lists corpus machines that cannot match, with the reason.
var knownMismatches = map[string]string{
	// hwloc reads a cgroup v1 cpuset's configured sets (cpuset.cpus 0-175,
	// cpuset.mems 0,8,250-255); internal/cgroup, like the kernel's
	// enforcement, reads the effective ones first (0-87, node 0).
	"nvidiagpunumanodes": "lstopo takes cgroup v1's configured cpuset, we the effective one",
}

func TestCorpusMatchesLstopo(t *testing.T) {
	dir := corpusDir(t)
	archives, err := filepath.Glob(filepath.Join(dir, "*.tar.bz2"))
	if err != nil || len(archives) == 0 {
		t.Skipf("no snapshots in %s", dir)
	}
	var matched atomic.Int32
	t.Cleanup(func() {
		t.Logf("%d of %d snapshots match lstopo (%d listed as known mismatches)", matched.Load(), len(archives), len(knownMismatches))
	})
	for i, a := range archives {
		name := strings.TrimSuffix(filepath.Base(a), ".tar.bz2")
		// The lstopo round trips take three quarters of the time: every
		// eighth machine in the quick run, all with -tags fulltests.
		interop := fullTests || i%8 == 0
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cf, err := os.Open(filepath.Join(dir, name+".console"))
			if err != nil {
				t.Skipf("no listing: %v", err)
			}
			defer cf.Close()
			want, err := parseConsole(cf)
			if err != nil {
				t.Fatal(err)
			}
			root := untar(t, a, scratchDir(t))
			topo, err := FromSysfs(root)
			reason, known := knownMismatches[name]
			if err != nil {
				if known {
					t.Skipf("known mismatch (%s): %v", reason, err)
				}
				t.Fatalf("discovery failed: %v", err)
			}
			structure := strings.Contains(testOptions(t, filepath.Join(dir, name+".test")), "--filter all:structure")
			if structure {
				topo.KeepStructure()
			}
			diffs := diffSets(want, treeSets(topo))
			if d := diffNUMA(want, treeSets(topo), topo.Notes); d != "" && !known {
				t.Errorf("NUMA nodes differ: %s", d)
			}
			if len(diffs) == 0 && !known && interop {
				corpusInterop(t, topo, root, want, structure)
			}
			switch {
			case len(diffs) == 0 && known:
				t.Errorf("matches now; remove it from knownMismatches (%s)", reason)
			case len(diffs) == 0:
				matched.Add(1)
			case known:
				t.Skipf("known mismatch: %s", reason)
			default:
				var b strings.Builder
				_ = topo.WriteListing(&b, false)
				t.Errorf("does not match lstopo:\n\t%s\nnotes: %v\nours:\n%s", strings.Join(diffs, "\n\t"), topo.Notes, b.String())
			}
		})
	}
}

var cpusetLine = regexp.MustCompile(`^ *([A-Za-z0-9]+)(?:\([^)]*\))? (L#\d+).* (cpuset=\S+)$`)

// listedCPUSets reads a verbose listing with cpusets (lstopo -v --cpuset,
// or ours) into, per type name as shown, "L#n cpuset=MASK" in listing order;
// under "NUMANode@" it lists each NUMA node as "L#n@TYPE L#m", the object
// it is listed under.
func listedCPUSets(listing []byte) map[string][]string {
	out := map[string][]string{}
	type open struct {
		indent int
		name   string
	}
	var stack []open
	for _, line := range strings.Split(string(listing), "\n") {
		m := cpusetLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		out[m[1]] = append(out[m[1]], m[2]+" "+m[3])
		if m[1] == "NUMANode" {
			// The holder's type: a MemCache (not modelled) stands for its
			// own holder, and Groups are compared without their depth
			// and index (hwloc numbers them with its distance groups).
			holder := "Machine"
			for i := len(stack) - 1; i >= 0; i-- {
				if holder = stack[i].name; !strings.HasPrefix(holder, "MemCache") {
					break
				}
			}
			if strings.HasPrefix(holder, "Group") {
				holder = "Group"
			}
			out["NUMANode@"] = append(out["NUMANode@"], m[2]+"@"+holder)
		}
		stack = append(stack, open{indent, m[1] + " " + m[2]})
	}
	return out
}

// testOptions returns the lstopo options a corpus .test file names.
func testOptions(t testing.TB, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "options:"); ok {
			return v
		}
	}
	return ""
}

// corpusInterop checks, where lstopo is installed, that our XML read back
// through lstopo, and lstopo's own XML export (v2 and v1) of the snapshot,
// give the tree lstopo's listing shows.
func corpusInterop(t *testing.T, topo *Topology, root string, want map[string][]string, structure bool) {
	lstopo := ""
	for _, n := range []string{"lstopo-no-graphics", "lstopo"} {
		if p, err := exec.LookPath(n); err == nil {
			lstopo = p
			break
		}
	}
	if lstopo == "" {
		return // TestInteropSyntheticAndXML reports the skip
	}
	check := func(what string, args ...string) {
		out, err := exec.Command(lstopo, append(args, "--of", "xml", "-")...).Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Errorf("%s: lstopo %v: %v: %s", what, args, err, stderr)
			return
		}
		back, err := fromXML(out, what)
		if err != nil {
			t.Errorf("%s: %v", what, err)
			return
		}
		if structure {
			back.KeepStructure()
		}
		if d := diffSets(want, treeSets(back)); len(d) > 0 {
			t.Errorf("%s does not match lstopo's listing:\n\t%s", what, strings.Join(d, "\n\t"))
		}
		if d := diffNUMA(want, treeSets(back), back.Notes, topo.Notes); d != "" {
			t.Errorf("%s: NUMA nodes differ: %s", what, d)
		}
	}
	// lstopo --cpuset: every object's logical index and cpuset, in logical
	// order, as our listing prints them (this checks the order, the
	// logical indexes and hwloc's bitmap format).
	args := []string{"--if", "fsroot", "--input", root, "-v", "--cpuset", "--of", "console"}
	if structure {
		args = append(args, "--filter", "all:structure")
	}
	if out, err := exec.Command(lstopo, append(args, "-")...).Output(); err != nil {
		t.Errorf("lstopo %v: %v", args, err)
	} else {
		var ours bytes.Buffer
		if err := topo.WriteListing(&ours, true); err != nil {
			t.Fatal(err)
		}
		hw, us := listedCPUSets(out), listedCPUSets(ours.Bytes())
		for _, typ := range []string{"Package", "Die", "L3Cache", "L2Cache", "L1dCache", "L1iCache", "Core", "PU", "NUMANode", "NUMANode@"} {
			if typ == "L1iCache" && structure {
				continue // that snapshot's listing was made with --no-icaches
			}
			if strings.HasPrefix(typ, "NUMANode") && strings.Contains(strings.Join(topo.Notes, " "), "without online CPUs") {
				continue // CPU-less nodes: see diffNUMA
			}
			if w, g := strings.Join(hw[typ], " "), strings.Join(us[typ], " "); w != g {
				t.Errorf("%s objects in logical order:\n\t\tlstopo --cpuset [%s]\n\t\tours [%s]", typ, trunc(w), trunc(g))
			}
		}
	}
	// lstopo --no-caches lists the tree our RemoveCaches leaves.
	if !structure {
		bare, err := FromSysfs(root)
		if err != nil {
			t.Fatal(err)
		}
		bare.RemoveCaches()
		var ours bytes.Buffer
		if err := bare.WriteListing(&ours, true); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(lstopo, "--if", "fsroot", "--input", root, "--no-caches", "-v", "--cpuset", "--of", "console", "-").Output()
		if err != nil {
			t.Errorf("lstopo --no-caches: %v", err)
		}
		hw, us := listedCPUSets(out), listedCPUSets(ours.Bytes())
		for _, typ := range []string{"Package", "Die", "Core", "PU", "NUMANode", "NUMANode@"} {
			if strings.HasPrefix(typ, "NUMANode") && strings.Contains(strings.Join(topo.Notes, " "), "without online CPUs") {
				continue
			}
			if w, g := strings.Join(hw[typ], " "), strings.Join(us[typ], " "); w != g {
				t.Errorf("--no-caches: %s objects in logical order:\n\t\tlstopo [%s]\n\t\tours [%s]", typ, trunc(w), trunc(g))
			}
		}
	}
	// lstopo's own XML export of the snapshot, v2 and v1, read by us.
	check("lstopo's v2 XML export", "--if", "fsroot", "--input", root)
	check("lstopo's v1 XML export", "--if", "fsroot", "--input", root, "--export-xml-flags", "v1")
	var buf bytes.Buffer
	if err := topo.WriteXML(&buf); err != nil {
		t.Fatal(err)
	}
	ours := filepath.Join(t.TempDir(), "ours.xml")
	if err := os.WriteFile(ours, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	check("our XML through lstopo", "--input", ours)
	// lstopo's console listing of our XML.
	if out, err := exec.Command(lstopo, "--input", ours, "-v", "--of", "console", "-").Output(); err != nil {
		t.Errorf("lstopo --input ours.xml --of console: %v", err)
	} else if listed, err := parseConsole(bytes.NewReader(out)); err != nil {
		t.Errorf("lstopo's console listing of our XML: %v", err)
	} else {
		if d := diffSets(want, listed); len(d) > 0 {
			t.Errorf("lstopo's listing of our XML does not match:\n\t%s", strings.Join(d, "\n\t"))
		}
		if d := diffNUMA(listed, treeSets(topo), topo.Notes); d != "" {
			t.Errorf("lstopo's listing of our XML: NUMA nodes differ: %s", d)
		}
	}
	// Our synthetic string read by lstopo gives the same tree (PUs are
	// renumbered depth-first, so the shapes are compared); where we find
	// the tree asymmetric, lstopo refuses to export one too.
	syn, synErr := topo.Synthetic()
	hwSyn, hwErr := exec.Command(lstopo, "--input", ours, "--of", "synthetic", "-").Output()
	switch {
	case synErr == nil:
		out, err := exec.Command(lstopo, "--input", syn, "--of", "xml", "-").Output()
		if err != nil {
			t.Errorf("lstopo --input %q: %v", syn, err)
			break
		}
		back, err := fromXML(out, "synthetic")
		if err != nil {
			t.Errorf("lstopo's XML of our synthetic %q: %v", syn, err)
		} else if g, w := back.Root.Canonical(), topo.Root.Canonical(); g != w {
			t.Errorf("our synthetic %q through lstopo is %s, want %s", syn, g, w)
		} else if g, w := len(back.NUMANodes()), len(topo.NUMANodes()); g != w {
			t.Errorf("our synthetic %q through lstopo has %d NUMA nodes, want %d", syn, g, w)
		}
		if own, err := FromSynthetic(syn); err != nil {
			t.Errorf("our synthetic %q does not read back: %v", syn, err)
		} else if g, w := own.Root.Canonical(), topo.Root.Canonical(); g != w {
			t.Errorf("our synthetic %q reads back as %s, want %s", syn, g, w)
		} else if g, w := len(own.NUMANodes()), len(topo.NUMANodes()); g != w {
			t.Errorf("our synthetic %q reads back with %d NUMA nodes, want %d", syn, g, w)
		}
		if hwErr != nil {
			t.Errorf("we export synthetic %q but lstopo refuses our XML's: %v", syn, hwErr)
		}
	case hwErr == nil:
		t.Errorf("we refuse a synthetic string (%v) but lstopo exports %q", synErr, strings.TrimSpace(string(hwSyn)))
	}
}
