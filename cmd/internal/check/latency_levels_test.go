package check

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/cmd/internal/store"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

// TestMeasureLevelLatencies measures a 256-PU synthetic machine through an
// injected ping-pong (the tree's typical latency per level): every level
// is named and has its latency as median, within the pair cap.
func TestMeasureLevelLatencies(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:4 l3:4 core:8 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	costs := model.NewTreeCosts(topo)
	calls := 0
	pp := func(a, b int, _ measure.Options) (float64, error) { calls++; return costs.Latency(a, b), nil }
	got, note := measureLevelLatencies(context.Background(), topo, pp, measure.Options{}, time.Minute, nil)
	want := []results.LevelLatency{
		{Level: "Core", Pairs: 3, MedianNs: model.SameCoreNS}, {Level: "L3Cache", Pairs: 3, MedianNs: model.SameL3NS},
		{Level: "Package", Pairs: 3, MedianNs: model.SamePackageNS}, {Level: "Machine", Pairs: 3, MedianNs: model.AcrossNS},
	}
	if note != "" || calls != 12 || len(got) != len(want) {
		t.Fatalf("got %+v (%d calls, note %q), want %+v", got, calls, note, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %+v, want %+v", got, want)
		}
	}
	one, _ := hwtree.FromSynthetic("pu:1")
	if got, note := measureLevelLatencies(context.Background(), one, pp, measure.Options{}, time.Minute, nil); got != nil || !strings.Contains(note, "one CPU") {
		t.Fatalf("one CPU: %+v, %q", got, note)
	}
	// No time left: the floors alone, and a note.
	calls = 0
	floors := []results.Floor{{Level: "Machine", CPUs: [2]int{0, 255}, MedianNs: 151}}
	got, note = measureLevelLatencies(context.Background(), topo, pp, measure.Options{}, 0, floors)
	if calls != 0 || len(got) != 1 || got[0] != (results.LevelLatency{Level: "Machine", Pairs: 1, MedianNs: 151}) || !strings.Contains(note, "ran out") {
		t.Fatalf("no time: %+v (%d calls), note %q", got, calls, note)
	}
}

// TestRunRecordsLevelLatencies: a results file written by a short check
// holds the per-level latencies, named after the levels of the tree that
// its CPU pairs share; under GOMAXPROCS=1 it holds none and says why.
func TestRunRecordsLevelLatencies(t *testing.T) {
	topo := liveTopo(t)
	f, err := Run(context.Background(), Config{Topology: topo, Threads: []int{2}, Algorithms: []string{"central"},
		Budget: 10 * time.Second, SampleTarget: 20 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := store.Write(path, f); err != nil {
		t.Fatal(err)
	}
	back, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.PUs()) < 2 || runtime.GOMAXPROCS(0) < 2 {
		if len(back.Latency) != 0 || !strings.Contains(strings.Join(back.Cuts, ";"), "no per-level latencies") {
			t.Fatalf("one P: latency %+v, cuts %v", back.Latency, back.Cuts)
		}
		return
	}
	levels := map[string]bool{}
	pus := topo.PUs()
	for i := range pus {
		for j := 0; j < i; j++ {
			levels[topo.Covering(pus[i].CPUSet.Or(pus[j].CPUSet)).Type.String()] = true
		}
	}
	if len(back.Latency) == 0 || len(back.Latency) > len(levels) {
		t.Fatalf("latency %+v, tree levels %v", back.Latency, levels)
	}
	for _, l := range back.Latency {
		if !levels[l.Level] || l.Pairs < 1 || !(l.MedianNs > 0) {
			t.Errorf("level %+v: not a level of the tree %v, or empty", l, levels)
		}
	}
}
