package check

import (
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
// difference inside ±30% noise is a tie (the simpler algorithm wins), the
// same difference with ±2% noise is real (the faster wins).
func TestTieBySignificance(t *testing.T) {
	p := []int{0, 1}
	ms := []results.Measurement{m("mcs", p, 100), m("central", p, 110)}
	noisy := []scoringSamples{{raw: spread(100, 30, 21)}, {raw: spread(110, 30, 21)}}
	if c := best(ms, noisy); c.Algorithm != "central" || c.RunnerUp != "mcs" || !c.Tie || c.TieRule != TieRule {
		t.Errorf("10%% apart in ±30%% noise: %+v, want central winning a tie", c)
	}
	tight := []scoringSamples{{raw: spread(100, 2, 21)}, {raw: spread(110, 2, 21)}}
	if c := best(ms, tight); c.Algorithm != "mcs" || c.MarginPct != 10 || c.Tie {
		t.Errorf("10%% apart in ±2%% noise: %+v, want mcs by 10%%", c)
	}
	// Without samples the 3% fraction alone decides: 10% is no tie.
	if c := best(ms, nil); c.Algorithm != "mcs" {
		t.Errorf("no samples: %+v, want mcs", c)
	}
	// Normalised scores use the normalised samples: raw samples that
	// overlap do not make a tie when the normalised ones are apart.
	a, b := ms[0], ms[1]
	a.NormalizedNs, b.NormalizedNs = 100, 110
	mixed := []scoringSamples{
		{raw: spread(100, 30, 21), normalized: spread(100, 2, 21)},
		{raw: spread(110, 30, 21), normalized: spread(110, 2, 21)},
	}
	if c := best([]results.Measurement{a, b}, mixed); c.Algorithm != "mcs" {
		t.Errorf("normalised samples apart: %+v, want mcs", c)
	}
}

func TestTied(t *testing.T) {
	for _, tc := range []struct {
		name        string
		fast, other float64
		fs, os      []float64
		want        bool
	}{
		{"within 3%", 100, 102, nil, nil, true},
		{"outside 3%, no samples", 100, 104, nil, nil, false},
		{"outside 3%, overlapping samples", 100, 104, spread(100, 20, 15), spread(104, 20, 15), true},
		{"outside 3%, separate samples", 100, 150, spread(100, 5, 15), spread(150, 5, 15), false},
		{"too few samples to show a difference", 100, 150, spread(100, 1, 3), spread(150, 1, 3), true},
	} {
		if got := tied(tc.fast, tc.other, tc.fs, tc.os); got != tc.want {
			t.Errorf("%s: tied = %v, want %v", tc.name, got, tc.want)
		}
	}
}
