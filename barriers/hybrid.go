package barriers

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/internal/algname"
)

// Level is one level of a hierarchical (hybrid) barrier: the participants
// of each group synchronise with Algorithm (and FanIn, for the tree
// algorithms); the first id of each group is its representative, which
// alone goes on to the next level, and which releases the group again
// once the level above has completed.
type Level struct {
	// Name labels the level in the composition string, e.g. "core",
	// "l3", "package" (empty: "level<i>").
	Name string
	// Algorithm is a catalog name (not algname.Hybrid); empty means
	// algname.Dissemination.
	Algorithm string
	// FanIn is the tree algorithms' fan-in; 0 means the default (4).
	FanIn int
	// Groups partition the participants of this level: at the lowest
	// level, the ids 0..n-1; at every higher level, the representatives
	// (first ids) of the groups of the level below. Hierarchy.Grouped
	// builds them from per-participant group keys.
	Groups [][]int
}

// label returns the level's algorithm as written in a composition string:
// the name (algname), or name(fan-in) where a fan-in was set, e.g.
// combining(8).
func (l Level) label() string {
	a := l.Algorithm
	if a == "" {
		a = algname.Dissemination
	}
	if l.FanIn > 0 {
		return a + "(" + strconv.Itoa(l.FanIn) + ")"
	}
	return a
}

// Hierarchy is the hybrid barrier's levels, lowest first (WithHierarchy).
// Its string form, "core:dissemination,l3:combining(4),package:dissemination",
// is what results files record and ParseHierarchy reads.
type Hierarchy []Level

// String writes the levels as "core:dissemination,l3:combining(4),package:dissemination",
// lowest level first, the form recorded in results files and printed by the
// model.
func (h Hierarchy) String() string {
	parts := make([]string, len(h))
	for i, l := range h {
		name := l.Name
		if name == "" {
			name = "level" + strconv.Itoa(i)
		}
		parts[i] = name + ":" + l.label()
	}
	return strings.Join(parts, ",")
}

// ParseHierarchy reads a composition string (see Hierarchy.String) into
// levels without groups; Hierarchy.Grouped adds them.
func ParseHierarchy(s string) (Hierarchy, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty hybrid composition (want e.g. core:%s,package:%s(4))", algname.Dissemination, algname.Combining)
	}
	var out Hierarchy
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		name, alg, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("hybrid level %q has no algorithm (want NAME:ALGORITHM or NAME:ALGORITHM(FANIN))", part)
		}
		l := Level{Name: name, Algorithm: alg}
		if i := strings.IndexByte(alg, '('); i >= 0 {
			if !strings.HasSuffix(alg, ")") {
				return nil, fmt.Errorf("hybrid level %q: unclosed fan-in (want ALGORITHM(FANIN))", part)
			}
			k, err := strconv.Atoi(alg[i+1 : len(alg)-1])
			if err != nil || k < 2 {
				return nil, fmt.Errorf("hybrid level %q: fan-in %q is not an integer >= 2", part, alg[i+1:len(alg)-1])
			}
			l.Algorithm, l.FanIn = alg[:i], k
		}
		if err := checkLevelAlgorithm(l.Algorithm); err != nil {
			return nil, fmt.Errorf("hybrid level %q: %w", part, err)
		}
		out = append(out, l)
	}
	return out, nil
}

func checkLevelAlgorithm(name string) error {
	if name == "" {
		return nil
	}
	if name == algname.Hybrid {
		return fmt.Errorf("a hybrid level cannot itself be %q (accepted: the flat algorithms)", name)
	}
	_, err := Lookup(name)
	return err
}

// Grouped returns the levels of h with their groups: keys[l][i] is the
// group (e.g. the core, L3 or package index) of participant i at level l,
// so len(keys) must equal len(h) and every keys[l] has one entry per
// participant. At level l the representatives of level l-1 (the lowest id
// of each group) are grouped by their key. Keys need not nest: a level
// groups whatever representatives share a key, so any placement works.
func (h Hierarchy) Grouped(keys [][]int) (Hierarchy, error) {
	specs := h
	if len(specs) != len(keys) {
		return nil, fmt.Errorf("hybrid: %d levels but %d key rows (want one row per level)", len(specs), len(keys))
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("hybrid: no levels (want at least one)")
	}
	n := len(keys[0])
	if n < 1 || n > MaxParticipants {
		return nil, fmt.Errorf("hybrid: %d participants (accepted: 1..%d)", n, MaxParticipants)
	}
	members := make([]int, n)
	for i := range members {
		members[i] = i
	}
	out := make(Hierarchy, len(specs))
	for l, spec := range specs {
		if len(keys[l]) != n {
			return nil, fmt.Errorf("hybrid: key row %d has %d entries, want %d (one per participant)", l, len(keys[l]), n)
		}
		byKey := map[int]int{} // key -> group index
		var groups [][]int
		for _, id := range members { // members ascending, so each group is too
			k := keys[l][id]
			g, ok := byKey[k]
			if !ok {
				g = len(groups)
				byKey[k] = g
				groups = append(groups, nil)
			}
			groups[g] = append(groups[g], id)
		}
		spec.Groups = groups
		out[l] = spec
		members = members[:0:0]
		for _, g := range groups {
			members = append(members, g[0])
		}
	}
	return out, nil
}

