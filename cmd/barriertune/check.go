package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/check"
	"github.com/barriertune/barriertune/configsets"
	"github.com/barriertune/barriertune/results"
)

func newCheckCmd() *cobra.Command {
	var (
		src                              sourceFlags
		output, resume, threadList, algs string
		setsLimit                        int
		budget, sampleTime               time.Duration
		asJSON                           bool
	)
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Run the install-time check: find the fastest barrier for every thread count",
		Long: `Run the install-time check. For every thread count (default: 2 up to the
allowed PUs, all of them up to 8, then powers of two and the maximum) it
chooses representative placements (configuration sets), times every barrier
algorithm on each, interleaved and repeated, with the waiting policy the
placement calls for (spin when every thread has its own CPU, else auto), and
measures the core-to-core floor at each level of the CPU tree. Candidates
twice as slow as the best are dropped early; winners within 3% are tied and
the simpler algorithm wins, so two runs name the same winner.

The check fits its --budget (default 1m): it cuts repetitions first, then
placements per thread count, then thread counts, and says what it cut.
Ctrl-C (SIGINT) or SIGTERM stops it cleanly: what was measured is written,
marked partial, and --resume FILE continues it.

Results go to -o FILE, or by default to the per-user config directory
($XDG_CONFIG_HOME/barriertune/results.json), where barriers.AutoPolicy and
` + "`barriertune show`" + ` find them.`,
		Example: `  barriertune check
  barriertune check --budget 5m -o /etc/barriertune/results.json
  barriertune check --threads 2,4 --algorithms dissemination,mcs,central
  barriertune check --resume ~/.config/barriertune/results.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			topo, err := src.load()
			if err != nil {
				return err
			}
			path := output
			if resume != "" && path == "" {
				path = resume
			}
			if path == "" {
				if path, err = results.DefaultPath(); err != nil {
					return err
				}
			}
			cfg := check.Config{Topology: topo, SetsLimit: setsLimit, Budget: budget, SampleTarget: sampleTime, Version: version()}
			if threadList != "" {
				if cfg.Threads, err = parseCounts(threadList); err != nil {
					return err
				}
			}
			if algs != "" {
				for _, a := range strings.Split(algs, ",") {
					a = strings.TrimSpace(a)
					if _, err := barriers.Lookup(a); err != nil {
						return fmt.Errorf("--algorithms: %w", err)
					}
					cfg.Algorithms = append(cfg.Algorithms, a)
				}
			}
			if setsLimit < 0 {
				return fmt.Errorf("--sets-limit %d: want at least 1", setsLimit)
			}
			if resume != "" {
				prev, err := results.Read(resume)
				if err != nil {
					return fmt.Errorf("--resume: %w", err)
				}
				cfg.Resume = prev
			}
			stderr := cmd.ErrOrStderr()
			cfg.Progress = progressPrinter(stderr)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			f, runErr := check.Run(ctx, cfg)
			endProgress(stderr)
			if f == nil {
				return runErr
			}
			if err := results.Write(path, f); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(w, f); err != nil {
					return err
				}
			} else {
				if err := printWinners(w, f); err != nil {
					return err
				}
				fmt.Fprintf(w, "\nresults written to %s\n", path)
			}
			if errors.Is(runErr, context.Canceled) {
				return fmt.Errorf("interrupted: partial results written to %s; continue with --resume %s", path, path)
			}
			return runErr
		},
	}
	src.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "", "results `FILE` (default: $XDG_CONFIG_HOME/barriertune/results.json)")
	f.StringVar(&resume, "resume", "", "continue the partial results in `FILE` (and write there unless -o)")
	f.StringVar(&threadList, "threads", "", "thread counts, e.g. 2,4,8 or 2-8 (default: 2..PUs, all up to 8, then powers of two and the maximum)")
	f.StringVar(&algs, "algorithms", "", "comma-separated algorithms (default: all)")
	f.IntVar(&setsLimit, "sets-limit", configsets.DefaultLimit, "most placements measured per thread count")
	f.DurationVar(&budget, "budget", check.DefaultBudget, "time budget for the whole check")
	f.DurationVar(&sampleTime, "sample-time", 0, "target duration of one sample (default 200µs)")
	f.BoolVar(&asJSON, "json", false, "print the results file instead of the table")
	return cmd
}

// parseCounts reads "2,4,8" or "2-8".
func parseCounts(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 1 || b < a {
			return nil, fmt.Errorf("--threads %q: %q is not a thread count or range (want e.g. 2,4,8 or 2-8, counts >= 1)", s, part)
		}
		for t := a; t <= b; t++ {
			out = append(out, t)
		}
	}
	return out, nil
}

// progressPrinter reports progress as a redrawn bar on a terminal and as
// plain lines otherwise.
func progressPrinter(w io.Writer) func(check.Progress) {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return func(p check.Progress) {
		label := p.Label
		if label == "" {
			label = "set"
		}
		msg := fmt.Sprintf("round %d/%d: %d threads, placement %d/%d %s, %d algorithms; elapsed %s, about %s left",
			p.Round, p.Rounds, p.Threads, p.Set, p.Sets, label, p.Algorithms, p.Elapsed.Round(time.Second), p.Remaining.Round(time.Second))
		if !tty {
			fmt.Fprintf(w, "check: %s\n", msg)
			return
		}
		const width = 24
		filled := 0
		if p.Total > 0 {
			filled = width * p.Done / p.Total
		}
		fmt.Fprintf(w, "\r\033[K[%s%s] %d/%d %s", strings.Repeat("#", filled), strings.Repeat("-", width-filled), p.Done, p.Total, msg)
	}
}

func endProgress(w io.Writer) {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(w, "\r\033[K")
	}
}
