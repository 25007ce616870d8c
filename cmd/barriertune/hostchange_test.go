package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/barriertune/barriertune/cmd/internal/figure"
	"github.com/barriertune/barriertune/results"
)

// TestShowAndPlotSayTheHostChanged: a file whose floor saw two host
// states says so in show's table (the floor's states, the host change,
// the repeated candidate) and in plot's title and legend; a file that
// saw one state says nothing of it.
func TestShowAndPlotSayTheHostChanged(t *testing.T) {
	f, _ := plotFixture(t)
	var quiet bytes.Buffer
	if err := printWinners(&quiet, f); err != nil {
		t.Fatal(err)
	}
	if s := quiet.String(); strings.Contains(s, "HOST CHANGED") || strings.Contains(s, "moved") || strings.Contains(s, "repeated") {
		t.Errorf("one state, yet show says:\n%s", s)
	}
	f.Floor[0].States = []results.HostState{{MedianNs: 27, MinNs: 26, MaxNs: 29, Rounds: 31}, {MedianNs: 170, MinNs: 150, MaxNs: 190, Rounds: 62}}
	f.Floor[0].RankedState, f.Floor[0].MedianNs = 1, 170
	f.HostChange = "the floor between CPUs 0 and 1 moved between 2 states during the check"
	f.Threads[1].Repeated = []results.Repeat{{Algorithm: "central", Label: "x", CPUs: []int{0, 1}, Why: "below", FloorRatioBefore: 0.19, FloorRatioAfter: 0.2, Rounds: 10}}
	var shown bytes.Buffer
	if err := printWinners(&shown, f); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"HOST CHANGED during the check: the floor between CPUs 0 and 1 moved", "the host moved: 27.0 ns x31 rounds; 170.0 ns x62 rounds, ranked",
		"repeated: 2 threads, central on 0-1 at 0.19 x floor: not confirmed (0.20 x floor in 10 repeated rounds): rejected"} {
		if !strings.Contains(shown.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, shown.String())
		}
	}
	// A rejected measurement is no point of its curve.
	f.Threads[1].Measurements = append(f.Threads[1].Measurements, results.Measurement{CPUs: []int{0, 1}, Pinned: true, Reps: 21, Rejected: "below 0.8x its floor", Summary: results.Summary{MedianNs: 1}, Spec: results.Spec{Algorithm: "central", Policy: "spin"}})
	if _, pts := figure.Curves(f); slices.ContainsFunc(pts["central"], func(q plotter.XY) bool { return q.Y == 1 }) {
		t.Error("the plot draws a rejected measurement")
	}
	p, err := resultsPlot(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "p.svg")
	if err := figure.Save(p, out); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"the host moved the CPUs during the check", "host moved: 27-170 ns"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("the plot lacks %q", want)
		}
	}
}
