package main

import (
	"math"
	"testing"

	"github.com/barriertune/barriertune/results"
)

func TestRulesPickByTheirStatistic(t *testing.T) {
	ms := []results.Measurement{
		{Algorithm: "mcs", MedianNs: 100, NormalizedNs: 90, MeanNs: 120, MinNs: 80, Reps: 9},
		{Algorithm: "dissemination", MedianNs: 102, NormalizedNs: 100, MeanNs: 101, MinNs: 95, Reps: 9},
		{Algorithm: "central", MedianNs: 90, Reps: 9, Dropped: true},
	}
	want := map[string]string{
		"median (shown)":      "dissemination", // within 3% of mcs, simpler
		"normalized_ns (old)": "mcs",
		"mean":                "dissemination",
		"min":                 "mcs",
	}
	for _, r := range rules {
		if got := r.pick(ms); got != want[r.name] {
			t.Errorf("%s picks %q, want %q", r.name, got, want[r.name])
		}
	}
	if got := rules[0].pick(nil); got != "" {
		t.Errorf("no measurements: %q", got)
	}
}

func TestRegretAndSummary(t *testing.T) {
	truth := map[string]float64{"mcs": 110, "dissemination": 100}
	if r := regret(truth, "mcs"); math.Abs(r-1.1) > 1e-12 {
		t.Errorf("regret of mcs = %v, want 1.1", r)
	}
	if r := regret(truth, "dissemination"); r != 1 {
		t.Errorf("regret of the true best = %v, want 1", r)
	}
	if !math.IsNaN(regret(truth, "cond")) {
		t.Error("an algorithm the truth lacks must give NaN")
	}
	s := summarise([]float64{1, 1.2, math.NaN(), 1.04, 1})
	if s.n != 4 || s.median != 1.02 || s.worst != 1.2 || s.within5 != 0.75 {
		t.Errorf("summary %+v, want n 4, median 1.02, worst 1.2, 75%% within 5%%", s)
	}
}
