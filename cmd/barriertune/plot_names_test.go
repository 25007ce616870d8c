package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/figure"
	"github.com/barriertune/barriertune/cmd/internal/store"
	"github.com/barriertune/barriertune/results"
)

// TestPlotNamesEveryAlgorithm: every algorithm a results file measured is
// in the picture's legend, drawn (a candidate dropped early with its fewer
// samples) or named among those not drawn with why (rejected); counts above
// the CPUs are starred as goroutine timings.
func TestPlotNamesEveryAlgorithm(t *testing.T) {
	f, _ := plotFixture(t)
	f.Machine.AllowedCPUs = "0-1" // the 4- and 8-thread points ran as goroutines
	for i := range f.Threads {
		th := &f.Threads[i]
		cpus := th.Measurements[0].CPUs
		th.Measurements = append(th.Measurements,
			results.Measurement{CPUs: cpus, Reps: 5, Dropped: true, Summary: results.Summary{MedianNs: 900}, Spec: results.Spec{Algorithm: "tournament", Policy: "spin"}},
			results.Measurement{CPUs: cpus, Reps: 21, Rejected: "below 0.8x the floor", Summary: results.Summary{MedianNs: 5}, Spec: results.Spec{Algorithm: "butterfly", Policy: "spin"}})
	}
	path := filepath.Join(t.TempDir(), "results.json")
	if err := store.Write(path, f); err != nil {
		t.Fatal(err)
	}
	svg := filepath.Join(t.TempDir(), "p.svg")
	if _, err := run(t, "plot", "-o", svg, path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	measured := map[string]bool{}
	for _, th := range f.Threads {
		for _, m := range th.Measurements {
			measured[m.Algorithm] = true
		}
	}
	for a := range measured {
		if !strings.Contains(text, a) {
			t.Errorf("the plot does not name %s, which the file measured", a)
		}
	}
	for _, want := range []string{"tournament (dropped early", "not drawn: butterfly (rejected at 1 threads: below 0.8x the floor)", "more threads than the 2 CPUs", "goroutines timed", ">4*<", ">8*<"} {
		if !strings.Contains(text, want) {
			t.Errorf("the SVG lacks %q", want)
		}
	}
	if got := figure.LeftOut(f); len(got) != 1 || !strings.HasPrefix(got[0], "butterfly") {
		t.Errorf("LeftOut = %q, want butterfly alone", got)
	}
}
