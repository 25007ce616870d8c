package export

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/text"
	"github.com/barriertune/barriertune/results"
)

// ompEnv writes POSIX shell lines exporting the OpenMP environment for the
// entries, after the header comment. With one entry (--threads) the lines are plain exports plus
// OMP_NUM_THREADS; without --threads, OMP_NUM_THREADS (its first value;
// unset: one per allowed CPU, the runtimes' default, exported so) picks the
// block whose measured count is nearest (ties to the larger), with an
// if-chain when there are several.
func ompEnv(b *strings.Builder, f *results.File, es []entry, single bool) {
	fmt.Fprintf(b, "# source it in a POSIX shell: . ./barriertune-omp.env\n")
	if len(es) == 0 {
		fmt.Fprintf(b, "# no thread count has a winner: nothing to set\n")
		return
	}
	// The CPUs the selection was made inside (--allowed, or this
	// process's), else the ones the file was recorded with; the
	// block-and-wake cost the check measured (0: AutoPolicy's fallback).
	allowed := recordedAllowed(f)
	if s, err := cpuset.Parse(es[0].sel.Allowed); err == nil && !s.IsEmpty() {
		allowed = s.Members()
	}
	in := func(e entry) OMPInput {
		return OMPInput{Choice: e.best(), Threads: e.threads, Allowed: allowed, BlockWakeNs: f.BlockWakeNs}
	}
	if single {
		fmt.Fprintf(b, "export OMP_NUM_THREADS=%d\n", es[0].threads)
		ompBlock(b, es[0], in(es[0]), "")
		return
	}
	// Unset, OMP_NUM_THREADS is the runtimes' default, one thread per
	// allowed CPU: the block is chosen for that count, and it is exported
	// so that the runtime runs the count the block was chosen for.
	deflt := es[len(es)-1].threads
	if len(allowed) > 0 {
		deflt = len(allowed)
	}
	fmt.Fprintf(b, "# picks the block for OMP_NUM_THREADS (unset: %d, one per allowed CPU, and exported so); a count not measured takes the nearest measured one, ties to the larger\n", deflt)
	fmt.Fprintf(b, "_barriertune_n=${OMP_NUM_THREADS:-%d}\n", deflt)
	fmt.Fprintf(b, "_barriertune_n=${_barriertune_n%%%%,*}\n")
	fmt.Fprintf(b, "case $_barriertune_n in ''|*[!0-9]*) _barriertune_n=%d ;; esac\n", deflt)
	fmt.Fprintf(b, "[ -n \"${OMP_NUM_THREADS-}\" ] || export OMP_NUM_THREADS=$_barriertune_n\n")
	indent := "  "
	if len(es) == 1 {
		indent = "" // one block: no chain
	}
	for i, e := range es {
		switch {
		case len(es) == 1:
		case i == 0:
			fmt.Fprintf(b, "if [ \"$_barriertune_n\" -le %d ]; then\n", (e.threads+es[i+1].threads-1)/2)
		case i < len(es)-1:
			fmt.Fprintf(b, "elif [ \"$_barriertune_n\" -le %d ]; then\n", (e.threads+es[i+1].threads-1)/2)
		default:
			fmt.Fprintf(b, "else\n")
		}
		if places := ompBlock(b, e, in(e), indent); places > 0 && (i == len(es)-1 || (e.threads+es[i+1].threads-1)/2 > places) {
			// A count this block serves may have more threads than
			// places: binding would stack threads on a place.
			fmt.Fprintf(b, "%sif [ \"$_barriertune_n\" -gt %d ]; then unset OMP_PLACES; export OMP_PROC_BIND=false; fi\n", indent, places)
		}
	}
	if len(es) > 1 {
		fmt.Fprintf(b, "fi\n")
	}
	if cpus := len(allowed); cpus > 0 {
		// A block chosen by the nearest measured count may be for fewer
		// threads than asked: more threads than CPUs never spin.
		fmt.Fprintf(b, "if [ \"$_barriertune_n\" -gt %d ]; then\n", cpus)
		fmt.Fprintf(b, "  # more threads than %s: threads never spin, are not bound, and one wakes them all\n", text.PluralOf(cpus, "allowed CPU", "allowed CPUs"))
		fmt.Fprintf(b, "  export OMP_WAIT_POLICY=PASSIVE KMP_BLOCKTIME=1 GOMP_SPINCOUNT=0 OMP_PROC_BIND=false\n")
		fmt.Fprintf(b, "  export KMP_PLAIN_BARRIER_PATTERN=linear,linear KMP_PLAIN_BARRIER=0,0 KMP_FORKJOIN_BARRIER_PATTERN=linear,linear KMP_FORKJOIN_BARRIER=0,0\n")
		fmt.Fprintf(b, "  unset OMP_PLACES\n")
		fmt.Fprintf(b, "fi\n")
	}
	fmt.Fprintf(b, "unset _barriertune_n\n")
}

