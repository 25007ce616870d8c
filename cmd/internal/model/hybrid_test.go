package model

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/hwtree"
)

// tiered is a latency table from a nesting of groups: CPUs a and b pay
// ns[l] where l is the lowest level at which they share a group of
// sizes[l] CPUs (sizes ascending, the last covering the machine).
type tiered struct {
	sizes []int
	ns    []float64
}

func (t tiered) Latency(a, b int) float64 {
	for l, s := range t.sizes {
		if a/s == b/s {
			return t.ns[l]
		}
	}
	return t.ns[len(t.ns)-1]
}

// randomCosts is a symmetric random matrix.
type randomCosts [][]float64

func (r randomCosts) Latency(a, b int) float64 { return r[a][b] }

func TestHybridPatternGolden(t *testing.T) {
	levels := []barriers.Level{
		{Name: "core", Algorithm: "central", Groups: [][]int{{0, 1}, {2, 3}}},
		{Name: "top", Algorithm: "central", Groups: [][]int{{0, 2}}},
	}
	got, err := HybridPattern(levels, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := Pattern{
		{{1, 0}, {3, 2}}, {{0, 1}, {2, 3}}, // cores: central arrival and release
		{{2, 0}}, {{0, 2}}, // top: central between the representatives
		{{0, 1}, {2, 3}}, // release flags down to the cores
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("HybridPattern = %v, want %v", got, want)
	}
}

// knows propagates "participant j has arrived" along a pattern and reports
// whether everybody knows of everybody at the end: what makes a signal
// pattern a barrier.
func knows(p Pattern, n int) bool {
	k := make([][]bool, n)
	for i := range k {
		k[i] = make([]bool, n)
		k[i][i] = true
	}
	for _, st := range p {
		next := make([][]bool, n)
		for i := range next {
			next[i] = append([]bool(nil), k[i]...)
		}
		for _, s := range st {
			for j := 0; j < n; j++ {
				next[s.To][j] = next[s.To][j] || k[s.From][j]
			}
		}
		k = next
	}
	for i := range k {
		for j := range k[i] {
			if !k[i][j] {
				return false
			}
		}
	}
	return true
}

// TestHybridPatternIsBarrier: for random keys on random placements, the
// composition Hybrid returns is a barrier in the signal model (everyone
// hears of everyone), never predicted slower than the best flat algorithm,
// and its predicted time is the critical path of its pattern.
func TestHybridPatternIsBarrier(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := 0; trial < 60; trial++ {
		n := 2 + rng.Intn(40)
		cpus := make([]int, n)
		for i := range cpus {
			cpus[i] = rng.Intn(64)
		}
		m := make(randomCosts, 64)
		for i := range m {
			m[i] = make([]float64, 64)
		}
		for i := range m {
			for j := 0; j < i; j++ {
				m[i][j] = 5 + 150*rng.Float64()
				m[j][i] = m[i][j]
			}
			m[i][i] = 3
		}
		var levels []LevelKeys
		for l, size := range []int{2, 8, 32} {
			keys := make([]int, n)
			for i := range keys {
				keys[i] = cpus[i] / size
			}
			levels = append(levels, LevelKeys{Name: []string{"core", "l3", "package"}[l], Keys: keys})
		}
		comp, ns, err := Hybrid(CriticalPathModel, levels, cpus, m)
		if err != nil {
			t.Fatal(err)
		}
		_, _, flat, _ := BestFlat(CriticalPathModel, cpus, m)
		if ns > flat {
			t.Fatalf("trial %d: hybrid %s predicted %.1f ns, worse than flat %.1f", trial, comp, ns, flat)
		}
		p, err := HybridPattern(comp.Levels, n)
		if err != nil {
			t.Fatal(err)
		}
		if !knows(p, n) {
			t.Fatalf("trial %d: composition %s is not a barrier", trial, comp)
		}
		if cp := CriticalPath(p, cpus, m); comp.Flat() == "" && cp != ns {
			t.Fatalf("trial %d: predicted %.3f, critical path of the pattern %.3f", trial, ns, cp)
		}
		// The composition builds a real barrier.
		if _, err := barriers.New("hybrid", n, barriers.WithHierarchy(comp.Levels)); err != nil {
			t.Fatalf("trial %d: %s: %v", trial, comp, err)
		}
	}
}

// TestHybridBeatsFlatOnTwoPackages: two packages of 16 CPUs, 10 ns inside a
// package and 120 ns across: at 32 threads grouping by package pays.
func TestHybridBeatsFlatOnTwoPackages(t *testing.T) {
	c := tiered{sizes: []int{16, 32}, ns: []float64{10, 120}}
	cpus := seqInts(32)
	keys := make([]int, 32)
	for i := range keys {
		keys[i] = i / 16
	}
	comp, ns, err := Hybrid(CriticalPathModel, []LevelKeys{{Name: "package", Keys: keys}}, cpus, c)
	if err != nil {
		t.Fatal(err)
	}
	alg, _, flat, _ := BestFlat(CriticalPathModel, cpus, c)
	if comp.Flat() != "" || ns >= flat {
		t.Fatalf("hybrid %s at %.0f ns, best flat %s at %.0f ns: want the hybrid faster", comp, ns, alg, flat)
	}
	t.Logf("hybrid %s %.0f ns, flat %s %.0f ns", comp, ns, alg, flat)
}

// TestHybridDegeneratesOnUniform: with one latency everywhere no level pays
// and the composition is the best flat algorithm.
func TestHybridDegeneratesOnUniform(t *testing.T) {
	c := tiered{sizes: []int{1 << 20}, ns: []float64{40}}
	cpus := seqInts(16)
	keys := make([]int, 16)
	for i := range keys {
		keys[i] = i / 4
	}
	comp, ns, err := Hybrid(CriticalPathModel, []LevelKeys{{Name: "l3", Keys: keys}}, cpus, c)
	if err != nil {
		t.Fatal(err)
	}
	alg, _, flat, _ := BestFlat(CriticalPathModel, cpus, c)
	if comp.Flat() != alg || ns != flat {
		t.Fatalf("got %s at %.1f, want flat %s at %.1f", comp, ns, alg, flat)
	}
}

func TestTreeLevels(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 l3:2 core:4 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	// Every PU in order: cores of 2, L3s of 8, packages of 16.
	cpus := topo.CPUs()
	levels, err := TreeLevels(topo, cpus)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range levels {
		names = append(names, l.Name)
	}
	if !reflect.DeepEqual(names, []string{"core", "l3", "package"}) {
		t.Fatalf("levels %v, want core, l3, package", names)
	}
	for li, size := range []int{2, 8, 16} {
		for i := range cpus {
			for j := range cpus {
				same := levels[li].Keys[i] == levels[li].Keys[j]
				if same != (i/size == j/size) {
					t.Fatalf("level %s: participants %d and %d together = %v", levels[li].Name, i, j, same)
				}
			}
		}
	}
	// One participant per core, on one package: only the L3 level remains.
	var one []int
	for i := 0; i < 16; i += 2 {
		one = append(one, cpus[i])
	}
	levels, err = TreeLevels(topo, one)
	if err != nil {
		t.Fatal(err)
	}
	if len(levels) != 1 || levels[0].Name != "l3" {
		t.Fatalf("one per core on one package: levels %s, want l3", LevelNames(levels))
	}
	if _, err := TreeLevels(topo, []int{99}); err == nil {
		t.Fatal("CPU 99 accepted")
	}
}

// TestHybridForTree: on a two-package tree with measured-style costs, the
// composition for all 32 PUs groups by package at least, and builds a barrier.
func TestHybridForTree(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 l3:2 core:4 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	c := NewTreeCostsFrom(topo, map[hwtree.Type]float64{hwtree.Machine: 300})
	if got := c.Latency(0, 31); got != 300 {
		t.Fatalf("across packages %v ns, want the given 300", got)
	}
	if got := c.Latency(0, 1); got != SameCoreNS {
		t.Fatalf("SMT siblings %v ns, want the typical %v", got, SameCoreNS)
	}
	cpus := topo.CPUs()
	comp, ns, err := HybridFor(CriticalPathModel, topo, cpus, c)
	if err != nil {
		t.Fatal(err)
	}
	_, _, flat, _ := BestFlat(CriticalPathModel, cpus, c)
	if ns > flat {
		t.Fatalf("%s %.0f ns, flat %.0f", comp, ns, flat)
	}
	if _, err := barriers.New("hybrid", len(cpus), barriers.WithHierarchy(comp.Levels)); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %.0f ns (flat %.0f)", comp, ns, flat)
}
