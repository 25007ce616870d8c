package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cmd/internal/check"
	"github.com/barriertune/barriertune/cmd/internal/configsets"
	"github.com/barriertune/barriertune/cmd/internal/store"
	"github.com/barriertune/barriertune/cmd/internal/sysload"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/results"
)

// checkOptions are the flags of `barriertune check`. Flags added by other
// files (e.g. a planning mode) add their fields here and bind them in
// newCheckCmd.
type checkOptions struct {
	global     *globalOptions
	src        sourceFlags
	output     string
	resume     string
	threads    string
	algorithms []string
	setsLimit  int
	budget     time.Duration
	sampleTime time.Duration
	json       bool
	runtimes   string      // --runtimes; "" is every runtime found
	plan       planOptions // --plan, --simulate and friends (check_plan.go)
	system     systemFlag  // --system (check_system.go)
}

func newCheckCmd(g *globalOptions) *cobra.Command {
	opts := &checkOptions{global: g, system: systemFlag{path: g.systemFile}}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Run the install-time check: find the fastest barrier for every thread count",
		Long: `Run the install-time check. For every thread count (default: 2 up to the
allowed PUs, all of them up to 8, then powers of two and the maximum, and
twice and four times the PUs, as plain unpinned goroutines the way programs
run more goroutines than CPUs, and the tree's boundaries: the PUs and the
cores of one L3, NUMA node and package and of the machine, where programs
run and the winner changes) it
chooses representative placements (configuration sets), times every barrier
algorithm on each, interleaved and repeated, with the waiting policy the
placement calls for (spin when every thread has its own CPU, else auto), and
measures the core-to-core floor at each level of the CPU tree. Candidates
twice as slow as the best are dropped early. Winners are ranked by the
median the table shows: where the floor runs beside the candidates, each
sample over the same round's floor sample, in the rounds whose floor saw
the host state most rounds saw (a VM's host may move the CPUs during the
check: the file and the table then say so), times that state's floor.
Within 3% of the fastest is a tie that the simpler algorithm wins, so two
runs name the same winner, and a runner-up further off that the
significance test cannot separate is a tie the fastest keeps. A winner
below 0.8 times its floor is measured again beside it before it may win.

The check fits its --budget (default 1m): when every candidate does not
fit, the contention-aware cost model, calibrated on the first round, prunes
each thread count to its best few and the central and dissemination
baselines; then it cuts repetitions, placements per thread count, then
thread counts, and later rounds when a round runs slower than planned
(restoring them when later rounds run fast again), and says what it cut;
the progress line's time left follows the pace of the passes measured.
After the rounds, the candidates
within 10% of the best are measured again in a short interleaved play-off.
Thread counts not measured use the nearest measured one. For the C
exports it also times, above the allowed CPUs, the algorithms a C program's
threads run there: with the exported C header itself where it finds a C
compiler ($CC, else cc, gcc or clang), else on Go's OS threads (not C
figures; the file's cuts say why); and, where gcc -fopenmp and clang
-fopenmp build, the OpenMP runtimes' barriers, and where Open MPI or MPICH
is installed, MPI_Barrier among ranks of this node under each
implementation's defaults and its own barrier settings (Open MPI: its
barrier algorithms, then binding, mapping and coll/sm in launches of
their own), then the exported file run as a user would at each count it
changes (docs/mpi.md; --runtimes chooses which runtimes). --plan prints
exactly what the check would measure with the same flags, the time of its
samples and a bound on what follows the rounds (play-off, per-level
latencies, block/wake); a live run also starts and pins threads, so its
first round sets the pace. --simulate runs the same check on the cost
model and writes its file to -o, which it checks as a live check's: a
simulated file never replaces measured results.

The check watches how busy the machine is while it measures (runnable
tasks of other processes, its threads' wait for a CPU, the load average):
on a busy machine it says so before measuring and in its table, the file
records it, and its file never replaces one measured quiet (it goes
beside it, to FILE.busy).

Ctrl-C (SIGINT) or SIGTERM stops it: what was measured is written, marked
partial with the rounds done and planned, --resume FILE continues the
missing rounds, and the exit code is 130 or 143. Stopped after the rounds,
in the OpenMP or MPI step, it never replaces a file whose steps decided
a runtime count this run did not: that file stays, and this run goes
beside it, to FILE.partial.

Results go to -o FILE, or by default to the per-user config directory
($XDG_CONFIG_HOME/barriertune/results.json) unless $BARRIERTUNE_RESULTS
names another file, where barriers.Auto and
` + "`barriertune show`" + ` find them. -o DIR/ (a trailing slash) writes this
machine's file into a directory that several kinds of node share, named
for the machine (its CPU and a hash of its CPU tree), so the same command
runs on every node (srun --ntasks-per-node=1 ...): nodes of one kind keep
the most complete file between them, and each node's programs find their
own. --system and the default keep another machine's file found at their
results.json and write beside it under that name.`,
		Example: `  barriertune check
  sudo barriertune check --system --budget 5m
  barriertune check --threads 2,4 --algorithms dissemination,mcs,central
  barriertune check --resume ~/.config/barriertune/results.json
  srun --ntasks-per-node=1 barriertune check -o /site/etc/barriertune/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.plan.validate(cmd.Flags()); err != nil {
				return err
			}
			if err := opts.system.apply(opts); err != nil {
				return err
			}
			if opts.plan.active() {
				cfg, err := opts.config()
				if err != nil {
					return err
				}
				return opts.plan.run(cmd, opts, cfg)
			}
			return runCheck(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	opts.src.register(cmd.Flags())
	opts.plan.register(cmd.Flags())
	opts.system.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVarP(&opts.output, "output", "o", "", "results `FILE`, or DIR/ for this machine's file in a directory of several machines' files (default: $BARRIERTUNE_RESULTS, else $XDG_CONFIG_HOME/barriertune/results.json)")
	f.StringVar(&opts.runtimes, "runtimes", "", "runtimes measured after the algorithms, in what they leave of the budget: `LIST` of "+strings.Join(check.Runtimes(), ", ")+", or none (default: every one installed; the OpenMP runtimes through gcc and clang, Open MPI and MPICH through their compiler wrappers and launchers)")
	f.StringVar(&opts.resume, "resume", "", "continue the partial results in `FILE` (and write there unless -o)")
	f.StringVar(&opts.threads, "threads", "", "thread counts, e.g. 2,4,8 or 2-8, each once, 1.."+strconv.Itoa(barriers.MaxParticipants)+" (default: 2..PUs, all up to 8, then powers of two, the maximum, and each L3's, NUMA node's, package's and the machine's PUs and cores; 2x and 4x the PUs unpinned)")
	f.StringSliceVar(&opts.algorithms, "algorithms", nil, "comma-separated algorithms, each once (default: all): "+strings.Join(catalog.Names(), ", "))
	f.IntVar(&opts.setsLimit, "sets-limit", configsets.DefaultLimit, "most placements measured per thread count (at least 1)")
	f.DurationVar(&opts.budget, "budget", check.DefaultBudget, "time budget for the whole check (positive, e.g. 30s or 5m)")
	f.DurationVar(&opts.sampleTime, "sample-time", check.DefaultSampleTime, "target duration of one sample")
	f.BoolVar(&opts.json, "json", false, "print the results file instead of the table")
	registerCompletions(cmd, map[string][]string{"algorithms": catalog.Names()})
	return cmd
}

// Caps on check's flags, so that a typo cannot start a run of days.
const (
	maxBudget    = 7 * 24 * time.Hour
	maxSetsLimit = 1 << 20
)

// config validates the flags and builds the check's configuration, all
// before the topology is read or anything is measured.
func (o *checkOptions) config() (check.Config, error) {
	cfg := check.Config{SetsLimit: o.setsLimit, Budget: o.budget, SampleTarget: o.sampleTime, Version: version()}
	switch {
	case o.budget <= 0:
		return cfg, usageErrorf("--budget %s: want a positive duration such as 30s or 5m", o.budget)
	case o.budget > maxBudget:
		return cfg, usageErrorf("--budget %s: want at most %s", o.budget, maxBudget)
	case o.sampleTime <= 0:
		return cfg, usageErrorf("--sample-time %s: want a positive duration such as 200us", o.sampleTime)
	case o.sampleTime > maxSampleTime:
		return cfg, usageErrorf("--sample-time %s: want at most %s", o.sampleTime, maxSampleTime)
	case o.setsLimit < 1 || o.setsLimit > maxSetsLimit:
		return cfg, usageErrorf("--sets-limit %d: want 1..%d placements per thread count", o.setsLimit, maxSetsLimit)
	}
	if o.threads != "" {
		var err error
		if cfg.Threads, err = parseCounts("--threads", o.threads); err != nil {
			return cfg, err
		}
		sum := 0
		for _, t := range cfg.Threads {
			sum += t
		}
		if sum > maxThreadsInAll {
			return cfg, usageErrorf("--threads %q: %d thread counts, %d threads in all; a check plans at most %d in all (planning takes about 25 us a thread, measuring far more): give fewer counts, e.g. 2-8 and powers of two as the default does", elided(o.threads), len(cfg.Threads), sum, maxThreadsInAll)
		}
		if o.src.live() && !o.plan.simulate {
			// This machine's check (or its plan) runs each count on as
			// many OS threads: refused before any work when the runtime
			// or the memory cannot hold them.
			h := check.HostableThreads()
			for _, t := range cfg.Threads {
				if err := h.Refuse(t); err != nil {
					return cfg, usageErrorf("--threads %d: %v", t, err)
				}
			}
		}
	}
	if o.algorithms != nil {
		var err error
		if cfg.Algorithms, err = algorithmNames("--algorithms", o.algorithms); err != nil {
			return cfg, err
		}
	}
	if o.runtimes != "" {
		var err error
		if cfg.Runtimes, err = check.ParseRuntimes(o.runtimes); err != nil {
			return cfg, usageErrorf("--runtimes %q: %v", elided(o.runtimes), err)
		}
	}
	return cfg, nil
}

// destination is where the results go: --system's directory, -o (a file,
// or a directory of machines' files), else --resume's file, else the
// default of the lookup order (store.DefaultDestination).
func (o *checkOptions) destination() (store.Destination, error) {
	switch {
	case o.system.on:
		return store.SystemDestination(o.system.file()), nil
	case o.output != "":
		return store.OutputDestination("-o", o.output), nil
	case o.resume != "":
		return store.Destination{File: o.resume}, nil
	}
	return store.DefaultDestination()
}

// maxThreadsInAll caps the sum of the thread counts --threads names: the
// plan models every candidate at every count, in time about linear in the
// count (2-512, 131,327 threads in all, planned in 3 s on the 2-vCPU
// guest; 2-65536 took 6 GB and did not finish). The default counts of a
// 16,384-PU machine stay below it.
const maxThreadsInAll = 1 << 17

// runCheck runs the install-time check and writes the results.
func runCheck(ctx context.Context, opts *checkOptions, w, stderr io.Writer) error {
	cfg, err := opts.config()
	if err != nil {
		return err
	}
	dest, err := opts.destination()
	if err != nil {
		return err
	}
	// An explicit path is taken as given: a typo in its directory is
	// refused, not created (only the default directories are made).
	if err := dest.Check(); err != nil {
		return err
	}
	release, err := dest.Claim() // one check per results file at a time
	if err != nil {
		return err
	}
	defer release()
	path := dest.String()
	if cfg.Topology, err = opts.src.load(); err != nil {
		return err
	}
	if opts.resume != "" {
		prev, err := results.Read(opts.resume)
		if err != nil {
			return fmt.Errorf("--resume: %w", err)
		}
		if !prev.Partial && opts.threads == "" {
			// Nothing to continue: the file stays as it is (its time,
			// block_wake_ns and cuts with it).
			rounds := ""
			if prev.RoundsPlanned > 0 {
				rounds = fmt.Sprintf(" (%d of %d rounds)", prev.RoundsDone, prev.RoundsPlanned)
			}
			_, err := fmt.Fprintf(w, "%s is complete%s: nothing to resume; it is unchanged (run check without --resume to measure again)\n", opts.resume, rounds)
			return err
		}
		cfg.Resume = prev
	}
	opts.global.verbosef(stderr, "check: %s, results to %s", describeCheck(cfg), path)
	if why := busyNow(); why != "" {
		// Said before anything is measured, so that whoever started the
		// check can stop it and run it when the machine is quiet.
		what := "the machine"
		if opts.system.on {
			what = "this node"
		}
		fmt.Fprintf(stderr, "note: %s is busy now (%s): timings taken now include the competition; the file will say so and will not replace one measured quiet\n", what, why)
	}
	ctx, stop := notifySignals(ctx)
	defer stop()
	line := newProgressLine(stderr, opts.global, "check")
	cfg.Progress = func(p check.Progress) { line.Update(checkProgressMessage(p), progressFraction(p)) }
	f, runErr := check.Run(ctx, cfg)
	line.Clear()
	if errors.Is(runErr, check.ErrNothingMeasured) {
		// Nothing to keep: no file is written, a good one stays.
		if se := interruption(ctx); se != nil {
			return &exitError{code: signalCode(se.sig), err: fmt.Errorf("%v before anything was measured; %s", se, leftAsItWas(path))}
		}
		return fmt.Errorf("%w; %s", runErr, leftAsItWas(path))
	}
	if f == nil {
		if se := interruption(ctx); se != nil {
			return se
		}
		return runErr
	}
	return writeCheckResults(ctx, opts, dest, f, runErr, w)
}

// leftAsItWas says that a check wrote nothing to path: an existing file
// is unchanged, and a file that never existed is not called so.
func leftAsItWas(path string) string {
	if _, err := os.Stat(path); err == nil {
		return path + " is unchanged"
	}
	return "no results file was written (" + path + " does not exist)"
}

// writeCheckResults writes what the check measured, prints it and says
// whether the check was interrupted before it finished.
//
// A run less complete than the complete file at path goes beside it, to
// path.partial, and a file in a directory of machines' files goes beside
// another machine's (store.Destination.Save); the messages name the file
// written.
func writeCheckResults(ctx context.Context, opts *checkOptions, dest store.Destination, f *results.File, runErr error, w io.Writer) error {
	var path, note, lost string
	var err error
	if se := interruption(ctx); se != nil && !f.Partial {
		// The rounds finished; the steps after them (the OpenMP and MPI
		// steps among them) stopped where they were. Such a file must
		// not replace one whose steps finished.
		f.Cuts = append(f.Cuts, fmt.Sprintf("%v after the algorithms' rounds: the steps after them (play-off, latencies, the C, OpenMP and MPI steps) stopped where they were, and record what they measured before", se))
		if old, rerr := results.Read(dest.String()); rerr == nil && !old.Partial {
			lost = runtimesLost(f, old)
		}
	}
	if lost != "" {
		path = dest.String() + ".partial"
		err = store.Write(path, f)
		note = fmt.Sprintf("%s keeps its results: this interrupted run did not finish what it measured (%s); this run went beside it", dest.String(), lost)
	} else {
		path, note, err = dest.Save(f)
	}
	if err != nil {
		return err
	}
	if opts.json {
		err = writeJSON(w, f)
	} else if err = printWinners(w, f); err == nil {
		_, err = fmt.Fprintf(w, "\nresults written to %s\n", path)
		if err == nil && note != "" {
			_, err = fmt.Fprintln(w, note)
		}
	}
	if err != nil {
		return err
	}
	// Any signal exits 130 or 143; the message says whether the file is
	// complete (a signal after the rounds cut only the steps after them).
	if se := interruption(ctx); se != nil {
		if lost != "" {
			return &exitError{code: signalCode(se.sig), err: fmt.Errorf("%v during the steps after the rounds: %s is unchanged (it holds %s, which this run did not finish); this run's results went to %s", se, dest.String(), lost, path)}
		}
		if !f.Partial {
			return &exitError{code: signalCode(se.sig), err: fmt.Errorf("%v after the algorithms' rounds: their results are complete, the steps after them stopped where they were (the file's cuts say so); written to %s", se, path)}
		}
		return &exitError{code: signalCode(se.sig), err: fmt.Errorf("%v: partial results (%d of %d rounds) written to %s; continue with --resume %s", se, f.RoundsDone, f.RoundsPlanned, path, path)}
	}
	if errors.Is(runErr, context.Canceled) {
		return fmt.Errorf("interrupted: partial results written to %s; continue with --resume %s", path, path)
	}
	return runErr
}

// busyProbe is how long a check looks at the machine before it measures
// (the ticks' rounding then allows 2 ticks a CPU over it: sysload.BusyBound).
const busyProbe = 200 * time.Millisecond

// busyNow says why the machine is busy right now (other processes used a
// quarter of a CPU or more of the CPUs this process may use over
// busyProbe: sysload.Summary.Busy), or "" when it is quiet or the system
// does not say.
func busyNow() string {
	var cpus []int
	if a, err := osal.Allowed(); err == nil {
		cpus = a.Members()
	}
	w := sysload.Start(sysload.Proc{OnlyCPUs: cpus}, busyProbe/5)
	time.Sleep(busyProbe)
	s, err := w.Stop()
	if err != nil {
		return ""
	}
	busy, why := s.Busy()
	if !busy {
		return ""
	}
	return fmt.Sprintf("%s, load average %.2f", why, s.Load1End)
}

// describeCheck is the check's configuration in one line, for --verbose.
func describeCheck(cfg check.Config) string {
	threads := "default"
	if cfg.Threads != nil {
		threads = joinInts(cfg.Threads)
	}
	algs := "all"
	if cfg.Algorithms != nil {
		algs = strings.Join(cfg.Algorithms, ",")
	}
	return fmt.Sprintf("%d PUs (%s), threads %s, algorithms %s, budget %s", len(cfg.Topology.PUs()), cfg.Topology.Allowed(), threads, algs, cfg.Budget)
}

// checkProgressMessage is one progress report of the check in words.
func checkProgressMessage(p check.Progress) string {
	if p.Step != "" { // a step after the placements (the OpenMP runtimes)
		return p.Step
	}
	label := p.Label
	if label == "" {
		label = "set"
	}
	// The most useful first: a narrow terminal cuts the end.
	return fmt.Sprintf("%d/%d placement passes, about %s left; %d threads, placement %d/%d %s, %d algorithms, round %d/%d, elapsed %s",
		p.Done, p.Total, p.Remaining.Round(time.Second), p.Threads, p.Set, p.Sets, label, p.Algorithms, p.Round, p.Rounds, p.Elapsed.Round(time.Second))
}

// progressFraction is the share of planned placements measured.
func progressFraction(p check.Progress) float64 {
	if p.Total <= 0 {
		return 0
	}
	return float64(p.Done) / float64(p.Total)
}
