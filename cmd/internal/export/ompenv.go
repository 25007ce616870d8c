package export

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/cmd/internal/ompcheck"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/results"
)

// The omp-env export sets only what the check measured to help: for each
// OpenMP runtime and thread count, the setting of that runtime's own knobs
// the check found faster than the runtime's defaults by its tie margin and
// significance test (results.File.OpenMP), and nothing where the defaults
// stayed or the runtime was not measured. Both runtimes read the same
// file: a variable only one runtime reads (KMP_ for libomp, GOMP_SPINCOUNT
// for libgomp) is set for that runtime's measurement alone; a variable
// both read (OMP_, GOMP_CPU_AFFINITY) is set only where the check chose it
// for both, and a runtime whose setting holds such a variable the other
// did not choose gets nothing from the file (no part of a setting is set
// alone: only the whole was measured). OMPRunEnv, which `barriertune
// omp-run` applies when the program starts, sets the whole setting of
// the runtime the program links.
// barriertune's own algorithms are not mapped onto the runtimes' barriers:
// no such mapping was ever measured to help.

// ompRuntimes are the runtimes the export speaks of, in order.
func ompRuntimes() []string {
	var out []string
	for _, tc := range ompcheck.Toolchains() {
		out = append(out, tc.Runtime)
	}
	return out
}

// ompBand is a range of thread counts served by one measured count.
type ompBand struct {
	lo, hi   int // hi 0: and every larger count
	measured int // the measured count serving it; 0: none
}

// ompCounts are the counts the check recorded for any runtime,
// ascending: measured, or listed and not reached. A count the check
// listed serves itself even when it was not measured (its runtimes keep
// their defaults there): a neighbour's choice can be slower at it
// (libgomp's GOMP_CPU_AFFINITY chosen at 4 threads on 2 CPUs, served at
// 3, binds two threads to one CPU and one to the other).
func ompCounts(o *results.OpenMP) []int {
	seen := map[int]bool{}
	var out []int
	if o == nil {
		return nil
	}
	for _, r := range o.Runtimes {
		for _, c := range r.Counts {
			if !seen[c.Threads] {
				seen[c.Threads] = true
				out = append(out, c.Threads)
			}
		}
	}
	sort.Ints(out)
	return out
}

// ompServing is the measured count that serves n threads on cpus CPUs:
// the nearest measured count (the larger on a tie) on the same side of
// the CPU count, since a setting measured with a CPU per thread says
// nothing about threads that share CPUs, and the other way round; 0 when
// that side has none.
func ompServing(counts []int, n, cpus int) int {
	best := 0
	for _, c := range counts {
		if cpus > 0 && (c > cpus) != (n > cpus) {
			continue
		}
		d, bd := abs(c-n), abs(best-n)
		if best == 0 || d < bd || d == bd && c > best {
			best = c
		}
	}
	return best
}

// ompUsage is the omp-env file's first line: how to use it.
const ompUsage = "# barriertune omp-env: run a program with `barriertune omp-run -- ./prog` (it applies the block for the program's OMP_NUM_THREADS and runtime when the program starts), or export OMP_NUM_THREADS first and then source this file in a POSIX shell: export OMP_NUM_THREADS=8; . ./barriertune-omp.env"

