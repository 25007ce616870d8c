package barriers

import (
	"errors"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/internal/wake"
)

// AutoPolicy's bounded spinning (see AutoPolicy): spin for about what
// blocking costs the waiter at hand (twice it: see adaptive), then block.
// This is competitive spinning (Karlin, Li, Manasse & Owicki 1991):
// whatever the wait, it costs at most a small multiple (2 spinning for
// the cost, 3 for twice it) of what the better of "spin" and "block at
// once" would have, as long as the partner runs independently of the
// waiter.
//
// On a busy machine it may not: the scheduler queues a woken goroutine on
// its waker's P, and when no other thread gets a CPU to steal it, the
// waker's next wait spins for the whole bound while the partner it waits
// for sits behind it; only blocking (or yielding) lets the partner run.
// The two goroutines then share one OS thread, as those of a blocking
// barrier do, and spinning only delays them. A sleeper can tell: the
// waker ran on the sleeper's own OS thread (osal.ThreadID). Then, and on
// the kernel's evidence that this process's threads lose CPUs they want
// (see futile: competing processes, a CPU quota; issue 24), the bound is
// dropped to none (a waiter yields once after one check of the flag,
// then blocks: the participants take turns on the thread). A
// sleeper woken from another thread restores the bound (doubling it from
// step): its partner runs elsewhere, and spinning pays again. A wait that
// ends within the first relax hints (the partner runs concurrently)
// lengthens a shortened bound by step/8, and with no bound, probes (see
// probeFirst) give a pair on one thread the chance to move apart.
//
// A long wait alone never shortens the bound: on a quiet machine a host
// that stops a virtual CPU for longer than the bound makes one wait block,
// and the partner's next wait then lasts one wake-up. Halving the bound
// there (as this code once did) made that next wait block too, and the
// blocks fed each other down to no spinning at all: 2-3x slower episodes
// on two pinned threads for the rest of the run.

// Clock reads while spinning: the first after clockFirst relax hints (a
// balanced episode finishes before and never reads the clock), then every
// clockEvery (a read costs 20-130 ns here, a relax hint 20-90 ns).
const (
	clockFirst = 16
	clockEvery = 64
)

// Bounds on the block and wake-up cost, whether measured or recorded: a
// machine that measured more was busy while it measured, and spinning
// longer than maxBlockWake is never worth it.
const (
	minBlockWake     = 5 * time.Microsecond
	maxBlockWake     = 200 * time.Microsecond
	defaultBlockWake = 50 * time.Microsecond // when it cannot be measured
)

// sleepRecheck is how many relax hints a waiter that has announced itself
// as a sleeper keeps checking the flag before it blocks (see flag.sleep).
const sleepRecheck = 2

// quickSpin is how many times a waiter whose bound is 0 checks the flag
// before waitBounded: once, with no relax hint. With no bound the partner
// is queued on this waiter's thread (the pair shares one) or waits for a
// CPU (spinning is futile), and every relax hint (about 50 ns on this
// Xeon) delays it: with 4 of them, the tight loop of two goroutines read
// 217-241 ns per episode against 162-164 with none (interleaved, load
// 7 here), a sync.Cond barrier 192-207.
const quickSpin = 1

// Probes: with no bound, the probe-th wait past quickSpin restores the
// bound and blocks without yielding first. Yielding keeps two participants
// that share a thread on it: the scheduler wakes an idle thread for a
// goroutine made runnable by a wake-up, never for one that yielded, so on
// a quiet machine they would stay on one CPU for good (seen here: two
// goroutines that met first on their spawner's thread, every wait ending in
// a yield for 20,000 steps). The probe's wake-up wakes an idle thread, and
// with the bound back its partner spins while that thread takes one of
// them over. On a busy machine no thread comes, the partner's spin runs
// out and the bound drops again; each failed probe doubles the waits to
// the next, from probeFirst to probeMax, so probes cost little there, and
// a sleeper woken from another thread (they are apart) resets it.
const (
	probeFirst = 64
	probeMax   = 1 << 16
)

// Backstop timeouts of a sleeper (see flag.sleep): the first, doubled on
// every timeout up to the last.
const (
	backstopFirst = time.Millisecond
	backstopMax   = 64 * time.Millisecond
)

