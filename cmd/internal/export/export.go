// Package export turns a results file into what runtimes, compilers and
// scripts read directly: the MPI implementations' own settings (openmpi:
// an MCA parameter file and a dynamic rules file; mpich: CVARs), OpenMP
// environment variables (omp-env), a
// self-contained C header of the choices (c-header), the tuned C barrier
// itself as one header for C11 and C++20 (c-barrier), shell variables (env)
// and one key=value line per thread count (kv); Formats lists them.
//
// Every choice is results.Selector.Select for its thread count inside the
// allowed CPUs (Options.Allowed), the one rule barriers.Auto and
// `barriertune show --threads` follow: the fastest measured placement class
// that fits the allowed CPUs, else the nearest measured count's algorithm
// packed on them, round-robin when the threads outnumber them. The CPU
// lists exported are the selection's, inside the allowed CPUs.
//
// The package only reads results.File values; it is meant for cmd/ and
// has no cgo.
package export

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/results"
)

// Formats are the accepted format names.
func Formats() []string {
	return []string{"omp-env", "c-header", "c-barrier", "env", "kv", "openmpi", "mpich"}
}

// Options select what to export.
type Options struct {
	// Threads, when positive, exports only the choice for that many
	// threads (the nearest measured count's when it was not measured);
	// 0 exports every measured count.
	Threads int
	// Allowed is the CPU set the program will run on; empty: the whole
	// machine the file records.
	Allowed cpuset.Set
	// Source, when set, names the results file and why it was used (and
	// why others were not); it goes into the comment lines.
	Source string
	// RulesPath is the absolute path the openmpi export's dynamic rules
	// file will have, and Rules where its content is written, when a
	// count chose an algorithm (the caller writes it there).
	RulesPath string
	Rules     io.Writer
	// RulesFormat is the openmpi export's rules format, one of
	// RulesFormats ("": auto); JSONRulesPath and JSONRules are the JSON
	// rules file's path and where its content is written, as RulesPath
	// and Rules are the classic file's.
	RulesFormat   string
	JSONRulesPath string
	JSONRules     io.Writer
}

// entry is one exported choice: the count asked for and the measured
// count whose choice it takes (t.Threads; t.Best is the selection, its
// CPUs inside the allowed set).
type entry struct {
	threads int // asked for (== measured.Threads unless --threads)
	t       *results.Threads
	sel     results.Selection
}

func (e entry) best() *results.Choice { return e.t.Best }

// Write writes f in format to w.
func Write(w io.Writer, f *results.File, format string, opts Options) error {
	if !slices.Contains(Formats(), format) {
		return fmt.Errorf("unknown export format %q (accepted: %s)", format, strings.Join(Formats(), ", "))
	}
	if opts.Threads < 0 || opts.Threads > barriers.MaxParticipants {
		return fmt.Errorf("--threads %d out of range (want 1 to %d, or 0 for every measured count)", opts.Threads, barriers.MaxParticipants)
	}
	switch format {
	case "openmpi", "mpich":
		var b strings.Builder
		if format == "mpich" {
			mpichExport(&b, f, opts.Threads)
		} else if err := openMPIExport(&b, f, opts); err != nil {
			return err
		}
		out := b.String()
		if opts.Source != "" {
			out = "# " + oneLine("results file: "+opts.Source) + "\n" + out
		}
		_, err := io.WriteString(w, out)
		return err
	}
	var counts []int
	if opts.Threads > 0 {
		if f.Nearest(opts.Threads) == nil {
			return fmt.Errorf("the results file has no winner for any thread count; run `barriertune check`")
		}
		counts = []int{opts.Threads}
	} else {
		for _, t := range f.Threads {
			if t.Best != nil {
				counts = append(counts, t.Threads)
			}
		}
		slices.Sort(counts)
	}
	var es []entry
	if len(counts) > 0 {
		sel, err := f.Selector()
		if err != nil {
			return err
		}
		allowed := opts.Allowed
		if allowed.IsEmpty() {
			allowed = sel.CPUs()
		}
		for _, n := range counts {
			s, err := sel.Select(n, allowed)
			if err != nil {
				return err
			}
			if n > allowed.Len() {
				// Above the CPUs the check's best is what goroutines
				// need; the readers of these formats run OS threads:
				// the choice measured on OS threads, or a stand-in that
				// says it is one.
				s = osThreadsSelection(f, s, allowed.Len(), false)
			}
			es = append(es, entryOf(f, s))
		}
	}
	var b strings.Builder
	switch format {
	case "omp-env":
		fmt.Fprintf(&b, "%s\n# OpenMP environment %s\n", ompUsage, source(f))
		allowed := opts.Allowed
		if allowed.IsEmpty() {
			if s, err := cpuset.ParseList(f.Machine.AllowedCPUs); err == nil {
				allowed = s
			}
		}
		ompEnv(&b, f, opts.Threads, allowed)
	case "c-header":
		var rows []headerEntry
		var order []int
		if len(es) > 0 {
			var err error
			if rows, order, err = headerTable(f, opts.Allowed, opts.Threads, false); err != nil {
				return err
			}
		}
		cHeader(&b, f, rows, order)
	case "c-barrier":
		var rows []headerEntry
		var order []int
		ncpus := 0
		if len(es) > 0 {
			sel, err := f.Selector()
			if err != nil {
				return err
			}
			ncpus = sel.CPUs().Len()
			if rows, order, err = headerTable(f, opts.Allowed, opts.Threads, true); err != nil {
				return err
			}
		}
		cBarrier(&b, f, rows, order, ncpus)
	case "env":
		fmt.Fprintf(&b, "# barriertune choices %s\n", source(f))
		if n := allowedLen(f, opts.Allowed); len(es) > 0 && es[len(es)-1].threads > n {
			fmt.Fprintf(&b, "# above the %d allowed CPUs each choice is the one measured on OS threads (what C, C++ and OpenMP programs run; rule measured), else central standing in (rule substituted, no time)\n", n)
		}
		shellEnv(&b, es, opts.Threads > 0)
	case "kv":
		keyValues(&b, es)
	}
	out := b.String()
	if opts.Source != "" {
		// Which file, and why the others of the lookup order were not used.
		switch format {
		case "omp-env":
			// The usage line stays first.
			first, rest, _ := strings.Cut(out, "\n")
			out = first + "\n# " + oneLine("results file: "+opts.Source) + "\n" + rest
		case "env":
			out = "# " + oneLine("results file: "+opts.Source) + "\n" + out
		case "c-header", "c-barrier":
			out = "/* " + strings.ReplaceAll(oneLine("results file: "+opts.Source), "*/", "* /") + " */\n" + out
		}
	}
	_, err := io.WriteString(w, out)
	return err
}

