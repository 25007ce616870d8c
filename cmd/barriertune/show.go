package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/barriertune/barriertune/check"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

// showOptions are the flags and argument of `barriertune show`.
type showOptions struct {
	global *globalOptions
	path   string // the results file; empty: the per-user default
	json   bool
}

func newShowCmd(g *globalOptions) *cobra.Command {
	opts := &showOptions{global: g}
	cmd := &cobra.Command{
		Use:   "show [FILE]",
		Short: "Show the winners of a results file",
		Long: `Show the table of winners of a results file (default: the per-user file
that ` + "`barriertune check`" + ` writes, $BARRIERTUNE_RESULTS when set): for each thread count the best algorithm,
its placement, nanoseconds per episode, the ratio to the core-to-core floor,
the runner-up and its margin, and the robust choice for callers that cannot
pin. --json prints the validated file.`,
		Example: `  barriertune show
  barriertune show /etc/barriertune/results.json --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.path = args[0]
			}
			return runShow(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the results file as JSON")
	return cmd
}

// runShow prints the winners of a results file.
func runShow(_ context.Context, opts *showOptions, w, stderr io.Writer) error {
	path := opts.path
	if path == "" {
		var err error
		if path, err = defaultResultsPath(); err != nil {
			return err
		}
	}
	f, err := results.Read(path)
	if err != nil {
		return err
	}
	opts.global.verbosef(stderr, "show: %s", path)
	if opts.json {
		return writeJSON(w, f)
	}
	if topo, err := hwtree.Live(); err == nil && !opts.global.quiet {
		if why := f.Machine.Mismatch(check.CurrentMachine(topo)); why != "" {
			fmt.Fprintf(stderr, "warning: these results are from another machine: %s\n", why)
		}
	}
	return printWinners(w, f)
}

// printWinners writes the table of winners.
func printWinners(w io.Writer, f *results.File) error {
	fmt.Fprintf(w, "%s on %s (%s), CPUs %s, %s\n", f.Tool.Name, f.Machine.CPU.Name, f.Machine.Topology, f.Machine.AllowedCPUs, f.Time.Format("2006-01-02 15:04 MST"))
	for _, fl := range f.Floor {
		fmt.Fprintf(w, "floor %-9s CPUs %d,%d: %.1f ns one-way\n", fl.Level, fl.CPUs[0], fl.CPUs[1], fl.MedianNs)
	}
	if f.Partial {
		fmt.Fprintln(w, "PARTIAL: the check stopped early; `barriertune check --resume FILE` continues it")
	}
	for _, c := range f.Cuts {
		fmt.Fprintf(w, "cut: %s\n", c)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var tieRules []string // each kind of tie in the table, once
	fmt.Fprintln(tw, "threads\tbest\tpolicy\tplacement\tns/episode\tx floor\trunner-up\tmargin\trobust")
	for _, t := range f.Threads {
		if t.Best == nil {
			fmt.Fprintf(tw, "%d\t(none)\t\t\t\t\t\t\t\n", t.Threads)
			continue
		}
		b := t.Best
		ratio := "-"
		if fl := floorFor(f.Floor, b.CPUs); fl > 0 {
			ratio = fmt.Sprintf("%.2f", b.MedianNs/fl)
		}
		runner, margin := "-", "-"
		if b.RunnerUp != "" {
			runner, margin = b.RunnerUp, fmt.Sprintf("%+.1f%%", b.MarginPct)
			if b.Tie {
				margin += " tie"
			}
		}
		rob := "-"
		if t.Robust != nil {
			rob = fmt.Sprintf("%s (worst %.0f ns)", t.Robust.Algorithm, t.Robust.WorstMedianNs)
		}
		place := joinInts(b.CPUs)
		if b.Label != "" {
			place = b.Label + " " + place
		}
		incomplete := ""
		if !t.Complete {
			incomplete = " (incomplete)"
		}
		fmt.Fprintf(tw, "%d%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\n", t.Threads, incomplete, b.Describe(), b.Policy, place, b.MedianNs, ratio, runner, margin, rob)
		if b.Tie && !slices.Contains(tieRules, b.TieRule) {
			tieRules = append(tieRules, b.TieRule)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(tieRules) > 0 {
		fmt.Fprintln(w)
	}
	for _, r := range tieRules {
		if _, err := fmt.Fprintf(w, "tie %s\n", r); err != nil {
			return err
		}
	}
	return nil
}

// floorFor is the floor a placement cannot beat: the slowest measured
// level whose pair lies inside it, else the fastest floor.
func floorFor(floors []results.Floor, cpus []int) float64 {
	inside, fastest := 0.0, math.Inf(1)
	for _, fl := range floors {
		fastest = min(fastest, fl.MedianNs)
		if slices.Contains(cpus, fl.CPUs[0]) && slices.Contains(cpus, fl.CPUs[1]) {
			inside = max(inside, fl.MedianNs)
		}
	}
	if inside > 0 {
		return inside
	}
	if math.IsInf(fastest, 1) {
		return 0
	}
	return fastest
}