// Futility evidence (see adaptive.futile): how a waiter tells that
// spinning is futile right now, whatever the bound. The kernel counts the
// times it took a CPU from this process's threads while they could still
// run (osal.InvoluntarySwitches): on a machine with more runnable threads
// than CPUs, or inside a CPU quota that throttles the process, it grows
// every scheduler time slice, and a host that stops a virtual CPU is
// invisible to it (so a hiccup there is no evidence: see the note on
// long waits above). It also grows when the Go runtime's own threads
// preempt each other, as they do on a quiet machine (3,000-9,000 a second
// in a two-goroutine sync.Cond loop here, 4,000-42,000 with two competing
// processes): goroutines then take turns on one thread there too, which
// is faster than spinning for a tight loop on this host and costs a
// stencil its lead over sync.Cond (docs/algorithms.md). A waiter reads
// it only on slow paths (a wait that ran out its bound, a wait with no
// bound), at most every sampleGap; a growth seen over at most
// evidenceWindow makes every wait of the barrier block without spinning
// (or take turns, see waitBounded) for busyHold after it.
const (
	sampleGap      = 100 * time.Microsecond
	evidenceWindow = 50 * time.Millisecond
	busyHold       = 50 * time.Millisecond
)

// Waiter classes (adaptive.class): what blocking costs the waiters of a
// barrier, learned at its first block (osal.ThreadPinned).
const (
	classUnknown   = iota
	classGoroutine // an unlocked goroutine: parks in the Go scheduler
	classPinned    // a locked thread pinned on one CPU: sleeps in the kernel
)

// adaptive is one barrier's spin bound, in ns, and the evidence it adapts
// to. The bound is at most the ceiling of the barrier's waiters:
//
//   - for goroutines (until a sleeper is found pinned), twice what a
//     goroutine's park and ready cost here (handoffCost: about a
//     sync.Cond barrier's episode, 0.1-1 µs), never the kernel's block
//     and wake-up cost. A goroutine that blocks leaves its thread to
//     other goroutines, and the participant that wakes it runs it on its
//     own thread as soon as it waits itself, so its wake-up costs a
//     goroutine switch, not a thread's wake-up; spinning for the kernel's
//     cost (100 µs here on a busy machine) lost up to 300x against a
//     sync.Cond barrier (issue 24). Spinning is still checked against
//     the clock every clockEvery relax hints (1-6 µs), so a balanced
//     episode on a quiet machine never blocks.
//   - for pinned threads, twice the block and wake-up cost (blockWake):
//     such a thread can only sleep in the kernel, and the wait after a
//     block is one wake-up long. Twice, because spinning for its median
//     alone ran out half the time here.
//
// It is 0 while spinning is futile: while the participants share an OS
// thread (see woke), and while the evidence says the process's threads
// want more CPU than they get (busyUntil, see futile). It is written only
// when it changes: never on a quiet machine, where it stays at the
// ceiling.
//
// It fills exactly one cache-line pair, so the allocator's 128-byte size
// class puts it on one of its own: its line is read by every wait and must
// not be one that a neighbouring object writes.
type adaptive struct {
	limit   atomic.Int64
	ceiling atomic.Int64 // goroutine's or kernel's, by class
	kernel  int64        // twice the block and wake-up cost
	step    int64
	waits   atomic.Int64 // waits past quickSpin with no bound since the last probe
	probe   atomic.Int64 // such waits between probes (see probeFirst)
	// The futility evidence: when involuntary switches were last read
	// (osal.Nanotime, 0 for never) and their count then; until when
	// spinning is futile.
	sampled   atomic.Int64
	switches  atomic.Int64
	busyUntil atomic.Int64
	count     func() int64  // osal.InvoluntarySwitches; tests replace it
	waiting   func() uint64 // runnableGoroutines; tests replace it
	// handover is when a setter last woke a sleeper (osal.Nanotime).
	handover atomic.Int64
	class    atomic.Int32
	_        [osal.CacheLinePad - 100]byte
}

// newAdaptive returns the bound of a barrier whose waiters block at
// blockWake (a thread's block and wake-up cost) and hand off at handoff
// (a goroutine's park and ready).
func newAdaptive(blockWake, handoff time.Duration) *adaptive {
	a := &adaptive{kernel: 2 * int64(blockWake), step: max(int64(blockWake)/16, int64(time.Microsecond)),
		count: osal.InvoluntarySwitches, waiting: runnableGoroutines}
	g := min(2*int64(handoff), a.kernel)
	a.ceiling.Store(g)
	a.limit.Store(g)
	a.probe.Store(probeFirst)
	// The evidence's baseline: the first wait that runs out its bound,
	// often within milliseconds on a busy machine, can then tell.
	now := osal.Nanotime()
	a.sampled.Store(now)
	a.switches.Store(a.count())
	a.busyUntil.Store(now - 2*int64(busyHold)) // no evidence yet (see spinFor)
	return a
}

