package barriers

import (
	"sync/atomic"

	"github.com/barriertune/barriertune/internal/osal"
)

// A flag's sleep: how a waiter blocks on a flag and how a setter wakes it,
// under Park and under AutoPolicy once its bound runs out (the bound that
// decides when to sleep is bounded.go's).
//
// Sleeping is lost-wakeup free by construction (the contract per policy
// is in the package documentation): a setter stores the value and then
// loads parked; a sleeper increments parked (under mu), and then loads
// the value. Something must order each side's store before its load:
// under Park the setter's read-modify-write of parked (setSlow); under
// AutoPolicy the sleeper's osal.HeavyFence (membarrier), which runs a
// full barrier on every running thread of the process, the setter
// included, so the setter keeps its plain store and load (where the
// kernel has no membarrier, AutoPolicy's flags are fenced as Park's).
// Then either the setter sees the sleeper and wakes it (under mu, so
// after it waits), or the sleeper sees the value and does not sleep.

// fenced marks the sleeper count (flag.parked) of a flag whose setters
// must fence: its barrier waits under Park, or under AutoPolicy where
// osal.HeavyFence is unavailable. Its setters always take setSlow, which
// orders their store before their check for sleepers, and its sleepers
// need no heavy fence. Sleepers count in the bits below.
const fenced = 1 << 30

// setSlow is the rest of set under Park (a store-load fence, then a
// check for sleepers) and, under the other policies, the wake-up of the
// sleepers set found. Under AutoPolicy's time bound the wake-up is
// recorded as a handover (see adaptive.handedOver).
//
//go:noinline
func (f *flag) setSlow(w *waiter) {
	// With fenced, a sequentially consistent read-modify-write orders
	// the store before the load of the sleeper count (LOCK XADD on
	// amd64), as sleepers that take no heavy fence need.
	if p := atomic.AddInt32(&f.parked, 0); p&^fenced != 0 {
		f.wakeSleepers(w.policy == bounded)
		if a := w.adapt; a != nil {
			a.handedOver()
		}
	}
}

// wake wakes the flag's sleepers after a read-modify-write of its value
// (or, and), which is a full fence.
func (f *flag) wake() {
	// A read-modify-write (or, and) came first: a full fence.
	if p := atomic.LoadInt32(&f.parked); p&^fenced != 0 {
		f.wakeSleepers(true)
	}
}

// sleep blocks until the flag reaches target (or is broken), for a
// waiter under AutoPolicy, whose setters use a release store and then
// look for sleepers with a plain load (set): no store-load fence on their
// side. The sleeper supplies it: after announcing itself (parked) it
// takes the heavy side of an asymmetric fence (osal.HeavyFence), and only
// then checks the flag. A setter whose store the check misses had not yet
// made it visible when the fence ran its barrier, so its load of parked
// comes after that barrier and sees the sleeper; it wakes the sleeper
// under mu, which the sleeper holds until it waits. So the sleeper
// wakes once, when released: no timeout, no lost wake-up. A flag marked
// fenced needs no heavy fence: its setters fence.
//
// A heavy fence interrupts every CPU that runs a thread of the process
// (microseconds in a guest), so a flag whose waiters sleep on most
// episodes (arm: the bound is 0, WithSpinBudget(0), or the process's
// waiters outnumber its CPUs; a heavy fence at every wait costs several
// times Park's episode) is armed instead: the sleeper sets fenced, then takes the heavy
// fence once, and until the flag is disarmed its setters fence (a locked
// add, tens of ns) and its sleepers skip the heavy fence. That is safe: a
// later sleeper takes mu after the arming sleeper's fence returned, and a
// setter whose load came after that fence's barrier sees fenced, one whose
// load came before it made its store visible by then. A wait that ends
// spinning, or a sleep with a bound, disarms the flag (disarm) when no
// sleeper is announced.
// waker is the OS thread (threadID) of the setter that woke it, 0 when
// it did not block or the setter did not record one.
func (f *flag) sleep(target uint64, eq, arm bool) (v uint64, waker uintptr) {
	f.mu.Lock()
	if atomic.AddInt32(&f.parked, 1)&fenced == 0 {
		if arm {
			atomic.OrInt32(&f.parked, fenced)
		}
		osal.HeavyFence()
	}
	v = f.v.Load()
	if !reached(v, target, eq) {
		f.waker = 0
		for {
			f.cond.Wait()
			f.wakeups++
			if v = f.v.Load(); reached(v, target, eq) {
				break
			}
		}
		waker = f.waker
	}
	atomic.AddInt32(&f.parked, -1)
	if !arm {
		f.disarm()
	}
	f.mu.Unlock()
	return v, waker
}

// disarm clears an AutoPolicy flag's fenced mark (see sleep) when no
// sleeper is announced and the heavy fence is available (else its
// setters must always fence: see base.ready). A sleeper that announces
// itself after the clear sees no mark and takes the heavy fence.
func (f *flag) disarm() {
	if atomic.LoadInt32(&f.parked) == fenced && osal.HeavyFenceAvailable() {
		atomic.CompareAndSwapInt32(&f.parked, fenced, 0)
	}
}

// wakeSleepers is a setter's wake-up of the flag's sleepers. With record
// (AutoPolicy's sleepers; Park's never adapt) it records the OS thread
// it runs on, for the sleepers' adaptive bound (see sleep, threadID).
func (f *flag) wakeSleepers(record bool) {
	var m uintptr
	if record {
		m = threadID()
	}
	f.mu.Lock()
	f.waker = m
	f.cond.Broadcast()
	f.mu.Unlock()
}
