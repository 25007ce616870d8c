package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/barriertune/barriertune/cmd/internal/check"
	"github.com/barriertune/barriertune/cmd/internal/latency"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/cmd/internal/store"
	"github.com/barriertune/barriertune/internal/text"
	"github.com/barriertune/barriertune/results"
)

// planOptions are check's planning flags: --plan prints what the check
// would measure (the same plan step, measuring nothing) and --simulate
// runs the same check on the cost model; --exhaustive, --keep, --model,
// --latency, --from-results and --noise tune them and are refused without
// them.
type planOptions struct {
	plan, exhaustive, simulate bool
	keep                       int
	noise                      float64
	modelKind, latencyFile     string
	fromResults                string
}

func (o *planOptions) register(fs *pflag.FlagSet) {
	fs.BoolVar(&o.plan, "plan", false, "print what the check would measure with the same flags (thread counts, placements, candidates, rounds, samples, estimated time, why each was kept or pruned), measuring nothing")
	fs.BoolVar(&o.simulate, "simulate", false, "run the same check with the cost model as the measurer (simulated clock) and write a results file marked simulated to -o FILE")
	fs.BoolVar(&o.exhaustive, "exhaustive", false, "with --plan or --simulate: every candidate at every thread count, no pruning and no budget cuts")
	fs.IntVar(&o.keep, "keep", 3, "with --plan or --simulate: predicted-best algorithms kept per thread count when pruning, besides the central and dissemination baselines (1..64)")
	fs.StringVar(&o.modelKind, "model", string(model.DefaultModel), "with --plan or --simulate: cost model that prunes and simulates (default or critical-path)")
	fs.StringVar(&o.latencyFile, "latency", "", "with --plan or --simulate: predict with the one-way latency matrix in `FILE` (CSV or latency --json, as docs/model.md describes); without another topology source the tree is clustered from it")
	fs.StringVar(&o.fromResults, "from-results", "", "with --plan or --simulate: predict with the latencies and calibration recorded in the results `FILE`, as the live check that wrote it pruned")
	fs.Float64Var(&o.noise, "noise", 0, "with --simulate: relative noise of each simulated sample (0..1)")
}

// active reports whether a planning flag asks check not to measure.
func (o *planOptions) active() bool { return o.plan || o.simulate }

// validate refuses planning flags that mean nothing in the mode asked
// for (usage errors, exit 2).
func (o *planOptions) validate(fs *pflag.FlagSet) error {
	if o.plan && o.simulate {
		return usageErrorf("--plan and --simulate given together; choose one")
	}
	if !o.active() {
		for _, name := range []string{"exhaustive", "keep", "model", "latency", "from-results", "noise"} {
			if fs.Changed(name) {
				return usageErrorf("--%s: only with --plan or --simulate (a live check measures; it prunes with the calibrated default model)", name)
			}
		}
		return nil
	}
	if o.plan && fs.Changed("noise") {
		return usageErrorf("--noise: only with --simulate")
	}
	if o.plan && fs.Changed("output") {
		return usageErrorf("-o: --plan writes no file; drop -o, or use --simulate -o FILE")
	}
	if o.simulate && fs.Changed("resume") {
		return usageErrorf("--resume: a simulated check is not resumed; run --simulate again")
	}
	if o.keep < 1 || o.keep > 64 {
		return usageErrorf("--keep %d: want 1..64", o.keep)
	}
	if err := model.Kind(o.modelKind).Check(); err != nil {
		return usageErrorf("--model: %v", err)
	}
	if !(o.noise >= 0 && o.noise <= 1) {
		return usageErrorf("--noise %g: want 0..1 (a relative standard deviation)", o.noise)
	}
	if o.latencyFile != "" && o.fromResults != "" {
		return usageErrorf("--latency and --from-results given together; choose one source of latencies")
	}
	return nil
}

