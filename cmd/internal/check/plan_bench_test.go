package check

import (
	"context"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/model"
	"github.com/barriertune/barriertune/hwtree"
)

// BenchmarkPlan plans the default check (DryRun, as check --plan does) of
// a 256-PU and a 4096-PU synthetic machine (hwtree's cap): the
// targets are 5 s for both on the development VM.
func BenchmarkPlan(b *testing.B) {
	for _, s := range []string{"pack:2 l3:4 core:16 pu:2", "pack:8 l3:8 core:32 pu:2"} {
		topo, err := hwtree.FromSynthetic(s)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(s, func(b *testing.B) {
			for b.Loop() {
				if _, err := DryRun(Config{Topology: topo}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRefit is a live check's last step on a 256-PU machine's file
// (a simulated check's 973 measurements, thinned to 96): the fit of every
// measurement, which runs after the budget.
func BenchmarkRefit(b *testing.B) {
	topo, err := hwtree.FromSynthetic("pack:2 l3:4 core:16 pu:2")
	if err != nil {
		b.Fatal(err)
	}
	m, err := NewModelMeasurer(topo, nil, model.DefaultModel, model.DefaultParams(), 0, 1)
	if err != nil {
		b.Fatal(err)
	}
	f, err := Run(context.Background(), Config{Topology: topo, Measurer: m})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		refit(topo, model.DefaultModel, f)
	}
}
