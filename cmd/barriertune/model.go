package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/barriertune/barriertune/latency"
	"github.com/barriertune/barriertune/model"
)

type modelOptions struct {
	latencyFile string
	measured    bool
	threads     int
	cpuList     string
	kind        string
	algorithm   string
	fanIn       int
	samples     int
	asJSON      bool
	src         sourceFlags
}

func newModelCmd() *cobra.Command {
	var o modelOptions
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Predict every barrier algorithm's episode from a latency matrix",
		Long: `model predicts the time of one barrier episode per algorithm from a latency
matrix: read with --latency FILE (../shared/latency CSV) or measured here with
--measured. With --threads N it predicts one thread count on the placement
--cpus (default: compact, the first N CPUs in tree order, wrapping around
when N exceeds them); without it, a table over every thread count. Models:
critical-path (the signal pattern over the matrix, nothing else) and default
(plus calibrated per-signal overhead, line contention and wake-ups; see
docs/model.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			return runModel(ctx, cmd.OutOrStdout(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.latencyFile, "latency", "", "latency matrix `FILE` in the ../shared/latency CSV format")
	f.BoolVar(&o.measured, "measured", false, "measure this machine's latency matrix first")
	f.IntVarP(&o.threads, "threads", "t", 0, "thread count (default: a table over every count)")
	f.StringVar(&o.cpuList, "cpus", "", "CPU of each thread in rank order (default: compact)")
	f.StringVar(&o.kind, "model", string(model.DefaultModel), "model: critical-path or default")
	f.StringVar(&o.algorithm, "algorithm", "all", "algorithm to predict, or all")
	f.IntVar(&o.fanIn, "fan-in", 0, "tree fan-in (default 4)")
	f.IntVar(&o.samples, "samples", 0, "ping-pong samples per pair with --measured (default 21)")
	f.BoolVar(&o.asJSON, "json", false, "print as JSON")
	o.src.register(f)
	return cmd
}

// modelJSON is `model --json`'s shape for one thread count (issue 9).
type modelJSON struct {
	Threads     int                `json:"threads"`
	CPUs        []int              `json:"cpus"`
	Model       string             `json:"model"`
	Predictions []model.Prediction `json:"predictions"`
}

func runModel(ctx context.Context, w io.Writer, o modelOptions) error {
	if (o.latencyFile == "") == !o.measured {
		return fmt.Errorf("give exactly one of --latency FILE and --measured")
	}
	kind := model.Kind(o.kind)
	if kind != model.DefaultModel && kind != model.CriticalPathModel {
		return fmt.Errorf("--model %q: unknown (accepted: %s, %s)", o.kind, model.CriticalPathModel, model.DefaultModel)
	}
	if o.threads < 0 || o.threads > model.MaxParticipants {
		return fmt.Errorf("--threads %d: accepted 1 to %d", o.threads, model.MaxParticipants)
	}
	m, topo, err := loadMatrix(ctx, o.latencyFile, "", o.samples, o.src)
	if err != nil {
		return err
	}
	// Compact order: the measured machine's tree order, else the tree
	// clustered from the matrix; only CPUs in the matrix.
	tree := topo
	if tree == nil {
		if tree, err = latency.Cluster(m); err != nil {
			return err
		}
	}
	in := map[int]bool{}
	for _, c := range m.CPUs {
		in[c] = true
	}
	var order []int
	for _, pu := range tree.PUs() {
		if in[pu.OSIndex] {
			order = append(order, pu.OSIndex)
		}
	}
	placement := func(n int) ([]int, error) {
		if o.cpuList != "" {
			cpus, err := parsePlacement(o.cpuList)
			if err != nil {
				return nil, err
			}
			if o.threads != 0 && len(cpus) != o.threads {
				return nil, fmt.Errorf("--cpus %q names %d CPUs for --threads %d; give one per thread", o.cpuList, len(cpus), o.threads)
			}
			return cpus, nil
		}
		cpus := make([]int, n)
		for i := range cpus {
			cpus[i] = order[i%len(order)]
		}
		return cpus, nil
	}
	predict := func(cpus []int) ([]model.Prediction, error) {
		if o.algorithm != "all" {
			v, err := model.Predict(kind, o.algorithm, cpus, m, o.fanIn)
			return []model.Prediction{{Algorithm: o.algorithm, PredictedNs: v}}, err
		}
		return model.PredictAll(kind, cpus, m, o.fanIn)
	}
	counts := []int{o.threads}
	if o.threads == 0 {
		counts = nil
		for n := 2; n <= len(order); n++ {
			counts = append(counts, n)
		}
	}
	var all []modelJSON
	for _, n := range counts {
		cpus, err := placement(n)
		if err != nil {
			return err
		}
		p, err := predict(cpus)
		if err != nil {
			return err
		}
		all = append(all, modelJSON{Threads: len(cpus), CPUs: cpus, Model: string(kind), Predictions: p})
	}
	if o.asJSON {
		if len(all) == 1 {
			return writeJSON(w, all[0])
		}
		return writeJSON(w, map[string]any{"model": string(kind), "thread_counts": all})
	}
	for _, r := range all {
		fmt.Fprintf(w, "%d threads (%s model), fastest first:", r.Threads, r.Model)
		for _, p := range r.Predictions {
			fmt.Fprintf(w, " %s %.0f", p.Algorithm, p.PredictedNs)
		}
		fmt.Fprintln(w, " ns")
	}
	return nil
}
