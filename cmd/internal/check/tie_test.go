package check

import (
	"fmt"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/results"
)

// spread returns n samples centred on c: c−w, …, c+w in equal steps.
func spread(c, w float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = c - w + 2*w*float64(i)/float64(n-1)
	}
	return s
}

// TestTieBySignificance decides winners on synthetic samples: a 10%
// difference inside ±30% noise is a tie the test cannot separate, but the
// faster still wins (a tie never names the slower one best when they are
// more than 3% apart); with ±2% noise it is no tie at all.
func TestTieBySignificance(t *testing.T) {
	p := []int{0, 1}
	ms := []results.Measurement{m("mcs", p, 100), m("central", p, 110)}
	noisy := []scoringSamples{{raw: spread(100, 30, 21)}, {raw: spread(110, 30, 21)}}
	if c := best(ms, noisy); c.Algorithm != "mcs" || c.RunnerUp != "central" || c.MarginPct != 10 || !c.Tie || c.TieRule != TieNotSeparable {
		t.Errorf("10%% apart in ±30%% noise: %+v, want mcs by +10%%, a tie not separable by the test", c)
	}
	tight := []scoringSamples{{raw: spread(100, 2, 21)}, {raw: spread(110, 2, 21)}}
	if c := best(ms, tight); c.Algorithm != "mcs" || c.MarginPct != 10 || c.Tie || c.TieRule != "" {
		t.Errorf("10%% apart in ±2%% noise: %+v, want mcs by 10%%, no tie", c)
	}
	// Without samples the 3% tolerance alone decides: 10% is no tie.
	if c := best(ms, nil); c.Algorithm != "mcs" || c.Tie {
		t.Errorf("no samples: %+v, want mcs, no tie", c)
	}
}

// TestTieWording: a reported "margin -7.5% tie" naming the slower one
// best cannot happen; within 3% the tie says so and the margin is within
// ±3%; beyond 3% an inseparable tie says the test could not separate them
// and the margin is positive.
func TestTieWording(t *testing.T) {
	p := []int{0, 1}
	// The reported case: central (simplest) 7.5% slower than mcs, samples
	// overlapping.
	ms := []results.Measurement{m("mcs", p, 100), m("central", p, 107.5)}
	ss := []scoringSamples{{raw: spread(100, 40, 15)}, {raw: spread(107.5, 40, 15)}}
	c := best(ms, ss)
	if c.Algorithm != "mcs" || c.MarginPct != 7.5 || c.TieRule != TieNotSeparable {
		t.Errorf("7.5%% apart, inseparable: %+v, want mcs best, runner-up central +7.5%%, %q", c, TieNotSeparable)
	}
	// Within 3%: the simpler wins, the margin is negative and small.
	ms = []results.Measurement{m("mcs", p, 100), m("central", p, 102)}
	c = best(ms, []scoringSamples{{raw: spread(100, 1, 15)}, {raw: spread(102, 1, 15)}})
	if c.Algorithm != "central" || c.MarginPct != -2 || c.TieRule != TieWithin {
		t.Errorf("2%% apart: %+v, want central, mcs -2%%, %q (even when the test separates them)", c, TieWithin)
	}
	// The rule texts name what made the tie, with the tolerance in force.
	pct := fmt.Sprintf("%g%%", TieFraction*100)
	if !strings.HasPrefix(TieWithin, "within "+pct) || !strings.HasPrefix(TieNotSeparable, "not separable by the test") ||
		!strings.Contains(TieNotSeparable, "more than "+pct) {
		t.Errorf("tie rules %q and %q do not state the %s tolerance", TieWithin, TieNotSeparable, pct)
	}
}

func TestWithinAndSeparable(t *testing.T) {
	for _, tc := range []struct {
		name          string
		fast, other   float64
		fs, os        []float64
		within, apart bool
	}{
		{"within 3%", 100, 102, nil, nil, true, false},
		{"exactly 3%", 100, 103, nil, nil, true, false},
		{"outside 3%, no samples", 100, 104, nil, nil, false, false},
		{"outside 3%, overlapping samples", 100, 104, spread(100, 20, 15), spread(104, 20, 15), false, false},
		{"outside 3%, separate samples", 100, 150, spread(100, 5, 15), spread(150, 5, 15), false, true},
		{"too few samples to show a difference", 100, 150, spread(100, 1, 3), spread(150, 1, 3), false, false},
	} {
		if got := within(tc.fast, tc.other); got != tc.within {
			t.Errorf("%s: within = %v, want %v", tc.name, got, tc.within)
		}
		if got := separable(tc.fs, tc.os); got != tc.apart {
			t.Errorf("%s: separable = %v, want %v", tc.name, got, tc.apart)
		}
	}
}
