package check

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/results"
)

// TestBestPicksByShownMedian is the selection property over random
// measurement sets: best never picks a measurement whose shown median is
// more than TieFraction above the fastest shown; no simpler algorithm
// within the tolerance loses; the runner-up is the fastest other
// algorithm; a negative margin only comes from a tie within the tolerance;
// an inseparable tie beyond it keeps the fastest; NormalizedNs decides
// nothing; robust's worst is that algorithm's slowest shown median, is
// never below the fastest, and never below best's median when both name
// the same algorithm.
func TestBestPicksByShownMedian(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 26))
	names := catalog.Names()
	places := [][]int{{0, 1}, {0, 2}, {1, 3}}
	for iter := 0; iter < 3000; iter++ {
		n := 1 + rng.IntN(12)
		ms := make([]results.Measurement, n)
		ss := make([]scoringSamples, n)
		for i := range ms {
			med := 40 + rng.Float64()*60
			if rng.IntN(3) == 0 { // clusters of near-equal medians
				med = 50 + rng.Float64()*3
			}
			ms[i] = m(names[rng.IntN(len(names))], places[rng.IntN(len(places))], med)
			ms[i].NormalizedNs = rng.Float64() * 100 // never shown, must not rank
			// Dropped: over DropFactor times the best.
			if rng.IntN(8) == 0 {
				ms[i].Dropped = true
				ms[i].MedianNs *= 2.5
			}
			if rng.IntN(4) > 0 {
				ss[i].raw = spread(med, rng.Float64()*med*0.5, 5+rng.IntN(20))
			}
		}
		check := func(c *results.Choice, ss []scoringSamples) {
			t.Helper()
			fastest, runner := math.Inf(1), math.Inf(1)
			for _, x := range ms {
				if valid(x) {
					fastest = min(fastest, x.MedianNs)
				}
			}
			if math.IsInf(fastest, 1) {
				if c != nil {
					t.Fatalf("iter %d: nothing valid, yet best %+v", iter, c)
				}
				return
			}
			if c == nil {
				t.Fatalf("iter %d: valid measurements, no best", iter)
			}
			if c.MedianNs > fastest*(1+TieFraction) {
				t.Fatalf("iter %d: best %s at %.2f ns, more than %g%% above the fastest %.2f", iter, c.Algorithm, c.MedianNs, TieFraction*100, fastest)
			}
			found := false
			for _, x := range ms {
				if !valid(x) {
					continue
				}
				if x.Algorithm == c.Algorithm && x.MedianNs == c.MedianNs && x.Label == "x" {
					found = true
				}
				if within(fastest, x.MedianNs) && rank(x.Algorithm) < rank(c.Algorithm) {
					t.Fatalf("iter %d: %s at %.2f is simpler than %s and within %g%% of %.2f", iter, x.Algorithm, x.MedianNs, c.Algorithm, TieFraction*100, fastest)
				}
				if x.Algorithm != c.Algorithm {
					runner = min(runner, x.MedianNs)
				}
			}
			if !found {
				t.Fatalf("iter %d: best %+v is no valid measurement", iter, c)
			}
			if math.IsInf(runner, 1) != (c.RunnerUp == "") {
				t.Fatalf("iter %d: runner-up %q, fastest other algorithm %.2f", iter, c.RunnerUp, runner)
			}
			if c.RunnerUp != "" && math.Abs(c.MarginPct-math.Round((runner/c.MedianNs-1)*1000)/10) > 1e-9 {
				t.Fatalf("iter %d: margin %v, want the fastest other algorithm's %.2f over %.2f", iter, c.MarginPct, runner, c.MedianNs)
			}
			if c.MarginPct < 0 && (c.TieRule != TieWithin || c.MarginPct < -TieFraction*100) {
				t.Fatalf("iter %d: margin %+.1f%% with tie %v %q: a negative margin must be a tie within %g%%", iter, c.MarginPct, c.Tie, c.TieRule, TieFraction*100)
			}
			if c.TieRule == TieNotSeparable && (c.MedianNs != fastest || c.MarginPct < TieFraction*100) {
				t.Fatalf("iter %d: inseparable tie %+v: want the fastest winning by more than %g%%", iter, c, TieFraction*100)
			}
			if c.Tie != (c.TieRule != "") {
				t.Fatalf("iter %d: tie %v with rule %q", iter, c.Tie, c.TieRule)
			}
		}
		c := best(ms, ss)
		check(c, ss)
		check(best(ms, nil), nil)
		// NormalizedNs decides nothing.
		plain := append([]results.Measurement(nil), ms...)
		for i := range plain {
			plain[i].NormalizedNs = 0
		}
		if c2 := best(plain, ss); (c == nil) != (c2 == nil) || c != nil && (c.Algorithm != c2.Algorithm || c.MedianNs != c2.MedianNs || c.TieRule != c2.TieRule) {
			t.Fatalf("iter %d: normalized_ns changed the choice: %+v vs %+v", iter, c, c2)
		}
		if r := robust(ms); r != nil {
			worst, fastest := 0.0, math.Inf(1)
			for _, x := range ms {
				if x.Algorithm == r.Algorithm {
					worst = max(worst, x.MedianNs)
				}
				if valid(x) {
					fastest = min(fastest, x.MedianNs)
				}
			}
			if r.WorstMedianNs != worst {
				t.Fatalf("iter %d: robust %s worst %.2f, its slowest shown median is %.2f", iter, r.Algorithm, r.WorstMedianNs, worst)
			}
			if c != nil && (r.WorstMedianNs < fastest || r.Algorithm == c.Algorithm && r.WorstMedianNs < c.MedianNs) {
				t.Fatalf("iter %d: robust %s (worst %.2f) beside best %s %.2f, fastest %.2f", iter, r.Algorithm, r.WorstMedianNs, c.Algorithm, c.MedianNs, fastest)
			}
		}
	}
}

// TestRobustConsistentWithBest is a reported case: NormalizedNs once made
// robust report "central (worst 134 ns)" beside a best of 135 ns. Robust
// reports shown medians only, and best's algorithm is its own robust
// choice when it is fastest everywhere.
func TestRobustConsistentWithBest(t *testing.T) {
	a, b := []int{0, 1}, []int{0, 2}
	ms := []results.Measurement{m("central", a, 135), m("central", b, 150), m("mcs", a, 140), m("mcs", b, 170)}
	ms[0].NormalizedNs, ms[1].NormalizedNs = 120, 134
	c, r := best(ms, nil), robust(ms)
	if c.Algorithm != "central" || c.MedianNs != 135 || r.Algorithm != "central" || r.WorstMedianNs != 150 || r.WorstLabel != "x" {
		t.Errorf("best %+v robust %+v: want central 135 and robust central (worst 150 ns)", c, r)
	}
	// An algorithm measured twice on one placement (two fan-ins) is still
	// measured on one placement of two: not robust.
	ms = []results.Measurement{m("central", a, 100), m("central", a, 101), m("mcs", a, 120), m("mcs", b, 130)}
	if r := robust(ms); r == nil || r.Algorithm != "mcs" || r.WorstMedianNs != 130 {
		t.Errorf("robust %+v: want mcs (worst 130), the only one on both placements", r)
	}
}
