package check

import (
	"fmt"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/results"
)

// The live check measures the hybrid like any flat algorithm, but composed
// for each placement: the tree's levels as the placement sees them
// (model.TreeLevels), algorithm and fan-in per level chosen greedily by the
// default model (model.HybridFor) over this machine's measured floors (a
// simulated check: over the model measurer's latencies; `check --plan`:
// over the plan's). Where no level pays, the
// composition is one flat level ("flat:dissemination"): still measured,
// through the hybrid's code, and recorded as such.

// hybridModel is the cost model the check composes the hybrid with.
const hybridModel = model.DefaultModel

// hybridComposer composes the hybrid for each placement of one check; the
// costs are built once, when first needed (O(PUs²)).
type hybridComposer struct {
	topo    *hwtree.Topology
	byLevel map[hwtree.Type]float64
	costs   model.Costs
}

// newHybridComposer returns the composer for topo with the measured
// latencies: each floor's level takes its median, then each per-level
// latency the file holds for a level without a floor; the other levels take
// the typical latencies of model.NewTreeCosts.
func newHybridComposer(topo *hwtree.Topology, floors []results.Floor, latency []results.LevelLatency) *hybridComposer {
	return &hybridComposer{topo: topo, byLevel: byLevel(floors, latency)}
}

// compose returns the hybrid's levels (with their groups) for the placement
// cpus.
func (h *hybridComposer) compose(cpus []int) (model.Composition, error) {
	if h.costs == nil {
		h.costs = model.NewTreeCostsFrom(h.topo, h.byLevel)
	}
	comp, _, err := model.HybridFor(hybridModel, h.topo, cpus, h.costs)
	if err != nil {
		return model.Composition{}, fmt.Errorf("composing the hybrid for CPUs %v: %w", cpus, err)
	}
	return comp, nil
}

// annotation is what the results record about a candidate beyond its
// algorithm: a hybrid's composition and level keys, a tree's fan-in.
type annotation struct {
	composition string
	fanIn       int
	keys        [][]int
}

// annotationKey identifies a candidate of a check: its algorithm and
// placement (one candidate per algorithm per placement).
func annotationKey(alg string, cpus []int) string { return fmt.Sprint(alg, cpus) }

// candidates returns the measure candidates for algs on the placement cpus
// (the hybrid composed, the tree algorithms at their default fan-in, all
// with policy) and what to record about each.
func (h *hybridComposer) candidates(algs []cand, cpus []int, policy barriers.Policy) ([]measure.Candidate, []annotation, error) {
	cands := make([]measure.Candidate, len(algs))
	notes := make([]annotation, len(algs))
	for i, c := range algs {
		a := c.alg
		cands[i] = measure.Candidate{Algorithm: a, Policy: policy}
		switch {
		case a == algname.Hybrid:
			comp, err := h.compose(cpus)
			if err != nil {
				return nil, nil, err
			}
			keys, err := barriers.Hierarchy(comp.Levels).Keys(len(cpus))
			if err != nil {
				return nil, nil, fmt.Errorf("hybrid %s on CPUs %v: %w", comp, cpus, err)
			}
			cands[i].Hierarchy = comp.Levels
			notes[i] = annotation{composition: comp.String(), keys: keys}
		case c.fanIn > 0:
			cands[i].FanIn = c.fanIn
			notes[i].fanIn = c.fanIn
		}
	}
	return cands, notes, nil
}

// annotate writes the recorded compositions, fan-ins and level keys into
// the measurements of f they belong to, and into each winner from its
// measurement.
func annotate(f *results.File, notes map[string]annotation) {
	if f == nil || len(notes) == 0 {
		return
	}
	for ti := range f.Threads {
		t := &f.Threads[ti]
		for mi := range t.Measurements {
			m := &t.Measurements[mi]
			if n, ok := notes[annotationKey(m.Algorithm, m.CPUs)]; ok {
				m.Composition, m.FanIn, m.LevelKeys = n.composition, n.fanIn, n.keys
			}
		}
		if b := t.Best; b != nil {
			if n, ok := notes[annotationKey(b.Algorithm, b.CPUs)]; ok {
				b.Composition, b.FanIn, b.LevelKeys = n.composition, n.fanIn, n.keys
			}
		}
	}
}