// learn sets the barrier's waiter class from the calling waiter, about to
// block for the first time (osal.ThreadPinned): a pinned thread's
// ceiling and bound are the kernel's.
func (a *adaptive) learn(pinned bool) {
	if pinned {
		a.ceiling.Store(a.kernel)
		a.limit.Store(a.kernel)
		a.class.Store(classPinned)
		return
	}
	a.class.Store(classGoroutine)
}

// futile reports whether spinning is futile at now (osal.Nanotime): the
// process's threads were preempted or throttled (involuntary switches
// grew) within busyHold. It reads the count when the last read is
// sampleGap old or more; a growth counts only over at most
// evidenceWindow, so one preemption long ago is no evidence. A wait that
// ran out its bound (spunOut) also asks the Go scheduler, at the same
// reads: goroutines that wait for a P (runnableGoroutines) want the one
// this waiter holds, perhaps the partner itself; that is evidence for
// this wait only (the bound drops, busy is not set: when they have run,
// wake-ups from other threads and probes bring it back).
//
// It is never futile for pinned threads: each has a CPU of its own, so
// one that blocks gives its CPU to no participant, and its partner, when
// preempted, waits for a CPU it cannot take; the kernel's bound keeps
// what it loses within twice what blocking would have cost.
func (a *adaptive) futile(now int64, spunOut bool) bool {
	if a.class.Load() == classPinned {
		return false
	}
	if last := a.sampled.Load(); now-last >= int64(sampleGap) && a.sampled.CompareAndSwap(last, now) {
		n := a.count()
		prev := a.switches.Swap(n)
		if n >= 0 && last != 0 && n > prev && now-last <= int64(evidenceWindow) {
			a.busyUntil.Store(now + int64(busyHold))
		}
		if spunOut && now >= a.busyUntil.Load() && a.waiting() > 0 {
			return true
		}
	}
	return now < a.busyUntil.Load()
}

// runnableGoroutines returns how many goroutines of this process wait for
// a P (runtime/metrics, about 50 ns and one small allocation a read).
func runnableGoroutines() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines/runnable:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// handedOver records that a setter woke a sleeper of the barrier: the
// goroutine woken is queued on the setter's P until an idle thread takes
// it over (about the block and wake-up cost, on a quiet machine) or the
// setter blocks. The setter's next wait, for that very goroutine as
// often as not, spins for the kernel's bound (see waitBounded): blocking
// at once would run the partner on this thread, and the pair would take
// turns on one thread, their computation serialised, until a probe moves
// them apart.
func (a *adaptive) handedOver() { a.handover.Store(osal.Nanotime()) }

// spinFor returns how long a wait that starts at now spins, given the
// bound limit (> 0): the kernel's bound just after a handover (within the
// kernel's bound of it) on a machine that has shown no evidence of
// contention for busyHold after the last (a busy machine's evidence can
// lapse between two time slices), else limit.
func (a *adaptive) spinFor(limit, now int64) int64 {
	if now-a.handover.Load() < a.kernel && now-a.busyUntil.Load() > int64(busyHold) {
		return max(limit, a.kernel)
	}
	return limit
}

// busy reports whether the last evidence (futile) still holds at now,
// without reading the count again.
func (a *adaptive) busy(now int64) bool {
	return now < a.busyUntil.Load() && a.class.Load() != classPinned
}

// woke adapts the bound after a wait that spun for limit and then had to
// block. When the waker ran on this waiter's own OS thread, the partner
// was queued behind it and spinning only delayed it: the bound drops to 0,
// and if this wait had spun (after a probe, the probe failed) the probes
// grow rarer. Else the partner runs elsewhere: a shortened bound doubles
// (from step) back towards the ceiling, and probes may come often again,
// unless the evidence says spinning is futile (busy): then the bound
// stays 0.
func (a *adaptive) woke(limit int64, sameThread, busy bool) {
	cur := a.limit.Load()
	if sameThread || busy {
		if p := a.probe.Load(); sameThread && limit > 0 && p < probeMax {
			a.probe.Store(2 * p)
		}
		if cur != 0 {
			a.limit.Store(0)
		}
		return
	}
	if a.probe.Load() != probeFirst {
		a.probe.Store(probeFirst)
	}
	if next := min(max(2*cur, a.step), a.ceiling.Load()); next != cur {
		a.limit.Store(next)
	}
}

