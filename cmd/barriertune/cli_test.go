package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/internal/osal"
)

// run executes the CLI in-process and returns stdout and the error.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := testRootCmd()
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
		{[]string{"topo", "extra"}, `stray argument "extra"`},
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

func TestBenchJSON(t *testing.T) {
	out, err := run(t, "bench", "--algorithm", "dissemination", "--threads", "3", "--samples", "3", "--sample-time", "20us", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Results []struct {
			Algorithm     string  `json:"algorithm"`
			Policy        string  `json:"policy"`
			Threads       int     `json:"threads"`
			Pinned        bool    `json:"pinned"`
			CPUs          []int   `json:"cpus"`
			RequestedCPUs []int   `json:"requested_cpus"`
			Unpinned      string  `json:"unpinned"`
			MedianNs      float64 `json:"median_ns"`
			MinNs         float64 `json:"min_ns"`
			MaxNs         float64 `json:"max_ns"`
			Reps          int     `json:"reps"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.Results) != 1 {
		t.Fatalf("want one result:\n%s", out)
	}
	r := doc.Results[0]
	if r.Algorithm != "dissemination" || r.Threads != 3 || r.Reps != 3 || !(r.MinNs <= r.MedianNs && r.MedianNs <= r.MaxNs) {
		t.Errorf("result %+v", r)
	}
	// "pinned" and the CPU list agree: the CPUs of pinned threads, else
	// none, with the CPUs asked for and why they were not used.
	switch {
	case r.Pinned && (len(r.CPUs) != 3 || r.RequestedCPUs != nil || r.Unpinned != ""):
		t.Errorf("pinned result %+v", r)
	case !r.Pinned && (r.CPUs != nil || len(r.RequestedCPUs) != 3 || !strings.Contains(r.Unpinned, "goroutines")):
		t.Errorf("unpinned result %+v", r)
	}
	// Three threads on two CPUs, round-robin from the lowest: oversubscribed.
	if runtime.NumCPU() == 2 && (r.Pinned || r.RequestedCPUs[0] != r.RequestedCPUs[2]) {
		t.Errorf("round-robin placement %+v", r)
	}
}

func TestBenchText(t *testing.T) {
	out, err := run(t, "bench", "--threads", "2", "--samples", "3", "--sample-time", "20us")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range catalog.Names() {
		if !strings.Contains(out, name) {
			t.Errorf("bench all lacks %s:\n%s", name, out)
		}
	}
}

func TestBenchPingPongJSON(t *testing.T) {
	if liveCPUs(t) < 2 || runtime.GOMAXPROCS(0) < 2 {
		t.Skip("ping-pong needs two allowed CPUs and GOMAXPROCS >= 2")
	}
	out, err := run(t, "bench", "--pingpong", "--cpus", "0,1", "--samples", "3", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		PingPong struct {
			CPUs     []int   `json:"cpus"`
			MedianNs float64 `json:"median_ns"`
		} `json:"pingpong"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.PingPong.CPUs) != 2 || doc.PingPong.MedianNs <= 0 {
		t.Errorf("pingpong JSON %q: %v", out, err)
	}
}

func TestBenchErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--algorithm", "fastest"}, `unknown barrier algorithm "fastest"`},
		{[]string{"bench", "--policy", "busy"}, `unknown waiting policy "busy"`},
		{[]string{"bench", "--threads", "-2"}, "--threads -2"},
		{[]string{"bench", "--threads", "3", "--cpus", "0,1"}, "one CPU per thread"},
		{[]string{"bench", "--cpus", "0,x"}, `"x" is not a CPU index`},
		{[]string{"bench", "--cpus", "3-1"}, "ends before it starts"},
		{[]string{"bench", "--cpus", "0,4000"}, "CPU 4000 is not allowed"},
		{[]string{"bench", "--pingpong", "--cpus", "0"}, "two CPUs"},
		{[]string{"bench", "--pingpong", "--cpus", "1,1"}, "two different CPUs"},
	} {
		_, err := run(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line containing %q", c.args, err, c.want)
		}
	}
}