// recordedAllowed is the allowed CPU set the file was recorded with, or
// nil when it does not parse.
func recordedAllowed(f *results.File) []int {
	s, err := cpuset.Parse(f.Machine.AllowedCPUs)
	if err != nil || s.IsEmpty() {
		return nil
	}
	return s.Members()
}

// ompBlock writes one entry's comment and variables, each line indented,
// and returns the number of places it exported.
func ompBlock(b *strings.Builder, e entry, in OMPInput, indent string) int {
	fmt.Fprintf(b, "%s# %s\n", indent, measuredNote(e))
	places := 0
	for _, l := range OMPEnv(in) {
		if l.Name == "" {
			fmt.Fprintf(b, "%s# %s\n", indent, oneLine(l.Comment))
			continue
		}
		if l.Name == "OMP_PLACES" {
			places = strings.Count(l.Value, "{")
		}
		fmt.Fprintf(b, "%sexport %s=%s\n", indent, l.Name, shellQuote(l.Value))
	}
	return places
}

// OMPInput is what one block of OpenMP variables is made from. The choice
// is taken as given: its CPUs were chosen by the selection rule for the
// allowed set, and OMPEnv does not choose others.
type OMPInput struct {
	// Choice is the winner whose behaviour the variables reproduce.
	Choice *results.Choice
	// Threads is the OMP_NUM_THREADS the block is for.
	Threads int
	// Allowed are the CPUs the program may run on; nil when unknown (then
	// the choice's distinct CPUs count as the allowed ones).
	Allowed []int
	// BlockWakeNs is what blocking and a wake-up cost a waiter on this
	// machine (results block_wake_ns), 0 when not recorded.
	BlockWakeNs float64
}

// OMPLine is one line of a block: a variable (Name and Value) or, with an
// empty Name, a comment saying why or where no exact equivalent exists.
type OMPLine struct {
	Name, Value, Comment string
}

// Bounds on the spin time exported for a bounded (spin, then block)
// waiter, the same as barriers.AutoPolicy uses: a cost measured above
// the upper bound was measured on a busy machine, and spinning longer is
// never worth it.
const (
	minSpinNs     = 5e3
	maxSpinNs     = 200e3
	defaultSpinNs = 50e3 // when the block and wake-up cost was not recorded
)

// gompNsPerSpin is libgomp's own estimate of one iteration of its spin
// loop (its defaults assume 100000 iterations per millisecond).
const gompNsPerSpin = 10

// Wait says how OpenMP threads should wait at a barrier to behave as a
// winner did: Active spins until released, Passive blocks at once,
// Bounded spins for a while (WaitFor says how long), then blocks, and
// Default keeps the runtimes' defaults (they spin, then block).
type Wait int

// The Wait values.
const (
	WaitDefault Wait = iota
	WaitActive
	WaitPassive
	WaitBounded
	// WaitOversubscribed is for more threads than allowed CPUs: never
	// spin. libgomp blocks at once (it cannot yield); libomp, which
	// yields the CPU in its wait loop when oversubscribed, yields for its
	// shortest block time (1 ms), then sleeps, as the goroutine barrier
	// yields before it parks.
	WaitOversubscribed
)

