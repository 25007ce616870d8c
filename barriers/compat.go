package barriers

// Compatibility shims for callers outside lib's files that still use the
// names the small-API change removed (auto.go, measure). They go away
// once those callers switch; new code must not use them.

// Oversubscribed reports whether n participants exceed GOMAXPROCS or the
// CPUs this process may use.
//
// Deprecated: used by auto.go until it calls oversubscribed.
func Oversubscribed(n int) bool { return oversubscribed(n) }

// NewCentral returns a central-counter barrier.
//
// Deprecated: use New("central", n, opts...).
func NewCentral(n int, opts ...Option) (Barrier, error) { return newCentral(n, opts...) }