// ompEnv writes POSIX shell lines that set, per thread count, the
// settings the check measured faster than each runtime's defaults. With
// one count (single: --threads) the lines are plain exports after
// OMP_NUM_THREADS; otherwise OMP_NUM_THREADS (unset: one thread per
// allowed CPU, the runtimes' default) picks the block of the count that
// serves it (ompServing).
func ompEnv(b *strings.Builder, f *results.File, threads int, allowed cpuset.Set) {
	o := f.OpenMP
	cpus := allowed.Len()
	if cpus == 0 {
		cpus = len(recordedAllowed(f))
	}
	measuredAny := false
	for _, name := range ompRuntimes() {
		r := o.Runtime(name)
		switch {
		case r == nil && o == nil:
			fmt.Fprintf(b, "# %s was not measured (this results file has no OpenMP measurement: run `barriertune check` where a compiler builds with -fopenmp): nothing here is set for it\n", name)
		case r == nil:
			fmt.Fprintf(b, "# %s was not measured: nothing here is set for it\n", name)
		case r.NotMeasured != "":
			fmt.Fprintf(b, "# %s was not measured (%s): nothing here is set for it\n", name, oneLine(r.NotMeasured))
		default:
			measuredAny = true
			fmt.Fprintf(b, "# %s measured: %s, %s (built with %s)\n", name, oneLine(r.Version), oneLine(r.Library), oneLine(r.Compiler))
		}
	}
	if measuredAny && f.Busy() {
		fmt.Fprintf(b, "# BUSY: the check ran on a busy machine (%s): a setting measured faster then may be slower on a quiet one; run the check again when the machine is quiet\n", oneLine(f.Load.Why))
	}
	if measuredAny {
		fmt.Fprintf(b, "# each block sets what the check measured faster than that runtime's defaults (by more than 3%% and a Mann-Whitney U test, confirmed in fresh runs), on %s; a variable both runtimes read only where it was measured faster for both\n", oneLine(o.Loop))
	}
	if measuredAny {
		ompHostState(b, o)
	}
	counts := ompCounts(o)
	if threads > 0 {
		fmt.Fprintf(b, "export OMP_NUM_THREADS=%d\n", threads)
		ompBlock(b, f, threads, ompServing(counts, threads, cpus), cpus, "")
		return
	}
	if len(counts) == 0 {
		fmt.Fprintf(b, "# no thread count was measured: nothing to set\n")
		return
	}
	bands := ompBands(counts, cpus)
	fmt.Fprintf(b, "# the block for OMP_NUM_THREADS (unset: %d, one per allowed CPU, the runtimes' default)\n", cpus)
	fmt.Fprintf(b, "_barriertune_n=${OMP_NUM_THREADS:-%d}\n", cpus)
	fmt.Fprintf(b, "_barriertune_n=${_barriertune_n%%%%,*}\n")
	fmt.Fprintf(b, "case $_barriertune_n in ''|*[!0-9]*) _barriertune_n=%d ;; esac\n", cpus)
	for i, bd := range bands {
		switch {
		case i == 0 && len(bands) == 1:
			fmt.Fprintf(b, "if true; then\n")
		case i == 0:
			fmt.Fprintf(b, "if [ \"$_barriertune_n\" -le %d ]; then\n", bd.hi)
		case bd.hi > 0:
			fmt.Fprintf(b, "elif [ \"$_barriertune_n\" -le %d ]; then\n", bd.hi)
		default:
			fmt.Fprintf(b, "else\n")
		}
		rng := fmt.Sprintf("%d-%d", bd.lo, bd.hi)
		if bd.hi == 0 {
			rng = fmt.Sprintf("%d or more", bd.lo)
		} else if bd.lo == bd.hi {
			rng = strconv.Itoa(bd.lo)
		}
		if bd.measured == 0 {
			fmt.Fprintf(b, "  # %s threads: no count on this side of the %d CPUs was measured: nothing set\n  :\n", rng, cpus)
			continue
		}
		fmt.Fprintf(b, "  # %s threads: as measured at %d\n", rng, bd.measured)
		if !ompBlock(b, f, bd.measured, bd.measured, cpus, "  ") {
			fmt.Fprintf(b, "  :\n")
		}
	}
	fmt.Fprintf(b, "fi\n")
	fmt.Fprintf(b, "unset _barriertune_n\n")
}

// ompHostState writes the comment naming the host state the times below
// were measured in (OpenMPHostState); nothing where no floor was read.
func ompHostState(b *strings.Builder, o *results.OpenMP) {
	if words := OpenMPHostState(o, "the OpenMP step"); words != "" {
		fmt.Fprintf(b, "# host state: %s\n", oneLine(words))
	}
}

// OpenMPHostState says, in words, which host state the OpenMP times of o
// belong to (step names the step in them): the file's own words where it
// says the host moved; else, from the floors before and after the step,
// one state, or two (floors ompcheck.HostMovedFactor apart or more, which a file
// edited by hand may not say), or the one floor read; "" when neither was
// measured. A VM's host may move its vCPUs between states several times
// apart, and the times compare only within one.
func OpenMPHostState(o *results.OpenMP, step string) string {
	if o == nil {
		return ""
	}
	before, after := o.HostFloorBeforeNs, o.HostFloorAfterNs
	switch {
	case o.HostMoved != "":
		return o.HostMoved
	case before > 0 && after > 0 && max(before, after) >= ompcheck.HostMovedFactor*min(before, after):
		return fmt.Sprintf("the floor read %.0f ns before %s and %.0f ns after it, %.1f times apart: the host moved between states during the step, and the times below mix the two (check again for times to compare)", before, step, after, max(before, after)/min(before, after))
	case before > 0 && after > 0:
		return fmt.Sprintf("the floor read %.0f ns before %s and %.0f ns after it; the times below belong to that state (a VM's host can move its vCPUs between states several times apart: compare them with runs that read the same floor, barriertune latency)", before, step, after)
	case before > 0 || after > 0:
		when, ns := "before", before
		if after > 0 {
			when, ns = "after", after
		}
		return fmt.Sprintf("the floor read %.0f ns %s %s (the other reading is missing: whether the host moved during it is not known)", ns, when, step)
	}
	return ""
}

