package export

import (
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/results"
)

// cBarrierTemplate is the C11 / C++20 barrier header; the c-barrier export
// writes it with its catalog part (cCatalog) where catalogMarker is and
// the machine's table where tableMarker is.
//
//go:embed cbarrier.h
var cBarrierTemplate string

// tableMarker is the template's line the table replaces.
const tableMarker = "/* @@BARRIERTUNE_TABLE@@ */"

// catalogMarker is the template's line the catalog part (cCatalog)
// replaces.
const catalogMarker = "/* @@BARRIERTUNE_CATALOG@@ */"

// cMaxFanIn is the header's BARRIERTUNE_MAX_FAN_IN, the largest tree
// fan-in a C barrier takes: any Go takes (a fan-in above the participants
// is the same tree as one of all of them).
const cMaxFanIn = barriers.MaxParticipants

// cAlgorithm is one algorithm the header carries: its C identifier
// (BARRIERTUNE_ALG_<Ident>) and catalog name.
type cAlgorithm struct{ Ident, Name string }

// goOnly returns the catalog's algorithms that the header refuses: they
// exist only in Go (the goroutine barrier, and the blocking baselines
// built on Go's sync.Cond and channels).
func goOnly() []string { return []string{algname.Goroutine, algname.Cond, algname.Channel} }

// cAlgorithms returns the algorithms the header carries, what a C or C++
// program can run: the catalog in its order, less goOnly. The header's
// BARRIERTUNE_ALGORITHMS list is written from it (cCatalog).
func cAlgorithms() []cAlgorithm {
	var out []cAlgorithm
	for _, a := range barriers.Algorithms() {
		if !slices.Contains(goOnly(), a.Name) {
			out = append(out, cAlgorithm{Ident: strings.ToUpper(strings.ReplaceAll(a.Name, "-", "_")), Name: a.Name})
		}
	}
	return out
}

// cCatalog writes the header's catalog part: its caps (barriers'
// MaxParticipants, cMaxFanIn, cMaxLevels) and the X-list of cAlgorithms.
func cCatalog(b *strings.Builder) {
	b.WriteString("/* BARRIERTUNE_MAX_THREADS is the cap on participants (Go's\n * barriers.MaxParticipants). */\n")
	fmt.Fprintf(b, "#define BARRIERTUNE_MAX_THREADS %d\n\n", barriers.MaxParticipants)
	b.WriteString("/* BARRIERTUNE_MAX_FAN_IN is the largest tree fan-in. */\n")
	fmt.Fprintf(b, "#define BARRIERTUNE_MAX_FAN_IN %d\n\n", cMaxFanIn)
	b.WriteString("/* BARRIERTUNE_MAX_LEVELS is the cap on a hybrid's levels. */\n")
	fmt.Fprintf(b, "#define BARRIERTUNE_MAX_LEVELS %d\n\n", cMaxLevels)
	b.WriteString("/* The algorithms this header carries (barriertune's catalog names). */\n")
	b.WriteString("#define BARRIERTUNE_ALGORITHMS(X)")
	for _, a := range cAlgorithms() {
		fmt.Fprintf(b, " \\\n\tX(%s, %s)", a.Ident, cQuote(a.Name))
	}
	b.WriteString("\n")
}

// cHeaderTemplate returns the template with its catalog part written:
// the header before the machine's table.
func cHeaderTemplate() string {
	head, tail, ok := strings.Cut(cBarrierTemplate, catalogMarker+"\n")
	if !ok {
		panic("export: the barrier header template lost its catalog marker")
	}
	var b strings.Builder
	b.WriteString(head)
	cCatalog(&b)
	b.WriteString(tail)
	return b.String()
}

// cIdent returns the C identifier of an algorithm the header carries, or
// "" for one it does not.
func cIdent(name string) string {
	for _, a := range cAlgorithms() {
		if a.Name == name {
			return a.Ident
		}
	}
	return ""
}

// CRunnable reports whether a C or C++ program can run the algorithm
// called name: whether the c-barrier header carries it (for the hybrid,
// cHybrid says whether it carries a given composition).
func CRunnable(name string) bool { return cIdent(name) != "" }

// Substituted is the rule of a C table row whose choice names an
// algorithm C cannot run (one that exists only in Go, a hybrid with such
// a level, or any hybrid in the c-header, which carries no groups): the
// header's stand-in serves it.
const Substituted = "substituted"

// osThreadsCLabel begins the Label of an OS-thread choice that the check
// timed in C with this header's barrier (check.OSThreadsCLabel; the
// compiler follows in parentheses; docs/results.md, os_threads).
const osThreadsCLabel = "oversubscribed, OS threads, C"

// osThreadsAlgorithm (central) is the stand-in for OS threads (a C or C++
// program's) that outnumber the allowed CPUs when the file measured none
// on OS threads: a central counter whose waiters block at once, as the
// exported C barrier runs it. The goroutine barrier means nothing there.
const osThreadsAlgorithm = algname.Central

