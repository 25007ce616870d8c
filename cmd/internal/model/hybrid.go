package model

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/algname"
)

// LevelKeys is one level of a machine's tree seen from a placement: Keys[i]
// is the group (core, L3, package, ...) participant i runs in at this level.
type LevelKeys struct {
	Name string
	Keys []int
}

// Composition is a hybrid barrier: its levels, lowest first, each with its
// algorithm, fan-in and groups of participants, ready for
// barriers.WithHierarchy. A composition with one level holding every
// participant is a flat algorithm (the hybrid degenerated).
type Composition struct {
	Levels barriers.Hierarchy
}

// String writes the composition as barriers.Hierarchy.String does, e.g.
// "core:dissemination,l3:combining(4),package:dissemination".
func (c Composition) String() string { return barriers.Hierarchy(c.Levels).String() }

// Flat returns the algorithm when the composition is one flat level, or "".
func (c Composition) Flat() string {
	if len(c.Levels) == 1 && len(c.Levels[0].Groups) == 1 {
		return c.Levels[0].Algorithm
	}
	return ""
}

// FanInCandidates returns the fan-ins tried for the algorithms that take one.
func FanInCandidates() []int { return []int{2, 3, 4, 8} }

// TakesFanIn reports whether alg's shape depends on barriers.WithFanIn.
func TakesFanIn(alg string) bool { return catalog.TakesFanIn(alg) }

type candidate struct {
	alg   string
	fanIn int
}

// candidates returns every flat spinning algorithm of the catalog with each
// fan-in it takes, in catalog order (which breaks ties).
func candidates() []candidate {
	var out []candidate
	for _, a := range barriers.Algorithms() {
		if !a.Spins || a.Name == algname.Hybrid {
			continue
		}
		if TakesFanIn(a.Name) {
			for _, k := range FanInCandidates() {
				out = append(out, candidate{a.Name, k})
			}
			continue
		}
		out = append(out, candidate{a.Name, 0})
	}
	return out
}

// BestFlat returns the flat algorithm (and fan-in, 0 where it takes none)
// with the lowest predicted time on cpus, among the catalog's spinning
// algorithms the model has a pattern for.
func BestFlat(k Kind, cpus cpuset.Placement, c Costs) (alg string, fanIn int, ns float64, err error) {
	return BestFlatWith(k, cpus, c, DefaultParams())
}

// BestFlatWith is BestFlat with the default model's constants given.
func BestFlatWith(k Kind, cpus cpuset.Placement, c Costs, prm Params) (alg string, fanIn int, ns float64, err error) {
	ns = math.Inf(1)
	var firstErr error
	for _, cand := range candidates() {
		t, err := PredictWith(k, cand.alg, cpus, c, cand.fanIn, prm)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if t < ns {
			alg, fanIn, ns = cand.alg, cand.fanIn, t
		}
	}
	if alg == "" {
		return "", 0, 0, fmt.Errorf("no flat algorithm could be predicted on %d CPUs: %w", len(cpus), firstErr)
	}
	return alg, fanIn, ns, nil
}

// Hybrid composes a hierarchical barrier greedily, level by level (Meyer &
// Elster): at each level of levels (lowest first) the participants still
// present (all of them at the lowest level, then one representative per
// group) are grouped by their key, and the algorithm and fan-in that
// minimise the slowest group's predicted time is chosen for the level. A
// level that groups nobody (every group of one) or everybody the level
// below already grouped identically is skipped; representatives left in
// several groups after the last level meet in a top level chosen the same
// way. The composition's predicted time is the critical path of its pattern
// (HybridPattern), plus, under a model other than critical-path, each
// level's overheads as the model predicts them for its slowest group.
//
// Where the composition is not predicted faster than the best flat
// algorithm over all participants, Hybrid returns that flat algorithm
// instead, so the hybrid is never predicted worse than flat.
func Hybrid(k Kind, levels []LevelKeys, cpus cpuset.Placement, c Costs) (Composition, float64, error) {
	return HybridWith(k, levels, cpus, c, DefaultParams())
}

// HybridWith is Hybrid with the default model's constants given (a
// check's calibration, say): every level's candidates and the flat
// algorithms are predicted with them.
func HybridWith(k Kind, levels []LevelKeys, cpus cpuset.Placement, c Costs, prm Params) (Composition, float64, error) {
	n := len(cpus)
	if n < 1 {
		return Composition{}, 0, fmt.Errorf("hybrid: no CPUs (want at least one participant)")
	}
	for _, lk := range levels {
		if len(lk.Keys) != n {
			return Composition{}, 0, fmt.Errorf("hybrid: level %q has %d keys for %d CPUs (want one per participant)", lk.Name, len(lk.Keys), n)
		}
	}
	flatAlg, flatK, flatNS, err := BestFlatWith(k, cpus, c, prm)
	if err != nil {
		return Composition{}, 0, err
	}
	return hybridAgainst(k, levels, cpus, c, flatAlg, flatK, flatNS, prm)
}

