package hwtree

import (
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cpuset"
)

// TestFromLevelsRebuildsTheTree: the levels of a tree (each type's CPU
// sets) build the same tree back, canonical form and depth-first CPU
// order included, whatever order the levels come in.
func TestFromLevelsRebuildsTheTree(t *testing.T) {
	for _, syn := range []string{"pack:2 l3:2 core:4 pu:2", "pack:1 core:3 pu:1", "numa:2 pack:1 core:2 pu:2"} {
		want := mustSynthetic(t, syn)
		levels := map[Type][]cpuset.Set{}
		want.Walk(func(o *Object) bool {
			if o.Type != Machine && o.Type != PU {
				levels[o.Type] = append(levels[o.Type], o.CPUSet)
			}
			return true
		})
		got, err := FromLevels(want.Allowed(), levels, "levels")
		if err != nil {
			t.Fatalf("%s: %v", syn, err)
		}
		if got.Root.Canonical() != want.Root.Canonical() {
			t.Errorf("%s: rebuilt %s, want %s", syn, got.Root.Canonical(), want.Root.Canonical())
		}
		if g, w := cpuset.FormatList(got.CPUs()), cpuset.FormatList(want.CPUs()); g != w {
			t.Errorf("%s: CPU order %s, want %s", syn, g, w)
		}
	}
}

// TestFromLevelsRefusesNonTrees: objects that overlap in part, repeat, or
// hold CPUs outside the tree are refused, each in one line.
func TestFromLevelsRefusesNonTrees(t *testing.T) {
	all := list(t, "0-3")
	for _, c := range []struct {
		levels map[Type][]cpuset.Set
		want   string
	}{
		{map[Type][]cpuset.Set{Core: {list(t, "0-1"), list(t, "1-2")}}, "partially overlaps"},
		{map[Type][]cpuset.Set{Core: {list(t, "0-1"), list(t, "0-1")}}, "appear twice"},
		{map[Type][]cpuset.Set{Core: {list(t, "4")}}, "outside the tree's CPUs"},
		{map[Type][]cpuset.Set{PU: {list(t, "0")}}, "cannot lie between"},
	} {
		if _, err := FromLevels(all, c.levels, "levels"); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want %q", c.levels, err, c.want)
		}
	}
	if _, err := FromLevels(cpuset.Set{}, nil, "levels"); err == nil {
		t.Error("a tree without CPUs was built")
	}
}

// list parses a CPU list the test spells.
func list(t *testing.T, s string) cpuset.Set {
	t.Helper()
	set, err := cpuset.ParseList(s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}
