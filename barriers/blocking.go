package barriers

import (
	"context"
	"fmt"
	"sync"
)

// arrivals is what both blocking baselines keep under their mutex: the
// arrivals of the current generation, the generation, whether the barrier
// is broken, and which ids wait in the current generation. Working under a
// mutex anyway, they check for free what the spinning algorithms cannot: a
// second goroutine passing an id that already waits in the current
// episode panics (same-id misuse).
type arrivals struct {
	mu      sync.Mutex
	count   int
	gen     uint64
	broken  bool
	arrived []uint64 // arrived[id] == gen+1: id waits in generation gen
}

// arrive counts id's arrival among n. It returns with a.mu held and ok
// true, with the generation id arrived in and whether it was the last
// arrival (the count is then reset, and the caller moves the generation
// on); or, on a broken barrier, with a.mu released and ok false.
func (a *arrivals) arrive(id, n int) (gen uint64, last, ok bool) {
	a.mu.Lock()
	if a.broken {
		a.mu.Unlock()
		return 0, false, false
	}
	if a.arrived[id] == a.gen+1 {
		a.mu.Unlock()
		sameID(id)
	}
	if traceOn {
		traceWrite(&a.count)
	}
	a.count++
	if a.count == n {
		if traceOn {
			traceSaw(&a.count)
		}
		a.count = 0
		return a.gen, true, true
	}
	a.arrived[id] = a.gen + 1
	return a.gen, false, true
}

// reset starts a new generation of a repaired barrier; a.mu is held.
func (a *arrivals) reset() {
	a.broken = false
	a.count = 0
	a.gen++
}

//go:noinline
func sameID(id int) {
	panic(fmt.Sprintf("barriers: Wait(%d) while another goroutine waits with id %d in the same episode (each id belongs to one goroutine)", id, id))
}

// condBarrier is the blocking baseline every Go barrier library uses: a
// mutex, a count and a sync.Cond broadcast per generation. Waiters sleep in
// the scheduler (or, on a locked OS thread, in the kernel).
type condBarrier struct {
	base
	a    arrivals
	cond sync.Cond
}

// newCond returns the sync.Cond baseline barrier (it ignores the policy).
func newCond(n int, opts ...Option) (Barrier, error) {
	b, err := newBase(n, opts)
	if err != nil {
		return nil, err
	}
	c := alone[condBarrier]()
	*c = condBarrier{base: b, a: arrivals{arrived: make([]uint64, n)}}
	c.cond.L = &c.a.mu
	return c, nil
}

func (c *condBarrier) episode(id int) bool {
	c.checkID(id)
	c.next(id) // counts the episode for Episodes
	gen, last, ok := c.a.arrive(id, c.n)
	if !ok {
		return false
	}
	if last {
		if traceOn {
			traceWrite(&c.a.gen)
		}
		c.a.gen++
		c.cond.Broadcast()
		c.a.mu.Unlock()
		return true
	}
	if traceOn {
		traceWait(&c.a.gen)
	}
	for gen == c.a.gen && !c.a.broken {
		c.cond.Wait()
	}
	ok = gen != c.a.gen
	if traceOn && ok {
		traceSaw(&c.a.gen)
	}
	c.a.mu.Unlock()
	return ok
}

// Wait implements Barrier.
func (c *condBarrier) Wait(id int) { c.done(c.episode(id), id) }

// WaitContext implements Barrier.
func (c *condBarrier) WaitContext(ctx context.Context, id int) error {
	return c.waitContext(ctx, c, id, ctx.Done() == nil && c.episode(id))
}

// Break implements Barrier.
func (c *condBarrier) Break() {
	c.a.mu.Lock()
	c.a.broken = true
	c.cond.Broadcast()
	c.a.mu.Unlock()
}

// Reset implements Barrier.
func (c *condBarrier) Reset() {
	c.a.mu.Lock()
	c.base.Reset()
	c.a.reset()
	c.a.mu.Unlock()
}

// channelBarrier is the channel baseline: each episode has a channel that
// the last arrival closes. Like condBarrier it detects same-id misuse
// under its mutex.
type channelBarrier struct {
	base
	a  arrivals
	ep *chanEpisode
}

// chanEpisode is one episode: broken is written before ch is closed, so a
// waiter reads it after <-ch without the mutex.
type chanEpisode struct {
	ch     chan struct{}
	broken bool
}

// newChannel returns the channel baseline barrier (it ignores the policy).
func newChannel(n int, opts ...Option) (Barrier, error) {
	b, err := newBase(n, opts)
	if err != nil {
		return nil, err
	}
	c := alone[channelBarrier]()
	*c = channelBarrier{base: b, ep: &chanEpisode{ch: make(chan struct{})}, a: arrivals{arrived: make([]uint64, n)}}
	return c, nil
}

func (c *channelBarrier) episode(id int) bool {
	c.checkID(id)
	c.next(id) // counts the episode for Episodes
	_, last, ok := c.a.arrive(id, c.n)
	if !ok {
		return false
	}
	ep := c.ep
	if last {
		c.a.gen++
		c.ep = &chanEpisode{ch: make(chan struct{})}
		c.a.mu.Unlock()
		if traceOn {
			traceWrite(ep)
		}
		close(ep.ch)
		return true
	}
	c.a.mu.Unlock()
	if traceOn {
		traceWait(ep)
	}
	<-ep.ch
	if traceOn && !ep.broken {
		traceSaw(ep)
	}
	return !ep.broken
}

// Wait implements Barrier.
func (c *channelBarrier) Wait(id int) { c.done(c.episode(id), id) }

// WaitContext implements Barrier.
func (c *channelBarrier) WaitContext(ctx context.Context, id int) error {
	return c.waitContext(ctx, c, id, ctx.Done() == nil && c.episode(id))
}

// Break implements Barrier.
func (c *channelBarrier) Break() {
	c.a.mu.Lock()
	defer c.a.mu.Unlock()
	if c.a.broken {
		return
	}
	c.a.broken = true
	c.ep.broken = true
	close(c.ep.ch)
}

// Reset implements Barrier.
func (c *channelBarrier) Reset() {
	c.a.mu.Lock()
	c.base.Reset()
	c.a.reset()
	c.ep = &chanEpisode{ch: make(chan struct{})}
	c.a.mu.Unlock()
}
