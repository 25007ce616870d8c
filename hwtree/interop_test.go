package hwtree

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
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
	topo, err := FromXML(out, "lstopo-export.xml")
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
			if got := lstopoXML(t, lstopo, s, flags...).Root.Canonical(); got != want {
				t.Errorf("%q: lstopo export %v reads as %s, ours is %s", s, flags, got, want)
			}
		}
		// Our synthetic output read by lstopo.
		syn, err := ours.Synthetic()
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if got := lstopoXML(t, lstopo, syn).Root.Canonical(); got != want {
			t.Errorf("%q: our synthetic %q through lstopo reads as %s, want %s", s, syn, got, want)
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
		if got := lstopoXML(t, lstopo, path).Root.Canonical(); got != want {
			t.Errorf("%q: our XML through lstopo reads as %s, want %s", s, got, want)
		}
	}
}
