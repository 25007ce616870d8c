package main

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/results"
)

// tieFraction is the check's tolerance (check.TieFraction): the simplest
// algorithm within it of the fastest wins.
const tieFraction = 0.03

// A rule picks an algorithm from one thread count's measurements by one
// statistic: the fastest by it, then the simplest (catalog order) within
// tieFraction of that. stat returns NaN where the measurement lacks it.
type rule struct {
	name string
	stat func(results.Measurement) float64
}

// rules are the statistics compared: the shown median (what the check
// ranks by: paired with the floor in one host state since results v1.3),
// the raw pooled median (what ranked before v1.3), the floor-normalised
// median of every round, the mean without outliers and the minimum (both
// paired where the shown median is).
var rules = []rule{
	{"median (shown)", func(m results.Measurement) float64 { return m.MedianNs }},
	{"raw median (pre-v1.3)", func(m results.Measurement) float64 {
		if m.RawMedianNs > 0 {
			return m.RawMedianNs
		}
		return m.MedianNs
	}},
	{"normalized_ns (old)", func(m results.Measurement) float64 {
		if m.NormalizedNs > 0 {
			return m.NormalizedNs
		}
		return math.NaN()
	}},
	{"mean", func(m results.Measurement) float64 {
		if m.MeanNs > 0 {
			return m.MeanNs
		}
		return math.NaN()
	}},
	{"min", func(m results.Measurement) float64 { return m.MinNs }},
}

// pick applies r to ms: the chosen algorithm, "" when nothing is valid.
func (r rule) pick(ms []results.Measurement) string {
	ok := func(m results.Measurement) bool { return !m.Dropped && m.Reps > 0 && !math.IsNaN(r.stat(m)) }
	fastest := math.Inf(1)
	for _, m := range ms {
		if ok(m) {
			fastest = min(fastest, r.stat(m))
		}
	}
	win, rank := "", math.MaxInt
	for _, m := range ms {
		if ok(m) && r.stat(m) <= fastest*(1+tieFraction) {
			if k := slices.Index(catalog.Names(), m.Algorithm); k < rank {
				win, rank = m.Algorithm, k
			}
		}
	}
	return win
}

// regret is the truth's median of alg over the truth's fastest median
// (1: the pick is the true best); NaN when the truth lacks alg.
func regret(truth map[string]float64, alg string) float64 {
	t, ok := truth[alg]
	if !ok {
		return math.NaN()
	}
	best := math.Inf(1)
	for _, v := range truth {
		best = min(best, v)
	}
	return t / best
}

// summary is the median, worst and share within 5% of regrets (NaNs left
// out), and how many were counted.
type summary struct {
	median, worst, within5 float64
	n                      int
}

func summarise(rs []float64) summary {
	var v []float64
	for _, r := range rs {
		if !math.IsNaN(r) {
			v = append(v, r)
		}
	}
	if len(v) == 0 {
		return summary{median: math.NaN(), worst: math.NaN(), within5: math.NaN()}
	}
	sort.Float64s(v)
	med := v[len(v)/2]
	if len(v)%2 == 0 {
		med = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	in := 0
	for _, r := range v {
		if r <= 1.05 {
			in++
		}
	}
	return summary{median: med, worst: v[len(v)-1], within5: float64(in) / float64(len(v)), n: len(v)}
}

func (s summary) String() string {
	return fmt.Sprintf("median %.3f, worst %.3f, within 5%% in %.0f%% of %d", s.median, s.worst, 100*s.within5, s.n)
}

// The regret targets (docs/results.md).
const (
	floorFraction = 0.8  // no winner below this fraction of its file's floor
	nearRegret    = 1.10 // "within 10% of the truth's best"
	nearShare     = 0.9  // ... in at least 9 of 10 checks
	worstRegret   = 1.15 // the worst regret allowed
)

// verdicts are the targets' lines, each "PASS" or "FAIL" with the
// figures: xfloor and picks are each check's "x floor" and regret (NaN
// where unknown: no floor beside the placement, or the truth lacks the
// pick, which counts as a failure of the second and third).
func verdicts(xfloor, picks []float64) []string {
	below := 0
	for _, x := range xfloor {
		if x < floorFraction {
			below++
		}
	}
	near, worst, unknown := 0, 0.0, 0
	for _, r := range picks {
		switch {
		case math.IsNaN(r):
			unknown++
		case r <= nearRegret:
			near++
		}
		if !math.IsNaN(r) {
			worst = max(worst, r)
		}
	}
	n := len(picks)
	need := int(math.Ceil(nearShare*float64(n) - 1e-9))
	verdict := func(ok bool) string {
		if ok {
			return "PASS"
		}
		return "FAIL"
	}
	return []string{
		fmt.Sprintf("%s no winner below %.1fx its file's floor: %d of %d below", verdict(below == 0), floorFraction, below, len(xfloor)),
		fmt.Sprintf("%s winner within %.0f%% of the truth's best in at least %d of %d: %d", verdict(near >= need && n > 0), 100*(nearRegret-1), need, n, near),
		fmt.Sprintf("%s worst regret <= %.2f: %.3f%s", verdict(unknown == 0 && worst <= worstRegret && n > 0), worstRegret, worst, unknownNote(unknown)),
	}
}

func unknownNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d checks without a winner or a truth of the pick)", n)
}
