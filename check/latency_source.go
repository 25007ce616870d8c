package check

// INTERIM: helper "model" owns the latency package (latency.ReadCSV,
// latency.Cluster, latency.Levels). Until it is on main, planning and
// simulation read ../shared/latency matrices with the small reader and the
// threshold clustering below; switch to the latency package and delete this
// file when it lands.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/hwtree"
)

// maxMatrixCPUs caps the matrices read.
const maxMatrixCPUs = 4096

// LatencyMatrix is a one-way core-to-core latency table in ns, by OS CPU
// number (0..N-1 in the ../shared/latency format).
type LatencyMatrix struct {
	NS [][]float64
}

// Latency implements model.Costs.
func (m *LatencyMatrix) Latency(a, b int) float64 {
	if a < 0 || b < 0 || a >= len(m.NS) || b >= len(m.NS) {
		return math.NaN()
	}
	return m.NS[a][b]
}

// ReadLatencyFile reads a matrix in the ../shared/latency CSV format: N rows
// of N fields, the lower triangle filled (ns), the rest empty.
func ReadLatencyFile(path string) (*LatencyMatrix, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("latency matrix: %w", err)
	}
	defer f.Close()
	m, err := readLatencyCSV(f)
	if err != nil {
		return nil, fmt.Errorf("latency matrix %s: %w", path, err)
	}
	return m, nil
}

func readLatencyCSV(r io.Reader) (*LatencyMatrix, error) {
	sc := bufio.NewScanner(io.LimitReader(r, 256<<20))
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	var rows [][]string
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if len(rows) >= maxMatrixCPUs {
			return nil, fmt.Errorf("more than %d rows (accepted: up to %d CPUs)", maxMatrixCPUs, maxMatrixCPUs)
		}
		rows = append(rows, strings.Split(line, ","))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	n := len(rows)
	if n < 2 {
		return nil, fmt.Errorf("%d rows (want an N x N matrix, N >= 2)", n)
	}
	ns := make([][]float64, n)
	for i := range ns {
		ns[i] = make([]float64, n)
	}
	for i, row := range rows {
		if len(row) != n {
			return nil, fmt.Errorf("row %d has %d fields, want %d (N x N)", i, len(row), n)
		}
		for j := 0; j < i; j++ {
			v, err := strconv.ParseFloat(strings.TrimSpace(row[j]), 64)
			if err != nil || !(v > 0) || v > 1e6 {
				return nil, fmt.Errorf("row %d field %d: %q is not a latency in ns (want a positive number)", i, j, row[j])
			}
			ns[i][j], ns[j][i] = v, v
		}
	}
	// The diagonal is a CPU with itself (a participant sharing its CPU):
	// take the matrix's smallest latency.
	low := math.Inf(1)
	for i := range ns {
		for j := 0; j < i; j++ {
			low = min(low, ns[i][j])
		}
	}
	for i := range ns {
		ns[i][i] = low
	}
	return &LatencyMatrix{NS: ns}, nil
}

// tierRatio separates latency tiers: sorted latencies jumping by this
// factor start a new tier (the ../shared/latency machines jump 1.9-3.5x
// between SMT, L3 and socket tiers, and less than 1.6x inside one).
const tierRatio = 1.8

