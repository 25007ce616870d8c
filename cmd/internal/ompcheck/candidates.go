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

// Union is the setting with both a's and b's variables (b's value wins).
func Union(a, b Setting) Setting { return NewSetting(append(slices.Clone(a), b...)...) }

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

// Families of knobs: a candidate sets one family's knob; the refinement
// combines the leaders of different families.
const (
	FamilyWait    = "wait"    // how a waiting thread waits: spin counts, block times, wait policies
	FamilyPattern = "pattern" // libomp's barrier pattern and branch bits
	FamilyPlaces  = "places"  // OMP_PLACES and OMP_PROC_BIND
)

// Candidate is a setting the search tries and the family of its knob.
type Candidate struct {
	Setting Setting
	Family  string
}

// Candidates are the settings tried for runtime at threads threads on cpus
// allowed CPUs, one knob each. Every value is one the runtime's parser
// accepts:
//
//   - libgomp (env.c): GOMP_SPINCOUNT takes a count, with an optional
//     k/M/G/T suffix, or "infinite"; when its threads outnumber the CPUs
//     libgomp spins at most min(100, GOMP_SPINCOUNT) times (its throttled
//     count), and at most 1000 under OMP_WAIT_POLICY=ACTIVE, so a large
//     count is tried only when each thread has a CPU. OMP_WAIT_POLICY
//     takes ACTIVE or PASSIVE (GOMP_SPINCOUNT=0 is PASSIVE's spinning
//     without setting a variable libomp also reads).
//   - libomp (kmp_settings.cpp): KMP_PLAIN_BARRIER_PATTERN takes
//     "gather,release" among linear, tree, hyper, hierarchical and (since
//     LLVM 14) dist; KMP_PLAIN_BARRIER the branch bits "gather,release"
//     (0 to 12; libomp's default 2,2); KMP_BLOCKTIME milliseconds or
//     "infinite"; KMP_LIBRARY turnaround or throughput (the default).
//     The loop's barrier is the plain barrier; the fork-join barrier's
//     variables are not tried (the loop has one parallel region).
//   - both: OMP_PROC_BIND close or spread, OMP_PLACES cores.
//
// With a CPU per thread, blocking at once (GOMP_SPINCOUNT=0,
// KMP_BLOCKTIME=0) is not tried: it is faster only while other processes
// take the threads' CPUs (measured here: 5 µs against the defaults' 4 ms
// under load, 11 µs against 1.7 µs quiet, libgomp at 2 threads).
//
// A runtime that does not know a value warns on stderr, and the search
// rejects the setting (ErrRejected) rather than time it.
func Candidates(runtime string, threads, cpus int) []Candidate {
	var out []Candidate
	add := func(family string, vars ...string) {
		out = append(out, Candidate{Setting: NewSetting(vars...), Family: family})
	}
	spare := threads <= cpus // every thread has a CPU
	switch runtime {
	case LibGOMP:
		if !spare {
			add(FamilyWait, "GOMP_SPINCOUNT=0")
		}
		if spare {
			add(FamilyWait, "GOMP_SPINCOUNT=1000")
			add(FamilyWait, "GOMP_SPINCOUNT=10000")
			add(FamilyWait, "GOMP_SPINCOUNT=infinite")
		} else {
			add(FamilyWait, "GOMP_SPINCOUNT=10")
			add(FamilyWait, "OMP_WAIT_POLICY=ACTIVE")
		}
	case LibOMP:
		for _, p := range []string{"linear,linear", "tree,tree", "dist,dist", "hierarchical,hierarchical"} {
			add(FamilyPattern, "KMP_PLAIN_BARRIER_PATTERN="+p)
		}
		add(FamilyPattern, "KMP_PLAIN_BARRIER_PATTERN=hyper,hyper", "KMP_PLAIN_BARRIER=1,1")
		add(FamilyPattern, "KMP_PLAIN_BARRIER_PATTERN=hyper,hyper", "KMP_PLAIN_BARRIER=3,3")
		if !spare {
			add(FamilyWait, "KMP_BLOCKTIME=0")
		}
		add(FamilyWait, "KMP_BLOCKTIME=1")
		if spare {
			add(FamilyWait, "KMP_BLOCKTIME=infinite")
			add(FamilyWait, "KMP_LIBRARY=turnaround")
		}
	default:
		return nil
	}
	add(FamilyPlaces, "OMP_PROC_BIND=close")
	add(FamilyPlaces, "OMP_PROC_BIND=spread")
	add(FamilyPlaces, "OMP_PLACES=cores", "OMP_PROC_BIND=close")
	return out
}
