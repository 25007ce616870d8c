package barriers

import (
	"fmt"
	"sort"
	"strings"

	"github.com/barriertune/barriertune/internal/algname"
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
//   3. define Wait and WaitContext as the one-line wrappers of central.go
//      (base.done and base.waitContext hold their logic);
//   4. name it in internal/algname (a constant and All) and add it to
//      Algorithms under that constant (its tests then run it:
//      broken_test.go and barriers_test.go iterate the catalog).
// base's Break and Reset then work unchanged; a blocking algorithm (see
// blocking.go) defines its own Break and Reset under its mutex instead.

// Algorithm describes one barrier algorithm of the catalog.
type Algorithm struct {
	// Name is the registry key, spelled by internal/algname (e.g.
	// algname.Dissemination).
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
		{Name: algname.Central, Source: "sense-reversing central counter (Mellor-Crummey & Scott 1991)", Cost: "L + P·o + t_bc(P−1)", Spins: true, New: newCentral},
		{Name: algname.StaticTree, Source: "static f-way tree, one global release flag (MCS 1991 §3.3 arrival)", Cost: "(L + f·o)⌈log_f P⌉ + t_bc(P−1)", Spins: true, FanIn: true, New: newStaticTree},
		{Name: algname.AllStaticTree, Source: "static f-way tree, release down the same tree", Cost: "2(L + f·o)⌈log_f P⌉", Spins: true, FanIn: true, New: newAllStaticTree},
		{Name: algname.Combining, Source: "combining tree of counters (Yew, Tzeng & Lawrie 1987)", Cost: "(L + n·o)⌈log_n P⌉ + t_bc(P−1)", Spins: true, FanIn: true, New: newCombining},
		{Name: algname.Dissemination, Source: "dissemination (Hensgen, Finkel & Manber 1988)", Cost: "(L + 2o)⌈log₂ P⌉", Spins: true, New: newDissemination},
		{Name: algname.Tournament, Source: "tournament with static winners (Hensgen, Finkel & Manber 1988)", Cost: "(L + 2o)⌈log₂ P⌉ + t_bc(P−1)", Spins: true, New: newTournament},
		{Name: algname.Binomial, Source: "binomial spanning tree (Tzeng & Kongmunvattana 1997)", Cost: "(L + 3o)⌈log₂ P⌉ + t_bc(P−1)", Spins: true, New: newBinomial},
		{Name: algname.Butterfly, Source: "butterfly with virtual partners (Brooks 1986)", Cost: "2(L + 2o)⌈log₂ P⌉", Spins: true, New: newButterfly},
		{Name: algname.Pairwise, Source: "pairwise exchange with recursive doubling (Gupta et al. 2002)", Cost: "(L + 2o)⌊log₂ P⌋ + 2(L + 2o)", Spins: true, New: newPairwise},
		{Name: algname.MCS, Source: "MCS tree: 4-ary arrival, packed child flags, binary wakeup (Mellor-Crummey & Scott 1991)", Cost: "(L + (n+1)o)⌈log_n P⌉ + t_bc(P−1)", Spins: true, New: newMCS},
		{Name: algname.Hybrid, Source: "hierarchical composition, greedy per level (Meyer & Elster); flat dissemination without WithHierarchy", Cost: "Σ over levels of the level's algorithm + a release flag per level", Spins: true, New: newHybrid},
		{Name: algname.Goroutine, Source: "goroutines beyond GOMAXPROCS: lock-free arrival, one adaptive yield, then a park on a per-episode condition variable", Cost: "P·o + a yield, or a park and a wakeup, per participant", Spins: true, New: newGoroutine},
		{Name: algname.Cond, Source: "blocking baseline: sync.Cond generation barrier", Cost: "a kernel or scheduler wakeup per participant", Spins: false, New: newCond},
		{Name: algname.Channel, Source: "blocking baseline: a channel closed per episode", Cost: "a kernel or scheduler wakeup per participant", Spins: false, New: newChannel},
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
