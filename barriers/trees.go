package barriers

import (
	"context"
	"math"
)

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
	b, err := newBase(n, opts)
	if err != nil {
		return nil, err
	}
	t := alone[staticTree]()
	t.base = b
	t.arrive, t.release = t.newFlags(n), &t.newFlags(1)[0]
	return t, nil
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
	if !t.release.await(e, &t.w) {
		return false
	}
	return true
}

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
	b, err := newBase(n, opts)
	if err != nil {
		return nil, err
	}
	t := alone[allStaticTree]()
	t.base = b
	t.arrive, t.wake = t.newFlags(n), t.newFlags(n)
	return t, nil
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
	b, err := newBase(n, opts)
	if err != nil {
		return nil, err
	}
	t := alone[binomial]()
	t.base = b
	t.arrive, t.wake = t.newFlags(n), t.newFlags(n)
	return t, nil
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

// mcs is the MCS tree barrier (Mellor-Crummey & Scott 1991, fig. 10; thesis
// §2.2.1.5): arrival up a 4-ary tree in which each node's children flags are
// packed into one word (the parent spins on one word, each child flips its
// own bit: the episode's parity is the sense), and wakeup down a binary tree
// (children 2i+1, 2i+2) on per-participant flags.
//
// Cost (table 2.1): (L + (n+1)o)⌈log_n P⌉ + t_bc(P−1), n = 4.
type mcs struct {
	base
	childBits []flag   // childBits[i]: packed arrival bits of i's children
	haveChild []uint64 // which bits i's children use
	wake      []flag
}

// newMCS returns an MCS tree barrier for n participants.
func newMCS(n int, opts ...Option) (Barrier, error) {
	b, err := newBase(n, opts)
	if err != nil {
		return nil, err
	}
	m := alone[mcs]()
	*m = mcs{base: b, haveChild: aloneSlice[uint64](n)}
	m.childBits, m.wake = m.newFlags(n), m.newFlags(n)
	for i := 1; i < n; i++ {
		m.haveChild[(i-1)/4] |= 1 << ((i - 1) % 4)
	}
	return m, nil
}

// episode runs one episode for id; false when the barrier broke.
func (m *mcs) episode(id int) bool {
	e := m.next(id)
	if e == 0 {
		return false
	}
	odd := e&1 == 1
	if hc := m.haveChild[id]; hc != 0 {
		want := uint64(0)
		if odd {
			want = hc
		}
		if !m.childBits[id].awaitEq(want, &m.w) {
			return false
		}
	}
	if id != 0 {
		parent, bit := (id-1)/4, uint64(1)<<((id-1)%4)
		if odd {
			m.childBits[parent].or(bit)
		} else {
			m.childBits[parent].and(^bit)
		}
		if !m.wake[id].await(e, &m.w) {
			return false
		}
	}
	if c := 2*id + 1; c < m.n {
		m.wake[c].set(e, &m.w)
	}
	if c := 2*id + 2; c < m.n {
		m.wake[c].set(e, &m.w)
	}
	return true
}

// Wait implements Barrier.
func (x *staticTree) Wait(id int) {
	if !x.episode(id) {
		x.failed(id)
	}
}

// WaitContext implements Barrier.
func (x *staticTree) WaitContext(ctx context.Context, id int) error {
	if ctx.Done() == nil {
		if x.episode(id) {
			return nil
		}
		return x.brokenError(id)
	}
	return x.waitContext(ctx, x, id)
}

// Wait implements Barrier.
func (x *allStaticTree) Wait(id int) {
	if !x.episode(id) {
		x.failed(id)
	}
}

// WaitContext implements Barrier.
func (x *allStaticTree) WaitContext(ctx context.Context, id int) error {
	if ctx.Done() == nil {
		if x.episode(id) {
			return nil
		}
		return x.brokenError(id)
	}
	return x.waitContext(ctx, x, id)
}

// Wait implements Barrier.
func (x *binomial) Wait(id int) {
	if !x.episode(id) {
		x.failed(id)
	}
}

// WaitContext implements Barrier.
func (x *binomial) WaitContext(ctx context.Context, id int) error {
	if ctx.Done() == nil {
		if x.episode(id) {
			return nil
		}
		return x.brokenError(id)
	}
	return x.waitContext(ctx, x, id)
}

// Wait implements Barrier.
func (x *mcs) Wait(id int) {
	if !x.episode(id) {
		x.failed(id)
	}
}

// WaitContext implements Barrier.
func (x *mcs) WaitContext(ctx context.Context, id int) error {
	if ctx.Done() == nil {
		if x.episode(id) {
			return nil
		}
		return x.brokenError(id)
	}
	return x.waitContext(ctx, x, id)
}
