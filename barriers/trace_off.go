//go:build !barriertrace

package barriers

// traceOn is false without the barriertrace build tag. The hooks below are
// then empty and compile away, and flag.go's `if traceOn { ... }` branches
// are dead code that the inliner does not count (a constant condition costs
// nothing), so tracing leaves the hot path exactly as it is. With the tag,
// trace_on.go records every signal (into internal/trace's Tracer).
const traceOn = false

// traceWrite marks a write of the location p (a flag set, a counter
// increment, a release) by the calling participant.
func traceWrite[T any](p *T) {}

// traceSaw marks that the calling participant observed the location p reach
// what it waited for: it depends on every write to p in this episode.
func traceSaw[T any](p *T) {}

// traceWait marks that the calling participant begins to wait on p (what it
// waits for is not there yet).
func traceWait[T any](p *T) {}
