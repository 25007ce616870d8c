package results

import (
	"fmt"
	"strings"

	"github.com/barriertune/barriertune/cpuset"
)

// NUMAMismatch says why t, a recorded tree, no longer describes a machine
// whose NUMA nodes have the CPUs nodes (as the lookup reads them; each taken within
// the tree's CPUs), or "" when it does or nodes is nil (unknown). A tree with a NUMANode level must list exactly
// those nodes; one without (each node was the same CPUs as another object,
// or the whole machine, and so merged into it) must have an object for
// every node. A firmware setting that splits or joins the nodes (AMD's
// NPS, Intel's SNC) changes the tree the check measured on without
// changing the CPUs.
func (t *Tree) NUMAMismatch(nodes []cpuset.Set) string {
	if t == nil || nodes == nil {
		return ""
	}
	// Linux lists a node's possible CPUs, offline ones included: compare
	// the CPUs the tree has (an offline CPU is the online check's matter).
	all, err := cpuset.ParseList(t.CPUs)
	if err != nil {
		return ""
	}
	var in []cpuset.Set
	for _, n := range nodes {
		if n = n.And(all); !n.IsEmpty() {
			in = append(in, n)
		}
	}
	nodes = in
	here := formatSets(nodes)
	for _, l := range t.Levels {
		if l.Type != "NUMANode" {
			continue
		}
		if len(l.Sets) != len(nodes) || !sameSets(l.Sets, nodes) {
			return fmt.Sprintf("NUMA nodes %s here, %s in the file's tree (the nodes were split or joined, e.g. by the firmware's NPS or SNC setting: rerun the check)", here, strings.Join(l.Sets, " | "))
		}
		return ""
	}
	// The check writes every list in canonical form (cpuset's String), as
	// nodes are compared: strings compare without parsing a hostile file's
	// lists.
	objects := map[string]bool{t.CPUs: true}
	for _, l := range t.Levels {
		for _, s := range l.Sets {
			objects[s] = true
		}
	}
	for _, n := range nodes {
		if !objects[n.String()] {
			return fmt.Sprintf("NUMA nodes %s here; the file's tree has no object with the CPUs %s (the nodes were split or joined, e.g. by the firmware's NPS or SNC setting: rerun the check)", here, n)
		}
	}
	return ""
}

// sameSets reports whether the lists name the same sets as nodes, in any
// order (lists in canonical form, as the check writes them).
func sameSets(lists []string, nodes []cpuset.Set) bool {
	want := map[string]int{}
	for _, n := range nodes {
		want[n.String()]++
	}
	for _, l := range lists {
		if want[l] == 0 {
			return false
		}
		want[l]--
	}
	return true
}

// formatSets writes sets as "0-7 | 8-15".
func formatSets(sets []cpuset.Set) string {
	out := make([]string, len(sets))
	for i, s := range sets {
		out[i] = s.String()
	}
	return strings.Join(out, " | ")
}
