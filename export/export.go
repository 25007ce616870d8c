// Package export turns a results file into what runtimes, compilers and
// scripts read directly: OpenMP environment variables (omp-env), a
// self-contained C header (c-header), shell variables (env) and one
// key=value line per thread count (kv).
//
// Thread counts that were not measured take the nearest measured count's
// choice, ties going to the larger count (results.File.Nearest, the rule
// barriers.Auto follows). Its CPU list is kept as measured: an OpenMP
// runtime binding N threads close to those places uses the first N places
// when N is smaller and wraps round them when N is larger.
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

	"github.com/barriertune/barriertune/results"
)

// Formats are the accepted format names.
func Formats() []string { return []string{"omp-env", "c-header", "env", "kv"} }

// Options select what to export.
type Options struct {
	// Threads, when positive, exports only the choice for that many
	// threads (the nearest measured count's when it was not measured);
	// 0 exports every measured count.
	Threads int
}

// MaxThreads caps Options.Threads.
const MaxThreads = 1 << 16

// entry is one exported choice: the count asked for and the measured
// count whose choice it takes.
type entry struct {
	threads int // asked for (== measured.Threads unless --threads)
	t       *results.Threads
}

func (e entry) best() *results.Choice { return e.t.Best }

// Write writes f in format to w.
func Write(w io.Writer, f *results.File, format string, opts Options) error {
	if !slices.Contains(Formats(), format) {
		return fmt.Errorf("unknown export format %q (accepted: %s)", format, strings.Join(Formats(), ", "))
	}
	if opts.Threads < 0 || opts.Threads > MaxThreads {
		return fmt.Errorf("--threads %d out of range (want 1 to %d, or 0 for every measured count)", opts.Threads, MaxThreads)
	}
	var es []entry
	if opts.Threads > 0 {
		t := f.Nearest(opts.Threads)
		if t == nil {
			return fmt.Errorf("the results file has no winner for any thread count; run `barriertune check`")
		}
		es = append(es, entry{opts.Threads, t})
	} else {
		for i := range f.Threads {
			if t := &f.Threads[i]; t.Best != nil {
				es = append(es, entry{t.Threads, t})
			}
		}
		slices.SortFunc(es, func(a, b entry) int { return a.threads - b.threads })
	}
	var b strings.Builder
	switch format {
	case "omp-env":
		ompEnv(&b, f, es, opts.Threads > 0)
	case "c-header":
		cHeader(&b, f, es)
	case "env":
		shellEnv(&b, f, es, opts.Threads > 0)
	case "kv":
		keyValues(&b, es)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fanIn is the fan-in the choice was built with, 0 for algorithms that
// take none.
func fanIn(c *results.Choice) int {
	if c.FanIn > 0 {
		return c.FanIn
	}
	if !takesFanIn(c.Algorithm) {
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

// measuredNote describes an entry for a comment.
func measuredNote(e entry) string {
	c := e.best()
	unit := "threads"
	if e.threads == 1 {
		unit = "thread"
	}
	s := fmt.Sprintf("%d %s: %s, policy %s", e.threads, unit, c.Algorithm, c.Policy)
	if fi := fanIn(c); fi > 0 {
		s += fmt.Sprintf(", fan-in %d", fi)
	}
	if c.Pinned {
		s += ", CPUs " + joinInts(c.CPUs)
	} else {
		s += ", unpinned"
	}
	s += fmt.Sprintf(", %s ns/episode", formatNs(c.MedianNs))
	if c.Tie {
		s += fmt.Sprintf(" (a tie with %s, settled by: %s)", c.RunnerUp, c.TieRule)
	}
	if e.threads != e.t.Threads {
		s += fmt.Sprintf(" (not measured: taken from %d threads, the nearest measured count)", e.t.Threads)
	}
	return oneLine(s)
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
