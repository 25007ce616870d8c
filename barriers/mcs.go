package barriers

import "context"

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
	return build(n, opts, func(m *mcs) {
		m.haveChild = aloneSlice[uint64](n)
		m.childBits, m.wake = m.newFlags(n), m.newFlags(n)
		for i := 1; i < n; i++ {
			m.haveChild[(i-1)/4] |= 1 << ((i - 1) % 4)
		}
	})
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
func (x *mcs) Wait(id int) { x.done(x.episode(id), id) }

// WaitContext implements Barrier.
func (x *mcs) WaitContext(ctx context.Context, id int) error {
	return x.waitContext(ctx, x, id, ctx.Done() == nil && x.episode(id))
}
