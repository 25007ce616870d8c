package barriers

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/results"
)

// treeKeys returns, for n participants placed on a synthetic machine of
// packages × l3s × cores × smt PUs, each participant's core, L3 and package
// index. Compact placement fills PU after PU; scatter deals participants
// round-robin over packages first. Participants beyond the PUs wrap around,
// so n need not match the tree.
func treeKeys(n, packages, l3s, cores, smt int, scatter bool) [][]int {
	pus := packages * l3s * cores * smt
	keys := [][]int{make([]int, n), make([]int, n), make([]int, n)}
	for i := 0; i < n; i++ {
		pu := i % pus
		if scatter {
			// the i-th participant goes to package i mod packages
			per := pus / packages
			pu = (i%packages)*per + (i/packages)%per
		}
		keys[0][i] = pu / smt
		keys[1][i] = pu / (smt * cores)
		keys[2][i] = pu / (smt * cores * l3s)
	}
	return keys
}

func hybridOf(t *testing.T, n int, comp string, keys [][]int, opts ...Option) Barrier {
	t.Helper()
	specs, err := ParseHierarchy(comp)
	if err != nil {
		t.Fatal(err)
	}
	levels, err := Hierarchy(specs).Grouped(keys)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New("hybrid", n, append(opts, WithHierarchy(levels))...)
	if err != nil {
		t.Fatal(err)
	}
	if b.N() != n {
		t.Fatalf("N() = %d, want %d", b.N(), n)
	}
	return b
}

// TestHybridStress runs the hybrid over hierarchies that do and do not
// match n: uneven groups, groups of one, wrap-around placements, every
// flat algorithm at some level.
func TestHybridStress(t *testing.T) {
	comps := []string{
		"core:dissemination,l3:combining(4),package:dissemination",
		"core:central,l3:static-tree(2),package:tournament",
		"core:mcs,l3:all-static-tree(3),package:butterfly",
		"core:pairwise,l3:binomial,package:central",
		"core:dissemination,l3:cond,package:channel",
	}
	machines := []struct{ p, l3, c, smt int }{{2, 2, 4, 2}, {1, 3, 3, 1}, {3, 1, 2, 2}}
	for ci, comp := range comps {
		for _, m := range machines {
			for _, n := range []int{1, 2, 3, 5, 7, 12, 17, 33} {
				for _, scatter := range []bool{false, true} {
					name := fmt.Sprintf("c%d/%dx%dx%dx%d/n=%d/scatter=%v", ci, m.p, m.l3, m.c, m.smt, n, scatter)
					t.Run(name, func(t *testing.T) {
						b := hybridOf(t, n, comp, treeKeys(n, m.p, m.l3, m.c, m.smt, scatter))
						eps := episodes(t, n) / 4
						if eps < 10 {
							eps = 10
						}
						checkBarrier(t, b, n, eps, int64(n*7+ci))
					})
				}
			}
		}
	}
}

// TestHybridPolicies runs a three-level hybrid under each explicit policy.
func TestHybridPolicies(t *testing.T) {
	for _, p := range []Policy{Spin, Yield, Park} {
		for _, n := range []int{4, 9, 17} {
			if p == Spin && osal.Oversubscribed(n) {
				continue
			}
			t.Run(fmt.Sprintf("%s/n=%d", p, n), func(t *testing.T) {
				b := hybridOf(t, n, "core:dissemination,l3:combining(2),package:dissemination",
					treeKeys(n, 2, 2, 2, 2, false), WithPolicy(p), WithSpinBudget(8))
				checkBarrier(t, b, n, episodes(t, n), 5)
			})
		}
	}
}

