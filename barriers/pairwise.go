package barriers

import "context"

// pairwise is the pairwise exchange with recursive doubling (Gupta et al.
// 2002; thesis §2.2.2.2, listing 2.6). With y the largest power of two ≤ P,
// the P − y participants above y first report to partners i − y, the y
// participants of the lower group run a butterfly among themselves, and
// the partners then release the upper group.
//
// Cost (table 2.1): (L + 2o)⌊log₂ P⌋ + 2(L + 2o).
type pairwise struct {
	base
	y, rounds int
	flags     []flag // flags[i*rounds+r]: lower participant i, round r
	extra     []flag // extra[i]: upper partner i+y arrived
	release   []flag // release[i]: upper participant i+y released
}

// newPairwise returns a pairwise-exchange barrier for n participants.
func newPairwise(n int, opts ...Option) (Barrier, error) {
	return build(n, opts, func(p *pairwise) {
		p.y = 1
		for p.y*2 <= n {
			p.y, p.rounds = p.y*2, p.rounds+1
		}
		p.flags, p.extra, p.release = p.newFlags(p.y*p.rounds), p.newFlags(n-p.y), p.newFlags(n-p.y)
	})
}

// episode runs one episode for id; false when the barrier broke.
func (p *pairwise) episode(id int) bool {
	e := p.next(id)
	if e == 0 {
		return false
	}
	if id >= p.y {
		p.extra[id-p.y].set(e, &p.w)
		if !p.release[id-p.y].await(e, &p.w) {
			return false
		}
		return true
	}
	hasUpper := id+p.y < p.n
	if hasUpper {
		if !p.extra[id].await(e, &p.w) {
			return false
		}
	}
	for r := 0; r < p.rounds; r++ {
		peer := id ^ (1 << r)
		p.flags[peer*p.rounds+r].set(e, &p.w)
		if !p.flags[id*p.rounds+r].await(e, &p.w) {
			return false
		}
	}
	if hasUpper {
		p.release[id].set(e, &p.w)
	}
	return true
}

// Wait implements Barrier.
func (x *pairwise) Wait(id int) { x.done(x.episode(id), id) }

// WaitContext implements Barrier.
func (x *pairwise) WaitContext(ctx context.Context, id int) error {
	return x.waitContext(ctx, x, id, ctx.Done() == nil && x.episode(id))
}
