package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run executes the CLI in-process and returns stdout and the error.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestTopoSyntheticJSONRoundTrip(t *testing.T) {
	syn := "pack:2 l3:2 core:4 pu:2"
	js, err := run(t, "topo", "--synthetic", syn, "--json")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "tree.json")
	if err := os.WriteFile(file, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := run(t, "topo", "--topology", file, "--json")
	if err != nil {
		t.Fatal(err)
	}
	if back != js {
		t.Errorf("--topology read back a different tree:\n%s\nvs\n%s", back, js)
	}
	listing, err := run(t, "topo", "--topology", file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(listing, "Synthetic: Package:2 L3Cache:2 Core:4 PU:2\n") {
		t.Errorf("a symmetric tree prints its synthetic string:\n%s", listing)
	}
	if !strings.Contains(listing, "Allowed CPUs: 0-31 (32 PUs)") {
		t.Errorf("listing lacks the allowed CPUs:\n%s", listing)
	}
}

func TestTopoLive(t *testing.T) {
	out, err := run(t, "topo")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Machine\n", "PU L#0", "Allowed CPUs:", "CPU model (cpuid):"} {
		if !strings.Contains(out, want) {
			t.Errorf("live topo lacks %q:\n%s", want, out)
		}
	}
}

// TestBadInputErrors checks that bad input gives one clear line naming the
// value, never a panic.
func TestBadInputErrors(t *testing.T) {
	dir := t.TempDir()
	badJSON := filepath.Join(dir, "bad.json")
	badXML := filepath.Join(dir, "bad.xml")
	os.WriteFile(badJSON, []byte(`{"type":"Machine",`), 0o644)
	os.WriteFile(badXML, []byte(`<topology><object`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"topo", "--sysfs-root", filepath.Join(dir, "nope")}, "nope"},
		{[]string{"topo", "--sysfs-root", dir}, "has no sys/devices/system/cpu"},
		{[]string{"topo", "--synthetic", "pack:2 cpu:4"}, `unknown type "cpu"`},
		{[]string{"topo", "--xml", badXML}, "invalid hwloc XML"},
		{[]string{"topo", "--xml", filepath.Join(dir, "none.xml")}, "none.xml"},
		{[]string{"topo", "--topology", badJSON}, "invalid topology JSON"},
		{[]string{"topo", "--synthetic", "pu:2", "--xml", badXML}, "choose one topology source"},
		{[]string{"topo", "extra"}, "unknown command"},
	} {
		_, err := run(t, c.args...)
		if err == nil {
			t.Errorf("%v: no error", c.args)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: error %q, want one line containing %q", c.args, msg, c.want)
		}
	}
}

func TestVersion(t *testing.T) {
	out, err := run(t, "version", "--json")
	if err != nil || !strings.Contains(out, `"go": "go`) {
		t.Errorf("version --json = %q, %v", out, err)
	}
}