func TestHierarchyGrouped(t *testing.T) {
	specs := []Level{{Name: "core"}, {Name: "pkg", Algorithm: "central"}}
	// participants 0..5; cores {0,3}, {1,4}, {2}, {5}; packages: core
	// representatives 0,1 in package 7, 2 and 5 in package 8.
	keys := [][]int{{10, 11, 12, 10, 11, 13}, {7, 7, 8, 7, 7, 8}}
	got, err := Hierarchy(specs).Grouped(keys)
	if err != nil {
		t.Fatal(err)
	}
	want := Hierarchy{
		{Name: "core", Groups: [][]int{{0, 3}, {1, 4}, {2}, {5}}},
		{Name: "pkg", Algorithm: "central", Groups: [][]int{{0, 1}, {2, 5}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Grouped = %+v, want %+v", got, want)
	}
	if _, err := Hierarchy(specs).Grouped(keys[:1]); err == nil {
		t.Error("one key row for two levels accepted")
	}
	if _, err := Hierarchy(specs).Grouped([][]int{{1, 2}, {1}}); err == nil || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("ragged keys: %v", err)
	}
}

func TestCompositionRoundTrip(t *testing.T) {
	for _, s := range []string{
		"core:dissemination,l3:combining(4),package:dissemination",
		"flat:central",
		"a:mcs(8),b:static-tree(2)",
	} {
		ls, err := ParseHierarchy(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if back := Hierarchy(ls).String(); back != s {
			t.Errorf("Hierarchy(ParseHierarchy(%q)).String() = %q", s, back)
		}
	}
	if got := Hierarchy([]Level{{}, {Algorithm: "central", FanIn: 3}}).String(); got != "level0:dissemination,level1:central(3)" {
		t.Errorf("Composition defaults = %q", got)
	}
	for s, want := range map[string]string{
		"":                  "empty",
		"core":              "no algorithm",
		"core:fastest":      `"fastest"`,
		"core:hybrid":       "cannot itself",
		"core:combining(1)": "fan-in",
		"core:combining(x)": "fan-in",
		"core:combining(4":  "unclosed",
	} {
		if _, err := ParseHierarchy(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseHierarchy(%q) error = %v, want it to mention %q", s, err, want)
		}
	}
}

func TestHybridValidation(t *testing.T) {
	cases := []struct {
		n      int
		levels []Level
		want   string
	}{
		{3, []Level{{Groups: [][]int{{0, 1}}}}, "2 of the level's 3"},
		{3, []Level{{Groups: [][]int{{0, 1}, {1, 2}}}}, "two groups"},
		{3, []Level{{Groups: [][]int{{0, 1, 3}}}}, "out of range"},
		{3, []Level{{Groups: [][]int{{0}, {}, {1, 2}}}}, "empty"},
		{4, []Level{{Groups: [][]int{{0, 1}, {2, 3}}}, {Groups: [][]int{{0, 3}}}}, "not a representative"},
		{2, []Level{{Algorithm: "hybrid", Groups: [][]int{{0, 1}}}}, "cannot itself"},
		{2, []Level{{Algorithm: "nope", Groups: [][]int{{0, 1}}}}, `"nope"`},
		{2, []Level{{FanIn: 1, Groups: [][]int{{0, 1}}}}, "fan-in 1"},
	}
	for i, c := range cases {
		if _, err := newHybrid(c.n, WithHierarchy(c.levels)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %d: error = %v, want it to mention %q", i, err, c.want)
		}
	}
	if _, err := newHybrid(70000); err == nil || !strings.Contains(err.Error(), "70000") {
		t.Errorf("n=70000: %v", err)
	}
}

// TestHybridImplicitTop: a hierarchy that stops with several groups gets a
// top level joining their representatives, so it is still one barrier.
func TestHybridImplicitTop(t *testing.T) {
	b, err := newHybrid(6, WithHierarchy([]Level{{Groups: [][]int{{0, 1, 2}, {3, 4}, {5}}}}))
	if err != nil {
		t.Fatal(err)
	}
	h := b.(*hybrid)
	if len(h.levels) != 2 || !reflect.DeepEqual(h.levels[1].Groups, [][]int{{0, 3, 5}}) {
		t.Fatalf("levels = %+v, want an added top over 0, 3, 5", h.levels)
	}
	checkBarrier(t, b, 6, episodes(t, 6), 3)
}

// TestHybridBroken: a broken hybrid fails every Wait with ErrBroken until
// Reset, after which it synchronises again.
func TestHybridBroken(t *testing.T) {
	n := 6
	b := hybridOf(t, n, "core:dissemination,pkg:central", [][]int{{0, 0, 1, 1, 2, 2}, {0, 0, 0, 0, 1, 1}})
	bb := b
	bb.Break()
	for id := 0; id < n; id++ {
		if err := bb.WaitContext(context.Background(), id); !errors.Is(err, ErrBroken) {
			t.Fatalf("WaitContext(%d) on a broken barrier = %v, want ErrBroken", id, err)
		}
	}
	func() {
		defer func() {
			r := recover()
			if err, ok := r.(error); !ok || !errors.Is(err, ErrBroken) {
				t.Fatalf("Wait on a broken barrier recovered %v, want an error wrapping ErrBroken", r)
			}
		}()
		b.Wait(0)
	}()
	bb.Reset()
	checkBarrier(t, b, n, 20, 1)
}

// TestHybridBreakReleasesWaiters: participants blocked at any level are
// released with ErrBroken, and a context that ends breaks the barrier for
// the others.
func TestHybridBreakReleasesWaiters(t *testing.T) {
	n := 6
	b := hybridOf(t, n, "core:dissemination,pkg:central", [][]int{{0, 0, 1, 1, 2, 2}, {0, 0, 0, 0, 1, 1}}, WithPolicy(Park))
	h := b.(*hybrid)
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, n)
	for id := 1; id < n-1; id++ { // participant 0 never arrives
		go func() { errs <- h.WaitContext(context.Background(), id) }()
	}
	go func() { errs <- h.WaitContext(ctx, n-1) }()
	time.Sleep(10 * time.Millisecond) // not a bound: only lets some block first
	cancel()
	var ctxErrs, broken int
	for i := 1; i < n; i++ {
		err := <-errs
		switch {
		case errors.Is(err, context.Canceled):
			ctxErrs++
		case errors.Is(err, ErrBroken):
			broken++
		default:
			t.Errorf("waiter returned %v, want context.Canceled or ErrBroken", err)
		}
	}
	if ctxErrs != 1 || broken != n-2 {
		t.Fatalf("%d context errors and %d broken, want 1 and %d", ctxErrs, broken, n-2)
	}
}

// TestHybridBreakMidEpisode: participants loop through a three-level
// hybrid until one of them breaks it mid-run; every participant leaves with
// ErrBroken (none hangs), under every policy, and after Reset it
// synchronises correctly again.
func TestHybridBreakMidEpisode(t *testing.T) {
	for _, p := range []Policy{Spin, Yield, Park} {
		n := 7
		if p == Spin && osal.Oversubscribed(n) {
			continue
		}
		t.Run(p.String(), func(t *testing.T) {
			b := hybridOf(t, n, "core:dissemination,l3:central,package:combining(2)", treeKeys(n, 2, 2, 2, 1, false), WithPolicy(p), WithSpinBudget(8))
			errs := make(chan error, n)
			for id := 0; id < n; id++ {
				go func() {
					for e := 0; ; e++ {
						if id == 3 && e == 25 {
							b.Break()
						}
						if err := b.WaitContext(context.Background(), id); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			for i := 0; i < n; i++ {
				if err := <-errs; !errors.Is(err, ErrBroken) {
					t.Fatalf("participant left with %v, want ErrBroken", err)
				}
			}
			b.Reset()
			checkBarrier(t, b, n, 30, 11)
		})
	}
}

// TestHierarchyKeysRoundTrip: the key rows Hierarchy.Keys writes (what a
// results file stores) rebuild exactly the groups they came from, for
// matching and mismatched trees, and the barrier reports the composition
// it runs.
func TestHierarchyKeysRoundTrip(t *testing.T) {
	const comp = "core:dissemination,l3:combining(2),package:central"
	specs, err := ParseHierarchy(comp)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 2, 5, 12, 17} {
		for _, scatter := range []bool{false, true} {
			levels, err := Hierarchy(specs).Grouped(treeKeys(n, 2, 2, 2, 2, scatter))
			if err != nil {
				t.Fatal(err)
			}
			keys, err := Hierarchy(levels).Keys(n)
			if err != nil {
				t.Fatalf("n=%d: %v", n, err)
			}
			back, err := Hierarchy(specs).Grouped(keys)
			if err != nil || !reflect.DeepEqual(back, levels) {
				t.Fatalf("n=%d scatter=%v: rebuilt %+v (%v), want %+v", n, scatter, back, err, levels)
			}
		}
	}
	b := hybridOf(t, 5, comp, treeKeys(5, 2, 2, 2, 2, false))
	if got := b.(interface{ Composition() string }).Composition(); got != comp {
		t.Errorf("Composition() = %q, want %q", got, comp)
	}
	flat, _ := New("hybrid", 3)
	if got := flat.(interface{ Composition() string }).Composition(); got != "flat:dissemination" {
		t.Errorf("plain hybrid's Composition() = %q", got)
	}
	bad := []Level{{Groups: [][]int{{0, 1}, {1, 2}}}}
	if _, err := Hierarchy(bad).Keys(3); err == nil || !strings.Contains(err.Error(), "two groups") {
		t.Errorf("overlapping groups: %v", err)
	}
}

// TestAutoBuildsTheTunedHybrid: a results file whose winner is a hybrid
// with a composition and level keys (as the check writes them) makes Auto
// build that very hybrid, groups included, for exactly that count; another
// count takes the runner-up, since the groups do not fit it; keys that do
// not fit are a fallback with the reason.
func TestAutoBuildsTheTunedHybrid(t *testing.T) {
	allowed, err := osal.Allowed()
	if err != nil {
		t.Skip(err)
	}
	const n, comp = 6, "core:central,l3:combining(2),package:dissemination"
	specs, err := ParseHierarchy(comp)
	if err != nil {
		t.Fatal(err)
	}
	levels, err := Hierarchy(specs).Grouped(treeKeys(n, 1, 2, 2, 2, false))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := Hierarchy(levels).Keys(n)
	if err != nil {
		t.Fatal(err)
	}
	members := allowed.Members()
	cpus := make([]int, n) // the allowed CPUs, round-robin
	for i := range cpus {
		cpus[i] = members[i%len(members)]
	}
	write := func(keys [][]int) string {
		f := &results.File{
			Schema:  results.Schema,
			Machine: machine(allowed.String()),
			Threads: []results.Threads{{Threads: n, Complete: true, Best: &results.Choice{Spec: results.Spec{Algorithm: "hybrid", Policy: "auto", Composition: comp, LevelKeys: keys},
				CPUs: cpus, MedianNs: 900, RunnerUp: "tournament"}}},
		}
		path := filepath.Join(t.TempDir(), "results.json")
		if err := writeResultsFile(path, f); err != nil {
			t.Fatal(err)
		}
		return path
	}
	path := write(keys)
	t.Setenv(results.ResultsEnv, path)
	cache.reset()
	defer cache.reset()
	tu := Tuned(n)
	if tu.Algorithm != "hybrid" || tu.Composition != comp || tu.Fallback != "" || !reflect.DeepEqual(tu.Levels, levels) {
		t.Fatalf("Tuned(%d) = %+v, want the hybrid %s with its groups %+v", n, tu, comp, levels)
	}
	b, err := Auto(n)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.(interface{ Composition() string }).Composition(); got != comp {
		t.Fatalf("Auto(%d) runs %q, want %q", n, got, comp)
	}
	if hy := b.(*hybrid); !reflect.DeepEqual(hy.levels, levels) {
		t.Fatalf("Auto(%d) groups %+v, want %+v", n, hy.levels, levels)
	}
	checkBarrier(t, b, n, episodes(t, n), 11)
	// 1 participant: another count that fits GOMAXPROCS whatever it is.
	if tu := Tuned(1); tu.Algorithm != "tournament" || tu.Levels != nil || tu.Fallback != "" {
		t.Errorf("Tuned(1) = %+v, want the runner-up tournament", tu)
	}
	short := append([][]int{keys[0][:n-1]}, keys[1:]...)
	if tu := TunedFrom(write(short), n); tu.Fallback == "" || !strings.Contains(tu.Fallback, "row 0") {
		t.Errorf("keys for %d participants: %+v, want a fallback naming the row", n-1, tu)
	}
	if tu := TunedFrom(write(nil), n); tu.Algorithm != "tournament" {
		t.Errorf("a multi-level composition without keys: %+v, want the runner-up", tu)
	}
}

// TestAutoBuildsTheTunedFanIn: a fan-in the file records is built with; a
// bad one is a fallback naming it.
func TestAutoBuildsTheTunedFanIn(t *testing.T) {
	path := writeResults(t, func(f *results.File) { f.Threads[0].Best.Algorithm, f.Threads[0].Best.FanIn = "combining", 3 })
	b, err := TunedFrom(path, 2).New()
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := b.(*combining); !ok || c.fanIn != 3 {
		t.Errorf("tuned combining(3) built as %T %+v", b, b)
	}
	path = writeResults(t, func(f *results.File) { f.Threads[0].Best.FanIn = 1 })
	if tu := TunedFrom(path, 2); !strings.Contains(tu.Fallback, "fan-in 1") {
		t.Errorf("fan-in 1 in the file: %+v, want a fallback naming it", tu)
	}
}
