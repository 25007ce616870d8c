package model

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/hwtree"
	"github.com/barriertune/barriertune/internal/algname"
)

// TableOptions selects what PredictTable predicts.
type TableOptions struct {
	// Kind is the model.
	Kind Kind
	// Algorithm is one of Algorithms, algname.Hybrid (the greedy per-level
	// composition, HybridFor), or "all": every algorithm and the hybrid.
	Algorithm string
	// FanIn is the trees' fan-in (2 to 64; 0 for DefaultFanIn).
	FanIn int
	// Threads is the one thread count to predict; 0 for every count from 2
	// to the number of CPUs in the order (or len(CPUs) when CPUs is given).
	Threads int
	// CPUs fixes the placement (rank r on CPUs[r]); nil for Compact.
	CPUs []int
	// Params are the default model's constants (nil: DefaultParams), a
	// results file's calibration say; the hybrid is composed with them.
	Params *Params
}

// Row is one thread count's predictions, fastest first; `barriertune model
// --json` prints it.
type Row struct {
	Threads     int          `json:"threads"`
	CPUs        []int        `json:"cpus"`
	Model       string       `json:"model"`
	Predictions []Prediction `json:"predictions"`
}

// CompactOrder returns the CPUs of cpus in the tree's PU order (the
// compact order: neighbours in the tree next to each other); CPUs the tree
// lacks are left out.
func CompactOrder(tree *hwtree.Topology, cpus []int) []int {
	in := make(map[int]bool, len(cpus))
	for _, c := range cpus {
		in[c] = true
	}
	var order []int
	for _, pu := range tree.PUs() {
		if in[pu.OSIndex] {
			order = append(order, pu.OSIndex)
		}
	}
	return order
}

// Compact places n threads on order, rank r on order[r mod len(order)]
// (more threads than CPUs wrap around).
func Compact(order []int, n int) []int {
	cpus := make([]int, n)
	for i := range cpus {
		cpus[i] = order[i%len(order)]
	}
	return cpus
}

// PredictTable predicts o.Algorithm (or every algorithm and the hybrid)
// for each thread count o asks for, on the compact placement over order
// (CompactOrder) or on o.CPUs, with latencies c; the hybrid is composed on
// tree. It stops with ctx's error when ctx is done between two counts.
func PredictTable(ctx context.Context, c Costs, tree *hwtree.Topology, order []int, o TableOptions) ([]Row, error) {
	if err := o.Kind.Check(); err != nil {
		return nil, err
	}
	if o.Algorithm != "all" && o.Algorithm != algname.Hybrid && !slices.Contains(Algorithms(), o.Algorithm) {
		return nil, fmt.Errorf("algorithm %q: unknown (accepted: all, hybrid, %s)", o.Algorithm, strings.Join(Algorithms(), ", "))
	}
	if o.Threads < 0 || o.Threads > barriers.MaxParticipants {
		return nil, fmt.Errorf("%d threads: accepted 1 to %d", o.Threads, barriers.MaxParticipants)
	}
	if o.CPUs != nil && o.Threads != 0 && len(o.CPUs) != o.Threads {
		return nil, fmt.Errorf("%d CPUs for %d threads: give one per thread", len(o.CPUs), o.Threads)
	}
	if o.CPUs == nil && len(order) == 0 {
		return nil, fmt.Errorf("no CPUs to place the threads on (want at least one)")
	}
	counts := []int{o.Threads}
	switch {
	case o.Threads == 0 && o.CPUs != nil:
		counts = []int{len(o.CPUs)}
	case o.Threads == 0:
		counts = nil
		for n := 2; n <= len(order); n++ {
			counts = append(counts, n)
		}
	}
	var rows []Row
	for _, n := range counts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cpus := o.CPUs
		if cpus == nil {
			cpus = Compact(order, n)
		}
		p, err := predictRow(c, tree, cpus, o)
		if err != nil {
			return nil, err
		}
		rows = append(rows, Row{Threads: len(cpus), CPUs: cpus, Model: string(o.Kind), Predictions: p})
	}
	return rows, nil
}

func predictRow(c Costs, tree *hwtree.Topology, cpus []int, o TableOptions) ([]Prediction, error) {
	var out []Prediction
	prm := DefaultParams()
	if o.Params != nil {
		prm = *o.Params
	}
	switch o.Algorithm {
	case "all":
		ps, err := PredictAllWith(o.Kind, cpus, c, o.FanIn, prm)
		if err != nil {
			return nil, err
		}
		out = ps
	case algname.Hybrid:
	default:
		v, err := PredictWith(o.Kind, o.Algorithm, cpus, c, o.FanIn, prm)
		if err != nil {
			return nil, err
		}
		out = []Prediction{{Algorithm: o.Algorithm, PredictedNs: v}}
	}
	if o.Algorithm == "all" || o.Algorithm == algname.Hybrid {
		comp, ns, err := HybridForWith(o.Kind, tree, cpus, c, prm)
		if err != nil {
			return nil, fmt.Errorf("hybrid on %d CPUs: %w", len(cpus), err)
		}
		out = append(out, Prediction{Algorithm: algname.Hybrid, PredictedNs: ns, Composition: comp.String()})
	}
	slices.SortStableFunc(out, func(a, b Prediction) int { return cmp.Compare(a.PredictedNs, b.PredictedNs) })
	return out, nil
}
