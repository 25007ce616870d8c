package barriers

import "context"

// staticTree is the static f-way tree with one global release flag
// (Mellor-Crummey & Scott 1991 §3.3's tree arrival; thesis §2.2.1.4's f-way
// tournament with fixed winners): participant i's children are
// f·i+1 … f·i+f. Each participant waits for its children's arrival flags,
// then sets its own; the root then sets the global release flag that all
// others spin on.
//
// Cost: (L + f·o)⌈log_f P⌉ + t_bc(P−1), the broadcast one flag read by all.
type staticTree struct {
	base
	arrive  []flag
	release *flag
}

// newStaticTree returns a static f-way tree barrier (f from WithFanIn,
// default 4) with a global release flag.
func newStaticTree(n int, opts ...Option) (Barrier, error) {
	return build(n, opts, func(t *staticTree) {
		t.arrive, t.release = t.newFlags(n), &t.newFlags(1)[0]
	})
}

// episode runs one episode for id; false when the barrier broke.
func (t *staticTree) episode(id int) bool {
	e := t.next(id)
	if e == 0 {
		return false
	}
	for c := t.fanIn*id + 1; c <= t.fanIn*id+t.fanIn && c < t.n; c++ {
		if !t.arrive[c].await(e, &t.w) {
			return false
		}
	}
	if id == 0 {
		t.release.set(e, &t.w)
		return true
	}
	t.arrive[id].set(e, &t.w)
	return t.release.await(e, &t.w)
}

// Wait implements Barrier.
func (x *staticTree) Wait(id int) { x.done(x.episode(id), id) }

// WaitContext implements Barrier.
func (x *staticTree) WaitContext(ctx context.Context, id int) error {
	return x.waitContext(ctx, x, id, ctx.Done() == nil && x.episode(id))
}
