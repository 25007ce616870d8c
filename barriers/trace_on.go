//go:build barriertrace

package barriers

import (
	"unsafe"

	"github.com/barriertune/barriertune/internal/trace"
)

// traceOn is true with the barriertrace build tag: the hooks record every
// signal into the active trace.Tracer. Build with -tags barriertrace only
// to test; it makes every wait take the slow path.
const traceOn = true

// traceWrite records a write of p by the calling participant.
func traceWrite[T any](p *T) { trace.Record(trace.Write, uintptr(unsafe.Pointer(p))) }

// traceSaw records that the calling participant observed p reach what it
// waited for.
func traceSaw[T any](p *T) { trace.Record(trace.Saw, uintptr(unsafe.Pointer(p))) }

// traceWait records that the calling participant begins to wait on p.
func traceWait[T any](p *T) { trace.Record(trace.Wait, uintptr(unsafe.Pointer(p))) }
