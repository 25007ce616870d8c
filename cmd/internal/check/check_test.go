package check

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/configsets"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

func TestDefaultThreadCounts(t *testing.T) {
	for n, want := range map[int][]int{
		1:  {2},
		2:  {2},
		6:  {2, 3, 4, 5, 6},
		20: {2, 3, 4, 5, 6, 7, 8, 16, 20},
		64: {2, 3, 4, 5, 6, 7, 8, 16, 32, 64},
	} {
		if got := DefaultThreadCounts(n); !reflect.DeepEqual(got, want) {
			t.Errorf("DefaultThreadCounts(%d) = %v, want %v", n, got, want)
		}
	}
}

func m(alg string, cpus []int, median float64) results.Measurement {
	return results.Measurement{CPUs: cpus, Label: "x", Reps: 9, Summary: results.Summary{MedianNs: median}, Spec: results.Spec{Algorithm: alg, Policy: "spin"}}
}

func TestBestBreaksTiesTowardSimpler(t *testing.T) {
	p := []int{0, 1}
	// mcs is fastest, but central (simpler) is within 3%: central wins.
	c := best([]results.Measurement{m("mcs", p, 100), m("central", p, 102.5), m("dissemination", p, 101)}, nil)
	if c.Algorithm != "central" {
		t.Errorf("winner %s, want central (simplest within 3%%)", c.Algorithm)
	}
	if c.RunnerUp != "mcs" || c.MarginPct != -2.4 {
		t.Errorf("runner-up %s %+.1f%%", c.RunnerUp, c.MarginPct)
	}
	// Outside 3% the fastest wins; dropped ones never do.
	d := m("central", p, 50)
	d.Dropped = true
	c = best([]results.Measurement{m("mcs", p, 100), m("central", p, 104), d}, nil)
	if c.Algorithm != "mcs" || c.RunnerUp != "central" || c.MarginPct != 4 {
		t.Errorf("got %+v", c)
	}
	if best(nil, nil) != nil {
		t.Error("no measurements, no winner")
	}
	// Floor-normalised medians decide nothing: the shown medians rank.
	a, b := m("mcs", p, 170), m("tournament", p, 105)
	a.NormalizedNs, b.NormalizedNs = 50, 80
	if c := best([]results.Measurement{a, b}, nil); c.Algorithm != "tournament" || c.MarginPct != 61.9 {
		t.Errorf("ranking by the shown median: %+v", c)
	}
}

func TestRobust(t *testing.T) {
	a, b := []int{0, 1}, []int{0, 2}
	r := robust([]results.Measurement{
		m("mcs", a, 50), m("mcs", b, 300), // fast here, slow there
		m("central", a, 120), m("central", b, 150),
		m("tournament", a, 40), // measured on one placement only
	})
	if r == nil || r.Algorithm != "central" || r.WorstMedianNs != 150 || r.Placements != 2 {
		t.Errorf("robust = %+v, want central with worst 150 over 2 placements", r)
	}
}

