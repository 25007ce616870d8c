package barriers

import "github.com/barriertune/barriertune/internal/osal"

// Team runs one function on n participants at once. A pinned team gives
// each participant its own locked OS thread bound to one CPU; an unpinned
// team uses plain goroutines, which the Go scheduler switches in user space
// (the right choice when participants outnumber the CPUs). Tuning.Team
// makes one for the tuned placement.
type Team struct {
	t *osal.Team
}

// Size returns the number of participants.
func (t *Team) Size() int { return t.t.Size() }

// CPUs returns the CPUs participants are pinned to, participant i on
// CPUs()[i], or nil when the team is unpinned.
func (t *Team) CPUs() []int { return t.t.CPUs() }

// Pinned reports whether participants run on pinned locked threads.
func (t *Team) Pinned() bool { return t.t.Pinned() }

// Run calls fn(rank) on every participant at once and returns when all
// have returned. In a pinned team every participant is locked and pinned
// before any of them starts fn; if one cannot be pinned, none runs fn and
// the error says why. Afterwards each thread gets its former affinity back
// and is unlocked. A participant's panic is returned as an error naming
// its rank, with its stack; Run does not crash. Participants waiting on a
// barrier for the one that panicked stay blocked: use RunBarrier.
func (t *Team) Run(fn func(rank int)) error { return t.t.Run(fn) }

// RunBarrier is Run for participants that synchronise on b (nil: none). It
// breaks b when a participant panics (the error names its rank and holds
// its stack; the others' Wait fails with an error wrapping ErrBroken,
// returned too), or when a participant returns after entering k episodes
// while another has entered episode k+1, which cannot complete without it.
// It does not detect a participant that blocks forever elsewhere.
func (t *Team) RunBarrier(b Barrier, fn func(rank int)) error {
	return t.t.RunBarrier(b, fn)
}
