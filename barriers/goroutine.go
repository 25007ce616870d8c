package barriers

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/barriertune/barriertune/internal/osal"
)

// goroutineBarrier is the barrier for plain goroutines, above all for more
// goroutines than GOMAXPROCS. There every waiter must leave its P to the
// goroutines still to arrive, and a barrier's cost is the scheduler's: at
// least one goroutine switch per waiter per episode (docs/algorithms.md,
// "Goroutines"). It keeps that cost down:
//
//   - No mutex on the way through. A participant arrives with one atomic
//     add and waits on the episode word; the condition variables are only
//     for participants that park (see bed), and the releaser's Broadcast
//     finds nobody to wake with two loads, so an episode where nobody
//     parks takes no lock at all.
//   - No allocation per episode, unlike a closed channel per episode.
//   - Before it parks, a waiter that has arrived spins for its budget
//     (none under AutoPolicy) and yields its P a bounded number of times
//     (measured, see goroutineYields): the goroutines still to arrive then
//     run first, and if they all arrive before the yield returns, the
//     waiter never parks and nobody has to wake it, so an episode costs one
//     yield per goroutine instead of a park and a wakeup.
//
// The episode and the broken mark share one word, so breaking the barrier
// and releasing an episode exclude each other.
type goroutineBarrier struct {
	n      int
	spin   int // relax-hint iterations before yielding (-1: spin until released)
	yields int // runtime.Gosched calls before parking (-1: never park)
	_      osal.Pad
	// arrived counts the current episode's arrivals.
	arrived atomic.Int64
	_       osal.Pad
	// state is episode<<1 | broken: the number of episodes released and
	// whether the barrier is broken.
	state atomic.Uint64
	_     osal.Pad
	// beds[e&1] is where participants of episode e park: all of one
	// bed's sleepers are of the same episode, since episode e+2 begins
	// only after every participant has left episode e.
	beds [2]bed
	// yieldScore rates the recent yields: up when a waiter's yields
	// outlasted the episode (it never parked), down by yieldPenalty when
	// it had to park anyway (the yields were wasted). Below zero, waiters
	// park at once and each raises it by one, so yielding is retried.
	yieldScore atomic.Int64
	// entered counts each participant's episodes, for Episodes.
	entered []slot
}

// bed is a condition variable whose Locker is the sleeper's last check:
// Cond.Wait takes the sleeper's wakeup ticket, then calls Unlock, which,
// if the episode it parks for is already over (released or broken),
// broadcasts so that Wait returns at once. A releaser stores the state and
// then broadcasts, and Broadcast first compares the tickets taken with the
// tickets notified (all of these sequentially consistent atomics): either
// the releaser sees the sleeper's ticket and its Broadcast covers it, or
// the sleeper sees the new state. When nobody parked since the last
// Broadcast, Broadcast is those two loads and nothing else, so the releaser
// needs no count of sleepers. No mutex: a woken participant goes on at
// once, without re-taking a lock the others queue on.
type bed struct {
	cond sync.Cond
	// expect is the state the sleepers wait to change.
	expect atomic.Uint64
	g      *goroutineBarrier
	_      osal.Pad
}

// Lock is called when Cond.Wait returns; there is nothing to lock.
func (b *bed) Lock() {}

// Unlock wakes the sleeper at once if its episode is over.
func (b *bed) Unlock() {
	if b.g.state.Load() != b.expect.Load() {
		b.cond.Broadcast()
	}
}

const (
	yieldScoreMax = 64
	yieldPenalty  = 4
)

// goroutineYields is how often a waiter yields its P before it parks under
// AutoPolicy, as long as yielding pays (see yieldScore): measured with
// BenchmarkGoroutineTuning (docs/algorithms.md, "Goroutines"). One yield
// is enough when the goroutines still to arrive are runnable (each of them
// runs once before the yielder runs again), and more than one loses with
// two or more Ps, where every yield takes the scheduler's global lock
// against the other Ps. AutoPolicy does not spin (unless WithSpinBudget
// asks): a woken goroutine runs on its waker's P, so once any waiter has
// parked, a spinning waiter holds the P that the goroutine it waits for is
// queued on.
const goroutineYields = 1

// errGoroutineBroken is wait's report of a broken barrier; Wait and
// WaitContext turn it into the package's errors wrapping ErrBroken.
var errGoroutineBroken = ErrBroken

func newGoroutine(n int, opts ...Option) (Barrier, error) {
	b, err := newBase(n, opts)
	if err != nil {
		return nil, err
	}
	c := configOf(opts)
	g := alone[goroutineBarrier]()
	g.n, g.spin = n, b.w.budget
	switch {
	case c.policy == AutoPolicy:
		g.spin, g.yields = max(c.budget, 0), goroutineYields
	case c.policy == Spin:
		g.spin, g.yields = -1, 0
	case c.policy == Yield:
		g.yields = -1
	}
	g.entered = make([]slot, n)
	for i := range g.beds {
		g.beds[i].g = g
		g.beds[i].cond.L = &g.beds[i]
	}
	return g, nil
}

