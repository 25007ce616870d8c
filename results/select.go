package results

import (
	"fmt"
	"slices"
	"strings"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/internal/text"
)

// Selection rules (Selection.Rule) besides Measured: how a choice for n
// threads inside an allowed CPU set was made. One rule, File.Select,
// serves barriers.Auto, `barriertune show`, `export` and `plot`.
const (
	// RuleNearest: no recorded class for n fits inside the allowed CPUs (or
	// n was not measured): the best algorithm and policy of the nearest
	// measured thread count (ties go to the larger; n itself when it was
	// measured), packed onto the first n allowed CPUs in tree order.
	RuleNearest = "nearest"
	// RuleOversubscribed: more threads than allowed CPUs, not measured so
	// on them: the algorithm of the nearest count measured oversubscribed
	// (else algname.Oversubscribed, goroutine, with policy auto), threads round-robin
	// over the allowed CPUs in tree order.
	RuleOversubscribed = "oversubscribed"
)

// Selection is the one choice for n threads inside an allowed CPU set.
type Selection struct {
	Threads int `json:"threads"`
	// Spec is the barrier chosen; a hybrid's composition and level keys
	// are kept only under Measured, where its groups fit the
	// placement.
	Spec
	// CPUs is the OS CPU of each rank, inside the allowed set (repeated,
	// round-robin, when oversubscribed).
	CPUs []int `json:"cpus"`
	// MedianNs is the recorded time of this algorithm on this placement
	// class; 0 when the rule is not Measured (the class was not measured).
	MedianNs float64 `json:"median_ns"`
	// Rule is Measured, RuleNearest or RuleOversubscribed; Why says
	// it for people (which class, which count, what did not fit).
	Rule string `json:"rule"`
	Why  string `json:"why"`
	// From is the measured thread count the choice comes from (0: none).
	From int `json:"from,omitempty"`
	// Label and Config are the recorded placement class (Measured).
	Label  string `json:"label,omitempty"`
	Config string `json:"config,omitempty"`
	// Best is true when the choice is the check's best for n as recorded.
	Best bool `json:"best"`
	// Allowed is the allowed set the choice was made for (list form).
	Allowed string `json:"allowed"`
}

// Selector answers File.Select for one file, with its tree built once.
type Selector struct {
	f *File
	p *placer
}

// Selector prepares f for selections. A file without a recorded tree
// (schema v1.1 and older) is treated as a flat machine of its check's
// allowed CPUs, and only that set can be selected in.
func (f *File) Selector() (*Selector, error) {
	t := f.Machine.Tree
	if t == nil {
		t = &Tree{CPUs: f.Machine.AllowedCPUs}
		if t.CPUs == "" { // no fingerprint at all: the CPUs the file names
			var all []int
			for _, e := range f.Threads {
				if e.Best != nil && validCPUs(e.Best.CPUs) {
					all = append(all, e.Best.CPUs...)
				}
			}
			t.CPUs = cpuset.Of(all...).String()
		}
	}
	topo, err := t.Topology()
	if err != nil {
		return nil, fmt.Errorf("machine tree: %w", err)
	}
	return &Selector{f: f, p: newPlacer(topo)}, nil
}

// CPUs returns the machine's CPUs as recorded: the whole tree's, or the
// check's allowed CPUs for a file without a tree.
func (s *Selector) CPUs() cpuset.Set { return s.p.all }

// Select returns the choice for n threads inside allowed (see Selector).
func (f *File) Select(n int, allowed cpuset.Set) (Selection, error) {
	s, err := f.Selector()
	if err != nil {
		return Selection{}, err
	}
	return s.Select(n, allowed)
}

// CheckAllowed reports whether allowed can be selected in: not empty,
// inside the machine's CPUs, and, for a file without a recorded tree,
// exactly the check's allowed CPUs.
func (s *Selector) CheckAllowed(allowed cpuset.Set) error {
	switch {
	case allowed.IsEmpty():
		return fmt.Errorf("allowed CPUs: the set is empty; give CPUs of %s", s.p.all)
	case !allowed.SubsetOf(s.p.all):
		return fmt.Errorf("allowed CPUs %s: %s not in the machine the file was recorded on (its CPUs are %s)", allowed, allowed.AndNot(s.p.all), s.p.all)
	case s.f.Machine.Tree == nil && !allowed.Equal(s.p.all):
		return fmt.Errorf("allowed CPUs %s: the file records no machine tree (schema before v1.2), so only its check's CPUs %s can be used; run `barriertune check` again", allowed, s.p.all)
	}
	return nil
}

