package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/export"
	"github.com/barriertune/barriertune/cmd/internal/outfile"
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
	output     string // -o: the file written; "" is stdout
	verify     bool   // --verify: run the MPI loop through the written file
	rules      string // --rules: the openmpi export's rules format
}

func newExportCmd(g *globalOptions) *cobra.Command {
	o := &exportOptions{global: g}
	cmd := &cobra.Command{
		Use:   "export --format omp-env|c-header|c-barrier|env|kv|openmpi|mpich [--threads N] [--allowed CPULIST] [-o OUT [--verify]] [--rules auto|classic|json|both] [FILE]",
		Short: "Export the winners for OpenMP runtimes, MPI implementations, C and C++ programs or scripts",
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
            settings of each runtime's own knobs (libomp: KMP_AFFINITY,
            KMP_BLOCKTIME; libgomp: GOMP_SPINCOUNT, GOMP_CPU_AFFINITY)
            that the check measured faster than that runtime's defaults
            on a plain barrier loop and no slower on a stencil, and
            nothing where the defaults stayed, the runs were too few to
            decide, or the runtime was not measured; comments name each
            runtime's version and why, and the host state (the floor
            before and after the step) the times belong to. Its first
            line says how to use it: run programs with barriertune
            omp-run -- ./prog (the block for the thread count the
            program gets, for the runtime it links), or export
            OMP_NUM_THREADS and then
            source the file (without --threads an if-chain picks the
            block for $OMP_NUM_THREADS as it is when sourced). A
            variable both runtimes read (OMP_, GOMP_CPU_AFFINITY) is set
            by the file only where it was chosen for both.
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
  openmpi   an Open MPI MCA parameter file (name = value lines, for
            ~/.openmpi/mca-params.conf, mpirun --tune FILE, or the node's
            etc/openmpi-mca-params.conf) and, where a rank count chose a
            barrier algorithm, its dynamic rules file: OUT.rules in the
            classic format Open MPI 4.1 and 5.0 read, or OUT.rules.json
            in the JSON format of Open MPI 6.0 and later (--rules auto,
            the default: the one the measured version reads; both:
            the classic file, named, and the JSON one beside it): the
            measured counts only, Open MPI's own decision elsewhere;
            needs -o OUT then. A launch-level line (binding, mapping,
            coll/sm) applies to every job whatever its rank count: it is
            written only when measured faster at some count and not
            slower at any.
  mpich     MPICH CVAR assignments measured faster (with --threads N, the
            rank count: NAME=VALUE lines; without it a case on
            $BARRIERTUNE_MPI_RANKS); above the CPUs it says what MPICH's
            busy-polling barrier costs. docs/mpi.md says how to install
            and undo both; --verify runs the MPI loop through the written
            file against the defaults at each count it changes and fails
            unless it is faster where a setting was chosen (and not slower
            where only a launch-level line applies).