// LatencyTree clusters a matrix into a tree: for each tier of latencies
// (lowest first) the CPUs joined by latencies up to the tier's top form
// groups (connected components). The lowest tier becomes Cores when its
// groups hold at most 4 CPUs, the next L3Caches, then Groups, the highest
// Packages.
func LatencyTree(m *LatencyMatrix, source string) (*hwtree.Topology, error) {
	n := len(m.NS)
	var vals []float64
	for i := range m.NS {
		for j := 0; j < i; j++ {
			vals = append(vals, m.NS[i][j])
		}
	}
	slices.Sort(vals)
	var tops []float64 // each tier's largest latency, ascending
	for i := 0; i+1 < len(vals); i++ {
		if vals[i+1] >= vals[i]*tierRatio {
			tops = append(tops, vals[i])
		}
	}
	// Components per tier, lowest first; a tier that groups nothing or
	// everything is dropped.
	var tiers [][]int      // tiers[k][cpu] = component id
	var tierTops []float64 // tiers[k]'s largest latency
	for _, top := range tops {
		comp := components(m, top)
		if allEqual(comp) || distinct(comp) == n || len(tiers) > 0 && distinct(comp) == distinct(tiers[len(tiers)-1]) {
			continue // groups nothing, everything, or what the tier below does
		}
		tiers = append(tiers, comp)
		tierTops = append(tierTops, top)
	}
	types := tierTypes(tiers, tierTops)
	type node struct {
		Type     string   `json:"type"`
		OSIndex  *int     `json:"os_index"`
		Attrs    struct{} `json:"attrs"`
		Children []*node  `json:"children"`
	}
	root := &node{Type: "Machine", Children: []*node{}}
	// nodes[k][comp] is the object of component comp at tier k.
	nodes := make([]map[int]*node, len(tiers))
	for k := range nodes {
		nodes[k] = map[int]*node{}
	}
	for cpu := 0; cpu < n; cpu++ {
		parent := root
		for k := len(tiers) - 1; k >= 0; k-- {
			c := tiers[k][cpu]
			o, ok := nodes[k][c]
			if !ok {
				o = &node{Type: types[k], Children: []*node{}}
				nodes[k][c] = o
				parent.Children = append(parent.Children, o)
			}
			parent = o
		}
		idx := cpu
		parent.Children = append(parent.Children, &node{Type: "PU", OSIndex: &idx, Children: []*node{}})
	}
	data, err := json.Marshal(root)
	if err != nil {
		return nil, err
	}
	return hwtree.FromJSON(data, "latency:"+source)
}

// l3Below: a tier whose latencies stay under it is one L3 (one die's
// shared cache, 20-45 ns on the shared machines); slower tiers cross dies
// or packages.
const l3Below = 45.0

// tierTypes names the tiers' objects, lowest first: Core for a lowest tier
// of at most 4 CPUs per group, L3Cache for the first tier under l3Below,
// Package for the highest other tier, Group between.
func tierTypes(tiers [][]int, tops []float64) []string {
	out := make([]string, len(tiers))
	l3 := false
	for k := range tiers {
		switch {
		case k == 0 && maxComponent(tiers[0]) <= 4:
			out[k] = "Core"
		case !l3 && tops[k] < l3Below:
			out[k], l3 = "L3Cache", true
		case k == len(tiers)-1:
			out[k] = "Package"
		default:
			out[k] = "Group"
		}
	}
	return out
}

// components labels the connected components of the graph joining CPUs
// whose latency is at most top.
func components(m *LatencyMatrix, top float64) []int {
	n := len(m.NS)
	comp := make([]int, n)
	for i := range comp {
		comp[i] = -1
	}
	id := 0
	for s := 0; s < n; s++ {
		if comp[s] >= 0 {
			continue
		}
		stack := []int{s}
		comp[s] = id
		for len(stack) > 0 {
			a := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for b := 0; b < n; b++ {
				if comp[b] < 0 && m.NS[a][b] <= top {
					comp[b] = id
					stack = append(stack, b)
				}
			}
		}
		id++
	}
	return comp
}

func allEqual(a []int) bool {
	for _, v := range a {
		if v != a[0] {
			return false
		}
	}
	return true
}

func distinct(a []int) int {
	seen := map[int]bool{}
	for _, v := range a {
		seen[v] = true
	}
	return len(seen)
}

func maxComponent(a []int) int {
	count := map[int]int{}
	m := 0
	for _, v := range a {
		count[v]++
		m = max(m, count[v])
	}
	return m
}
