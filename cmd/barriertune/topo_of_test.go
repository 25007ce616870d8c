package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// topoOut runs `barriertune topo ARGS` in-process and fails on an error.
func topoOut(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(t, append([]string{"topo"}, args...)...)
	if err != nil {
		t.Fatalf("topo %v: %v", args, err)
	}
	return out
}

// listingOf is the console listing without the trailer lines.
func listingOf(out string) string {
	body, _, _ := strings.Cut(out, "\n\n")
	return body
}

func TestTopoOutputFormatsReadBack(t *testing.T) {
	dir := t.TempDir()
	for _, syn := range []string{"pack:2 l3:1(size=16M) numa:2 core:2 pu:2", "pack:2 [numa] core:2 l1d:2(size=32K) pu:1", "group:2 pack:1 core:3 pu:1"} {
		want := listingOf(topoOut(t, "--synthetic", syn))
		// --of xml, read back by --xml.
		xml := filepath.Join(dir, "t.xml")
		if err := os.WriteFile(xml, []byte(topoOut(t, "--synthetic", syn, "--of", "xml")), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := listingOf(topoOut(t, "--xml", xml)); got != want {
			t.Errorf("%q: --of xml read back by --xml lists\n%s\nwant\n%s", syn, got, want)
		}
		// --of synthetic, read back by --synthetic.
		s := strings.TrimSpace(topoOut(t, "--synthetic", syn, "--of", "synthetic"))
		if got := listingOf(topoOut(t, "--synthetic", s)); got != want {
			t.Errorf("%q: --of synthetic %q read back lists\n%s\nwant\n%s", syn, s, got, want)
		}
		// --of json and --json, read back by --topology.
		if a, b := topoOut(t, "--synthetic", syn, "--of", "json"), topoOut(t, "--synthetic", syn, "--json"); a != b {
			t.Errorf("%q: --of json and --json differ", syn)
		}
		js := filepath.Join(dir, "t.json")
		if err := os.WriteFile(js, []byte(topoOut(t, "--synthetic", syn, "--of", "json")), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := listingOf(topoOut(t, "--topology", js)); got != want {
			t.Errorf("%q: --of json read back by --topology lists\n%s\nwant\n%s", syn, got, want)
		}
		// lstopo reads our XML and synthetic string into the same listing.
		if lstopo := lstopoBinary(); lstopo != "" {
			for _, in := range []string{xml, s} {
				out, err := exec.Command(lstopo, "--input", in, "--of", "xml", "-").Output()
				if err != nil {
					t.Errorf("lstopo --input %s: %v", in, err)
					continue
				}
				back := filepath.Join(dir, "back.xml")
				if err := os.WriteFile(back, out, 0o644); err != nil {
					t.Fatal(err)
				}
				// hwloc gives synthetic caches a line size of 64.
				if got := strings.ReplaceAll(listingOf(topoOut(t, "--xml", back)), " linesize=64", ""); got != want {
					t.Errorf("%q: lstopo's reading of %s lists\n%s\nwant\n%s", syn, in, got, want)
				}
			}
		}
	}
}

func TestTopoJSONSaysXMLVersion(t *testing.T) {
	// `topo --json` says which hwloc XML version a file is in.
	dir := t.TempDir()
	for version, head := range map[string]string{"3.0": `<topology version="3.0">`, "1.x": `<topology>`} {
		path := filepath.Join(dir, "v.xml")
		x := head + `<object type="Machine" os_index="0"><object type="Core" os_index="0"><object type="PU" os_index="0"/></object></object></topology>`
		if err := os.WriteFile(path, []byte(x), 0o644); err != nil {
			t.Fatal(err)
		}
		if js := topoOut(t, "--xml", path, "--json"); !strings.Contains(js, `"hwloc_xml_version": "`+version+`"`) {
			t.Errorf("--json of a %s file lacks its version:\n%s", version, js)
		}
		if out := topoOut(t, "--xml", path); !strings.Contains(out, "hwloc XML version: "+version+"\n") {
			t.Errorf("listing of a %s file lacks its version:\n%s", version, out)
		}
	}
	if js := topoOut(t, "--synthetic", "pu:2", "--json"); strings.Contains(js, "hwloc_xml_version") {
		t.Errorf("a synthetic tree claims an XML version:\n%s", js)
	}
}

func TestTopoFilters(t *testing.T) {
	syn := "pack:2 l3:1(size=16M) core:2 pu:2"
	if got, want := topoOut(t, "--synthetic", syn, "--only", "CORE"), "Core L#0 (P#0)\nCore L#1 (P#1)\nCore L#2 (P#2)\nCore L#3 (P#3)\n"; got != want {
		t.Errorf("--only CORE:\n%s\nwant\n%s", got, want)
	}
	if got, want := topoOut(t, "--synthetic", syn, "--only", "l3", "--cpuset"), "L3Cache L#0 (size=16MiB) cpuset=0x0000000f\nL3Cache L#1 (size=16MiB) cpuset=0x000000f0\n"; got != want {
		t.Errorf("--only l3 --cpuset:\n%s\nwant\n%s", got, want)
	}
	if got, want := topoOut(t, "--synthetic", syn, "--only", "numa"), "NUMANode L#0 (P#0)\n"; got != want {
		t.Errorf("--only numa: %q, want %q", got, want)
	}
	got := listingOf(topoOut(t, "--synthetic", syn, "--restrict", "2-5", "--no-caches"))
	want := "Machine\n  NUMANode L#0 (P#0)\n  Package L#0 (P#0)\n    Core L#0 (P#1)\n      PU L#0 (P#2)\n      PU L#1 (P#3)\n  Package L#1 (P#1)\n    Core L#1 (P#2)\n      PU L#2 (P#4)\n      PU L#3 (P#5)"
	if got != want {
		t.Errorf("--restrict 2-5 --no-caches:\n%s\nwant\n%s", got, want)
	}
	if s := strings.TrimSpace(topoOut(t, "--synthetic", syn, "--restrict", "2-5", "--no-caches", "--of", "synthetic")); s != "Package:2 Core:1 PU:2" {
		t.Errorf("--of synthetic after the filters: %q", s)
	}
}

func TestTopoFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--of", "pdf"}, exitUsage, `--of "pdf": unknown output format (accepted: console, json, xml, synthetic)`},
		{[]string{"--only", "cpu"}, exitUsage, `unknown object type "cpu"`},
		{[]string{"--restrict", "3-1"}, exitUsage, `--restrict`},
		{[]string{"--restrict", "7"}, exitUsage, `none is in this topology`},
		{[]string{"--json", "--of", "xml"}, exitUsage, "--json and --of xml given together"},
		{[]string{"--of", "xml", "--only", "core"}, exitUsage, "cannot go with --of xml"},
		{[]string{"--of", "json", "--cpuset"}, exitUsage, "cannot go with --of json"},
		{[]string{"--restrict", "0-2", "--of", "synthetic"}, exitFailure, "not symmetric at depth 1 (the Package level): Package L#0 and Package L#1 differ"},
	} {
		_, err := run(t, append([]string{"topo", "--synthetic", "pack:2 core:2 pu:1"}, c.args...)...)
		if err == nil || exitCode(err) != c.code || !strings.Contains(err.Error(), c.want) {
			t.Errorf("topo %v: %v (exit %d), want exit %d and an error saying %q", c.args, err, exitCode(err), c.code, c.want)
		}
	}
}

// lstopoBinary is the installed lstopo, or "" (then the checks through
// hwloc are left out; hwtree's interop tests report the skip).
func lstopoBinary() string {
	for _, name := range []string{"lstopo-no-graphics", "lstopo"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}