// WaitFor says how the threads of in should wait, the spin time of a
// bounded wait, and why. It follows what the winner does, not its name:
// the blocking baselines block whatever their policy; spin and yield never
// block; park spins about a microsecond, then blocks; auto spins about the
// block and wake-up cost, then blocks (Karlin's rule for OS threads; a Go
// AutoPolicy waiter spins twice that, since a woken goroutine's wake-up may
// include waking an idle thread, which OpenMP's threads never wait for). More threads than allowed CPUs
// never spin (WaitOversubscribed): a spinning thread would hold a CPU that
// the thread it waits for needs (barriers.AutoPolicy does not spin there
// either).
func WaitFor(in OMPInput) (w Wait, spinNs float64, why string) {
	c := in.Choice
	cpus := allowedCount(in)
	if in.Threads > cpus {
		return WaitOversubscribed, 0, fmt.Sprintf("%s on %s: a spinning thread would hold a CPU the thread it waits for needs, so threads never spin (policy %s): libgomp blocks at once, libomp yields the CPU for at most 1 ms, then sleeps", text.Plural(in.Threads, "thread"), text.PluralOf(cpus, "allowed CPU", "allowed CPUs"), c.Policy)
	}
	if m, ok := MappingFor(c.Algorithm); ok && m.Blocking {
		return WaitPassive, 0, fmt.Sprintf("%s blocks whatever the policy: threads block at once", c.Algorithm)
	}
	switch c.Policy {
	case "spin":
		return WaitActive, 0, "policy spin: threads spin until released"
	case "yield":
		return WaitActive, 0, "policy yield never blocks: threads spin (libomp yields in its spin loop only when oversubscribed)"
	case "park":
		return WaitPassive, 0, "policy park spins about a microsecond, then blocks: threads block at once"
	case "auto":
		ns, note := in.BlockWakeNs, "the measured block and wake-up cost"
		if !(ns > 0) || math.IsInf(ns, 0) {
			ns, note = defaultSpinNs, "the block and wake-up cost was not recorded: AutoPolicy's fallback"
		}
		ns = min(max(ns, minSpinNs), maxSpinNs)
		return WaitBounded, ns, fmt.Sprintf("policy auto spins about %s (%s), then blocks", formatMicros(ns), note)
	}
	return WaitDefault, 0, fmt.Sprintf("policy %s is not known here: the runtimes' defaults (spin, then block)", c.Policy)
}

// allowedCount is the number of CPUs the threads may run on.
func allowedCount(in OMPInput) int {
	if len(in.Allowed) > 0 {
		return len(in.Allowed)
	}
	if n := len(cpuset.Placement(in.Choice.CPUs).CPUs()); n > 0 {
		return n
	}
	return in.Threads
}

func formatMicros(ns float64) string {
	return strconv.FormatFloat(ns/1e3, 'f', -1, 64) + " µs"
}