// run plans or simulates with the check's configuration cfg (validated by
// checkOptions.config, the same as a live check's).
func (o *planOptions) run(cmd *cobra.Command, opts *checkOptions, cfg check.Config) error {
	pm, err := o.machine(&opts.src)
	if err != nil {
		return err
	}
	cfg.Topology, cfg.Costs, cfg.Calibration = pm.Topology, pm.Costs, pm.Calibration
	cfg.Model, cfg.Keep, cfg.Exhaustive = model.Kind(o.modelKind), o.keep, o.exhaustive
	cfg.Verbose = opts.global != nil && opts.global.verbose
	if opts.resume != "" {
		if cfg.Resume, err = results.Read(opts.resume); err != nil {
			return fmt.Errorf("--resume: %w", err)
		}
	}
	start := time.Now()
	if o.simulate {
		if cfg.Measurer, err = pm.Measurer(cfg.Model, o.noise); err != nil {
			return err
		}
		return o.runSimulate(cmd, opts, cfg, start)
	}
	p, err := check.DryRun(cfg)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if opts.json {
		return writeJSON(w, p)
	}
	fmt.Fprint(w, p.Text(cfg.Verbose))
	fmt.Fprintf(w, "planned in %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// machine loads the tree, the costs and the calibration
// (check.PlanSource.Load) with the flags' names in its errors.
func (o *planOptions) machine(src *sourceFlags) (check.PlanMachine, error) {
	ps := check.PlanSource{FromResults: o.fromResults, LatencyFile: o.latencyFile, Name: sourceName(src)}
	if !src.live() {
		topo, err := src.load()
		if err != nil {
			return check.PlanMachine{}, err
		}
		ps.Topology = topo
	}
	pm, err := ps.Load(src.load)
	switch {
	case err != nil && o.fromResults != "":
		return pm, fmt.Errorf("--from-results: %w", err)
	case err != nil && o.latencyFile != "":
		if fe := latency.NotAMatrix("--latency", o.latencyFile, err); fe != err {
			return pm, fe
		}
		return pm, fmt.Errorf("--latency %w", err)
	}
	return pm, err
}

// runSimulate writes the simulated results file. It needs -o: a simulated
// file must never replace this machine's measured results.
func (o *planOptions) runSimulate(cmd *cobra.Command, opts *checkOptions, cfg check.Config, start time.Time) error {
	if opts.output == "" {
		return usageErrorf("--simulate needs -o FILE: a simulated results file never replaces this machine's results")
	}
	// The output is checked as a live check's is, before any work: a
	// device or FIFO is not replaced, a missing directory is not created,
	// and measured results are never replaced by simulated ones.
	dest := store.OutputDestination("-o", opts.output)
	if err := dest.Check(); err != nil {
		return err
	}
	if err := store.RefusesSimulated(dest.String()); err != nil {
		return fmt.Errorf("-o: %w", err)
	}
	f, err := check.Run(cmd.Context(), cfg)
	if err != nil && f == nil {
		return err
	}
	written, note, werr := dest.Save(f)
	if werr != nil {
		return werr
	}
	if note != "" {
		writeWrapped(cmd.ErrOrStderr(), "note: "+note)
	}
	w := cmd.OutOrStdout()
	if opts.json {
		if err := writeJSON(w, f); err != nil {
			return err
		}
		return err
	}
	calib := cfg.Calibration
	overFitted := check.SchedulerFitted(calib)
	pus := len(cfg.Topology.PUs())
	var names []string
	for _, t := range f.Threads {
		if t.Best != nil {
			names = append(names, t.Best.Describe())
		}
	}
	shown, legend := text.Abbreviate(names, 32)
	for _, t := range f.Threads {
		if t.Best == nil {
			continue
		}
		note := ""
		if t.Threads > pus && !overFitted {
			note = "; more threads than CPUs: the Go scheduler's cost is the default constants', not fitted to this machine"
		}
		fmt.Fprintf(w, "%5d threads  %-32s %10.1f ns predicted  (%s%s)\n", t.Threads, shown[0], t.Best.MedianNs, t.Best.Label, note)
		shown = shown[1:]
	}
	for _, l := range legend {
		writeWrapped(w, l)
	}
	if calib != nil {
		writeWrapped(w, "constants: "+calibrationSummary(calib, o.fromResults))
	} else {
		writeWrapped(w, "constants: "+model.DefaultsProvenance)
	}
	for _, c := range f.Cuts {
		fmt.Fprintf(w, "cut: %s\n", c)
	}
	fmt.Fprintf(w, "simulated %s in %s; results written to %s\n", text.Plural(len(f.Threads), "thread count"), time.Since(start).Round(time.Millisecond), written)
	return err
}

// sourceName names the topology source for a simulated file.
func sourceName(s *sourceFlags) string {
	switch {
	case s.sysfsRoot != "":
		return "sysfs snapshot " + s.sysfsRoot
	case s.synthetic != "":
		return "synthetic " + s.synthetic
	case s.xml != "":
		return "hwloc XML " + s.xml
	case s.topology != "":
		return "topology " + s.topology
	}
	return "this machine's tree"
}
