package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/barriertune/barriertune/barriers"
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
	perLevel    int
	maxPairs    int
	asJSON      bool
	src         sourceFlags
	// pingPong replaces the measurement in tests (nil: measure here).
	pingPong latency.PingPongFunc
}

func newModelCmd() *cobra.Command {
	o := modelOptions{samples: 21, perLevel: latency.DefaultPerLevel, maxPairs: latency.DefaultMaxPairs}
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Predict every barrier algorithm's episode from a latency matrix",
		Long: `model predicts the time of one barrier episode per algorithm from a latency
matrix: read with --latency FILE (../shared/latency CSV) or measured here with
--measured. With --threads N it predicts one thread count on the placement
--cpus (default: compact, the first N CPUs in tree order, wrapping around
when N exceeds them); without it, a table over every thread count 2..CPUs
(rows thread counts, columns algorithms, each row's fastest marked). The
hybrid is composed greedily per level of the tree (the measured machine's, or
the one clustered from the matrix) and printed with its composition. Models:
critical-path (the signal pattern over the matrix, nothing else) and default
(plus calibrated per-signal overhead, line contention and wake-ups; see
docs/model.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := notifySignals(cmd.Context())
			defer stop()
			if cmd.Flags().Changed("threads") && o.threads < 1 {
				return usageErrorf("--threads %d: accepted 1 to %d (leave it out for a table over every count)", o.threads, model.MaxParticipants)
			}
			return runModel(ctx, cmd.OutOrStdout(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.latencyFile, "latency", "", "latency matrix `FILE` in the ../shared/latency CSV format")
	f.BoolVar(&o.measured, "measured", false, "measure this machine's latency matrix first")
	f.IntVarP(&o.threads, "threads", "t", 0, "thread count (default: a table over every count)")
	f.StringVar(&o.cpuList, "cpus", "", "CPU of each thread in rank order (default: compact)")
	f.StringVar(&o.kind, "model", string(model.DefaultModel), "model: critical-path or default")
	f.StringVar(&o.algorithm, "algorithm", "all", "algorithm to predict (hybrid: the greedy per-level composition), or all")
	f.IntVar(&o.fanIn, "fan-in", model.DefaultFanIn, "tree fan-in, 2 to 64")
	f.IntVar(&o.samples, "samples", o.samples, "ping-pong samples per pair with --measured (1 to 100000)")
	f.IntVar(&o.perLevel, "per-level", o.perLevel, "with --measured beyond 64 CPUs: representative pairs per tree level (1 to 100000)")
	f.IntVar(&o.maxPairs, "max-pairs", o.maxPairs, "with --measured beyond 64 CPUs: representative pairs in all (1 to 100000)")
	f.BoolVar(&o.asJSON, "json", false, "print as JSON")
	o.src.register(f)
	registerCompletions(cmd, map[string][]string{
		"model":     {string(model.CriticalPathModel), string(model.DefaultModel)},
		"algorithm": append(barriers.Names(), "all"),
	})
	return cmd
}

// modelPrediction is one algorithm's prediction; Composition is the
// hybrid's (its levels, or "flat:ALG" where no level pays and it
// degenerates to the best flat algorithm).
type modelPrediction struct {
	Algorithm   string  `json:"algorithm"`
	PredictedNs float64 `json:"predicted_ns"`
	Composition string  `json:"composition,omitempty"`
}

// modelJSON is `model --json`'s shape for one thread count (issue 9).
type modelJSON struct {
	Threads     int               `json:"threads"`
	CPUs        []int             `json:"cpus"`
	Model       string            `json:"model"`
	Predictions []modelPrediction `json:"predictions"`
}

func runModel(ctx context.Context, w io.Writer, o modelOptions) error {
	if (o.latencyFile == "") == !o.measured {
		return usageErrorf("give exactly one of --latency FILE and --measured")
	}
	kind := model.Kind(o.kind)
	if kind != model.DefaultModel && kind != model.CriticalPathModel {
		return usageErrorf("--model %q: unknown (accepted: %s, %s)", o.kind, model.CriticalPathModel, model.DefaultModel)
	}
	if o.threads < 0 || o.threads > model.MaxParticipants {
		return usageErrorf("--threads %d: accepted 1 to %d", o.threads, model.MaxParticipants)
	}
	if o.fanIn < 2 || o.fanIn > 64 {
		return usageErrorf("--fan-in %d: accepted 2 to 64", o.fanIn)
	}
	if o.algorithm != "all" && o.algorithm != "hybrid" && !slices.Contains(model.Algorithms(), o.algorithm) {
		return usageErrorf("--algorithm %q: unknown (accepted: all, hybrid, %s)", o.algorithm, strings.Join(model.Algorithms(), ", "))
	}
	m, topo, err := loadMatrix(ctx, matrixSource{from: o.latencyFile, samples: o.samples, perLevel: o.perLevel, maxPairs: o.maxPairs, src: o.src, pingPong: o.pingPong})
	if err != nil {
		return err
	}
	// Compact order: the measured machine's tree order, else the tree
	// clustered from the matrix; only CPUs in the matrix. Pairs not
	// measured (beyond 64 CPUs) take their level's median.
	tree := topo
	if tree == nil {
		if tree, err = latency.Cluster(m); err != nil {
			return err
		}
	} else {
		m = latency.FillByLevel(m, topo)
	}
	if err := m.Complete(); err != nil {
		return err
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
	var fixed []int
	if o.cpuList != "" {
		if fixed, err = parseCPUs("--cpus", o.cpuList, true); err != nil {
			return err
		}
		if o.threads != 0 && len(fixed) != o.threads {
			return usageErrorf("--cpus %q names %d CPUs for --threads %d; give one per thread", o.cpuList, len(fixed), o.threads)
		}
		for _, c := range fixed {
			if !in[c] {
				return usageErrorf("--cpus %q: CPU %d is not in the matrix (CPUs 0..%d)", o.cpuList, c, len(m.CPUs)-1)
			}
		}
	}
	placement := func(n int) []int {
		if fixed != nil {
			return fixed
		}
		cpus := make([]int, n)
		for i := range cpus {
			cpus[i] = order[i%len(order)]
		}
		return cpus
	}
	predict := func(cpus []int) ([]modelPrediction, error) {
		var out []modelPrediction
		if o.algorithm != "hybrid" {
			var ps []model.Prediction
			if o.algorithm == "all" {
				ps, err = model.PredictAll(kind, cpus, m, o.fanIn)
			} else {
				var v float64
				v, err = model.Predict(kind, o.algorithm, cpus, m, o.fanIn)
				ps = []model.Prediction{{Algorithm: o.algorithm, PredictedNs: v}}
			}
			if err != nil {
				return nil, err
			}
			for _, p := range ps {
				out = append(out, modelPrediction{Algorithm: p.Algorithm, PredictedNs: p.PredictedNs})
			}
		}
		if o.algorithm == "all" || o.algorithm == "hybrid" {
			comp, ns, err := model.HybridFor(kind, tree, cpus, m)
			if err != nil {
				return nil, fmt.Errorf("hybrid on CPUs %v: %w", cpus, err)
			}
			out = append(out, modelPrediction{Algorithm: "hybrid", PredictedNs: ns, Composition: comp.String()})
		}
		slices.SortStableFunc(out, func(a, b modelPrediction) int { return cmp.Compare(a.PredictedNs, b.PredictedNs) })
		return out, nil
	}
	counts := []int{o.threads}
	switch {
	case o.threads == 0 && fixed != nil:
		counts = []int{len(fixed)}
	case o.threads == 0:
		counts = nil
		for n := 2; n <= len(order); n++ {
			counts = append(counts, n)
		}
	}
	var all []modelJSON
	for _, n := range counts {
		if err := ctx.Err(); err != nil {
			return interruption(ctx)
		}
		cpus := placement(n)
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
	if len(all) == 1 {
		r := all[0]
		fmt.Fprintf(w, "%d threads on CPUs %s (%s model), predicted, fastest first:\n", r.Threads, cpuList(r.CPUs), r.Model)
		for _, p := range r.Predictions {
			fmt.Fprintf(w, "  %-16s %10.1f ns  %s\n", p.Algorithm, p.PredictedNs, p.Composition)
		}
		return nil
	}
	writeModelTable(w, all)
	return nil
}

// writeModelTable prints one row per thread count and one column per
// algorithm (predicted ns), the row's fastest marked with *, and the
// hybrid's composition last.
func writeModelTable(w io.Writer, all []modelJSON) {
	var algs []string
	for _, p := range all[0].Predictions {
		algs = append(algs, p.Algorithm)
	}
	slices.SortStableFunc(algs, func(a, b string) int { return cmp.Compare(algIndex(a), algIndex(b)) })
	fmt.Fprintf(w, "predicted ns per episode (%s model, compact placement); * marks each row's fastest\n", all[0].Model)
	fmt.Fprintf(w, "%7s", "threads")
	for _, a := range algs {
		fmt.Fprintf(w, " %*s", colWidth(a), a)
	}
	fmt.Fprintln(w, "  hybrid composition")
	for _, r := range all {
		ns := map[string]float64{}
		comp := ""
		for _, p := range r.Predictions {
			ns[p.Algorithm] = p.PredictedNs
			if p.Algorithm == "hybrid" {
				comp = p.Composition
			}
		}
		best := r.Predictions[0].PredictedNs
		fmt.Fprintf(w, "%7d", r.Threads)
		for _, a := range algs {
			mark := " "
			if ns[a] == best {
				mark = "*"
			}
			fmt.Fprintf(w, " %*.0f%s", colWidth(a)-1, ns[a], mark)
		}
		fmt.Fprintf(w, "  %s\n", comp)
	}
}

func colWidth(alg string) int { return max(len(alg), 7) }

// algIndex orders the table's columns: the model's catalog order, the
// hybrid last.
func algIndex(a string) int {
	if i := slices.Index(model.Algorithms(), a); i >= 0 {
		return i
	}
	return len(model.Algorithms())
}

// cpuList writes cpus as a short list ("0-3,8").
func cpuList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", cpus[i], cpus[j])
		} else {
			fmt.Fprintf(&b, "%d", cpus[i])
		}
		i = j + 1
	}
	return b.String()
}