// Keys is the inverse of Grouped: for levels over n participants
// (validated as WithHierarchy's), row l gives every participant the index
// of the group at level l it is under (its own group, or the group of the
// representative that goes up for it), so that the levels' Grouped(keys)
// rebuilds the same groups. Results files store these rows beside the
// composition string.
func (h Hierarchy) Keys(n int) ([][]int, error) {
	levels := []Level(h)
	if n < 1 || n > MaxParticipants {
		return nil, fmt.Errorf("hybrid: %d participants (accepted: 1..%d)", n, MaxParticipants)
	}
	if len(levels) == 0 {
		return nil, fmt.Errorf("hybrid: no levels (want at least one)")
	}
	if err := validateLevels(levels, n); err != nil {
		return nil, err
	}
	rep := make([]int, n) // the participant that stands for i at this level
	for i := range rep {
		rep[i] = i
	}
	keys := make([][]int, len(levels))
	group := make([]int, n)
	for l, lv := range levels {
		for gi, g := range lv.Groups {
			for _, id := range g {
				group[id] = gi
			}
		}
		keys[l] = make([]int, n)
		for i := range rep {
			gi := group[rep[i]]
			keys[l][i] = gi
			rep[i] = lv.Groups[gi][0]
		}
	}
	return keys, nil
}

// WithHierarchy makes the hybrid barrier compose levels (lowest first). The
// other algorithms ignore it. Without it the hybrid is one flat
// dissemination level over all participants.
func WithHierarchy(levels Hierarchy) Option {
	return func(c *config) { c.hierarchy = levels }
}

// hybrid is the hierarchical barrier: per level, each group runs a flat
// barrier of the catalog among its members; the group's representative
// (its first id) then goes up a level. The top group's barrier completes
// the arrival. Release goes down with one flag per group: a representative,
// once released from the level above, sets the flags of the groups it
// represents, highest first; the other members await their group's flag.
type hybrid struct {
	base
	levels Hierarchy
	// paths[id] lists participant id's steps, lowest level first: at
	// every step but the last it is its group's representative.
	paths [][]hybridStep
	subs  []Barrier // every sub-barrier, for Break and Reset
	flags []flag    // release flags, one per group below the top with 2+ members
}

type hybridStep struct {
	sub     Barrier // nil for a group of one
	pos     int     // this participant's id within sub
	release *flag   // the group's release flag; nil at the top or for a group of one
}

// newHybrid returns the hierarchical barrier described by WithHierarchy
// (without it: flat dissemination).
func newHybrid(n int, opts ...Option) (Barrier, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if n < 1 {
		return nil, fmt.Errorf("a barrier needs at least 1 participant, got %d", n)
	}
	if n > MaxParticipants {
		return nil, fmt.Errorf("hybrid: %d participants (accepted: 1..%d)", n, MaxParticipants)
	}
	levels := c.hierarchy
	if len(levels) == 0 {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		levels = []Level{{Name: "flat", Algorithm: algname.Dissemination, Groups: [][]int{all}}}
	}
	if err := validateLevels(levels, n); err != nil {
		return nil, err
	}
	// A hierarchy whose highest level still has several groups gets a
	// dissemination level over their representatives.
	if top := levels[len(levels)-1]; len(top.Groups) > 1 {
		reps := make([]int, len(top.Groups))
		for i, g := range top.Groups {
			reps[i] = g[0]
		}
		levels = append(slices.Clone(levels), Level{Name: "top", Algorithm: algname.Dissemination, Groups: [][]int{reps}})
	}
	b, err := newBase(n, opts)
	if err != nil {
		return nil, err
	}
	h := alone[hybrid]()
	*h = hybrid{base: b, levels: levels, paths: aloneSlice[[]hybridStep](n)}
	nflags := 0
	for _, lv := range levels[:len(levels)-1] {
		for _, g := range lv.Groups {
			if len(g) > 1 {
				nflags++
			}
		}
	}
	h.flags = h.newFlags(nflags)
	next := 0
	for l, lv := range levels {
		for _, g := range lv.Groups {
			var sub Barrier
			var rel *flag
			if len(g) > 1 {
				// Sub-barriers wait as the whole barrier does: the policy
				// is resolved for all n participants, not the group.
				sopts := []Option{WithPolicy(b.w.policy), WithSpinBudget(b.w.budget)}
				if lv.FanIn > 0 {
					sopts = append(sopts, WithFanIn(lv.FanIn))
				}
				alg := lv.Algorithm
				if alg == "" {
					alg = algname.Dissemination
				}
				sub, err = New(alg, len(g), sopts...)
				if err != nil {
					return nil, fmt.Errorf("hybrid level %d (%s): %w", l, lv.label(), err)
				}
				h.subs = append(h.subs, sub)
				if l < len(levels)-1 {
					rel = &h.flags[next]
					next++
				}
			}
			for pos, id := range g {
				h.paths[id] = append(h.paths[id], hybridStep{sub: sub, pos: pos, release: rel})
			}
		}
	}
	for id, path := range h.paths { // each read on every episode of id
		h.paths[id] = aloneSlice[hybridStep](len(path))
		copy(h.paths[id], path)
	}
	return h, nil
}

