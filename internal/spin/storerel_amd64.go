//go:build amd64 && !race

package spin

// StoreRelease stores v at *addr with release ordering: every write before
// it is visible to a thread whose atomic load sees v. On amd64 (TSO) every
// store is a release store, so this is a plain MOV, much cheaper than
// atomic.Store's XCHG, which also orders later loads (a store-load fence).
// Use it only where no thread relies on that fence, e.g. a flag whose
// waiters never park. It is a Go store (not an assembly routine, as it once
// was) so that it inlines into the barriers' hot paths: the Go compiler
// keeps stores in program order and does not remove or defer a store
// through a pointer, which is all a release store needs on amd64.
// Race-detector builds use atomic.Store instead, so the detector sees the
// synchronisation.
func StoreRelease(addr *uint64, v uint64) { *addr = v }
