package check

import (
	"fmt"
	"math"
	"slices"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/results"
)

// Selection: given every measurement of one thread count, best picks the
// winner and robust the algorithm with the best worst case. Nothing else
// in the package decides winners.

// rank is an algorithm's place in the catalog: lower is simpler.
func rank(alg string) int { return slices.Index(barriers.Names(), alg) }

// valid reports whether a measurement may win: enough samples, not dropped.
func valid(m results.Measurement) bool {
	return !m.Dropped && m.Reps > 0 && !math.IsNaN(m.MedianNs)
}

// best picks the fastest (algorithm, placement); candidates tied with it
// (see tied: within TieFraction, or not significantly different by their
// samples, aligned with ms, nil where unknown) are settled by TieRule.
func best(ms []results.Measurement, samples []scoringSamples) *results.Choice {
	score := scorer(ms)
	normalized := allNormalized(ms) // the scale score ranks by
	sampleOf := func(i int) []float64 {
		if i < len(samples) {
			return samples[i].pick(normalized)
		}
		return nil
	}
	fastest, fi := math.Inf(1), -1
	for i, m := range ms {
		if valid(m) && score(m) < fastest {
			fastest, fi = score(m), i
		}
	}
	if fi < 0 {
		return nil
	}
	var win *results.Measurement
	tie := false
	for i := range ms {
		m := &ms[i]
		if !valid(*m) || !tied(fastest, score(*m), sampleOf(fi), sampleOf(i)) {
			continue
		}
		tie = tie || m.Algorithm != ms[fi].Algorithm // another algorithm within noise
		if win == nil || rank(m.Algorithm) < rank(win.Algorithm) ||
			rank(m.Algorithm) == rank(win.Algorithm) && score(*m) < score(*win) {
			win = m
		}
	}
	c := &results.Choice{Algorithm: win.Algorithm, Policy: win.Policy, CPUs: win.CPUs, Label: win.Label, Pinned: win.Pinned,
		MedianNs: win.MedianNs, CILowNs: win.CILowNs, CIHighNs: win.CIHighNs,
		Composition: win.Composition, FanIn: win.FanIn, LevelKeys: win.LevelKeys}
	if tie {
		c.Tie, c.TieRule = true, TieRule
	}
	runner := math.Inf(1)
	for _, m := range ms {
		if valid(m) && m.Algorithm != win.Algorithm && score(m) < runner {
			runner, c.RunnerUp = score(m), m.Algorithm
		}
	}
	if c.RunnerUp != "" {
		c.MarginPct = math.Round((runner/score(*win)-1)*1000) / 10
	}
	return c
}

// scorer ranks by the floor-normalised median when every valid
// measurement has one (placements measured alongside their floor), else by
// the raw median.
func scorer(ms []results.Measurement) func(results.Measurement) float64 {
	for _, m := range ms {
		if valid(m) && !(m.NormalizedNs > 0) {
			return func(m results.Measurement) float64 { return m.MedianNs }
		}
	}
	return func(m results.Measurement) float64 { return m.NormalizedNs }
}

// robust picks the algorithm whose slowest placement is fastest, among
// those measured on every placement (a dropped measurement still counts: it
// was at least twice the best there).
func robust(ms []results.Measurement) *results.Robust {
	score := scorer(ms)
	placements := map[string]bool{}
	worst := map[string]results.Measurement{}
	count := map[string]int{}
	for _, m := range ms {
		key := fmt.Sprint(m.CPUs)
		placements[key] = true
		if m.Reps == 0 || math.IsNaN(m.MedianNs) {
			continue
		}
		count[m.Algorithm]++
		if w, ok := worst[m.Algorithm]; !ok || score(m) > score(w) {
			worst[m.Algorithm] = m
		}
	}
	var out *results.Robust
	bestWorst := math.Inf(1)
	for _, w := range worst {
		if count[w.Algorithm] == len(placements) {
			bestWorst = min(bestWorst, score(w))
		}
	}
	for _, a := range barriers.Names() {
		w, ok := worst[a]
		if !ok || count[a] != len(placements) || score(w) > bestWorst*(1+TieFraction) {
			continue
		}
		if out == nil {
			out = &results.Robust{Algorithm: a, Policy: w.Policy, WorstMedianNs: score(w), WorstLabel: w.Label, Placements: len(placements)}
		}
	}
	return out
}
