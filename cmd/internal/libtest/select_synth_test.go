package libtest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/check"
	"github.com/barriertune/barriertune/cmd/internal/configsets"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/results"
)

// synthFile records, on the synthetic machine spec, every exact placement
// class of each thread count in counts with each of algs, at medians drawn
// from seed; the best of each count is its fastest measurement.
func synthFile(t *testing.T, spec string, counts []int, algs []string, seed uint64) (*results.File, *hwtree.Topology) {
	t.Helper()
	topo, err := hwtree.FromSynthetic(spec)
	if err != nil {
		t.Fatal(err)
	}
	f := &results.File{Schema: results.Schema, Machine: check.CurrentMachine(topo)}
	rng := rand.New(rand.NewPCG(seed, 7))
	for _, n := range counts {
		sets, err := configsets.Enumerate(topo, n, configsets.Exact)
		if err != nil {
			t.Fatal(err)
		}
		e := results.Threads{Threads: n, Source: results.Measured, Complete: true}
		for set := range sets {
			for _, a := range algs {
				e.Measurements = append(e.Measurements, results.Measurement{
					Label: set.Config, Config: set.Config, CPUs: set.CPUs, Pinned: true,
					Summary: results.Summary{MedianNs: 100 + float64(rng.IntN(10000))/10},
					Spec:    results.Spec{Algorithm: a, Policy: "spin"},
				})
			}
		}
		b := e.Measurements[0]
		for _, m := range e.Measurements {
			if m.MedianNs < b.MedianNs {
				b = m
			}
		}
		e.Best = &results.Choice{CPUs: b.CPUs, Label: b.Label, Pinned: true, MedianNs: b.MedianNs, Spec: results.Spec{Algorithm: b.Algorithm, Policy: b.Policy}}
		f.Threads = append(f.Threads, e)
	}
	return f, topo
}

// marked is the canonical form of topo with each CPU of cpus labelled by
// its rank: two placements have equal forms exactly when an automorphism
// of the tree takes one onto the other, rank by rank. A plain form (every
// rank the same label) compares classes regardless of rank order.
func marked(topo *hwtree.Topology, cpus []int, ranked bool) string {
	rank := map[int]int{}
	for i, c := range cpus {
		rank[c] = i
		if !ranked {
			rank[c] = 0
		}
	}
	var rec func(o *hwtree.Object) string
	rec = func(o *hwtree.Object) string {
		if o.Type == hwtree.PU {
			if r, ok := rank[o.OSIndex]; ok {
				return fmt.Sprintf("PU#%d", r)
			}
			return "PU"
		}
		var kids []string
		for _, c := range o.Children {
			kids = append(kids, rec(c))
		}
		sort.Strings(kids)
		return o.Type.String() + "(" + strings.Join(kids, ",") + ")"
	}
	return rec(topo.Root)
}

// fitsBrute reports whether some n CPUs of allowed have cpus's class, by
// trying every n-subset of allowed.
func fitsBrute(topo *hwtree.Topology, cpus []int, allowed []int) bool {
	want := marked(topo, cpus, false)
	n := len(cpus)
	pick := make([]int, 0, n)
	var rec func(i int) bool
	rec = func(i int) bool {
		if len(pick) == n {
			return marked(topo, pick, false) == want
		}
		for j := i; j <= len(allowed)-(n-len(pick)); j++ {
			pick = append(pick, allowed[j])
			if rec(j + 1) {
				return true
			}
			pick = pick[:len(pick)-1]
		}
		return false
	}
	return rec(0)
}