func TestPlanCutsToFitBudget(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 l3:2 core:4 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := prepareFor(Config{Topology: topo, Budget: 100 * time.Millisecond, SetsLimit: 8, SampleTarget: 200 * time.Microsecond,
		Algorithms: []string{"central", "dissemination"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	p, err := makePlan(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.estimate(cfg.SampleTarget) > cfg.Budget {
		t.Errorf("plan of %v exceeds the budget", p.estimate(cfg.SampleTarget))
	}
	text := strings.Join(p.cuts, "; ")
	for _, want := range []string{"repetitions cut", "placements per thread count cut", "threads skipped"} {
		if !strings.Contains(text, want) {
			t.Errorf("cuts %q lack %q", text, want)
		}
	}
	if p.samples != minSamples || len(p.units) == 0 || p.units[0].threads != 2 {
		t.Errorf("cut order wrong: samples %d, units %d", p.samples, len(p.units))
	}
	// A generous budget cuts nothing and adds rounds.
	cfg.Budget = time.Hour
	cfg.Threads = []int{2, 4}
	p, _ = makePlan(cfg, nil)
	if runtime.GOMAXPROCS(0) < 2 {
		// One P: no floor, said in the cuts; the rest is planned.
		if len(p.floors) != 0 || !reflect.DeepEqual(p.cuts, []string{"no core-to-core floor: GOMAXPROCS is 1"}) || len(p.units) != 2 {
			t.Errorf("GOMAXPROCS=1 plan: floors %v cuts %v units %d", p.floors, p.cuts, len(p.units))
		}
		return
	}
	if len(p.cuts) != 0 || p.rounds != maxRounds || p.samples != defaultSamples {
		t.Errorf("generous plan: cuts %v rounds %d samples %d", p.cuts, p.rounds, p.samples)
	}
	if len(p.floors) != 4 || !reflect.DeepEqual(p.levels, []string{"Core", "L3Cache", "Package", "Machine"}) {
		t.Errorf("floors %v at %v", p.floors, p.levels)
	}
}

func liveTopo(t *testing.T) *hwtree.Topology {
	topo, err := hwtree.FromSysfs("/")
	if err != nil {
		t.Skip(err)
	}
	return topo
}

func TestRunAndResume(t *testing.T) {
	topo := liveTopo(t)
	threads := []int{2, 3}
	cfg := Config{Topology: topo, Threads: threads, Algorithms: []string{"central", "dissemination", "cond"},
		Budget: 20 * time.Second, SampleTarget: 20 * time.Microsecond}
	var calls int
	cfg.Progress = func(Progress) { calls++ }
	f, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if f.Partial || len(f.Threads) != 2 || calls == 0 {
		t.Fatalf("partial %v, %d thread entries, %d progress calls", f.Partial, len(f.Threads), calls)
	}
	if f.Calibration == nil || f.Inference != InferenceRule || f.RoundsPlanned < 1 || f.RoundsDone > f.RoundsPlanned {
		t.Errorf("calibration %+v, inference %q, rounds %d of %d", f.Calibration, f.Inference, f.RoundsDone, f.RoundsPlanned)
	}
	for _, e := range f.Threads {
		if !e.Complete || e.Best == nil || e.Robust == nil || len(e.Best.CPUs) != e.Threads {
			t.Errorf("entry %+v", e)
		}
	}
	if len(topo.PUs()) >= 2 && runtime.GOMAXPROCS(0) >= 2 && len(f.Floor) == 0 {
		t.Error("no floor measured")
	}

	// Cancelled before it starts: partial, nothing complete.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p, err := Run(ctx, cfg)
	if err == nil || !p.Partial {
		t.Fatalf("cancelled run: partial %v, err %v", p.Partial, err)
	}
	// Resume from a file with only 2 threads complete.
	f.Threads = f.Threads[:1]
	f.Partial = true
	cfg.Resume = f
	done, err := Run(context.Background(), cfg)
	if err != nil || done.Partial || len(done.Threads) != 2 || !reflect.DeepEqual(done.Threads[0], f.Threads[0]) {
		t.Errorf("resume: err %v partial %v entries %d", err, done.Partial, len(done.Threads))
	}
}

func TestRunErrors(t *testing.T) {
	topo := liveTopo(t)
	if _, err := Run(context.Background(), Config{Topology: topo, Algorithms: []string{"fastest"}}); err == nil || !strings.Contains(err.Error(), "fastest") {
		t.Errorf("unknown algorithm: %v", err)
	}
	other, _ := hwtree.FromSynthetic("pu:4096")
	if _, err := Run(context.Background(), Config{Topology: other}); err == nil || !strings.Contains(err.Error(), "not all allowed") {
		t.Errorf("a topology with CPUs this process lacks: %v", err)
	}
	foreign := &results.File{Machine: results.Machine{TopologyHash: "other"}}
	if _, err := Run(context.Background(), Config{Topology: topo, Resume: foreign}); err == nil || !strings.Contains(err.Error(), "another machine") {
		t.Errorf("resume of another machine: %v", err)
	}
}

// TestBudgetCutsAreNotPartial: thread counts the plan skips for the budget
// are cuts, not an unfinished run.
func TestBudgetCutsAreNotPartial(t *testing.T) {
	topo := liveTopo(t)
	f, err := Run(context.Background(), Config{Topology: topo, Threads: []int{2, 3, 4, 5, 6, 7, 8}, Algorithms: []string{"central"},
		Budget: time.Second, SampleTarget: 2 * time.Millisecond})
	if errors.Is(err, ErrNothingMeasured) {
		// The floors alone outlasted the budget: a machine this loaded
		// (other builds on the 2 CPUs) measures nothing in a second.
		t.Skipf("nothing measured in 1s: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cuts) == 0 {
		t.Fatal("a 1s budget for 7 thread counts of 2ms samples must cut something")
	}
	if f.Partial && !strings.Contains(strings.Join(f.Cuts, ";"), "ran out") {
		t.Errorf("partial without running out: cuts %v", f.Cuts)
	}
	t.Logf("cuts: %v; %d thread counts measured", f.Cuts, len(f.Threads))
}

func TestCurrentMachine(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 core:2 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	m := CurrentMachine(topo)
	if m.Topology != "Package:2 Core:2 PU:2" || len(m.TopologyHash) != 16 || m.AllowedCPUs != "0-7" || m.GoVersion == "" {
		t.Errorf("fingerprint %+v", m)
	}
	other, _ := hwtree.FromSynthetic("pack:4 core:2 pu:2")
	if why := m.Mismatch(CurrentMachine(other)); !strings.Contains(why, "topology") || !strings.Contains(why, "allowed CPUs") {
		t.Errorf("mismatch = %q", why)
	}
}

func TestRunValidatesConfig(t *testing.T) {
	topo := liveTopo(t)
	for _, cfg := range []Config{
		{Budget: -time.Second}, {SetsLimit: -1}, {SampleTarget: -time.Microsecond},
	} {
		cfg.Topology = topo
		if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "negative") {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
	for _, th := range [][]int{{0}, {-2}, {1 << 30}} {
		if _, err := Run(context.Background(), Config{Topology: topo, Threads: th}); err == nil || !strings.Contains(err.Error(), "thread count") {
			t.Errorf("threads %v: %v", th, err)
		}
	}
	if _, err := Run(context.Background(), Config{Topology: topo, Algorithms: []string{"central", "central"}}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("an algorithm named twice: %v", err)
	}
	// --threads 2,2: each count once, so show and Tuned read the file.
	prepared, err := prepare(Config{Topology: topo, Threads: []int{3, 2, 3, 2}})
	if err != nil || !reflect.DeepEqual(prepared.Threads, []int{2, 3}) {
		t.Errorf("threads 3,2,3,2 planned as %v (%v), want [2 3]", prepared.Threads, err)
	}
}

// TestNothingMeasured: a budget too small for one placement is an error,
// with a partial file, so the caller keeps a good file.
func TestNothingMeasured(t *testing.T) {
	topo := liveTopo(t)
	f, err := Run(context.Background(), Config{Topology: topo, Threads: []int{2}, Algorithms: []string{"central"}, Budget: time.Nanosecond})
	if !errors.Is(err, ErrNothingMeasured) || !f.Partial {
		t.Errorf("1ns budget: partial %v, err %v", f.Partial, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Run(ctx, Config{Topology: topo, Threads: []int{2}, Algorithms: []string{"central"}})
	if !errors.Is(err, ErrNothingMeasured) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled at once: %v", err)
	}
}

// TestSignalAfterTheLastSample: a finished plan is complete and not an
// error even when ctx ended after the last sample.
func TestSignalAfterTheLastSample(t *testing.T) {
	set := configsets.Set{Threads: 2, CPUs: []int{0, 1}, Label: "x"}
	p := &plan{units: []unit{{threads: 2, sets: []configsets.Set{set}, cands: []cand{{alg: "central"}}}}, samples: 3, rounds: 1}
	s := &samples{pooled: map[key][]measure.Result{{0, 0}: {{Algorithm: "central", Policy: "spin", CPUs: []int{0, 1}, Samples: []float64{5, 6, 7}}}},
		cut: map[key]bool{}, rounds: map[int]int{2: 1}, measured: 1, total: 1}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f, _, err := newFile(Config{Topology: liveTopo(t), Measurer: Hardware{}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	f, err = assemble(ctx, f, p, s, time.Second)
	if err != nil || f.Partial || len(f.Threads) != 1 || !f.Threads[0].Complete || f.Threads[0].Best == nil {
		t.Errorf("finished, then interrupted: partial %v, err %v, %+v", f.Partial, err, f.Threads)
	}
}
