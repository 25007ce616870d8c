package check

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/latency"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

// maxLevelPairs caps the pairs levelLatencies looks at; beyond it every
// k-th pair is taken.
const maxLevelPairs = 1 << 16

// levelLatencies groups the CPU pairs of topo by the type of their deepest
// shared object (Core, L2Cache, L3Cache, Package, Machine, ...) and gives
// each level's median latency under c, deepest level first.
func levelLatencies(topo *hwtree.Topology, c model.Costs) []results.LevelLatency {
	pus := topo.PUs()
	total := len(pus) * (len(pus) - 1) / 2
	stride := max(1, total/maxLevelPairs)
	byType := map[hwtree.Type][]float64{}
	k := 0
	for i := range pus {
		for j := 0; j < i; j++ {
			k++
			if k%stride != 0 {
				continue
			}
			lca := topo.Covering(pus[i].CPUSet.Or(pus[j].CPUSet))
			if lca == nil {
				continue
			}
			byType[lca.Type] = append(byType[lca.Type], c.Latency(pus[i].OSIndex, pus[j].OSIndex))
		}
	}
	var types []hwtree.Type
	for t := range byType {
		types = append(types, t)
	}
	slices.Sort(types)
	slices.Reverse(types) // deepest (largest Type) first
	out := make([]results.LevelLatency, 0, len(types))
	for _, t := range types {
		v := byType[t]
		out = append(out, results.LevelLatency{Level: t.String(), Pairs: len(v), MedianNs: measure.Median(v)})
	}
	return out
}

// Per-level latencies the check measures (besides the one floor pair per
// level): levelPairsPerLevel representative pairs per level of the tree,
// levelPairsMax in all, levelSamples samples each, within
// levelLatencyBudget (or a twentieth of the check's budget, if less).
const (
	levelPairsPerLevel = 3
	levelPairsMax      = 48
	levelSamples       = 11
	levelLatencyBudget = 2 * time.Second
)

// recordLevelLatencies writes the per-level latencies into f (unless f
// has them from the file resumed): the floors just measured (one pair per
// level) and, with the time left before ctx's deadline (at most
// levelLatencyBudget or a twentieth of the budget), representative pairs
// per level. A note on what was skipped goes into f's cuts.
func recordLevelLatencies(ctx context.Context, f *results.File, cfg Config, floors []results.Floor) {
	if len(f.Latency) > 0 {
		return
	}
	limit := min(levelLatencyBudget, cfg.Budget/20)
	if d, ok := ctx.Deadline(); ok { // a simulated measurer ignores the limit
		limit = min(limit, time.Until(d))
	}
	var note string
	f.Latency, note = cfg.Measurer.LevelLatencies(ctx, cfg.Topology, measure.Options{SampleTarget: cfg.SampleTarget}, limit, floors)
	if note != "" {
		f.Cuts = append(f.Cuts, note)
	}
}

// measureLevelLatencies measures representative CPU pairs per level of topo
// (latency.RepresentativePairs) by pp (nil: measure.PingPongLatency) and
// returns each level's median for the results file, innermost first, the
// pairs of floors (measured already) included. It stops at the time limit
// or when ctx ends and keeps the pairs measured. Without two CPUs or two
// Ps it measures nothing and says why (a note for the file's cuts).
func measureLevelLatencies(ctx context.Context, topo *hwtree.Topology, pp latency.PingPongFunc, opts measure.Options, limit time.Duration, floors []results.Floor) ([]results.LevelLatency, string) {
	cpus := topo.CPUs()
	switch {
	case len(cpus) < 2:
		return nil, "no per-level latencies: one CPU"
	case pp == nil && runtime.GOMAXPROCS(0) < 2:
		return nil, "no per-level latencies: GOMAXPROCS is 1"
	}
	pairs := latency.RepresentativePairs(topo, cpus, levelPairsPerLevel, levelPairsMax)
	mctx, cancel := context.WithTimeout(ctx, max(limit, 0))
	defer cancel()
	opts.Samples = levelSamples
	opts.Context = mctx
	m, err := latency.MeasurePairs(mctx, cpus, pairs, latency.Options{Measure: opts, PingPong: pp})
	note := ""
	if err != nil {
		note = fmt.Sprintf("per-level latencies from %d of %d representative pairs and the floors: %v", measuredPairs(m), len(pairs), err)
		if ctx.Err() == nil && mctx.Err() != nil {
			note = fmt.Sprintf("per-level latencies from %d of %d representative pairs and the floors: the time for them (%s) ran out", measuredPairs(m), len(pairs), limit.Round(time.Millisecond))
		}
	}
	// The floors are pairs of their level too (the same ping-pong).
	for _, fl := range floors {
		i, j := slices.Index(m.CPUs, fl.CPUs[0]), slices.Index(m.CPUs, fl.CPUs[1])
		if i >= 0 && j >= 0 && i != j && math.IsNaN(m.NS[i][j]) {
			m.NS[i][j], m.NS[j][i] = fl.MedianNs, fl.MedianNs
		}
	}
	var out []results.LevelLatency
	for _, l := range latency.Levels(m, topo) {
		out = append(out, results.LevelLatency{Level: l.Level, Pairs: l.Pairs, MedianNs: l.MedianNs})
	}
	return out, note
}

// measuredPairs counts m's measured pairs.
func measuredPairs(m *latency.Matrix) int {
	n := 0
	for i := range m.NS {
		for j := 0; j < i; j++ {
			if !math.IsNaN(m.NS[i][j]) {
				n++
			}
		}
	}
	return n
}