// ompBands splits the thread counts from 1 up into ranges each served by
// one measured count (or none: 0); the last range, above every count and
// the CPU count, is open.
//
// The serving count changes only at a measured count, between two
// neighbouring counts (where the nearer one changes) and at the CPU
// count, so only those points are evaluated: the work grows with the
// number of counts, not with the largest (a file may record a million
// threads).
func ompBands(counts []int, cpus int) []ompBand {
	top := max(counts[len(counts)-1], cpus) + 1 // above every count and the CPUs: one side, one count
	points := []int{1, top, cpus, cpus + 1}
	for i, c := range counts {
		points = append(points, c, c+1)
		if i > 0 {
			mid := counts[i-1] + (c-counts[i-1])/2
			points = append(points, mid, mid+1)
		}
	}
	sort.Ints(points)
	points = slices.Compact(points)
	var out []ompBand
	for i, n := range points {
		if n < 1 || n > top {
			continue
		}
		hi := top
		if i+1 < len(points) && points[i+1]-1 < top {
			hi = points[i+1] - 1
		}
		m := ompServing(counts, n, cpus)
		if k := len(out) - 1; k >= 0 && out[k].measured == m {
			out[k].hi = hi
			continue
		}
		out = append(out, ompBand{lo: n, hi: hi, measured: m})
	}
	out[len(out)-1].hi = 0
	return out
}

// ompBlock writes, for n threads served by the measured count m (0:
// none), each runtime's line of comment and the variables chosen for it;
// it reports whether it exported anything.
func ompBlock(b *strings.Builder, f *results.File, n, m, cpus int, indent string) bool {
	o := f.OpenMP
	if m == 0 {
		if len(ompCounts(o)) > 0 {
			fmt.Fprintf(b, "%s# %d threads: no count on this side of the %d allowed CPUs was measured (a setting measured with a CPU per thread says nothing of threads that share CPUs, and the other way round): nothing set\n", indent, n, cpus)
		}
		return false
	}
	bests := map[string]map[string]string{} // runtime: its chosen variables
	var order []string
	measured := 0
	for _, name := range ompRuntimes() {
		r := o.Runtime(name)
		if r == nil || r.NotMeasured != "" {
			continue
		}
		c := r.Count(m)
		switch {
		case c == nil || c.NotMeasured != "":
			why := "not measured"
			if c != nil {
				why = c.NotMeasured
			}
			fmt.Fprintf(b, "%s# %s at %d threads: %s: nothing set for it\n", indent, name, m, oneLine(why))
			continue
		case c.NotDecided != "":
			measured++
			fmt.Fprintf(b, "%s# %s at %d threads: the defaults stay, %s\n", indent, name, m, oneLine(c.NotDecided))
			continue
		case len(c.Best) == 0:
			measured++
			fmt.Fprintf(b, "%s# %s at %d threads: the defaults stay (%.0f ns a barrier): %s\n", indent, name, m, c.DefaultNs, oneLine(c.Why))
			continue
		}
		measured++
		fmt.Fprintf(b, "%s# %s at %d threads: %s, %.0f ns a barrier against the defaults' %.0f ns (defaults %+.1f%% slower; %s)\n", indent, name, m, oneLine(strings.Join(c.Best, " ")), c.BestNs, c.DefaultNs, c.MarginPct, oneLine(c.Test))
		bests[name] = map[string]string{}
		for _, kv := range c.Best {
			k, v, _ := strings.Cut(kv, "=")
			bests[name][k] = v
			if !slices.Contains(order, k) {
				order = append(order, k)
			}
		}
	}
	set := map[string]string{}
	for _, k := range order {
		var vals []string
		for _, name := range ompRuntimes() {
			if v, ok := bests[name][k]; ok {
				vals = append(vals, v)
			}
		}
		shared := ompcheck.ReadBy(k, ompcheck.LibGOMP) && ompcheck.ReadBy(k, ompcheck.LibOMP)
		if shared && (measured < len(ompRuntimes()) || len(vals) < len(ompRuntimes()) || slices.Contains(vals, "") || vals[0] != vals[len(vals)-1]) {
			// Both runtimes read it: set only where it was chosen, with
			// the same value, for both.
			fmt.Fprintf(b, "%s# %s: both runtimes read it, and it was not chosen for both: not set\n", indent, k)
			continue
		}
		set[k] = vals[0]
	}
	// A runtime whose chosen setting is not set whole gets none of it.
	for _, name := range ompRuntimes() {
		whole := true
		for k, v := range bests[name] {
			if set[k] != v {
				whole = false
			}
		}
		if whole {
			continue
		}
		for k := range bests[name] {
			if !(ompcheck.ReadBy(k, ompcheck.LibGOMP) && ompcheck.ReadBy(k, ompcheck.LibOMP)) {
				delete(set, k)
			}
		}
		fmt.Fprintf(b, "%s# %s: its setting holds a variable the other runtime reads too and did not choose, so none of it is set here (only the whole was measured): `barriertune omp-run` sets it for %s programs\n", indent, name, name)
	}
	exported := false
	for _, k := range order {
		if v := set[k]; v != "" && validName(k) {
			fmt.Fprintf(b, "%sexport %s=%s\n", indent, k, shellQuote(v))
			exported = true
		}
	}
	return exported
}

