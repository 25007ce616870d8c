package configsets

import (
	"fmt"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/text"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/hwtree"
)

// DefaultLimit is how many configuration sets per thread count the tuner
// measures when there are more.
const DefaultLimit = 8

// Representatives returns at most limit configuration sets for threads
// threads. When the exact count is at most limit, that is every set
// (Enumerate's order). Otherwise it is a deterministic, labelled choice
// spanning what a barrier feels, in this order of priority:
//   - compact: fill the deepest shared level first (the first t PUs);
//   - scatter: round-robin over the top levels, recursively;
//   - balanced u1xu2x…: level-uniform placements, u_i children used at
//     each branching level (e.g. packages x L3s x cores x PUs), Π u_i = t,
//     fewest packages first;
//   - near-balanced u1x…: for counts that do not factor so, the balanced
//     placements of the next feasible product, trimmed to t in scatter order.
//
// Placements that the exact method finds equivalent appear once.
func Representatives(topo *hwtree.Topology, threads, limit int) ([]Set, error) {
	return NewSpace(topo).Representatives(threads, limit)
}

// Representatives is the package function Representatives on a prepared
// space.
func (sp *Space) Representatives(threads, limit int) ([]Set, error) {
	topo := sp.topo
	n := sp.pus()
	if threads < 0 || threads > n {
		return nil, fmt.Errorf("thread count %d is out of range: this topology has %s (want 0..%d)", threads, text.Plural(n, "allowed PU"), n)
	}
	if limit < 1 {
		return nil, fmt.Errorf("limit %d: want at least 1", limit)
	}
	if sp.approx != nil && sp.approx[threads] <= float64(limit) { // nil: uncountable, so many
		seq, err := sp.Enumerate(threads, Exact)
		if err != nil {
			return nil, err
		}
		var out []Set
		for s := range seq {
			out = append(out, s)
		}
		return out, nil
	}
	seen := map[string]bool{}
	var out []Set
	add := func(label string, pus []*hwtree.Object) {
		if len(out) >= limit || len(pus) != threads {
			return
		}
		sel := map[*hwtree.Object]bool{}
		for _, p := range pus {
			sel[p] = true
		}
		key := subsetForm(topo.Root, sel, sp.forms)
		if seen[key] {
			return
		}
		seen[key] = true
		cpus := osIndexes(topo, sel)
		out = append(out, Set{Threads: threads, CPUs: cpus, Label: label, Config: sp.pc.describe(cpus)})
	}
	pus := topo.PUs()
	add("compact", pus[:threads])
	add("scatter", scatter(topo.Root, threads))
	if levels := sp.levels; len(levels) > 0 {
		for _, u := range factorings(levels, threads) {
			add("balanced "+joinUs(u), balanced(topo.Root, u, levels))
		}
		for _, u := range nearFactorings(levels, threads) {
			sel := map[*hwtree.Object]bool{}
			for _, p := range balanced(topo.Root, u, levels) {
				sel[p] = true
			}
			add("near-balanced "+joinUs(u), scatterAmong(topo.Root, threads, sel))
		}
	}
	return out, nil
}

// subsetForm is the canonical form of the tree with the selected PUs
// marked: two subsets share it exactly when an automorphism maps one to
// the other.
func subsetForm(o *hwtree.Object, sel map[*hwtree.Object]bool, forms map[*hwtree.Object]string) string {
	if o.Type == hwtree.PU {
		if sel[o] {
			return "PU*"
		}
		return "PU"
	}
	if !anySelected(o, sel) {
		return forms[o]
	}
	parts := make([]string, len(o.Children))
	for i, c := range o.Children {
		parts[i] = subsetForm(c, sel, forms)
	}
	sort.Strings(parts)
	return o.Type.String() + "#" + strconv.FormatUint(o.Attrs.CacheSize, 10) + o.Attrs.CPUKind + "(" + strings.Join(parts, ",") + ")"
}

func anySelected(o *hwtree.Object, sel map[*hwtree.Object]bool) bool {
	if o.Type == hwtree.PU {
		return sel[o]
	}
	for _, c := range o.Children {
		if anySelected(c, sel) {
			return true
		}
	}
	return false
}

