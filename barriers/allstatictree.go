package barriers

import "context"

// allStaticTree is the all-static tree: the same f-way arrival tree as
// staticTree, and the release travels back down the same tree, each
// participant spinning on its own wake flag and waking its children.
//
// Cost: 2(L + f·o)⌈log_f P⌉.
type allStaticTree struct {
	base
	arrive []flag
	wake   []flag
}

// newAllStaticTree returns an all-static f-way tree barrier (f from
// WithFanIn, default 4).
func newAllStaticTree(n int, opts ...Option) (Barrier, error) {
	return build(n, opts, func(t *allStaticTree) {
		t.arrive, t.wake = t.newFlags(n), t.newFlags(n)
	})
}

// episode runs one episode for id; false when the barrier broke.
func (t *allStaticTree) episode(id int) bool {
	e := t.next(id)
	if e == 0 {
		return false
	}
	lo, hi := t.fanIn*id+1, min(t.fanIn*id+t.fanIn, t.n-1)
	for c := lo; c <= hi; c++ {
		if !t.arrive[c].await(e, &t.w) {
			return false
		}
	}
	if id != 0 {
		t.arrive[id].set(e, &t.w)
		if !t.wake[id].await(e, &t.w) {
			return false
		}
	}
	for c := lo; c <= hi; c++ {
		t.wake[c].set(e, &t.w)
	}
	return true
}

// Wait implements Barrier.
func (x *allStaticTree) Wait(id int) { x.done(x.episode(id), id) }

// WaitContext implements Barrier.
func (x *allStaticTree) WaitContext(ctx context.Context, id int) error {
	return x.waitContext(ctx, x, id, ctx.Done() == nil && x.episode(id))
}
