package export

import (
	"fmt"
	"math/bits"
	"sort"
	"strings"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/internal/algname"
)

// Mapping says how one of our algorithms maps onto the barriers that
// OpenMP runtimes and the X-Ray OSAL offer.
type Mapping struct {
	// Algorithm is our name (catalog.Names()).
	Algorithm string
	// Gather and Release are LLVM libomp's barrier patterns
	// (KMP_*_BARRIER_PATTERN="gather,release": linear, tree, hyper,
	// hierarchical, dist).
	Gather, Release string
	// GatherBits and ReleaseBits are libomp's branch bits
	// (KMP_*_BARRIER="gather,release": a node has 2^bits children); -1
	// means "from the fan-in" (log2 of the tuned fan-in). The
	// hierarchical pattern takes its shape from the machine and gets none.
	GatherBits, ReleaseBits int
	// SameShape is true when libomp's pattern builds the same
	// communication graph as ours (not the same code).
	SameShape bool
	// Libomp says how libomp's pattern differs, for the comment line.
	Libomp string
	// OSAL is the X-Ray OSAL folder (x-ray/osal/source/thread_barrier) of
	// the same algorithm, or "".
	OSAL string
	// Blocking is true for the blocking baselines: their waiters block
	// whatever the policy, so OpenMP threads should wait passively.
	Blocking bool
}

// mappings is indexed by our algorithm name. libgomp has no selectable
// barrier (one central counter with spinning then futex waits), so only
// the waiting policy carries over to it.
var mappings = []Mapping{
	{algname.Central, "linear", "linear", 0, 0, false,
		"libomp's linear barrier has the primary thread poll one arrival flag per worker and write one go flag per worker; ours is one shared counter and one release flag", osalFolder(algname.Central), false},
	{algname.StaticTree, "tree", "linear", -1, 0, false,
		"libomp's tree gather has the same f-ary arrival; its linear release writes one go flag per worker where ours flips one global flag", osalFolder(algname.StaticTree), false},
	{algname.AllStaticTree, "tree", "tree", -1, -1, true,
		"same f-ary tree for arrival and release", osalFolder(algname.AllStaticTree), false},
	{algname.Combining, "tree", "linear", -1, 0, false,
		"libomp's tree gather uses per-child flags where ours counts arrivals in shared counters; release is one global flag here", "", false},
	{algname.Dissemination, "hyper", "hyper", 1, 1, false,
		"libomp has no dissemination barrier; hyper with 1 branch bit also finishes in ceil(log2 P) rounds", osalFolder(algname.Dissemination), false},
	{algname.Tournament, "tree", "linear", 1, 0, false,
		"a tournament's static winners form a binary arrival tree; libomp's binary tree gather is that shape, its release differs", "", false},
	{algname.Binomial, "hyper", "linear", 1, 0, false,
		"libomp's hyper gather with 1 branch bit is a binomial spanning tree; its linear release writes one go flag per worker where ours flips one global flag", "", false},
	{algname.Butterfly, "hyper", "hyper", 1, 1, false,
		"libomp has no butterfly; hyper with 1 branch bit pairs threads along the same hypercube dimensions but gathers to one root", osalFolder(algname.Butterfly), false},
	{algname.Pairwise, "hyper", "hyper", 1, 1, false,
		"libomp has no pairwise exchange; hyper with 1 branch bit uses the same recursive-doubling partners", "", false},
	{algname.MCS, "tree", "tree", 2, 1, true,
		"same shape: 4-ary arrival tree and binary wakeup tree (MCS packs child flags into one word, libomp keeps a flag per child)", "rice_tree", false},
	{algname.Goroutine, "linear", "linear", 0, 0, false,
		"ours counts arrivals in one counter and the last to arrive releases everyone (one store, one broadcast to sleepers); libomp's linear barrier has the primary thread collect one flag per worker and wake them one by one", "", false},
	{algname.Hybrid, "hierarchical", "hierarchical", 0, 0, false,
		"libomp's hierarchical barrier also follows the machine's levels, with one fixed algorithm; ours picks an algorithm per level", "", false},
	{algname.Cond, "linear", "linear", 0, 0, false,
		"ours is a mutex, a counter and a condition variable broadcast; libomp's linear barrier has the same one-to-all shape with a flag per worker", "", true},
	{algname.Channel, "linear", "linear", 0, 0, false,
		"ours closes one channel per episode to release everyone; libomp's linear barrier has the same one-to-all shape with a flag per worker", "", true},
}

// MappingFor returns the mapping of one of our algorithm names, or false.
func MappingFor(alg string) (Mapping, bool) {
	for _, m := range mappings {
		if m.Algorithm == alg {
			return m, true
		}
	}
	return Mapping{}, false
}

// Mappings returns every mapping, in catalog order.
func Mappings() []Mapping { return append([]Mapping(nil), mappings...) }

// osalFolder is the X-Ray OSAL folder of an algorithm OSAL has under our
// name: the name with underscores for dashes.
func osalFolder(alg string) string { return strings.ReplaceAll(alg, "-", "_") }

// osalAliases are the X-Ray OSAL folder names that are exactly one of our
// algorithms (the mappings' OSAL fields). pthread (pthread_barrier_wait) is
// not: our nearest, cond, is a sync.Cond generation barrier, not glibc's
// futex barrier.
var osalAliases = func() map[string]string {
	m := map[string]string{}
	for _, mp := range mappings {
		if mp.OSAL != "" {
			m[mp.OSAL] = mp.Algorithm
		}
	}
	return m
}()

// Canonical returns our name for alg, which may be one of our names or an
// X-Ray OSAL folder name that is exactly one of our algorithms
// (rice_tree is mcs, static_tree is static-tree, ...).
func Canonical(alg string) (string, error) {
	if _, err := barriers.Lookup(alg); err == nil {
		return alg, nil
	}
	if ours, ok := osalAliases[alg]; ok {
		return ours, nil
	}
	var aliases []string
	for a := range osalAliases {
		aliases = append(aliases, a)
	}
	sort.Strings(aliases)
	if alg == "pthread" {
		return "", fmt.Errorf("OSAL's pthread barrier has no exact equivalent here (cond is the nearest blocking baseline)")
	}
	return "", fmt.Errorf("unknown barrier algorithm %q (accepted: %s; OSAL aliases: %s)", alg,
		strings.Join(catalog.Names(), ", "), strings.Join(aliases, ", "))
}

// takesFanIn reports whether an algorithm is built with WithFanIn.
func takesFanIn(alg string) bool {
	return alg == algname.StaticTree || alg == algname.AllStaticTree || alg == algname.Combining
}

// branchBits is log2(fanIn) rounded to the nearest integer (ties up), and
// whether fanIn is a power of two (then the bits are exact).
func branchBits(fanIn int) (int, bool) {
	if fanIn < 2 {
		return 1, false
	}
	lo := bits.Len(uint(fanIn)) - 1 // 2^lo <= fanIn < 2^(lo+1)
	if fanIn == 1<<lo {
		return lo, true
	}
	if fanIn-(1<<lo) < (1<<(lo+1))-fanIn {
		return lo, false
	}
	return lo + 1, false
}
