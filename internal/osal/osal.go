// Package osal is the thin layer between barriertune and the operating
// system: pinning locked OS threads to CPUs, the allowed CPU set, teams of
// pinned threads, a CPU relax hint for spin loops, a monotonic clock, and
// padding against false sharing.
package osal

import (
	"runtime"
	"time"

	"github.com/barriertune/barriertune/cpuset"
)

// CacheLinePad is the distance in bytes kept between hot words that
// different threads write: two 64-byte lines, because x86 prefetches the
// adjacent line and would otherwise couple neighbours.
const CacheLinePad = 128

// Pad fills out a struct so its hot word does not share a cache-line pair
// with the next one; embed it after a field of 8 bytes or less.
type Pad [CacheLinePad - 8]byte

// epoch is the fixed origin of Nanotime; it is set once and never written.
var epoch = time.Now()

// Nanotime returns monotonic nanoseconds since an arbitrary fixed origin.
func Nanotime() int64 { return int64(time.Since(epoch)) }

// AtOnce is the part of allowed that this process runs at once: its first
// k CPUs, where k, the fewest of Usable (the CPUs at start within
// the cgroup's cpuset and CPU quota) and GOMAXPROCS, is fewer than allowed
// holds; else allowed. A results file's selection inside it takes the
// oversubscribed rule for more participants than k, as the fallback
// (Oversubscribed) and the C header do: inside a half-CPU quota two
// goroutines must not spin for each other.
func AtOnce(allowed cpuset.Set) cpuset.Set {
	k := min(Usable(), runtime.GOMAXPROCS(0))
	if k < 1 || k >= allowed.Len() {
		return allowed
	}
	return cpuset.Of(allowed.Members()[:k]...)
}
