package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/export"
)

// exportOptions are the export command's flags and argument.
type exportOptions struct {
	global  *globalOptions
	format  string
	threads int
	// threadsSet: --threads was given (0 or less is then a usage error,
	// never "every count").
	threadsSet bool
	allowed    string
	path       string // results file; "" is the lookup order
}

func newExportCmd(g *globalOptions) *cobra.Command {
	o := &exportOptions{global: g}
	cmd := &cobra.Command{
		Use:   "export --format omp-env|c-header|c-barrier|env|kv [--threads N] [--allowed CPULIST] [FILE]",
		Short: "Export the winners for OpenMP runtimes, C and C++ programs or scripts",
		Long: `Export the winners of a results file in a form other programs read
directly. Without FILE, the first file of the lookup order that applies to
this machine: $BARRIERTUNE_RESULTS, the per-user file, the system-wide
/etc/barriertune/results.json, then barriertune/results.json in each
directory of $XDG_CONFIG_DIRS, each followed by the other *.json files of
its directory, one per kind of node (a comment names the file used and why the
others were not; stderr says once when $BARRIERTUNE_RESULTS is set but
cannot be used, or when a per-user file hides the system-wide one).

What was not measured is absent, never a zero: kv and env leave out
median_ns (and measured_threads when the choice is a fallback) and give
the rule (measured, nearest, oversubscribed); omp-env's comments say "not
measured" and why; above the allowed CPUs env, kv and the C exports take
the check's choice on OS threads (what C, C++ and OpenMP run), never a
goroutine algorithm or time; the C header's median_ns is NAN and its rule field says
so. barriertune_lookup(n) in the header returns, for every n, the choice
show --threads n makes, as a C program can run it: the C exports never name
an algorithm that exists only in Go (the goroutine barrier, the sync.Cond
and channel baselines); their rows say "substituted" and name the stand-in
(a blocking central counter for more threads than CPUs, else
dissemination). c-barrier carries a hybrid with its levels and groups (one
with a level only Go runs is substituted); c-header, which carries no
groups, substitutes every hybrid.

  omp-env   POSIX shell exports for OpenMP runtimes: per thread count, the
            settings of each runtime's own knobs (libgomp: GOMP_SPINCOUNT;
            libomp: KMP_PLAIN_BARRIER_PATTERN, branch bits, KMP_BLOCKTIME,
            KMP_LIBRARY; both: OMP_PLACES, OMP_PROC_BIND) that the check
            measured faster than that runtime's defaults, and nothing
            where the defaults stayed or the runtime was not measured;
            comments name each runtime's version and why. Without
            --threads, an if-chain picks the block for $OMP_NUM_THREADS.
  c-header  a self-contained C99 header: a table by thread count (algorithm,
            fan-in, policy, CPUs, median ns) and barriertune_lookup(n).
  c-barrier the tuned barrier itself, one header for C11 and C++20 programs
            (libc and pthreads only): barriertune_barrier_init/wait/destroy
            and barriertune::barrier (std::barrier's interface), with this
            machine's choice per thread count; a binary run on another
            machine uses a safe default (docs/cbarrier.md).
  env       KEY=VALUE shell variables (BARRIERTUNE_ALGORITHM_8=..., or
            unsuffixed with --threads).
  kv        one line per thread count of key=value pairs.

Each choice is the one barriers.Auto and ` + "`show --threads`" + ` make inside the
allowed CPUs (--allowed; default: this process's allowed CPUs when the
file is this machine's, else the whole machine): the fastest measured
placement class that fits them, else the nearest measured count's algorithm
packed on them, round-robin when the threads outnumber them. docs/results.md
maps the algorithm names to libomp, libgomp and the X-Ray OSAL.`,
		Example: `  barriertune export --format omp-env > barriertune-omp.env && . ./barriertune-omp.env
  barriertune export --format c-header > barriertune_choices.h
  barriertune export --format c-barrier > barriertune.h
  barriertune export --format kv --threads 8 --allowed 0-3 results.json`,
		Args: oneResultsFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.path = args[0]
			}
			o.threadsSet = cmd.Flags().Changed("threads")
			return runExport(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "", "output format: "+strings.Join(export.Formats(), ", ")+" (required)")
	f.IntVarP(&o.threads, "threads", "t", 0, "export only the choice for this many threads (default: every measured count)")
	f.StringVar(&o.allowed, "allowed", "", "choose inside these CPUs (`CPULIST`, e.g. 0-3,8; default: this process's allowed CPUs)")
	registerCompletions(cmd, map[string][]string{"format": export.Formats()})
	return cmd
}

// validate checks the flag values before the file is read.
func (o *exportOptions) validate() error {
	if o.format == "" {
		return usageErrorf("--format is required: one of %s (usage: barriertune export --format FORMAT [--threads N] [FILE])", strings.Join(export.Formats(), ", "))
	}
	if !slices.Contains(export.Formats(), o.format) {
		return usageErrorf("--format %q: unknown format (accepted: %s)", o.format, strings.Join(export.Formats(), ", "))
	}
	if (o.threadsSet || o.threads != 0) && (o.threads < 1 || o.threads > barriers.MaxParticipants) {
		return usageErrorf("--threads %d: want 1..%d threads (leave it out for every measured count)", o.threads, barriers.MaxParticipants)
	}
	return nil
}

// runExport reads the results file and writes the export to w.
func runExport(_ context.Context, o *exportOptions, w, stderr io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	rs, err := openResults(o.global, o.path, o.allowed)
	if err != nil {
		return err
	}
	warnNotices(stderr, o.global, rs)
	warnOtherMachine(stderr, o.global, rs)
	o.global.verbosef(stderr, "results file: %s", rs.Summary()) // kv has no comment to name it in
	if err := export.Write(w, rs.File, o.format, export.Options{Threads: o.threads, Allowed: rs.allowed, Source: rs.Summary()}); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}
