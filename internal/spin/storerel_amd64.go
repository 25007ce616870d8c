//go:build amd64 && !race

package spin

// StoreRelease stores v at *addr with release ordering: every write before
// it is visible to a thread whose atomic load sees v. On amd64 (TSO) every
// store is a release store, so this is a plain MOV, much cheaper than
// atomic.Store's XCHG, which also orders later loads (a store-load fence).
// Use it only where that fence is supplied otherwise or not needed: the
// barriers' flags use it under every policy, since a flag's waiters either
// never park (Spin, Yield) or, when they park, order the setter's store
// before their own check themselves (AutoPolicy's sleeper takes
// membarrier's heavy fence) or make the setters fence (Park, and
// AutoPolicy without membarrier: flag.setSlow). It is a Go store (not an assembly routine, as it once
// was) so that it inlines into the barriers' hot paths: the Go compiler
// keeps stores in program order and does not remove or defer a store
// through a pointer, which is all a release store needs on amd64.
// Race-detector builds use atomic.Store instead, so the detector sees the
// synchronisation.
func StoreRelease(addr *uint64, v uint64) { *addr = v }
