package main

import (
	"strings"
	"testing"

	"github.com/barriertune/barriertune/results"
)

// TestOpenMPLinesNameTheHostState: show names the host state the OpenMP
// times belong to (the floors before and after the step), says when the
// host moved during the step, and says nothing of a state for a file
// without the floors (before v1.7).
func TestOpenMPLinesNameTheHostState(t *testing.T) {
	rt := []results.OpenMPRuntime{{Name: "libomp", Compiler: "clang", Version: "5.0", Library: "/x/libomp.so.5",
		Counts: []results.OpenMPCount{{Threads: 2, DefaultNs: 1000, Why: "no setting was faster", Settings: 2, Runs: 20}}}}
	for _, c := range []struct {
		o        results.OpenMP
		want     []string
		wantNone bool
	}{
		{o: results.OpenMP{Runtimes: rt, HostFloorBeforeNs: 340, HostFloorAfterNs: 360}, want: []string{"Host state: the floor read 340 ns before the step and 360 ns after it"}},
		{o: results.OpenMP{Runtimes: rt, HostFloorBeforeNs: 80, HostFloorAfterNs: 350, HostMoved: "the host moved between states during the step (the floor read 80 ns before it and 350 ns after)"}, want: []string{"Host state: the host moved", "80 ns before it and 350 ns after"}},
		{o: results.OpenMP{Runtimes: rt}, wantNone: true},
	} {
		f := &results.File{OpenMP: &c.o}
		got := strings.Join(openMPLines(f), "\n")
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: lines lack %q:\n%s", c.o, w, got)
			}
		}
		if c.wantNone && strings.Contains(got, "Host state") {
			t.Errorf("a file without floors names a host state:\n%s", got)
		}
		if !strings.Contains(got, "libomp, 2 threads: the defaults stay (1000 ns a barrier)") {
			t.Errorf("the count's line is missing:\n%s", got)
		}
	}
}

// TestHostStateLine: the line on the host state says the host moved
// exactly where the two floors are 2 times apart or more, whichever
// came first, even where the file does not say so; one state where they
// are closer; and never a floor of 0 ns where one reading is missing.
func TestHostStateLine(t *testing.T) {
	for _, c := range []struct {
		before, after float64
		moved         bool
	}{{100, 300, true}, {300, 100, true}, {100, 200, true}, {100, 199, false}, {199, 100, false}, {139, 216, false}, {100, 100, false}, {100, 0, false}, {0, 100, false}} {
		l := hostStateLine(&results.OpenMP{HostFloorBeforeNs: c.before, HostFloorAfterNs: c.after})
		if got := strings.Contains(l, "moved between states"); got != c.moved {
			t.Errorf("floors %g and %g: %q; want moved %v", c.before, c.after, l, c.moved)
		}
		if strings.Contains(l, " 0 ns") || l == "" {
			t.Errorf("floors %g and %g: %q", c.before, c.after, l)
		}
	}
	if l := hostStateLine(&results.OpenMP{}); l != "" {
		t.Errorf("no floor: %q", l)
	}
	if l := hostStateLine(&results.OpenMP{HostFloorBeforeNs: 100, HostFloorAfterNs: 400, HostMoved: "the file's words"}); l != "Host state: the file's words" {
		t.Errorf("the file's own words: %q", l)
	}
}
