package barriers

// dissemination is the dissemination barrier (Hensgen, Finkel & Manber
// 1988; thesis §2.2.2.3, listing 2.7). In round r participant i signals
// participant (i + 2^r) mod P and waits for (i − 2^r) mod P. After
// ⌈log₂ P⌉ rounds everyone knows everyone arrived; no release phase. Each
// (participant, round) flag has one writer, so flags hold episode numbers.
//
// Cost (table 2.1): (L + 2o)⌈log₂ P⌉; ⌈log₂ P⌉ flags per participant.
type dissemination struct {
	base
	rounds int
	flags  []flag // flags[i*rounds+r]: participant i's flag for round r
}

// NewDissemination returns a dissemination barrier for n participants.
func NewDissemination(n int, opts ...Option) (Barrier, error) {
	b, err := newBase(n, opts)
	if err != nil {
		return nil, err
	}
	r := log2ceil(n)
	return &dissemination{base: b, rounds: r, flags: newFlags(n * r)}, nil
}

// Wait implements Barrier.
func (d *dissemination) Wait(id int) {
	e := d.next(id)
	for r := 0; r < d.rounds; r++ {
		peer := id + 1<<r // (id + 2^r) mod n, without a division
		if peer >= d.n {
			peer -= d.n
		}
		d.flags[peer*d.rounds+r].set(e, &d.w)
		d.flags[id*d.rounds+r].await(e, &d.w)
	}
}
