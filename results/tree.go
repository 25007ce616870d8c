package results

import (
	"fmt"
	"slices"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
)

// Tree is the whole machine's CPU tree, recorded by the check so that a
// reader can place threads inside any allowed subset of the machine without
// discovering the tree itself (Topology builds it as an hwtree tree). CPUs
// are every usable CPU of the machine, those the check's process was not
// allowed to run on (affinity, cgroup) included. Levels list the objects
// between the Machine and the PUs, from the root down: each level is one
// object type and the CPU list of each of its objects. The tree is rebuilt
// by inclusion: an object's parent is the smallest object of an earlier
// level whose CPUs contain its own.
type Tree struct {
	CPUs   string      `json:"cpus"`
	Levels []TreeLevel `json:"levels"`
}

// TreeLevel is one type of object of a Tree and the CPUs of each object
// (list form, e.g. "0-7"), in the order of their first CPU.
type TreeLevel struct {
	Type string   `json:"type"`
	Sets []string `json:"sets"`
}

// maxTreeObjects caps the objects of a recorded tree (PUs included), so a
// hostile file cannot make a reader build an unbounded one.
const maxTreeObjects = 1 << 20

// maxTreeMembers caps the CPUs of all a tree's objects together (65,536
// CPUs on 128 levels), so that building it stays cheap whatever the file.
const maxTreeMembers = 1 << 23

// maxTreeWords caps the 64-bit words of the objects' parsed CPU sets
// together (256 MiB in all, parsed one set at a time and dropped): a tree
// of 8,192 CPUs on 8 levels needs about 4 million, one of 16,384 about 17
// million.
const maxTreeWords = 1 << 25

// lastIndex is the largest CPU index a list names, read from its digits
// (an index over cpuset.MaxCPU counts as MaxCPU: the parser refuses it).
func lastIndex(list string) int {
	most, n := 0, 0
	for i := 0; i <= len(list); i++ {
		if i < len(list) && list[i] >= '0' && list[i] <= '9' {
			n = min(n*10+int(list[i]-'0'), cpuset.MaxCPU)
			continue
		}
		most, n = max(most, n), 0
	}
	return most
}

// typeNamed is the type hwloc names exactly name, as the check writes it
// (hwtree.ParseType also takes abbreviations in any case, which a file
// never holds).
func typeNamed(name string) (hwtree.Type, bool) {
	for t := hwtree.Machine; t <= hwtree.PU; t++ {
		if t.String() == name {
			return t, true
		}
	}
	return 0, false
}

// Topology builds the recorded tree (hwtree.FromLevels), refusing one that
// is not a tree or is too large to build cheaply, with one line naming the
// problem.
func (t *Tree) Topology() (*hwtree.Topology, error) {
	all, err := cpuset.ParseList(t.CPUs)
	if err != nil {
		return nil, fmt.Errorf("tree cpus: %w", err)
	}
	if all.IsEmpty() {
		return nil, fmt.Errorf("tree cpus %q: the tree has no CPU", t.CPUs)
	}
	// A parsed set costs a word per 64 indexes below its last CPU: bound
	// the words before parsing any.
	words := 0
	for _, l := range t.Levels {
		for _, s := range l.Sets {
			if words += lastIndex(s)/64 + 1; words > maxTreeWords {
				return nil, fmt.Errorf("the tree's object CPU lists are too large (over %d words of sets); at most that is read", maxTreeWords)
			}
		}
	}
	count, total := all.Len(), 0
	levels := map[hwtree.Type][]cpuset.Set{}
	for li, l := range t.Levels {
		if l.Type == "" {
			return nil, fmt.Errorf("tree level %d has no type", li)
		}
		typ, ok := typeNamed(l.Type)
		if !ok {
			return nil, fmt.Errorf("tree level %d: unknown object type %q (accepted: hwloc's names, %s to %s)", li, l.Type, hwtree.Machine, hwtree.PU)
		}
		if count += len(l.Sets); count > maxTreeObjects {
			return nil, fmt.Errorf("the tree has over %d objects; at most that many are read", maxTreeObjects)
		}
		for _, s := range l.Sets {
			set, err := cpuset.ParseList(s)
			if err != nil {
				return nil, fmt.Errorf("tree level %s: %w", l.Type, err)
			}
			if set.IsEmpty() || !set.SubsetOf(all) {
				return nil, fmt.Errorf("tree level %s: object CPUs %q are empty or outside the tree's CPUs %s", l.Type, s, t.CPUs)
			}
			if total += set.Len(); total > maxTreeMembers {
				return nil, fmt.Errorf("the tree's objects hold over %d CPUs in all; at most that many are read", maxTreeMembers)
			}
			levels[typ] = append(levels[typ], set)
		}
	}
	return hwtree.FromLevels(all, levels, "results")
}

// placer places threads in a recorded tree: its CPUs, each CPU's PU, and
// each object's canonical form (equal forms: isomorphic subtrees).
type placer struct {
	topo   *hwtree.Topology
	all    cpuset.Set
	pu     map[int]*hwtree.Object
	shapes map[*hwtree.Object]string
}

