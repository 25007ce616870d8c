package results

import (
	"fmt"
	"strings"
)

// OpenMP (v1.5; v1.6 adds the stencil loop, undecided counts and pairs;
// v1.7 the host's floor before and after the step)
// is the check's measurement of the OpenMP runtimes on this
// machine: per runtime, the runtime's defaults timed against settings of
// its own knobs on an OpenMP barrier loop, per thread count
// (cmd/internal/ompcheck). `export --format omp-env` sets only what this
// measured to help.
type OpenMP struct {
	// Loop describes the loop timed (one parallel region, a plain barrier
	// after a little private work per thread) and one run's length.
	Loop string `json:"loop"`
	// Seconds is the wall time the step took; Share the most of the
	// budget it could take.
	Seconds float64 `json:"seconds"`
	Share   string  `json:"share"`
	// Runtimes are the runtimes looked for, measured or not.
	Runtimes []OpenMPRuntime `json:"runtimes"`
	// HostFloorBeforeNs and HostFloorAfterNs (v1.7) are the check's floor
	// (the one-way time of a barrier flag signal between the first two
	// allowed CPUs) measured just before the step and just after it: the
	// host state the step's times belong to. A VM's host can move its
	// vCPUs between states whose floors are several times apart, and an
	// OpenMP barrier's time moves with them, so a time compared with this
	// file's is comparable only in the state these show. Absent where not
	// measured (one allowed CPU, GOMAXPROCS 1, older files).
	HostFloorBeforeNs float64 `json:"host_floor_before_ns,omitempty"`
	HostFloorAfterNs  float64 `json:"host_floor_after_ns,omitempty"`
	// HostMoved (v1.7) says that the two floors are 2 times apart or
	// more (1.5 before 7 Dec 2026): the host moved during the step, and
	// its times mix states.
	HostMoved string `json:"host_moved,omitempty"`
}

// OpenMPRuntime is one runtime: what built and ran it, and its counts.
type OpenMPRuntime struct {
	// Name is libgomp or libomp; Compiler the compiler (path) whose
	// -fopenmp links it.
	Name     string `json:"name"`
	Compiler string `json:"compiler"`
	// Library is the runtime's shared object the loop loaded (symbolic
	// links resolved) and Version the runtime's version (libomp's
	// KMP_VERSION report, else the compiler's version); absent when not
	// measured.
	Library string `json:"library,omitempty"`
	Version string `json:"version,omitempty"`
	// NotMeasured says why the runtime was not measured (no compiler, a
	// compilation that failed, a program that did not run, no budget
	// left); absent when it was.
	NotMeasured string `json:"not_measured,omitempty"`
	// Counts are the thread counts measured.
	Counts []OpenMPCount `json:"counts,omitempty"`
}

// OpenMPCount is one runtime at one thread count.
type OpenMPCount struct {
	Threads int `json:"threads"`
	// DefaultNs is the median ns per barrier of the plain barrier loop
	// under the runtime's defaults (the runs paired with Best when one is
	// chosen, else every run of them at this count), each run's time the
	// median of its chunks after an untimed warm-up; 0 with NotMeasured.
	// DefaultStencilNs (v1.6) is the same for the stencil loop.
	DefaultNs        float64 `json:"default_ns,omitempty"`
	DefaultStencilNs float64 `json:"default_stencil_ns,omitempty"`
	// Best is the setting chosen (NAME=VALUE, sorted), faster than the
	// defaults by the check's tie margin and significance test and
	// confirmed in fresh pairs; absent when the defaults stay (Why says
	// why). BestNs is its median, MarginPct how much slower the defaults'
	// median is, in percent, and Test the test that separated them.
	// BestStencilNs (v1.6) is its median on the stencil loop, which it
	// must not slow.
	Best          []string `json:"best,omitempty"`
	BestNs        float64  `json:"best_ns,omitempty"`
	BestStencilNs float64  `json:"best_stencil_ns,omitempty"`
	MarginPct     float64  `json:"margin_pct,omitempty"`
	Test          string   `json:"test,omitempty"`
	// Why says why the defaults stay, or why Best is not the fastest
	// measured (a variable both runtimes read must agree).
	Why string `json:"why,omitempty"`
	// NotMeasured says why this count was not measured.
	NotMeasured string `json:"not_measured,omitempty"`
	// NotDecided (v1.6) says that the runs were too few to decide (how
	// many pairs each setting had, how many a decision needs, and the
	// budget that would give them, NeedBudgetS in seconds): the defaults
	// stay, whatever the runs showed.
	NotDecided  string  `json:"not_decided,omitempty"`
	NeedBudgetS float64 `json:"need_budget_s,omitempty"`
	// Failed are the settings that crashed, hung (killed by process
	// group) or were refused by the runtime, each with what happened;
	// none of them is ever chosen.
	Failed []string `json:"failed,omitempty"`
	// Settings is how many settings were timed, Runs how many runs of
	// the loops the count took, Pairs (v1.6) the most pairs of a setting
	// and the defaults recorded, and Unsteady (v1.6) the pairs dropped
	// because a run stayed in transition through its reruns.
	Settings int `json:"settings"`
	Runs     int `json:"runs"`
	Pairs    int `json:"pairs,omitempty"`
	Unsteady int `json:"unsteady,omitempty"`
}

