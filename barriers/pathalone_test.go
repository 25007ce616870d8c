package barriers

import "testing"

// BenchmarkPathAlone times the path a waiter adds to a transfer: one
// participant of a two-participant dissemination barrier whose partner's
// signal is always already there (its flag set far ahead), so every Wait
// is next, one signal and one satisfied check, with no cache-line
// transfer. A balanced two-thread episode costs a transfer plus this
// path; where transfers take 30 ns, each ns here is 3% of the episode.
// The hand-written C barrier's loop (docs/algorithms.md, "The loop's shape";
// figures in docs/lab/2026-11-27-host-states-epyc.md) is the reference.
func BenchmarkPathAlone(b *testing.B) {
	for _, pol := range []Policy{Spin, AutoPolicy} {
		b.Run("policy="+pol.String(), func(b *testing.B) {
			bar, err := New("dissemination", 2, WithPolicy(pol))
			if err != nil {
				b.Fatal(err)
			}
			bar.(*dissemination).flags[0].v.Store(1 << 62)
			for b.Loop() {
				bar.Wait(0)
			}
		})
	}
}