// forThreads returns s as a program of OS threads can run it. Above the
// allowed CPUs (size) that is the check's measurement on OS threads
// (results.Threads.OSThreads) of s's count (Measured), else of the
// nearest count that has one (Substituted); without any, or when s's
// algorithm is one the header does not carry, a stand-in (Substituted):
// osThreadsAlgorithm above the allowed CPUs, else
// algname.Fallback, with no time. hybrids: the format carries a
// hybrid whose levels C runs (cHybrid); else every hybrid substitutes.
func forThreads(f *results.File, s results.Selection, size int, hybrids bool) results.Selection {
	if s.Threads > size {
		if t, o := osThreadsChoice(f, s.Threads); o != nil && CRunnable(o.Algorithm) {
			was := s.Describe()
			s.Spec = results.Spec{Algorithm: o.Algorithm, Policy: o.Policy, FanIn: o.FanIn}
			s.From, s.Best, s.MedianNs = t, false, 0
			if t == s.Threads && slices.Equal(o.CPUs, s.CPUs) {
				s.Rule, s.MedianNs = results.Measured, o.MedianNs
				s.Why = fmt.Sprintf("the check's best for %d threads on OS threads (the goroutines' is %s)", t, was)
			} else {
				s.Rule = Substituted
				s.Why = fmt.Sprintf("more threads than allowed CPUs: the best of %d threads measured on OS threads (not measured for this count)", t)
			}
			return s
		}
	}
	why := "" // why a hybrid cannot run in C
	switch {
	case s.Algorithm != algname.Hybrid && CRunnable(s.Algorithm):
		return s
	case s.Algorithm == algname.Hybrid && hybrids:
		_, _, err := cHybrid(s)
		if err == nil {
			return s
		}
		why = ": " + err.Error()
	case s.Algorithm == algname.Hybrid:
		why = ": this format carries no hybrid's groups (the c-barrier export carries them)"
	}
	was := s.Describe()
	s.Composition, s.LevelKeys, s.FanIn, s.MedianNs, s.Best = "", nil, 0, 0, false
	s.Policy = "auto"
	if s.Threads > size {
		s.Algorithm = osThreadsAlgorithm
		s.Why = fmt.Sprintf("the choice (%s) runs only in Go: OS threads outnumbering the CPUs block on a central counter (not measured on OS threads)", was)
	} else {
		s.Algorithm = algname.Fallback
		s.Why = fmt.Sprintf("the choice (%s) cannot run in C%s: the fallback stands in (not measured)", was, why)
	}
	s.Rule = Substituted
	return s
}