// subsets are allowed sets to select in: one package, one L3, one core
// and a few random ones (at most 12 CPUs, for the brute force).
func subsets(topo *hwtree.Topology, seed uint64) map[string]cpuset.Set {
	out := map[string]cpuset.Set{}
	for _, typ := range []hwtree.Type{hwtree.Package, hwtree.L3Cache, hwtree.Core} {
		if objs := topo.Objects(typ); len(objs) > 0 {
			out["one "+typ.String()] = objs[len(objs)-1].CPUSet // the last: not where the check's CPUs start
		}
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	all := topo.CPUs()
	for i := 0; i < 6; i++ {
		k := 1 + rng.IntN(min(12, len(all)))
		perm := rng.Perm(len(all))[:k]
		var cpus []int
		for _, p := range perm {
			cpus = append(cpus, all[p])
		}
		out[fmt.Sprintf("random %d", i)] = cpuset.Of(cpus...)
	}
	return out
}

// TestSelectFastestClassInsideSubsets: on synthetic machines, every
// subset's choice is the fastest recorded measurement whose class a brute
// force finds inside the subset, on CPUs inside it with the measured
// placement's rank structure; the whole machine's is the check's best,
// unchanged.
func TestSelectFastestClassInsideSubsets(t *testing.T) {
	for _, spec := range []string{"pack:2 l3:2 core:4 pu:2", "pack:1 l3:2 core:2 pu:2", "pack:2 core:3 pu:1"} {
		t.Run(spec, func(t *testing.T) {
			f, topo := synthFile(t, spec, []int{1, 2, 3, 4}, []string{"central", "dissemination", "mcs"}, 1)
			sel, err := f.Selector()
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{1, 2, 3, 4} {
				e := f.Lookup(n)
				whole, err := sel.Select(n, topo.Allowed())
				if err != nil {
					t.Fatal(err)
				}
				if whole.Rule != results.Measured || !whole.Best || whole.Algorithm != e.Best.Algorithm || !slices.Equal(whole.CPUs, e.Best.CPUs) || whole.MedianNs != e.Best.MedianNs {
					t.Errorf("%d threads on the whole machine: %+v, want the best %+v unchanged", n, whole, e.Best)
				}
				ms := slices.Clone(e.Measurements)
				slices.SortStableFunc(ms, func(a, b results.Measurement) int { return int(a.MedianNs*10 - b.MedianNs*10) })
				for name, s := range subsets(topo, uint64(n)) {
					got, err := sel.Select(n, s)
					if err != nil {
						t.Fatalf("%d threads in %s (%s): %v", n, name, s, err)
					}
					if n > s.Len() {
						if got.Rule != results.RuleOversubscribed || len(got.CPUs) != n || !cpuset.Of(got.CPUs...).Equal(s) {
							t.Errorf("%d threads in %s (%s): %+v, want round-robin over it", n, name, s, got)
						}
						continue
					}
					if !cpuset.Of(got.CPUs...).SubsetOf(s) || len(got.CPUs) != n || !cpuset.Of(got.CPUs...).Equal(cpuset.Of(got.CPUs...)) {
						t.Fatalf("%d threads in %s (%s): CPUs %v not %d distinct CPUs inside it", n, name, s, got.CPUs, n)
					}
					var want *results.Measurement
					if fitsBrute(topo, e.Best.CPUs, s.Members()) {
						want = &results.Measurement{CPUs: e.Best.CPUs, Summary: results.Summary{MedianNs: e.Best.MedianNs}, Spec: results.Spec{Algorithm: e.Best.Algorithm}}
					} else {
						for i := range ms {
							if fitsBrute(topo, ms[i].CPUs, s.Members()) {
								want = &ms[i]
								break
							}
						}
					}
					if want == nil {
						t.Fatalf("%d threads in %s: no class fits, but %d CPUs hold some class", n, name, s.Len())
					}
					if got.Rule != results.Measured || got.Algorithm != want.Algorithm || got.MedianNs != want.MedianNs {
						t.Errorf("%d threads in %s (%s): %s %s %.1f ns, want %s %.1f ns", n, name, s, got.Rule, got.Algorithm, got.MedianNs, want.Algorithm, want.MedianNs)
						continue
					}
					if marked(topo, got.CPUs, true) != marked(topo, want.CPUs, true) {
						t.Errorf("%d threads in %s: CPUs %v are not the measured %v moved by a symmetry of the tree", n, name, got.CPUs, want.CPUs)
					}
				}
			}
		})
	}
}

// TestSelectNearestAndOversubscribed: counts not measured take the
// nearest measured count's best packed on the allowed CPUs; counts above
// the allowed CPUs go round-robin.
func TestSelectNearestAndOversubscribed(t *testing.T) {
	f, topo := synthFile(t, "pack:2 l3:2 core:4 pu:2", []int{2, 8}, []string{"central", "mcs"}, 3)
	core := topo.Objects(hwtree.Core)[5].CPUSet
	for n, want := range map[int]int{1: 2, 5: 8, 6: 8, 4: 2} {
		got, err := f.Select(n, topo.Allowed())
		if err != nil {
			t.Fatal(err)
		}
		if got.Rule != results.RuleNearest || got.From != want || got.Algorithm != f.Lookup(want).Best.Algorithm || got.MedianNs != 0 {
			t.Errorf("%d threads: %+v, want the best of %d", n, got, want)
		}
		order := topo.CPUs()[:n]
		if !slices.Equal(got.CPUs, order) {
			t.Errorf("%d threads packed on %v, want the first %d in tree order %v", n, got.CPUs, n, order)
		}
	}
	got, err := f.Select(5, core)
	if err != nil {
		t.Fatal(err)
	}
	c := core.Members()
	if got.Rule != results.RuleOversubscribed || !slices.Equal(got.CPUs, []int{c[0], c[1], c[0], c[1], c[0]}) || got.Algorithm != algname.Oversubscribed || got.Policy != "auto" {
		t.Errorf("5 threads on one core: %+v, want the goroutine barrier round-robin", got)
	}
	for _, bad := range []cpuset.Set{{}, cpuset.Of(32), cpuset.Of(0, 99)} {
		if _, err := f.Select(2, bad); err == nil || !strings.Contains(err.Error(), "allowed CPUs") {
			t.Errorf("allowed %q: %v, want an error naming it", bad, err)
		}
	}
}

// TestSelectorRecordsWholeTreeFromRestrictedCheck: a check run on part of
// a machine records the whole tree, says what it could not measure, and a
// job allowed other CPUs of the machine gets a choice inside them.
func TestSelectorRecordsWholeTreeFromRestrictedCheck(t *testing.T) {
	topo, err := hwtree.FromSynthetic("pack:2 l3:2 core:4 pu:2")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := synthFile(t, "pack:2 l3:2 core:4 pu:2", []int{2}, []string{"central"}, 5)
	if f.Machine.Tree.CPUs != "0-31" || len(f.Machine.Tree.Levels) != 3 || f.Machine.Unmeasured != "" {
		t.Fatalf("tree %+v, unmeasured %q", f.Machine.Tree, f.Machine.Unmeasured)
	}
	part, _ := hwtree.FromSynthetic("pack:2 l3:2 core:4 pu:2")
	if err := part.Restrict(cpuset.Range(0, 7)); err != nil {
		t.Fatal(err)
	}
	m := check.MachineOn(part, topo)
	if m.Tree.CPUs != "0-31" || m.AllowedCPUs != "0-7" || m.TopologyHash != f.Machine.TopologyHash {
		t.Errorf("restricted check records %+v, want the whole tree", m)
	}
	for _, w := range []string{"8 of 32 PUs", "1 of 2 Packages", "1 of 4 L3Caches"} {
		if !strings.Contains(m.Unmeasured, w) {
			t.Errorf("unmeasured %q does not say %q", m.Unmeasured, w)
		}
	}
	if why := f.Machine.Mismatch(hostMachine("8-15")); why != "" {
		t.Errorf("a job allowed 8-15 on the same machine: %q", why)
	}
	if why := f.Machine.Mismatch(hostMachine("30-40")); !strings.Contains(why, "30-40") {
		t.Errorf("a job allowed CPUs outside the machine: %q", why)
	}
}

// TestSelectMeasuredOversubscribed: a count above the allowed CPUs that
// the check measured round-robin on exactly them (formerly twice and four
// times the CPUs) is served by that measurement, rule measured; a count
// between measured ones, or on other CPUs, stays rule oversubscribed,
// from the nearest count measured so.
func TestSelectMeasuredOversubscribed(t *testing.T) {
	f, topo := synthFile(t, "pack:1 core:2 pu:1", []int{2}, []string{"central"}, 3)
	for _, n := range []int{4, 8} {
		rr := make([]int, n)
		for i := range rr {
			rr[i] = i % 2
		}
		e := results.Threads{Threads: n, Source: results.Measured, Complete: true}
		e.Measurements = []results.Measurement{{Label: "oversubscribed round-robin", CPUs: rr, Summary: results.Summary{MedianNs: 100 * float64(n)}, Spec: results.Spec{Algorithm: "goroutine", Policy: "auto"}},
			{Label: "oversubscribed round-robin", CPUs: rr, Summary: results.Summary{MedianNs: 150 * float64(n)}, Spec: results.Spec{Algorithm: "cond", Policy: "auto"}}}
		e.Best = &results.Choice{CPUs: rr, Label: e.Measurements[0].Label, MedianNs: 100 * float64(n), Spec: results.Spec{Algorithm: "goroutine", Policy: "auto"}}
		f.Threads = append(f.Threads, e)
	}
	for _, n := range []int{4, 8} {
		got, err := f.Select(n, topo.Allowed())
		if err != nil {
			t.Fatal(err)
		}
		if got.Rule != results.Measured || !got.Best || got.From != n || got.Algorithm != "goroutine" || got.MedianNs != 100*float64(n) || len(got.CPUs) != n {
			t.Errorf("%d threads on 2 CPUs: %+v, want the measured goroutine barrier, rule measured", n, got)
		}
	}
	got, err := f.Select(6, topo.Allowed())
	if err != nil {
		t.Fatal(err)
	}
	if got.Rule != results.RuleOversubscribed || got.From != 8 || got.MedianNs != 0 {
		t.Errorf("6 threads on 2 CPUs: %+v, want rule oversubscribed from 8", got)
	}
	got, err = f.Select(4, cpuset.Of(1))
	if err != nil {
		t.Fatal(err)
	}
	if got.Rule != results.RuleOversubscribed || got.MedianNs != 0 {
		t.Errorf("4 threads on CPU 1: %+v, want rule oversubscribed (measured on 2 CPUs)", got)
	}
}

// TestSelectSkipsRejected: a measurement the check rejected (an
// impossible time a repeat did not confirm) is never chosen inside a
// subset, however fast it reads; the next fitting one is.
func TestSelectSkipsRejected(t *testing.T) {
	f, topo := synthFile(t, "pack:2 l3:2 core:4 pu:2", []int{2, 4}, []string{"central", "dissemination", "mcs"}, 5)
	checked := 0
	for _, n := range []int{2, 4} {
		e := f.Lookup(n)
		for name, s := range subsets(topo, uint64(n)) {
			if n > s.Len() || fitsBrute(topo, e.Best.CPUs, s.Members()) {
				continue
			}
			var fit []int
			for i, m := range e.Measurements {
				if fitsBrute(topo, m.CPUs, s.Members()) {
					fit = append(fit, i)
				}
			}
			if len(fit) < 2 {
				continue
			}
			g := *f
			g.Threads = slices.Clone(f.Threads)
			ge := g.Lookup(n)
			ge.Measurements = slices.Clone(e.Measurements)
			bad := &ge.Measurements[fit[0]]
			bad.MedianNs, bad.Rejected = 0.5, "below 0.8x its floor, not confirmed"
			sel, err := g.Selector()
			if err != nil {
				t.Fatal(err)
			}
			got, err := sel.Select(n, s)
			if err != nil {
				t.Fatal(err)
			}
			if got.MedianNs == 0.5 {
				t.Errorf("%d threads in %s: chose the rejected %s at 0.5 ns", n, name, got.Algorithm)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no subset exercised the rejected measurement")
	}
}

// hostMachine is this machine's light fingerprint (results.HereFinder's)
// for the allowed CPUs given.
func hostMachine(allowed string) results.Machine {
	fd, _ := results.HereFinder()
	m := fd.Host
	m.AllowedCPUs = allowed
	return m
}
