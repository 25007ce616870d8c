package barriers

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/barriertune/barriertune/osal"
)

// goroutineBarrier is the barrier for plain goroutines, above all for more
// goroutines than GOMAXPROCS. There every waiter must leave its P to the
// goroutines still to arrive, and a barrier's cost is the scheduler's: a
// park and a wakeup per waiter per episode (docs/algorithms.md,
// "Goroutines"). It keeps that cost down:
//
//   - No mutex. A participant arrives with one atomic add, done inside
//     sync.Cond.Wait after Wait has taken the participant's wakeup ticket
//     (the Cond's Locker is the arrival itself). The last arrival's
//     Broadcast therefore covers every ticket of the episode: no lost
//     wakeup, and no mutex to hand between goroutines after the wakeup,
//     which the textbook sync.Cond barrier pays for twice per participant.
//   - No allocation per episode, unlike a closed channel per episode.
//   - Before it parks, a waiter that has arrived spins for its budget
//     (none under AutoPolicy) and yields its P a bounded number of times
//     (measured: once, while that keeps paying off): the
//     goroutines still to arrive then run first, and if they all arrive
//     before the yield returns, the waiter never parks and nobody has to
//     wake it, so an episode costs one yield per goroutine instead of a
//     park and a wakeup.
//
// The episode and the broken mark share one word, so breaking the barrier
// and releasing an episode exclude each other.
type goroutineBarrier struct {
	n      int
	spin   int // relax-hint iterations before yielding (-1: spin until released)
	yields int // runtime.Gosched calls before parking (-1: never park)
	_      osal.Pad
	// cond's ticket counters are written by every Wait: a line of their
	// own, away from the read-only fields above.
	cond sync.Cond
	_    osal.Pad
	// arrived counts the current episode's arrivals.
	arrived atomic.Int64
	_       osal.Pad
	// state is episode<<1 | broken: the number of episodes released and
	// whether the barrier is broken.
	state atomic.Uint64
	_     osal.Pad
	// yieldScore rates the recent yields: up when a waiter's yields
	// outlasted the episode (it never parked), down by yieldPenalty when
	// it had to park anyway (the yields were wasted). Below zero, waiters
	// park at once and each raises it by one, so yielding is retried.
	yieldScore atomic.Int64
	// entered counts each participant's episodes, for Episodes.
	entered []slot
}

const (
	yieldScoreMax = 64
	yieldPenalty  = 4
)

// goroutineYields is how often a waiter yields its P before it parks under
// AutoPolicy, as long as yielding pays (see yieldScore): measured with
// BenchmarkGoroutineTuning (docs/algorithms.md, "Goroutines"). AutoPolicy
// does not spin (unless WithSpinBudget asks): a woken goroutine runs on
// its waker's P, so once any waiter has parked, a spinning waiter holds
// the P that the goroutine it waits for is queued on.
const goroutineYields = 1

// errGoroutineBroken is wait's report of a broken barrier; Wait and
// WaitContext turn it into the package's errors wrapping ErrBroken.
var errGoroutineBroken = ErrBroken

func newGoroutine(n int, opts ...Option) (Barrier, error) {
	b, err := newBase(n, opts)
	if err != nil {
		return nil, err
	}
	c := config{budget: -1}
	for _, o := range opts {
		o(&c)
	}
	g := &goroutineBarrier{n: n, spin: b.w.budget}
	switch {
	case c.policy == AutoPolicy:
		g.spin, g.yields = max(c.budget, 0), goroutineYields
	case c.policy == Spin:
		g.spin, g.yields = -1, 0
	case c.policy == Yield:
		g.yields = -1
	}
	g.entered = make([]slot, n)
	g.cond.L = (*goroutineArrival)(g)
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
	// Arrives (in goroutineArrival.Unlock), waits the bounded spin and
	// yields, and parks unless the episode's Broadcast came first.
	g.cond.Wait()
	for {
		s = g.state.Load()
		if s>>1 >= target {
			if traceOn {
				traceSaw(&g.state)
			}
			return nil
		}
		if s&1 != 0 {
			if ctx != nil && ctx.Err() != nil {
				return ctx.Err()
			}
			return errGoroutineBroken
		}
		// Unreachable: only a release or a break broadcasts. Wait
		// without arriving a second time.
		runtime.Gosched()
	}
}

// goroutineArrival is the barrier seen as the sync.Locker of its Cond:
// Cond.Wait calls Unlock after taking the caller's ticket and before
// parking, so Unlock is where a participant arrives.
type goroutineArrival goroutineBarrier

// Lock is called when Cond.Wait returns; there is nothing to lock.
func (a *goroutineArrival) Lock() {}

// Unlock arrives. The last arrival releases the episode; the others spin
// and yield for their budgets while the episode is not over.
func (a *goroutineArrival) Unlock() {
	g := (*goroutineBarrier)(a)
	s := g.state.Load()
	if s&1 != 0 {
		g.cond.Broadcast() // broken: do not park on a barrier nobody will release
		return
	}
	if traceOn {
		traceWrite(&g.arrived)
	}
	if g.arrived.Add(1) == int64(g.n) {
		if traceOn {
			traceSaw(&g.arrived)
		}
		g.arrived.Store(0)
		if traceOn {
			traceWrite(&g.state)
		}
		for s&1 == 0 && !g.state.CompareAndSwap(s, s+2) {
			s = g.state.Load()
		}
		g.cond.Broadcast()
		return
	}
	if traceOn {
		traceWait(&g.state)
	}
	for i := 0; i != g.spin; i++ {
		if g.state.Load() != s {
			return
		}
		osal.Relax()
	}
	if g.yields == 0 || g.state.Load() != s {
		return
	}
	if g.yields > 0 {
		if g.yieldScore.Load() < 0 {
			g.yieldScore.Add(1)
			return
		}
	}
	for i := 0; i != g.yields; i++ {
		runtime.Gosched()
		if g.state.Load() != s {
			if g.yields > 0 && g.yieldScore.Load() < yieldScoreMax {
				g.yieldScore.Add(1)
			}
			return
		}
	}
	if g.yields > 0 {
		g.yieldScore.Add(-yieldPenalty)
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
			g.cond.Broadcast()
			return
		}
	}
}

// Break implements Barrier: it marks the barrier broken and wakes every
// waiting participant; their Wait panics and WaitContext returns an error.
func (g *goroutineBarrier) Break() {
	g.state.Or(1)
	g.cond.Broadcast()
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