// osThreadsChoice returns the OS-thread measurement of n threads, else of
// the nearest count that has one (ties go to the larger), and its count.
func osThreadsChoice(f *results.File, n int) (int, *results.Choice) {
	best, bt := (*results.Choice)(nil), 0
	for _, t := range f.Threads {
		if t.OSThreads == nil {
			continue
		}
		d, bd := abs(t.Threads-n), abs(bt-n)
		if best == nil || d < bd || d == bd && t.Threads > bt {
			best, bt = t.OSThreads, t.Threads
		}
	}
	return bt, best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// cBarrier writes the barrier header with the machine's table: rows as
// the c-header's (headerTable), each naming an algorithm the header
// carries.
func cBarrier(b *strings.Builder, f *results.File, rows []headerEntry, order []int, ncpus int) {
	head, tail, ok := strings.Cut(cHeaderTemplate(), tableMarker)
	if !ok {
		panic("export: the barrier header template lost its table marker")
	}
	b.WriteString(head)
	fmt.Fprintf(b, "/* The machine's table: %s. */\n", strings.ReplaceAll(source(f), "*/", "* /"))
	if len(rows) == 0 {
		b.WriteString("/* The results file holds no choice: every machine gets the safe default. */")
		b.WriteString(tail)
		return
	}
	cpu := f.Machine.CPU
	fmt.Fprintf(b, "#define BARRIERTUNE_NCHOICES %d\n", len(rows))
	fmt.Fprintf(b, "#define BARRIERTUNE_MACHINE_NCPUS %d\n", ncpus)
	fmt.Fprintf(b, "#define BARRIERTUNE_MACHINE_FAMILY %d\n", cpu.Family)
	fmt.Fprintf(b, "#define BARRIERTUNE_MACHINE_MODEL %d\n", cpu.Model)
	fmt.Fprintf(b, "#define BARRIERTUNE_BLOCK_WAKE_NS %s\n", cDouble(f.BlockWakeNs))
	fmt.Fprintf(b, "static const char barriertune_machine_vendor[] = %s;\n", cQuote(cpu.Vendor))
	fmt.Fprintf(b, "static const char barriertune_machine_cpu[] = %s;\n", cQuote(cpu.Name))
	cNodes(b, f.Machine.Tree)
	cPlacements(b, rows, order)
	hybrid := map[int]string{} // a hybrid row's levels, by its lo
	for _, r := range rows {
		if r.sel.Algorithm == algname.Hybrid {
			hybrid[r.lo] = cLevels(b, r)
		}
	}
	fmt.Fprintf(b, "static const struct barriertune_choice barriertune_choices[BARRIERTUNE_NCHOICES] = {\n")
	for _, r := range rows {
		s := r.sel
		cpus, n := r.cPlacement(order)
		pinned := 1
		if s.Threads > len(order) || cpuset.Placement(s.CPUs).Oversubscribed() {
			pinned = 0
		}
		hi := "INT_MAX"
		if r.hi > 0 {
			hi = strconv.Itoa(r.hi)
		}
		c := &results.Choice{Spec: results.Spec{Algorithm: s.Algorithm, FanIn: s.FanIn}}
		note := fmt.Sprintf("%s: %s", s.Rule, s.Why)
		if s.MedianNs > 0 {
			note = fmt.Sprintf("%s, %s ns/episode as measured", note, formatNs(s.MedianNs))
			if s.Threads > len(order) {
				// Above the CPUs the check times the header's own barrier
				// in C where it found a compiler (its label says which);
				// else OS threads that block through the Go runtime,
				// which a C program's threads, yielding and sleeping in
				// the kernel directly, run much faster than
				// (docs/lab/2026-12-07-cbarrier.md).
				if _, o := osThreadsChoice(f, s.Threads); o != nil && strings.HasPrefix(o.Label, osThreadsCLabel) {
					note += " in C with this header's barrier" + strings.TrimPrefix(o.Label, osThreadsCLabel)
				} else {
					note += " with Go's OS threads (not a C figure)"
				}
			}
		}
		median := "NAN" // not measured: no time, never a 0
		if s.MedianNs > 0 {
			median = cDouble(s.MedianNs)
		}
		levels, ok := hybrid[r.lo]
		if !ok {
			levels = "0, NULL, NULL"
		}
		fmt.Fprintf(b, "\t{%d, %s, BARRIERTUNE_ALG_%s, %d, %d, %d, %s, %s, %s, %s},\n", r.lo, hi, cIdent(s.Algorithm), fanIn(c), pinned, n, cpus, median, cQuote(oneLine(note)), levels)
	}
	b.WriteString("};")
	b.WriteString(tail)
}

// cNodes writes the NUMA nodes the header recognises the machine by, as
// the Go lookup does (results.Tree.NUMAMismatch). Where the recorded tree
// has a NUMANode level, the level's sets (BARRIERTUNE_MACHINE_NODES_EXACT
// 1: the nodes online must be those). Where it has none (each node was the
// same CPUs as another object, or the whole machine), the tree's distinct
// object sets (EXACT 0: every node online must be one of them), at most
// maxCObjects of them; none when there are more or the tree is not one
// the check wrote. BARRIERTUNE_MACHINE_NBITS bounds the CPU ids, one past
// the tree's last CPU.
func cNodes(b *strings.Builder, t *results.Tree) {
	none := func() { b.WriteString("#define BARRIERTUNE_MACHINE_NNODES 0\n") }
	if t == nil {
		none()
		return
	}
	all, err := cpuset.ParseList(t.CPUs)
	if err != nil || all.IsEmpty() {
		none()
		return
	}
	var sets []string
	exact := false
	for _, l := range t.Levels {
		if l.Type == "NUMANode" {
			sets, exact = l.Sets, true
		}
	}
	if !exact {
		seen := map[string]bool{}
		for _, s := range append([]string{t.CPUs}, levelSets(t)...) {
			if !seen[s] {
				seen[s] = true
				sets = append(sets, s)
			}
		}
		if len(sets) > maxCObjects {
			none()
			return
		}
	}
	if len(sets) == 0 {
		none()
		return
	}
	for _, n := range sets {
		s, err := cpuset.ParseList(n)
		if err != nil || !s.SubsetOf(all) {
			none() // not a tree the check wrote
			return
		}
	}
	m := all.Members()
	fmt.Fprintf(b, "#define BARRIERTUNE_MACHINE_NNODES %d\n", len(sets))
	fmt.Fprintf(b, "#define BARRIERTUNE_MACHINE_NODES_EXACT %d\n", map[bool]int{false: 0, true: 1}[exact])
	fmt.Fprintf(b, "#define BARRIERTUNE_MACHINE_NBITS %d\n", m[len(m)-1]+1)
	b.WriteString("static const char *const barriertune_machine_nodes[BARRIERTUNE_MACHINE_NNODES] = {")
	for i, n := range sets {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(cQuote(n))
	}
	b.WriteString("};\n")
}

// maxCObjects caps the object sets a header carries for a tree without a
// NUMANode level: a few per core on large machines.
const maxCObjects = 4096

// levelSets is every set of t's levels, in order.
func levelSets(t *results.Tree) []string {
	var out []string
	for _, l := range t.Levels {
		out = append(out, l.Sets...)
	}
	return out
}
