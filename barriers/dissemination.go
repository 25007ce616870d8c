package barriers

import "context"

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

// newDissemination returns a dissemination barrier for n participants.
func newDissemination(n int, opts ...Option) (Barrier, error) {
	return build(n, opts, func(d *dissemination) {
		d.rounds = log2ceil(n)
		d.flags = d.newFlags(n * d.rounds)
	})
}

// episode runs one episode for id; false when the barrier broke.
func (d *dissemination) episode(id int) bool {
	e := d.next(id)
	if e == 0 {
		return false
	}
	for r := 0; r < d.rounds; r++ {
		peer := id + 1<<r // (id + 2^r) mod n, without a division
		if peer >= d.n {
			peer -= d.n
		}
		d.flags[peer*d.rounds+r].set(e, &d.w)
		if !d.flags[id*d.rounds+r].await(e, &d.w) {
			return false
		}
	}
	return true
}

// Wait implements Barrier. Two participants take the one round here,
// without a second call: the path from one episode's end to the next's
// signal is all the time a waiter adds to a transfer.
func (x *dissemination) Wait(id int) {
	if len(x.flags) == 2 { // n·rounds = 2: two participants, one round
		if e := x.next(id); e != 0 {
			x.flags[1-id&1].set(e, &x.w)
			if x.flags[id&1].await(e, &x.w) {
				return
			}
		}
		x.failed(id)
		return
	}
	x.done(x.episode(id), id)
}

// WaitContext implements Barrier.
func (x *dissemination) WaitContext(ctx context.Context, id int) error {
	return x.waitContext(ctx, x, id, ctx.Done() == nil && x.episode(id))
}