func hybridAgainst(k Kind, levels []LevelKeys, cpus cpuset.Placement, c Costs, flatAlg string, flatK int, flatNS float64, prm Params) (Composition, float64, error) {
	n := len(cpus)
	flat := Composition{Levels: []barriers.Level{{Name: "flat", Algorithm: flatAlg, FanIn: flatK, Groups: [][]int{seqInts(n)}}}}

	members := seqInts(n)
	var chosen []barriers.Level
	var extra float64 // the default model's overheads beyond the critical path
	addLevel := func(name string, groups [][]int) error {
		lv, over, err := chooseLevel(k, name, groups, cpus, c, prm)
		if err != nil {
			return err
		}
		chosen = append(chosen, lv)
		extra += over
		members = members[:0:0]
		for _, g := range groups {
			members = append(members, g[0])
		}
		return nil
	}
	for _, lk := range levels {
		if len(members) == 1 {
			break
		}
		groups := groupBy(members, lk.Keys)
		if len(groups) == len(members) { // every group of one: nothing to do here
			continue
		}
		if err := addLevel(lk.Name, groups); err != nil {
			return Composition{}, 0, err
		}
	}
	if len(members) > 1 {
		if err := addLevel("top", [][]int{slices.Clone(members)}); err != nil {
			return Composition{}, 0, err
		}
	}
	if len(chosen) <= 1 { // one level over everybody is a flat algorithm
		return flat, flatNS, nil
	}
	p, err := HybridPattern(chosen, n)
	if err != nil {
		return Composition{}, 0, err
	}
	if k == DefaultModel {
		extra += releaseQueue(chosen[:len(chosen)-1], cpus, c, prm)
	}
	ns := CriticalPath(p, cpus, c) + extra
	if ns >= flatNS {
		return flat, flatNS, nil
	}
	return Composition{Levels: chosen}, ns, nil
}

// HybridFor composes the hybrid for a placement on a tree: the tree's
// levels as the placement sees them (TreeLevels), composed greedily
// (Hybrid). The check measures the hybrid with
// barriers.WithHierarchy(comp.Levels) and records comp.String().
func HybridFor(k Kind, t *hwtree.Topology, cpus cpuset.Placement, c Costs) (Composition, float64, error) {
	return HybridForWith(k, t, cpus, c, DefaultParams())
}

// HybridForWith is HybridFor with the default model's constants given.
func HybridForWith(k Kind, t *hwtree.Topology, cpus cpuset.Placement, c Costs, prm Params) (Composition, float64, error) {
	levels, err := TreeLevels(t, cpus)
	if err != nil {
		return Composition{}, 0, err
	}
	return HybridWith(k, levels, cpus, c, prm)
}

// PriceComposition is a given hybrid's predicted time with constants
// prm, priced as Hybrid prices the compositions it chooses: the critical
// path of its pattern plus, under the default model, each level's
// overheads beyond the critical path for its slowest group and the
// release down the levels.
func PriceComposition(k Kind, levels []barriers.Level, cpus cpuset.Placement, c Costs, prm Params) (float64, error) {
	p, err := HybridPattern(levels, len(cpus))
	if err != nil {
		return 0, err
	}
	ns := CriticalPath(p, cpus, c)
	if k != DefaultModel || len(levels) == 0 {
		return ns, nil
	}
	for _, lv := range levels {
		worst, worstOver := 0.0, 0.0
		for _, g := range lv.Groups {
			if len(g) < 2 {
				continue
			}
			gc := make([]int, len(g))
			for i, id := range g {
				if id < 0 || id >= len(cpus) {
					return 0, fmt.Errorf("hybrid level %s: participant %d of %d", lv.Name, id, len(cpus))
				}
				gc[i] = cpus[id]
			}
			t, err := PredictWith(k, lv.Algorithm, gc, c, lv.FanIn, prm)
			if err != nil {
				return 0, err
			}
			if t > worst {
				worst, worstOver = t, 0
				if cp, err := PredictWith(CriticalPathModel, lv.Algorithm, gc, c, lv.FanIn, prm); err == nil && t > cp {
					worstOver = t - cp
				}
			}
		}
		ns += worstOver
	}
	return ns + releaseQueue(levels[:len(levels)-1], cpus, c, prm), nil
}

