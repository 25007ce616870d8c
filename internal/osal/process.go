package osal

import (
	"runtime"
	"sync"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/cgroup"
)

// usable is the process's usable CPU count, read once (the accepted
// sync.Once-cached fact of the process).
var usable struct {
	once sync.Once
	n    int
}

// Usable returns how many CPUs this process may run on at once: the CPUs
// it was allowed at start (runtime.NumCPU: the affinity the runtime read
// before main, and before anything pinned a thread), no more than its
// cgroup's cpuset allows and no more than its CPU quota buys (the
// tightest of the cgroup and its ancestors; internal/cgroup reads both).
// It never reads the calling thread's affinity, which a pinned thread (an
// OpenMP runtime's initial thread, a pinned team) has narrowed to its own
// CPU. Read once per process, at the first call; at least 1.
func Usable() int {
	usable.once.Do(func() { usable.n = usableWithin(runtime.NumCPU(), cgroup.Read("/")) })
	return usable.n
}

// usableWithin is Usable for a process allowed numCPU CPUs at start with
// the cgroup limits l.
func usableWithin(numCPU int, l cgroup.Limits) int {
	n := max(numCPU, 1)
	if k := l.CPUs.Len(); k > 0 {
		n = min(n, k)
	}
	if l.Quota > 0 {
		n = min(n, l.Quota)
	}
	return max(n, 1)
}

// Oversubscribed reports whether n ranks outnumber what this process runs
// at once: GOMAXPROCS, or the CPUs it may use (Usable: its CPUs at start
// within its cgroup's cpuset and CPU quota). Each rank beyond them waits
// for a CPU that another rank holds, so a spinning rank delays the one it
// waits for. This is the one meaning of oversubscribed in this process;
// cpuset.Placement.Oversubscribed is the placement's own half, and
// OversubscribedHere joins the two.
func Oversubscribed(n int) bool {
	return n > runtime.GOMAXPROCS(0) || n > Usable()
}

// OversubscribedHere reports whether p's ranks cannot each hold a CPU of
// their own in this process: a CPU holds more than one rank
// (p.Oversubscribed) or the ranks outnumber what the process runs at once
// (Oversubscribed). Such a team runs as plain goroutines and pure spinning
// is the wrong wait.
func OversubscribedHere(p cpuset.Placement) bool {
	return p.Oversubscribed() || Oversubscribed(len(p))
}
