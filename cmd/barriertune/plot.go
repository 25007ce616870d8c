package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/barriertune/barriertune/cmd/internal/check"
	"github.com/barriertune/barriertune/cmd/internal/figure"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cmd/internal/outfile"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/text"
	"github.com/barriertune/barriertune/results"
)

// plotOptions are the plot command's flags and argument.
type plotOptions struct {
	global  *globalOptions
	out     string // .svg or .png
	path    string // results file; "" is the per-user default
	allowed string // --allowed: the CPUs each count's winner is chosen inside
}

func newPlotCmd(g *globalOptions) *cobra.Command {
	o := &plotOptions{global: g}
	cmd := &cobra.Command{
		Use:   "plot [-o FILE.svg|FILE.png] [--allowed CPULIST] [FILE]",
		Short: "Plot nanoseconds per episode against thread count for every algorithm",
		Long: `Plot a results file (default: the first file of the lookup order that
applies, as show finds it): nanoseconds per barrier episode against thread count, one curve
per algorithm (its best measured placement at each count), the winner of
each count ringed in black, and the core-to-core floors as dashed lines.
The ringed winner is the one Auto, show and export choose inside the
allowed CPUs (--allowed CPULIST; default: this process's allowed CPUs when
the file is this machine's, else the whole machine); a count with more
threads than allowed CPUs has no measured time there and is not ringed.
Every algorithm the file measured is drawn (one the check dropped early
is marked: its points have fewer samples) or named in the legend with why
it is not (rejected); thread counts above the file's CPUs, timed as
goroutines, are starred.
The axes turn logarithmic when the values span more than a factor of ten
(y) or the thread counts a factor of eight (x). The format follows the
extension of -o: .svg or .png.`,
		Example: `  barriertune plot -o barriers.svg
  barriertune plot -o barriers.png /etc/barriertune/results.json
  barriertune plot --allowed 0-3 -o job.svg`,
		Args: oneResultsFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.path = args[0]
			}
			return runPlot(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVarP(&o.out, "output", "o", "barriertune.svg", "output file: .svg or .png")
	cmd.Flags().StringVar(&o.allowed, "allowed", "", "ring the winners chosen inside these CPUs (`CPULIST`, e.g. 0-3,8; default: this process's allowed CPUs)")
	_ = cmd.MarkFlagFilename("output", "svg", "png")
	return cmd
}

// runPlot reads the results file and writes the plot.
func runPlot(_ context.Context, o *plotOptions, _, stderr io.Writer) error {
	if err := figure.Format(o.out); err != nil {
		return usageError(err)
	}
	if err := outfile.Check("-o", o.out); err != nil {
		return err
	}
	rs, err := openResults(o.global, o.path, o.allowed)
	if err != nil {
		return err
	}
	warnNotices(stderr, o.global, rs)
	warnOtherMachine(stderr, o.global, rs)
	o.global.verbosef(stderr, "plot: %s", rs.Summary())
	p, err := resultsPlot(rs.File, rs)
	if err != nil {
		return err
	}
	if err := figure.Save(p, o.out); err != nil {
		return err
	}
	if !o.global.quiet {
		if rs.File.HostChange != "" {
			fmt.Fprintf(stderr, "note: the host changed during the check: %s\n", rs.File.HostChange)
		}
		fmt.Fprintf(stderr, "wrote %s\n", o.out)
	}
	return nil
}

// warnOtherMachine warns, unless --quiet, when a results file given by
// name is another machine's (show, export and plot alike): its choices
// were measured there.
func warnOtherMachine(stderr io.Writer, g *globalOptions, rs *resultsSource) {
	if rs.Why != "given" || (g != nil && g.quiet) {
		return
	}
	topo, err := hwtree.FromSysfs("/")
	if err != nil {
		return
	}
	if why := rs.File.Machine.Mismatch(check.CurrentMachine(topo)); why != "" {
		for _, l := range wrap("warning: these results are from another machine: " + why) {
			fmt.Fprintln(stderr, l)
		}
	}
}

// ringed returns each count's winner: the file's best, or with rs the
// choice inside rs's allowed CPUs; a choice with no measured time there
// (more threads than allowed CPUs) is left out.
func ringed(f *results.File, rs *resultsSource) (plotter.XYs, error) {
	var winners plotter.XYs
	for _, t := range f.Threads {
		if t.Best == nil {
			continue
		}
		y := t.Best.MedianNs
		if rs != nil {
			sel, err := rs.sel.Select(t.Threads, rs.allowed)
			if err != nil {
				return nil, err
			}
			y = sel.MedianNs
		}
		if y > 0 {
			winners = append(winners, plotter.XY{X: float64(t.Threads), Y: y})
		}
	}
	return winners, nil
}

// resultsPlot draws a results file; with rs, each count's ringed winner
// is the choice inside rs's allowed CPUs (results.Selector.Select, the
// rule barriers.Auto, show and export follow), where it was measured.
func resultsPlot(f *results.File, rs *resultsSource) (*plot.Plot, error) {
	winners, err := ringed(f, rs)
	if err != nil {
		return nil, err
	}
	return figure.Results(f, winners)
}

// writeBenchPlot plots one bench run to path (.svg or .png).
func writeBenchPlot(path string, rs []measure.Result, floor *measure.PingPong) error {
	if err := figure.Format(path); err != nil {
		return err
	}
	p, err := benchPlot(rs, floor)
	if err != nil {
		return err
	}
	return figure.Save(p, path)
}

// benchPlot draws one bench run: ns per episode for each algorithm, the
// fastest ringed, the floor dashed. bench calls it for --plot FILE.
func benchPlot(rs []measure.Result, floor *measure.PingPong) (*plot.Plot, error) {
	if len(rs) == 0 {
		return nil, fmt.Errorf("nothing to plot")
	}
	sorted := byMedian(rs)
	return figure.Bench(fmt.Sprintf("%s on %s", text.Plural(sorted[0].Threads, "thread"), onCPUs(sorted[0].CPUs)), sorted, floor)
}
