package check

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/latency"
	"github.com/barriertune/barriertune/measure"
	"github.com/barriertune/barriertune/model"
)

// LevelLatency is the median latency of the CPU pairs whose deepest shared
// object is of one type (the results file's per-level latencies).
type LevelLatency struct {
	Level    string  `json:"level"`
	Pairs    int     `json:"pairs"`
	MedianNs float64 `json:"median_ns"`
}

// maxLevelPairs caps the pairs levelLatencies looks at; beyond it every
// k-th pair is taken.
const maxLevelPairs = 1 << 16

// levelLatencies groups the CPU pairs of topo by the type of their deepest
// shared object (Core, L2Cache, L3Cache, Package, Machine, ...) and gives
// each level's median latency under c, deepest level first.
func levelLatencies(topo *hwtree.Topology, c model.Costs) []LevelLatency {
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
	out := make([]LevelLatency, 0, len(types))
	for _, t := range types {
		v := byType[t]
		out = append(out, LevelLatency{Level: t.String(), Pairs: len(v), MedianNs: measure.Median(v)})
	}
	return out
}

// LatencyFile reads a matrix in the ../shared/latency CSV format for
// planning and simulation (latency.ReadCSVFile: a regular file, size
// capped) and the tree clustered from it (latency.Cluster), named after the
// file. Predicting needs every pair, so a matrix with holes is refused.
func LatencyFile(path string) (*latency.Matrix, *hwtree.Topology, error) {
	m, err := latency.ReadCSVFile(path)
	if err != nil {
		return nil, nil, err
	}
	if err := m.Complete(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	topo, err := latency.Cluster(m)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	topo.Source = "latency:" + filepath.Base(path)
	return m, topo, nil
}
