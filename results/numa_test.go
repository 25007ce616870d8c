package results_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

func treeOf(t *testing.T, synthetic string) *results.Tree {
	t.Helper()
	topo, err := hwtree.FromSynthetic(synthetic)
	if err != nil {
		t.Fatal(err)
	}
	// The check records trees with cmd/internal/store.TreeOf, which these
	// tests cannot import: the same form, breadth first, root first.
	tree := &results.Tree{CPUs: topo.Allowed().String(), Levels: []results.TreeLevel{}}
	index := map[string]int{}
	for queue := []*hwtree.Object{topo.Root}; len(queue) > 0; queue = queue[1:] {
		o := queue[0]
		queue = append(queue, o.Children...)
		if o.Type == hwtree.Machine || o.Type == hwtree.PU {
			continue
		}
		i, ok := index[o.Type.String()]
		if !ok {
			i = len(tree.Levels)
			index[o.Type.String()] = i
			tree.Levels = append(tree.Levels, results.TreeLevel{Type: o.Type.String()})
		}
		tree.Levels[i].Sets = append(tree.Levels[i].Sets, o.CPUSet.String())
	}
	return tree
}

func lists(sets []cpuset.Set) []string {
	out := []string{}
	for _, s := range sets {
		out = append(out, s.String())
	}
	return out
}

func sets(t *testing.T, lists ...string) []cpuset.Set {
	t.Helper()
	out := make([]cpuset.Set, len(lists))
	for i, l := range lists {
		s, err := cpuset.ParseList(l)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = s
	}
	return out
}

// TestNUMAMismatch: a recorded tree applies while the NUMA nodes are the
// ones it was measured with, and not after a firmware setting split or
// joined them (AMD's NPS, Intel's SNC), with or without a NUMANode level.
func TestNUMAMismatch(t *testing.T) {
	nps4 := treeOf(t, "pack:2 numa:2 l3:2 core:2 pu:1") // nodes 0-3 4-7 8-11 12-15
	nps1 := treeOf(t, "pack:2 l3:2 core:2 pu:1")        // nodes are the packages, merged
	for _, tc := range []struct {
		name  string
		tree  *results.Tree
		nodes []cpuset.Set
		match bool
	}{
		{"the same nodes", nps4, sets(t, "0-3", "4-7", "8-11", "12-15"), true},
		{"the same nodes in another order", nps4, sets(t, "8-11", "0-3", "12-15", "4-7"), true},
		{"nodes joined (NPS4 to NPS1)", nps4, sets(t, "0-7", "8-15"), false},
		{"nodes split further", nps4, sets(t, "0-1", "2-3", "4-7", "8-11", "12-15"), false},
		{"one node for the machine", nps4, sets(t, "0-15"), false},
		{"merged nodes: the packages", nps1, sets(t, "0-3", "4-7"), true},
		{"merged nodes: the whole machine", nps1, sets(t, "0-7"), true},
		{"merged nodes: an L3 each", nps1, sets(t, "0-1", "2-3", "4-5", "6-7"), true},
		{"nodes split across objects (NPS1 to NPS4 style)", nps1, sets(t, "0-2", "3-5", "6-7"), false},
		{"unknown nodes", nps4, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why := tc.tree.NUMAMismatch(tc.nodes)
			if (why == "") != tc.match {
				t.Fatalf("NUMAMismatch(%v) = %q, want a match: %v", lists(tc.nodes), why, tc.match)
			}
			if !tc.match && (!strings.Contains(why, "NUMA nodes") || !strings.Contains(why, "rerun the check")) {
				t.Errorf("the reason %q should name the NUMA nodes and say to rerun the check", why)
			}
		})
	}
	var none *results.Tree
	if why := none.NUMAMismatch(sets(t, "0-3")); why != "" {
		t.Errorf("no recorded tree (a file before v1.2): %q, want no NUMA reason", why)
	}
}

// TestNUMAMismatchSelf: over synthetic machines, the nodes a tree records
// (its NUMANode level, else its packages, else the machine) always match
// the tree itself, and joining two of several recorded nodes never does.
func TestNUMAMismatchSelf(t *testing.T) {
	for _, s := range []string{
		"pack:1 core:4 pu:2", "pack:2 core:2 pu:2", "pack:2 numa:2 core:2 pu:1",
		"numa:4 pack:1 l3:2 core:2 pu:1", "pack:4 numa:2 l3:2 core:4 pu:2", "pack:2 group:2 numa:2 core:3 pu:1",
	} {
		tree := treeOf(t, s)
		var nodes []cpuset.Set
		for _, want := range []string{"NUMANode", "Package"} {
			for _, l := range tree.Levels {
				if l.Type == want && nodes == nil {
					nodes = sets(t, l.Sets...)
				}
			}
		}
		if nodes == nil {
			nodes = sets(t, tree.CPUs)
		}
		if why := tree.NUMAMismatch(nodes); why != "" {
			t.Errorf("%s: its own nodes %v: %q", s, lists(nodes), why)
		}
		if hasNUMA := slices.ContainsFunc(tree.Levels, func(l results.TreeLevel) bool { return l.Type == "NUMANode" }); hasNUMA && len(nodes) > 1 {
			joined := append([]cpuset.Set{nodes[0].Or(nodes[1])}, nodes[2:]...)
			if why := tree.NUMAMismatch(joined); why == "" {
				t.Errorf("%s: nodes 0 and 1 joined (%v) still match", s, lists(joined))
			}
		}
	}
}

// TestFinderRefusesRearrangedNodes: the lookup skips a file whose tree
// has other NUMA nodes than the machine, and says why.
func TestFinderRefusesRearrangedNodes(t *testing.T) {
	fd, f, _ := lookupFiles(t)
	if f.Machine.Tree == nil {
		t.Fatal("the fixture's file records no tree")
	}
	fd.Nodes = sets(t, f.Machine.Tree.CPUs)
	if _, err := fd.Find(); err != nil && strings.Contains(err.Error(), "NUMA nodes") {
		t.Fatalf("one node spanning the recorded machine: %v", err)
	}
	all, err := cpuset.ParseList(f.Machine.Tree.CPUs)
	if err != nil || all.Len() < 2 {
		t.Fatalf("fixture tree CPUs %q", f.Machine.Tree.CPUs)
	}
	m := all.Members()
	fd.Nodes = []cpuset.Set{cpuset.Of(m[0]), cpuset.Of(m[1:]...)} // no object has m[1:] alone
	_, err = fd.Find()
	if err == nil || !strings.Contains(err.Error(), "NUMA nodes") {
		t.Fatalf("nodes the tree never had: err %v, want a NUMA reason", err)
	}
}