// quick lengthens a shortened bound by step/8 after a wait that ended
// within the first relax hints: the partner runs on another CPU again, so
// spinning pays, unless the evidence says the CPUs are contended.
func (a *adaptive) quick(limit int64) {
	if c := a.ceiling.Load(); limit < c && !a.busy(osal.Nanotime()) {
		a.limit.Store(min(limit+a.step/8, c))
	}
}

// waitBounded is the rest of wait under AutoPolicy where the participants
// fit, after wait's first clockFirst relax hints (one check with a bound
// of 0): spin on, reading the clock, until the bound, then block; or spin
// w.budget relax hints when WithSpinBudget set one. A wait that runs out
// its bound looks at the evidence (futile): spinning futile, the bound
// drops to 0. With a bound of 0 a goroutine yields once, then blocks: a
// partner queued on this P runs at once, as with a blocking barrier,
// instead of waiting for another CPU (a pinned thread blocks at once: its
// yield would hand its P to another thread).
func (f *flag) waitBounded(target uint64, eq bool, w *waiter) uint64 {
	if w.adapt == nil { // WithSpinBudget: a count of relax hints
		for i := 0; i < w.budget; i++ {
			osal.Relax()
			if v := f.v.Load(); reached(v, target, eq) {
				return v
			}
		}
		v, _ := f.sleep(target, eq)
		return v
	}
	a := w.adapt
	limit := a.limit.Load()
	if limit > 0 {
		start := osal.Nanotime()
		limit = a.spinFor(limit, start)
		for i := clockFirst; ; i++ {
			osal.Relax()
			if v := f.v.Load(); reached(v, target, eq) {
				return v
			}
			if i%clockEvery == 0 {
				if now := osal.Nanotime(); now-start >= limit {
					if a.futile(now, true) {
						a.limit.Store(0)
					}
					break
				}
			}
		}
	} else if busy := a.futile(osal.Nanotime(), false); busy || a.waits.Add(1) < a.probe.Load() {
		// Yield once first: a partner queued on this P runs now, and if
		// it arrives the wait costs a goroutine switch, not a park and a
		// wake-up. No probes while busy: no idle thread would come.
		if a.class.Load() != classPinned {
			runtime.Gosched()
			if v := f.v.Load(); reached(v, target, eq) {
				return v
			}
		}
	} else {
		// A probe: a block whose wake-up wakes an idle thread (see
		// probeFirst), with the bound back: the partner's wait after the
		// handover spins for the kernel's bound, while that thread takes
		// one of them over.
		a.waits.Store(0)
		a.limit.Store(a.ceiling.Load())
	}
	if a.class.Load() == classUnknown {
		a.learn(osal.ThreadPinned())
	}
	v, same := f.sleep(target, eq)
	a.woke(limit, same, a.busy(osal.Nanotime()))
	return v
}

// sleep blocks until the flag reaches target (or is broken), for a
// waiter whose setters use a release store and then look for sleepers
// (set under AutoPolicy): no store-load fence on the setter's side, so a
// setter may read parked before the sleeper's increment is visible while
// its own store still sits in its store buffer. The sleeper covers that:
// after announcing itself it keeps checking the flag for sleepRecheck
// relax hints (a store buffer drains within that), and it blocks with a
// timeout (backstopFirst, doubling) after which it checks again, so a
// lost wake-up costs a bounded time, never a hang. sameThread reports
// that it blocked and the setter that woke it ran on the OS thread it
// runs on now (see adaptive.woke).
func (f *flag) sleep(target uint64, eq bool) (v uint64, sameThread bool) {
	f.mu.Lock()
	atomic.AddInt32(&f.parked, 1)
	v = f.v.Load()
	for i := 0; i < sleepRecheck && !reached(v, target, eq); i++ {
		osal.Relax()
		v = f.v.Load()
	}
	if !reached(v, target, eq) {
		// One timer per flag, made at its first sleep and re-armed after:
		// a sleep allocates nothing. Its firing wakes every sleeper of the
		// flag, and each checks again and re-arms it.
		d := backstopFirst
		if f.backstop == nil {
			f.backstop = time.AfterFunc(d, f.wakeAll)
		} else {
			f.backstop.Reset(d)
		}
		f.waker = 0
		for {
			f.cond.Wait()
			if v = f.v.Load(); reached(v, target, eq) {
				break
			}
			d = min(2*d, backstopMax)
			f.backstop.Reset(d)
		}
		if atomic.LoadInt32(&f.parked)&^fenced == 1 { // the last sleeper
			f.backstop.Stop()
		}
		sameThread = f.waker != 0 && f.waker == osal.ThreadID()
	}
	atomic.AddInt32(&f.parked, -1)
	f.mu.Unlock()
	return v, sameThread
}

