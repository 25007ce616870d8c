package latency

import (
	"bytes"
	"math"
	"math/rand"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"testing"
)

// partitionsReference is Partitions as it was before it became
// O(N²): for every distinct latency it rescans every pair for the largest
// latency inside a group and the smallest between groups. The test compares
// the two on every shared matrix and on random ones.
func partitionsReference(m *Matrix) []Partition {
	n := len(m.CPUs)
	type edge struct {
		i, j int
		v    float64
	}
	var es []edge
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			if v := m.NS[i][j]; !math.IsNaN(v) {
				es = append(es, edge{i, j, v})
			}
		}
	}
	sort.Slice(es, func(a, b int) bool { return es[a].v < es[b].v })
	parent := seq(n)
	var find func(x int) int
	find = func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	var out []Partition
	groups, kept := n, n // groups now, groups of the last partition kept
	for k := 0; k < len(es); {
		t := es[k].v
		for ; k < len(es) && es[k].v == t; k++ {
			if a, b := find(es[k].i), find(es[k].j); a != b {
				parent[a] = b
				groups--
			}
		}
		if groups == 1 {
			break
		}
		// Clear: the max inside (<= t) against the min between groups.
		inside, between := 0.0, math.Inf(1)
		for _, e := range es {
			if find(e.i) == find(e.j) {
				inside = math.Max(inside, e.v)
			} else {
				between = math.Min(between, e.v)
			}
		}
		if inside*Separation <= between && groups != kept {
			kept = groups
			p := map[int][]int{}
			var roots []int
			for i := 0; i < n; i++ {
				r := find(i)
				if p[r] == nil {
					roots = append(roots, r)
				}
				p[r] = append(p[r], i)
			}
			var part Partition
			for _, r := range roots {
				part = append(part, p[r])
			}
			out = append(out, part)
		}
	}
	return out
}

// synthetic returns a matrix of packs packages × l3s L3 groups × cores
// cores × smt PUs, with level latencies 8, 25, 90 and 140 ns and a jitter
// of ±jitter (relative), deterministic in seed; holes pairs are left
// unmeasured (NaN) and ties rounds every latency to whole ns.
func synthetic(packs, l3s, cores, smt int, jitter float64, seed int64, holes int, ties bool) *Matrix {
	n := packs * l3s * cores * smt
	m := newMatrix(seq(n))
	r := rand.New(rand.NewSource(seed))
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			var v float64
			switch {
			case i/smt == j/smt:
				v = 8
			case i/(smt*cores) == j/(smt*cores):
				v = 25
			case i/(smt*cores*l3s) == j/(smt*cores*l3s):
				v = 90
			default:
				v = 140
			}
			v *= 1 + jitter*(2*r.Float64()-1)
			if ties {
				v = math.Round(v)
			}
			m.NS[i][j], m.NS[j][i] = v, v
		}
	}
	for h := 0; h < holes; h++ {
		i, j := r.Intn(n), r.Intn(n)
		if i != j {
			m.NS[i][j], m.NS[j][i] = math.NaN(), math.NaN()
		}
	}
	return m
}

// Partitions gives exactly the reference's partitions: on every shared
// matrix (skipped without ../shared) and on random synthetic ones with
// jitter, ties, unmeasured pairs and no structure at all.
func TestPartitionsMatchReference(t *testing.T) {
	var ms []*Matrix
	var names []string
	files, _ := filepath.Glob("../../../../shared/latency/*.csv")
	sort.Strings(files)
	for _, f := range files {
		m, err := ReadCSVFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ms, names = append(ms, m), append(names, filepath.Base(f))
	}
	if len(files) == 0 {
		t.Log("../shared/latency is absent: synthetic matrices only")
	}
	for seed := int64(0); seed < 40; seed++ {
		r := rand.New(rand.NewSource(seed))
		packs, l3s, cores, smt := 1+r.Intn(2), 1+r.Intn(4), 1+r.Intn(5), 1+r.Intn(2)
		jitter := []float64{0, 0.05, 0.2, 0.6}[r.Intn(4)]
		m := synthetic(packs, l3s, cores, smt, jitter, seed, r.Intn(10), r.Intn(2) == 0)
		if len(m.CPUs) < 2 {
			continue
		}
		ms, names = append(ms, m), append(names, "synthetic")
	}
	if !testing.Short() { // the reference takes seconds here
		ms, names = append(ms, synthetic(2, 8, 8, 2, 0.05, 1, 0, false)), append(names, "synthetic 256")
	}
	for i, m := range ms {
		got, want := Partitions(m), partitionsReference(m)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s (%d CPUs): Partitions %v, reference %v", names[i], len(m.CPUs), got, want)
		}
	}
}

// BenchmarkCluster clusters a synthetic 256-CPU two-package matrix
// (2 packages × 8 L3s × 8 cores × 2 PUs, 5% jitter).
func BenchmarkCluster(b *testing.B) {
	m := synthetic(2, 8, 8, 2, 0.05, 1, 0, false)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Cluster(m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClusterMax clusters a matrix of MaxCPUs CPUs (8 packages × 16
// L3s × 16 cores × 2 PUs): memory beyond the matrix is one sorted list of
// its pairs (16 bytes each, the size of the matrix) and O(N) besides.
func BenchmarkClusterMax(b *testing.B) {
	m := synthetic(8, 16, 16, 2, 0.05, 1, 0, false)
	if len(m.CPUs) != MaxCPUs {
		b.Fatalf("%d CPUs, want %d", len(m.CPUs), MaxCPUs)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Cluster(m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadCSVMax parses a MaxCPUs matrix written with one decimal
// (about 50 MB of CSV): the allocations are the matrix, the lower
// triangle parsed on the way (half a matrix) and the text's fields.
func BenchmarkReadCSVMax(b *testing.B) {
	m := synthetic(8, 16, 16, 2, 0.05, 1, 0, false)
	var buf bytes.Buffer
	for i := range m.CPUs {
		for j := 0; j < len(m.CPUs); j++ {
			if j > 0 {
				buf.WriteByte(',')
			}
			if j < i {
				buf.WriteString(strconv.FormatFloat(m.NS[i][j], 'f', 1, 64))
			}
		}
		buf.WriteByte('\n')
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		got, err := ReadCSV(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		if len(got.CPUs) != MaxCPUs {
			b.Fatalf("%d CPUs", len(got.CPUs))
		}
	}
}
