package sysload

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of /proc/stat's CPU times (USER_HZ: 100 on every
// Linux ABI).
const userHZ = 100

// BusyOthersShare: a span of work is busy when other processes used at
// least this much CPU time over it, as a share of one CPU (0.25: a
// quarter of a CPU). A quiet machine's own daemons and kernel threads use
// a few hundredths; a compiler or a CPU-bound job beside it a whole CPU.
const BusyOthersShare = 0.25

// Usage is the machine's busy CPU time and this process's own (its
// threads and every child process it has waited for, and theirs), read
// together, so that two Usages tell the CPU time others used between
// them. A child still running when a Usage is read is not in Own: read
// the two around work whose children have all been waited for.
type Usage struct {
	When time.Time
	// Machine is the CPU time the CPUs read spent busy (user, nice,
	// system, irq and softirq of /proc/stat's cpuN lines; idle, iowait
	// and steal, the hypervisor's, are not): every CPU, or those of
	// ReadUsage's list.
	Machine time.Duration
	// Own is this process's user and system time and its waited-for
	// children's (getrusage RUSAGE_SELF and RUSAGE_CHILDREN).
	Own time.Duration
	// CPUs is how many CPUs were read (cpuN lines of /proc/stat): each
	// counts its time in whole ticks, so two readings' difference may
	// be off by a tick or so per CPU.
	CPUs int
}

// ReadUsage reads the busy time of the CPUs in cpus (every CPU when
// empty) and this process's. Load on CPUs the process may not use does
// not slow it: a check in a container or under taskset reads only its own
// CPUs, which its threads and children run on. It fails where the system
// has no proc filesystem or no getrusage, or lists none of cpus.
func (p Proc) ReadUsage(cpus ...int) (Usage, error) {
	stat, err := os.ReadFile(p.path("stat"))
	if err != nil {
		return Usage{When: time.Now()}, fmt.Errorf("sysload: %w", err)
	}
	return p.usage(stat, cpus)
}

// usage is ReadUsage's Usage from a stat file just read and this
// process's CPU time read now.
func (p Proc) usage(stat []byte, cpus []int) (Usage, error) {
	u := Usage{When: time.Now()}
	own, err := ownCPU()
	if err != nil {
		return u, err
	}
	if u.Machine, u.CPUs, err = machineBusy(string(stat), cpus); err != nil {
		return u, fmt.Errorf("sysload: %s: %w", p.path("stat"), err)
	}
	u.Own = own
	return u, nil
}

// machineBusy sums the busy fields of a stat file's cpuN lines for the
// CPUs in only (every CPU when empty), and counts the lines summed.
func machineBusy(stat string, only []int) (time.Duration, int, error) {
	want := map[int]bool{}
	for _, c := range only {
		want[c] = true
	}
	var ticks int64
	cpus := 0
	for i, line := range strings.Split(stat, "\n") {
		if i > maxStatLines {
			break
		}
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(f[0][3:])
		if err != nil || n < 0 {
			continue
		}
		if len(want) > 0 && !want[n] {
			continue
		}
		if len(f) < 8 {
			return 0, 0, fmt.Errorf("%s: %d fields, want 7 times or more", f[0], len(f)-1)
		}
		for _, j := range []int{1, 2, 3, 6, 7} { // user nice system irq softirq
			v, err := strconv.ParseInt(f[j], 10, 64)
			if err != nil || v < 0 || v > math.MaxInt64/int64(time.Second)/4 {
				return 0, 0, fmt.Errorf("%s field %d %q: not a count of ticks", f[0], j, f[j])
			}
			ticks += v
		}
		if ticks > math.MaxInt64/int64(time.Second)/4 {
			return 0, 0, fmt.Errorf("%s: ticks past any machine's", f[0])
		}
		cpus++
	}
	if cpus == 0 {
		if len(only) > 0 {
			return 0, 0, fmt.Errorf("no cpuN line for CPUs %v", only)
		}
		return 0, 0, fmt.Errorf("no cpuN line")
	}
	return time.Duration(ticks) * (time.Second / userHZ), cpus, nil
}

// maxStatLines caps the lines of a stat file read: the cpuN lines come
// first, one per CPU (8192 at most on Linux).
const maxStatLines = 8200

// OthersShare is the CPU time other processes (and the kernel's threads)
// used between a and b, as a share of one CPU over the wall time between
// them: 1.0 is a whole CPU's worth. 0 where b is not after a.
func OthersShare(a, b Usage) float64 {
	wall := b.When.Sub(a.When)
	if wall <= 0 {
		return 0
	}
	others := (b.Machine - a.Machine) - (b.Own - a.Own)
	return max(float64(others), 0) / float64(wall)
}

// BusyBetween reports whether other processes used BusyOthersShare of a
// CPU or more between a and b, beyond what the ticks' rounding can add
// (two ticks a CPU over the wall time), and says so in words.
func BusyBetween(a, b Usage) (bool, string) {
	s, bound := OthersShare(a, b), BusyBound(a, b)
	if s < bound {
		return false, ""
	}
	return true, fmt.Sprintf("other processes used %.0f%% of a CPU over those %s (under %.0f%% is quiet)", 100*s, b.When.Sub(a.When).Round(10*time.Millisecond), 100*bound)
}

// BusyBound is the share of a CPU at which BusyBetween calls a and b's
// span busy: BusyOthersShare, plus two ticks of every CPU over the wall
// time (each CPU's time is counted in whole ticks, so a difference of two
// readings may be off by up to that much): 0.45 over 0.2 s on 2 CPUs,
// 0.25 over 20 s.
func BusyBound(a, b Usage) float64 {
	wall := b.When.Sub(a.When)
	if wall <= 0 {
		return math.Inf(1)
	}
	return BusyOthersShare + float64(2*max(a.CPUs, b.CPUs, 1))*float64(time.Second/userHZ)/float64(wall)
}
