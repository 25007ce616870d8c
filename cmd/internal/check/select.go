package check

import (
	"fmt"
	"math"
	"slices"

	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/results"
)

// Selection: given every measurement of one thread count, best picks the
// winner and robust the algorithm with the best worst case. Nothing else
// in the package decides winners.
//
// Both rank by the statistic every view prints, Measurement.MedianNs (the
// table's ns/episode, `show --json`'s median_ns, the plot's points, the
// margin). Where a floor ran beside the candidates it is paired: the
// median of each sample over the same round's floor sample, in the rounds
// whose floor saw the host state most rounds saw, times that state's
// floor (states.go); so a check that straddles a move of the host ranks
// every candidate in one state. Without a floor (oversubscribed
// placements) it is the median of the samples, all passes pooled.
// NormalizedNs, the median ratio of every round whatever its state, is
// recorded but ranks nothing.

// rank is an algorithm's place in the catalog: lower is simpler.
func rank(alg string) int { return catalog.Rank(alg) }

// valid reports whether a measurement may win: enough samples, not
// dropped, not rejected (an impossible episode a repeat did not confirm).
func valid(m results.Measurement) bool {
	return !m.Dropped && m.Reps > 0 && !math.IsNaN(m.MedianNs) && m.Rejected == ""
}

// best picks the fastest (algorithm, placement) by the shown median. The
// candidates within TieFraction of the fastest median are tied, and the
// simplest of them wins (TieWithin); nothing more than TieFraction slower
// than the fastest ever wins. When the runner-up is further off, the
// fastest wins, and the choice is still marked a tie if the significance
// test on the samples (aligned with ms, nil where unknown) cannot
// separate the two (TieNotSeparable). RunnerUp is the fastest other
// algorithm and MarginPct its median over the winner's, in percent.
func best(ms []results.Measurement, samples []scoringSamples) *results.Choice {
	sampleOf := func(i int) []float64 {
		if i < len(samples) {
			return samples[i].raw
		}
		return nil
	}
	dup := flatDuplicates(ms)
	ok := func(i int) bool { return valid(ms[i]) && !dup[i] }
	fastest, fi := math.Inf(1), -1
	for i, m := range ms {
		if ok(i) && m.MedianNs < fastest {
			fastest, fi = m.MedianNs, i
		}
	}
	if fi < 0 {
		return nil
	}
	wi := -1
	for i, m := range ms {
		if !ok(i) || !within(fastest, m.MedianNs) {
			continue
		}
		if wi < 0 || rank(m.Algorithm) < rank(ms[wi].Algorithm) ||
			rank(m.Algorithm) == rank(ms[wi].Algorithm) && m.MedianNs < ms[wi].MedianNs {
			wi = i
		}
	}
	win := &ms[wi]
	c := &results.Choice{CPUs: win.CPUs, Label: win.Label, Pinned: win.Pinned,
		Spec:     win.Spec,
		MedianNs: win.MedianNs, CILowNs: win.CILowNs, CIHighNs: win.CIHighNs,
		GoOnly: algname.GoOnly(win.Algorithm)}
	ri := -1
	for i, m := range ms {
		if ok(i) && m.Algorithm != win.Algorithm && (ri < 0 || m.MedianNs < ms[ri].MedianNs) {
			ri = i
		}
	}
	if ri < 0 {
		return c
	}
	runner := ms[ri]
	c.RunnerUp = runner.Algorithm
	c.MarginPct = math.Round((runner.MedianNs/win.MedianNs-1)*1000) / 10
	switch {
	case within(fastest, runner.MedianNs):
		c.Tie, c.TieRule = true, TieWithin
	case !separable(sampleOf(wi), sampleOf(ri)) && len(sampleOf(wi)) > 0 && len(sampleOf(ri)) > 0:
		c.Tie, c.TieRule = true, TieNotSeparable
	}
	return c
}

// robust picks the algorithm whose slowest placement (by shown median) is
// fastest, among those measured on every placement (a dropped measurement
// still counts: it was at least twice the best there; a rejected one
// does not: its impossible time is no worst case); among algorithms
// whose worst is within TieFraction of that, the simplest. Its
// WorstMedianNs is that algorithm's slowest shown median, so it is never
// below the fastest median of the thread count, and when robust and best
// name the same algorithm it is never below the best's median.
func robust(ms []results.Measurement) *results.Robust {
	placements := map[string]bool{}
	worst := map[string]results.Measurement{}
	on := map[string]map[string]bool{} // algorithm -> placements measured
	// A hybrid that is on every placement only its flat algorithm
	// measured beside it is not offered in that algorithm's place; one
	// composed of levels somewhere is a candidate of its own.
	dup, onlyFlat := flatDuplicates(ms), true
	for i, m := range ms {
		if m.Algorithm == algname.Hybrid && !dup[i] {
			onlyFlat = false
		}
	}
	for _, m := range ms {
		key := fmt.Sprint(m.CPUs)
		placements[key] = true
		if m.Reps == 0 || math.IsNaN(m.MedianNs) || m.Rejected != "" {
			continue // a rejected (impossible) time is no worst case
		}
		if on[m.Algorithm] == nil {
			on[m.Algorithm] = map[string]bool{}
		}
		on[m.Algorithm][key] = true
		if w, ok := worst[m.Algorithm]; !ok || m.MedianNs > w.MedianNs {
			worst[m.Algorithm] = m
		}
	}
	everywhere := func(a string) bool { return len(on[a]) == len(placements) }
	bestWorst := math.Inf(1)
	for a, w := range worst {
		if everywhere(a) {
			bestWorst = min(bestWorst, w.MedianNs)
		}
	}
	for _, a := range catalog.Names() {
		if a == algname.Hybrid && onlyFlat {
			continue
		}
		w, ok := worst[a]
		if ok && everywhere(a) && within(bestWorst, w.MedianNs) {
			return &results.Robust{Algorithm: a, Policy: w.Policy, WorstMedianNs: w.MedianNs, WorstLabel: w.Label, Placements: len(placements)}
		}
	}
	return nil
}

// flatDuplicates marks the hybrids composed as one flat level of an
// algorithm (model.FlatOf: "flat:goroutine", "flat:all-static-tree(8)")
// measured beside that algorithm at the same fan-in on the same
// placement: the same barrier run through the hybrid's code, not another
// candidate. Neither best nor robust offers it in that algorithm's place
// (it won +0.0% ties for being earlier in the catalog).
func flatDuplicates(ms []results.Measurement) []bool {
	dup := make([]bool, len(ms))
	for i, h := range ms {
		if h.Algorithm != algname.Hybrid {
			continue
		}
		alg, fanIn, ok := model.FlatOf(h.Composition)
		if !ok {
			continue
		}
		dup[i] = slices.ContainsFunc(ms, func(m results.Measurement) bool {
			return m.Algorithm == alg && m.FanIn == fanIn && slices.Equal(m.CPUs, h.CPUs) && valid(m)
		})
	}
	return dup
}
