package barriers

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/internal/spin"
)

// Adding an algorithm (Break, Reset and WaitContext come almost free):
//   1. embed base (from newBase) in the algorithm's struct; allocate the
//      struct first, then its flags with x.newFlags(k) and its shared
//      counters with x.newCounter() (never embed a flag or a counter: see
//      base.newFlags);
//   2. write episode(id int) bool: start with `e := x.next(id)` and return
//      false if e == 0 (broken, or an id out of range); set flags with
//      f.set(e, &x.w); wait with `if !f.await(e, &x.w) { return false }`
//      (awaitEq for exact values); return true at the end;
//   3. copy the Wait and WaitContext wrappers of dissemination.go;
//   4. add it to Algorithms (and its tests run it: broken_test.go and
//      barriers_test.go iterate the catalog).
// base's Break and Reset then work unchanged; a blocking algorithm (see
// blocking.go) defines its own Break and Reset under its mutex instead.

// Barrier synchronises n participants.
type Barrier interface {
	// Wait blocks participant id until all n participants have called Wait
	// for the current episode. It panics if id is outside 0..n-1, and with
	// an error wrapping ErrBroken if the barrier is or becomes broken.
	Wait(id int)
	// WaitContext is Wait that ends early: it returns nil when the episode
	// completes; ctx.Err() when ctx ends first, which also breaks the
	// barrier (the others cannot complete the episode without this
	// participant); and an error wrapping ErrBroken when the barrier is or
	// becomes broken otherwise. A ctx whose Done is nil costs what Wait
	// costs.
	WaitContext(ctx context.Context, id int) error
	// Break breaks the barrier: every current waiter returns (WaitContext
	// with an error wrapping ErrBroken, Wait by panicking with it) within a
	// millisecond under every policy, and so does every later call until
	// Reset. Participants whose episode completed as Break ran may still
	// return normally from that episode. Break may be called any time,
	// from any goroutine, more than once.
	Break()
	// Reset repairs the barrier: all state returns to new, episode counts
	// included. It may be called only while no participant is inside Wait
	// or WaitContext (after every participant returned from the break).
	Reset()
	// N returns the number of participants.
	N() int
}

// MaxParticipants is the most participants a barrier takes: as many as the
// largest CPU set barriertune reads (65,536 CPUs). New refuses more before
// allocating anything; the tuner's thread counts share the cap.
const MaxParticipants = 1 << 16

// ErrBroken is wrapped by the error of every wait on a broken barrier.
var ErrBroken = errors.New("barrier is broken")

// Option configures a barrier at construction.
type Option func(*config)

type config struct {
	policy    Policy
	policySet bool // WithPolicy was given: BARRIERTUNE_WAIT_POLICY does not apply
	budget    int
	fanIn     int
	hierarchy Hierarchy // WithHierarchy, read by the hybrid only
}

// configOf applies opts over the defaults, then the environment's wait
// policy (WaitPolicyFromEnv) unless an option chose the policy.
func configOf(opts []Option) config {
	c := config{fanIn: DefaultFanIn, budget: -1}
	for _, o := range opts {
		o(&c)
	}
	if !c.policySet {
		if p, set := envWaitPolicy(); set {
			c.policy = p
			if p == Park && c.budget < 0 {
				c.budget = 0 // passive: no spinning
			}
		}
	}
	return c
}

// WithPolicy sets the waiting policy of a spinning algorithm (blocking
// baselines ignore it). The default is AutoPolicy, or the one
// BARRIERTUNE_WAIT_POLICY names (see WaitPolicyFromEnv); WithPolicy
// overrides the environment.
func WithPolicy(p Policy) Option { return func(c *config) { c.policy, c.policySet = p, true } }

// WithSpinBudget sets how many relax-hint iterations Yield, Park and AutoPolicy
// spin before yielding or blocking (0: none; negative: the default, which
// for AutoPolicy is a time bound, see AutoPolicy).
func WithSpinBudget(iterations int) Option { return func(c *config) { c.budget = iterations } }

// DefaultFanIn is the fan-in of the combining tree and the fan-out of the
// static trees when WithFanIn does not set one.
const DefaultFanIn = 4

// WithFanIn sets the fan-in of the combining tree and the fan-out of the
// static trees (default DefaultFanIn; at least 2).
func WithFanIn(k int) Option { return func(c *config) { c.fanIn = k } }

// Algorithm describes one barrier algorithm of the catalog.
type Algorithm struct {
	// Name is the registry key, e.g. "dissemination".
	Name string
	// Source cites where the algorithm comes from.
	Source string
	// Cost is its cost from table 2.1 of Hoefler's thesis (LogP: L latency,
	// o overhead, P participants, t_bc a broadcast).
	Cost string
	// Spins is false for the blocking baselines, which ignore the policy.
	Spins bool
	// FanIn is true for the trees that take WithFanIn (the others ignore
	// it).
	FanIn bool
	// New constructs the barrier for n participants.
	New func(n int, opts ...Option) (Barrier, error)
}

