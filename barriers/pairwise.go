package barriers

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

// NewPairwise returns a pairwise-exchange barrier for n participants.
func NewPairwise(n int, opts ...Option) (Barrier, error) {
	b, err := newBase(n, opts)
	if err != nil {
		return nil, err
	}
	y, r := 1, 0
	for y*2 <= n {
		y, r = y*2, r+1
	}
	return &pairwise{base: b, y: y, rounds: r, flags: newFlags(y * r), extra: newFlags(n - y), release: newFlags(n - y)}, nil
}

// Wait implements Barrier.
func (p *pairwise) Wait(id int) {
	e := p.next(id)
	if id >= p.y {
		p.extra[id-p.y].set(e, &p.w)
		p.release[id-p.y].await(e, &p.w)
		return
	}
	hasUpper := id+p.y < p.n
	if hasUpper {
		p.extra[id].await(e, &p.w)
	}
	for r := 0; r < p.rounds; r++ {
		peer := id ^ (1 << r)
		p.flags[peer*p.rounds+r].set(e, &p.w)
		p.flags[id*p.rounds+r].await(e, &p.w)
	}
	if hasUpper {
		p.release[id].set(e, &p.w)
	}
}
