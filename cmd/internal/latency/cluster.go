package latency

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/barriertune/barriertune/hwtree"
)

// Level summarises the latencies of the CPU pairs whose lowest common
// object in a tree is of one type.
type Level struct {
	// Level is the type of the pairs' lowest common object, e.g. "L3Cache".
	Level string `json:"level"`
	// Pairs is how many measured pairs fall in the level.
	Pairs int `json:"pairs"`
	// MedianNs is their median latency.
	MedianNs float64 `json:"median_ns"`
	// MinNs and MaxNs are the fastest and slowest pair: the spread of the
	// level (pairs under symmetric subtrees should agree).
	MinNs float64 `json:"min_ns"`
	MaxNs float64 `json:"max_ns"`
}

// Spread returns the level's slowest pair over its fastest (1: they agree).
func (l Level) Spread() float64 { return l.MaxNs / l.MinNs }

// Levels groups the measured pairs of m by the type of their lowest common
// object in topo, innermost level first. Pairs with a CPU missing from topo
// are skipped.
func Levels(m *Matrix, topo *hwtree.Topology) []Level {
	keys, vals := levelValues(m, topo)
	out := make([]Level, 0, len(keys))
	for _, k := range keys {
		v := vals[k]
		out = append(out, Level{Level: k.typ.String(), Pairs: len(v), MedianNs: median(v), MinNs: v[0], MaxNs: v[len(v)-1]})
	}
	return out
}

// levelValues returns the levels of m's measured pairs in topo, innermost
// first, and each level's latencies, ascending.
func levelValues(m *Matrix, topo *hwtree.Topology) ([]levelKey, map[levelKey][]float64) {
	level := levelOf(m, topo)
	vals := map[levelKey][]float64{}
	for i := range m.CPUs {
		for j := 0; j < i; j++ {
			v := m.NS[i][j]
			if math.IsNaN(v) {
				continue
			}
			if k, ok := level(i, j); ok {
				vals[k] = append(vals[k], v)
			}
		}
	}
	keys := make([]levelKey, 0, len(vals))
	for k, v := range vals {
		keys = append(keys, k)
		sort.Float64s(v)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].depth > keys[j].depth })
	return keys, vals
}

// Disagreement is a place where a measured matrix and the tree it was
// measured on tell different stories.
type Disagreement struct {
	// Level is the tree level concerned (the outer one for "merged").
	Level string `json:"level"`
	// Kind is "merged" (the level's pairs are not clearly slower than the
	// level inside it: its groups behave as one, e.g. two L3s as one) or
	// "bimodal" (the level's pairs fall in two clearly separated groups:
	// the tree misses a level, or spot-checked pairs disagree).
	Kind string `json:"kind"`
	// Detail says it in words, with the figures.
	Detail string `json:"detail"`
}

// Disagreements compares m's latencies with topo's levels (Separation is
// the ratio that counts as clearly different).
func Disagreements(m *Matrix, topo *hwtree.Topology) []Disagreement {
	keys, vals := levelValues(m, topo)
	var out []Disagreement
	for i, k := range keys {
		v := vals[k]
		name := k.typ.String()
		if i > 0 {
			inner := keys[i-1]
			mi, mo := median(vals[inner]), median(v)
			if mo < mi*Separation {
				out = append(out, Disagreement{Level: name, Kind: "merged", Detail: fmt.Sprintf(
					"pairs across %s groups (median %.1f ns, %d pairs) are not clearly slower than pairs inside one (median %.1f ns): the %s groups under one %s behave as one",
					inner.typ, mo, len(v), mi, inner.typ, name)})
			}
		}
		// The largest jump between consecutive latencies of the level.
		at, ratio := -1, 0.0
		for j := 0; j+1 < len(v); j++ {
			if r := v[j+1] / v[j]; v[j] > 0 && r > ratio {
				at, ratio = j, r
			}
		}
		if at >= 0 && ratio >= Separation {
			lo, hi := v[:at+1], v[at+1:]
			out = append(out, Disagreement{Level: name, Kind: "bimodal", Detail: fmt.Sprintf(
				"%d pairs near %.1f ns and %d near %.1f ns (%.1fx apart): the level holds two kinds of link, so the tree misses a level or the pairs measured disagree",
				len(lo), median(lo), len(hi), median(hi), ratio)})
		}
	}
	return out
}