func TestSetsCountJSON(t *testing.T) {
	out, err := run(t, "sets", "--synthetic", "pack:2 core:4 pu:2", "--count", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Method string   `json:"method"`
		PUs    int      `json:"pus"`
		Counts []string `json:"counts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Method != "exact" || doc.PUs != 16 || len(doc.Counts) != 17 || doc.Counts[2] != "3" {
		t.Errorf("count JSON %+v", doc)
	}
	text, err := run(t, "sets", "--synthetic", "pack:2 core:4 pu:2", "--count")
	if err != nil || !strings.Contains(text, "paper method 45, exact 120") {
		t.Errorf("count text lacks the totals: %v\n%s", err, text)
	}
}

func TestSetsJSONAllSources(t *testing.T) {
	dir := t.TempDir()
	tree := filepath.Join(dir, "t.json")
	js, _ := run(t, "topo", "--synthetic", "pack:2 core:2 pu:2", "--json")
	os.WriteFile(tree, []byte(js), 0o644)
	for _, src := range [][]string{
		{},
		{"--synthetic", "pack:2 core:2 pu:2"},
		{"--topology", tree},
		{"--xml", "../../hwtree/testdata/synthetic-pack2.xml"},
		{"--sysfs-root", "../../hwtree/testdata/sysfs/cgroup-2pkg"},
	} {
		if len(src) == 0 && liveCPUs(t) < 2 {
			continue // the live machine has one allowed CPU: no placement of 2 threads
		}
		args := append([]string{"sets", "--threads", "2", "--json"}, src...)
		out, err := run(t, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		var doc struct {
			Method string `json:"method"`
			Sets   []struct {
				Threads int    `json:"threads"`
				CPUs    []int  `json:"cpus"`
				Label   string `json:"label"`
				Config  string `json:"config"`
			} `json:"sets"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Sets) == 0 {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		for _, s := range doc.Sets {
			if s.Threads != 2 || len(s.CPUs) != 2 || !strings.HasPrefix(s.Config, "(") {
				t.Errorf("%v: set %+v", args, s)
			}
		}
	}
}

func TestSetsPaperMethod(t *testing.T) {
	out, err := run(t, "sets", "--topology", "../internal/configsets/testdata/paper-example1.json", "--method", "paper")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(a0, b0)", "(a1, b1)", "(a2, b2)", "6 sets listed of 6 (paper method"} {
		if !strings.Contains(out, want) {
			t.Errorf("paper sets lack %q:\n%s", want, out)
		}
	}
}

func TestSetsErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sets", "--synthetic", "core:2 pu:2", "--threads", "5"}, "--threads 5 is out of range"},
		{[]string{"sets", "--synthetic", "core:2 pu:2", "--threads", "-1"}, "--threads -1 is out of range"},
		{[]string{"sets", "--method", "smart"}, `unknown method "smart"`},
		{[]string{"sets", "--limit", "0"}, "--limit 0"},
	} {
		_, err := run(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}

func TestCheckAndShow(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	out, err := run(t, "check", "-o", path, "--threads", "2", "--algorithms", "central,dissemination", "--sample-time", "20us", "--budget", "10s")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "results written to "+path) || !strings.Contains(out, "threads  best") {
		t.Errorf("check output:\n%s", out)
	}
	shown, err := run(t, "show", path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(shown, "\n2 ") || !(strings.Contains(shown, "central") || strings.Contains(shown, "dissemination")) {
		t.Errorf("show:\n%s", shown)
	}
	js, err := run(t, "show", path, "--json")
	if err != nil || !strings.Contains(js, `"schema": "barriertune.results/v1`) {
		t.Errorf("show --json: %v\n%s", err, js)
	}
	// The default path follows XDG_CONFIG_HOME.
	t.Setenv("XDG_CONFIG_HOME", dir)
	if _, err := run(t, "check", "--threads", "2", "--algorithms", "central", "--sample-time", "20us", "--budget", "5s"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "barriertune", "results.json")); err != nil {
		t.Errorf("no file at the default path: %v", err)
	}
	if _, err := run(t, "show"); err != nil {
		t.Errorf("show of the default file: %v", err)
	}
}

func TestShowBadFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if _, err := run(t, "check", "-o", good, "--threads", "2", "--algorithms", "central", "--sample-time", "20us"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(good)
	trunc := filepath.Join(dir, "trunc.json")
	os.WriteFile(trunc, data[:len(data)/3], 0o644)
	foreign := filepath.Join(dir, "foreign.json")
	os.WriteFile(foreign, []byte(`{"hello": "world"}`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"show", trunc}, "not valid JSON (truncated or corrupted"},
		{[]string{"show", foreign}, `no "schema" field`},
		{[]string{"show", filepath.Join(dir, "none.json")}, "no results file at " + filepath.Join(dir, "none.json") + ": run barriertune check"},
		{[]string{"show", filepath.Join("..", "..", "README.md")}, "is not a barriertune results file"},
		{[]string{"check", "--resume", trunc}, "--resume: results file"},
		{[]string{"check", "--threads", "0"}, `"0" is not a thread count`},
		{[]string{"check", "--algorithms", "central,fastest"}, `unknown barrier algorithm "fastest"`},
	} {
		_, err := run(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line containing %q", c.args, err, c.want)
		}
	}
}

// liveCPUs is the number of CPUs this process may use.
func liveCPUs(t *testing.T) int {
	t.Helper()
	set, err := osal.Allowed()
	if err != nil {
		t.Fatal(err)
	}
	return set.Len()
}

// exportTestdata is a complete results file of an 8-CPU machine.
const exportTestdata = "../internal/export/testdata/results.json"

// copyFile copies src into dir and returns the copy's path.
func copyFile(t *testing.T, src, dir string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
