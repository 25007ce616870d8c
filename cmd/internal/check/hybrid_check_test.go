package check

import (
	"context"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/configsets"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/cmd/internal/store"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/results"
)

// allowedTree returns a synthetic tree over the allowed CPUs 0..k-1 (k the
// longest such run): two packages when k >= 4 is even, else k packages of
// one PU, so that the check can pin on it.
func allowedTree(t *testing.T) *hwtree.Topology {
	t.Helper()
	allowed, err := osal.Allowed()
	if err != nil {
		t.Skip(err)
	}
	k := 0
	for allowed.Has(k) {
		k++
	}
	if k == 0 {
		t.Skip("CPU 0 is not allowed: synthetic trees number their CPUs from 0")
	}
	spec := "pack:" + strconv.Itoa(k) + " pu:1"
	if k >= 4 && k%2 == 0 {
		spec = "pack:2 core:" + strconv.Itoa(k/2) + " pu:1"
	}
	topo, err := hwtree.FromSynthetic(spec)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// checkRecorded asserts that a recorded hybrid is what the check composes
// for its placement, that its level keys rebuild those groups, and that
// the rebuilt barrier works.
func checkRecorded(t *testing.T, c *hybridComposer, alg, comp string, keys [][]int, cpus []int) {
	t.Helper()
	if alg != "hybrid" {
		return
	}
	want, err := c.compose(cpus)
	if err != nil {
		t.Fatal(err)
	}
	if comp != want.String() {
		t.Fatalf("hybrid on %v recorded as %q, the check composes %q", cpus, comp, want)
	}
	specs, err := barriers.ParseHierarchy(comp)
	if err != nil {
		t.Fatal(err)
	}
	levels, err := barriers.Hierarchy(specs).Grouped(keys)
	if err != nil || !reflect.DeepEqual(levels, want.Levels) {
		t.Fatalf("level keys %v rebuild %+v (%v), want %+v", keys, levels, err, want.Levels)
	}
}

// TestRunMeasuresTheHybrid: the live check measures the hybrid, composed
// for each placement from the tree and the measured floors, beside the flat
// algorithms, and records its composition and level keys in every
// measurement (and a tree algorithm's fan-in); a results file whose winner
// is that hybrid makes barriers.Auto build the same barrier.
func TestRunMeasuresTheHybrid(t *testing.T) {
	topo := allowedTree(t)
	npus := len(topo.PUs())
	threads := []int{2, npus + 1} // a pinned count (where 2 PUs exist) and an oversubscribed one
	cfg := Config{Topology: topo, Threads: threads, Algorithms: []string{"central", "combining", "dissemination", "hybrid"},
		Budget: 5 * time.Second, SampleTarget: 20 * time.Microsecond, SetsLimit: 2}
	f, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := newHybridComposer(topo, composerFloors(f.Floor), f.Latency)
	for ti, e := range f.Threads {
		var hybrids []results.Measurement
		for _, m := range e.Measurements {
			switch m.Algorithm {
			case "hybrid":
				if m.Composition == "" || len(m.LevelKeys) == 0 || m.Reps == 0 {
					t.Fatalf("%d threads: hybrid measured without its composition: %+v", e.Threads, m)
				}
				checkRecorded(t, c, m.Algorithm, m.Composition, m.LevelKeys, m.CPUs)
				hybrids = append(hybrids, m)
			case "combining":
				if m.FanIn != 4 {
					t.Errorf("combining recorded with fan-in %d, want 4 (the default it ran with)", m.FanIn)
				}
			default:
				if m.Composition != "" || m.FanIn != 0 || m.LevelKeys != nil {
					t.Errorf("%s recorded with a composition or fan-in: %+v", m.Algorithm, m)
				}
			}
		}
		if len(hybrids) == 0 {
			t.Fatalf("%d threads: no hybrid measured among %d measurements", e.Threads, len(e.Measurements))
		}
		if b := e.Best; b.Algorithm == "hybrid" {
			checkRecorded(t, c, b.Algorithm, b.Composition, b.LevelKeys, b.CPUs)
		} else if b.Composition != "" || b.LevelKeys != nil {
			t.Errorf("flat winner %s carries a composition: %+v", b.Algorithm, b)
		}
		t.Logf("%d threads: best %s, hybrid %s at %.0f ns", e.Threads, e.Best.Describe(), hybrids[0].Composition, hybrids[0].MedianNs)

		// Were the hybrid the winner, Auto would build it as measured.
		f.Threads[ti].Best = best(hybrids, nil)
		if f.Threads[ti].Best == nil {
			// Every hybrid placement was dropped (twice the best on a busy
			// host): nothing to build; the recording was checked above.
			t.Logf("%d threads: every hybrid measurement was dropped; Auto's rebuild not checked", e.Threads)
			continue
		}
		e = f.Threads[ti]
		path := filepath.Join(t.TempDir(), "results.json")
		if err := store.Write(path, f); err != nil {
			t.Fatal(err)
		}
		// The synthetic tree stands for the allowed part of this machine
		// (one CPU under taskset -c 0): the lookup, which wants the whole
		// machine's tree, is forced.
		t.Setenv(results.ForceEnv, "1")
		if procs := runtime.GOMAXPROCS(0); procs < 2 {
			// Tuned selects inside what the process runs at once: a
			// winner measured with two threads applies where two run.
			runtime.GOMAXPROCS(2)
			defer runtime.GOMAXPROCS(procs)
		}
		tu := barriers.TunedFrom(path, e.Threads)
		if tu.Algorithm != "hybrid" || tu.Composition != e.Best.Composition || tu.Fallback != "" {
			t.Fatalf("TunedFrom a hybrid winner: %+v, want hybrid %s", tu, e.Best.Composition)
		}
		b, err := tu.New()
		if err != nil {
			t.Fatal(err)
		}
		if got := b.(interface{ Composition() string }).Composition(); got != e.Best.Composition {
			t.Errorf("Auto built %q, the check measured %q", got, e.Best.Composition)
		}
		run, err := measure.Barriers(e.Best.CPUs, []measure.Candidate{{Algorithm: "hybrid", Policy: barriers.AutoPolicy, Hierarchy: tu.Levels}},
			measure.Options{Samples: 3, SampleTarget: 20 * time.Microsecond})
		if err != nil || run.Results[0].Composition != e.Best.Composition {
			t.Errorf("the tuned hybrid measured again: %+v, %v", run.Results, err)
		}
	}
}

// TestHybridComposedPerPlacement: on a deep tree the check's hybrid
// candidates are composed per placement (not all flat), their recorded keys
// rebuild the measured groups, and each candidate runs correctly when
// measured (unpinned on one CPU, so any machine can).
func TestHybridComposedPerPlacement(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 l3:2 core:4 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	floors := []results.Floor{{Level: "Core", MedianNs: 8}, {Level: "L3Cache", MedianNs: 30}, {Level: "Package", MedianNs: 90}, {Level: "Machine", MedianNs: 400}}
	c := newHybridComposer(topo, floors, nil)
	var sets []configsets.Set
	for _, n := range []int{3, 12, 24} {
		s, err := configsets.NewSpace(topo).Representatives(n, 2)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, s...)
	}
	layered := 0
	for _, set := range sets {
		cands, notes, err := c.candidates([]cand{{alg: "central"}, {alg: "static-tree", fanIn: model.DefaultFanIn}, {alg: "hybrid"}}, set.CPUs, barriers.AutoPolicy)
		if err != nil {
			t.Fatal(err)
		}
		if n := notes[0]; n.composition != "" || n.fanIn != 0 || n.keys != nil {
			t.Errorf("central annotated: %+v", notes[0])
		}
		if notes[1].fanIn != 4 || cands[1].FanIn != 4 {
			t.Errorf("static-tree: fan-in %d recorded, %d measured; want 4", notes[1].fanIn, cands[1].FanIn)
		}
		h := notes[2]
		checkRecorded(t, c, "hybrid", h.composition, h.keys, set.CPUs)
		if strings.Contains(h.composition, ",") {
			layered++
		}
		run, err := measure.Barriers(make([]int, len(set.CPUs)), cands[2:], measure.Options{Samples: 2, SampleTarget: 20 * time.Microsecond})
		if err != nil || run.Results[0].Composition != h.composition || run.Results[0].Reps != 2 {
			t.Fatalf("%s: measured %+v, %v", setLabel(set), run.Results, err)
		}
		t.Logf("%d threads, %s: %s", len(set.CPUs), setLabel(set), h.composition)
	}
	if layered == 0 {
		t.Error("no placement of 3, 12 or 24 threads on two packages of two L3s got a layered hybrid")
	}
}

