package check

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cpuset"

	"github.com/barriertune/barriertune/cmd/internal/latency"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

// simulate runs the check on topo with the model measurer (no noise).
func simulate(t *testing.T, cfg Config) *results.File {
	t.Helper()
	m, err := NewModelMeasurer(cfg.Topology, cfg.Costs, model.DefaultModel, model.DefaultParams(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Measurer = m
	f, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// fileTriples are the (threads, CPUs, candidate) a results file measured,
// written as Plan.Triples writes them.
func fileTriples(f *results.File) []string {
	var out []string
	for _, e := range f.Threads {
		for _, m := range e.Measurements {
			name := m.Algorithm
			if m.FanIn > 0 {
				name = fmt.Sprintf("%s(%d)", m.Algorithm, m.FanIn)
			}
			out = append(out, fmt.Sprintf("%d %s %s", e.Threads, cpuset.FormatList(m.CPUs), name))
		}
	}
	return out
}

// TestPlanIsTheSimulatedCheck: --plan and --simulate are one pipeline: on
// synthetic machines they list the same (threads, CPUs, candidate) triples
// and honour Threads, SetsLimit and Algorithms, pruned or not.
func TestPlanIsTheSimulatedCheck(t *testing.T) {
	for _, c := range []struct {
		synthetic string
		cfg       Config
		pruned    bool
	}{
		{"pack:2 core:4 pu:2", Config{Threads: []int{2, 3, 8}, SetsLimit: 2, Algorithms: []string{"central", "mcs", "static-tree", "hybrid"}}, false},
		{"pack:2 l3:2 core:4 pu:2", Config{Budget: 2 * time.Second}, true},
		{"pack:2 l3:2 core:4 pu:2", Config{Budget: 300 * time.Millisecond, Threads: []int{4, 32}, SetsLimit: 3, Algorithms: []string{"central", "dissemination", "mcs", "combining", "static-tree", "tournament", "hybrid"}}, true},
	} {
		topo, err := hwtree.FromSynthetic(c.synthetic)
		if err != nil {
			t.Fatal(err)
		}
		cfg := c.cfg
		cfg.Topology = topo
		sim := cfg
		sim.Measurer, _ = NewModelMeasurer(topo, nil, model.DefaultModel, model.DefaultParams(), 0, 1)
		p, err := DryRun(sim)
		if err != nil {
			t.Fatal(err)
		}
		f := simulate(t, cfg)
		want, got := p.Triples(), fileTriples(f)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(want, got) {
			t.Errorf("%s %+v: plan lists %d triples, the simulated check measured %d:\nplan %v\nfile %v", c.synthetic, c.cfg, len(want), len(got), want, got)
		}
		if p.Pruning != c.pruned {
			t.Errorf("%s: pruning %v, want %v", c.synthetic, p.Pruning, c.pruned)
		}
		for _, e := range p.Threads {
			if len(cfg.Threads) > 0 && !slices.Contains(cfg.Threads, e.Threads) {
				t.Errorf("plan has %d threads, not asked for", e.Threads)
			}
			if cfg.SetsLimit > 0 && len(e.Placements) > cfg.SetsLimit {
				t.Errorf("%d threads: %d placements over the limit %d", e.Threads, len(e.Placements), cfg.SetsLimit)
			}
			for _, cd := range e.Candidates {
				if len(cfg.Algorithms) > 0 && !slices.Contains(cfg.Algorithms, cd.Algorithm) {
					t.Errorf("%d threads: candidate %s not asked for", e.Threads, cd.Name)
				}
			}
		}
		if !f.Simulated || f.Partial || f.Inference != InferenceRule || f.RoundsDone != f.RoundsPlanned || f.Calibration == nil {
			t.Errorf("%s: simulated %v partial %v rounds %d/%d calibration %v", c.synthetic, f.Simulated, f.Partial, f.RoundsDone, f.RoundsPlanned, f.Calibration)
		}
		for _, line := range strings.Split(p.Text(true), "\n") {
			if len([]rune(line)) >= 160 {
				t.Errorf("plan line of %d characters: %s", len([]rune(line)), line)
			}
		}
	}
}

// TestSimulatedCheckAtScale runs the simulated check of a 256- and a
// 1024-PU machine with the default budget (simulated clock): it completes,
// or its cuts say exactly what the budget cut.
func TestSimulatedCheckAtScale(t *testing.T) {
	for _, syn := range []string{"pack:2 l3:4 core:16 pu:2", "pack:4 l3:8 core:16 pu:2"} {
		topo, err := hwtree.FromSynthetic(syn)
		if err != nil {
			t.Fatal(err)
		}
		if len(topo.PUs()) > 256 && testing.Short() {
			t.Logf("%s: skipped with -short", syn)
			continue
		}
		start := time.Now()
		f := simulate(t, Config{Topology: topo})
		took := time.Since(start)
		want := WithOversubscribedCounts(DefaultThreadCounts(len(topo.PUs())), len(topo.PUs()))
		var got []int
		for _, e := range f.Threads {
			got = append(got, e.Threads)
			if e.Best == nil || !e.Complete {
				t.Errorf("%s: %d threads: best %v complete %v", syn, e.Threads, e.Best, e.Complete)
			}
		}
		if !slices.Equal(got, want) {
			for _, w := range want {
				if !slices.Contains(got, w) && !slices.Contains(f.Cuts, fmt.Sprintf("%d threads skipped", w)) {
					t.Errorf("%s: %d threads neither measured nor listed as cut: %v", syn, w, f.Cuts)
				}
			}
		}
		if f.Partial {
			t.Errorf("%s: simulated check partial: %v", syn, f.Cuts)
		}
		t.Logf("%s (%d PUs): %d thread counts, cuts %v, simulated in %s", syn, len(topo.PUs()), len(f.Threads), f.Cuts, took.Round(time.Millisecond))
	}
}

// TestManyCoreMatricesKeepTrees: at 64+ threads on the shared many-core
// matrices the plan keeps tree-shaped candidates (the contention-aware
// model ranks them ahead of central).
func TestManyCoreMatricesKeepTrees(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "shared", "latency")
	files, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
	if len(files) == 0 {
		t.Skip("no ../shared/latency")
	}
	trees := []string{"static-tree", "all-static-tree", "mcs", "combining", "tournament", "binomial", "hybrid"}
	for _, path := range files {
		if testing.Short() && !strings.Contains(path, "epyc") {
			continue
		}
		start := time.Now()
		m, topo, err := latency.LoadFile(path)
		if err != nil {
			t.Logf("%s: %v", filepath.Base(path), err)
			continue
		}
		// A budget the whole space does not fit, so that the model prunes.
		p, err := DryRun(Config{Topology: topo, Costs: m.Costs(), Budget: 2 * time.Second})
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(path), err)
		}
		for _, e := range p.Threads {
			if e.Threads < 64 {
				continue
			}
			if !slices.ContainsFunc(e.Candidates, func(c PlanCandidate) bool { return slices.Contains(trees, c.Algorithm) }) {
				t.Errorf("%s, %d threads: no tree-shaped candidate kept: %+v", filepath.Base(path), e.Threads, e.Candidates)
			}
		}
		t.Logf("%s: pruning %v; %d PUs planned in %s (clustering included)", filepath.Base(path), p.Pruning, p.PUs, time.Since(start).Round(time.Millisecond))
	}
}

