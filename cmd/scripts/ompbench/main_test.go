package main

import (
	"strings"
	"testing"

	"github.com/barriertune/barriertune/results"
)

// TestStability: two checks' choices read as the same, within 3% of
// each other, or different, per runtime and count.
func TestStability(t *testing.T) {
	file := func(counts ...results.OpenMPCount) *results.File {
		return &results.File{OpenMP: &results.OpenMP{Runtimes: []results.OpenMPRuntime{{Name: "libomp", Counts: counts}}}}
	}
	a := file(
		results.OpenMPCount{Threads: 2, Best: []string{"KMP_AFFINITY=granularity=fine,compact"}, BestNs: 450, DefaultNs: 1400},
		results.OpenMPCount{Threads: 4, Best: []string{"KMP_AFFINITY=granularity=fine,compact"}, BestNs: 450, DefaultNs: 1400},
		results.OpenMPCount{Threads: 8, Best: []string{"KMP_PLAIN_BARRIER_PATTERN=linear,linear"}, BestNs: 12000, DefaultNs: 20000},
	)
	b := file(
		results.OpenMPCount{Threads: 2, Best: []string{"KMP_AFFINITY=granularity=fine,compact"}, BestNs: 470, DefaultNs: 1300},
		results.OpenMPCount{Threads: 4, Best: []string{"KMP_AFFINITY=granularity=core,compact"}, BestNs: 460, DefaultNs: 1300},
		results.OpenMPCount{Threads: 8, DefaultNs: 20000, Why: "no candidate"},
	)
	rows := stability(a, b)
	want := []string{"| same |", "| within 3% |", "| differ |"}
	if len(rows) != 3 {
		t.Fatalf("rows %q", rows)
	}
	for i, w := range want {
		if !strings.HasSuffix(rows[i], w) {
			t.Errorf("row %d %q, want it to end %q", i, rows[i], w)
		}
	}
}

func TestRatio(t *testing.T) {
	if s := formatRatio(0.0044); s != "0.0044x" {
		t.Errorf("formatRatio(0.0044) = %s", s)
	}
	if s := formatRatio(0.654); s != "0.65x" {
		t.Errorf("formatRatio(0.654) = %s", s)
	}
}

// TestFloorWords: the agreement says whether the check's step and the
// runs compared with it saw one host state.
func TestFloorWords(t *testing.T) {
	o := &results.OpenMP{HostFloorBeforeNs: 340, HostFloorAfterNs: 360}
	if w := floorWords(o, 350, 330); !strings.HasSuffix(w, ": one host state") {
		t.Errorf("340/360 then 350/330: %q, want one host state", w)
	}
	if w := floorWords(o, 90, 100); !strings.Contains(w, "NOT one host state") {
		t.Errorf("340/360 then 90/100: %q, want two states named", w)
	}
	if w := floorWords(&results.OpenMP{}, 90, 100); !strings.Contains(w, "recorded no floor") || strings.Contains(w, "one host state") {
		t.Errorf("a file without floors: %q", w)
	}
}
