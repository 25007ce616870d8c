package check

import (
	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/model"
	"github.com/barriertune/barriertune/results"
)

// HybridCandidate composes the hybrid barrier the live check measures on a
// placement: the tree's levels as cpus see them, composed greedily by the
// critical-path model over this machine's measured floors (each floor's
// level gets its median; levels without a floor take typical latencies).
// The measuring step constructs it with barriers.New("hybrid", len(cpus),
// opts...) and records the composition in the winner's Choice.
func HybridCandidate(topo *hwtree.Topology, cpus []int, floors []results.Floor) (opts []barriers.Option, composition string, err error) {
	byLevel := map[hwtree.Type]float64{}
	for _, f := range floors {
		if t, err := hwtree.ParseType(f.Level); err == nil && f.MedianNs > 0 {
			byLevel[t] = f.MedianNs
		}
	}
	comp, _, err := model.HybridFor(model.CriticalPathModel, topo, cpus, model.NewTreeCostsFrom(topo, byLevel))
	if err != nil {
		return nil, "", err
	}
	return []barriers.Option{barriers.WithHierarchy(comp.Levels)}, comp.String(), nil
}
