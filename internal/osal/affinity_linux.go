//go:build linux

package osal

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/barriertune/barriertune/cpuset"
)

// Allowed returns the CPUs this process may run on: those it started
// with (the affinity read when this package was initialised, before main
// and before anything pinned a thread: taskset, a batch system's binding
// and a container's cpuset all restrict it) that one of its threads may
// still run on (the union of their affinities, sched_getaffinity of every
// thread listed in /proc/self/task). It is the process's set, never the
// calling thread's: a main thread (or an OpenMP runtime's initial thread,
// or a pinned team's) pinned to one CPU narrows only itself, while the Go
// runtime's other threads (sysmon, started before main, and the threads
// of the Ps, which the runtime starts from an unpinned template thread
// once a locked thread asks for one) keep the affinity the process
// started with; and a thread the process itself pins to a CPU outside
// its start (which the kernel allows within the cpuset) does not widen
// it. A process that narrows every thread narrows it. Where /proc is not
// mounted it is the start set, else the calling thread's affinity.
func Allowed() (cpuset.Set, error) {
	threads, ok := threadsAffinity()
	switch {
	case ok && !startAffinity.IsEmpty():
		if both := threads.And(startAffinity); !both.IsEmpty() {
			return both, nil
		}
		return threads, nil
	case ok:
		return threads, nil
	case !startAffinity.IsEmpty():
		return startAffinity, nil
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return cpuset.Set{}, fmt.Errorf("sched_getaffinity: %w", err)
	}
	return fromUnix(&set), nil
}

// startAffinity is the process's affinity at start: read once, while the
// packages are initialised (the runtime runs them on the main thread,
// locked to it), and never written again, like epoch; empty when it
// could not be read.
var startAffinity = func() cpuset.Set {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return cpuset.Set{}
	}
	return fromUnix(&set)
}()

// maxThreads caps the threads Allowed reads (a Go program has a few
// dozen; one that has more is far past caring which of them is read).
const maxThreads = 4096

// threadsAffinity returns the union of the affinities of the process's
// threads, false when /proc/self/task cannot be listed or no thread's
// affinity could be read (a thread that exited since the listing is
// passed over).
func threadsAffinity() (cpuset.Set, bool) {
	fd, err := unix.Open("/proc/self/task", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return cpuset.Set{}, false
	}
	defer unix.Close(fd)
	var union unix.CPUSet
	read := 0
	buf := make([]byte, 8192)
	for read < maxThreads {
		n, err := unix.ReadDirent(fd, buf)
		if err != nil || n <= 0 {
			break
		}
		_, _, names := unix.ParseDirent(buf[:n], -1, nil)
		for _, name := range names {
			tid, err := strconv.Atoi(name)
			if err != nil || tid <= 0 {
				continue
			}
			var set unix.CPUSet
			if unix.SchedGetaffinity(tid, &set) != nil {
				continue
			}
			for i := range union {
				union[i] |= set[i]
			}
			if read++; read >= maxThreads {
				break
			}
		}
	}
	if read == 0 || union.Count() == 0 {
		return cpuset.Set{}, false
	}
	return fromUnix(&union), true
}

func fromUnix(set *unix.CPUSet) cpuset.Set {
	var cpus []int
	for i := 0; i < len(set)*64; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpuset.Of(cpus...)
}

// threadAffinity returns the calling thread's affinity.
func threadAffinity() (unix.CPUSet, error) {
	var set unix.CPUSet
	err := unix.SchedGetaffinity(0, &set)
	return set, err
}

// Pin binds the calling OS thread to cpu. The caller must have called
// runtime.LockOSThread, or the goroutine may move to another thread and the
// pin would bind whatever goroutine runs there next.
func Pin(cpu int) error {
	if cpu < 0 || cpu >= 1024 {
		return fmt.Errorf("pin to CPU %d: not a CPU number (0..1023)", cpu)
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		allowed, _ := Allowed()
		return fmt.Errorf("pin to CPU %d: %w (allowed CPUs: %s)", cpu, err, allowed)
	}
	return nil
}

// restoreAffinity gives the calling thread back a saved affinity.
func restoreAffinity(set unix.CPUSet) error {
	return unix.SchedSetaffinity(0, &set)
}

// ThreadID returns the calling OS thread's id (gettid), or 0 where the
// system has none to give: the id RunDelay's figures are the thread's of,
// and the tests' way to see which OS thread a goroutine ran on. It is a
// system call: keep it off fast paths (AutoPolicy tells threads apart by
// the runtime's M instead, a load).
func ThreadID() int { return unix.Gettid() }

// ThreadPinned reports whether the calling OS thread may run on one CPU
// only (its affinity names one CPU), as a pinned team's locked threads
// do: such a thread that blocks sleeps in the kernel until it is woken,
// and no other thread can run its goroutine. It is a system call: keep it
// off fast paths.
func ThreadPinned() bool {
	var set unix.CPUSet
	return unix.SchedGetaffinity(0, &set) == nil && set.Count() == 1
}

// RunDelay returns the calling OS thread's id and the time in ns it has
// spent runnable but waiting for a CPU (the kernel's schedstat run_delay:
// preemption by other runnable threads, a CPU quota's throttling), or
// -1 for the delay when the system does not say. A thread that waits for
// a CPU a large share of the time shows that the CPUs are contended; a
// woken thread that briefly takes its waker's CPU adds microseconds, not
// a share. It reads a proc file (a few µs): keep it off fast paths.
func RunDelay() (tid int, ns int64) {
	tid = unix.Gettid()
	var buf [96]byte
	n := readSmall("/proc/self/task/"+strconv.Itoa(tid)+"/schedstat", buf[:])
	f := strings.Fields(string(buf[:n]))
	if len(f) < 2 {
		return tid, -1
	}
	d, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || d < 0 {
		return tid, -1
	}
	return tid, d
}

// Crowded returns how many tasks are runnable on the whole machine right
// now (/proc/loadavg's fourth field: those running and those waiting for
// a CPU, the caller included) and how many CPUs are online, or zeros when
// the system does not say. More runnable tasks than CPUs means some wait
// for one at this moment. It reads two small proc files (a few µs): keep
// it off fast paths.
func Crowded() (runnable, online int) {
	var buf [128]byte
	n := readSmall("/proc/loadavg", buf[:])
	f := strings.Fields(string(buf[:n]))
	if len(f) < 4 {
		return 0, 0
	}
	r, _, _ := strings.Cut(f[3], "/")
	runnable, err := strconv.Atoi(r)
	if err != nil || runnable < 0 {
		return 0, 0
	}
	online = OnlineCPUs().Len()
	if online == 0 {
		return 0, 0
	}
	return runnable, online
}

// readSmall reads up to len(buf) bytes of a small file into buf and
// returns how many (0 on any error).
func readSmall(path string, buf []byte) int {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return 0
	}
	defer unix.Close(fd)
	n, err := unix.Read(fd, buf)
	if err != nil || n < 0 {
		return 0
	}
	return n
}
