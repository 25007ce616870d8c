package configsets

import (
	"fmt"
	"iter"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/text"
)

// Set is one configuration set: a placement of Threads threads.
type Set struct {
	// Threads is the thread count t.
	Threads int `json:"threads"`
	// CPUs is a representative placement: OS indexes in depth-first tree
	// order, which is also the rank order the barriers use.
	CPUs []int `json:"cpus"`
	// Label names how a representative was chosen ("compact", "scatter",
	// "balanced 2x1x2", …); for a set the exact method enumerates, how it
	// spreads over the tree ("balanced 1x2x1", "uneven [[2 1] [1]]"), so
	// that two sets sharing a Config still differ. Empty for the paper
	// method's sets.
	Label string `json:"label"`
	// Config describes the set in the paper's style: threads per
	// configuration, e.g. "(a1, b2, c0)".
	Config string `json:"config"`
}

// configuration is one of the paper's configurations.
type configuration struct {
	node     *hwtree.Object
	label    string
	key      string
	pus      []int // OS indexes of the PUs in its leaves, depth-first
	capacity int
}

type paperClass struct {
	members  []int // indexes into configs, in label order
	capacity int
}

type paperConfigs struct {
	configs []configuration
	byNode  map[*hwtree.Object]int
	byCPU   map[int]int // a PU's OS index -> its configuration's index
}

// isProcessorPart tells the objects that make up the paper's leaf: a
// processor with its private L1.
func isProcessorPart(t hwtree.Type) bool {
	return t == hwtree.PU || t == hwtree.Core || t == hwtree.L1dCache || t == hwtree.L1iCache
}

// leafOf returns the paper's leaf holding pu: its topmost ancestor made of
// processor parts (PU, Core, L1 caches).
func leafOf(pu *hwtree.Object) *hwtree.Object {
	u := pu
	for u.Parent != nil && isProcessorPart(u.Parent.Type) {
		u = u.Parent
	}
	return u
}

