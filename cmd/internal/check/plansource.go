package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/barriertune/barriertune/cmd/internal/latency"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/results"
)

// PlanSource is what a plan (check --plan) or a simulated check (check
// --simulate) predicts with besides its Config: at most one of a check's
// results file (its latencies and fitted constants) and a latency matrix
// file, and the tree given, if any.
type PlanSource struct {
	// FromResults is a results file: its per-level latencies and its
	// calibration, on its own tree unless Topology is given.
	FromResults string
	// LatencyFile is a latency matrix (CSV or latency --json): its
	// latencies on Topology, which it must cover, or else on the tree
	// clustered from it.
	LatencyFile string
	// Topology is the tree given (nil: none; Load then reads the live one
	// when it needs a tree).
	Topology *hwtree.Topology
	// Name names the tree given, for a simulated file ("synthetic ...").
	Name string
}

// PlanMachine is what a plan or a simulation runs on: the tree, its
// latencies (nil: the tree's typical ones, model.NewTreeCosts), the model's
// constants (nil: the defaults) and a name for the machine.
type PlanMachine struct {
	Topology    *hwtree.Topology
	Costs       model.Costs
	Calibration *results.Calibration
	Name        string
}

// Load resolves the source; live reads this machine's tree when no tree
// is given and none comes from the files.
func (s PlanSource) Load(live func() (*hwtree.Topology, error)) (PlanMachine, error) {
	if s.FromResults != "" && s.LatencyFile != "" {
		return PlanMachine{}, fmt.Errorf("a results file (%s) and a latency matrix (%s) given together; choose one source of latencies", s.FromResults, s.LatencyFile)
	}
	tree := func() (*hwtree.Topology, error) {
		if s.Topology != nil {
			return s.Topology, nil
		}
		return live()
	}
	switch {
	case s.FromResults != "":
		f, err := results.Read(s.FromResults)
		if err != nil {
			return PlanMachine{}, err
		}
		topo := s.Topology
		if topo == nil {
			if topo, err = hwtree.FromSynthetic(f.Machine.Topology); err != nil {
				return PlanMachine{}, fmt.Errorf("%s: its machine's tree %q is not a synthetic string; give its topology (--xml, --sysfs-root): %w", s.FromResults, f.Machine.Topology, err)
			}
		}
		return PlanMachine{Topology: topo, Costs: CostsFrom(topo, f), Calibration: f.Calibration, Name: "results " + s.FromResults}, nil
	case s.LatencyFile == "":
		topo, err := tree()
		return PlanMachine{Topology: topo, Name: s.Name}, err
	}
	m, clustered, err := latency.LoadFile(s.LatencyFile)
	if err != nil {
		return PlanMachine{}, err
	}
	out := PlanMachine{Topology: clustered, Costs: m.Costs(), Name: "latency " + s.LatencyFile}
	if s.Topology == nil {
		return out, nil
	}
	if err := m.Covers(s.Topology); err != nil {
		return PlanMachine{}, fmt.Errorf("%s %w", s.LatencyFile, err)
	}
	out.Topology = s.Topology
	return out, nil
}

// Params are the model's constants for m: its calibration's, else the
// defaults.
func (m PlanMachine) Params() model.Params {
	if m.Calibration != nil {
		return ParamsFrom(m.Calibration)
	}
	return model.DefaultParams()
}

// Measurer is the measurer of a check simulated on m (check --simulate):
// the cost model kind with m's constants, each sample with the relative
// noise given. The tree's source becomes m's name, which the simulated
// file records.
func (m PlanMachine) Measurer(kind model.Kind, noise float64) (*ModelMeasurer, error) {
	m.Topology.Source = m.Name
	return NewModelMeasurer(m.Topology, m.Costs, kind, m.Params(), noise, 1)
}

// SchedulerFitted reports whether c's constants for threads outnumbering
// the CPUs (the Go scheduler's cost) were fitted to the machine rather
// than left at the defaults: calibrationOf names the fitted constants in
// FittedOn.
func SchedulerFitted(c *results.Calibration) bool {
	if c == nil {
		return false
	}
	fitted, _, ok := strings.Cut(c.FittedOn, " fitted to ")
	return ok && slices.Contains(strings.Split(fitted, ", "), model.OversubscribedStageName)
}
