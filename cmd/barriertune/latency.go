package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/latency"
	"github.com/barriertune/barriertune/measure"
)

type latencyOptions struct {
	from    string
	cpuList string
	samples int
	matrix  bool
	asJSON  bool
	src     sourceFlags
}

func newLatencyCmd() *cobra.Command {
	var o latencyOptions
	cmd := &cobra.Command{
		Use:   "latency",
		Short: "Measure (or read) the core-to-core latency matrix and summarise it per tree level",
		Long: `latency measures the one-way core-to-core latency (half a cache-line round
trip, the same definition as bench's floor) for every pair of this machine's
allowed CPUs (at most 64), or reads a matrix in the ../shared/latency CSV
format with --from. It prints the median per tree level (the sysfs tree for a
measured machine, the tree clustered from the latencies for --from), the
clustered tree's levels, and with --matrix the matrix.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			return runLatency(ctx, cmd.OutOrStdout(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.from, "from", "", "read the matrix from `FILE` (../shared/latency CSV) instead of measuring")
	f.StringVar(&o.cpuList, "cpus", "", "CPUs to measure, e.g. 0-15 (default: all allowed, at most 64)")
	f.IntVar(&o.samples, "samples", 0, "ping-pong samples per pair (default 21)")
	f.BoolVar(&o.matrix, "matrix", false, "print the matrix too")
	f.BoolVar(&o.asJSON, "json", false, "print {cpus, matrix, levels, clustered_levels} as JSON")
	o.src.register(f)
	return cmd
}

// latencyJSON is `latency --json`'s shape (issue 9); null marks pairs not measured.
type latencyJSON struct {
	CPUs            []int           `json:"cpus"`
	Matrix          [][]*float64    `json:"matrix"`
	Levels          []latency.Level `json:"levels"`
	ClusteredLevels []latency.Level `json:"clustered_levels"`
	Groups          int             `json:"clustered_groups"`
}

// loadMatrix reads --from or measures the given or allowed CPUs; it returns
// the sysfs tree too when measuring.
func loadMatrix(ctx context.Context, from, cpuList string, samples int, src sourceFlags) (*latency.Matrix, *hwtree.Topology, error) {
	if from != "" {
		fh, err := os.Open(from)
		if err != nil {
			return nil, nil, fmt.Errorf("--from: %w", err)
		}
		defer fh.Close()
		m, err := latency.ReadCSV(fh)
		if err != nil {
			return nil, nil, fmt.Errorf("--from %s: %w", from, err)
		}
		return m, nil, nil
	}
	topo, err := src.load()
	if err != nil {
		return nil, nil, err
	}
	cpus, err := parsePlacement(cpuList)
	if err != nil {
		return nil, nil, err
	}
	if cpus == nil {
		cpus = topo.CPUs()
		if len(cpus) > 64 {
			cpus = cpus[:64]
		}
	}
	m, err := latency.Measure(ctx, distinct(cpus), latency.Options{Measure: measure.Options{Samples: samples}})
	if err != nil {
		return nil, nil, err
	}
	return m, topo, nil
}

func runLatency(ctx context.Context, w io.Writer, o latencyOptions) error {
	m, topo, err := loadMatrix(ctx, o.from, o.cpuList, o.samples, o.src)
	if err != nil {
		return err
	}
	clustered, err := latency.Cluster(m)
	if err != nil {
		return err
	}
	out := latencyJSON{CPUs: m.CPUs, ClusteredLevels: latency.Levels(m, clustered), Groups: len(clustered.Objects(hwtree.Group))}
	if topo != nil {
		out.Levels = latency.Levels(m, topo)
	} else {
		out.Levels = out.ClusteredLevels
	}
	for _, row := range m.NS {
		r := make([]*float64, len(row))
		for j, v := range row {
			if !math.IsNaN(v) {
				v := v
				r[j] = &v
			}
		}
		out.Matrix = append(out.Matrix, r)
	}
	if o.asJSON {
		return writeJSON(w, out)
	}
	fmt.Fprintf(w, "%d CPUs\n%-12s %8s %10s\n", len(m.CPUs), "level", "pairs", "median_ns")
	for _, l := range out.Levels {
		fmt.Fprintf(w, "%-12s %8d %10.1f\n", l.Level, l.Pairs, l.MedianNs)
	}
	if topo != nil {
		fmt.Fprintf(w, "\nclustered from the latencies (%d groups):\n", out.Groups)
		for _, l := range out.ClusteredLevels {
			fmt.Fprintf(w, "%-12s %8d %10.1f\n", l.Level, l.Pairs, l.MedianNs)
		}
	}
	if o.matrix {
		fmt.Fprintln(w)
		for i, row := range m.NS {
			fmt.Fprintf(w, "%4d", m.CPUs[i])
			for _, v := range row {
				fmt.Fprintf(w, " %6.1f", v)
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}