// validName reports whether k is a shell variable name of the runtimes'
// (results.Parse refuses others; a File built in memory is checked here).
func validName(k string) bool {
	if !(strings.HasPrefix(k, "OMP_") || strings.HasPrefix(k, "KMP_") || strings.HasPrefix(k, "GOMP_")) {
		return false
	}
	return strings.Trim(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == ""
}

// recordedAllowed is the allowed CPU set the file was recorded with, or
// nil when it does not parse.
func recordedAllowed(f *results.File) []int {
	s, err := cpuset.ParseList(f.Machine.AllowedCPUs)
	if err != nil || s.IsEmpty() {
		return nil
	}
	return s.Members()
}

// OMPRunEnv is the environment a program that links runtime (LibGOMP or
// LibOMP; "" when unknown) gets at threads threads on the allowed CPUs
// from `barriertune omp-run`: the whole setting the check chose for that
// runtime at the measured count that serves threads (the count on the
// same side of the CPU count, nearest), or, for an unknown runtime, what
// the sourced file sets for that count. Notes say, in lines for a
// person, what was chosen and why, or why nothing is set.
func OMPRunEnv(f *results.File, runtime string, threads int, allowed cpuset.Set) (vars, notes []string) {
	o := f.OpenMP
	cpus := allowed.Len()
	if cpus == 0 {
		cpus = len(recordedAllowed(f))
	}
	m := ompServing(ompCounts(o), threads, cpus)
	if m == 0 {
		return nil, []string{fmt.Sprintf("no OpenMP measurement serves %d threads on %d CPUs: nothing set", threads, cpus)}
	}
	if runtime == "" {
		var b strings.Builder
		ompBlock(&b, f, threads, m, cpus, "")
		for _, l := range strings.Split(b.String(), "\n") {
			if rest, ok := strings.CutPrefix(l, "export "); ok {
				k, v, _ := strings.Cut(rest, "=")
				vars = append(vars, k+"="+unquote(v))
			} else if n, ok := strings.CutPrefix(l, "# "); ok {
				notes = append(notes, n)
			}
		}
		return vars, append([]string{"the program's OpenMP runtime is unknown: what both runtimes agree on"}, notes...)
	}
	r := o.Runtime(runtime)
	c := r.Count(m)
	switch {
	case r == nil || r.NotMeasured != "":
		return nil, []string{fmt.Sprintf("%s was not measured: nothing set", runtime)}
	case c == nil:
		return nil, []string{fmt.Sprintf("%s at %d threads was not measured: nothing set", runtime, m)}
	case c.NotMeasured != "":
		return nil, []string{fmt.Sprintf("%s at %d threads was not measured (%s): nothing set", runtime, m, oneLine(c.NotMeasured))}
	case c.NotDecided != "":
		return nil, []string{fmt.Sprintf("%s at %d threads: %s: nothing set", runtime, m, oneLine(c.NotDecided))}
	case len(c.Best) == 0:
		return nil, []string{fmt.Sprintf("%s at %d threads: the defaults stay: %s", runtime, m, oneLine(c.Why))}
	}
	for _, kv := range c.Best {
		if k, _, ok := strings.Cut(kv, "="); ok && validName(k) {
			vars = append(vars, kv)
		}
	}
	return vars, []string{fmt.Sprintf("%s at %d threads (as measured at %d): %s, %.0f ns a barrier against the defaults' %.0f ns", runtime, threads, m, strings.Join(c.Best, " "), c.BestNs, c.DefaultNs)}
}

// unquote undoes shellQuote.
func unquote(v string) string {
	if strings.HasPrefix(v, "'") && strings.HasSuffix(v, "'") && len(v) >= 2 {
		return strings.ReplaceAll(v[1:len(v)-1], `'\''`, "'")
	}
	return v
}
