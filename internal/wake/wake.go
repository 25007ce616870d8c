// Package wake measures what blocking costs a waiting participant on this
// machine: the block and wake-up cost that the check records in the
// results file (block_wake_ns) and that the barriers package estimates
// in-process when no file records one. AutoPolicy's spin bound for locked
// threads starts from it.
package wake

import (
	"errors"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/barriertune/barriertune/internal/osal"
)

// BlockWake measures what blocking costs a waiting participant
// here: the time from the moment another goroutine releases it until a
// goroutine that blocked on a channel runs again, while the releaser keeps
// its own CPU busy (as a participant that goes on computing does), so the
// wake-up includes the scheduler finding an idle CPU for it. Each of
// rounds handoffs (at least 3, at most 1001) blocks for about 50 µs first,
// so that the idle CPU's thread is asleep, as it is when a wait is long.
// It returns the median, or an error when GOMAXPROCS is 1 (a waiter then
// never spins) or when limit (wall time) ran out before 3 handoffs.
func BlockWake(rounds int, limit time.Duration) (time.Duration, error) {
	if runtime.GOMAXPROCS(0) < 2 {
		return 0, errors.New("block and wake-up cost: GOMAXPROCS is 1 (want 2 or more: with one, a waiter never spins)")
	}
	rounds = min(max(rounds, 3), 1001)
	const settle = 50 * time.Microsecond
	deadline := osal.Nanotime() + int64(limit)
	var samples []float64
	for r := 0; r < rounds && osal.Nanotime() < deadline; r++ {
		ch := make(chan struct{})
		var blocked atomic.Bool
		var woke atomic.Int64
		done := make(chan struct{})
		go func() {
			blocked.Store(true)
			<-ch
			woke.Store(osal.Nanotime())
			close(done)
		}()
		for !blocked.Load() {
			runtime.Gosched()
		}
		for t := osal.Nanotime(); osal.Nanotime()-t < int64(settle); {
			osal.Relax()
		}
		t0 := osal.Nanotime()
		close(ch)
		// Keep this CPU busy, as a participant does, for up to 2 ms; then
		// yield (the woken goroutine may be queued on this P).
		for i := 0; woke.Load() == 0; i++ {
			osal.Relax()
			if i%64 == 0 && osal.Nanotime()-t0 > int64(2*time.Millisecond) {
				runtime.Gosched()
			}
		}
		<-done
		samples = append(samples, float64(woke.Load()-t0))
	}
	if len(samples) < 3 {
		return 0, errors.New("block and wake-up cost: the time limit ran out before 3 handoffs")
	}
	slices.Sort(samples)
	return time.Duration(samples[len(samples)/2]), nil
}
