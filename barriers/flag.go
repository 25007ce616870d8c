package barriers

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/barriertune/barriertune/osal"
)

// waiter holds a barrier's waiting policy and spin budget.
type waiter struct {
	policy Policy // Spin, Yield or Park (never Auto)
	budget int
}

// flag is an episode word that one participant sets and others await. It
// holds the number of the latest episode it was set for; waiters wait until
// it reaches theirs, so it never needs resetting. It fills two cache lines.
//
// Parking is lost-wakeup free: set stores the value and then loads parked;
// a waiter increments parked (under mu) and then loads the value. Go's
// atomics are sequentially consistent, so one of the two sees the other.
type flag struct {
	flagFields
	_ [osal.CacheLinePad - unsafe.Sizeof(flagFields{})%osal.CacheLinePad]byte
}

type flagFields struct {
	v      atomic.Uint64
	parked atomic.Int32
	mu     sync.Mutex
	cond   sync.Cond
}

// word returns the flag's value word without touching memory. Taking
// &f.v would make the compiler emit a nil check that loads the line: a
// line the waiting participant owns while it spins, so the load costs a
// whole extra cache-line transfer (30 ns here) before every signal. The
// conversion of f itself needs no check; v is at offset 0 (see
// TestFlagLayout).
func (f *flag) word() *uint64 { return (*uint64)(unsafe.Pointer(f)) }

// set publishes episode e and wakes parked waiters. Under Spin and Yield no
// waiter ever parks, so a release store suffices (no store-load fence).
func (f *flag) set(e uint64, w *waiter) {
	if w.policy != Park {
		osal.StoreRelease(f.word(), e)
		return
	}
	atomic.StoreUint64(f.word(), e)
	f.wake()
}

// or sets bits (MCS's packed child flags) and wakes parked waiters.
func (f *flag) or(bits uint64) {
	f.v.Or(bits)
	f.wake()
}

// and clears the bits outside mask and wakes parked waiters.
func (f *flag) and(mask uint64) {
	f.v.And(mask)
	f.wake()
}

func (f *flag) wake() {
	if f.parked.Load() != 0 {
		f.mu.Lock()
		f.cond.Broadcast()
		f.mu.Unlock()
	}
}

// await returns once the flag has reached episode e.
func (f *flag) await(e uint64, w *waiter) { f.wait(e, false, w) }

// awaitEq returns once the flag equals v exactly.
func (f *flag) awaitEq(v uint64, w *waiter) { f.wait(v, true, w) }

func reached(v, target uint64, eq bool) bool {
	if eq {
		return v == target
	}
	return v >= target
}

func (f *flag) wait(target uint64, eq bool, w *waiter) {
	if reached(f.v.Load(), target, eq) {
		return
	}
	if w.policy == Spin {
		for !reached(f.v.Load(), target, eq) {
			osal.Relax()
		}
		return
	}
	for i := 0; i < w.budget; i++ {
		osal.Relax()
		if reached(f.v.Load(), target, eq) {
			return
		}
	}
	if w.policy == Yield {
		for !reached(f.v.Load(), target, eq) {
			runtime.Gosched()
		}
		return
	}
	f.mu.Lock()
	f.parked.Add(1)
	for !reached(f.v.Load(), target, eq) {
		f.cond.Wait()
	}
	f.parked.Add(-1)
	f.mu.Unlock()
}

// newFlags returns n flags ready for use.
func newFlags(n int) []flag {
	fs := make([]flag, n)
	for i := range fs {
		fs[i].cond.L = &fs[i].mu
	}
	return fs
}

// slot is a participant's private episode counter, padded.
type slot struct {
	e uint64
	_ osal.Pad
}