// N implements Barrier.
func (g *goroutineBarrier) N() int { return g.n }

// Wait implements Barrier. It panics with an error wrapping the broken
// barrier error when the barrier is broken.
func (g *goroutineBarrier) Wait(id int) {
	if err := g.wait(nil, id); err != nil {
		panicBroken(id) // without a context, the only error is a break
	}
}

// WaitContext implements Barrier: it returns nil when the episode
// completes, ctx.Err() when ctx ends first (which breaks the barrier), and
// an error wrapping the broken barrier error when the barrier is or
// becomes broken.
func (g *goroutineBarrier) WaitContext(ctx context.Context, id int) error {
	err := g.wait(ctx, id)
	if err == errGoroutineBroken {
		return brokenError(id)
	}
	return err
}

func (g *goroutineBarrier) wait(ctx context.Context, id int) error {
	if uint(id) >= uint(g.n) {
		badID(id, g.n)
	}
	s := g.state.Load()
	if s&1 != 0 {
		return errGoroutineBroken
	}
	target := s>>1 + 1
	atomic.StoreUint64(&g.entered[id].e, g.entered[id].e+1)
	if ctx != nil && ctx.Done() != nil {
		if err := ctx.Err(); err != nil {
			g.breakEpisode(target)
			return err
		}
		broke := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			g.breakEpisode(target)
			close(broke)
		})
		// Return only once the breaker is stopped or done: a breaker
		// still running after the return could break the barrier after
		// a Reset.
		defer func() {
			if !stop() {
				<-broke
			}
		}()
	}
	if traceOn {
		traceWrite(&g.arrived)
	}
	if g.arrived.Add(1) == int64(g.n) {
		if traceOn {
			traceSaw(&g.arrived)
			traceWrite(&g.state)
		}
		g.release(s)
	} else {
		if traceOn {
			traceWait(&g.state)
		}
		if !g.released(s) {
			g.sleep(s)
		}
	}
	s = g.state.Load()
	if s>>1 >= target {
		if traceOn {
			traceSaw(&g.state)
		}
		return nil
	}
	if ctx != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return errGoroutineBroken
}

// release ends the episode that state s began, unless the barrier broke,
// and wakes the sleepers.
func (g *goroutineBarrier) release(s uint64) {
	g.arrived.Store(0)
	for s&1 == 0 && !g.state.CompareAndSwap(s, s+2) {
		s = g.state.Load()
	}
	g.beds[s>>1&1].cond.Broadcast()
}

// wake wakes every parked participant.
func (g *goroutineBarrier) wake() {
	g.beds[0].cond.Broadcast()
	g.beds[1].cond.Broadcast()
}

// released spins and yields for the budgets while state is still s, and
// reports whether it changed (a release or a break).
func (g *goroutineBarrier) released(s uint64) bool {
	for i := 0; i != g.spin; i++ {
		if g.state.Load() != s {
			return true
		}
		osal.Relax()
	}
	if g.state.Load() != s {
		return true
	}
	if g.yields == 0 {
		return false
	}
	if g.yields > 0 && g.yieldScore.Load() < 0 {
		g.yieldScore.Add(1)
		return false
	}
	for i := 0; i != g.yields; i++ {
		runtime.Gosched()
		if g.state.Load() != s {
			if g.yields > 0 && g.yieldScore.Load() < yieldScoreMax {
				g.yieldScore.Add(1)
			}
			return true
		}
	}
	g.yieldScore.Add(-yieldPenalty)
	return false
}

// sleep parks until state is no longer s (see bed).
func (g *goroutineBarrier) sleep(s uint64) {
	b := &g.beds[s>>1&1]
	if b.expect.Load() != s {
		b.expect.Store(s) // once per episode, not once per sleeper
	}
	for g.state.Load() == s {
		b.cond.Wait()
	}
}

// breakEpisode breaks the barrier unless episode target is already over.
func (g *goroutineBarrier) breakEpisode(target uint64) {
	for {
		s := g.state.Load()
		if s&1 != 0 || s>>1 >= target {
			return
		}
		if g.state.CompareAndSwap(s, s|1) {
			g.wake()
			return
		}
	}
}

// Break implements Barrier: it marks the barrier broken and wakes every
// waiting participant; their Wait panics and WaitContext returns an error.
func (g *goroutineBarrier) Break() {
	g.state.Or(1)
	g.wake()
}

// Reset implements Barrier: it repairs a broken barrier, returning it to
// its state when new. Call it only when no participant waits.
func (g *goroutineBarrier) Reset() {
	g.arrived.Store(0)
	g.state.Store(0)
	g.yieldScore.Store(0)
	for i := range g.entered {
		atomic.StoreUint64(&g.entered[i].e, 0)
	}
}

// Episodes returns how many episodes participant id has entered since
// construction or the last Reset (0 for an id out of range). Any goroutine
// may call it.
func (g *goroutineBarrier) Episodes(id int) uint64 {
	if uint(id) >= uint(g.n) {
		return 0
	}
	return atomic.LoadUint64(&g.entered[id].e)
}
