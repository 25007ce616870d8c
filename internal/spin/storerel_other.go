//go:build !amd64 || race

package spin

import "sync/atomic"

// StoreRelease stores v at *addr with (at least) release ordering. Here it
// is atomic.Store: on arm64 that is already STLR, and race-detector builds
// need the detector to see the synchronisation.
func StoreRelease(addr *uint64, v uint64) { atomic.StoreUint64(addr, v) }