// Algorithms returns the catalog, simplest first: that order breaks ties
// when the tuner finds two algorithms equally fast.
func Algorithms() []Algorithm {
	return []Algorithm{
		{Name: "central", Source: "sense-reversing central counter (Mellor-Crummey & Scott 1991)", Cost: "L + P·o + t_bc(P−1)", Spins: true, New: newCentral},
		{Name: "static-tree", Source: "static f-way tree, one global release flag (MCS 1991 §3.3 arrival)", Cost: "(L + f·o)⌈log_f P⌉ + t_bc(P−1)", Spins: true, FanIn: true, New: newStaticTree},
		{Name: "all-static-tree", Source: "static f-way tree, release down the same tree", Cost: "2(L + f·o)⌈log_f P⌉", Spins: true, FanIn: true, New: newAllStaticTree},
		{Name: "combining", Source: "combining tree of counters (Yew, Tzeng & Lawrie 1987)", Cost: "(L + n·o)⌈log_n P⌉ + t_bc(P−1)", Spins: true, FanIn: true, New: newCombining},
		{Name: "dissemination", Source: "dissemination (Hensgen, Finkel & Manber 1988)", Cost: "(L + 2o)⌈log₂ P⌉", Spins: true, New: newDissemination},
		{Name: "tournament", Source: "tournament with static winners (Hensgen, Finkel & Manber 1988)", Cost: "(L + 2o)⌈log₂ P⌉ + t_bc(P−1)", Spins: true, New: newTournament},
		{Name: "binomial", Source: "binomial spanning tree (Tzeng & Kongmunvattana 1997)", Cost: "(L + 3o)⌈log₂ P⌉ + t_bc(P−1)", Spins: true, New: newBinomial},
		{Name: "butterfly", Source: "butterfly with virtual partners (Brooks 1986)", Cost: "2(L + 2o)⌈log₂ P⌉", Spins: true, New: newButterfly},
		{Name: "pairwise", Source: "pairwise exchange with recursive doubling (Gupta et al. 2002)", Cost: "(L + 2o)⌊log₂ P⌋ + 2(L + 2o)", Spins: true, New: newPairwise},
		{Name: "mcs", Source: "MCS tree: 4-ary arrival, packed child flags, binary wakeup (Mellor-Crummey & Scott 1991)", Cost: "(L + (n+1)o)⌈log_n P⌉ + t_bc(P−1)", Spins: true, New: newMCS},
		{Name: "hybrid", Source: "hierarchical composition, greedy per level (Meyer & Elster); flat dissemination without WithHierarchy", Cost: "Σ over levels of the level's algorithm + a release flag per level", Spins: true, New: newHybrid},
		{Name: "goroutine", Source: "goroutines beyond GOMAXPROCS: lock-free arrival, one adaptive yield, then a park on a per-episode condition variable", Cost: "P·o + a yield, or a park and a wakeup, per participant", Spins: true, New: newGoroutine},
		{Name: "cond", Source: "blocking baseline: sync.Cond generation barrier", Cost: "a kernel or scheduler wakeup per participant", Spins: false, New: newCond},
		{Name: "channel", Source: "blocking baseline: a channel closed per episode", Cost: "a kernel or scheduler wakeup per participant", Spins: false, New: newChannel},
	}
}

// names returns the algorithm names in catalog order.
func names() []string {
	var out []string
	for _, a := range Algorithms() {
		out = append(out, a.Name)
	}
	return out
}

// Lookup returns the algorithm called name.
func Lookup(name string) (Algorithm, error) {
	for _, a := range Algorithms() {
		if a.Name == name {
			return a, nil
		}
	}
	names := names()
	sort.Strings(names)
	return Algorithm{}, fmt.Errorf("unknown barrier algorithm %q (accepted: %s)", name, strings.Join(names, ", "))
}

// New constructs the algorithm called name for n participants.
func New(name string, n int, opts ...Option) (Barrier, error) {
	a, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return a.New(n, opts...)
}

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
//   - define Wait and WaitContext as the short wrappers the other
//     algorithms use (Wait calls episode directly and b.failed on false;
//     WaitContext runs episode directly for a ctx whose Done is nil and
//     b.waitContext otherwise).
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

// waitContext implements WaitContext for an algorithm: a ctx that can end
// arranges (context.AfterFunc) to break the barrier when it does.
func (b *base) waitContext(ctx context.Context, a episoder, id int) error {
	if ctx.Done() == nil {
		if a.episode(id) {
			return nil
		}
		return b.brokenError(id)
	}
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
// them: a static tree built second ran 1.1-1.2x slower than one built
// first. A slice of flags (a multiple of 128 bytes) and a padded counter
// get a size class that is a multiple of 128 bytes, so they start on a
// cache-line pair of their own (TestHotWordsAligned).
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
// shared. Measured: two pinned threads on a dissemination barrier, one of
// them writing an object packed beside it, 377-460 ns an episode against
// 170-190 without the writes; alone, the same with and without
// (BenchmarkNeighbour).
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
