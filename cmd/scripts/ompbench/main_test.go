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
	// One state's floors spread up to 1.55 times a minute apart.
	if w := floorWords(&results.OpenMP{HostFloorBeforeNs: 216, HostFloorAfterNs: 151}, 139, 158); !strings.HasSuffix(w, ": one host state") {
		t.Errorf("216/151 then 139/158: %q, want one host state", w)
	}
	if w := floorWords(o, 90, 100); !strings.Contains(w, "NOT one host state") { // the file read 330-350
		t.Errorf("340/360 then 90/100: %q, want two states named", w)
	}
	if w := floorWords(&results.OpenMP{}, 90, 100); !strings.Contains(w, "recorded no floor") || strings.Contains(w, "one host state") {
		t.Errorf("a file without floors: %q", w)
	}
}

// TestPairOrder: a comparison's two sides run back to back, each side
// as often as the other, in ABBA order, the side that starts alternating
// with the parity; with one run a side only the start alternates.
func TestPairOrder(t *testing.T) {
	d, e := &config{}, &config{export: true}
	name := func(cs []*config) string {
		var b strings.Builder
		for _, c := range cs {
			if c == d {
				b.WriteByte('D')
			} else {
				b.WriteByte('E')
			}
		}
		return b.String()
	}
	for _, tc := range []struct {
		parity, runs int
		want         string
	}{
		{0, 1, "DE"}, {1, 1, "ED"}, {0, 2, "DEED"}, {3, 2, "EDDE"}, {2, 3, "DEEDDE"}, {0, 4, "DEEDDEED"},
	} {
		if got := name(pairOrder(d, e, tc.parity, tc.runs)); got != tc.want {
			t.Errorf("pairOrder(parity %d, runs %d) = %s, want %s", tc.parity, tc.runs, got, tc.want)
		}
	}
}

// TestGeomean: a side's round time is the geometric mean of its runs,
// so that the ratio of two sides' means is the mean of the runs' ratios.
func TestGeomean(t *testing.T) {
	if g := geomean([]float64{2, 8}); g < 3.999 || g > 4.001 {
		t.Errorf("geomean(2, 8) = %g, want 4", g)
	}
	if g := geomean([]float64{5}); g != 5 {
		t.Errorf("geomean(5) = %g", g)
	}
	a, b := []float64{100, 400}, []float64{50, 800}
	if r := geomean(b) / geomean(a); r < 0.999 || r > 1.001 {
		t.Errorf("ratio of means %g, want the mean ratio 1", r)
	}
}