// paperConfigurations finds the configurations (the parents of leaves, in
// depth-first order), labels them a, b, c, … and computes their keys.
func paperConfigurations(topo *hwtree.Topology) paperConfigs {
	pc := paperConfigs{byNode: map[*hwtree.Object]int{}, byCPU: map[int]int{}}
	for _, pu := range topo.PUs() {
		leaf := leafOf(pu)
		node := leaf.Parent
		if node == nil { // a lone PU as the whole machine
			node = leaf
		}
		i, ok := pc.byNode[node]
		if !ok {
			i = len(pc.configs)
			pc.byNode[node] = i
			pc.configs = append(pc.configs, configuration{node: node, label: label(i)})
		}
		pc.configs[i].pus = append(pc.configs[i].pus, pu.OSIndex)
		pc.byCPU[pu.OSIndex] = i
	}
	kinds := make([]map[string]bool, len(pc.configs))
	for _, pu := range topo.PUs() {
		i := pc.byCPU[pu.OSIndex]
		if kinds[i] == nil {
			kinds[i] = map[string]bool{}
		}
		kinds[i][pu.Attrs.CPUKind] = true
	}
	for i := range pc.configs {
		c := &pc.configs[i]
		c.capacity = len(c.pus)
		var key []string
		for o := c.node; o != nil; o = o.Parent {
			key = append(key, strconv.Itoa(len(o.Children)))
		}
		var ks []string
		for k := range kinds[i] {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		c.key = fmt.Sprintf("{%s} kinds=%s cap=%d", strings.Join(key, ","), strings.Join(ks, "/"), c.capacity)
	}
	return pc
}

// classes groups same configurations (equal keys), in label order.
func (pc paperConfigs) classes() []paperClass {
	idx := map[string]int{}
	var out []paperClass
	for i, c := range pc.configs {
		j, ok := idx[c.key]
		if !ok {
			j = len(out)
			idx[c.key] = j
			out = append(out, paperClass{capacity: c.capacity})
		}
		out[j].members = append(out[j].members, i)
	}
	return out
}

// label returns a, b, …, z, aa, ab, …
func label(i int) string {
	s := ""
	for {
		s = string(rune('a'+i%26)) + s
		i = i/26 - 1
		if i < 0 {
			return s
		}
	}
}

// describe writes threads per configuration for a placement, e.g.
// "(a1, b0, c2)".
func (pc paperConfigs) describe(cpus cpuset.Placement) string {
	counts := make([]int, len(pc.configs))
	for _, cpu := range cpus {
		if i, ok := pc.byCPU[cpu]; ok {
			counts[i]++
		}
	}
	parts := make([]string, len(counts))
	for i, n := range counts {
		parts[i] = pc.configs[i].label + strconv.Itoa(n)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// MaxEnumerate bounds how many sets Enumerate lists for one thread count;
// beyond it, use Representatives.
const MaxEnumerate = 1_000_000

// Space holds what every question about one topology's configuration sets
// needs, computed once: canonical forms, both methods' counts and the
// paper's configurations. The tuner asks it for every thread count.
type Space struct {
	topo        *hwtree.Topology
	forms       map[*hwtree.Object]string
	approx      []float64 // approxCounts; nil when countErr says why (Countable)
	countsOnce  sync.Once
	counts      []*big.Int // computed when first asked for (Counts)
	countErr    error
	paperOnce   sync.Once
	paperCounts []*big.Int // computed when first asked for (PaperCounts)
	paperErr    error
	pc          paperConfigs
	levels      [][2]int
}

// NewSpace prepares the configuration sets of topo. Their exact counts
// are computed here unless Countable refuses them: then Counts says why,
// Enumerate refuses, and Representatives chooses without them.
func NewSpace(topo *hwtree.Topology) *Space {
	sp := &Space{
		topo:   topo,
		forms:  topo.CanonicalForms(),
		pc:     paperConfigurations(topo),
		levels: branchingLevels(topo),
	}
	if sp.countErr = Countable(topo, Exact); sp.countErr == nil {
		sp.approx = approxCounts(topo)
	}
	return sp
}

// Counts returns the exact counts for t = 0..PUs (shared, do not modify),
// or why they were not computed (Countable). They are computed when first
// asked for: choosing representatives and the enumeration's cap need only
// whether a count is small, which the space's float64 counts
// (approxCounts) tell exactly.
func (sp *Space) Counts() ([]*big.Int, error) {
	sp.countsOnce.Do(func() {
		if sp.countErr == nil {
			sp.counts = Counts(sp.topo)
		}
	})
	return sp.counts, sp.countErr
}

// pus is the number of PUs of the space's tree.
func (sp *Space) pus() int { return len(sp.topo.PUs()) }

// PaperCounts returns the paper method's counts for t = 0..PUs (shared,
// do not modify). They are computed when first asked for: on a 4096-PU
// tree their polynomial products took 4 of the 11 s a check's plan took,
// and the check never asks (it chooses representatives of the exact
// method).
func (sp *Space) PaperCounts() ([]*big.Int, error) {
	sp.paperOnce.Do(func() {
		if sp.paperErr = Countable(sp.topo, Paper); sp.paperErr == nil {
			sp.paperCounts = PaperCounts(sp.topo)
		}
	})
	return sp.paperCounts, sp.paperErr
}

// Enumerate returns the configuration sets for threads threads, lazily and
// in a deterministic order. The exact method lists one representative per
// orbit; the paper method lists Algorithm 1's sets. It fails when threads is
// out of range or the sets number more than MaxEnumerate.
func Enumerate(topo *hwtree.Topology, threads int, method Method) (iter.Seq[Set], error) {
	return NewSpace(topo).Enumerate(threads, method)
}

// Enumerate is the package function Enumerate on a prepared space.
func (sp *Space) Enumerate(threads int, method Method) (iter.Seq[Set], error) {
	n := sp.pus()
	if threads < 0 || threads > n {
		return nil, fmt.Errorf("thread count %d is out of range: this topology has %s (want 0..%d)", threads, text.Plural(n, "allowed PU"), n)
	}
	var counts []*big.Int
	var err error
	switch method {
	case Exact:
		if sp.countErr == nil && sp.approx[threads] <= MaxEnumerate {
			break // few enough: no exact count needed
		}
		counts, err = sp.Counts()
	case Paper:
		counts, err = sp.PaperCounts()
	default:
		return nil, fmt.Errorf("unknown method %q (accepted: exact, paper)", method)
	}
	if err != nil {
		return nil, fmt.Errorf("not listed: %w", err)
	}
	if counts != nil && counts[threads].Cmp(big.NewInt(MaxEnumerate)) > 0 {
		return nil, fmt.Errorf("%s configuration sets for %s are more than %d to list; choose representatives with a limit", counts[threads], text.Plural(threads, "thread"), MaxEnumerate)
	}
	pc := sp.pc
	if method == Paper {
		return pc.enumerate(threads), nil
	}
	e := &enumerator{forms: sp.forms, memo: map[string][][]int{}}
	pus := sp.topo.CPUs()
	return func(yield func(Set) bool) {
		e.gen(sp.topo.Root, threads, func(pos []int) bool {
			cpus := make([]int, len(pos))
			for i, p := range pos {
				cpus[i] = pus[p]
			}
			return yield(Set{Threads: threads, CPUs: cpus, Label: sp.spreadLabel(cpus), Config: pc.describe(cpus)})
		})
	}, nil
}

// enumerate lists Algorithm 1's sets for t threads: per class of same
// configurations, non-decreasing thread counts in label order (one of each
// permutation class), the first PUs of each configuration as the placement.
func (pc paperConfigs) enumerate(t int) iter.Seq[Set] {
	classes := pc.classes()
	return func(yield func(Set) bool) {
		counts := make([]int, len(pc.configs))
		var rec func(ci, mi, left, floor int) bool
		rec = func(ci, mi, left, floor int) bool {
			if ci == len(classes) {
				if left != 0 {
					return true
				}
				var cpus []int
				for i, c := range pc.configs {
					cpus = append(cpus, c.pus[:counts[i]]...)
				}
				sortByTree(cpus, pc)
				return yield(Set{Threads: t, CPUs: cpus, Config: pc.describe(cpus)})
			}
			cl := classes[ci]
			if mi == len(cl.members) {
				return rec(ci+1, 0, left, 0)
			}
			for k := floor; k <= min(cl.capacity, left); k++ {
				counts[cl.members[mi]] = k
				if !rec(ci, mi+1, left-k, k) {
					return false
				}
			}
			counts[cl.members[mi]] = 0
			return true
		}
		rec(0, 0, t, 0)
	}
}

// sortByTree orders OS indexes by the configurations' depth-first order.
func sortByTree(cpus []int, pc paperConfigs) {
	rank := map[int]int{}
	r := 0
	for _, c := range pc.configs {
		for _, p := range c.pus {
			rank[p] = r
			r++
		}
	}
	sort.Slice(cpus, func(i, j int) bool { return rank[cpus[i]] < rank[cpus[j]] })
}

// enumerator lists orbits of PU subsets: for a subtree and a size, one
// representative per orbit, as positions (0 = the subtree's first PU in
// depth-first order). Lists for subtrees below the root are memoised by
// canonical form.
type enumerator struct {
	forms map[*hwtree.Object]string
	memo  map[string][][]int
}

func (e *enumerator) orbits(o *hwtree.Object, t int) [][]int {
	key := e.forms[o] + "/" + strconv.Itoa(t)
	if l, ok := e.memo[key]; ok {
		return l
	}
	var l [][]int
	e.gen(o, t, func(pos []int) bool {
		l = append(l, slices.Clone(pos))
		return true
	})
	e.memo[key] = l
	return l
}

// gen yields one representative of every orbit of t-subsets of o's PUs.
// Children in one class are interchangeable, so a class's members take
// child orbits in non-increasing (size, index) order: each multiset once.
func (e *enumerator) gen(o *hwtree.Object, t int, yield func([]int) bool) bool {
	if o.Type == hwtree.PU || len(o.Children) == 0 {
		switch {
		case t == 0:
			return yield(nil)
		case t == 1 && o.Type == hwtree.PU:
			return yield([]int{0})
		}
		return true
	}
	if t > o.CPUSet.Len() {
		return true
	}
	offsets := map[*hwtree.Object]int{}
	off := 0
	for _, c := range o.Children {
		offsets[c] = off
		off += c.CPUSet.Len()
	}
	var members []*hwtree.Object // children in class order
	var first []bool             // whether a member starts its class
	for _, class := range childClasses(o, e.forms) {
		for i, c := range class {
			members = append(members, c)
			first = append(first, i == 0)
		}
	}
	var pos []int
	var rec func(mi, left, prevSize, prevIdx int) bool
	rec = func(mi, left, prevSize, prevIdx int) bool {
		if mi == len(members) {
			if left != 0 {
				return true
			}
			return yield(pos)
		}
		c := members[mi]
		rest := 0
		for _, m := range members[mi+1:] {
			rest += m.CPUSet.Len()
		}
		maxSize := min(left, c.CPUSet.Len())
		if !first[mi] {
			maxSize = min(maxSize, prevSize)
		}
		for s := maxSize; s >= 0 && s+rest >= left; s-- {
			list := e.orbits(c, s)
			top := len(list) - 1
			if !first[mi] && s == prevSize {
				top = prevIdx
			}
			for idx := top; idx >= 0; idx-- {
				n := len(pos)
				for _, p := range list[idx] {
					pos = append(pos, offsets[c]+p)
				}
				if !rec(mi+1, left-s, s, idx) {
					return false
				}
				pos = pos[:n]
			}
		}
		return true
	}
	return rec(0, t, 0, 0)
}

// List returns at most limit sets for t threads: representatives
// (Exact), or the first sets of method's enumeration, refused when there
// are more than MaxEnumerate of them.
func (sp *Space) List(t int, method Method, limit int) ([]Set, error) {
	if method == Exact {
		return sp.Representatives(t, limit)
	}
	paper, err := sp.PaperCounts()
	if err != nil {
		return nil, fmt.Errorf("not listed: %w", err)
	}
	if c := paper[t]; c.Cmp(big.NewInt(MaxEnumerate)) > 0 {
		return nil, fmt.Errorf("the paper method has %s sets for %s; too many to list, use --method exact for representatives", c, text.Plural(t, "thread"))
	}
	seq, err := sp.Enumerate(t, method)
	if err != nil {
		return nil, err
	}
	var out []Set
	for s := range seq {
		if len(out) == limit {
			break
		}
		out = append(out, s)
	}
	return out, nil
}
