package libtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/internal/measure"
	"github.com/barriertune/barriertune/internal/osal"
)

// BenchmarkWait reports ns per episode (ns/op) for every algorithm at 2, 4
// and 8 threads placed round-robin over the allowed CPUs: pinned locked
// threads with the Spin policy when they fit, plain goroutines with the
// default policy when oversubscribed. Names are key=value
// (BenchmarkWait/alg=dissemination/threads=2/policy=spin) so benchstat can
// group them. Run: go test -bench Wait ./internal/libtest/
func BenchmarkWait(b *testing.B) { benchWait(b, false) }

// BenchmarkWaitContext is BenchmarkWait through WaitContext with a context
// that cannot end (Done is nil): it should cost what Wait costs.
func BenchmarkWaitContext(b *testing.B) { benchWait(b, true) }

func benchWait(b *testing.B, withCtx bool) {
	allowed, err := osal.Allowed()
	if err != nil {
		b.Skip(err)
	}
	for _, n := range []int{2, 4, 8} {
		cpus := osal.RoundRobin(n, allowed)
		var team *osal.Team
		policy := barriers.Spin
		if measure.Oversubscribed(cpus) {
			policy = barriers.AutoPolicy
			team, err = osal.NewUnpinnedTeam(n)
		} else {
			team, err = osal.NewTeam(cpus)
		}
		if err != nil {
			b.Fatal(err)
		}
		for _, a := range barriers.Algorithms() {
			b.Run(fmt.Sprintf("alg=%s/threads=%d/policy=%s", a.Name, n, policy), func(b *testing.B) {
				bar, err := a.New(n, barriers.WithPolicy(policy))
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				err = team.Run(func(rank int) {
					if withCtx {
						for i := 0; i < b.N; i++ {
							if err := bar.WaitContext(ctx, rank); err != nil {
								panic(err)
							}
						}
						return
					}
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

// BenchmarkBreak reports the time from Break until every one of n-1
// blocked waiters has returned (ns/op per break), per algorithm and policy:
// the "noticed within a millisecond" of the broken-barrier semantics.
func BenchmarkBreak(b *testing.B) {
	const n = 2
	for _, a := range barriers.Algorithms() {
		for _, p := range []barriers.Policy{barriers.AutoPolicy, barriers.Spin, barriers.Yield, barriers.Park} {
			if !a.Spins && p != barriers.Park {
				continue
			}
			b.Run(fmt.Sprintf("alg=%s/threads=%d/policy=%s", a.Name, n, p), func(b *testing.B) {
				bar, err := a.New(n, barriers.WithPolicy(p))
				if err != nil {
					b.Fatal(err)
				}
				done := make(chan error)
				var total time.Duration
				for i := 0; i < b.N; i++ {
					bar.Reset()
					go func() { done <- bar.WaitContext(context.Background(), 1) }()
					time.Sleep(50 * time.Microsecond) // let the waiter block
					t0 := time.Now()
					bar.Break()
					<-done
					total += time.Since(t0)
				}
				b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/break")
			})
		}
	}
}
