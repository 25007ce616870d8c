package main

import (
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/barriertune/barriertune/check"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/latency"
	"github.com/barriertune/barriertune/model"
	"github.com/barriertune/barriertune/results"
)

// planOptions are check's planning flags: --plan (and --exhaustive,
// --keep, --model) print what the check would measure, from the cost
// model, without measuring.
type planOptions struct {
	plan, exhaustive, simulate bool
	keep                       int
	modelKind, latencyFile     string
}

func (o *planOptions) register(fs *pflag.FlagSet) {
	fs.BoolVar(&o.plan, "plan", false, "print what the check would measure (placements, algorithms kept after pruning and why, estimated time) for every thread count 2..PUs, without measuring")
	fs.BoolVar(&o.exhaustive, "exhaustive", false, "with --plan: measure every algorithm at every thread count (no pruning, no budget)")
	fs.IntVar(&o.keep, "keep", check.DefaultKeep, "with --plan: predicted-best algorithms measured per thread count, besides the central and dissemination baselines")
	fs.BoolVar(&o.simulate, "simulate", false, "run the whole check on the cost model instead of measuring (sets, pruning, selection, inference) and write a results file marked simulated to -o FILE")
	fs.StringVar(&o.latencyFile, "latency", "", "with --plan or --simulate: predict with the one-way latency matrix in `FILE` (../shared/latency CSV format); without another topology source the tree is clustered from it")
	fs.StringVar(&o.modelKind, "model", string(model.CriticalPathModel), "with --plan: cost model that prunes (critical-path or default)")
}

// active reports whether a planning flag asks check not to measure.
func (o *planOptions) active() bool { return o.plan || o.simulate }

// run plans on the topology of src, reading check's --budget (when given),
// --sets-limit, --sample-time and --json from cmd.
func (o *planOptions) run(cmd *cobra.Command, src *sourceFlags) error {
	if o.keep < 1 {
		return fmt.Errorf("--keep %d: want at least 1", o.keep)
	}
	kind := model.Kind(o.modelKind)
	if kind != model.CriticalPathModel && kind != model.DefaultModel {
		return fmt.Errorf("--model %q: unknown cost model (accepted: %s, %s)", o.modelKind, model.CriticalPathModel, model.DefaultModel)
	}
	topo, costs, err := o.topology(src)
	if err != nil {
		return err
	}
	cfg := check.ScaleConfig{Topology: topo, Costs: costs, Model: kind, Keep: o.keep, Exhaustive: o.exhaustive}
	fs := cmd.Flags()
	if fs.Changed("budget") {
		if cfg.Budget, err = fs.GetDuration("budget"); err != nil {
			return err
		}
		if cfg.Budget <= 0 {
			return fmt.Errorf("--budget %s: want a positive duration", cfg.Budget)
		}
	}
	if v, err := fs.GetInt("sets-limit"); err == nil {
		if v < 1 {
			return fmt.Errorf("--sets-limit %d: want at least 1", v)
		}
		cfg.SetsLimit = v
	}
	if v, err := fs.GetDuration("sample-time"); err == nil && v > 0 {
		cfg.SampleTarget = v
	}
	if o.plan && o.simulate {
		return fmt.Errorf("--plan and --simulate given together; choose one")
	}
	start := time.Now()
	w := cmd.OutOrStdout()
	if o.simulate {
		return o.runSimulate(cmd, cfg, src, start)
	}
	p, err := check.PlanScale(cfg)
	if err != nil {
		return err
	}
	if asJSON, _ := fs.GetBool("json"); asJSON {
		return writeJSON(w, p)
	}
	fmt.Fprint(w, p.Text())
	fmt.Fprintf(w, "planned in %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// topology loads the tree and the costs: with --latency the matrix's
// latencies, on the tree of the topology source given, or else the tree
// clustered from the matrix; without it the source's tree (the live one
// by default) and its typical latencies.
func (o *planOptions) topology(src *sourceFlags) (*hwtree.Topology, model.Costs, error) {
	if o.latencyFile == "" {
		topo, err := src.load()
		return topo, nil, err
	}
	m, clustered, err := latency.LoadFile(o.latencyFile)
	if err != nil {
		return nil, nil, err
	}
	if src.live() {
		return clustered, m.Costs(), nil
	}
	topo, err := src.load()
	if err != nil {
		return nil, nil, err
	}
	costs := m.Costs()
	for _, cpu := range topo.CPUs() {
		if math.IsNaN(costs.Latency(cpu, cpu)) {
			return nil, nil, fmt.Errorf("--latency %s covers CPUs 0..%d, but the topology has CPU %d", o.latencyFile, len(m.CPUs)-1, cpu)
		}
	}
	return topo, costs, nil
}

// runSimulate writes the simulated results file. It needs -o: a simulated
// file must never replace this machine's measured results.
func (o *planOptions) runSimulate(cmd *cobra.Command, cfg check.ScaleConfig, src *sourceFlags, start time.Time) error {
	fs := cmd.Flags()
	path, _ := fs.GetString("output")
	if path == "" {
		return fmt.Errorf("--simulate needs -o FILE: a simulated results file never replaces this machine's results")
	}
	name := sourceName(src)
	if o.latencyFile != "" {
		name = "latency " + filepath.Base(o.latencyFile)
	}
	f, p, err := check.Simulate(check.SimulateConfig{ScaleConfig: cfg, Machine: name, Version: version()})
	if err != nil {
		return err
	}
	if err := results.Write(path, f); err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if asJSON, _ := fs.GetBool("json"); asJSON {
		return writeJSON(w, f)
	}
	for _, t := range f.Threads {
		if t.Best == nil {
			continue
		}
		fmt.Fprintf(w, "%4d threads  %-16s %8.1f ns predicted  (%s)\n", t.Threads, t.Best.Describe(), t.Best.MedianNs, t.Best.Label)
	}
	fmt.Fprintf(w, "simulated %d thread counts (%d measured in the plan, %d inferred) in %s; results written to %s\n",
		len(f.Threads), p.Measured, p.Inferred, time.Since(start).Round(time.Millisecond), path)
	return nil
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
