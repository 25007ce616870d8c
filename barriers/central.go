package barriers

import (
	"context"
	"sync/atomic"
)

// central is the sense-reversing central counter (Mellor-Crummey & Scott
// 1991, fig. 8; Hoefler's thesis §2.2.1.1). Every participant increments one
// shared counter; the last to arrive releases all through one flag. The
// counter is never reset: after episode e it holds e·n, and the episode
// number plays the role of the sense.
//
// Cost (table 2.1): L + P·o + t_bc(P−1): P serialised updates of a hot spot.
type central struct {
	base
	count   *atomic.Uint64
	release *flag
}

// newCentral returns a central-counter barrier for n participants.
func newCentral(n int, opts ...Option) (Barrier, error) {
	return build(n, opts, func(c *central) {
		c.count, c.release = c.newCounter(), &c.newFlags(1)[0]
	})
}

// episode runs one episode for id; false when the barrier broke.
func (c *central) episode(id int) bool {
	e := c.next(id)
	if e == 0 {
		return false
	}
	if traceOn {
		traceWrite(c.count)
	}
	if c.count.Add(1) == e*uint64(c.n) {
		if traceOn {
			traceSaw(c.count)
		}
		c.release.set(e, &c.w)
		return true
	}
	return c.release.await(e, &c.w)
}

// Wait implements Barrier.
func (x *central) Wait(id int) { x.done(x.episode(id), id) }

// WaitContext implements Barrier.
func (x *central) WaitContext(ctx context.Context, id int) error {
	return x.waitContext(ctx, x, id, ctx.Done() == nil && x.episode(id))
}