func common(a, b *hwtree.Object) *hwtree.Object {
	for a.Depth > b.Depth {
		a = a.Parent
	}
	for b.Depth > a.Depth {
		b = b.Parent
	}
	for a != b {
		a, b = a.Parent, b.Parent
	}
	return a
}

func median(s []float64) float64 {
	c := append([]float64(nil), s...)
	sort.Float64s(c)
	if len(c) == 0 {
		return math.NaN()
	}
	if len(c)%2 == 1 {
		return c[len(c)/2]
	}
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}

// Separation is how clearly a group must stand out: every latency inside
// a group is at most the smallest latency leaving it divided by Separation.
const Separation = 1.3

// Partition is a grouping of the matrix's CPU indexes.
type Partition [][]int

// Partitions clusters m by single linkage: for each distinct latency t
// (ascending), the groups of CPUs connected by pairs of latency <= t. A
// partition is kept when it is clear (the largest latency inside any group,
// times Separation, is at most the smallest latency between groups) and it
// is neither all singletons nor one group nor the partition kept before.
// The result is nested, finest first. Unmeasured pairs count as infinitely far.
//
// It runs Kruskal's algorithm once over the sorted pairs and keeps, per
// group, its members and its largest inside latency: two groups merging
// compare their members once (every pair of CPUs is compared exactly once
// over the whole run), and the smallest latency between groups is the next
// pair that merges two groups. O(E log E) for the sort, O(N²) besides, N
// CPUs and E measured pairs.
func Partitions(m *Matrix) []Partition {
	n := len(m.CPUs)
	type edge struct {
		i, j int32
		v    float64
	}
	es := make([]edge, 0, n*(n-1)/2)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			if v := m.NS[i][j]; !math.IsNaN(v) {
				es = append(es, edge{int32(i), int32(j), v})
			}
		}
	}
	sort.Slice(es, func(a, b int) bool { return es[a].v < es[b].v })
	parent := seq(n)
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	members := make([][]int, n) // per root, its CPUs
	for i := range members {
		members[i] = []int{i}
	}
	var out []Partition
	inside := 0.0        // the largest latency inside any group
	next := 0            // es[next:] holds the next pair that may merge two groups
	groups, kept := n, n // groups now, groups of the last partition kept
	for k := 0; k < len(es); {
		t := es[k].v
		for ; k < len(es) && es[k].v == t; k++ {
			a, b := find(int(es[k].i)), find(int(es[k].j))
			if a == b {
				continue
			}
			if len(members[a]) > len(members[b]) {
				a, b = b, a
			}
			for _, x := range members[a] { // every pair across: compared once in the run
				row := m.NS[x]
				for _, y := range members[b] {
					if v := row[y]; v > inside {
						inside = v
					}
				}
			}
			members[b] = append(members[b], members[a]...)
			members[a] = nil
			parent[a] = b
			groups--
		}
		if groups == 1 {
			break
		}
		// Clear: the max inside against the min between groups, the
		// first pair from here on that still joins two groups.
		if next < k {
			next = k
		}
		for next < len(es) && find(int(es[next].i)) == find(int(es[next].j)) {
			next++
		}
		between := math.Inf(1)
		if next < len(es) {
			between = es[next].v
		}
		if inside*Separation <= between && groups != kept {
			kept = groups
			root := make([]int, n) // root -> group index + 1
			var part Partition
			for i := 0; i < n; i++ {
				r := find(i)
				if root[r] == 0 {
					part = append(part, nil)
					root[r] = len(part)
				}
				part[root[r]-1] = append(part[root[r]-1], i)
			}
			out = append(out, part)
		}
	}
	return out
}

type node struct {
	Type     string  `json:"type"`
	OSIndex  *int    `json:"os_index"`
	Children []*node `json:"children"`
}

