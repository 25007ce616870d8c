// Package barriers holds thread-barrier algorithms for n participants and
// picks among them: the central counter, combining tree, tournament,
// dissemination, butterfly, pairwise exchange, static and all-static trees,
// the MCS tree, the binomial spanning tree, and two blocking baselines
// (sync.Cond and channels) that show what spinning buys.
//
// Every algorithm implements Barrier: participant id (0 <= id < n) calls
// Wait(id) once per episode; Wait returns when all n participants have
// called it for that episode. Wait is a full barrier: every write any
// participant made before its Wait is visible to every participant after its
// Wait. A participant's state lives in its own padded slot, so ids must be
// distinct and each id used by one goroutine at a time.
//
// Spinning algorithms wait according to a Policy. The default, AutoPolicy,
// always makes progress, even with more participants than CPUs or
// GOMAXPROCS; pure Spin is for dedicated, pinned threads.
//
// Auto returns the algorithm that the install-time check (`barriertune
// check`) found fastest on this machine for n participants, with a
// documented fallback when there are no results for this machine.
package barriers

import (
	"fmt"
	"sort"
	"strings"
)

// Barrier synchronises n participants.
type Barrier interface {
	// Wait blocks participant id until all n participants have called Wait
	// for the current episode. It panics if id is outside 0..n-1.
	Wait(id int)
	// N returns the number of participants.
	N() int
}

// Option configures a barrier at construction.
type Option func(*config)

type config struct {
	policy    Policy
	budget    int
	fanIn     int
	hierarchy []Level // WithHierarchy, read by the hybrid only
}

// WithPolicy sets the waiting policy of a spinning algorithm (blocking
// baselines ignore it). The default is AutoPolicy.
func WithPolicy(p Policy) Option { return func(c *config) { c.policy = p } }

// WithSpinBudget sets how many relax-hint iterations Yield, Park and AutoPolicy
// spin before yielding or blocking (0: none; negative: the default).
func WithSpinBudget(iterations int) Option { return func(c *config) { c.budget = iterations } }

// WithFanIn sets the fan-in of the combining tree and the fan-out of the
// static trees (default 4; at least 2).
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
	// New constructs the barrier for n participants.
	New func(n int, opts ...Option) (Barrier, error)
}

// Algorithms returns the catalog, simplest first: that order breaks ties
// when the tuner finds two algorithms equally fast.
func Algorithms() []Algorithm {
	return []Algorithm{
		{"central", "sense-reversing central counter (Mellor-Crummey & Scott 1991)", "L + P·o + t_bc(P−1)", true, NewCentral},
		{"static-tree", "static f-way tree, one global release flag (MCS 1991 §3.3 arrival)", "(L + f·o)⌈log_f P⌉ + t_bc(P−1)", true, NewStaticTree},
		{"all-static-tree", "static f-way tree, release down the same tree", "2(L + f·o)⌈log_f P⌉", true, NewAllStaticTree},
		{"combining", "combining tree of counters (Yew, Tzeng & Lawrie 1987)", "(L + n·o)⌈log_n P⌉ + t_bc(P−1)", true, NewCombining},
		{"dissemination", "dissemination (Hensgen, Finkel & Manber 1988)", "(L + 2o)⌈log₂ P⌉", true, NewDissemination},
		{"tournament", "tournament with static winners (Hensgen, Finkel & Manber 1988)", "(L + 2o)⌈log₂ P⌉ + t_bc(P−1)", true, NewTournament},
		{"binomial", "binomial spanning tree (Tzeng & Kongmunvattana 1997)", "(L + 3o)⌈log₂ P⌉ + t_bc(P−1)", true, NewBinomial},
		{"butterfly", "butterfly with virtual partners (Brooks 1986)", "2(L + 2o)⌈log₂ P⌉", true, NewButterfly},
		{"pairwise", "pairwise exchange with recursive doubling (Gupta et al. 2002)", "(L + 2o)⌊log₂ P⌋ + 2(L + 2o)", true, NewPairwise},
		{"mcs", "MCS tree: 4-ary arrival, packed child flags, binary wakeup (Mellor-Crummey & Scott 1991)", "(L + (n+1)o)⌈log_n P⌉ + t_bc(P−1)", true, NewMCS},
		{"hybrid", "hierarchical composition, greedy per level (Meyer & Elster); flat dissemination without WithHierarchy", "Σ over levels of the level's algorithm + a release flag per level", true, newHybrid},
		{"cond", "blocking baseline: sync.Cond generation barrier", "a kernel or scheduler wakeup per participant", false, NewCond},
		{"channel", "blocking baseline: a channel closed per episode", "a kernel or scheduler wakeup per participant", false, NewChannel},
	}
}

// Names returns the algorithm names in catalog order.
func Names() []string {
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
	names := Names()
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

// base holds what every algorithm shares: n, the waiting policy and each
// participant's episode counter in its own padded slot.
type base struct {
	n     int
	w     waiter
	slots []slot
	fanIn int
}

func newBase(n int, opts []Option) (base, error) {
	c := config{fanIn: 4, budget: -1}
	for _, o := range opts {
		o(&c)
	}
	if n < 1 {
		return base{}, fmt.Errorf("a barrier needs at least 1 participant, got %d", n)
	}
	if c.fanIn < 2 {
		return base{}, fmt.Errorf("fan-in %d is too small (want 2 or more)", c.fanIn)
	}
	if c.policy < AutoPolicy || c.policy > Park {
		return base{}, fmt.Errorf("unknown policy %d", int(c.policy))
	}
	p, budget := resolve(c.policy, c.budget, n)
	return base{n: n, w: waiter{policy: p, budget: budget}, slots: make([]slot, n), fanIn: c.fanIn}, nil
}

// N returns the number of participants.
func (b *base) N() int { return b.n }

// next checks id and returns participant id's next episode number (1, 2, ...).
func (b *base) next(id int) uint64 {
	if uint(id) >= uint(b.n) {
		badID(id, b.n)
	}
	b.slots[id].e++
	return b.slots[id].e
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