// Select returns the one choice for n threads inside allowed:
//
//  1. n at most the allowed CPUs and measured: the check's best when its
//     placement class fits inside allowed, else the fastest other
//     measurement (by median) whose class fits, on CPUs inside allowed
//     (Measured). "Fits": an automorphism of the machine's tree takes
//     the placement into allowed, so it meets the same caches, cores and
//     packages as the measured one.
//  2. n at most the allowed CPUs, no class fits or n not measured: the best
//     of the nearest measured count, on the first n allowed CPUs in tree
//     order (RuleNearest).
//  3. n above the allowed CPUs: measured round-robin on exactly these
//     CPUs, that measurement (Measured); else RuleOversubscribed.
//
// A hybrid keeps its composition only under rule 1; elsewhere its
// runner-up (or algname.Fallback) stands in, as its groups were measured
// for another placement.
func (s *Selector) Select(n int, allowed cpuset.Set) (Selection, error) {
	if n < 1 {
		return Selection{}, fmt.Errorf("thread count %d: want at least 1", n)
	}
	if err := s.CheckAllowed(allowed); err != nil {
		return Selection{}, err
	}
	size := allowed.Len()
	sel := Selection{Threads: n, Allowed: allowed.String()}
	if n > size {
		return s.oversubscribed(sel, n, allowed), nil
	}
	e := s.f.Lookup(n)
	if e != nil && e.Best != nil {
		for i, m := range s.candidates(e) {
			cpus := s.p.realize(m.CPUs, allowed)
			if cpus == nil {
				continue
			}
			sel.Algorithm, sel.Policy, sel.CPUs, sel.MedianNs = m.Algorithm, m.Policy, cpus, m.MedianNs
			sel.Rule, sel.From, sel.Label, sel.Config, sel.Best = Measured, n, m.Label, m.Config, i == 0
			sel.FanIn, sel.Composition, sel.LevelKeys = m.FanIn, m.Composition, m.LevelKeys
			switch {
			case i == 0 && slices.Equal(cpus, m.CPUs):
				sel.Why = "the check's best for " + threadsWord(n)
			case i == 0:
				sel.Why = fmt.Sprintf("the check's best for %s, placement %s moved inside the allowed CPUs", threadsWord(n), labelOr(m.Label, m.CPUs))
			default:
				sel.Why = fmt.Sprintf("the fastest measured placement class that fits the allowed CPUs (%s; the best's %s does not fit)", labelOr(m.Label, m.CPUs), labelOr(e.Best.Label, e.Best.CPUs))
			}
			return sel, nil
		}
	}
	src := s.nearest(n, func(t *Threads) bool { return !cpuset.Placement(t.Best.CPUs).Oversubscribed() })
	if src == nil {
		src = s.nearest(n, func(*Threads) bool { return true })
	}
	sel.Rule, sel.CPUs = RuleNearest, s.p.inOrder(allowed)[:n]
	if src == nil {
		sel.Algorithm, sel.Policy = algname.Fallback, "auto"
		sel.Why = "the file holds no winner: the fallback, packed on the allowed CPUs"
		return sel, nil
	}
	sel.From, sel.Policy = src.Threads, src.Best.Policy
	sel.Algorithm, sel.FanIn = portable(src.Best)
	if src.Threads == n {
		sel.Why = fmt.Sprintf("no measured placement class of %s fits the allowed CPUs: its best algorithm, packed on them", threadsWord(n))
	} else {
		sel.Why = fmt.Sprintf("%s not measured: the best of %s, the nearest measured count, packed on the allowed CPUs", threadsWord(n), threadsWord(src.Threads))
	}
	return sel, nil
}

// oversubscribed is rule 3: n threads round-robin over allowed.
func (s *Selector) oversubscribed(sel Selection, n int, allowed cpuset.Set) Selection {
	order := s.p.inOrder(allowed)
	sel.Rule = RuleOversubscribed
	sel.CPUs = make([]int, n)
	for i := range sel.CPUs {
		sel.CPUs[i] = order[i%len(order)]
	}
	if e := s.f.Lookup(n); e != nil && e.Best != nil && cpuset.Placement(e.Best.CPUs).Oversubscribed() && slices.Equal(e.Best.CPUs, sel.CPUs) {
		b := e.Best
		sel.Algorithm, sel.Policy, sel.MedianNs, sel.From, sel.Best = b.Algorithm, b.Policy, b.MedianNs, n, true
		sel.FanIn, sel.Label, sel.Composition, sel.LevelKeys = b.FanIn, b.Label, b.Composition, b.LevelKeys
		sel.Rule = Measured
		sel.Why = "the check's best for " + threadsWord(n) + ", measured round-robin on these CPUs"
		if !rebuildable(b.Algorithm, b.Composition, b.LevelKeys) {
			sel.Algorithm, sel.FanIn = portable(b)
			sel.Rule = RuleOversubscribed
			sel.MedianNs, sel.Composition, sel.LevelKeys, sel.Best = 0, "", nil, false
			sel.Why += " (a hybrid recorded without its groups: its runner-up)"
		}
		return sel
	}
	src := s.nearest(n, func(t *Threads) bool { return cpuset.Placement(t.Best.CPUs).Oversubscribed() })
	if src == nil {
		sel.Algorithm, sel.Policy = algname.Oversubscribed, "auto"
		sel.Why = "more threads than allowed CPUs and none measured so: the oversubscribed fallback, round-robin"
		return sel
	}
	sel.From, sel.Policy = src.Threads, src.Best.Policy
	sel.Algorithm, sel.FanIn = portable(src.Best)
	if sel.Algorithm == algname.Fallback && src.Best.Algorithm == algname.Hybrid {
		sel.Algorithm = algname.Oversubscribed
	}
	sel.Why = fmt.Sprintf("more threads than allowed CPUs: the best of %s measured oversubscribed, round-robin", threadsWord(src.Threads))
	return sel
}

