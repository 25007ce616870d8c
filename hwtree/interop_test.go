package hwtree

import (
	"bytes"

	"github.com/barriertune/barriertune/cpuset"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// lstopoPath returns the installed lstopo, or skips: the interop tests need
// hwloc's own reader (apt-get install -y hwloc).
func lstopoPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"lstopo-no-graphics", "lstopo"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("lstopo is not installed (apt-get install -y hwloc); the hwloc interop tests need it")
	return ""
}

var interopSynthetic = []string{
	"pack:2 l3:1(size=33554432) core:2 pu:2",
	"pack:2 l3:2(size=16777216) core:4 pu:2",
	"pack:1 core:4 pu:1",
	"numa:2 pack:1 l2:2(size=4194304) core:2 pu:2",
	"pack:2 numa:2 core:2 pu:1",
	"group:2 pack:2 core:2 pu:2",
	"pack:1 die:2 l3:1(size=16777216) l2:4(size=4194304) l1d:1(size=32768) l1i:1(size=32768) core:1 pu:2",
	"pack:2 [numa] core:2 pu:1",
	"[numa] pack:2 l3:1(size=8388608) [numa] [numa] core:2 pu:2",
	"pack:2 core:2 l1d:2(size=32768) pu:1",
	"pack:1 l3:2(size=8388608) core:2 [numa] pu:1",
}

// numaForm lists the NUMA nodes as "cpuset@type of the object holding
// them" (a memory node is held by its parent, a NUMA level by itself).
func numaForm(t *Topology) string {
	var out []string
	for _, n := range t.NUMANodes() {
		holder := "level"
		if n.Parent != nil && !slices.Contains(n.Parent.Children, n) {
			holder = n.Parent.Type.String()
		}
		out = append(out, n.CPUSet.String()+"@"+holder)
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// lstopoXML runs lstopo --input IN and returns its XML export, read back.
func lstopoXML(t *testing.T, lstopo, in string, extra ...string) *Topology {
	t.Helper()
	args := append([]string{"--input", in, "--of", "xml"}, extra...)
	args = append(args, "-")
	out, err := exec.Command(lstopo, args...).Output()
	if err != nil {
		t.Fatalf("lstopo %v: %v", args, err)
	}
	topo, err := fromXML(out, "lstopo-export.xml")
	if err != nil {
		t.Fatalf("reading lstopo's export of %s: %v", in, err)
	}
	return topo
}

func TestInteropSyntheticAndXML(t *testing.T) {
	lstopo := lstopoPath(t)
	for _, s := range interopSynthetic {
		ours := mustSynthetic(t, s)
		want := ours.Root.Canonical()
		// lstopo's own XML of the same synthetic string, v2 and v1.
		for _, flags := range [][]string{nil, {"--export-xml-flags", "v1"}} {
			back := lstopoXML(t, lstopo, s, flags...)
			if got := back.Root.Canonical(); got != want {
				t.Errorf("%q: lstopo export %v reads as %s, ours is %s", s, flags, got, want)
			}
			if got, want := numaForm(back), numaForm(ours); got != want && flags == nil { // v1 holds one node per object
				t.Errorf("%q: lstopo export %v has NUMA nodes %s, ours %s", s, flags, got, want)
			}
		}
		// Our synthetic output read by lstopo.
		syn, err := ours.Synthetic()
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		back := lstopoXML(t, lstopo, syn)
		if got := back.Root.Canonical(); got != want {
			t.Errorf("%q: our synthetic %q through lstopo reads as %s, want %s", s, syn, got, want)
		}
		if got, want := numaForm(back), numaForm(ours); got != want {
			t.Errorf("%q: our synthetic %q through lstopo has NUMA nodes %s, ours %s", s, syn, got, want)
		}
		// Our XML read by lstopo.
		var buf bytes.Buffer
		if err := ours.WriteXML(&buf); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "ours.xml")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		// lstopo --restrict to the first half of the PUs lists the objects
		// (logical index and cpuset) our Restrict keeps.
		restricted := mustSynthetic(t, s)
		cpus := restricted.CPUs()
		half := cpuset.Of(cpus[:max(1, len(cpus)/2)]...)
		if err := restricted.Restrict(half); err != nil {
			t.Fatal(err)
		}
		var listing bytes.Buffer
		if err := restricted.WriteListing(&listing, true); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(lstopo, "--input", s, "--restrict", hwlocMask(half), "-v", "--cpuset", "--of", "console", "-").Output()
		if err != nil {
			t.Fatalf("lstopo --restrict: %v", err)
		}
		hw, us := listedCPUSets(out), listedCPUSets(listing.Bytes())
		for _, typ := range []string{"Package", "Die", "L3Cache", "L2Cache", "L1dCache", "L1iCache", "Core", "PU", "NUMANode", "NUMANode@"} {
			if w, g := strings.Join(hw[typ], " "), strings.Join(us[typ], " "); w != g {
				t.Errorf("%q restricted to %s: %s objects: lstopo [%s], ours [%s]", s, half, typ, w, g)
			}
		}
		back = lstopoXML(t, lstopo, path)
		if got := back.Root.Canonical(); got != want {
			t.Errorf("%q: our XML through lstopo reads as %s, want %s", s, got, want)
		}
		if got, want := numaForm(back), numaForm(ours); got != want {
			t.Errorf("%q: our XML through lstopo has NUMA nodes %s, ours %s", s, got, want)
		}
	}
}