// TestAnnotateAndSelect: the recorded composition, fan-in and keys go to
// the measurements they belong to and to a hybrid winner; best copies them
// from the winning measurement.
func TestAnnotateAndSelect(t *testing.T) {
	p := []int{0, 1, 2, 3}
	keys := [][]int{{0, 0, 1, 1}, {0, 0, 0, 0}}
	h, fl := m("hybrid", p, 50), m("dissemination", p, 90)
	f := &results.File{Threads: []results.Threads{{Threads: 4, Measurements: []results.Measurement{h, fl}, Best: &results.Choice{CPUs: p, Spec: results.Spec{Algorithm: "hybrid"}}}}}
	annotate(f, map[string]annotation{annotationKey("hybrid", p): {composition: "core:central,top:dissemination", keys: keys}})
	e := f.Threads[0]
	if e.Measurements[0].Composition != "core:central,top:dissemination" || !reflect.DeepEqual(e.Measurements[0].LevelKeys, keys) ||
		e.Best.Composition != e.Measurements[0].Composition || e.Measurements[1].Composition != "" {
		t.Fatalf("annotated: %+v", e)
	}
	c := best(e.Measurements, nil)
	if c.Algorithm != "hybrid" || c.Composition != "core:central,top:dissemination" || !reflect.DeepEqual(c.LevelKeys, keys) {
		t.Errorf("best = %+v, want the hybrid with its composition", c)
	}
	if got := c.Describe(); got != "hybrid(core:central,top:dissemination)" {
		t.Errorf("Describe() = %q", got)
	}
}
