package barriers

import "context"

// butterfly is Brooks' butterfly barrier (1986; thesis §2.2.2.1): in stage
// s identity v synchronises pairwise with v XOR 2^s; after log₂ P stages
// everyone knows everyone arrived, with no release phase. For P not a power
// of two the thesis represents the missing partners virtually by other
// nodes: with Q the next power of two, virtual identity v ≥ P is played by
// real participant v − Q/2, which then synchronises twice in most stages
// (hence the worst case just above a power of two). Pairs whose two
// identities belong to one participant need no signal.
//
// Cost (table 2.1): 2(L + 2o)⌈log₂ P⌉ in the worst case; (L + 2o)log₂ P for
// powers of two.
type butterfly struct {
	base
	rounds int
	q      int    // the next power of two >= n
	flags  []flag // flags[v*rounds+s]: identity v's flag for stage s
}

// newButterfly returns a butterfly barrier for n participants.
func newButterfly(n int, opts ...Option) (Barrier, error) {
	return build(n, opts, func(bf *butterfly) {
		bf.rounds = log2ceil(n)
		bf.q = 1 << bf.rounds
		bf.flags = bf.newFlags(bf.q * bf.rounds)
	})
}

// owner returns the participant that plays identity v.
func (b *butterfly) owner(v int) int {
	if v < b.n {
		return v
	}
	return v - b.q/2
}

// episode runs one episode for id; false when the barrier broke.
func (b *butterfly) episode(id int) bool {
	e := b.next(id)
	if e == 0 {
		return false
	}
	ids := [2]int{id, -1}
	if v := id + b.q/2; v >= b.n && v < b.q {
		ids[1] = v
	}
	for s := 0; s < b.rounds; s++ {
		for _, v := range ids {
			if v >= 0 {
				if w := v ^ (1 << s); b.owner(w) != id {
					b.flags[w*b.rounds+s].set(e, &b.w)
				}
			}
		}
		for _, v := range ids {
			if v >= 0 {
				if w := v ^ (1 << s); b.owner(w) != id {
					if !b.flags[v*b.rounds+s].await(e, &b.w) {
						return false
					}
				}
			}
		}
	}
	return true
}

// Wait implements Barrier.
func (x *butterfly) Wait(id int) { x.done(x.episode(id), id) }

// WaitContext implements Barrier.
func (x *butterfly) WaitContext(ctx context.Context, id int) error {
	return x.waitContext(ctx, x, id, ctx.Done() == nil && x.episode(id))
}
