package libtest

import (
	"fmt"
	"testing"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/internal/measure"
	"github.com/barriertune/barriertune/internal/osal"
)

// BenchmarkHybrid compares flat dissemination with the hybrid grouped by
// CPU (threads sharing a CPU form a group; one representative per CPU
// goes up) at 2, 4 and 8 threads round-robin over the allowed CPUs, and the
// hybrid without a hierarchy (flat dissemination plus the hybrid's
// indirection). Run: go test -bench Hybrid ./internal/libtest/
func BenchmarkHybrid(b *testing.B) {
	allowed, err := osal.Allowed()
	if err != nil {
		b.Skip(err)
	}
	for _, n := range []int{2, 4, 8} {
		cpus := osal.RoundRobin(n, allowed)
		var team *osal.Team
		if measure.Oversubscribed(cpus) {
			team, err = osal.NewUnpinnedTeam(n)
		} else {
			team, err = osal.NewTeam(cpus)
		}
		if err != nil {
			b.Fatal(err)
		}
		specs, _ := barriers.ParseHierarchy("cpu:dissemination")
		levels, err := barriers.Hierarchy(specs).Grouped([][]int{cpus})
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct {
			name string
			opts []barriers.Option
			alg  string
		}{
			{"dissemination", nil, "dissemination"},
			{"hybrid-flat", nil, "hybrid"},
			{"hybrid-by-cpu", []barriers.Option{barriers.WithHierarchy(levels)}, "hybrid"},
		} {
			b.Run(fmt.Sprintf("%s/threads=%d", c.name, n), func(b *testing.B) {
				bar, err := barriers.New(c.alg, n, c.opts...)
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				err = team.Run(func(rank int) {
					for i := 0; i < b.N; i++ {
						bar.Wait(rank)
					}
				})
				if err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
