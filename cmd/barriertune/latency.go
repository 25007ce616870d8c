package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/barriertune/barriertune/cmd/internal/latency"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cmd/internal/outfile"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/text"
)

// maxLatencySamples bounds --samples: beyond it a 64-CPU matrix takes hours.
const maxLatencySamples = 100000

// maxLatencyPairs bounds --max-pairs (and, with --per-level, the
// representative pairs measured beyond 64 CPUs).
const maxLatencyPairs = 100000

type latencyOptions struct {
	// from reads a matrix file (--from) instead of measuring cpuList
	// (--cpus; empty: every allowed CPU).
	from    string
	cpuList string
	measuring
	// matrix prints the whole matrix (--matrix), asJSON as JSON (--json);
	// output writes it to a file (-o: CSV, or JSON for .json).
	matrix, asJSON bool
	output         string
}

// measuring is how latency and model --measured measure a matrix: the
// ping-pong samples per pair, the representative pairs beyond 64 CPUs, and
// the tree to measure on.
type measuring struct {
	samples, perLevel, maxPairs int
	src                         sourceFlags
	// pingPong replaces the measurement in tests (nil: measure here).
	pingPong latency.PingPongFunc
	// progress, when set, is told of each pair measured.
	progress func(done, total int)
}

// defaultMeasuring is 21 samples per pair and latency's defaults beyond 64
// CPUs.
func defaultMeasuring() measuring {
	return measuring{samples: 21, perLevel: latency.DefaultPerLevel, maxPairs: latency.DefaultMaxPairs}
}

// register adds --samples, --per-level, --max-pairs and the topology
// source flags; when says when they apply ("" always).
func (m *measuring) register(f *pflag.FlagSet, when string) {
	f.IntVar(&m.samples, "samples", m.samples, "ping-pong samples per pair"+when+" (1 to 100000)")
	f.IntVar(&m.perLevel, "per-level", m.perLevel, "beyond 64 CPUs"+when+": representative pairs measured per tree level (1 to 100000)")
	f.IntVar(&m.maxPairs, "max-pairs", m.maxPairs, "beyond 64 CPUs"+when+": representative pairs measured in all (1 to 100000)")
	m.src.register(f)
}

