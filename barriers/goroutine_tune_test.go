package barriers

import (
	"fmt"
	"testing"

	"github.com/barriertune/barriertune/internal/workload"
)

// BenchmarkGoroutineTuning sweeps the goroutine barrier's knobs at
// oversubscribed n (yields before parking, spin budget), beside the
// textbook sync.Cond and close(chan) barriers in the same run; the
// defaults in goroutine.go come from it:
//
//	go test -run '^$' -bench GoroutineTuning -count 10 ./barriers | benchstat -
func BenchmarkGoroutineTuning(b *testing.B) {
	for _, n := range []int{3, 8, 16, 64} {
		b.Run(fmt.Sprintf("n=%d/textbook=cond", n), func(b *testing.B) { runPeers(workload.NewCondBarrier(n), n, b.N) })
		b.Run(fmt.Sprintf("n=%d/textbook=chan", n), func(b *testing.B) { runPeers(newTextbookChan(n), n, b.N) })
		for _, y := range []int{0, 1, 2, 3} {
			for _, s := range []int{0, 8} {
				if s > 0 && y != 1 {
					continue
				}
				b.Run(fmt.Sprintf("n=%d/yields=%d/spin=%d", n, y, s), func(b *testing.B) {
					bar, err := newGoroutine(n, WithPolicy(Park))
					if err != nil {
						b.Fatal(err)
					}
					g := bar.(*goroutineBarrier)
					g.yields, g.spin = y, s
					b.ResetTimer()
					runPeers(g, n, b.N)
				})
			}
		}
	}
}
