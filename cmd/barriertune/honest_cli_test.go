package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// One test per class of the third round of a new user's rough edges:
// output that says only what is true, corrupt files refused, every
// malformed flag value a usage error.

// TestPlanFloorsArePairs: check --plan names each floor's two CPUs as a
// pair, as show does ("Package 0,8"), never as a CPU range.
func TestPlanFloorsArePairs(t *testing.T) {
	out, err := run(t, "check", "--plan", "--synthetic", "pack:2 l3:2 core:4 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "floors first:") {
			line = l
		}
	}
	if line != "floors first: Core 0,1, L3Cache 0,2, Package 0,8, Machine 0,16" {
		t.Errorf("floors line %q", line)
	}
}

// TestCorruptTimeRefused: show and export refuse a file with a negative
// time, naming the field; exit 1.
func TestCorruptTimeRefused(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("BARRIERTUNE_RESULTS", "")
	data, err := os.ReadFile(exportTestdata)
	if err != nil {
		t.Fatal(err)
	}
	bad := regexp.MustCompile(`"median_ns": [0-9.]+`).ReplaceAllString(string(data), `"median_ns": -5`)
	p := filepath.Join(t.TempDir(), "neg.json")
	if err := os.WriteFile(p, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"show", p}, {"show", p, "--threads", "2"}, {"export", "--format", "kv", p}, {"plot", "-o", filepath.Join(t.TempDir(), "x.svg"), p}} {
		code, _, errOut := execLine(args...)
		if code != 1 || !strings.Contains(errOut, "median_ns is -5") || !strings.Contains(errOut, "corrupt") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// TestMalformedFlagValuesExit2: a flag value that cannot be read is a
// usage error (exit 2), whichever command and parser read it.
func TestMalformedFlagValuesExit2(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("BARRIERTUNE_RESULTS", "")
	p := copyFile(t, exportTestdata, t.TempDir())
	for _, args := range [][]string{
		{"show", p, "--threads", "2", "--allowed", ""},
		{"show", p, "--allowed", ""},
		{"show", p, "--allowed", "x"},
		{"export", "--format", "kv", p, "--allowed", ""},
		{"plot", "-o", filepath.Join(t.TempDir(), "x.svg"), p, "--allowed", "0-"},
		{"topo", "--synthetic", "pack:x"},
		{"topo", "--synthetic", ""},
		{"sets", "--synthetic", "pack:x", "--threads", "2"},
		{"check", "--plan", "--synthetic", "pu:0"},
		{"topo", "--xml", ""},
		{"bench", "--cpus", "a,b"},
		{"bench", "--skew", "x"},
	} {
		code, _, errOut := execLine(args...)
		if code != 2 {
			t.Errorf("%q: exit %d, want 2 (malformed flag value); stderr %q", args, code, errOut)
		}
	}
}
