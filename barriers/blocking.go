package barriers

import (
	"context"
	"fmt"
	"sync"
)

// condBarrier is the blocking baseline every Go barrier library uses: a
// mutex, a count and a sync.Cond broadcast per generation. Waiters sleep in
// the scheduler (or, on a locked OS thread, in the kernel).
//
// It works under its mutex anyway, so it checks for free what the spinning
// algorithms cannot: a second goroutine passing an id that already waits in
// the current episode panics (same-id misuse).
type condBarrier struct {
	base
	mu      sync.Mutex
	cond    sync.Cond
	count   int
	gen     uint64
	broken  bool
	arrived []uint64 // arrived[id] == gen+1: id waits in generation gen
}

// newCond returns the sync.Cond baseline barrier (it ignores the policy).
func newCond(n int, opts ...Option) (Barrier, error) {
	b, err := newBase(n, opts)
	if err != nil {
		return nil, err
	}
	c := &condBarrier{base: b, arrived: make([]uint64, n)}
	c.cond.L = &c.mu
	return c, nil
}

//go:noinline
func sameID(id int) {
	panic(fmt.Sprintf("barriers: Wait(%d) while another goroutine waits with id %d in the same episode (each id belongs to one goroutine)", id, id))
}

func (c *condBarrier) episode(id int) bool {
	c.checkID(id)
	c.next(id) // counts the episode for Episodes
	c.mu.Lock()
	if c.broken {
		c.mu.Unlock()
		return false
	}
	if c.arrived[id] == c.gen+1 {
		c.mu.Unlock()
		sameID(id)
	}
	gen := c.gen
	if traceOn {
		traceWrite(&c.count)
	}
	c.count++
	if c.count == c.n {
		if traceOn {
			traceSaw(&c.count)
		}
		c.count = 0
		if traceOn {
			traceWrite(&c.gen)
		}
		c.gen++
		c.cond.Broadcast()
		c.mu.Unlock()
		return true
	}
	c.arrived[id] = gen + 1
	if traceOn {
		traceWait(&c.gen)
	}
	for gen == c.gen && !c.broken {
		c.cond.Wait()
	}
	ok := gen != c.gen
	if traceOn && ok {
		traceSaw(&c.gen)
	}
	c.mu.Unlock()
	return ok
}

// Wait implements Barrier.
func (c *condBarrier) Wait(id int) {
	if !c.episode(id) {
		c.failed(id)
	}
}

// WaitContext implements Barrier.
func (c *condBarrier) WaitContext(ctx context.Context, id int) error {
	return c.waitContext(ctx, c, id)
}

// Break implements Barrier.
func (c *condBarrier) Break() {
	c.mu.Lock()
	c.broken = true
	c.cond.Broadcast()
	c.mu.Unlock()
}

// Reset implements Barrier.
func (c *condBarrier) Reset() {
	c.mu.Lock()
	c.base.Reset()
	c.broken = false
	c.count = 0
	c.gen++
	c.mu.Unlock()
}

// channelBarrier is the channel baseline: each episode has a channel that
// the last arrival closes. Like condBarrier it detects same-id misuse
// under its mutex.
type channelBarrier struct {
	base
	mu      sync.Mutex
	count   int
	ep      *chanEpisode
	gen     uint64
	broken  bool
	arrived []uint64 // arrived[id] == gen+1: id waits in generation gen
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
	return &channelBarrier{base: b, ep: &chanEpisode{ch: make(chan struct{})}, arrived: make([]uint64, n)}, nil
}

func (c *channelBarrier) episode(id int) bool {
	c.checkID(id)
	c.next(id) // counts the episode for Episodes
	c.mu.Lock()
	if c.broken {
		c.mu.Unlock()
		return false
	}
	if c.arrived[id] == c.gen+1 {
		c.mu.Unlock()
		sameID(id)
	}
	ep := c.ep
	if traceOn {
		traceWrite(&c.count)
	}
	c.count++
	if c.count == c.n {
		if traceOn {
			traceSaw(&c.count)
		}
		c.count = 0
		c.gen++
		c.ep = &chanEpisode{ch: make(chan struct{})}
		c.mu.Unlock()
		if traceOn {
			traceWrite(ep)
		}
		close(ep.ch)
		return true
	}
	c.arrived[id] = c.gen + 1
	c.mu.Unlock()
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
func (c *channelBarrier) Wait(id int) {
	if !c.episode(id) {
		c.failed(id)
	}
}

// WaitContext implements Barrier.
func (c *channelBarrier) WaitContext(ctx context.Context, id int) error {
	return c.waitContext(ctx, c, id)
}

// Break implements Barrier.
func (c *channelBarrier) Break() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken {
		return
	}
	c.broken = true
	c.ep.broken = true
	close(c.ep.ch)
}

// Reset implements Barrier.
func (c *channelBarrier) Reset() {
	c.mu.Lock()
	c.base.Reset()
	c.broken = false
	c.count = 0
	c.gen++
	c.ep = &chanEpisode{ch: make(chan struct{})}
	c.mu.Unlock()
}
