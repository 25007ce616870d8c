package barriers

import (
	"context"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/internal/spin"
)

// base holds what every algorithm shares: n, the waiting policy, the
// broken state, and each participant's episode counter in its own padded
// slot.
//
// How Break and Reset work (what a new algorithm must do):
//   - allocate every flag with b.newFlags(k) and every shared counter with
//     b.newCounter() (or register one in a padded node with b.counter(&c)),
//     after the struct holding base is allocated;
//   - implement episode(id) bool: start with `e := b.next(id)` (0: already
//     broken) and return false as soon as any await returns false;
//     return true at the end;
//   - define Wait and WaitContext as one call each, as central.go does:
//     Wait is x.done(x.episode(id), id) (episode a direct call, done
//     inlines); WaitContext is x.waitContext(ctx, x, id, ctx.Done() ==
//     nil && x.episode(id)) (the same direct call for a ctx that cannot
//     end).
//
// Break sets broken, then stores brokenValue in every registered flag and
// wakes its parked waiters: a spinning waiter sees a value that ends its
// loop (no extra load in the loop) and returns false up the call chain.
// A participant that entered the episode before Break may still store its
// episode into a flag afterwards; that only satisfies waiters of that same
// episode, who then reach their next await, which is broken. Reset zeroes
// every flag, counter and slot.
type base struct {
	n        int
	w        waiter
	broken   uint32 // atomic: 1 once broken; read-mostly, next to n
	slots    []slot
	fanIn    int
	flagSets [][]flag
	counters []*atomic.Uint64
}

// episoder is what base's shared wrappers need of an algorithm.
type episoder interface {
	episode(id int) bool
	Break()
}

// failed panics after an episode that failed: with badID for an id out
// of range, else with an error wrapping ErrBroken.
//
//go:noinline
func (b *base) failed(id int) {
	b.checkID(id)
	panicBroken(id)
}

// panicBroken panics with the error of a Wait on a broken barrier.
func panicBroken(id int) {
	panic(fmt.Errorf("barriers: Wait(%d): %w", id, ErrBroken))
}

// brokenError returns the error of a WaitContext on a broken barrier.
func brokenError(id int) error {
	return fmt.Errorf("barriers: WaitContext(%d): %w", id, ErrBroken)
}

// brokenError returns the error of a WaitContext whose episode failed
// (it panics on an id out of range).
//
//go:noinline
func (b *base) brokenError(id int) error {
	b.checkID(id)
	return brokenError(id)
}

// done ends every algorithm's Wait: after an episode that failed it
// panics (see failed). It inlines, so Wait calls episode directly.
func (b *base) done(ok bool, id int) {
	if !ok {
		b.failed(id)
	}
}

// waitContext implements WaitContext for an algorithm a whose base is b.
// Its caller passes ran = ctx.Done() == nil && a.episode(id), so that a
// ctx whose Done is nil runs one episode through a direct call, as Wait
// does, and nothing else when it completes. It inlines; waitContextSlow
// handles the rest.
func (b *base) waitContext(ctx context.Context, a episoder, id int, ran bool) error {
	if ran {
		return nil
	}
	return b.waitContextSlow(ctx, a, id)
}

// waitContextSlow is waitContext for an episode that failed (a ctx whose
// Done is nil) or has not run (a ctx that can end: it arranges, with
// context.AfterFunc, to break the barrier when the ctx ends).
func (b *base) waitContextSlow(ctx context.Context, a episoder, id int) error {
	if ctx.Done() == nil {
		return b.brokenError(id)
	}
	return b.waitContextEnds(ctx, a, id)
}

// waitContextEnds is waitContext for a ctx that can end.
func (b *base) waitContextEnds(ctx context.Context, a episoder, id int) error {
	b.checkID(id)
	if err := ctx.Err(); err != nil {
		a.Break()
		return err
	}
	broke := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		a.Break()
		close(broke)
	})
	ok := a.episode(id)
	if !stop() {
		// The ctx ended and broke the barrier (perhaps just after this
		// episode completed): this caller is the one whose ctx ended.
		// Wait for Break to finish, so that a Reset after this call
		// cannot be undone by a Break still running.
		<-broke
		return ctx.Err()
	}
	if !ok {
		return b.brokenError(id)
	}
	return nil
}

// Break implements Barrier for the flag-based algorithms.
func (b *base) Break() {
	atomic.StoreUint32(&b.broken, 1)
	for _, fs := range b.flagSets {
		for i := range fs {
			fs[i].breakFlag()
		}
	}
}

// Reset implements Barrier for the flag-based algorithms.
func (b *base) Reset() {
	for _, fs := range b.flagSets {
		for i := range fs {
			fs[i].resetFlag()
		}
	}
	for _, c := range b.counters {
		c.Store(0)
	}
	for i := range b.slots {
		atomic.StoreUint64(&b.slots[i].e, 0)
	}
	atomic.StoreUint32(&b.broken, 0)
}

// newFlags returns k flags ready for use, registered for Break and Reset.
//
// Flags and shared counters are never embedded in an algorithm's struct:
// the struct has no particular alignment, so an embedded flag shares its
// cache lines with the struct's read-mostly fields (or a neighbouring
// object), and every write to it makes the next participant that reads
// them miss. Which instances suffered depended on where the allocator put
// them (figures: docs/lab/barriers-comments.md). A slice of flags (a
// multiple of 128 bytes) and a padded counter get a size class that is a
// multiple of 128 bytes, so they start on a cache-line pair of their own
// (TestHotWordsAligned).
func (b *base) newFlags(k int) []flag {
	fs := make([]flag, k)
	for i := range fs {
		b.ready(&fs[i])
	}
	b.flagSets = append(b.flagSets, fs)
	return fs
}

