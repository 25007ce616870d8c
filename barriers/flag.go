package barriers

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/internal/spin"
)

// waiter holds a barrier's waiting policy and spin budget.
type waiter struct {
	// policy is Spin, Yield, Park or bounded (AutoPolicy where the
	// participants fit: spin for a bounded time, then block).
	policy Policy
	// budget is Yield's and Park's relax hints; under bounded, -1 for the
	// time bound in adapt, else a count of relax hints (WithSpinBudget).
	budget int
	adapt  *adaptive // bounded only: the barrier's adaptive time bound
}

// flag is an episode word that one participant sets and others await. It
// holds the number of the latest episode it was set for; waiters wait until
// it reaches theirs, so it never needs resetting. It fills four cache
// lines (two pairs): the value alone on the first, the sleepers' fields
// from the second on. A setter loads parked right after its store to v:
// on the value's line that load waits for the line to come back from the
// waiter spinning on it (the store alone retires into the store buffer),
// and values 128 bytes apart (the next flag's) still slowed each other.
// With parked on the second line and 256 bytes a flag, a two-thread
// dissemination barrier runs as a C one (figures:
// docs/lab/barriers-comments.md).
//
// Its sleep (sleep.go) is lost-wakeup free by construction.
type flag struct {
	flagFields
	_ [2*osal.CacheLinePad - unsafe.Sizeof(flagFields{})]byte
}

type flagFields struct {
	v      atomic.Uint64
	_      [osal.CacheLinePad/2 - 8]byte // v alone on its line
	parked int32                         // atomic
	mu     sync.Mutex
	cond   sync.Cond
	// wakeups counts the times a sleeper of this flag came back from
	// cond.Wait (the tests' count of wake-ups); guarded by mu.
	wakeups int
	// waker is the OS thread of the setter that last woke the sleepers
	// (threadID; 0 for none or unknown); guarded by mu.
	waker uintptr
}

// word returns the flag's value word without touching memory. Taking
// &f.v would make the compiler emit a nil check that loads the line: a
// line the waiting participant owns while it spins, so the load costs a
// whole extra cache-line transfer before every signal. The
// conversion of f itself needs no check; v is at offset 0 (see
// TestFlagLayout).
func (f *flag) word() *uint64 { return (*uint64)(unsafe.Pointer(f)) }

// set publishes episode e and wakes parked waiters. Under Spin and Yield no
// waiter ever parks, so a release store suffices (no store-load fence).
// Under AutoPolicy (bounded) it is the release store, then a load that
// finds no sleeper unless a waiter blocked: no fence on this side; the
// sleeper's heavy fence (flag.sleep) orders this store before this load
// as far as the sleeper can tell. Under Park, and under AutoPolicy where
// that fence is unavailable, parked carries fenced and setSlow fences.
func (f *flag) set(e uint64, w *waiter) {
	if traceOn { // a constant: without the barriertrace tag, no code and no inlining cost
		traceWrite(f)
	}
	spin.StoreRelease(f.word(), e)
	if atomic.LoadInt32(&f.parked) != 0 { // never under Spin and Yield
		f.setSlow(w)
	}
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
	if w.policy == bounded {
		if a := w.adapt; a != nil { // a time bound (WithSpinBudget sets none)
			// Spin's loop for the first relax hints, here rather than
			// in waitBounded: a balanced episode ends within them, and
			// the call slowed a tree's round trip measurably.
			// On a quiet machine the bound is whole (the kernel's), a
			// quick wait has nothing to lengthen, and the loop is Spin's
			// with a count: the check for a shortened bound on the way
			// out cost a two-thread dissemination barrier 2-3% of Spin's
			// episode in the EPYC guest's intermediate state; the count
			// costs nothing measurable (docs/lab/2026-11-27-host-states-epyc.md). With no
			// bound, quickSpin checks, the one above included.
			if lim := a.limit.Load(); lim == a.kernel {
				for i := clockFirst - 1; i > 0; i-- {
					if v := f.v.Load(); reached(v, target, eq) {
						return v
					}
					osal.Relax()
				}
			} else {
				n := clockFirst - 1
				if lim == 0 {
					n = quickSpin - 1
				}
				for i := n; i > 0; i-- {
					if v := f.v.Load(); reached(v, target, eq) {
						f.disarm()
						a.quick(a.limit.Load())
						return v
					}
					osal.Relax()
				}
			}
		}
		return f.waitBounded(target, eq, w)
	}
	if w.policy == Spin {
		// A relax hint after every check, never a run of bare checks:
		// a signal that arrives during a relax hint waits for it to end,
		// but bare checks cost more where the line comes back. The
		// waiter's loads queue on the line the setter wants to own, and
		// leaving a bare loop on a changed line flushes the loads in
		// flight; the barrier's episode then costs the transfer plus that
		// (docs/lab/2026-11-27-host-states-epyc.md gives the figures). AutoPolicy's first
		// checks have the same shape.
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
	atomic.AddInt32(&f.parked, 1)
	v := f.v.Load()
	for !reached(v, target, eq) {
		f.cond.Wait()
		f.wakeups++
		v = f.v.Load()
	}
	atomic.AddInt32(&f.parked, -1)
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

// getm is the runtime's: it returns the address of the M (the runtime's
// record of an OS thread) the calling goroutine runs on. The runtime
// keeps it reachable by linkname for the packages that use it
// (go.dev/issue/67401).
//
//go:linkname getm runtime.getm
func getm() uintptr

// threadID identifies the OS thread the calling goroutine runs on (never
// 0): its M, which is one OS thread for its whole life. It costs a load,
// where the thread's id from the kernel (gettid, osal.ThreadID) is a
// system call, 1.5-1.8 us in the AMD EPYC guest, and AutoPolicy paid two
// per wake-up (the setter's record, the sleeper's comparison: see
// adaptive.woke).
func threadID() uintptr { return getm() }

// slot is a participant's private episode counter, padded.
type slot struct {
	e uint64
	_ osal.Pad
}