// wakeAll wakes every sleeper of the flag (the backstop timer's wake-up:
// it names no waker).
func (f *flag) wakeAll() {
	f.mu.Lock()
	f.cond.Broadcast()
	f.mu.Unlock()
}

// wakeSleepers is a setter's wake-up of the flag's sleepers. With record
// (AutoPolicy's sleepers; Park's never adapt) it records the OS thread it
// runs on, for the sleepers' adaptive bound (see sleep).
func (f *flag) wakeSleepers(record bool) {
	tid := 0
	if record {
		tid = osal.ThreadID()
	}
	f.mu.Lock()
	f.waker = tid
	f.cond.Broadcast()
	f.mu.Unlock()
}

// wakeCost holds the costs AutoPolicy's bound starts from: the block and
// wake-up cost when no results file records one, estimated once per
// process at the first construction that needs it, and a goroutine's
// handoff cost, likewise. Besides the results cache (auto.go), it is the
// package's only mutable state.
type wakeCostCache struct {
	once, handoffOnce sync.Once
	d, handoff        time.Duration
}

var wakeCost wakeCostCache

func (c *wakeCostCache) get() time.Duration {
	c.once.Do(func() {
		c.d = defaultBlockWake
		if d, err := wake.BlockWake(16, 5*time.Millisecond); err == nil {
			c.d = min(max(d, minBlockWake), maxBlockWake)
		}
	})
	return c.d
}

// Bounds on a goroutine's handoff cost (see handoffCost).
const (
	minHandoff     = 100 * time.Nanosecond
	maxHandoff     = 5 * time.Microsecond
	defaultHandoff = time.Microsecond // when it cannot be measured
)

// handoffCost returns a goroutine's park and ready cost here, measured
// once per process (measureHandoff), kept within 0.1-5 µs.
func (c *wakeCostCache) handoffCost() time.Duration {
	c.handoffOnce.Do(func() {
		c.handoff = defaultHandoff
		if d, err := measureHandoff(200, 2*time.Millisecond); err == nil {
			c.handoff = min(max(d, minHandoff), maxHandoff)
		}
	})
	return c.handoff
}

// measureHandoff measures what a goroutine that blocks costs when the
// goroutine that wakes it blocks right after, as a barrier's participants
// do: two goroutines take turns through unbuffered channels, each send
// readying the other and each receive parking the sender. It returns the
// median one-way handoff over batches of rounds/8 round trips, or an
// error when limit ran out before 3 batches.
func measureHandoff(rounds int, limit time.Duration) (time.Duration, error) {
	rounds = min(max(rounds, 24), 8000)
	batch := rounds / 8
	ping, pong := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range ping {
			pong <- struct{}{}
		}
	}()
	deadline := osal.Nanotime() + int64(limit)
	var samples []float64
	for b := 0; b < 8 && osal.Nanotime() < deadline; b++ {
		t0 := osal.Nanotime()
		for i := 0; i < batch; i++ {
			ping <- struct{}{}
			<-pong
		}
		samples = append(samples, float64(osal.Nanotime()-t0)/float64(2*batch))
	}
	close(ping)
	<-done
	if len(samples) < 3 {
		return 0, errors.New("goroutine handoff cost: the time limit ran out before 3 batches")
	}
	slices.Sort(samples)
	return time.Duration(samples[len(samples)/2]), nil
}

// blockWakeCost returns the block and wake-up cost for AutoPolicy's
// bound: the one the check recorded in the results file Auto reads, else
// an estimate measured once per process; kept within 5-200 µs.
func blockWakeCost() time.Duration {
	if d := recordedBlockWake(); d > 0 {
		return min(max(d, minBlockWake), maxBlockWake)
	}
	return wakeCost.get()
}
