package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func sample(t *testing.T) *File {
	t.Helper()
	m := host("0-7")
	m.Topology, m.TopologyHash = "pack:2 core:2 pu:2", "0123456789abcdef"
	return &File{
		Schema: Schema, Tool: Tool{"barriertune", "test"}, Time: time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC),
		Machine: m, Budget: "1m0s", Cuts: []string{},
		Floor: []Floor{{Level: "Core", CPUs: [2]int{0, 1}, MedianNs: 20}},
		Threads: []Threads{
			{Threads: 2, Source: Measured, Complete: true, Best: &Choice{CPUs: []int{0, 1}, MedianNs: 50, Spec: Spec{Algorithm: "dissemination", Policy: "spin"}}, Measurements: []Measurement{}},
			{Threads: 4, Source: Measured, Complete: true, Best: &Choice{CPUs: []int{0, 1, 2, 3}, MedianNs: 90, Spec: Spec{Algorithm: "mcs", Policy: "spin"}}, Measurements: []Measurement{}},
		},
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	good, _ := json.Marshal(sample(t))
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"truncated.json": {good[:len(good)/2], "not valid JSON (truncated or corrupted"},
		"garbage.json":   {[]byte("\x00\x01binary"), "not a barriertune results file (not a JSON object)"},
		"README.md":      {[]byte("# barriertune\n\nA barrier autotuner.\n"), "not a barriertune results file (not a JSON object)"},
		"foreign.json":   {[]byte(`{"name": "something else"}`), `no "schema" field`},
		"future.json":    {[]byte(`{"schema": "barriertune.results/v9"}`), `schema "barriertune.results/v9"`},
		"array.json":     {[]byte(`[1, 2]`), "not a barriertune results file"},
		"extra.json":     {[]byte(strings.Replace(string(good), `"partial"`, `"colour": 1, "partial"`, 1)), "does not match"},
		"nofinger.json":  {[]byte(`{"schema": "barriertune.results/v1"}`), "fingerprint is incomplete"},
		"badcount.json":  {[]byte(strings.Replace(string(good), `"threads":4,`, `"threads":2,`, 1)), "appears twice"},
	} {
		_, err := Read(write(name, c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line naming the file and saying %q", name, err, c.want)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestMismatch(t *testing.T) {
	a := sample(t).Machine
	if why := a.Mismatch(a); why != "" {
		t.Errorf("a machine mismatches itself: %s", why)
	}
	b := host("0-15")
	b.Topology, b.TopologyHash = "pack:4 core:2 pu:2", "fedcba9876543210"
	why := a.Mismatch(b)
	if !strings.Contains(why, "topology") || !strings.Contains(why, "allowed CPUs") {
		t.Errorf("mismatch = %q", why)
	}
	b = a
	b.CPU.Model++
	if why := a.Mismatch(b); !strings.Contains(why, "CPU") {
		t.Errorf("another CPU model: %q", why)
	}
	b = a
	b.Kernel, b.GOMAXPROCS = "other", 99
	if why := a.Mismatch(b); why != "" {
		t.Errorf("kernel and GOMAXPROCS must not matter: %q", why)
	}
}

func TestLookupNearest(t *testing.T) {
	f := sample(t)
	if f.Lookup(4).Best.Algorithm != "mcs" || f.Lookup(3) != nil {
		t.Error("Lookup")
	}
	for n, want := range map[int]int{1: 2, 2: 2, 3: 4, 4: 4, 100: 4} {
		if got := f.Nearest(n).Threads; got != want {
			t.Errorf("Nearest(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/tmp/xdg-test")
	p, err := defaultPath()
	if err != nil || p != "/tmp/xdg-test/barriertune/results.json" {
		t.Errorf("defaultPath = %q, %v", p, err)
	}
}

// TestReadsMinorVersions: v1 files (without source) read as measured,
// newer minors' unknown fields are ignored, this minor's are refused,
// other majors are refused.
func TestReadsMinorVersions(t *testing.T) {
	data, err := json.Marshal(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	cur := strings.TrimPrefix(Schema, "barriertune.") // this minor, e.g. results/v1.4
	v1 := strings.Replace(string(data), `"schema":"`+Schema+`"`, `"schema":"barriertune.results/v1"`, 1)
	v1 = strings.ReplaceAll(v1, `"source":"measured",`, "")
	f, err := Parse([]byte(v1), "v1")
	if err != nil {
		t.Fatalf("v1 file: %v", err)
	}
	if f.Threads[0].Source != Measured {
		t.Errorf("v1 entry source %q, want measured", f.Threads[0].Source)
	}
	extra := strings.Replace(string(data), `"partial":`, `"future_field":1,"partial":`, 1)
	minor, err := strconv.Atoi(strings.TrimPrefix(cur, "results/v1."))
	if err != nil {
		t.Fatalf("Schema %q is not v1.N", Schema)
	}
	next := fmt.Sprintf("results/v1.%d", minor+1)
	if _, err := Parse([]byte(strings.Replace(extra, cur, next, 1)), next); err != nil {
		t.Errorf("newer minor with an unknown field: %v", err)
	}
	if _, err := Parse([]byte(extra), Schema); err == nil || !strings.Contains(err.Error(), "future_field") {
		t.Errorf("unknown field in this minor: %v", err)
	}
	for _, bad := range []string{"results/v2", "results/v1.x", "results/v1.01", "results/v1."} {
		_, err := Parse([]byte(strings.Replace(string(data), cur, bad, 1)), bad)
		if err == nil || !strings.Contains(err.Error(), "has schema") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestReadsV12WithoutHostStates: a v1.2 file (before host states) reads
// under the v1.3 reader with the new fields absent; a v1.3 file keeps
// them.
func TestReadsV12WithoutHostStates(t *testing.T) {
	f := sample(t)
	f.Schema = "barriertune.results/v1.2"
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Parse(data, "v1.2")
	if err != nil {
		t.Fatalf("v1.2 file: %v", err)
	}
	if g.HostChange != "" || len(g.Floor) > 0 && g.Floor[0].States != nil || g.Threads[0].Repeated != nil {
		t.Errorf("v1.2 file read with v1.3 fields: %+v", g)
	}
	f.Schema = Schema
	f.HostChange = "moved"
	data, _ = json.Marshal(f)
	if g, err := Parse(data, "v1.3"); err != nil || g.HostChange != "moved" {
		t.Errorf("v1.3 file with host_change: %v, %v", g, err)
	}
}
