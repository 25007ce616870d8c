package check

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/latency"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

// TestLatencyFile: planning reads a matrix through the latency package
// (regular files only), refuses one with holes, and names the tree after
// the file; a CPU with itself costs the smallest latency.
func TestLatencyFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "m.csv")
	if err := os.WriteFile(good, []byte(",,,\n10,,,\n50,52,,\n51,49,11,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, topo, err := latency.LoadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Costs()
	if c.Latency(0, 1) != 10 || c.Latency(2, 1) != 52 || c.Latency(1, 1) != 10 || c.Latency(0, 9) == c.Latency(0, 9) {
		t.Fatalf("costs %v", m.NS)
	}
	if len(topo.PUs()) != 4 || topo.Source != "latency:m.csv" || len(topo.Objects(hwtree.Core)) != 2 {
		t.Fatalf("tree %s with %d PUs, %d cores", topo.Source, len(topo.PUs()), len(topo.Objects(hwtree.Core)))
	}
	holes := filepath.Join(dir, "holes.csv")
	if err := os.WriteFile(holes, []byte(",,\n10,,\n,60,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		holes:                          "CPUs 0 and 2 have no latency",
		filepath.Join(dir, "none.csv"): "no such file",
		dir:                            "not a regular file",
	} {
		if _, _, err := latency.LoadFile(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to mention %q", path, err, want)
		}
	}
}

// TestLevelLatencies: on a tree with known costs every level's median is
// that level's latency and every pair is counted once.
func TestLevelLatencies(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 l3:2 core:2 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	got := levelLatencies(topo, model.NewTreeCosts(topo))
	want := []results.LevelLatency{
		{Level: "Core", Pairs: 8, MedianNs: model.SameCoreNS}, {Level: "L3Cache", Pairs: 16, MedianNs: model.SameL3NS},
		{Level: "Package", Pairs: 32, MedianNs: model.SamePackageNS}, {Level: "Machine", Pairs: 64, MedianNs: model.AcrossNS},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("levelLatencies = %+v, want %+v", got, want)
	}
}
