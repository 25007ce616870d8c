package check

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

// checkCoverage asserts what every plan must hold: one entry per thread
// count 2..P, in order; a measured entry keeps the baselines and has a
// placement and a time; an inferred one names measured neighbours.
func checkCoverage(t *testing.T, p *ScalePlan, npus int) {
	t.Helper()
	if p.PUs != npus || len(p.Plan) != npus-1 {
		t.Fatalf("plan for %d PUs has pus=%d and %d entries, want %d", npus, p.PUs, len(p.Plan), npus-1)
	}
	measured := map[int]bool{}
	for i, e := range p.Plan {
		if e.Threads != i+2 {
			t.Fatalf("entry %d is for %d threads, want %d", i, e.Threads, i+2)
		}
		if e.Source == "measured" {
			measured[e.Threads] = true
		}
	}
	var sum float64
	for _, e := range p.Plan {
		switch e.Source {
		case "measured":
			if len(e.Placements) == 0 || len(e.Placements) != len(e.CPUs) || e.EstimatedS <= 0 {
				t.Fatalf("%d threads: measured with %d placements, %d CPU lists, %.3fs", e.Threads, len(e.Placements), len(e.CPUs), e.EstimatedS)
			}
			for _, b := range Baselines {
				found := false
				for _, a := range e.Algorithms {
					found = found || a == b
				}
				if !found && !p.Exhaustive {
					t.Fatalf("%d threads: baseline %s not kept (kept %v)", e.Threads, b, e.Algorithms)
				}
			}
			if len(e.Why) != len(e.Algorithms) {
				t.Fatalf("%d threads: %d reasons for %d algorithms", e.Threads, len(e.Why), len(e.Algorithms))
			}
			sum += e.EstimatedS
		case "inferred":
			if len(e.InferredFrom) == 0 {
				t.Fatalf("%d threads: inferred from nothing", e.Threads)
			}
			for _, f := range e.InferredFrom {
				if !measured[f] {
					t.Fatalf("%d threads: inferred from %d, which is not measured", e.Threads, f)
				}
			}
		default:
			t.Fatalf("%d threads: source %q", e.Threads, e.Source)
		}
		if e.PredictedWinner == "" || !(e.PredictedNs > 0) {
			t.Fatalf("%d threads: no predicted winner (%q, %v)", e.Threads, e.PredictedWinner, e.PredictedNs)
		}
	}
	if !measured[2] {
		t.Fatal("2 threads not measured")
	}
	if d := sum - p.EstimatedTotalS; d > 0.01*float64(len(p.Plan)) || d < -0.01*float64(len(p.Plan)) {
		t.Fatalf("entries sum to %.3fs, total says %.3fs", sum, p.EstimatedTotalS)
	}
	if !p.Exhaustive && p.EstimatedTotalS > p.BudgetS {
		t.Fatalf("plan estimated at %.1fs, over its budget of %.1fs", p.EstimatedTotalS, p.BudgetS)
	}
	if _, err := json.Marshal(p); err != nil {
		t.Fatal(err)
	}
}

func TestPlanScaleSynthetic(t *testing.T) {
	for _, s := range []string{"pack:2 l3:2 core:4 pu:2", "pack:1 core:4", "pu:2", "pack:2 numa:2 l3:2 core:8 pu:2", "pack:4 l3:4 core:8 pu:2"} {
		if testing.Short() && strings.Contains(s, "pack:4") {
			continue
		}
		t.Run(s, func(t *testing.T) {
			topo, err := hwtree.FromSynthetic(s)
			if err != nil {
				t.Fatal(err)
			}
			p, err := PlanScale(ScaleConfig{Topology: topo})
			if err != nil {
				t.Fatal(err)
			}
			checkCoverage(t, p, len(topo.PUs()))
			ex, err := PlanScale(ScaleConfig{Topology: topo, Exhaustive: true})
			if err != nil {
				t.Fatal(err)
			}
			checkCoverage(t, ex, len(topo.PUs()))
			if ex.Inferred != 0 || ex.Measurements < p.Measurements {
				t.Fatalf("exhaustive: %d inferred, %d measurements (pruned %d)", ex.Inferred, ex.Measurements, p.Measurements)
			}
			t.Logf("%s: pruned %d measurements %.0fs (%d counts inferred), exhaustive %d %.0fs", s, p.Measurements, p.EstimatedTotalS, p.Inferred, ex.Measurements, ex.EstimatedTotalS)
		})
	}
}

// BenchmarkPlanScale256 plans a 256-PU machine (the issue asks under a
// second).
func BenchmarkPlanScale256(b *testing.B) {
	topo, err := hwtree.FromSynthetic("pack:4 l3:4 core:8 pu:2")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := PlanScale(ScaleConfig{Topology: topo}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPlanScaleInfers: with a budget too small for every thread count the
// plan measures the priority counts (2, 3, ...) and infers the rest from
// measured neighbours.
func TestPlanScaleInfers(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 l3:2 core:4 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanScale(ScaleConfig{Topology: topo, Budget: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	checkCoverage(t, p, 32)
	if p.Inferred == 0 || p.Measured+p.Inferred != 31 {
		t.Fatalf("%d measured and %d inferred of 31 counts, want some inferred", p.Measured, p.Inferred)
	}
	for _, e := range p.Plan[:3] { // 2, 3, 4 come first
		if e.Source != "measured" {
			t.Fatalf("%d threads %s, want measured first", e.Threads, e.Source)
		}
	}
	if p.Cost.Pruned != p.Measurements || p.Cost.Exhaustive <= p.Cost.Pruned || p.Cost.Paper == "" {
		t.Fatalf("tuning cost %+v", p.Cost)
	}
	if _, err := PlanScale(ScaleConfig{Topology: topo, Keep: -1}); err == nil {
		t.Fatal("keep -1 accepted")
	}
	one, _ := hwtree.FromSynthetic("pu:1")
	if _, err := PlanScale(ScaleConfig{Topology: one}); err == nil || !strings.Contains(err.Error(), "1 PUs") {
		t.Fatalf("1 PU: %v", err)
	}
}

// TestHybridCandidate: the live check's hybrid for a placement (grouped by
// the tree, or degenerated to the best flat algorithm) is a valid barrier.
func TestHybridCandidate(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 l3:2 core:4 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	cpus := topo.CPUs()
	floors := []results.Floor{{Level: "Core", MedianNs: 8}, {Level: "L3Cache", MedianNs: 30}, {Level: "Machine", MedianNs: 400}}
	opts, comp, err := HybridCandidate(topo, cpus, floors)
	if err != nil {
		t.Fatal(err)
	}
	if comp == "" {
		t.Fatal("no composition")
	}
	b, err := barriers.New("hybrid", len(cpus), opts...)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	for id := 0; id < len(cpus); id++ {
		go func() {
			for e := 0; e < 20; e++ {
				b.Wait(id)
			}
			done <- true
		}()
	}
	for range cpus {
		<-done
	}
}
