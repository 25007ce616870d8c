package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/barriertune/barriertune/check"
	"github.com/barriertune/barriertune/model"
)

// planOptions are check's planning flags: --plan (and --exhaustive,
// --keep, --model) print what the check would measure, from the cost
// model, without measuring.
type planOptions struct {
	plan, exhaustive bool
	keep             int
	modelKind        string
}

func (o *planOptions) register(fs *pflag.FlagSet) {
	fs.BoolVar(&o.plan, "plan", false, "print what the check would measure (placements, algorithms kept after pruning and why, estimated time) for every thread count 2..PUs, without measuring")
	fs.BoolVar(&o.exhaustive, "exhaustive", false, "with --plan: measure every algorithm at every thread count (no pruning, no budget)")
	fs.IntVar(&o.keep, "keep", check.DefaultKeep, "with --plan: predicted-best algorithms measured per thread count, besides the central and dissemination baselines")
	fs.StringVar(&o.modelKind, "model", string(model.CriticalPathModel), "with --plan: cost model that prunes (critical-path or default)")
}

// active reports whether a planning flag asks check not to measure.
func (o *planOptions) active() bool { return o.plan }

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
	topo, err := src.load()
	if err != nil {
		return err
	}
	cfg := check.ScaleConfig{Topology: topo, Model: kind, Keep: o.keep, Exhaustive: o.exhaustive}
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
	start := time.Now()
	p, err := check.PlanScale(cfg)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if asJSON, _ := fs.GetBool("json"); asJSON {
		return writeJSON(w, p)
	}
	fmt.Fprint(w, p.Text())
	fmt.Fprintf(w, "planned in %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}