// chooseLevel picks the candidate whose slowest group is predicted fastest.
// It also returns what the model predicts beyond the critical path for that
// group (0 under the critical-path model).
func chooseLevel(k Kind, name string, groups [][]int, cpus cpuset.Placement, c Costs, prm Params) (barriers.Level, float64, error) {
	best, bestNS, bestOver := candidate{}, math.Inf(1), 0.0
	var firstErr error
	for _, cand := range candidates() {
		worst, worstOver := 0.0, 0.0
		ok := true
		patterns := map[int]Pattern{} // by group size: groups of one size share it
		for _, g := range groups {
			if len(g) < 2 {
				continue
			}
			gc := make([]int, len(g))
			for i, id := range g {
				gc[i] = cpus[id]
			}
			p, have := patterns[len(gc)]
			var err error
			if !have {
				if p, err = PatternOf(cand.alg, len(gc), cand.fanIn); err == nil {
					patterns[len(gc)] = p
				}
			}
			t := 0.0
			if err == nil {
				t, err = predictPattern(k, cand.alg, p, gc, c, prm)
			}
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				ok = false
				break
			}
			if t > worst {
				worst = t
				worstOver = 0
				if k != CriticalPathModel {
					if cp := CriticalPath(p, gc, c); t > cp {
						worstOver = t - cp
					}
				}
			}
		}
		if ok && worst < bestNS {
			best, bestNS, bestOver = cand, worst, worstOver
		}
	}
	if best.alg == "" {
		return barriers.Level{}, 0, fmt.Errorf("hybrid level %s: no algorithm could be predicted: %w", name, firstErr)
	}
	return barriers.Level{Name: name, Algorithm: best.alg, FanIn: best.fanIn, Groups: groups}, bestOver, nil
}

// HybridPattern is the signal pattern of the hybrid barrier built from
// levels over n participants, exactly as barriers' hybrid runs it: level
// after level, lowest first, every group runs its flat algorithm's whole
// pattern among its members (groups of a level side by side, in the same
// stages); then the release goes down, one stage per level below the top,
// in which every group's representative signals each other member.
//
// Like barriers' hybrid, a hierarchy whose highest level still has several
// groups gets a top level running dissemination among their
// representatives (whose release then goes down through the highest
// level's groups too).
func HybridPattern(levels []barriers.Level, n int) (Pattern, error) {
	if len(levels) > 0 {
		if top := levels[len(levels)-1]; len(top.Groups) > 1 {
			reps := make([]int, 0, len(top.Groups))
			for _, g := range top.Groups {
				if len(g) > 0 { // an empty group is reported below
					reps = append(reps, g[0])
				}
			}
			levels = append(slices.Clone(levels), barriers.Level{Name: "top", Algorithm: algname.Dissemination, Groups: [][]int{reps}})
		}
	}
	var p Pattern
	for l, lv := range levels {
		var stages Pattern
		for gi, g := range lv.Groups {
			if len(g) == 0 {
				return nil, fmt.Errorf("hybrid level %d (%s): group %d is empty (want at least one participant)", l, lv.Name, gi)
			}
			if len(g) < 2 {
				continue
			}
			alg := lv.Algorithm
			if alg == "" {
				alg = algname.Dissemination
			}
			sub, err := PatternOf(alg, len(g), lv.FanIn)
			if err != nil {
				return nil, fmt.Errorf("hybrid level %d (%s): %w", l, lv.Name, err)
			}
			for s, st := range sub {
				for len(stages) <= s {
					stages = append(stages, nil)
				}
				for _, sg := range st {
					if sg.From >= len(g) || sg.To >= len(g) {
						return nil, fmt.Errorf("hybrid level %d: %s's pattern names participant %d of %d", l, alg, max(sg.From, sg.To), len(g))
					}
					stages[s] = append(stages[s], Signal{g[sg.From], g[sg.To]})
				}
			}
		}
		p = append(p, stages...)
	}
	for l := len(levels) - 2; l >= 0; l-- {
		var st Stage
		for _, g := range levels[l].Groups {
			for _, id := range g[1:] {
				st = append(st, Signal{g[0], id})
			}
		}
		if len(st) > 0 {
			p = append(p, st)
		}
	}
	for _, st := range p {
		for _, sg := range st {
			if sg.From < 0 || sg.From >= n || sg.To < 0 || sg.To >= n {
				return nil, fmt.Errorf("hybrid pattern names participant %d of %d", max(sg.From, sg.To), n)
			}
		}
	}
	return p, nil
}