// l3Below: a partition whose groups' inside latencies stay under it is
// taken for one L3 each (one die's shared cache, 20-45 ns on the
// ../shared/latency machines); slower groups span dies or packages.
const l3Below = 45.0

// maxCoreGroup is the largest group the finest partition may have to be
// taken for cores (SMT siblings: 2 on x86, up to 4 elsewhere).
const maxCoreGroup = 4

// largestGroup returns the size of p's largest group.
func largestGroup(p Partition) int {
	n := 0
	for _, g := range p {
		n = max(n, len(g))
	}
	return n
}

// coreFirst drops the finest partitions while the next one still has
// core-sized groups (a lone SMT pair a little slower than the others
// makes a partition of its own): the cores are the last of them.
func coreFirst(parts []Partition) []Partition {
	for len(parts) > 1 && largestGroup(parts[1]) <= maxCoreGroup {
		parts = parts[1:]
	}
	return parts
}

// levelTypes names the object type of each partition, finest first: the
// finest is Core when its groups hold at most maxCoreGroup CPUs, the first
// (other) one whose inside latencies stay under l3Below is L3Cache, the
// coarsest (other) one is Package, and the rest are Group.
func levelTypes(m *Matrix, parts []Partition) []string {
	out := make([]string, len(parts))
	l3 := false
	for k, p := range parts {
		largest, inside := 0, 0.0
		for _, g := range p {
			largest = max(largest, len(g))
			for a := range g {
				for b := 0; b < a; b++ {
					if v := m.NS[g[a]][g[b]]; !math.IsNaN(v) {
						inside = math.Max(inside, v)
					}
				}
			}
		}
		switch {
		case k == 0 && largest <= maxCoreGroup:
			out[k] = "Core"
		case !l3 && inside < l3Below:
			out[k], l3 = "L3Cache", true
		case k == len(parts)-1:
			out[k] = "Package"
		default:
			out[k] = "Group"
		}
	}
	return out
}

// Cluster derives a tree from m: a Machine, one level per clear partition
// (Partitions), finest first named by levelTypes (Core, L3Cache, Group,
// Package), and the CPUs as PUs (under a Core each when the finest level
// is not Core). Unmeasured pairs only merge later, so every matrix with at
// least one CPU gives a tree.
func Cluster(m *Matrix) (*hwtree.Topology, error) {
	if m == nil || len(m.CPUs) < 1 {
		return nil, fmt.Errorf("latency: cannot cluster an empty matrix")
	}
	parts := coreFirst(Partitions(m))
	types := levelTypes(m, parts)
	// Build bottom-up: each CPU index starts as a PU, wrapped in a Core
	// of its own unless the finest partition is the cores.
	cur := map[int]*node{}
	for i, c := range m.CPUs {
		c := c
		pu := &node{Type: "PU", OSIndex: &c, Children: []*node{}}
		if len(types) > 0 && types[0] == "Core" {
			cur[i] = pu
		} else {
			cur[i] = &node{Type: "Core", Children: []*node{pu}}
		}
	}
	owner := seq(len(m.CPUs)) // CPU index -> key in cur
	for k, p := range parts {
		next := map[int]*node{}
		newOwner := make([]int, len(owner))
		for gi, g := range p {
			grp := &node{Type: types[k], Children: []*node{}}
			added := map[int]bool{}
			for _, i := range g {
				if k := owner[i]; !added[k] {
					added[k] = true
					grp.Children = append(grp.Children, cur[k])
				}
				newOwner[i] = gi
			}
			if len(grp.Children) == 1 && types[k] != "Core" { // no new grouping here
				next[gi] = grp.Children[0]
			} else {
				next[gi] = grp
			}
		}
		cur, owner = next, newOwner
	}
	root := &node{Type: "Machine", Children: []*node{}}
	keys := make([]int, 0, len(cur))
	for k := range cur {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		root.Children = append(root.Children, cur[k])
	}
	data, err := json.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("latency: %w", err)
	}
	t, err := hwtree.FromJSON(data, "latency clustering")
	if err != nil {
		return nil, fmt.Errorf("latency: building the tree: %w", err)
	}
	return t, nil
}