func newLatencyCmd(g *globalOptions) *cobra.Command {
	o := latencyOptions{measuring: defaultMeasuring()}
	cmd := &cobra.Command{
		Use:   "latency",
		Short: "Measure (or read) the core-to-core latency matrix and summarise it per tree level",
		Long: `latency measures the one-way core-to-core latency (half a cache-line round
trip, the same definition as bench's floor) between this machine's allowed
CPUs: every pair up to 64 CPUs; beyond that representative pairs per tree
level (--per-level pairs spread over the level's objects, --max-pairs in all:
pairs under symmetric subtrees share a latency, and the few measured
spot-check each other). With --from it reads a matrix instead: the CSV
format of docs/model.md ("Latency matrix files"), which -o FILE writes, or
what --json prints. -o FILE.json writes the --json object. It prints per level of the tree (the sysfs tree for a
measured machine; for --from the tree given by a topology source flag, else
the tree clustered from the latencies) the pairs
measured, their median and their spread (slowest over fastest pair), the
clustered tree's levels, where the latencies and the tree disagree (two L3s
that behave as one; a level with two kinds of link), and with --matrix the
matrix.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := notifySignals(cmd.Context())
			defer stop()
			line := newProgressLine(cmd.ErrOrStderr(), g, "latency")
			defer line.Clear()
			o.progress = func(done, total int) { // about 20 lines where they are not redrawn
				if line.Redrawn() || done == total || done*20/total != (done-1)*20/total {
					line.Update(fmt.Sprintf("%d/%s measured", done, text.Plural(total, "pair")), float64(done)/float64(total))
				}
			}
			return runLatency(ctx, &o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.from, "from", "", "read the matrix from `FILE` (CSV as -o writes it, or latency --json output; docs/model.md) instead of measuring")
	f.StringVarP(&o.output, "output", "o", "", "also write the matrix to `FILE`: CSV (docs/model.md), or the --json object for FILE.json; model --latency and latency --from read both")
	f.StringVar(&o.cpuList, "cpus", "", "CPUs to measure, e.g. 0-15 (default: all allowed)")
	f.BoolVar(&o.matrix, "matrix", false, "print the matrix too")
	f.BoolVar(&o.asJSON, "json", false, "print {cpus, matrix, levels, disagreements, clustered_levels} as JSON")
	o.measuring.register(f, "")
	return cmd
}

// matrixSource says where loadMatrix gets the matrix.
type matrixSource struct {
	from, cpuList string
	fromFlag      string // the flag that gave from, for messages ("" names the file alone)
	measuring
}

// loadMatrix reads --from or measures the given or allowed CPUs (every
// pair up to 64, else representative pairs per level, the others NaN); it
// returns the tree too when measuring, or when --from comes with a
// topology source (--sysfs-root, --synthetic, --xml, --topology).
func loadMatrix(ctx context.Context, s matrixSource) (*latency.Matrix, *hwtree.Topology, error) {
	if s.samples < 1 || s.samples > maxLatencySamples {
		return nil, nil, usageErrorf("--samples %d: want 1 to %d ping-pong samples per pair", s.samples, maxLatencySamples)
	}
	if s.perLevel < 1 || s.perLevel > maxLatencyPairs {
		return nil, nil, usageErrorf("--per-level %d: want 1 to %d pairs per level", s.perLevel, maxLatencyPairs)
	}
	if s.maxPairs < 1 || s.maxPairs > maxLatencyPairs {
		return nil, nil, usageErrorf("--max-pairs %d: want 1 to %d pairs", s.maxPairs, maxLatencyPairs)
	}
	if s.from != "" && s.cpuList != "" {
		return nil, nil, usageErrorf("--cpus %q with %s: the matrix read names its own CPUs; drop --cpus, or measure without %s", elided(s.cpuList), s.fromFlag, s.fromFlag)
	}
	if s.from != "" {
		m, err := latency.ReadFile(s.from)
		if err != nil {
			return nil, nil, latency.NotAMatrix(s.fromFlag, s.from, err)
		}
		if s.src.live() {
			return m, nil, nil
		}
		// A tree given with the matrix: compare them.
		topo, err := s.src.load()
		if err != nil {
			return nil, nil, err
		}
		if err := m.Covers(topo); err != nil {
			return nil, nil, fmt.Errorf("%s %w; give a tree of the matrix's machine", strings.TrimSpace(s.fromFlag+" "+s.from), err)
		}
		return m, topo, nil
	}
	topo, err := s.src.load()
	if err != nil {
		return nil, nil, err
	}
	cpus, err := parseCPUs("--cpus", s.cpuList, false, "")
	if err != nil {
		return nil, nil, err
	}
	if cpus == nil {
		cpus = topo.CPUs()
		if len(cpus) < 2 {
			return nil, nil, fmt.Errorf("latency: this process may run on %s only (allowed: %s); measuring needs two, a pair: run it where two CPUs are allowed (outside taskset, or a batch step with two or more)", text.Plural(len(cpus), "CPU"), topo.Allowed())
		}
	}
	// A CPU outside the allowed set is a usage error, as for bench --cpus.
	for _, c := range cpus {
		if !topo.Allowed().Has(c) {
			whose := "for this process"
			if !s.src.live() {
				whose = "in the topology given"
			}
			return nil, nil, usageErrorf("--cpus %q: CPU %d is not allowed %s (allowed: %s)", elided(s.cpuList), c, whose, topo.Allowed())
		}
	}
	opts := latency.Options{Measure: measure.Options{Samples: s.samples}, PingPong: s.pingPong, PerLevel: s.perLevel, MaxPairs: s.maxPairs, Progress: s.progress}
	m, err := latency.MeasureTree(ctx, topo, cpuset.Placement(cpus).CPUs(), opts)
	if se := interruption(ctx); se != nil {
		return nil, nil, se
	}
	if err != nil {
		return nil, nil, err
	}
	return m, topo, nil
}

func runLatency(ctx context.Context, o *latencyOptions, w, stderr io.Writer) error {
	if o.output != "" { // before measuring; WriteFile checks again
		if err := outfile.Check("-o", o.output); err != nil {
			return err
		}
	}
	m, topo, err := loadMatrix(ctx, matrixSource{from: o.from, fromFlag: "--from", cpuList: o.cpuList, measuring: o.measuring})
	if err != nil {
		return err
	}
	out, clustered, err := latency.NewReport(m, topo)
	if err != nil {
		return err
	}
	if o.output != "" {
		if err := latency.WriteFile(o.output, m, out); err != nil {
			return fmt.Errorf("-o: %w", err)
		}
	}
	if o.asJSON {
		return writeJSON(w, out)
	}
	all := len(m.CPUs) * (len(m.CPUs) - 1) / 2
	how := "measured"
	if o.from != "" {
		how = "read from " + o.from
	}
	fmt.Fprintf(w, "%s, %d of %s %s\n", text.Plural(len(m.CPUs), "CPU"), out.PairsMeasured, text.Plural(all, "pair"), how)
	writeLevels(w, out.Levels)
	if topo != nil {
		if len(out.Disagreements) == 0 {
			fmt.Fprintln(w, "\nthe latencies agree with the tree's levels")
		} else {
			fmt.Fprintln(w, "\nwhere the latencies and the tree disagree:")
			for _, d := range out.Disagreements {
				fmt.Fprintf(w, "  %s (%s): %s\n", d.Level, d.Kind, d.Detail)
			}
		}
		syn, err := clustered.Synthetic()
		if err != nil {
			syn = "asymmetric"
		}
		fmt.Fprintf(w, "\nclustered from the latencies (%s):\n", syn)
		writeLevels(w, out.ClusteredLevels)
	}
	if o.matrix {
		writeMatrix(w, m)
	}
	return nil
}

// matrixColumns is how many CPUs' columns one block of the printed matrix
// holds, so that its lines stay under 160 characters.
const matrixColumns = 20

// writeMatrix prints the matrix in blocks of matrixColumns columns, each
// with a header naming its CPUs; a machine of up to 20 CPUs is one block.
func writeMatrix(w io.Writer, m *latency.Matrix) {
	for lo := 0; lo < len(m.CPUs); lo += matrixColumns {
		hi := min(lo+matrixColumns, len(m.CPUs))
		fmt.Fprintln(w)
		if len(m.CPUs) > matrixColumns {
			fmt.Fprintf(w, "columns: %s\n", onCPUs(m.CPUs[lo:hi]))
		}
		fmt.Fprintf(w, "%4s", "")
		for _, c := range m.CPUs[lo:hi] {
			fmt.Fprintf(w, " %6d", c)
		}
		fmt.Fprintln(w)
		for i, row := range m.NS {
			fmt.Fprintf(w, "%4d", m.CPUs[i])
			for _, v := range row[lo:hi] {
				fmt.Fprintf(w, " %6.1f", v)
			}
			fmt.Fprintln(w)
		}
	}
}

func writeLevels(w io.Writer, levels []latency.Level) {
	fmt.Fprintf(w, "%-12s %8s %10s %8s %8s %7s\n", "level", "pairs", "median_ns", "min_ns", "max_ns", "spread")
	for _, l := range levels {
		fmt.Fprintf(w, "%-12s %8d %10.1f %8.1f %8.1f %6.2fx\n", l.Level, l.Pairs, l.MedianNs, l.MinNs, l.MaxNs, l.Spread())
	}
}