// treeLevelTypes are the tree levels a hybrid may group by, lowest first,
// with the names compositions use.
var treeLevelTypes = []struct {
	typ  hwtree.Type
	name string
}{
	{hwtree.Core, "core"}, {hwtree.L1dCache, "l1"}, {hwtree.L2Cache, "l2"}, {hwtree.L3Cache, "l3"},
	{hwtree.NUMANode, "numa"}, {hwtree.Group, "group"}, {hwtree.Die, "die"}, {hwtree.Package, "package"},
}

// TreeLevels returns the levels of t seen from a placement (cpus[i] is
// participant i's CPU, an OS index of t): for each level type, lowest
// first, participant i's key is its PU's lowest ancestor of that type or
// above. Types the tree lacks, levels that group the participants exactly
// as the level below (a whole-package level is then named "package") and
// levels grouping everybody into one are left out. Participants
// sharing a CPU (oversubscription) share every group.
func TreeLevels(t *hwtree.Topology, cpus cpuset.Placement) ([]LevelKeys, error) {
	pu := map[int]*hwtree.Object{}
	for _, o := range t.PUs() {
		pu[o.OSIndex] = o
	}
	ids := map[*hwtree.Object]int{}
	id := func(o *hwtree.Object) int {
		v, ok := ids[o]
		if !ok {
			v = len(ids)
			ids[o] = v
		}
		return v
	}
	var out []LevelKeys
	prev := make([]int, len(cpus))
	for i, cpu := range cpus {
		o, ok := pu[cpu]
		if !ok {
			return nil, fmt.Errorf("CPU %d is not in the topology (%s)", cpu, t.Source)
		}
		prev[i] = id(o)
	}
	for _, lt := range treeLevelTypes {
		keys := make([]int, len(cpus))
		reached := false // some participant has an ancestor of exactly this type
		for i, cpu := range cpus {
			o := pu[cpu]
			for o.Parent != nil && o.Type > lt.typ {
				o = o.Parent
			}
			reached = reached || o.Type == lt.typ
			keys[i] = id(o)
		}
		if !reached || allEqual(keys) {
			continue
		}
		if samePartition(keys, prev) {
			// The same groups under another name: keep the lower name,
			// but call a level that is a whole package "package".
			if len(out) > 0 && lt.typ == hwtree.Package {
				out[len(out)-1].Name = lt.name
			}
			continue
		}
		out = append(out, LevelKeys{Name: lt.name, Keys: keys})
		prev = keys
	}
	return out, nil
}

// samePartition reports whether a and b group indexes identically.
func samePartition(a, b []int) bool {
	ab, ba := map[int]int{}, map[int]int{}
	for i := range a {
		if v, ok := ab[a[i]]; ok && v != b[i] {
			return false
		}
		if v, ok := ba[b[i]]; ok && v != a[i] {
			return false
		}
		ab[a[i]], ba[b[i]] = b[i], a[i]
	}
	return true
}

func allEqual(a []int) bool {
	for _, v := range a {
		if v != a[0] {
			return false
		}
	}
	return true
}

// groupBy groups members (ascending) by keys[member], groups in order of
// their first member.
func groupBy(members []int, keys []int) [][]int {
	idx := map[int]int{}
	var groups [][]int
	for _, m := range members {
		g, ok := idx[keys[m]]
		if !ok {
			g = len(groups)
			idx[keys[m]] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], m)
	}
	return groups
}

func seqInts(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// LevelNames returns the names of levels joined by commas, for messages.
func LevelNames(levels []LevelKeys) string {
	names := make([]string, len(levels))
	for i, l := range levels {
		names[i] = l.Name
	}
	return strings.Join(names, ",")
}

// releaseQueue is what the default model adds to the hybrid's release: each
// level below the top releases every group through one flag that the
// group's other members spin on, so the last of them sees the refetches of
// the others (queuedFinishes' flag line); per level, the slowest group's
// delay beyond its slowest link.
func releaseQueue(levels []barriers.Level, cpus cpuset.Placement, c Costs, prm Params) float64 {
	total := 0.0
	for _, lv := range levels {
		worst := 0.0
		for _, g := range lv.Groups {
			if len(g) < 3 {
				continue
			}
			var st Stage
			sub := make([]int, len(g))
			for i, id := range g {
				sub[i] = cpus[id]
				if i > 0 {
					st = append(st, Signal{0, i})
				}
			}
			q := queuedFinishes(Pattern{st}, []lineKind{flagLine}, sub, c, prm)
			cp := Finishes(Pattern{st}, sub, c)
			worst = max(worst, slices.Max(q)-slices.Max(cp))
		}
		total += worst
	}
	return total
}