// OMPEnv returns the OpenMP variables (and comments) that make libgomp and
// libomp behave as in's choice does: places and binding from the choice's
// CPUs, the wait policy from what the winner does (WaitFor), and libomp's
// barrier pattern from the algorithm (MappingFor), except that threads
// outnumbering the allowed CPUs never spin and get libomp's linear pattern
// (one thread wakes all).
//
// Places are exported only when the choice was pinned, every one of its
// CPUs is allowed, and there are no more threads than places: otherwise
// binding would put a thread where it may not run, or stack threads on
// one place, and the threads stay unbound.
func OMPEnv(in OMPInput) []OMPLine {
	c := in.Choice
	var out []OMPLine
	set := func(name, value string) { out = append(out, OMPLine{Name: name, Value: value}) }
	note := func(format string, args ...any) {
		out = append(out, OMPLine{Comment: fmt.Sprintf(format, args...)})
	}
	cpus := allowedCount(in)
	switch {
	case !c.Pinned || len(c.CPUs) == 0:
		note("unpinned: no places")
		set("OMP_PROC_BIND", "false")
	case in.Threads > cpus:
		note("%s on %s: no places", text.Plural(in.Threads, "thread"), text.PluralOf(cpus, "allowed CPU", "allowed CPUs"))
		set("OMP_PROC_BIND", "false")
	case in.Allowed != nil && !subset(c.CPUs, in.Allowed):
		note("the choice's CPUs %s are not all allowed (%s): no places", joinInts(c.CPUs), joinInts(in.Allowed))
		set("OMP_PROC_BIND", "false")
	case in.Threads > len(c.CPUs):
		note("%s but %s: binding would stack threads on a place, so no places", text.Plural(in.Threads, "thread"), text.PluralOf(len(c.CPUs), "measured place", "measured places"))
		set("OMP_PROC_BIND", "false")
	default:
		places := make([]string, len(c.CPUs))
		for i, cpu := range c.CPUs {
			places[i] = "{" + strconv.Itoa(cpu) + "}"
		}
		set("OMP_PLACES", strings.Join(places, ","))
		set("OMP_PROC_BIND", "close")
	}

	w, spinNs, why := WaitFor(in)
	note("%s", why)
	switch w {
	case WaitActive:
		set("OMP_WAIT_POLICY", "ACTIVE")
		set("KMP_BLOCKTIME", "infinite")
		set("GOMP_SPINCOUNT", "infinite")
	case WaitPassive:
		set("OMP_WAIT_POLICY", "PASSIVE")
		set("KMP_BLOCKTIME", "0")
		set("GOMP_SPINCOUNT", "0")
	case WaitOversubscribed:
		set("OMP_WAIT_POLICY", "PASSIVE")
		set("KMP_BLOCKTIME", "1")
		set("GOMP_SPINCOUNT", "0")
	case WaitBounded:
		// No OMP_WAIT_POLICY: both runtimes then spin for their bound
		// and block. libomp's KMP_BLOCKTIME is in milliseconds (newer
		// releases take a unit; older ones do not), 0 meaning no spin.
		ms := int(math.Ceil(spinNs / 1e6))
		note("libgomp spins %d iterations (about 10 ns each); libomp's block time is whole milliseconds, so %d ms", int(spinNs/gompNsPerSpin), ms)
		set("GOMP_SPINCOUNT", strconv.Itoa(int(spinNs/gompNsPerSpin)))
		set("KMP_BLOCKTIME", strconv.Itoa(ms))
	}

	if in.Threads > cpus {
		// The mapping's patterns are for waiters that spin. Threads that
		// block are better woken by one thread: a release down a tree or
		// hypercube wakes them one level at a time, and each waker needs a
		// CPU first (measured: docs/results.md, OpenMP runtimes).
		for _, kind := range []string{"PLAIN", "FORKJOIN"} {
			set("KMP_"+kind+"_BARRIER_PATTERN", "linear,linear")
			set("KMP_"+kind+"_BARRIER", "0,0")
		}
		note("libomp: the threads block, so one thread wakes them all (linear) whatever %s's pattern; libgomp: one built-in barrier, only the wait policy applies", c.Algorithm)
		return out
	}
	m, known := MappingFor(c.Algorithm)
	if !known {
		note("libomp: no pattern known for %s; libgomp has one built-in barrier", c.Algorithm)
		return out
	}
	gb, rb := m.GatherBits, m.ReleaseBits
	exact := m.SameShape
	if gb < 0 || rb < 0 {
		bits, pow2 := branchBits(fanIn(c))
		exact = exact && pow2
		if gb < 0 {
			gb = bits
		}
		if rb < 0 {
			rb = bits
		}
		if !pow2 {
			note("libomp: fan-in %d is not a power of two; %d branch bits (fan-in %d) is the nearest", fanIn(c), bits, 1<<bits)
		}
	}
	for _, kind := range []string{"PLAIN", "FORKJOIN"} {
		set("KMP_"+kind+"_BARRIER_PATTERN", m.Gather+","+m.Release)
		if m.Gather != "hierarchical" {
			set("KMP_"+kind+"_BARRIER", strconv.Itoa(gb)+","+strconv.Itoa(rb))
		}
	}
	if exact {
		note("libomp: %s", m.Libomp)
	} else {
		note("libomp: no exact equivalent: %s", m.Libomp)
	}
	note("libgomp: one built-in barrier (a central counter); only the wait policy and places apply")
	return out
}

// subset reports whether every CPU of v is in allowed.
func subset(v, allowed []int) bool {
	for _, x := range v {
		if !slices.Contains(allowed, x) {
			return false
		}
	}
	return true
}