// validateLevels checks that level 0 partitions 0..n-1, that every higher
// level partitions the representatives of the one below, and the
// algorithms; the error names the first offending level and id.
func validateLevels(levels []Level, n int) error {
	members := make([]bool, n) // the ids expected at this level
	for i := range members {
		members[i] = true
	}
	want := n
	for l, lv := range levels {
		if err := checkLevelAlgorithm(lv.Algorithm); err != nil {
			return fmt.Errorf("hybrid level %d: %w", l, err)
		}
		if lv.FanIn != 0 && lv.FanIn < 2 {
			return fmt.Errorf("hybrid level %d: fan-in %d is too small (want 0 for the default, or 2 or more)", l, lv.FanIn)
		}
		seen := make([]bool, n)
		got := 0
		for gi, g := range lv.Groups {
			if len(g) == 0 {
				return fmt.Errorf("hybrid level %d: group %d is empty (want at least one participant)", l, gi)
			}
			for _, id := range g {
				if id < 0 || id >= n {
					return fmt.Errorf("hybrid level %d: participant %d out of range (accepted: 0..%d)", l, id, n-1)
				}
				if !members[id] {
					return fmt.Errorf("hybrid level %d: participant %d is not a representative of level %d (only each group's first id goes up)", l, id, l-1)
				}
				if seen[id] {
					return fmt.Errorf("hybrid level %d: participant %d is in two groups (groups must partition the level)", l, id)
				}
				seen[id] = true
				got++
			}
		}
		if got != want {
			return fmt.Errorf("hybrid level %d: groups hold %d of the level's %d participants (groups must partition the level)", l, got, want)
		}
		clear(members)
		for _, g := range lv.Groups {
			members[g[0]] = true
		}
		want = len(lv.Groups)
	}
	return nil
}

// episode runs one episode for id; false when the barrier broke. A
// sub-barrier that breaks breaks the whole hybrid, so participants waiting
// at other levels or groups leave too.
func (h *hybrid) episode(id int) bool {
	e := h.next(id)
	if e == 0 {
		return false
	}
	path := h.paths[id]
	for _, s := range path {
		if s.sub != nil && s.sub.WaitContext(context.Background(), s.pos) != nil {
			h.Break()
			return false
		}
	}
	last := len(path) - 1
	if r := path[last].release; r != nil && !r.await(e, &h.w) {
		return false
	}
	for i := last - 1; i >= 0; i-- {
		if r := path[i].release; r != nil {
			r.set(e, &h.w)
		}
	}
	return true
}

// Wait implements Barrier.
func (h *hybrid) Wait(id int) { h.done(h.episode(id), id) }

// WaitContext implements Barrier.
func (h *hybrid) WaitContext(ctx context.Context, id int) error {
	return h.waitContext(ctx, h, id, ctx.Done() == nil && h.episode(id))
}

// Composition returns the levels the barrier runs, as Hierarchy.String writes
// them ("flat:dissemination" without WithHierarchy; a "top" level where the
// highest given level left several groups).
func (h *hybrid) Composition() string { return Hierarchy(h.levels).String() }

// Break implements Barrier: it breaks the release flags and every
// sub-barrier.
func (h *hybrid) Break() {
	h.base.Break()
	for _, s := range h.subs {
		s.Break()
	}
}

// Reset implements Barrier; nobody may be waiting.
func (h *hybrid) Reset() {
	for _, s := range h.subs {
		s.Reset()
	}
	h.base.Reset()
}
