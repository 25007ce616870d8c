package barriers

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/osal"
)

// benchCounts are the thread counts the benchmarks run, placed round-robin
// over the allowed CPUs.
var benchCounts = []int{2, 4, 8}

// benchTeam returns the team n participants run on, placed round-robin
// over the allowed CPUs: pinned locked threads when each has a CPU of its
// own and GOMAXPROCS holds them, else plain goroutines. It reports whether
// the team is pinned.
func benchTeam(b *testing.B, n int) (team *osal.Team, placement cpuset.Placement, pinned bool) {
	b.Helper()
	allowed, err := osal.Allowed()
	if err != nil {
		b.Skip(err)
	}
	placement = osal.RoundRobin(n, allowed)
	pinned = !placement.Oversubscribed() && n <= runtime.GOMAXPROCS(0)
	if pinned {
		team, err = osal.NewTeam(placement)
	} else {
		team, err = osal.NewUnpinnedTeam(n)
	}
	if err != nil {
		b.Fatal(err)
	}
	return team, placement, pinned
}

// BenchmarkWait reports ns per episode (ns/op) for every algorithm at 2, 4
// and 8 threads placed round-robin over the allowed CPUs: pinned locked
// threads with the Spin policy when they fit, plain goroutines with the
// default policy when oversubscribed. Names are key=value
// (BenchmarkWait/alg=dissemination/threads=2/policy=spin) so benchstat can
// group them. Run: go test -run '^$' -bench Wait ./barriers/
func BenchmarkWait(b *testing.B) { benchWait(b, false) }

// BenchmarkWaitContext is BenchmarkWait through WaitContext with a context
// that cannot end (Done is nil): it should cost what Wait costs.
func BenchmarkWaitContext(b *testing.B) { benchWait(b, true) }

func benchWait(b *testing.B, withCtx bool) {
	for _, n := range benchCounts {
		team, _, pinned := benchTeam(b, n)
		policy := Spin
		if !pinned {
			policy = AutoPolicy
		}
		for _, a := range Algorithms() {
			b.Run(fmt.Sprintf("alg=%s/threads=%d/policy=%s", a.Name, n, policy), func(b *testing.B) {
				bar, err := a.New(n, WithPolicy(policy))
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
// blocked waiters has returned (ns/break), per algorithm and policy: the
// "noticed within a millisecond" of the broken-barrier semantics.
func BenchmarkBreak(b *testing.B) {
	const n = 2
	for _, a := range Algorithms() {
		for _, p := range []Policy{AutoPolicy, Spin, Yield, Park} {
			if !a.Spins && p != Park {
				continue
			}
			b.Run(fmt.Sprintf("alg=%s/threads=%d/policy=%s", a.Name, n, p), func(b *testing.B) {
				bar, err := a.New(n, WithPolicy(p))
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

// BenchmarkHybrid compares flat dissemination with the hybrid grouped by
// CPU (threads sharing a CPU form a group; one representative per CPU
// goes up) at 2, 4 and 8 threads round-robin over the allowed CPUs, and the
// hybrid without a hierarchy (flat dissemination plus the hybrid's
// indirection). Names are key=value
// (BenchmarkHybrid/shape=hybrid-by-cpu/threads=4). Run:
// go test -run '^$' -bench Hybrid ./barriers/
func BenchmarkHybrid(b *testing.B) {
	specs, err := ParseHierarchy("cpu:dissemination")
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range benchCounts {
		team, placement, _ := benchTeam(b, n)
		levels, err := specs.Grouped([][]int{placement})
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct {
			shape string
			opts  []Option
			alg   string
		}{
			{"dissemination", nil, "dissemination"},
			{"hybrid-flat", nil, "hybrid"},
			{"hybrid-by-cpu", []Option{WithHierarchy(levels)}, "hybrid"},
		} {
			b.Run(fmt.Sprintf("shape=%s/threads=%d", c.shape, n), func(b *testing.B) {
				bar, err := New(c.alg, n, c.opts...)
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
