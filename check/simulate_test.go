package check

import (
	"github.com/barriertune/barriertune/barriers"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/latency"
	"github.com/barriertune/barriertune/results"
)

// TestSimulateWritesValidFile: a simulated check writes a file that
// results.Read accepts, with an entry with a winner for every thread count
// 2..P, measured or inferred.
func TestSimulateWritesValidFile(t *testing.T) {
	for _, budget := range []time.Duration{0, 2 * time.Second} {
		topo, err := hwtree.FromSynthetic("pack:2 l3:2 core:4 pu:2")
		if err != nil {
			t.Fatal(err)
		}
		f, p, err := Simulate(SimulateConfig{ScaleConfig: ScaleConfig{Topology: topo, Budget: budget}, Machine: "synthetic", Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "sim.json")
		if err := results.Write(path, f); err != nil {
			t.Fatal(err)
		}
		back, err := results.Read(path)
		if err != nil {
			t.Fatalf("results.Read refuses the simulated file: %v", err)
		}
		if len(back.Threads) != 31 {
			t.Fatalf("%d thread entries, want 31", len(back.Threads))
		}
		for i, e := range back.Threads {
			if e.Threads != i+2 || e.Best == nil || !(e.Best.MedianNs > 0) {
				t.Fatalf("entry %d: %+v", i, e)
			}
			pe := p.Plan[i]
			if pe.Source == "measured" && len(e.Measurements) == 0 {
				t.Fatalf("%d threads measured in the plan but no simulated measurements", e.Threads)
			}
			if pe.Source == "inferred" {
				ok := false
				for _, from := range pe.InferredFrom {
					ok = ok || back.Lookup(from).Best.Algorithm == e.Best.Algorithm
				}
				if !ok {
					t.Fatalf("%d threads inferred %s, which no neighbour %v won", e.Threads, e.Best.Algorithm, pe.InferredFrom)
				}
			}
		}
		if budget > 0 && (p.Inferred == 0 || len(back.Cuts) == 0) {
			t.Fatalf("budget %s: %d inferred, cuts %v", budget, p.Inferred, back.Cuts)
		}
		if len(back.Floor) == 0 || len(back.Latency) == 0 || !back.Simulated {
			t.Fatalf("floors %v, latency %v, simulated %v", back.Floor, back.Latency, back.Simulated)
		}
		for _, e := range back.Threads {
			if e.Source == results.SourceInferred && (e.InferredFrom == 0 || e.Rule == "") {
				t.Fatalf("%d threads inferred without its source or rule", e.Threads)
			}
			if e.Best.Algorithm == "hybrid" && e.Best.Composition == "" {
				t.Fatalf("%d threads: hybrid winner without its composition", e.Threads)
			}
		}
	}
}

// TestSimulateLatencyMatrices simulates the check on every shared latency
// matrix (the tree clustered from it): every file is valid and covers 2..N.
// It records the matrix's per-level latencies. Times are logged (the
// issue asks under 30 s per matrix; all take under half a second here),
// not asserted. -short simulates two of them.
func TestSimulateLatencyMatrices(t *testing.T) {
	for _, path := range latencyFiles(t) {
		name := filepath.Base(path)
		if testing.Short() && !strings.Contains(name, "5950x") && !strings.Contains(name, "2630") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			m, topo, err := latency.LoadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, p, err := Simulate(SimulateConfig{ScaleConfig: ScaleConfig{Topology: topo, Costs: m.Costs()}, Machine: name})
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "sim.json")
			if err := results.Write(out, f); err != nil {
				t.Fatal(err)
			}
			back, err := results.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			// The file records the matrix's per-level latencies, on the
			// tree clustered from it.
			want := latency.Levels(m, topo)
			if len(back.Latency) != len(want) {
				t.Fatalf("latency levels %+v, want %+v", back.Latency, want)
			}
			for i, l := range want {
				if g := back.Latency[i]; g.Level != l.Level || g.Pairs != l.Pairs || g.MedianNs != l.MedianNs {
					t.Fatalf("latency level %d: %+v, want %+v", i, g, l)
				}
			}
			if len(back.Threads) != len(m.CPUs)-1 {
				t.Fatalf("%d entries for %d CPUs", len(back.Threads), len(m.CPUs))
			}
			hybridWins := 0
			for _, e := range back.Threads {
				if e.Best.Algorithm == "hybrid" {
					hybridWins++
					if e.Source == results.SourceMeasured {
						checkRebuildsHybrid(t, e)
					}
				}
			}
			t.Logf("%d CPUs: simulated in %s; %d counts measured, %d inferred; hybrid wins %d counts", len(m.CPUs), time.Since(start).Round(time.Millisecond), p.Measured, p.Inferred, hybridWins)
		})
	}
}

// checkRebuildsHybrid: a simulated hybrid winner records its groups, so
// that barriers.Auto can build exactly the barrier the file names.
func checkRebuildsHybrid(t *testing.T, e results.Threads) {
	t.Helper()
	specs, err := barriers.ParseComposition(e.Best.Composition)
	if err != nil {
		t.Fatalf("%d threads: composition %q: %v", e.Threads, e.Best.Composition, err)
	}
	levels, err := barriers.HierarchyFromKeys(specs, e.Best.LevelKeys)
	if err != nil {
		t.Fatalf("%d threads: level keys %v do not rebuild %q: %v", e.Threads, e.Best.LevelKeys, e.Best.Composition, err)
	}
	if got := barriers.Composition(levels); got != e.Best.Composition {
		t.Fatalf("%d threads: rebuilt %q, recorded %q", e.Threads, got, e.Best.Composition)
	}
	if _, err := barriers.New("hybrid", e.Threads, barriers.WithHierarchy(levels)); err != nil {
		t.Fatalf("%d threads: %v", e.Threads, err)
	}
}
