package check

import (
	"github.com/barriertune/barriertune/cmd/internal/measure"
)

// How a tie was found, as Choice.TieRule records it (show and export
// print it). Both name the shown statistic, the median: ranking, margin
// and tie all use the medians the table prints.
const (
	// TieWithin: the runner-up's median is within TieFraction (3%) of the
	// fastest median. Among the algorithms within 3% the simplest wins
	// (catalog order, catalog.Names(): central first, the blocking
	// baselines last), then the lower median: simpler algorithms have
	// fewer shared lines and fewer rounds to go wrong on another day, and
	// two runs on one machine then name the same winner. The margin is
	// then between -3% and +3%.
	TieWithin = "within 3%: the runner-up's median is within 3% of the fastest, and the simplest algorithm (catalog order) within 3% wins"
	// TieNotSeparable: the runner-up is more than 3% slower, but the
	// significance test (Mann-Whitney U on the two measurements' samples,
	// p >= measure.Alpha) cannot tell them apart. The fastest median
	// still wins: a tie never names as best a measurement more than 3%
	// slower than the fastest shown.
	TieNotSeparable = "not separable by the test: the runner-up is more than 3% slower, but a Mann-Whitney U test on the samples cannot tell them apart (p >= 0.05); the fastest wins"
)

// within reports whether median is within TieFraction of the fastest
// median: such a measurement may win for simplicity.
func within(fastest, median float64) bool {
	return median <= fastest*(1+TieFraction)
}

// separable reports whether the significance test tells the two sets of
// samples apart (Mann-Whitney U, p < measure.Alpha); false when either set
// is missing, as nothing then shows a difference beyond the tolerance.
func separable(a, b []float64) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	return measure.Compare(a, b).Significant
}

// scoringSamples are the samples behind a measurement's shown median (all
// passes pooled), for the significance test of a tie.
type scoringSamples struct {
	raw []float64
}
