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
	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cmd/internal/check"
	"github.com/barriertune/barriertune/cmd/internal/latency"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/internal/text"
	"github.com/barriertune/barriertune/results"
)

type modelOptions struct {
	// latencyFile is the matrix to predict on (--latency), else it is
	// measured here (--measured).
	latencyFile string
	measured    bool
	measuring
	// threads and cpuList: one thread count on a given placement (--threads,
	// --cpus), else every count.
	threads int
	cpuList string
	// kind, algorithm and fanIn choose the model and the candidates.
	kind, algorithm string
	fanIn           int
	asJSON          bool
	// fromResults predicts with a check's fitted constants (--from-results).
	fromResults string
	// global gives the lookup of this machine's file (globalOptions.finder).
	global *globalOptions
}

func newModelCmd(g *globalOptions) *cobra.Command {
	o := modelOptions{measuring: defaultMeasuring(), global: g}
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Predict every barrier algorithm's episode from a latency matrix",
		Long: `model predicts the time of one barrier episode per algorithm from a latency
matrix: read with --latency FILE (a CSV or latency --json file; docs/model.md,
"Latency matrix files", describes both) or measured here with
--measured. With --threads N it predicts one thread count on the placement
--cpus (default: compact, the first N CPUs in tree order, wrapping around
when N exceeds them); without it, a table over every thread count 2..CPUs
(rows thread counts, columns algorithms, each row's fastest marked). The
hybrid is composed greedily per level of the tree (the measured machine's, or
the one clustered from the matrix) and printed with its composition. Models:
critical-path (the signal pattern over the matrix, nothing else) and default
(plus calibrated per-signal overhead, line contention and wake-ups; see
docs/model.md). The default model's constants are the ones the check fitted
in the results FILE --from-results names; with --measured and no
--from-results, those of this machine's results file (the lookup
barriers.Auto uses) when it records a fit; else, or with --from-results
none, the defaults. The text output's last line says which and how far they
were from the measurements they were fitted to.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := notifySignals(cmd.Context())
			defer stop()
			if cmd.Flags().Changed("threads") && o.threads < 1 {
				return usageErrorf("--threads %d: accepted 1 to %d (leave it out for a table over every count)", o.threads, barriers.MaxParticipants)
			}
			return runModel(ctx, &o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.latencyFile, "latency", "", "latency matrix `FILE`: CSV, or latency --json output (docs/model.md, Latency matrix files)")
	f.BoolVar(&o.measured, "measured", false, "measure this machine's latency matrix first")
	f.IntVarP(&o.threads, "threads", "t", 0, "thread count (default: a table over every count)")
	f.StringVar(&o.cpuList, "cpus", "", "CPU of each thread in rank order (default: compact)")
	f.StringVar(&o.kind, "model", string(model.DefaultModel), "model: critical-path or default")
	f.StringVar(&o.algorithm, "algorithm", "all", "algorithm to predict (hybrid: the greedy per-level composition), or all")
	f.IntVar(&o.fanIn, "fan-in", model.DefaultFanIn, "tree fan-in, 2 to 64")
	f.BoolVar(&o.asJSON, "json", false, "print as JSON")
	f.StringVar(&o.fromResults, "from-results", "", "predict with the model constants the check calibrated in the results `FILE`, or none for the defaults (default: with --measured, this machine's results file's, else the defaults)")
	o.measuring.register(f, " with --measured")
	registerCompletions(cmd, map[string][]string{
		"model":     {string(model.CriticalPathModel), string(model.DefaultModel)},
		"algorithm": append(catalog.Names(), "all"),
	})
	return cmd
}

func runModel(ctx context.Context, o *modelOptions, w, stderr io.Writer) error {
	if (o.latencyFile == "") == !o.measured {
		return usageErrorf("give exactly one of --latency FILE and --measured")
	}
	kind := model.Kind(o.kind)
	if err := kind.Check(); err != nil {
		return usageErrorf("--model: %v", err)
	}
	if o.threads < 0 || o.threads > barriers.MaxParticipants {
		return usageErrorf("--threads %d: accepted 1 to %d", o.threads, barriers.MaxParticipants)
	}
	if o.fanIn < 2 || o.fanIn > 64 {
		return usageErrorf("--fan-in %d: accepted 2 to 64", o.fanIn)
	}
	if o.algorithm != "all" && o.algorithm != algname.Hybrid && !slices.Contains(model.Algorithms(), o.algorithm) {
		return usageErrorf("--algorithm %q: unknown (accepted: all, hybrid, %s)", o.algorithm, strings.Join(model.Algorithms(), ", "))
	}
	prm, constants := model.DefaultParams(), model.DefaultsProvenance
	switch { // read before anything is measured
	case o.fromResults == "none":
	case o.fromResults != "":
		f, err := results.Read(o.fromResults)
		if err != nil {
			return fmt.Errorf("--from-results: %w", err)
		}
		prm, constants = check.ParamsFrom(f.Calibration), calibrationSummary(f.Calibration, o.fromResults)
	case o.measured:
		if f, path := thisMachinesFit(o.global); f != nil {
			prm, constants = check.ParamsFrom(f.Calibration), "this machine's results file: "+calibrationSummary(f.Calibration, path)
		}
	}
	var fixed []int
	if o.cpuList != "" { // the list's syntax before anything is measured
		var err error
		if fixed, err = parseCPUs("--cpus", o.cpuList, true, ""); err != nil {
			return err
		}
	}
	m, topo, err := loadMatrix(ctx, matrixSource{from: o.latencyFile, measuring: o.measuring})
	if err != nil {
		return err
	}
	// Compact order on the measured machine's tree, else on the tree
	// clustered from the matrix; pairs not measured (beyond 64 CPUs) take
	// their level's median.
	m, tree, err := latency.Completed(m, topo)
	if err != nil {
		return err
	}
	if o.cpuList != "" {
		if o.threads != 0 && len(fixed) != o.threads {
			return usageErrorf("--cpus %q names %s for --threads %d; give one per thread", text.Elide(o.cpuList, text.MaxValue), text.Plural(len(fixed), "CPU"), o.threads)
		}
		for _, c := range fixed {
			if !slices.Contains(m.CPUs, c) {
				return usageErrorf("--cpus %q: CPU %d is not in the matrix (CPUs %s)", text.Elide(o.cpuList, text.MaxValue), c, cpuList(m.CPUs))
			}
		}
	}
	all, err := model.PredictTable(ctx, m, tree, model.CompactOrder(tree, m.CPUs), model.TableOptions{
		Kind: kind, Algorithm: o.algorithm, FanIn: o.fanIn, Threads: o.threads, CPUs: fixed, Params: &prm})
	if err != nil {
		if ctx.Err() != nil {
			return interruption(ctx)
		}
		return err
	}
	if o.asJSON {
		if len(all) == 1 {
			return writeJSON(w, all[0])
		}
		return writeJSON(w, map[string]any{"model": string(kind), "thread_counts": all})
	}
	if len(all) == 1 {
		r := all[0]
		fmt.Fprintf(w, "%s on CPUs %s (%s model), predicted, fastest first:\n", text.Plural(r.Threads, "thread"), cpuList(r.CPUs), r.Model)
		for _, p := range r.Predictions {
			fmt.Fprintf(w, "  %-16s %10.1f ns  %s\n", p.Algorithm, p.PredictedNs, p.Composition)
		}
	} else {
		writeModelTable(w, all)
	}
	if kind == model.DefaultModel {
		writeWrapped(w, "constants: "+constants)
	}
	return nil
}

// writeWrapped writes s in lines under 160 characters, broken at spaces,
// the continuations indented.
func writeWrapped(w io.Writer, s string) {
	for _, l := range text.Wrap(s, 159, "  ", 0) {
		fmt.Fprintln(w, l)
	}
}

// thisMachinesFit is this machine's results file (the lookup
// barriers.Auto uses) when it applies here, was measured and records a
// fit; nil otherwise.
func thisMachinesFit(g *globalOptions) (*results.File, string) {
	fd, err := g.finder()
	if err != nil {
		return nil, ""
	}
	found, err := fd.Find()
	if err != nil || found.Warning != "" || found.File.Simulated || found.File.Calibration == nil || len(found.File.Calibration.Residuals) == 0 {
		return nil, ""
	}
	return found.File, found.Path
}

// calibrationSummary says which constants a results file's calibration
// fitted and how far the fitted model was from those measurements.
func calibrationSummary(c *results.Calibration, name string) string {
	switch {
	case c == nil:
		return "defaults: " + name + " records no calibration"
	case len(c.Residuals) == 0:
		return fmt.Sprintf("%s's calibration, %s (the file records no residuals)", name, c.FittedOn)
	}
	return fmt.Sprintf("%s's calibration, %s: predicted/measured %.2f-%.2f (rms log ratio %.3f)", name, c.FittedOn, c.MinRatio, c.MaxRatio, c.RMSLogRatio)
}

// writeModelTable prints one row per thread count and one column per
// algorithm (predicted ns), the row's fastest marked with *, and the
// hybrid's composition last.
func writeModelTable(w io.Writer, all []model.Row) {
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
			if p.Algorithm == algname.Hybrid {
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

// algIndex orders the table's columns: catalog order, the hybrid (a
// composition of the others) last.
func algIndex(a string) int {
	if a == algname.Hybrid {
		return len(catalog.Names())
	}
	return catalog.Rank(a)
}

// maxCPUListLen caps a printed CPU list, so that a line stays under 160
// characters.
const maxCPUListLen = 100

// cpuList writes cpus (a placement, in rank order) short: consecutive runs
// as ranges ("0-3,8"), a placement that repeats one block as the block and
// its count ("0-7 (×125)": 1000 threads wrapping around 8 CPUs), and the
// result capped at maxCPUListLen bytes (text.Elide).
func cpuList(cpus cpuset.Placement) string {
	block, times := cpus, 1
	for p := 1; p <= len(cpus)/2; p++ {
		if len(cpus)%p == 0 && repeats(cpus, p) {
			block, times = cpus[:p], len(cpus)/p
			break
		}
	}
	s := cpuset.FormatList(block)
	if times > 1 {
		s += fmt.Sprintf(" (×%d)", times)
	}
	return text.Elide(s, maxCPUListLen)
}

// repeats reports whether cpus is its first p entries over and over.
func repeats(cpus cpuset.Placement, p int) bool {
	for i := p; i < len(cpus); i++ {
		if cpus[i] != cpus[i-p] {
			return false
		}
	}
	return true
}
