package barriers

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/barriertune/barriertune/internal/spin"
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
	if traceOn { // a constant: without the barriertrace tag, no code and no inlining cost
		traceWrite(f)
	}
	if w.policy == Park {
		f.setPark(e)
		return
	}
	spin.StoreRelease(f.word(), e)
}

// setPark is set under Park: a sequentially consistent store, then a
// check for sleepers.
//
//go:noinline
func (f *flag) setPark(e uint64) {
	atomic.StoreUint64(f.word(), e)
	f.wake()
}

// or sets bits (MCS's packed child flags) and wakes parked waiters.
func (f *flag) or(bits uint64) {
	if traceOn {
		traceWrite(f)
	}
	f.v.Or(bits)
	f.wake()
}

// and clears the bits outside mask and wakes parked waiters.
func (f *flag) and(mask uint64) {
	if traceOn {
		traceWrite(f)
	}
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

// brokenValue is the sentinel Break stores in every flag: it satisfies
// every ">= episode" wait, and its top bit (brokenBit), which MCS's
// packed-bit and/or updates never clear, ends every exact wait. A waiter
// leaves its loop with no extra load; it then tests the value it saw.
const (
	brokenValue = ^uint64(0)
	brokenBit   = uint64(1) << 63
)

// await returns once the flag has reached episode e (true) or the barrier
// broke (false). The fast check inlines (cost 80: keep it that small). It
// may use f.v: the waiter loads its own flag's line anyway, so the nil
// check that word avoids costs nothing here.
func (f *flag) await(e uint64, w *waiter) bool {
	if traceOn { // traced: every wait goes where the observation is recorded
		return f.awaitSlow(e, w)
	}
	if f.v.Load()-e < brokenBit-e { // e <= v < brokenBit, one compare
		return true
	}
	return f.awaitSlow(e, w)
}

//go:noinline
func (f *flag) awaitSlow(e uint64, w *waiter) bool {
	ok := f.wait(e, false, w)&brokenBit == 0
	if traceOn && ok {
		traceSaw(f)
	}
	return ok
}

// awaitEq returns once the flag equals v exactly (true) or the barrier
// broke (false).
func (f *flag) awaitEq(v uint64, w *waiter) bool {
	ok := f.wait(v, true, w)&brokenBit == 0
	if traceOn {
		if ok {
			traceSaw(f)
		}
	}
	return ok
}

func reached(v, target uint64, eq bool) bool {
	if eq {
		return v == target || v&brokenBit != 0
	}
	return v >= target
}

// wait returns the first value it sees that reaches target (or is broken).
func (f *flag) wait(target uint64, eq bool, w *waiter) uint64 {
	if v := f.v.Load(); reached(v, target, eq) {
		return v
	}
	if traceOn {
		traceWait(f)
	}
	if w.policy == Spin {
		for {
			if v := f.v.Load(); reached(v, target, eq) {
				return v
			}
			osal.Relax()
		}
	}
	for i := 0; i < w.budget; i++ {
		osal.Relax()
		if v := f.v.Load(); reached(v, target, eq) {
			return v
		}
	}
	if w.policy == Yield {
		for {
			if v := f.v.Load(); reached(v, target, eq) {
				return v
			}
			runtime.Gosched()
		}
	}
	f.mu.Lock()
	f.parked.Add(1)
	v := f.v.Load()
	for !reached(v, target, eq) {
		f.cond.Wait()
		v = f.v.Load()
	}
	f.parked.Add(-1)
	f.mu.Unlock()
	return v
}

// breakFlag stores the sentinel and wakes every parked waiter.
func (f *flag) breakFlag() {
	f.v.Store(brokenValue)
	f.mu.Lock()
	f.cond.Broadcast()
	f.mu.Unlock()
}

// resetFlag returns the flag to its initial value; nobody may wait on it.
func (f *flag) resetFlag() { f.v.Store(0) }

// slot is a participant's private episode counter, padded.
type slot struct {
	e uint64
	_ osal.Pad
}
