package latency

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/barriertune/barriertune/hwtree"
)

// Pair is two OS CPUs whose latency is measured; Level is the type of
// their lowest common object in the tree they were chosen from.
type Pair struct {
	A, B  int
	Level string
}

// levelKey identifies a tree level: pairs whose lowest common object has
// this type and depth.
type levelKey struct {
	typ   hwtree.Type
	depth int
}

// RepresentativePairs chooses, for every level of topo (the type and depth
// of two CPUs' lowest common object), up to perLevel pairs of cpus spread
// over the level's objects and their children; at most maxPairs in all
// (each level keeps at least one while the cap allows). Pairs under
// symmetric subtrees of one level share a latency, so a few per level
// stand for all of them and spot-check each other. The choice is
// deterministic. Innermost level first.
func RepresentativePairs(topo *hwtree.Topology, cpus []int, perLevel, maxPairs int) []Pair {
	in := map[int]bool{}
	for _, c := range cpus {
		in[c] = true
	}
	// For each object, its children's CPUs among cpus (children without
	// any left out); objects with two such children are a level's LCAs.
	type lca struct{ children [][]int }
	byLevel := map[levelKey][]lca{}
	topo.Walk(func(o *hwtree.Object) bool {
		var ch [][]int
		for _, c := range o.Children {
			var cs []int
			for _, x := range c.CPUSet.Members() {
				if in[x] {
					cs = append(cs, x)
				}
			}
			if len(cs) > 0 {
				ch = append(ch, cs)
			}
		}
		if len(ch) >= 2 {
			k := levelKey{o.Type, o.Depth}
			byLevel[k] = append(byLevel[k], lca{ch})
		}
		return true
	})
	keys := make([]levelKey, 0, len(byLevel))
	for k := range byLevel {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].depth > keys[j].depth })
	if len(keys) == 0 || perLevel < 1 || maxPairs < 1 {
		return nil
	}
	perLevel = min(perLevel, max(1, maxPairs/len(keys)))
	rng := rand.New(rand.NewPCG(1, 2))
	var out []Pair
	for _, k := range keys {
		objs := byLevel[k]
		seen := map[[2]int]bool{}
		for try := 0; len(seen) < perLevel && try < 20*perLevel && len(out) < maxPairs; try++ {
			// Objects in turn, spread over the level; random children
			// and CPUs under them.
			o := objs[(try*len(objs)/perLevel+try/perLevel)%len(objs)]
			ca := rng.IntN(len(o.children))
			cb := (ca + 1 + rng.IntN(len(o.children)-1)) % len(o.children)
			a := o.children[ca][rng.IntN(len(o.children[ca]))]
			b := o.children[cb][rng.IntN(len(o.children[cb]))]
			if a < b {
				a, b = b, a
			}
			if seen[[2]int{a, b}] {
				continue
			}
			seen[[2]int{a, b}] = true
			out = append(out, Pair{A: a, B: b, Level: k.typ.String()})
		}
	}
	return out
}

// MeasureTree measures the latency matrix of cpus on topo: every pair up
// to AllPairsUpTo CPUs, beyond that the RepresentativePairs of topo
// (opts.PerLevel per level, opts.MaxPairs in all), the other pairs left
// unmeasured (NaN; FillByLevel gives them their level's median).
func MeasureTree(ctx context.Context, topo *hwtree.Topology, cpus []int, opts Options) (*Matrix, error) {
	if len(cpus) <= AllPairsUpTo {
		return Measure(ctx, cpus, opts)
	}
	if err := checkCPUs(cpus); err != nil {
		return nil, err
	}
	per, maxPairs := opts.PerLevel, opts.MaxPairs
	if per <= 0 {
		per = DefaultPerLevel
	}
	if maxPairs <= 0 {
		maxPairs = DefaultMaxPairs
	}
	pairs := RepresentativePairs(topo, cpus, per, maxPairs)
	if len(pairs) == 0 {
		return nil, fmt.Errorf("latency: no two of the %d CPUs share a level of the tree (%s)", len(cpus), topo.Source)
	}
	return MeasurePairs(ctx, cpus, pairs, opts)
}

// FillByLevel returns a copy of m in which every unmeasured pair holds the
// median of the measured pairs of its level in topo (pairs under symmetric
// subtrees share a latency), so that the model can use a matrix measured
// by representative pairs. Pairs of a level with no measured pair, or with
// a CPU missing from topo, stay NaN.
func FillByLevel(m *Matrix, topo *hwtree.Topology) *Matrix {
	out := newMatrix(m.CPUs)
	level := levelOf(m, topo)
	vals := map[levelKey][]float64{}
	for i := range m.CPUs {
		for j := 0; j < i; j++ {
			if k, ok := level(i, j); ok && !math.IsNaN(m.NS[i][j]) {
				vals[k] = append(vals[k], m.NS[i][j])
			}
		}
	}
	med := map[levelKey]float64{}
	for k, v := range vals {
		med[k] = median(v)
	}
	for i := range m.CPUs {
		for j := 0; j < i; j++ {
			v := m.NS[i][j]
			if math.IsNaN(v) {
				if k, ok := level(i, j); ok {
					if mv, ok := med[k]; ok {
						v = mv
					}
				}
			}
			out.NS[i][j], out.NS[j][i] = v, v
		}
	}
	return out
}

// levelOf returns the level of the pair of m's indexes i and j in topo.
func levelOf(m *Matrix, topo *hwtree.Topology) func(i, j int) (levelKey, bool) {
	pu := map[int]*hwtree.Object{}
	for _, o := range topo.PUs() {
		pu[o.OSIndex] = o
	}
	return func(i, j int) (levelKey, bool) {
		a, b := pu[m.CPUs[i]], pu[m.CPUs[j]]
		if a == nil || b == nil {
			return levelKey{}, false
		}
		l := common(a, b)
		return levelKey{l.Type, l.Depth}, true
	}
}

// Completed returns the matrix and the tree a prediction runs on: on topo
// (the machine it was measured on) every pair not measured takes its
// level's median (FillByLevel); without a tree, the tree clustered from
// the matrix (Cluster). It fails when a pair is still unknown.
func Completed(m *Matrix, topo *hwtree.Topology) (*Matrix, *hwtree.Topology, error) {
	if topo == nil {
		t, err := Cluster(m)
		if err != nil {
			return nil, nil, err
		}
		topo = t
	} else {
		m = FillByLevel(m, topo)
	}
	if err := m.Complete(); err != nil {
		return nil, nil, err
	}
	return m, topo, nil
}