// candidates are the measurements of e that can be moved: the best first,
// then the others by median.
func (s *Selector) candidates(e *Threads) []Measurement {
	b := e.Best
	out := []Measurement{{
		Label: b.Label, CPUs: b.CPUs, Pinned: b.Pinned,
		Summary: Summary{MedianNs: b.MedianNs},
		Spec:    b.Spec,
	}}
	if !rebuildable(b.Algorithm, b.Composition, b.LevelKeys) {
		// Recorded before level keys: the groups are lost, the runner-up
		// stands in on the best's placement.
		out[0].Algorithm, out[0].FanIn = portable(b)
		out[0].MedianNs, out[0].Composition, out[0].LevelKeys = 0, "", nil
	}
	for _, m := range e.Measurements {
		if m.Label == b.Label && slices.Equal(m.CPUs, b.CPUs) {
			out[0].Config = m.Config
		}
	}
	var rest []Measurement
	for _, m := range e.Measurements {
		if m.Dropped || m.Rejected != "" || !(m.MedianNs > 0) || len(m.CPUs) != e.Threads || cpuset.Placement(m.CPUs).Oversubscribed() || !rebuildable(m.Algorithm, m.Composition, m.LevelKeys) {
			continue
		}
		if m.Algorithm == b.Algorithm && slices.Equal(m.CPUs, b.CPUs) {
			continue
		}
		rest = append(rest, m)
	}
	slices.SortStableFunc(rest, func(a, b Measurement) int {
		switch {
		case a.MedianNs < b.MedianNs:
			return -1
		case a.MedianNs > b.MedianNs:
			return 1
		}
		return 0
	})
	return append(out, rest...)
}

// nearest is the entry with a best nearest to n among those ok accepts
// (ties go to the larger count), or nil.
func (s *Selector) nearest(n int, ok func(*Threads) bool) *Threads {
	var best *Threads
	for i := range s.f.Threads {
		t := &s.f.Threads[i]
		if t.Best == nil || !ok(t) {
			continue
		}
		if best == nil || abs(t.Threads-n) < abs(best.Threads-n) || abs(t.Threads-n) == abs(best.Threads-n) && t.Threads > best.Threads {
			best = t
		}
	}
	return best
}

// portable is the algorithm and fan-in of b for another placement or
// count: a hybrid's groups do not carry over, so its runner-up stands in.
func portable(b *Choice) (string, int) {
	if b.Algorithm != algname.Hybrid {
		return b.Algorithm, b.FanIn
	}
	if b.RunnerUp != "" && b.RunnerUp != algname.Hybrid {
		return b.RunnerUp, 0
	}
	return algname.Fallback, 0
}

// rebuildable reports whether a recorded barrier can be built again: a
// hybrid of several levels needs its level keys.
func rebuildable(alg, composition string, keys [][]int) bool {
	return alg != algname.Hybrid || len(keys) > 0 || !strings.Contains(composition, ",")
}

func threadsWord(n int) string { return text.Plural(n, "thread") }

// labelOr names a placement: its label, else its CPUs.
func labelOr(label string, cpus cpuset.Placement) string {
	if label != "" {
		return label
	}
	if !validCPUs(cpus) {
		return fmt.Sprint(cpus)
	}
	return cpuset.Of(cpus...).String()
}

// validCPUs reports whether every CPU index is one a cpuset holds.
func validCPUs(cpus cpuset.Placement) bool {
	for _, c := range cpus {
		if c < 0 || c > cpuset.MaxCPU {
			return false
		}
	}
	return true
}
