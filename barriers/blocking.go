package barriers

import "sync"

// condBarrier is the blocking baseline every Go barrier library uses: a
// mutex, a count and a sync.Cond broadcast per generation. Waiters sleep in
// the scheduler (or, on a locked OS thread, in the kernel).
type condBarrier struct {
	base
	mu    sync.Mutex
	cond  sync.Cond
	count int
	gen   uint64
}

// NewCond returns the sync.Cond baseline barrier (it ignores the policy).
func NewCond(n int, opts ...Option) (Barrier, error) {
	b, err := newBase(n, opts)
	if err != nil {
		return nil, err
	}
	c := &condBarrier{base: b}
	c.cond.L = &c.mu
	return c, nil
}

// Wait implements Barrier.
func (c *condBarrier) Wait(id int) {
	c.next(id)
	c.mu.Lock()
	gen := c.gen
	c.count++
	if c.count == c.n {
		c.count = 0
		c.gen++
		c.cond.Broadcast()
	} else {
		for gen == c.gen {
			c.cond.Wait()
		}
	}
	c.mu.Unlock()
}

// channelBarrier is the channel baseline: each episode has a channel that
// the last arrival closes.
type channelBarrier struct {
	base
	mu    sync.Mutex
	count int
	ch    chan struct{}
}

// NewChannel returns the channel baseline barrier (it ignores the policy).
func NewChannel(n int, opts ...Option) (Barrier, error) {
	b, err := newBase(n, opts)
	if err != nil {
		return nil, err
	}
	return &channelBarrier{base: b, ch: make(chan struct{})}, nil
}

// Wait implements Barrier.
func (c *channelBarrier) Wait(id int) {
	c.next(id)
	c.mu.Lock()
	ch := c.ch
	c.count++
	if c.count == c.n {
		c.count = 0
		c.ch = make(chan struct{})
		c.mu.Unlock()
		close(ch)
		return
	}
	c.mu.Unlock()
	<-ch
}
