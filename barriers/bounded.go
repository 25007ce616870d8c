package barriers

import (
	"runtime"
	"runtime/metrics"
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
// waker ran on the sleeper's own OS thread (threadID). Then, and on
// the kernel's evidence that this process's threads lose CPUs they want
// (see futile: competing processes, a CPU quota), the bound is
// dropped to none (a waiter yields once after one check of the flag,
// then blocks: the participants take turns on the thread). A
// sleeper woken from another thread restores the bound (doubling it from
// step): its partner runs elsewhere, and spinning pays again. A wait that
// ends within the first relax hints (the partner runs concurrently)
// lengthens a shortened bound by step/8, and with no bound, probes (see
// probeFirst) give a pair on one thread the chance to move apart.
//
// The bound in detail. A pinned thread can only sleep in the kernel; a
// goroutine that blocks is queued on its waker's thread, and the two take
// turns there, their work serialised, until a thread is woken to take one
// over. Spinning is checked against the clock every few microseconds, so a
// balanced episode on a quiet machine spins only, at Spin's speed: the
// signal is a release store (no fence) plus a load that finds no sleeper.
// For goroutines the bound drops to none on evidence that spinning is
// futile right now, read when a wait runs out its bound: the machine has
// more runnable tasks than CPUs and than this process accounts for (one
// reading, see evidence.crowded); a waiter's thread waited for a CPU a
// quarter of the time or more over the last milliseconds (the kernel's
// run delay: competing processes, a CPU quota);
// goroutines waiting for a P at that moment (runtime/metrics; for that
// wait only); or a sleeper was woken by a partner that ran on its own OS
// thread. With no bound a goroutine yields once and blocks, so the
// participants take turns on the threads that do run, as a blocking
// barrier's do. A pinned thread's evidence never drops the bound (blocking
// would give its CPU to no participant). The bound comes back when the
// evidence ends (50 ms after it), through wake-ups from other threads,
// quick waits and probes (every 64th wait and rarer, a block that wakes an
// idle thread so that a pair sharing one can move apart again).
//
// A long wait alone never shortens the bound: on a quiet machine a host
// that stops a virtual CPU for longer than the bound makes one wait block,
// and the partner's next wait then lasts one wake-up. Halving the bound
// there (as this code once did) made that next wait block too, and the
// blocks fed each other down to no spinning at all for the rest of the
// run (figures: docs/lab/barriers-comments.md).

// Clock reads while spinning: the first after clockFirst relax hints (a
// balanced episode finishes before and never reads the clock), then every
// clockEvery (a read costs about as much as a relax hint). clockFirst
// outlasts a balanced episode even where one cache-line transfer is slow:
// with fewer hints, waits that outlasted them read the clock and made
// AutoPolicy measurably slower than Spin (figures:
// docs/lab/barriers-comments.md). The first read still comes within a
// few microseconds, well inside the smallest bound a waiter spins for
// (twice minBlockWake).
const (
	clockFirst = 64
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

// quickSpin is how many times a waiter whose bound is 0 checks the flag
// before waitBounded: once, with no relax hint. With no bound the partner
// is queued on this waiter's thread (the pair shares one) or waits for a
// CPU (spinning is futile), and every relax hint delays it: with more
// checks, the tight loop of two goroutines ran slower than a sync.Cond
// barrier (figures: docs/lab/barriers-comments.md).
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

// Futility evidence (see adaptive.futile): how a waiter tells that
// spinning is futile right now, whatever the bound. The kernel keeps, per
// thread, the time it spent runnable but waiting for a CPU
// (osal.RunDelay): on a machine with more runnable threads than CPUs, or
// inside a CPU quota that throttles the process, a thread waits a large
// share of the time (about half with two competing processes on two
// CPUs), and a host that stops a virtual CPU is invisible to it (so a
// hiccup there is no evidence: see the note on long waits above). The
// process's own threads preempting each other (a thread the Go runtime
// wakes for a goroutine made runnable can take its waker's CPU for a few
// µs) add a share of about 1% here. An earlier rule took any growth of
// the process's involuntary context switches as evidence: those grow with
// such wake-ups too (3,000-9,000 a second in a two-goroutine sync.Cond
// loop on a quiet machine), so a quiet stencil's goroutines, once they
// took turns on one thread, made the evidence that kept them there, and
// lost their lead over sync.Cond. A waiter reads it only when
// its wait ran out its bound, at most every sampleGap; a thread that waited contendedShare of a window of
// minWindow to evidenceWindow since its last reading makes every wait of
// the barrier block without spinning (or take turns, see waitBounded) for
// busyHold after it.
const (
	sampleGap      = 100 * time.Microsecond
	minWindow      = time.Millisecond
	evidenceWindow = 50 * time.Millisecond
	busyHold       = 50 * time.Millisecond
	contendedShare = 0.25
)

// Waiter classes (adaptive.class): what blocking costs the waiters of a
// barrier, learned at its first block (osal.ThreadPinned).
const (
	classUnknown   = iota
	classGoroutine // an unlocked goroutine: parks in the Go scheduler
	classPinned    // a locked thread pinned on one CPU: sleeps in the kernel
)

// adaptive is one barrier's spin bound, in ns, and the evidence it adapts
// to. The bound is at most twice the block and wake-up cost of a thread
// (blockWake, kernel below), for every waiter:
//
//   - a pinned thread can only sleep in the kernel, and the wait after a
//     block is one wake-up long. Twice, because spinning for its median
//     alone ran out half the time here.
//   - a goroutine that blocks is made runnable on its waker's thread, and
//     the two then take turns on that thread, their work between waits
//     serialised, until an idle thread is woken to take one over (a
//     kernel wake-up) or a probe separates them. Its block costs the
//     kernel's wake-up too, plus the turns taken meanwhile: with twice a
//     goroutine's park and ready as its bound (as this code once had) a
//     quiet two-goroutine stencil lost its pair to one thread at every
//     longer wait and ran slower than a sync.Cond barrier; with the
//     kernel's bound it runs as Spin does (figures:
//     docs/lab/barriers-comments.md). What made the short bound look
//     necessary, spinning long while the partner waits for a CPU on a
//     busy machine, is what the evidence is for: then the bound is 0.
//
// It is 0 while spinning is futile: while the participants share an OS
// thread (see woke), and while the evidence says the process's threads
// wait for CPUs (busyUntil, see futile). It is written only when it
// changes: never on a quiet machine, where it stays at kernel.
//
// It fills exactly one cache-line pair, so the allocator's 128-byte size
// class puts it on one of its own: its line is read by every wait and must
// not be one that a neighbouring object writes.
type adaptive struct {
	limit  atomic.Int64
	kernel int64 // twice the block and wake-up cost: the ceiling
	step   int64
	waits  atomic.Int64 // waits past quickSpin with no bound since the last probe
	probe  atomic.Int64 // such waits between probes (see probeFirst)
	// The futility evidence: when it was last read (osal.Nanotime, 0 for
	// never), the threads' readings, until when spinning is futile.
	sampled   atomic.Int64
	ev        *evidence
	busyUntil atomic.Int64
	waiting   func() uint64 // runnableGoroutines; tests replace it
	// handover is when a setter last woke a sleeper (osal.Nanotime).
	handover atomic.Int64
	class    atomic.Int32
	// outnumbered counts the waits that did not spin because the
	// process's waiters outnumbered its CPUs (see sharing); tests read it.
	outnumbered atomic.Int32
	_           [osal.CacheLinePad - 88]byte
}

// newAdaptive returns the bound of a barrier whose waiters block at
// blockWake (a thread's block and wake-up cost).
func newAdaptive(blockWake time.Duration) *adaptive {
	a := &adaptive{kernel: 2 * int64(blockWake), step: max(int64(blockWake)/16, int64(time.Microsecond)),
		ev: &evidence{delay: osal.RunDelay, crowd: osal.Crowded, own: runningGoroutines}, waiting: runnableGoroutines}
	a.limit.Store(a.kernel)
	a.probe.Store(probeFirst)
	now := osal.Nanotime()
	a.sampled.Store(now)
	a.busyUntil.Store(now - 2*int64(busyHold)) // no evidence yet (see spinFor)
	return a
}

// learn sets the barrier's waiter class from the calling waiter, about to
// block for the first time (osal.ThreadPinned): the evidence is never
// read for pinned threads (see futile).
func (a *adaptive) learn(pinned bool) {
	if pinned {
		a.class.Store(classPinned)
		return
	}
	a.class.Store(classGoroutine)
}

// futile reports whether spinning is futile at now (osal.Nanotime): a
// waiter's thread waited for a CPU contendedShare of the time (see
// evidence.contended) within busyHold. Only a wait that ran out its
// bound (spunOut) reads the evidence, when the last read is sampleGap old
// or more, and it also asks the Go scheduler at the same reads: goroutines that wait for a P (runnableGoroutines) want the one
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
	if last := a.sampled.Load(); spunOut && now-last >= int64(sampleGap) && a.sampled.CompareAndSwap(last, now) {
		if a.ev.contended(now) {
			a.busyUntil.Store(now + int64(busyHold))
		}
		if now >= a.busyUntil.Load() && a.waiting() > 0 {
			return true
		}
	}
	return now < a.busyUntil.Load()
}

// evidence is the futility evidence's memory: each thread's last reading
// of its run delay (see contended), and where the machine's count of
// runnable tasks comes from.
type evidence struct {
	mu    sync.Mutex
	delay func() (tid int, ns int64)    // osal.RunDelay; tests replace it
	crowd func() (runnable, online int) // osal.Crowded; tests replace it
	own   func() uint64                 // runningGoroutines; tests replace it
	seen  [4]threadDelay                // by thread id, modulo 4
}

// threadDelay is a thread's reading: when, and its run delay then.
type threadDelay struct {
	tid  int
	t, d int64
}

// contended reports whether the CPUs are contended at now
// (osal.Nanotime): the machine has more runnable tasks right now than its
// CPUs and this process account for (crowded), or the calling thread's
// run delay says that, since
// the same thread's reading at least minWindow and at most evidenceWindow
// before, it waited for a CPU contendedShare of the time or more. For the
// run delay, a reading younger than minWindow stays the baseline (over
// microseconds one preemption by the process's own woken thread is a
// large share); an older one, another thread's, or none starts a new
// baseline and says no. A system that says neither is never contended.
func (e *evidence) contended(now int64) bool {
	if e.crowded() {
		return true
	}
	tid, d := e.delay()
	if d < 0 {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := &e.seen[uint(tid)%uint(len(e.seen))]
	age := now - s.t
	same := s.tid == tid && d >= s.d && age >= 0
	if same && age < int64(minWindow) {
		return false
	}
	busy := same && age <= int64(evidenceWindow) && float64(d-s.d) >= contendedShare*float64(age)
	*s = threadDelay{tid: tid, t: now, d: d}
	return busy
}

// crowded reports whether the machine has more runnable tasks than this
// process can account for and more than it has CPUs online, each with one
// to spare: one reading, so a spun-out wait judges at once, where the run
// delay needs a baseline first and a drop of the bound forgets it. This
// process accounts for its goroutines running on a P plus one thread (one
// the runtime woke to look for work, or its monitor): on a quiet 2-CPU
// machine a spun-out wait of a two-goroutine stencil read 1-3 runnable
// tasks, beside two CPU-bound processes 3-7, mostly 4-5 (and a later
// spun-out wait reads again). Host-wide, so a container confined to some
// CPUs of a crowded host counts the host's tasks: those contend for CPUs
// too, unless the container's cpuset keeps others off its CPUs, where
// the run delay then decides.
func (e *evidence) crowded() bool {
	if e.crowd == nil || e.own == nil {
		return false
	}
	r, c := e.crowd()
	return c > 0 && r > c+1 && uint64(r) > e.own()+1
}

// reset forgets every reading.
func (e *evidence) reset() {
	e.mu.Lock()
	e.seen = [len(e.seen)]threadDelay{}
	e.mu.Unlock()
}

// runnableGoroutines returns how many goroutines of this process wait for
// a P (runtime/metrics; a read allocates a little).
func runnableGoroutines() uint64 { return schedCount("/sched/goroutines/runnable:goroutines") }

// runningGoroutines returns how many goroutines of this process run on a
// P now, the caller included (runtime/metrics).
func runningGoroutines() uint64 { return schedCount("/sched/goroutines/running:goroutines") }

// schedCount reads one of the runtime's goroutine counts (0 if this Go
// does not have it).
func schedCount(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
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
// (from step) back towards kernel, and probes may come often again,
// unless the evidence says spinning is futile (busy): then the bound
// stays 0.
func (a *adaptive) woke(limit int64, sameThread, busy bool) {
	cur := a.limit.Load()
	if sameThread || busy {
		if p := a.probe.Load(); sameThread && limit > 0 && p < probeMax {
			a.probe.Store(2 * p)
		}
		if cur != 0 {
			a.drop()
		}
		return
	}
	if a.probe.Load() != probeFirst {
		a.probe.Store(probeFirst)
	}
	if next := min(max(2*cur, a.step), a.kernel); next != cur {
		a.limit.Store(next)
	}
}

// drop sets the bound to 0: the participants take turns (see woke). The
// evidence's readings taken before start no window (evidence.reset): one
// that spans turns taken on one thread measures the process's own
// threads, which then preempt each other (a thread the runtime wakes for
// a goroutine made runnable takes its waker's CPU): the quiet stencil's
// threads waited for a CPU over a quarter of such windows here.
func (a *adaptive) drop() {
	a.limit.Store(0)
	a.ev.reset()
}

// quick lengthens a shortened bound by step/8 after a wait that ended
// within the first relax hints: the partner runs on another CPU again, so
// spinning pays, unless the evidence says the CPUs are contended.
func (a *adaptive) quick(limit int64) {
	if limit < a.kernel && !a.busy(osal.Nanotime()) {
		a.limit.Store(min(limit+a.step/8, a.kernel))
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
		// With no spin at all, most waits sleep: arm the flag (see sleep).
		v, _ := f.sleep(target, eq, w.budget == 0)
		return v
	}
	a := w.adapt
	limit := a.limit.Load()
	if limit == 0 {
		return f.waitTurns(target, eq, a)
	}
	start := osal.Nanotime()
	cpus := runCPUs(start)
	defer sharing.waiting.Add(-1)
	if sharing.waiting.Add(1) > cpus {
		return f.waitOutnumbered(target, eq, a)
	}
	limit = a.spinFor(limit, start)
	for i := 1; ; i++ { // the clock was read on entry: next after clockEvery
		osal.Relax()
		if v := f.v.Load(); reached(v, target, eq) {
			f.disarm()
			return v
		}
		if i%clockEvery == 0 {
			if sharing.waiting.Load() > cpus {
				return f.waitOutnumbered(target, eq, a)
			}
			if now := osal.Nanotime(); now-start >= limit {
				if a.futile(now, true) {
					a.drop()
				}
				break
			}
		}
	}
	return f.block(target, eq, a, limit)
}

// waitTurns is waitBounded with no bound: the participants take turns on
// the threads that run (spinning is futile, or the pair shares one
// thread). A goroutine yields once, before anything else: with competing
// work this is the wait nearly every episode takes, and the partner it
// waits for is as often as not queued on this very P, so the yield's
// goroutine switch is the whole wait. It reads no clock and counts
// nothing process-wide on the way: two clock reads a wait (the sharing
// check's and the evidence's) were 43% of the waiters' CPU time in a CPU
// profile of two goroutines beside two CPU-bound processes, and Auto
// read 1.0-1.1x a sync.Cond barrier there against the goroutine
// algorithm's 0.65x (figures: docs/lab/2026-11-28-sharing-go.md). Every
// probe-th wait (see probeFirst) looks at the evidence first: while it
// says the CPUs are contended there is no probe (no idle thread would
// come), and the count starts again; else it is a probe. A pinned
// thread never yields (its yield would hand its P to another thread): it
// counts toward the probe and sleeps.
func (f *flag) waitTurns(target uint64, eq bool, a *adaptive) uint64 {
	pinned := a.class.Load() == classPinned
	limit := int64(0)
	if a.waits.Add(1) >= a.probe.Load() {
		a.waits.Store(0)
		if !a.futile(osal.Nanotime(), false) {
			// A probe: a block whose wake-up wakes an idle thread (see
			// probeFirst), with the bound back: the partner's wait after
			// the handover spins for the kernel's bound, while that
			// thread takes one of them over.
			a.limit.Store(a.kernel)
			pinned = true // no yield: the probe blocks
		}
	}
	if !pinned {
		runtime.Gosched()
		if v := f.v.Load(); reached(v, target, eq) {
			return v
		}
	}
	defer sharing.waiting.Add(-1)
	sharing.waiting.Add(1)
	return f.block(target, eq, a, limit)
}

// block is the end of a bounded wait that spun for limit (0: it did not
// spin): it sleeps until released and adapts the bound to how it was
// woken (adaptive.woke).
func (f *flag) block(target uint64, eq bool, a *adaptive, limit int64) uint64 {
	if a.class.Load() == classUnknown {
		a.learn(osal.ThreadPinned())
	}
	v, waker := f.sleep(target, eq, limit == 0)
	a.woke(limit, waker != 0 && waker == threadID(), a.busy(osal.Nanotime()))
	return v
}

// sharing is the process's count of waiters past their first checks
// (inside waitBounded, spinning or asleep), over every AutoPolicy barrier
// of the process: while it exceeds the CPUs the process runs at once
// (runCPUs), some waiter's partner has no CPU, and a waiter that spins
// holds one that a partner needs. Like the results cache and wakeCost it
// is package-level state, the one that is not a cached fact: a count
// that only AutoPolicy's slow path writes, alone on its cache-line pair.
var sharing struct {
	_       [osal.CacheLinePad]byte
	waiting atomic.Int32
	// cpus is runCPUs's reading and at the osal.Nanotime of procsAt.
	cpus   atomic.Int32
	cpusAt atomic.Int64
	_      [osal.CacheLinePad - 16]byte
}

// cpusRefresh is how old runCPUs's reading may get: GOMAXPROCS takes the
// scheduler's lock, and reading it at every wait past the first checks
// made unpinned goroutines beside competing work slower (their waits
// queued on that lock); a program that changes GOMAXPROCS
// is seen within this.
const cpusRefresh = 10 * time.Millisecond

// runCPUs returns how many CPUs this process runs at once: GOMAXPROCS,
// and no more than osal.Usable (the CPUs it was allowed at start within
// its cgroup's cpuset and quota), as read within cpusRefresh of now
// (osal.Nanotime).
func runCPUs(now int64) int32 {
	if c := sharing.cpus.Load(); c > 0 && now-sharing.cpusAt.Load() < int64(cpusRefresh) {
		return c
	}
	c := int32(min(runtime.GOMAXPROCS(0), osal.Usable()))
	sharing.cpus.Store(c)
	sharing.cpusAt.Store(now)
	return c
}

// waitOutnumbered is a wait that found the process's waiters outnumbering
// its CPUs (sharing): it does not spin. A goroutine yields once (a partner
// queued on its P runs now), then it sleeps; a pinned thread sleeps at
// once. The barrier's bound is left as it is: the crowd is the process's,
// not this barrier's, and it may end with the next episode.
func (f *flag) waitOutnumbered(target uint64, eq bool, a *adaptive) uint64 {
	a.outnumbered.Add(1)
	if a.class.Load() != classPinned {
		runtime.Gosched()
		if v := f.v.Load(); reached(v, target, eq) {
			return v
		}
	}
	v, _ := f.sleep(target, eq, true)
	return v
}

// wakeCost holds the cost AutoPolicy's bound starts from: the block and
// wake-up cost when no results file records one, estimated once per
// process at the first construction that needs it. Besides the results
// cache (auto.go), the wait policy's reading (envPolicy) and the count
// of waiters (sharing), it is the package's only mutable state.
type wakeCostCache struct {
	once sync.Once
	d    time.Duration
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

// blockWakeCost returns the block and wake-up cost for AutoPolicy's
// bound: the one the check recorded in the results file Auto reads, else
// an estimate measured once per process; kept within 5-200 µs.
func blockWakeCost() time.Duration {
	if d := recordedBlockWake(); d > 0 {
		return min(max(d, minBlockWake), maxBlockWake)
	}
	return wakeCost.get()
}
