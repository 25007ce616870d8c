package check_test

import (
	"context"
	"fmt"

	"github.com/barriertune/barriertune/cmd/internal/check"
	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/hwtree"
)

// A simulated check of a synthetic machine: the same pipeline as a live
// check, with the cost model as the measurer (deterministic without
// noise, and fast: its clock is simulated).
func ExampleRun() {
	topo, err := hwtree.FromSynthetic("pack:2 core:4 pu:2")
	if err != nil {
		panic(err)
	}
	m, err := check.NewModelMeasurer(topo, nil, model.DefaultModel, model.DefaultParams(), 0, 1)
	if err != nil {
		panic(err)
	}
	f, err := check.Run(context.Background(), check.Config{Topology: topo, Measurer: m,
		Threads: []int{2, 16}, Algorithms: []string{"central", "dissemination", "static-tree"}})
	if err != nil {
		panic(err)
	}
	for _, t := range f.Threads {
		fmt.Printf("%d threads: %s on %s, %.0f ns predicted\n", t.Threads, t.Best.Describe(), t.Best.Label, t.Best.MedianNs)
	}
	fmt.Println("simulated:", f.Simulated, "partial:", f.Partial)
	// Output:
	// 2 threads: dissemination on balanced 1x1x2, 10 ns predicted
	// 16 threads: dissemination on balanced 2x4x2, 460 ns predicted
	// simulated: true partial: false
}
