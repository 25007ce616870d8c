package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/hwtree"
)

// fourCPUMatrix is a 4-CPU latency matrix (the lower triangle): two pairs
// 20 ns apart inside, 100 ns between.
const fourCPUMatrix = ",,,\n20,,,\n100,100,,\n100,100,20,\n"

// TestPlanSourceLoad: which tree, latencies and constants a plan or a
// simulation predicts with, for each source, and the refusals.
func TestPlanSourceLoad(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "m.csv")
	if err := os.WriteFile(csv, []byte(fourCPUMatrix), 0o644); err != nil {
		t.Fatal(err)
	}
	liveCalls := 0
	live := func() (*hwtree.Topology, error) {
		liveCalls++
		return hwtree.FromSynthetic("pack:1 core:2 pu:1")
	}
	four, err := hwtree.FromSynthetic("pack:2 core:2 pu:1")
	if err != nil {
		t.Fatal(err)
	}
	eight, err := hwtree.FromSynthetic("pack:2 core:4 pu:1")
	if err != nil {
		t.Fatal(err)
	}

	// Nothing but a tree: that tree, its typical latencies, the defaults.
	pm, err := PlanSource{Topology: four, Name: "synthetic"}.Load(live)
	if err != nil || pm.Topology != four || pm.Costs != nil || pm.Calibration != nil || pm.Name != "synthetic" || liveCalls != 0 {
		t.Errorf("tree only: %+v, %v (live read %d times)", pm, err, liveCalls)
	}
	// Nothing at all: the live tree.
	if pm, err = (PlanSource{}).Load(live); err != nil || len(pm.Topology.PUs()) != 2 || liveCalls != 1 {
		t.Errorf("no source: %+v, %v (live read %d times)", pm, err, liveCalls)
	}
	// A matrix alone: the tree clustered from it, its latencies.
	pm, err = PlanSource{LatencyFile: csv}.Load(live)
	if err != nil || len(pm.Topology.PUs()) != 4 || pm.Costs == nil || pm.Costs.Latency(0, 2) != 100 || !strings.HasPrefix(pm.Name, "latency ") {
		t.Errorf("matrix: %+v, %v", pm, err)
	}
	// A matrix on a tree it covers, and on one it does not.
	if pm, err = (PlanSource{LatencyFile: csv, Topology: four}).Load(live); err != nil || pm.Topology != four || pm.Costs.Latency(0, 1) != 20 {
		t.Errorf("matrix on its tree: %+v, %v", pm, err)
	}
	if _, err = (PlanSource{LatencyFile: csv, Topology: eight}).Load(live); err == nil || !strings.Contains(err.Error(), "covers CPUs 0..3") {
		t.Errorf("matrix on a larger tree: %v", err)
	}
	// Both files: refused.
	if _, err = (PlanSource{LatencyFile: csv, FromResults: csv}).Load(live); err == nil || !strings.Contains(err.Error(), "together") {
		t.Errorf("both files: %v", err)
	}
	// A results file that is not one.
	if _, err = (PlanSource{FromResults: csv}).Load(live); err == nil {
		t.Error("a CSV read as a results file")
	}
	if liveCalls != 1 {
		t.Errorf("the live tree was read %d times, want once", liveCalls)
	}
}
