package barriers

import "context"

// tournament is the tournament barrier with statically chosen winners
// (Hensgen, Finkel & Manber 1988; thesis §2.2.1.3, listing 2.3; the
// shared-memory form of Mellor-Crummey & Scott 1991). In round r the
// participant whose index has bit r set (the loser) signals its opponent
// i − 2^r and drops out; the champion, participant 0, then wakes the
// participants it beat, and each woken loser wakes those it beat, back down
// the bracket. Losers spin on their own wake flag.
//
// Cost (table 2.1): (L + 2o)⌈log₂ P⌉ + t_bc(P−1), the broadcast here a
// tree of ⌈log₂ P⌉ levels.
type tournament struct {
	base
	rounds int
	arrive []flag // arrive[w*rounds+r]: winner w's flag for round r
	wake   []flag // wake[i]: participant i's wakeup flag
}

// newTournament returns a tournament barrier for n participants.
func newTournament(n int, opts ...Option) (Barrier, error) {
	return build(n, opts, func(t *tournament) {
		t.rounds = log2ceil(n)
		t.arrive, t.wake = t.newFlags(n*t.rounds), t.newFlags(n)
	})
}

// episode runs one episode for id; false when the barrier broke.
func (t *tournament) episode(id int) bool {
	e := t.next(id)
	if e == 0 {
		return false
	}
	top := t.rounds // rounds this participant won, hence whom it wakes
	for r := 0; r < t.rounds; r++ {
		if id&(1<<r) != 0 { // lost round r
			t.arrive[(id-1<<r)*t.rounds+r].set(e, &t.w)
			if !t.wake[id].await(e, &t.w) {
				return false
			}
			top = r
			break
		}
		if opp := id + 1<<r; opp < t.n {
			if !t.arrive[id*t.rounds+r].await(e, &t.w) {
				return false
			}
		}
	}
	for r := top - 1; r >= 0; r-- {
		if opp := id + 1<<r; opp < t.n {
			t.wake[opp].set(e, &t.w)
		}
	}
	return true
}

// Wait implements Barrier.
func (x *tournament) Wait(id int) { x.done(x.episode(id), id) }

// WaitContext implements Barrier.
func (x *tournament) WaitContext(ctx context.Context, id int) error {
	return x.waitContext(ctx, x, id, ctx.Done() == nil && x.episode(id))
}