// osIndexes lists the selected PUs' OS indexes in depth-first order.
func osIndexes(topo *hwtree.Topology, sel map[*hwtree.Object]bool) []int {
	var out []int
	for _, p := range topo.PUs() {
		if sel[p] {
			out = append(out, p.OSIndex)
		}
	}
	return out
}

// scatter spreads t threads round-robin over o's children, recursively.
func scatter(o *hwtree.Object, t int) []*hwtree.Object { return scatterAmong(o, t, nil) }

// scatterAmong is scatter over the PUs in allowed only (all when nil).
func scatterAmong(o *hwtree.Object, t int, allowed map[*hwtree.Object]bool) []*hwtree.Object {
	if t == 0 {
		return nil
	}
	if o.Type == hwtree.PU {
		return []*hwtree.Object{o}
	}
	room := make([]int, len(o.Children))
	for i, c := range o.Children {
		room[i] = countAllowed(c, allowed)
	}
	share := make([]int, len(o.Children))
	for left := t; left > 0; {
		progress := false
		for i := range o.Children {
			if left > 0 && share[i] < room[i] {
				share[i]++
				left--
				progress = true
			}
		}
		if !progress {
			break
		}
	}
	var out []*hwtree.Object
	for i, c := range o.Children {
		out = append(out, scatterAmong(c, share[i], allowed)...)
	}
	return out
}

func countAllowed(o *hwtree.Object, allowed map[*hwtree.Object]bool) int {
	if allowed == nil {
		return o.CPUSet.Len()
	}
	if o.Type == hwtree.PU {
		if allowed[o] {
			return 1
		}
		return 0
	}
	n := 0
	for _, c := range o.Children {
		n += countAllowed(c, allowed)
	}
	return n
}

// branchingLevels returns, for a tree whose every depth has one arity (the
// leftmost path's), the depths and arities of the levels that branch
// (arity > 1); nil when the tree is not level-uniform.
func branchingLevels(topo *hwtree.Topology) [][2]int {
	if !topo.Symmetric() {
		return nil
	}
	var levels [][2]int
	depth := 0
	for o := topo.Root; len(o.Children) > 0; o = o.Children[0] {
		if len(o.Children) > 1 {
			levels = append(levels, [2]int{depth, len(o.Children)})
		}
		depth++
	}
	return levels
}

// factorings lists tuples u (one per branching level, 1 <= u_i <= arity_i)
// with product t. They are interleaved by top-level spread (one with 1
// unit at the top, one with 2, …, then the next of each), so a small limit
// still spans both "within one package" and "across packages".
func factorings(levels [][2]int, t int) [][]int {
	var out [][]int
	u := make([]int, len(levels))
	var rec func(i, left int)
	rec = func(i, left int) {
		if i == len(levels) {
			if left == 1 {
				out = append(out, slices.Clone(u))
			}
			return
		}
		for v := 1; v <= levels[i][1]; v++ {
			if left%v == 0 {
				u[i] = v
				rec(i+1, left/v)
			}
		}
	}
	if t >= 1 {
		rec(0, t)
	}
	seen := map[int]int{}
	rank := make([]int, len(out))
	for i, u := range out {
		rank[i] = seen[u[0]]
		seen[u[0]]++
	}
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		if rank[idx[a]] != rank[idx[b]] {
			return rank[idx[a]] < rank[idx[b]]
		}
		return out[idx[a]][0] < out[idx[b]][0]
	})
	sorted := make([][]int, len(out))
	for i, j := range idx {
		sorted[i] = out[j]
	}
	return sorted
}

// nearFactorings lists the factorings of the smallest product above t
// that has any, when t itself has none.
func nearFactorings(levels [][2]int, t int) [][]int {
	if t < 1 || len(factorings(levels, t)) > 0 {
		return nil
	}
	maxProd := 1
	for _, l := range levels {
		maxProd *= l[1]
	}
	for p := t + 1; p <= maxProd; p++ {
		if f := factorings(levels, p); len(f) > 0 {
			return f
		}
	}
	return nil
}

