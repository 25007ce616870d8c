//go:build barriertrace

// The pattern test: one real episode of every algorithm in package barriers,
// traced signal by signal (barriers/trace_on.go), against the model's
// pattern. Run it with
//
//	go test -tags barriertrace ./model/ ./barriers/
//
// Trace and model are compared in two ways (docs/model.md, "Signal
// patterns"):
//   - structure: both put in canonical stages, a signal's stage being its
//     causal depth (0 for a signal whose sender had observed nothing when
//     it sent it, else one more than the deepest signal the sender had
//     observed), the same set of (from, to) signals in every stage;
//   - timing: every participant's finish under the critical-path model is
//     the same for random asymmetric latency matrices, which holds exactly
//     when each signal depends on the same signals in both.

package model

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/internal/trace"
)

// traceTimeout bounds one traced episode; a barrier that has not completed
// by then is broken and the test fails (it never hangs).
const traceTimeout = 20 * time.Second

// traceEpisode runs one episode of b with a trace. With gated set,
// participants start one at a time in descending id order, each once the
// previous one has begun to wait or has returned, so that a counter's last
// arriver is always its group's lowest id (the model's choice); otherwise
// all start at once.
func traceEpisode(b barriers.Barrier, gated bool) ([]trace.Event, error) {
	n := b.N()
	tr, err := trace.Start()
	if err != nil {
		return nil, err
	}
	defer tr.Stop()
	results := make([]chan error, n)
	deadline := time.Now().Add(traceTimeout)
	for id := n - 1; id >= 0; id-- {
		results[id] = make(chan error, 1)
		go func(id int) {
			tr.Join(id)
			results[id] <- b.WaitContext(context.Background(), id)
		}(id)
		if !gated {
			continue
		}
		for !tr.Waited(id) && len(results[id]) == 0 {
			if time.Now().After(deadline) {
				b.Break()
				return nil, fmt.Errorf("participant %d neither waited nor returned within %v", id, traceTimeout)
			}
			time.Sleep(20 * time.Microsecond)
		}
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for id := range results {
		select {
		case err := <-results[id]:
			if err != nil {
				b.Break()
				return nil, fmt.Errorf("participant %d: %w", id, err)
			}
		case <-timer.C:
			b.Break()
			return nil, fmt.Errorf("episode not complete within %v (participant %d still waits)", traceTimeout, id)
		}
	}
	return tr.Stop()
}

// tsig is one traced signal from From to To, with its causal depth.
type tsig struct {
	Signal
	depth int
}

// analysis is a traced or modelled episode in canonical form.
type analysis struct {
	stages   []map[Signal]bool // canonical stage -> its signals
	finishes func(L [][]float64) []float64
}

// analyseTrace turns a trace into signals: every observation (TraceSaw) of
// a location by q is a signal from each other participant that wrote the
// location earlier in the episode. A signal's depth is one more than the
// deepest signal its writer had observed before writing (0 if none).
func analyseTrace(events []trace.Event, n int) (analysis, error) {
	type write struct {
		from, depth int
		idx         int
	}
	writes := map[uintptr][]write{}
	seen := map[uintptr]bool{} // some participant observed the location
	rdepth := make([]int, n)   // deepest signal each participant observed
	for i := range rdepth {
		rdepth[i] = -1
	}
	var sigs []tsig
	for i, ev := range events {
		p := ev.Participant
		if p < 0 || p >= n {
			return analysis{}, fmt.Errorf("event %d: participant %d of %d", i, p, n)
		}
		switch ev.Kind {
		case trace.Write:
			writes[ev.Loc] = append(writes[ev.Loc], write{p, rdepth[p] + 1, i})
		case trace.Saw:
			ws := writes[ev.Loc]
			if len(ws) == 0 {
				return analysis{}, fmt.Errorf("event %d: participant %d observed location %#x, which nobody wrote in this episode", i, p, ev.Loc)
			}
			seen[ev.Loc] = true
			for _, w := range ws {
				if w.from != p {
					sigs = append(sigs, tsig{Signal{w.from, p}, w.depth})
					rdepth[p] = max(rdepth[p], w.depth)
				}
			}
		}
	}
	for loc, ws := range writes {
		// Every write is a signal to someone, except a lone
		// participant's release, written for nobody.
		if !seen[loc] && n > 1 {
			return analysis{}, fmt.Errorf("participant %d wrote location %#x, which nobody observed in this episode", ws[0].from, loc)
		}
	}
	a := analysis{finishes: func(L [][]float64) []float64 {
		// The critical-path model run on the trace itself: a write is
		// sent when its writer has received everything it observed
		// before; an observation arrives with the latest write it saw.
		known := make([]float64, n)
		send := map[int]float64{}
		byLoc := map[uintptr][]int{}
		for i, ev := range events {
			switch ev.Kind {
			case trace.Write:
				send[i] = known[ev.Participant]
				byLoc[ev.Loc] = append(byLoc[ev.Loc], i)
			case trace.Saw:
				q := ev.Participant
				for _, w := range byLoc[ev.Loc] {
					if p := events[w].Participant; p != q {
						known[q] = math.Max(known[q], send[w]+L[p][q])
					}
				}
			}
		}
		return known
	}}
	for _, s := range sigs {
		for len(a.stages) <= s.depth {
			a.stages = append(a.stages, map[Signal]bool{})
		}
		a.stages[s.depth][s.Signal] = true
	}
	return a, nil
}

// analysePattern puts a model pattern in the same canonical form: a signal
// of stage s from p depends on every signal p received in stages before s.
func analysePattern(p Pattern, n int) analysis {
	rdepth := make([]int, n)
	for i := range rdepth {
		rdepth[i] = -1
	}
	a := analysis{finishes: func(L [][]float64) []float64 {
		return Finishes(p, seqInts(n), matrixCosts(L))
	}}
	for _, st := range p {
		next := slices.Clone(rdepth)
		for _, s := range st {
			d := rdepth[s.From] + 1
			for len(a.stages) <= d {
				a.stages = append(a.stages, map[Signal]bool{})
			}
			a.stages[d][s] = true
			next[s.To] = max(next[s.To], d)
		}
		rdepth = next
	}
	return a
}

type matrixCosts [][]float64

func (m matrixCosts) Latency(a, b int) float64 { return m[a][b] }

func formatStage(st map[Signal]bool) string {
	var ss []Signal
	for s := range st {
		ss = append(ss, s)
	}
	sort.Slice(ss, func(i, j int) bool {
		if ss[i].From != ss[j].From {
			return ss[i].From < ss[j].From
		}
		return ss[i].To < ss[j].To
	})
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = fmt.Sprintf("%d→%d", s.From, s.To)
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// compare returns how traced differs from modelled, or "".
func compare(traced, modelled analysis, n int, rng *rand.Rand) string {
	var diffs []string
	for s := 0; s < max(len(traced.stages), len(modelled.stages)); s++ {
		var a, b map[Signal]bool
		if s < len(traced.stages) {
			a = traced.stages[s]
		}
		if s < len(modelled.stages) {
			b = modelled.stages[s]
		}
		if !maps.Equal(a, b) {
			diffs = append(diffs, fmt.Sprintf("stage %d: traced %s, model %s", s, formatStage(a), formatStage(b)))
		}
	}
	if len(diffs) > 0 {
		return strings.Join(diffs, "; ")
	}
	for trial := 0; trial < 20; trial++ {
		L := make([][]float64, n)
		for i := range L {
			L[i] = make([]float64, n)
			for j := range L[i] {
				if i != j {
					L[i][j] = 1 + 99*rng.Float64()
				}
			}
		}
		ft, fm := traced.finishes(L), modelled.finishes(L)
		for i := range ft {
			if math.Abs(ft[i]-fm[i]) > 1e-9*math.Max(1, fm[i]) {
				return fmt.Sprintf("same stages, but participant %d finishes at %.3f in the trace and %.3f in the model (random latencies, trial %d): a signal depends on different signals", i, ft[i], fm[i], trial)
			}
		}
	}
	return ""
}

// counterAlgorithms complete an episode on a counter whose last arriver is
// whoever comes last; traced free-running, their hub varies.
var counterAlgorithms = map[string]bool{"central": true, "combining": true, "goroutine": true, "cond": true, "channel": true}

type traceCase struct {
	name   string
	n      int
	opts   []barriers.Option
	alg    string
	levels []barriers.Level // hybrid only (nil: flat dissemination)
	fanIn  int
	free   bool // also traced free-running (no counter whose hub could vary)
}

func (c traceCase) pattern() (Pattern, error) {
	if c.alg != "hybrid" {
		return PatternOf(c.alg, c.n, c.fanIn)
	}
	levels := c.levels
	if levels == nil {
		levels = []barriers.Level{{Name: "flat", Algorithm: "dissemination", Groups: [][]int{seqInts(c.n)}}}
	}
	return HybridPattern(levels, c.n)
}

func hierarchy(t *testing.T, spec string, keys ...[]int) []barriers.Level {
	t.Helper()
	specs, err := barriers.ParseHierarchy(spec)
	if err != nil {
		t.Fatal(err)
	}
	levels, err := barriers.Hierarchy(specs).Grouped(keys)
	if err != nil {
		t.Fatal(err)
	}
	return levels
}

func keysOf(n int, f func(i int) int) []int {
	k := make([]int, n)
	for i := range k {
		k[i] = f(i)
	}
	return k
}

func traceCases(t *testing.T) []traceCase {
	ns := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17}
	if testing.Short() {
		ns = []int{1, 2, 3, 5, 8, 13}
	}
	var cases []traceCase
	for _, alg := range catalog.Names() {
		if alg == "hybrid" {
			continue
		}
		fanIns := []int{0}
		if TakesFanIn(alg) {
			fanIns = []int{2, 3, 4, 8}
		}
		for _, n := range ns {
			for _, k := range fanIns {
				c := traceCase{name: fmt.Sprintf("%s/n=%d", alg, n), n: n, alg: alg, fanIn: k, free: !counterAlgorithms[alg]}
				if k > 0 {
					c.name += fmt.Sprintf("/fanin=%d", k)
					c.opts = append(c.opts, barriers.WithFanIn(k))
				}
				cases = append(cases, c)
			}
		}
	}
	// The hybrid: flat, and compositions with uneven groups, groups of
	// one, groups that do not follow id order, a top level the barrier
	// adds, fan-ins, and counters at the lowest level (where arrivals
	// follow the gated order, so the last arriver is the group's first
	// id).
	for _, n := range []int{1, 5, 8} {
		cases = append(cases, traceCase{name: fmt.Sprintf("hybrid/flat/n=%d", n), n: n, alg: "hybrid", free: true})
	}
	add := func(n int, free bool, levels []barriers.Level) {
		cases = append(cases, traceCase{name: fmt.Sprintf("hybrid/%s/n=%d", barriers.Hierarchy(levels).String(), n),
			n: n, alg: "hybrid", levels: levels, free: free, opts: []barriers.Option{barriers.WithHierarchy(levels)}})
	}
	add(12, false, hierarchy(t, "core:central,l3:tournament,package:butterfly",
		keysOf(12, func(i int) int { return i / 2 }),
		keysOf(12, func(i int) int { return min(i/7, 1) }),
		keysOf(12, func(i int) int { return 0 })))
	add(12, true, hierarchy(t, "core:dissemination,l3:static-tree(2)", // top added: {0, 8}
		keysOf(12, func(i int) int { return i / 2 }),
		keysOf(12, func(i int) int { return min(i/7, 1) })))
	add(10, true, hierarchy(t, "core:mcs,l3:all-static-tree(3)",
		keysOf(10, func(i int) int { return i % 3 }),
		keysOf(10, func(i int) int { return 0 })))
	add(13, false, hierarchy(t, "core:combining(3),l3:pairwise", // {12} is a group of one
		keysOf(13, func(i int) int { return i / 4 }),
		keysOf(13, func(i int) int { return 0 })))
	add(7, false, hierarchy(t, "core:goroutine,package:binomial",
		keysOf(7, func(i int) int { return i / 3 }),
		keysOf(7, func(i int) int { return 0 })))
	add(9, false, hierarchy(t, "core:cond,l3:channel,package:dissemination", // channel sees the reps in descending order too
		keysOf(9, func(i int) int { return i / 2 }),
		keysOf(9, func(i int) int { return i / 8 }),
		keysOf(9, func(i int) int { return 0 })))
	add(8, true, hierarchy(t, "core:dissemination,l3:pairwise", // keys that do not nest; top added
		keysOf(8, func(i int) int { return i / 2 }),
		keysOf(8, func(i int) int { return i % 4 })))
	return cases
}

// TestPatternsMatchTrace traces one real episode (two, in fact: the second
// exercises what differs between episodes, such as MCS's clearing of bits)
// of every algorithm of barriers' catalog and compares it with the model.
func TestPatternsMatchTrace(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, c := range traceCases(t) {
		t.Run(c.name, func(t *testing.T) {
			want, err := c.pattern()
			if err != nil {
				t.Fatal(err)
			}
			modelled := analysePattern(want, c.n)
			opts := append([]barriers.Option{barriers.WithPolicy(barriers.Park), barriers.WithSpinBudget(0)}, c.opts...)
			b, err := barriers.New(c.alg, c.n, opts...)
			if err != nil {
				t.Fatal(err)
			}
			runs := []bool{true, true}
			if c.free {
				runs = append(runs, false)
			}
			for ep, gated := range runs {
				events, err := traceEpisode(b, gated)
				if err != nil {
					t.Fatalf("episode %d: %v", ep+1, err)
				}
				traced, err := analyseTrace(events, c.n)
				if err != nil {
					t.Fatalf("episode %d: %v", ep+1, err)
				}
				if d := compare(traced, modelled, c.n, rng); d != "" {
					t.Errorf("episode %d (gated %v) differs from the model: %s", ep+1, gated, d)
				}
			}
		})
	}
}

// The comparison can fail: a model that moves one signal, or that makes a
// signal wait for one more stage, is told apart from the trace.
func TestPatternComparisonDetects(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	n := 6
	b, err := barriers.New("dissemination", n, barriers.WithPolicy(barriers.Park), barriers.WithSpinBudget(0))
	if err != nil {
		t.Fatal(err)
	}
	events, err := traceEpisode(b, true)
	if err != nil {
		t.Fatal(err)
	}
	traced, err := analyseTrace(events, n)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := PatternOf("dissemination", n, 0)
	if d := compare(traced, analysePattern(good, n), n, rng); d != "" {
		t.Fatalf("the right pattern differs: %s", d)
	}
	moved := slices.Clone(good)
	moved[1] = slices.Clone(moved[1])
	moved[1][0] = Signal{0, 3} // 0 → 2 became 0 → 3
	if compare(traced, analysePattern(moved, n), n, rng) == "" {
		t.Error("a moved signal went unnoticed")
	}
	// Butterfly at n=4 has dissemination's stage sizes but other partners.
	bf, _ := PatternOf("butterfly", 4, 0)
	b4, _ := barriers.New("dissemination", 4, barriers.WithPolicy(barriers.Park), barriers.WithSpinBudget(0))
	ev4, err := traceEpisode(b4, true)
	if err != nil {
		t.Fatal(err)
	}
	tr4, err := analyseTrace(ev4, 4)
	if err != nil {
		t.Fatal(err)
	}
	if compare(tr4, analysePattern(bf, 4), 4, rng) == "" {
		t.Error("butterfly passed for dissemination")
	}
	// Same stages, other dependencies: participant 2 signals 3 after
	// hearing from 0 only, while the model has it wait for 1 as well.
	ev := []trace.Event{
		{Participant: 0, Kind: trace.Write, Loc: 1},
		{Participant: 1, Kind: trace.Write, Loc: 2},
		{Participant: 2, Kind: trace.Saw, Loc: 1},
		{Participant: 2, Kind: trace.Write, Loc: 3},
		{Participant: 2, Kind: trace.Saw, Loc: 2},
		{Participant: 3, Kind: trace.Saw, Loc: 3},
	}
	partial, err := analyseTrace(ev, 4)
	if err != nil {
		t.Fatal(err)
	}
	p := Pattern{{{0, 2}, {1, 2}}, {{2, 3}}}
	d := compare(partial, analysePattern(p, 4), 4, rng)
	if !strings.Contains(d, "finishes") {
		t.Errorf("a different dependency went unnoticed (%q)", d)
	}
}