// TestInterruptedRoundsResume: a check cancelled during its later rounds
// writes a partial file saying how many rounds ran; resuming it measures
// the missing rounds and pools them with the file's samples.
func TestInterruptedRoundsResume(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 core:2 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Topology: topo, Threads: []int{2, 4}, Algorithms: []string{"central", "dissemination"}, Budget: time.Hour}
	m, _ := NewModelMeasurer(topo, nil, model.DefaultModel, model.DefaultParams(), 0.05, 7)
	cfg.Measurer = m
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	cfg.Progress = func(p Progress) {
		if calls++; p.Round == 3 {
			cancel()
		}
	}
	f, err := Run(ctx, cfg)
	if err == nil || f == nil || !f.Partial || f.RoundsDone != 2 || f.RoundsPlanned <= 2 {
		t.Fatalf("cancelled in round 3: err %v, partial %v, rounds %d of %d", err, f != nil && f.Partial, f.RoundsDone, f.RoundsPlanned)
	}
	reps := f.Threads[0].Measurements[0].Reps
	cfg.Resume, cfg.Progress = f, nil
	g, err := Run(context.Background(), cfg)
	if err != nil || g.Partial || g.RoundsDone != g.RoundsPlanned || g.RoundsPlanned != f.RoundsPlanned {
		t.Fatalf("resumed: err %v partial %v rounds %d of %d", err, g.Partial, g.RoundsDone, g.RoundsPlanned)
	}
	if got := g.Threads[0].Measurements[0].Reps; got <= reps || g.Threads[0].Samples != nil {
		t.Errorf("resumed reps %d (before %d), samples kept %v", got, reps, g.Threads[0].Samples != nil)
	}
}

// TestPlayoff: candidates within playoffMargin of the best get extra
// interleaved samples after the rounds; the others do not.
func TestPlayoff(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 core:4 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := NewModelMeasurer(topo, nil, model.DefaultModel, model.DefaultParams(), 0.01, 3)
	// At 8 threads butterfly and pairwise are predicted alike; central is
	// far behind.
	f, err := Run(context.Background(), Config{Topology: topo, Measurer: m, Threads: []int{8}, SetsLimit: 1,
		Algorithms: []string{"central", "butterfly", "pairwise"}, Budget: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	base := f.RoundsPlanned * defaultSamples
	reps := map[string]int{}
	for _, x := range f.Threads[0].Measurements {
		reps[x.Algorithm] = x.Reps
	}
	extra := max(minSamples, defaultSamples/3) * playoffRounds
	if reps["butterfly"] != base+extra || reps["pairwise"] != base+extra || reps["central"] != base {
		t.Errorf("reps %v; want %d for the finalists, %d for central", reps, base+extra, base)
	}
}