Each choice is the one barriers.Auto and ` + "`show --threads`" + ` make inside the
allowed CPUs (--allowed; default: this process's allowed CPUs when the
file is this machine's, else the whole machine): the fastest measured
placement class that fits them, else the nearest measured count's algorithm
packed on them, round-robin when the threads outnumber them. docs/results.md
maps the algorithm names to libomp, libgomp and the X-Ray OSAL.`,
		Example: `  barriertune omp-run -- ./prog
  barriertune export --format omp-env > barriertune-omp.env && export OMP_NUM_THREADS=8 && . ./barriertune-omp.env
  barriertune export --format openmpi -o barrier.conf --verify && mpirun --tune barrier.conf -np 8 ./app
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
	f.StringVarP(&o.output, "output", "o", "", "write to `FILE` instead of stdout, a new file or a regular file replaced whole (a FIFO, a device or a directory is refused before anything is written) (openmpi: its dynamic rules file goes to FILE.rules, named by its absolute path)")
	f.StringVar(&o.rules, "rules", "auto", "openmpi: the dynamic rules file's format: "+strings.Join(export.RulesFormats(), ", ")+" (auto: JSON, FILE.rules.json, for Open MPI 6.0 and later, else classic, FILE.rules; both: the classic file named and the JSON one beside it)")
	f.BoolVar(&o.verify, "verify", false, "openmpi, mpich: after writing, run the MPI barrier loop through the written file against the defaults at each count it changes, and fail unless it is faster where a setting was chosen, not slower where only a launch-level line applies (needs -o)")
	registerCompletions(cmd, map[string][]string{"format": export.Formats(), "rules": export.RulesFormats()})
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
	if o.verify && (o.format != "openmpi" && o.format != "mpich" || o.output == "") {
		return usageErrorf("--verify: only with --format openmpi or mpich and -o FILE (it runs the loop through the file written)")
	}
	if !slices.Contains(export.RulesFormats(), o.rules) {
		return usageErrorf("--rules %q: want one of %s", o.rules, strings.Join(export.RulesFormats(), ", "))
	}
	if o.rules != "auto" && o.format != "openmpi" {
		return usageErrorf("--rules %s: only with --format openmpi (the format of Open MPI's dynamic rules file)", o.rules)
	}
	if (o.threadsSet || o.threads != 0) && (o.threads < 1 || o.threads > barriers.MaxParticipants) {
		return usageErrorf("--threads %d: want 1..%d threads (leave it out for every measured count)", o.threads, barriers.MaxParticipants)
	}
	return nil
}

// runExport reads the results file and writes the export to w.
func runExport(ctx context.Context, o *exportOptions, w, stderr io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	rs, err := openAndWarn(o.path, o.allowed, o.global, stderr, "results file", true) // kv has no comment to name it in
	if err != nil {
		return err
	}
	opts := export.Options{Threads: o.threads, Allowed: rs.allowed, Source: rs.Summary()}
	var rules, jsonRules bytes.Buffer
	opts.RulesFormat = o.rules
	if o.output != "" && o.format == "openmpi" {
		abs, err := filepath.Abs(o.output)
		if err != nil {
			return fmt.Errorf("export: -o %s: %w", o.output, err)
		}
		opts.RulesPath, opts.Rules = abs+export.MPIRulesSuffix, &rules
		opts.JSONRulesPath, opts.JSONRules = abs+export.MPIJSONRulesSuffix, &jsonRules
	}
	if o.output == "" {
		if err := export.Write(w, rs.File, o.format, opts); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		return nil
	}
	var b bytes.Buffer
	if err := export.Write(&b, rs.File, o.format, opts); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	// Every file is checked before any is written (a FIFO, a device, a
	// directory or a dangling link refuses the export, and nothing is
	// half-written), then each is written whole through a file beside it
	// (outfile): a rules file that was a FIFO once hung the export, and
	// one that led to /dev/zero was reported written.
	type outFile struct {
		what, path string
		data       []byte
	}
	var files []outFile
	for _, r := range []struct {
		buf  *bytes.Buffer
		path string
	}{{&rules, opts.RulesPath}, {&jsonRules, opts.JSONRulesPath}} {
		if r.buf.Len() > 0 {
			files = append(files, outFile{"dynamic rules file", r.path, r.buf.Bytes()})
		}
	}
	files = append(files, outFile{"export file", o.output, b.Bytes()})
	for _, f := range files {
		if err := outfile.Check(f.what, f.path); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	for _, f := range files {
		if err := outfile.Write(f.what, f.path, f.data, 0o644); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if f.path != o.output {
			fmt.Fprintf(stderr, "wrote %s's %s %s\n", o.output, f.what, f.path)
		}
	}
	if o.verify {
		// Ctrl-C stops the launches (their process groups are killed
		// with the context), not only this process: an MPI launcher left
		// behind would hold its ranks.
		ctx, stop := notifySignals(ctx)
		defer stop()
		err := verifyMPI(ctx, rs.File, o.format, o.output, o.threads, w, stderr)
		if se := interruption(ctx); se != nil {
			return &exitError{code: signalCode(se.sig), err: fmt.Errorf("%v during --verify: %s is written, its verification did not finish", se, o.output)}
		}
		return err
	}
	return nil
}