// balanced selects, at each branching level, the first u_i children of
// every selected object, and every child at the other levels.
func balanced(root *hwtree.Object, u []int, levels [][2]int) []*hwtree.Object {
	use := map[int]int{}
	for i, l := range levels {
		use[l[0]] = u[i]
	}
	var out []*hwtree.Object
	var rec func(o *hwtree.Object, depth int)
	rec = func(o *hwtree.Object, depth int) {
		if o.Type == hwtree.PU {
			out = append(out, o)
			return
		}
		kids := o.Children
		if k, ok := use[depth]; ok {
			kids = kids[:k]
		}
		for _, c := range kids {
			rec(c, depth+1)
		}
	}
	rec(root, 0)
	return out
}

func joinUs(u []int) string {
	s := make([]string, len(u))
	for i, v := range u {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, "x")
}

// spreadLabel names how a placement spreads over the tree, so that the
// labels of two sets the exact method tells apart differ even where their
// paper-style configs ("(a2, b0)") agree. On a level-uniform tree a
// placement that uses the same number of children below every object it
// uses at each branching level is "balanced u1xu2x…", as Representatives
// labels it; any other is "uneven" with its occupancy: per object used,
// its used children's occupancies, largest first, down to PU counts, e.g.
// "uneven [[2 1] [1]]" (two packages, the first with a core holding two
// threads and one holding one).
func (sp *Space) spreadLabel(cpus cpuset.Placement) string {
	sel := map[*hwtree.Object]bool{}
	want := map[int]bool{}
	for _, c := range cpus {
		want[c] = true
	}
	for _, p := range sp.topo.PUs() {
		if want[p.OSIndex] {
			sel[p] = true
		}
	}
	if len(sel) == 0 {
		return "none"
	}
	if u := uniformUse(sp.topo.Root, sel, sp.levels); u != nil {
		return "balanced " + joinUs(u)
	}
	return "uneven " + occupancy(sp.topo.Root, sel)
}

// uniformUse returns, per branching level, how many children every used
// object of the level uses, or nil when they differ or the tree is not
// level-uniform.
func uniformUse(root *hwtree.Object, sel map[*hwtree.Object]bool, levels [][2]int) []int {
	if len(levels) == 0 {
		return nil
	}
	at := map[int]int{} // depth -> index in levels
	for i, l := range levels {
		at[l[0]] = i
	}
	u := make([]int, len(levels))
	ok := true
	var rec func(o *hwtree.Object, depth int)
	rec = func(o *hwtree.Object, depth int) {
		used := 0
		for _, c := range o.Children {
			if anySelected(c, sel) {
				used++
				rec(c, depth+1)
			}
		}
		if i, branching := at[depth]; branching {
			if u[i] == 0 {
				u[i] = used
			} else if u[i] != used {
				ok = false
			}
		}
	}
	rec(root, 0)
	if !ok {
		return nil
	}
	return u
}

// occupancy writes o's used subtrees, skipping levels that do not branch:
// a PU count at the objects whose children are PUs, else the used
// children's occupancies in brackets, largest first.
func occupancy(o *hwtree.Object, sel map[*hwtree.Object]bool) string {
	if o.Type == hwtree.PU {
		return "1"
	}
	if len(o.Children) == 1 {
		return occupancy(o.Children[0], sel)
	}
	leaves := true
	var used []*hwtree.Object
	for _, c := range o.Children {
		if c.Type != hwtree.PU {
			leaves = false
		}
		if anySelected(c, sel) {
			used = append(used, c)
		}
	}
	if leaves {
		return strconv.Itoa(len(used))
	}
	type part struct {
		form string
		n    int
	}
	parts := make([]part, len(used))
	for i, c := range used {
		n := 0
		for p := range sel {
			if c.CPUSet.Has(p.OSIndex) {
				n++
			}
		}
		parts[i] = part{occupancy(c, sel), n}
	}
	sort.SliceStable(parts, func(i, j int) bool {
		if parts[i].n != parts[j].n {
			return parts[i].n > parts[j].n
		}
		return parts[i].form > parts[j].form
	})
	forms := make([]string, len(parts))
	for i, p := range parts {
		forms[i] = p.form
	}
	return "[" + strings.Join(forms, " ") + "]"
}
