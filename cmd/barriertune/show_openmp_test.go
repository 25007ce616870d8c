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
