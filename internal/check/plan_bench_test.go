package check

import (
	"testing"

	"github.com/barriertune/barriertune/hwtree"
)

// BenchmarkPlan plans the default check (DryRun, as check --plan does) of
// a 256-PU and a 4096-PU synthetic machine (hwtree's cap): issue 28's
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
