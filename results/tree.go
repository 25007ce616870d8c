package results

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/cpuset"
)

// Tree is the whole machine's CPU tree, recorded by the check so that a
// reader can place threads inside any allowed subset of the machine without
// discovering the tree itself (the barriers library has no hwtree). CPUs
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

// treeNode is one object of a built tree.
type treeNode struct {
	typ      string
	first    int // its first CPU
	size     int // its number of CPUs
	cpu      int // the PU's OS index; -1 for other objects
	parent   *treeNode
	children []*treeNode
	shape    int // the canonical shape of the subtree (equal ids: isomorphic)
}

// builtTree is a Tree with its nodes linked, canonical shapes computed and
// each CPU's PU node indexed.
type builtTree struct {
	root  *treeNode
	all   cpuset.Set
	pu    map[int]*treeNode
	order []int // CPUs in depth-first order: the order placements fill
}

// build links the tree's objects and computes their shapes.
func (t *Tree) build() (*builtTree, error) {
	all, err := cpuset.ParseList(t.CPUs)
	if err != nil {
		return nil, fmt.Errorf("tree cpus: %w", err)
	}
	if all.IsEmpty() {
		return nil, fmt.Errorf("tree cpus %q: the tree has no CPU", t.CPUs)
	}
	count := all.Len()
	// Objects keep their CPUs as lists, not dense sets: a set of high
	// CPU indexes costs a word per 64 indexes below them.
	type obj struct {
		level int
		cpus  []int
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
	var objs []obj
	total := 0
	for li, l := range t.Levels {
		if l.Type == "" {
			return nil, fmt.Errorf("tree level %d has no type", li)
		}
		count += len(l.Sets)
		if count > maxTreeObjects {
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
			size := set.Len()
			if total += size; total > maxTreeMembers {
				return nil, fmt.Errorf("the tree's objects hold over %d CPUs in all; at most that many are read", maxTreeMembers)
			}
			objs = append(objs, obj{li, set.Members()})
		}
	}
	// Larger objects first; for equal CPUs the level nearer the root first.
	sort.SliceStable(objs, func(i, j int) bool {
		if len(objs[i].cpus) != len(objs[j].cpus) {
			return len(objs[i].cpus) > len(objs[j].cpus)
		}
		return objs[i].level < objs[j].level
	})
	bt := &builtTree{all: all, pu: map[int]*treeNode{}}
	members := all.Members()
	bt.root = &treeNode{typ: "Machine", first: members[0], size: len(members), cpu: -1}
	owner := make(map[int]*treeNode, len(members))
	for _, c := range members {
		owner[c] = bt.root
	}
	for _, o := range objs {
		cpus := o.cpus
		parent := owner[cpus[0]]
		for _, c := range cpus {
			if owner[c] != parent {
				return nil, fmt.Errorf("tree level %s: object CPUs %s partially overlap another object", t.Levels[o.level].Type, listOf(cpus))
			}
		}
		if parent.size == len(cpus) && parent.typ == t.Levels[o.level].Type {
			return nil, fmt.Errorf("tree level %s: object CPUs %s appear twice", parent.typ, listOf(cpus))
		}
		n := &treeNode{typ: t.Levels[o.level].Type, first: cpus[0], size: len(cpus), cpu: -1, parent: parent}
		parent.children = append(parent.children, n)
		for _, c := range cpus {
			owner[c] = n
		}
	}
	for _, c := range members {
		p := owner[c]
		n := &treeNode{typ: "PU", first: c, size: 1, cpu: c, parent: p}
		p.children = append(p.children, n)
		bt.pu[c] = n
	}
	shapes := map[string]int{}
	var rec func(n *treeNode)
	rec = func(n *treeNode) {
		slices.SortFunc(n.children, func(a, b *treeNode) int { return a.first - b.first })
		ids := make([]int, len(n.children))
		for i, c := range n.children {
			rec(c)
			ids[i] = c.shape
		}
		slices.Sort(ids)
		var key strings.Builder
		key.WriteString(n.typ)
		for _, id := range ids {
			key.WriteByte(' ')
			key.WriteString(strconv.Itoa(id))
		}
		id, ok := shapes[key.String()]
		if !ok {
			id = len(shapes)
			shapes[key.String()] = id
		}
		n.shape = id
		if n.cpu >= 0 {
			bt.order = append(bt.order, n.cpu)
		}
	}
	rec(bt.root)
	return bt, nil
}

// count returns how many of cpus lie below each object.
func (bt *builtTree) count(cpus []int) map[*treeNode]int {
	m := map[*treeNode]int{}
	for _, c := range cpus {
		for n := bt.pu[c]; n != nil; n = n.parent {
			m[n]++
		}
	}
	return m
}

// listOf is a CPU list in list form, for errors.
func listOf(cpus []int) string { return cpuset.Of(cpus...).String() }

// inOrder returns the CPUs of s in the tree's depth-first order.
func (bt *builtTree) inOrder(s cpuset.Set) []int {
	var out []int
	for _, c := range bt.order {
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
	bt      *builtTree
	marked  map[*treeNode]int // marked CPUs below each object (the recorded placement)
	allowed cpuset.Set
	room    map[*treeNode]int            // allowed CPUs below each object
	memo    map[[2]*treeNode]map[int]int // nil map: cannot be realised
	steps   int
}

// realize returns where each CPU of cpus goes in an equivalent placement
// inside allowed (in the same rank order), or nil when no automorphism of
// the tree takes cpus inside allowed. A placement already inside allowed
// maps to itself. Every CPU must be distinct and in the tree.
func (bt *builtTree) realize(cpus []int, allowed cpuset.Set) []int {
	if !validCPUs(cpus) {
		return nil
	}
	marked := cpuset.Of(cpus...)
	if marked.Len() != len(cpus) || !marked.SubsetOf(bt.all) {
		return nil
	}
	if marked.SubsetOf(allowed) {
		return slices.Clone(cpus)
	}
	if marked.Len() > allowed.And(bt.all).Len() {
		return nil
	}
	r := &realizer{bt: bt, marked: bt.count(cpus), allowed: allowed, room: bt.count(allowed.And(bt.all).Members()),
		memo: map[[2]*treeNode]map[int]int{}}
	m := r.node(bt.root, bt.root)
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
func (r *realizer) node(a, b *treeNode) map[int]int {
	key := [2]*treeNode{a, b}
	if m, ok := r.memo[key]; ok {
		return m
	}
	r.steps++
	if r.steps > maxRealizeSteps {
		return nil
	}
	var m map[int]int
	switch {
	case a.cpu >= 0:
		if r.allowed.Has(b.cpu) {
			m = map[int]int{a.cpu: b.cpu}
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
func (r *realizer) children(a, b *treeNode) map[int]int {
	var left []*treeNode
	for _, c := range a.children {
		if r.marked[c] > 0 {
			left = append(left, c)
		}
	}
	matchR := make(map[*treeNode]int, len(left)) // b's child -> index in left
	matchL := make([]*treeNode, len(left))
	var try func(i int, seen map[*treeNode]bool) bool
	try = func(i int, seen map[*treeNode]bool) bool {
		// The same object first, so a placement keeps its CPUs where it can.
		cands := b.children
		if a == b {
			cands = append([]*treeNode{left[i]}, b.children...)
		}
		// Free objects first, in tree order, so that ranks keep their
		// order where they can; then augmenting paths through taken ones.
		for pass := 0; pass < 2; pass++ {
			for _, c := range cands {
				if seen[c] || c.shape != left[i].shape || r.room[c] < r.marked[left[i]] {
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
		if !try(i, map[*treeNode]bool{}) {
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
