package barriers_test

import (
	"fmt"
	"testing"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/measure"
	"github.com/barriertune/barriertune/osal"
)

// BenchmarkWait reports ns per episode (ns/op) for every algorithm at 2, 4
// and 8 threads placed round-robin over the allowed CPUs: pinned locked
// threads when they fit, plain goroutines when oversubscribed, default
// policy. Run: go test -bench Wait ./barriers/
func BenchmarkWait(b *testing.B) {
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
		for _, a := range barriers.Algorithms() {
			b.Run(fmt.Sprintf("%s/threads=%d", a.Name, n), func(b *testing.B) {
				bar, err := a.New(n)
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
