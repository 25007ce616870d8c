package check

import (
	"slices"

	"github.com/barriertune/barriertune/barriers"
)

// Goroutines outnumbering the CPUs are the library's everyday case (a
// program starts 4 or 8 goroutines on a 2-CPU machine), and there every
// algorithm's cost is the Go scheduler's, not the CPU tree's: the check
// measures it instead of leaving those counts to the nearest
// measured one. Such a count is measured as programs run it: plain
// goroutines, unpinned, with AutoPolicy (the plan's "oversubscribed
// round-robin" placement, measure.Barriers' unpinned team).

// OversubscribedThreadCounts returns the thread counts above the npus PUs
// that a default check measures: twice and four times npus (at most
// barriers.MaxParticipants).
func OversubscribedThreadCounts(npus int) []int {
	npus = max(npus, 1)
	var out []int
	for _, f := range [...]int{2, 4} { // the multiples of the PUs measured
		if t := f * npus; t <= barriers.MaxParticipants {
			out = append(out, t)
		}
	}
	return out
}

// WithOversubscribedCounts returns counts with OversubscribedThreadCounts
// (npus) added, sorted, each once.
func WithOversubscribedCounts(counts []int, npus int) []int {
	out := append(slices.Clone(counts), OversubscribedThreadCounts(npus)...)
	slices.Sort(out)
	return slices.Compact(out)
}
