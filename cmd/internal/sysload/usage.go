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
	// Machine is the CPU time every CPU spent busy (user, nice, system,
	// irq and softirq of /proc/stat's cpu line; idle, iowait and steal,
	// the hypervisor's, are not).
	Machine time.Duration
	// Own is this process's user and system time and its waited-for
	// children's (getrusage RUSAGE_SELF and RUSAGE_CHILDREN).
	Own time.Duration
	// CPUs is how many CPUs /proc/stat lists (its cpuN lines): each
	// counts its time in whole ticks, so two readings' difference may
	// be off by a tick or so per CPU.
	CPUs int
}

// ReadUsage reads the machine's busy time and this process's. It fails
// where the system has no proc filesystem or no getrusage.
func (p Proc) ReadUsage() (Usage, error) {
	u := Usage{When: time.Now()}
	own, err := ownCPU()
	if err != nil {
		return u, err
	}
	stat, err := os.ReadFile(p.path("stat"))
	if err != nil {
		return u, fmt.Errorf("sysload: %w", err)
	}
	if u.Machine, u.CPUs, err = machineBusy(string(stat)); err != nil {
		return u, fmt.Errorf("sysload: %s: %w", p.path("stat"), err)
	}
	u.Own = own
	return u, nil
}

// machineBusy sums the busy fields of a stat file's cpu line, and counts
// its cpuN lines.
func machineBusy(stat string) (time.Duration, int, error) {
	line, rest, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("no cpu line with 7 times")
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7} { // user nice system irq softirq
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil || v < 0 || v > math.MaxInt64/int64(time.Second)/4 {
			return 0, 0, fmt.Errorf("cpu line field %d %q: not a count of ticks", i, f[i])
		}
		ticks += v
	}
	cpus := 0
	for _, l := range strings.Split(rest, "\n") {
		if strings.HasPrefix(l, "cpu") && len(l) > 3 && l[3] >= '0' && l[3] <= '9' {
			cpus++
		}
	}
	return time.Duration(ticks) * (time.Second / userHZ), max(cpus, 1), nil
}

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