// Runtime returns the record of the named runtime, or nil.
func (o *OpenMP) Runtime(name string) *OpenMPRuntime {
	if o == nil {
		return nil
	}
	for i := range o.Runtimes {
		if o.Runtimes[i].Name == name {
			return &o.Runtimes[i]
		}
	}
	return nil
}

// Count returns the runtime's record of n threads, or nil.
func (r *OpenMPRuntime) Count(n int) *OpenMPCount {
	if r == nil {
		return nil
	}
	for i := range r.Counts {
		if r.Counts[i].Threads == n {
			return &r.Counts[i]
		}
	}
	return nil
}

// validate refuses what an export could not write safely: a thread
// count out of range or repeated, too many counts, a time below 0, or a
// setting that is not NAME=VALUE with a name of the runtimes' (OMP_, KMP_
// or GOMP_ and capitals, digits, underscores) and a plain value
// (runtimeValue).
func (o *OpenMP) validate() error {
	if o == nil {
		return nil
	}
	for _, r := range o.Runtimes {
		if len(r.Counts) > maxOpenMPCounts {
			return fmt.Errorf("openmp %s: %d thread counts (at most %d)", r.Name, len(r.Counts), maxOpenMPCounts)
		}
		seen := map[int]bool{}
		for _, c := range r.Counts {
			if c.Threads < 1 || c.Threads > maxOpenMPThreads || seen[c.Threads] {
				return fmt.Errorf("openmp %s: thread count %d is out of range (1 to %d) or repeated", r.Name, c.Threads, maxOpenMPThreads)
			}
			seen[c.Threads] = true
			if c.DefaultNs < 0 || c.BestNs < 0 || c.DefaultStencilNs < 0 || c.BestStencilNs < 0 || c.NeedBudgetS < 0 {
				return fmt.Errorf("openmp %s, %d threads: a negative time", r.Name, c.Threads)
			}
			for _, kv := range c.Best {
				name, value, ok := strings.Cut(kv, "=")
				if !ok || !runtimeVariable(name) || !runtimeValue(value) {
					return fmt.Errorf("openmp %s, %d threads: setting %q is not NAME=VALUE with an OMP_, KMP_ or GOMP_ name and a plain value (letters, digits, spaces, _ . , = - : +; at most %d characters)", r.Name, c.Threads, kv, maxOpenMPValue)
				}
			}
		}
	}
	return nil
}

// Caps on what an OpenMP record may hold: thread counts (the check
// measures at most 65536 threads), counts per runtime, and a setting's
// value (a CPU list for GOMP_CPU_AFFINITY is the longest the check
// writes).
const (
	maxOpenMPThreads = 1 << 20
	maxOpenMPCounts  = 4096
	maxOpenMPValue   = 1 << 16
)

// runtimeValue reports whether v is a plain value of a runtime variable:
// the runtimes' values (infinite, granularity=fine,compact, linear,linear,
// a CPU list such as 0-3 8 or 0-15:2) need only letters, digits, spaces
// and _ . , = - : +; nothing that a shell, a comment line or a terminal
// reads as more (quotes, $, `, ;, newlines, control characters).
func runtimeValue(v string) bool {
	return len(v) <= maxOpenMPValue && strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _.,=-:+") == ""
}

// runtimeVariable reports whether name is an OpenMP runtime's variable
// name: OMP_, KMP_ or GOMP_ followed by capitals, digits and underscores.
func runtimeVariable(name string) bool {
	rest, ok := strings.CutPrefix(name, "OMP_")
	if !ok {
		if rest, ok = strings.CutPrefix(name, "KMP_"); !ok {
			if rest, ok = strings.CutPrefix(name, "GOMP_"); !ok {
				return false
			}
		}
	}
	return rest != "" && strings.Trim(rest, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == ""
}
