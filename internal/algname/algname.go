// Package algname spells the barrier algorithms' names: it is the one
// place a name is written. barriers registers its catalog under these
// constants, and the packages that cannot import barriers (results, which
// barriers imports) or that key a table by algorithm (the tuner's model,
// the exports, the check, the scripts) use them too. Its test holds All to
// barriers.Algorithms(), so a catalog change fails it until the names and
// every table keyed by them follow.
package algname

// The names, as barriers registers them (Algorithm.Name).
const (
	Central       = "central"
	StaticTree    = "static-tree"
	AllStaticTree = "all-static-tree"
	Combining     = "combining"
	Dissemination = "dissemination"
	Tournament    = "tournament"
	Binomial      = "binomial"
	Butterfly     = "butterfly"
	Pairwise      = "pairwise"
	MCS           = "mcs"
	Hybrid        = "hybrid"
	Goroutine     = "goroutine"
	Cond          = "cond"
	Channel       = "channel"
)

// The fallbacks, where no results file speaks for a count: Fallback
// (dissemination, the fewest sequential steps) for threads that fit the
// CPUs; Oversubscribed (goroutine: a lock-free counter, one yield, then
// parking) for more threads than CPUs. barriers.Auto, the selection
// (results.Selector.Select) and the C header's export all fall back to
// them.
const (
	Fallback       = Dissemination
	Oversubscribed = Goroutine
)

// All returns every name in barriers' catalog order.
func All() []string {
	return []string{Central, StaticTree, AllStaticTree, Combining, Dissemination, Tournament,
		Binomial, Butterfly, Pairwise, MCS, Hybrid, Goroutine, Cond, Channel}
}

// GoOnly reports whether the algorithm name exists only in Go: the
// goroutine barrier and the blocking baselines built on sync.Cond and
// channels, which a C, C++ or OpenMP program cannot run.
func GoOnly(name string) bool { return name == Goroutine || name == Cond || name == Channel }
