//go:build amd64 && !race

package spin

// StoreRelease stores v at *addr with release ordering: every write before
// it is visible to a thread whose atomic load sees v. On amd64 (TSO) that is
// a plain MOV, much cheaper than atomic.Store's XCHG, which also orders
// later loads (a store-load fence). Use it only where no thread relies on
// that fence, e.g. a flag whose waiters never park. Race-detector builds use
// atomic.Store instead, so the detector sees the synchronisation.
//
//go:noescape
func StoreRelease(addr *uint64, v uint64)