// entryOf turns a selection into an entry: a measured-count entry whose
// best is the selection (the nearest count's, or the asked count when the
// choice comes from no measured count).
func entryOf(f *results.File, s results.Selection) entry {
	from := s.From
	if from == 0 {
		from = s.Threads
	}
	c := &results.Choice{
		CPUs: s.CPUs, Label: s.Label, MedianNs: s.MedianNs,
		Pinned: !cpuset.Placement(s.CPUs).Oversubscribed(),
		Spec:   s.Spec,
	}
	if t := f.Lookup(s.Threads); s.Best && t != nil && t.Best != nil {
		b := t.Best
		c.Pinned, c.CILowNs, c.CIHighNs = b.Pinned, b.CILowNs, b.CIHighNs
		c.RunnerUp, c.MarginPct, c.Tie, c.TieRule = b.RunnerUp, b.MarginPct, b.Tie, b.TieRule
	}
	return entry{threads: s.Threads, t: &results.Threads{Threads: from, Source: results.Measured, Complete: true, Best: c}, sel: s}
}

// fanIn is the fan-in the choice was built with, 0 for algorithms that
// take none.
func fanIn(c *results.Choice) int {
	if c.FanIn > 0 {
		return c.FanIn
	}
	if !catalog.TakesFanIn(c.Algorithm) {
		return 0
	}
	return 4 // barriers' default (WithFanIn)
}

// source is the comment line naming where the values come from.
func source(f *results.File) string {
	s := fmt.Sprintf("from barriertune results for %s (%s, CPUs %s)", f.Machine.CPU.Name, f.Machine.Topology, f.Machine.AllowedCPUs)
	if !f.Time.IsZero() {
		s += ", " + f.Time.UTC().Format("2006-01-02 15:04 UTC")
	}
	if f.Partial {
		s += ", PARTIAL"
	}
	if f.Simulated {
		s += ", SIMULATED (not measured)"
	}
	return oneLine(s)
}

// oneLine keeps a value read from the file from breaking out of a comment.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

func formatNs(ns float64) string { return strconv.FormatFloat(ns, 'f', 1, 64) }

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,:/+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// allowedLen is the number of CPUs the export is for: the allowed set
// asked for, else the one the file was recorded with.
func allowedLen(f *results.File, allowed cpuset.Set) int {
	if !allowed.IsEmpty() {
		return allowed.Len()
	}
	return len(recordedAllowed(f))
}

// osThreadsSelection is s as a program of OS threads runs it
// (forThreads; hybrids as there); for more threads than the size allowed
// CPUs, with no time unless the time is the
// check's measurement on OS threads of this count: a choice measured as
// goroutines keeps its algorithm when C runs it, but not its time.
func osThreadsSelection(f *results.File, s results.Selection, size int, hybrids bool) results.Selection {
	out := forThreads(f, s, size, hybrids)
	if s.Threads <= size {
		return out
	}
	if t, o := osThreadsChoice(f, s.Threads); o == nil || t != s.Threads || out.Algorithm != o.Algorithm {
		if out.MedianNs > 0 || out.Rule == results.Measured {
			out.MedianNs, out.Best, out.Rule = 0, false, Substituted
			out.Why = fmt.Sprintf("more threads than allowed CPUs: %s was timed as goroutines, not on OS threads (no time)", out.Algorithm)
		}
	}
	return out
}
