package barriers

import (
	"context"
	"sync/atomic"

	"github.com/barriertune/barriertune/internal/osal"
)

// combining is the combining-tree barrier (Yew, Tzeng & Lawrie 1987;
// thesis §2.2.1.2): participants are split into groups of k that share a
// counter; the last of each group goes on to the parent group's counter;
// the last at the root releases everyone through one flag. Counters are
// never reset: a node with c children holds e·c after episode e.
//
// Cost (table 2.1): (L + n·o)⌈log_n P⌉ + t_bc(P−1), n the fan-in (default 4).
type combining struct {
	base
	nodes   []combNode
	leaf    []int // participant -> its leaf node
	release *flag
}

type combNode struct {
	count    atomic.Uint64
	children uint64
	parent   int // -1 at the root
	_        [osal.CacheLinePad - 24]byte
}

// newCombining returns a combining-tree barrier for n participants.
func newCombining(n int, opts ...Option) (Barrier, error) {
	return build(n, opts, func(c *combining) {
		c.leaf = aloneSlice[int](n)
		c.release = &c.newFlags(1)[0]
		k := c.fanIn
		// Level by level: members of this level are grouped k at a time.
		members := n
		first := 0 // index of this level's first node
		for lvl := 0; ; lvl++ {
			groups := (members + k - 1) / k
			for g := 0; g < groups; g++ {
				c.nodes = append(c.nodes, combNode{children: uint64(min(k, members-g*k)), parent: -1})
			}
			if lvl == 0 {
				for i := 0; i < n; i++ {
					c.leaf[i] = i / k
				}
			} else {
				prevFirst := first - members
				for m := 0; m < members; m++ {
					c.nodes[prevFirst+m].parent = first + m/k
				}
			}
			if groups == 1 {
				break
			}
			first += groups
			members = groups
		}
		for i := range c.nodes {
			c.counter(&c.nodes[i].count)
		}
	})
}

// episode runs one episode for id; false when the barrier broke.
func (c *combining) episode(id int) bool {
	e := c.next(id)
	if e == 0 {
		return false
	}
	for nd := c.leaf[id]; ; {
		node := &c.nodes[nd]
		if traceOn {
			traceWrite(&node.count)
		}
		if node.count.Add(1) != e*node.children {
			break
		}
		if traceOn {
			traceSaw(&node.count)
		}
		if node.parent < 0 {
			c.release.set(e, &c.w)
			return true
		}
		nd = node.parent
	}
	return c.release.await(e, &c.w)
}

// Wait implements Barrier.
func (x *combining) Wait(id int) { x.done(x.episode(id), id) }

// WaitContext implements Barrier.
func (x *combining) WaitContext(ctx context.Context, id int) error {
	return x.waitContext(ctx, x, id, ctx.Done() == nil && x.episode(id))
}