func newPlacer(topo *hwtree.Topology) *placer {
	p := &placer{topo: topo, all: topo.Allowed(), pu: map[int]*hwtree.Object{}, shapes: topo.CanonicalForms()}
	for _, o := range topo.PUs() {
		p.pu[o.OSIndex] = o
	}
	return p
}

// count returns how many of cpus lie below each object.
func (p *placer) count(cpus cpuset.Placement) map[*hwtree.Object]int {
	m := map[*hwtree.Object]int{}
	for _, c := range cpus {
		for o := p.pu[c]; o != nil; o = o.Parent {
			m[o]++
		}
	}
	return m
}

// inOrder returns the CPUs of s in the tree's depth-first order.
func (p *placer) inOrder(s cpuset.Set) []int {
	var out []int
	for _, c := range p.topo.CPUs() {
		if s.Has(c) {
			out = append(out, c)
		}
	}
	return out
}

// maxRealizeSteps bounds the work of one placement's realisation; a tree
// of thousands of CPUs needs far fewer.
const maxRealizeSteps = 1 << 22

// realizer maps a recorded placement into an allowed set under the tree's
// symmetry: an automorphism of the tree that takes the placement's CPUs
// into the allowed set.
type realizer struct {
	p       *placer
	marked  map[*hwtree.Object]int // marked CPUs below each object (the recorded placement)
	allowed cpuset.Set
	room    map[*hwtree.Object]int            // allowed CPUs below each object
	memo    map[[2]*hwtree.Object]map[int]int // nil map: cannot be realised
	steps   int
}

// realize returns where each CPU of cpus goes in an equivalent placement
// inside allowed (in the same rank order), or nil when no automorphism of
// the tree takes cpus inside allowed. A placement already inside allowed
// maps to itself. Every CPU must be distinct and in the tree.
func (p *placer) realize(cpus cpuset.Placement, allowed cpuset.Set) cpuset.Placement {
	if !validCPUs(cpus) {
		return nil
	}
	marked := cpuset.Of(cpus...)
	if marked.Len() != len(cpus) || !marked.SubsetOf(p.all) {
		return nil
	}
	if marked.SubsetOf(allowed) {
		return slices.Clone(cpus)
	}
	if marked.Len() > allowed.And(p.all).Len() {
		return nil
	}
	r := &realizer{p: p, marked: p.count(cpus), allowed: allowed, room: p.count(allowed.And(p.all).Members()),
		memo: map[[2]*hwtree.Object]map[int]int{}}
	m := r.node(p.topo.Root, p.topo.Root)
	if m == nil {
		return nil
	}
	out := make([]int, len(cpus))
	for i, c := range cpus {
		out[i] = m[c]
	}
	return out
}

// node realises the marked CPUs under recorded object a inside object b of
// the same shape, returning the CPU mapping, or nil.
func (r *realizer) node(a, b *hwtree.Object) map[int]int {
	key := [2]*hwtree.Object{a, b}
	if m, ok := r.memo[key]; ok {
		return m
	}
	r.steps++
	if r.steps > maxRealizeSteps {
		return nil
	}
	var m map[int]int
	switch {
	case a.Type == hwtree.PU:
		if r.allowed.Has(b.OSIndex) {
			m = map[int]int{a.OSIndex: b.OSIndex}
		}
	case r.marked[a] == 0:
		m = map[int]int{}
	default:
		m = r.children(a, b)
	}
	r.memo[key] = m
	return m
}

// children matches each marked child of a to a distinct child of b of the
// same shape that can hold it (augmenting paths: a bipartite matching, no
// exponential backtracking); the unmarked children of a take the rest.
func (r *realizer) children(a, b *hwtree.Object) map[int]int {
	var left []*hwtree.Object
	for _, c := range a.Children {
		if r.marked[c] > 0 {
			left = append(left, c)
		}
	}
	matchR := make(map[*hwtree.Object]int, len(left)) // b's child -> index in left
	matchL := make([]*hwtree.Object, len(left))
	var try func(i int, seen map[*hwtree.Object]bool) bool
	try = func(i int, seen map[*hwtree.Object]bool) bool {
		// The same object first, so a placement keeps its CPUs where it can.
		cands := b.Children
		if a == b {
			cands = append([]*hwtree.Object{left[i]}, b.Children...)
		}
		// Free objects first, in tree order, so that ranks keep their
		// order where they can; then augmenting paths through taken ones.
		for pass := 0; pass < 2; pass++ {
			for _, c := range cands {
				if seen[c] || r.p.shapes[c] != r.p.shapes[left[i]] || r.room[c] < r.marked[left[i]] {
					continue
				}
				j, taken := matchR[c]
				if taken != (pass == 1) {
					continue
				}
				if r.node(left[i], c) == nil {
					continue // no edge: c stays free for the other children
				}
				seen[c] = true
				if !taken || try(j, seen) {
					matchR[c], matchL[i] = i, c
					return true
				}
			}
		}
		return false
	}
	for i := range left {
		if !try(i, map[*hwtree.Object]bool{}) {
			return nil
		}
	}
	m := map[int]int{}
	for i, c := range left {
		for k, v := range r.node(c, matchL[i]) {
			m[k] = v
		}
	}
	return m
}
