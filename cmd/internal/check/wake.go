package check

import (
	"time"
)

// Measuring the block and wake-up cost: barriers.AutoPolicy
// spins about as long as blocking and a wake-up cost on this machine, then
// blocks; the live check measures that cost (Hardware.BlockWake) and
// records it in the results file (results.File.BlockWakeNs), where Auto
// reads it.
const (
	// wakeRounds is how many handoffs the median is taken over.
	wakeRounds = 101
	// wakeLimit bounds the measurement (about 10 ms on an idle machine).
	wakeLimit = 100 * time.Millisecond
)
