package check

import (
	"time"

	"github.com/barriertune/barriertune/internal/wake"
	"github.com/barriertune/barriertune/results"
)

// Measuring the block and wake-up cost (issue 18): barriers.AutoPolicy
// spins about as long as blocking and a wake-up cost on this machine, then
// blocks; the check measures that cost and records it in the results file
// (results.File.BlockWakeNs), where Auto reads it.
const (
	// wakeRounds is how many handoffs the median is taken over.
	wakeRounds = 101
	// wakeLimit bounds the measurement (about 10 ms on an idle machine).
	wakeLimit = 100 * time.Millisecond
)

// recordBlockWake measures the block and wake-up cost
// (wake.BlockWake) and records it in f. With GOMAXPROCS 1, or
// when the time runs out before 3 handoffs, it records nothing: Auto then
// estimates the cost itself.
func recordBlockWake(f *results.File) {
	if f == nil {
		return
	}
	if d, err := wake.BlockWake(wakeRounds, wakeLimit); err == nil {
		f.BlockWakeNs = float64(d)
	}
}
