package ompcheck

import (
	"slices"
	"strings"
)

// Setting is a set of environment variables, NAME=VALUE, sorted by name;
// empty is the runtime's defaults.
type Setting []string

// NewSetting sorts vars into a Setting (a later NAME replaces an earlier
// one).
func NewSetting(vars ...string) Setting {
	m := map[string]string{}
	for _, kv := range vars {
		name, value, _ := strings.Cut(kv, "=")
		m[name] = value
	}
	out := make(Setting, 0, len(m))
	for name, value := range m {
		out = append(out, name+"="+value)
	}
	slices.Sort(out)
	return out
}

// String is the setting as a shell would write it, "defaults" when empty.
func (s Setting) String() string {
	if len(s) == 0 {
		return "defaults"
	}
	return strings.Join(s, " ")
}

// Shared is the part of s that both runtimes read (OMP_ variables,
// GOMP_CPU_AFFINITY, GOMP_STACKSIZE): setting it for one runtime sets it
// for the other.
func (s Setting) Shared() Setting {
	return s.where(func(name string) bool { return ReadBy(name, LibGOMP) && ReadBy(name, LibOMP) })
}

// Own is the part of s that only runtime reads.
func (s Setting) Own(runtime string) Setting {
	return s.where(func(name string) bool { return ReadBy(name, runtime) && !ReadBy(name, other(runtime)) })
}

// For is the part of s that runtime reads.
func (s Setting) For(runtime string) Setting {
	return s.where(func(name string) bool { return ReadBy(name, runtime) })
}

// where is the part of s whose variables' names keep holds for.
func (s Setting) where(keep func(name string) bool) Setting {
	var out Setting
	for _, kv := range s {
		if name, _, _ := strings.Cut(kv, "="); keep(name) {
			out = append(out, kv)
		}
	}
	return out
}

func other(runtime string) string {
	if runtime == LibGOMP {
		return LibOMP
	}
	return LibGOMP
}

// ReadBy reports whether runtime reads the variable name: both read the
// OpenMP standard's OMP_ variables; libgomp its GOMP_ extensions; libomp
// its KMP_ ones and, for compatibility, libgomp's GOMP_CPU_AFFINITY and
// GOMP_STACKSIZE (kmp_settings.cpp), but not GOMP_SPINCOUNT.
func ReadBy(name, runtime string) bool {
	switch {
	case strings.HasPrefix(name, "OMP_"):
		return true
	case strings.HasPrefix(name, "KMP_"):
		return runtime == LibOMP
	case name == "GOMP_CPU_AFFINITY" || name == "GOMP_STACKSIZE":
		return true
	case strings.HasPrefix(name, "GOMP_"):
		return runtime == LibGOMP
	}
	return false
}

// Candidates are the settings tried for runtime at threads threads on
// the allowed CPUs cpus (a CPU list, "0-1"; its CPU count n): a few,
// chosen from what each runtime's knobs do, each of the runtime's own
// variables, so that a gain measured for one runtime is carried by a
// variable the other does not read (or, for GOMP_CPU_AFFINITY, which
// libomp reads too, one that `barriertune omp-run` sets for libgomp's
// programs only). Every value is one the runtime's parser accepts:
//
//   - libomp (kmp_settings.cpp, kmp_affinity.cpp): KMP_AFFINITY takes
//     modifiers (granularity=fine|core|...) then a type (compact,
//     scatter, ...): granularity=fine,compact binds each thread to one
//     CPU, the closest first; granularity=core,compact to one core's
//     CPUs (what OMP_PLACES=cores OMP_PROC_BIND=close does, in libomp's
//     own variable). KMP_BLOCKTIME takes milliseconds or "infinite";
//     0 sleeps at once rather than spinning, which helps only when
//     threads share CPUs. KMP_PLAIN_BARRIER_PATTERN takes
//     "gather,release" patterns: linear,linear has one thread wake all,
//     where libomp 14's default hyper,hyper wakes sleepers a level at a
//     time (about 0.6x the defaults at 8 threads on 2 CPUs, measured
//     here before). KMP_HW_SUBSET (a subset of the machine, such
//     as 1s,2c,1t) is not tried: on the allowed CPUs it would restrict,
//     not place, the threads.
//   - libgomp (env.c): GOMP_CPU_AFFINITY takes a CPU list (numbers,
//     ranges a-b and strides a-b:s, separated by spaces or commas), the
//     threads bound to its CPUs in turn: the allowed CPUs' list. When
//     the threads outnumber the CPUs, libgomp spins at most
//     min(100, GOMP_SPINCOUNT) times before it sleeps; GOMP_SPINCOUNT=0
//     sleeps at once (a count, with an optional k/M/G/T suffix, or
//     "infinite"); with a CPU per thread, GOMP_SPINCOUNT=infinite spins
//     without ever sleeping.
//
// With a CPU per thread, sleeping at once is not tried (it costs a
// wake-up per barrier); with more threads than CPUs, spinning longer is
// not (it holds the CPU another thread needs), and binding the threads
// to the CPUs in turn is tried only where they divide evenly among them:
// bound unevenly (3 threads on 2 CPUs: two on one, one on the other) the
// barrier waits on the crowded CPU, and the kernel can no longer even
// the load by moving a thread. A check in one host state measured that
// binding faster at 3 threads on 2 CPUs; in the other state it ran 1.6
// times the defaults' time (docs/lab/2026-12-07-acceptance-2.md).
//
// A runtime that does not know a value warns on stderr, and the search
// rejects the setting (ErrRejected) rather than time it.
func Candidates(runtime string, threads int, cpus string, n int) []Setting {
	spare := threads <= n // every thread has a CPU
	switch runtime {
	case LibGOMP:
		if spare {
			return []Setting{NewSetting("GOMP_CPU_AFFINITY=" + cpus), NewSetting("GOMP_SPINCOUNT=infinite")}
		}
		if n > 0 && threads%n != 0 {
			return []Setting{NewSetting("GOMP_SPINCOUNT=0")}
		}
		return []Setting{NewSetting("GOMP_SPINCOUNT=0"), NewSetting("GOMP_SPINCOUNT=0", "GOMP_CPU_AFFINITY="+cpus)}
	case LibOMP:
		if spare {
			return []Setting{NewSetting("KMP_AFFINITY=granularity=fine,compact"), NewSetting("KMP_AFFINITY=granularity=core,compact")}
		}
		return []Setting{NewSetting("KMP_PLAIN_BARRIER_PATTERN=linear,linear"), NewSetting("KMP_BLOCKTIME=0")}
	}
	return nil
}

// HostMovedFactor is how far apart two floors (the one-way time of a
// flag signal between two CPUs) read around OpenMP runs must be to say
// the host moved its vCPUs between states during them: 2 times or more.
// The states seen on this project's VMs are 3-4 times apart (floors of
// 140-220 ns against 40-51 ns), while one state's floors spread up to
// 1.55 times between readings a minute apart (139 and 216 ns), which a
// factor of 1.5 called a move.
const HostMovedFactor = 2.0

// ParseSetting is the setting a candidate's name (Setting.String) names.
func ParseSetting(name string) Setting {
	if name == "defaults" || name == "" {
		return nil
	}
	return NewSetting(strings.Fields(name)...)
}
