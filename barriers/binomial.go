package barriers

import (
	"context"
	"math"
)

// binomial is the binomial spanning tree barrier (Tzeng & Kongmunvattana
// 1997; thesis §2.2.1.6, listing 2.5): participant i's children are
// i + 2^k for 2^k below i's lowest set bit (all k for the root), its parent
// i − lowbit(i). Each waits for its children in increasing k, reports to
// its parent, waits for its wakeup, and wakes its children largest subtree
// first, down the same tree.
//
// Cost (table 2.1): (L + 3o)⌈log₂ P⌉ + t_bc(P−1).
type binomial struct {
	base
	arrive []flag
	wake   []flag
}

// newBinomial returns a binomial-spanning-tree barrier for n participants.
func newBinomial(n int, opts ...Option) (Barrier, error) {
	return build(n, opts, func(t *binomial) {
		t.arrive, t.wake = t.newFlags(n), t.newFlags(n)
	})
}

// span returns the exclusive bound on 2^k for id's children.
func (t *binomial) span(id int) int {
	if id == 0 {
		return math.MaxInt
	}
	return id & -id
}

// episode runs one episode for id; false when the barrier broke.
func (t *binomial) episode(id int) bool {
	e := t.next(id)
	if e == 0 {
		return false
	}
	span := t.span(id)
	top := 0 // children are id + 2^k for k < top
	for k := 1; k < span && id+k < t.n; k <<= 1 {
		if !t.arrive[id+k].await(e, &t.w) {
			return false
		}
		top = k << 1
	}
	if id != 0 {
		t.arrive[id].set(e, &t.w)
		if !t.wake[id].await(e, &t.w) {
			return false
		}
	}
	for k := top >> 1; k >= 1; k >>= 1 {
		t.wake[id+k].set(e, &t.w)
	}
	return true
}

// Wait implements Barrier.
func (x *binomial) Wait(id int) { x.done(x.episode(id), id) }

// WaitContext implements Barrier.
func (x *binomial) WaitContext(ctx context.Context, id int) error {
	return x.waitContext(ctx, x, id, ctx.Done() == nil && x.episode(id))
}