// lined holds a T with a cache-line pair of padding on each side, so that
// no other object shares a line with the T: a barrier's fields are read
// on every episode, and an object the allocator put beside it (the
// allocator packs objects of a size class end to end) that a participant
// writes between its waits made every episode miss on the line they
// shared; alone, an object written beside it costs nothing
// (BenchmarkNeighbour; figures: docs/lab/barriers-comments.md).
type lined[T any] struct {
	_ [osal.CacheLinePad]byte
	v T
	_ [osal.CacheLinePad]byte
}

// alone returns a new zero T that shares no cache line with another
// object (see lined). Every algorithm's struct is made by it.
func alone[T any]() *T { return &new(lined[T]).v }

// aloneSlice returns n zero Ts that share no cache line with another
// object (see lined): the backing array has a cache-line pair's worth of
// spare elements on each side. The per-participant tables an episode
// reads (combining's leaves, mcs's children, a hybrid's paths) are made
// by it.
func aloneSlice[T any](n int) []T {
	size := int(unsafe.Sizeof(*new(T)))
	k := (osal.CacheLinePad + size - 1) / max(size, 1)
	buf := make([]T, n+2*k)
	return buf[k : k+n : k+n]
}

// paddedCounter is a shared counter alone in its cache-line pair.
type paddedCounter struct {
	atomic.Uint64
	_ [osal.CacheLinePad - 8]byte
}

// newCounter allocates a shared counter on a cache-line pair of its own
// and registers it for Reset (see newFlags).
func (b *base) newCounter() *atomic.Uint64 {
	c := &new(paddedCounter).Uint64
	b.counter(c)
	return c
}

// ready prepares a flag for b's policy: Park's setters fence, and so do
// AutoPolicy's where the sleepers cannot (no osal.HeavyFence here).
func (b *base) ready(f *flag) {
	f.cond.L = &f.mu
	if b.w.policy == Park || b.w.policy == bounded && !osal.HeavyFenceAvailable() {
		atomic.StoreInt32(&f.parked, fenced)
	}
}

// counter registers a counter for Reset.
func (b *base) counter(c *atomic.Uint64) { b.counters = append(b.counters, c) }

func newBase(n int, opts []Option) (base, error) {
	c := configOf(opts)
	if n < 1 {
		return base{}, fmt.Errorf("a barrier needs at least 1 participant, got %d", n)
	}
	if n > MaxParticipants {
		return base{}, fmt.Errorf("a barrier takes at most %d participants (MaxParticipants), got %d", MaxParticipants, n)
	}
	if c.fanIn < 2 {
		return base{}, fmt.Errorf("fan-in %d is too small (want 2 or more)", c.fanIn)
	}
	if c.policy < AutoPolicy || c.policy > Park {
		return base{}, fmt.Errorf("unknown policy %d", int(c.policy))
	}
	return base{n: n, w: resolve(c.policy, c.budget, n), slots: make([]slot, n), fanIn: c.fanIn}, nil
}

// build returns a new algorithm of type T for n participants: T made by
// alone (see lined), its base from newBase (opts), then setup allocates
// its flags, counters and tables (the base is set: setup may read n, fanIn
// and the policy).
func build[T any, P interface {
	*T
	Barrier
	setBase(base)
}](n int, opts []Option, setup func(P)) (Barrier, error) {
	b, err := newBase(n, opts)
	if err != nil {
		return nil, err
	}
	x := P(alone[T]())
	x.setBase(b)
	setup(x)
	return x, nil
}

// setBase sets the base of the algorithm that embeds b (see build).
func (b *base) setBase(v base) { *b = v }

// N returns the number of participants.
func (b *base) N() int { return b.n }

// next checks id and returns participant id's next episode number (1, 2,
// ...), or 0 if the barrier is broken. It inlines.
func (b *base) next(id int) uint64 {
	if uint(id) >= uint(len(b.slots)) || atomic.LoadUint32(&b.broken) != 0 {
		return 0 // the wrappers tell a bad id (panic) from a broken barrier
	}
	s := &b.slots[id]
	e := s.e + 1
	spin.StoreRelease(&s.e, e) // a plain store on amd64; Episodes reads it
	return e
}

// checkID panics if id is not a participant of b.
func (b *base) checkID(id int) {
	if uint(id) >= uint(b.n) {
		badID(id, b.n)
	}
}

// Episodes returns how many episodes participant id has entered (since
// construction or the last Reset). Any goroutine may call it; osal's
// Team.RunBarrier uses it to detect a participant that returned while
// another waits for it.
func (b *base) Episodes(id int) uint64 {
	if uint(id) >= uint(b.n) {
		return 0
	}
	return atomic.LoadUint64(&b.slots[id].e)
}

//go:noinline
func badID(id, n int) {
	panic(fmt.Sprintf("barriers: Wait(%d) on a barrier of %d participants (ids are 0..%d)", id, n, n-1))
}

// log2ceil returns ⌈log₂ n⌉ for n >= 1.
func log2ceil(n int) int {
	r := 0
	for 1<<r < n {
		r++
	}
	return r
}
