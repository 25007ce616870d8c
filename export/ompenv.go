package export

import (
	"fmt"
	"strings"

	"github.com/barriertune/barriertune/results"
)

// ompEnv writes POSIX shell lines exporting the OpenMP environment for the
// entries. With one entry (--threads) the lines are plain exports plus
// OMP_NUM_THREADS; with several, an if-chain on OMP_NUM_THREADS (its first
// value; unset: the largest measured count) picks the block whose measured
// count is nearest (ties to the larger).
func ompEnv(b *strings.Builder, f *results.File, es []entry, single bool) {
	fmt.Fprintf(b, "# OpenMP environment %s\n", source(f))
	fmt.Fprintf(b, "# source it in a POSIX shell: . ./barriertune-omp.env\n")
	if len(es) == 0 {
		fmt.Fprintf(b, "# no thread count has a winner: nothing to set\n")
		return
	}
	if single {
		fmt.Fprintf(b, "export OMP_NUM_THREADS=%d\n", es[0].threads)
		ompBlock(b, es[0], "")
		return
	}
	last := es[len(es)-1].threads
	fmt.Fprintf(b, "# picks the block for OMP_NUM_THREADS (unset: %d); a count not measured takes the nearest measured one, ties to the larger\n", last)
	fmt.Fprintf(b, "_barriertune_n=${OMP_NUM_THREADS:-%d}\n", last)
	fmt.Fprintf(b, "_barriertune_n=${_barriertune_n%%%%,*}\n")
	fmt.Fprintf(b, "case $_barriertune_n in ''|*[!0-9]*) _barriertune_n=%d ;; esac\n", last)
	for i, e := range es {
		switch {
		case len(es) == 1:
			fmt.Fprintf(b, "if true; then\n")
		case i == 0:
			fmt.Fprintf(b, "if [ \"$_barriertune_n\" -le %d ]; then\n", (e.threads+es[i+1].threads-1)/2)
		case i < len(es)-1:
			fmt.Fprintf(b, "elif [ \"$_barriertune_n\" -le %d ]; then\n", (e.threads+es[i+1].threads-1)/2)
		default:
			fmt.Fprintf(b, "else\n")
		}
		ompBlock(b, e, "  ")
	}
	fmt.Fprintf(b, "fi\nunset _barriertune_n\n")
}

// ompBlock writes the variables for one entry, each line indented.
func ompBlock(b *strings.Builder, e entry, in string) {
	c := e.best()
	line := func(format string, args ...any) { fmt.Fprintf(b, in+format+"\n", args...) }
	line("# %s", measuredNote(e))
	if c.Pinned {
		places := make([]string, len(c.CPUs))
		for i, cpu := range c.CPUs {
			places[i] = fmt.Sprintf("{%d}", cpu)
		}
		line("export OMP_PLACES=%s", shellQuote(strings.Join(places, ",")))
		line("export OMP_PROC_BIND=close")
	} else {
		line("# measured unpinned (the threads outnumbered the CPUs): no places")
		line("export OMP_PROC_BIND=false")
	}
	m, known := MappingFor(c.Algorithm)
	policy := c.Policy
	if known && m.Gather == "" {
		policy = "park" // the blocking baselines block whatever the policy
	}
	switch policy {
	case "spin":
		line("export OMP_WAIT_POLICY=ACTIVE")
		line("export KMP_BLOCKTIME=infinite")
		line("export GOMP_SPINCOUNT=infinite")
	case "park":
		line("export OMP_WAIT_POLICY=PASSIVE")
		line("export KMP_BLOCKTIME=0")
		line("export GOMP_SPINCOUNT=0")
	case "yield":
		line("# policy yield: no exact equivalent; OpenMP's active waiting spins, libomp yields only when oversubscribed")
		line("export OMP_WAIT_POLICY=ACTIVE")
	default:
		line("# policy %s (spin, then block): the runtimes' defaults do the same, so no wait policy is set", oneLine(c.Policy))
	}
	if !known {
		line("# libomp: no pattern known for %s; libgomp has one built-in barrier", oneLine(c.Algorithm))
		return
	}
	if m.Gather == "" {
		line("# libomp: %s", m.Libomp)
		return
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
			line("# libomp: fan-in %d is not a power of two; %d branch bits (fan-in %d) is the nearest", fanIn(c), bits, 1<<bits)
		}
	}
	for _, kind := range []string{"PLAIN", "FORKJOIN"} {
		line("export KMP_%s_BARRIER_PATTERN=%s,%s", kind, m.Gather, m.Release)
		if m.Gather != "hierarchical" {
			line("export KMP_%s_BARRIER=%d,%d", kind, gb, rb)
		}
	}
	if exact {
		line("# libomp: %s", m.Libomp)
	} else {
		line("# libomp: no exact equivalent: %s", m.Libomp)
	}
	line("# libgomp: one built-in barrier (a central counter); only the wait policy applies")
}
