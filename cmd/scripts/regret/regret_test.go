package main

import (
	"math"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/results"
)

func TestRulesPickByTheirStatistic(t *testing.T) {
	ms := []results.Measurement{
		{NormalizedNs: 90, Reps: 9, Summary: results.Summary{MedianNs: 100, MeanNs: 120, MinNs: 80}, Spec: results.Spec{Algorithm: "mcs"}},
		{NormalizedNs: 100, Reps: 9, Summary: results.Summary{MedianNs: 102, MeanNs: 101, MinNs: 95}, Spec: results.Spec{Algorithm: "dissemination"}},
		{Reps: 9, Dropped: true, Summary: results.Summary{MedianNs: 90}, Spec: results.Spec{Algorithm: "central"}},
	}
	want := map[string]string{
		"median (shown)":        "dissemination", // within 3% of mcs, simpler
		"raw median (pre-v1.3)": "dissemination", // no raw median: the shown one
		"normalized_ns (old)":   "mcs",
		"mean":                  "dissemination",
		"min":                   "mcs",
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

// TestRawMedianRule: the pre-v1.3 rule ranks by raw_median_ns where the
// file has it.
func TestRawMedianRule(t *testing.T) {
	ms := []results.Measurement{
		{RawMedianNs: 32, Reps: 9, Summary: results.Summary{MedianNs: 180}, Spec: results.Spec{Algorithm: "central"}},
		{RawMedianNs: 175, Reps: 9, Summary: results.Summary{MedianNs: 170}, Spec: results.Spec{Algorithm: "dissemination"}},
	}
	if got := rules[0].pick(ms); got != "dissemination" {
		t.Errorf("shown median picks %s", got)
	}
	if got := rules[1].pick(ms); got != "central" {
		t.Errorf("raw median picks %s, want central", got)
	}
}

func TestVerdicts(t *testing.T) {
	nan := math.NaN()
	pass := verdicts([]float64{1.0, 0.95, nan}, []float64{1, 1.05, 1.1, 1, 1, 1, 1, 1, 1, 1.2})
	fail := verdicts([]float64{1.0, 0.79}, []float64{1, 1.2, 1.11, 1, 1, 1, 1, 1, 1, 1})
	want := []struct {
		lines  []string
		prefix []string
	}{
		{pass, []string{"PASS no winner", "PASS winner within 10% of the truth's best in at least 9 of 10: 9", "FAIL worst regret <= 1.15: 1.200"}},
		{fail, []string{"FAIL no winner below 0.8x its file's floor: 1 of 2", "FAIL winner within 10% of the truth's best in at least 9 of 10: 8", "FAIL worst regret"}},
	}
	for _, w := range want {
		for i, p := range w.prefix {
			if !strings.HasPrefix(w.lines[i], p) {
				t.Errorf("verdict %q, want it to start %q", w.lines[i], p)
			}
		}
	}
	if v := verdicts(nil, []float64{1, nan}); !strings.HasPrefix(v[2], "FAIL") || !strings.Contains(v[2], "1 checks without a winner or a truth of the pick") {
		t.Errorf("an unknown regret must fail the worst-regret target: %q", v[2])
	}
	if v := verdicts(nil, []float64{1, 1.1, 1.05}); !strings.HasPrefix(v[1], "PASS") || !strings.HasPrefix(v[2], "PASS") {
		t.Errorf("regrets 1, 1.1, 1.05: %q", v)
	}
}

// TestMeanTruth: the truth is each algorithm's mean over the benches that
// measured it.
func TestMeanTruth(t *testing.T) {
	got := meanTruth([]map[string]float64{
		{"central": 100, "combining": 200},
		{"central": 300, "combining": 100},
		{"central": 200},
	})
	want := map[string]float64{"central": 200, "combining": 150}
	for a, w := range want {
		if math.Abs(got[a]-w) > 1e-9 {
			t.Errorf("%s: %v, want %v", a, got[a], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d algorithms, want %d", len(got), len(want))
	}
}
