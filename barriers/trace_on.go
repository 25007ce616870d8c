//go:build barriertrace

package barriers

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"
)

// traceOn is true with the barriertrace build tag: the hooks record every
// signal into the active Tracer. Build with -tags barriertrace only to
// test; it makes every wait take the slow path.
const traceOn = true

// TraceKind says what a TraceEvent records.
type TraceKind uint8

// The events a Tracer records.
const (
	// TraceWrite: the participant wrote the location (set a flag,
	// incremented a counter, released an episode).
	TraceWrite TraceKind = iota
	// TraceSaw: the participant observed the location reach what it
	// waited for; it depends on every write to the location by another
	// participant in this episode (for a counter, the increments it
	// completed; for a flag, the set it awaited).
	TraceSaw
	// TraceWait: the participant began to wait on the location (what it
	// waits for was not there yet).
	TraceWait
)

// String names the kind.
func (k TraceKind) String() string {
	switch k {
	case TraceWrite:
		return "write"
	case TraceSaw:
		return "saw"
	case TraceWait:
		return "wait"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// TraceEvent is one recorded event: participant Participant did Kind on
// the flag or counter at address Loc. Events are in the order they were
// recorded, so each participant's events are in its program order.
type TraceEvent struct {
	Participant int
	Kind        TraceKind
	Loc         uintptr
}

// Tracer records the signals of barrier episodes (build tag barriertrace
// only). The hooks have no barrier to hang a recorder on, so the active
// Tracer is the one package-level variable of the traced build; one
// Tracer records at a time. Participants are the goroutines bound with
// Join; a hybrid's sub-barriers therefore record under the global id.
type Tracer struct {
	mu     sync.Mutex
	ids    map[uint64]int // goroutine id -> participant
	events []TraceEvent
	waited map[int]bool
	stray  int // events from goroutines that never joined
}

// activeTracer is the Tracer the hooks record into (nil: none).
var activeTracer atomic.Pointer[Tracer]

// StartTrace makes a new Tracer the active one; it fails while another is
// active.
func StartTrace() (*Tracer, error) {
	t := &Tracer{ids: map[uint64]int{}, waited: map[int]bool{}}
	if !activeTracer.CompareAndSwap(nil, t) {
		return nil, fmt.Errorf("barriers: a trace is already running (Stop it first)")
	}
	return t, nil
}

// Stop ends the recording and returns the events, or an error if some
// came from a goroutine that never called Join.
func (t *Tracer) Stop() ([]TraceEvent, error) {
	activeTracer.CompareAndSwap(t, nil)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stray > 0 {
		return t.events, fmt.Errorf("barriers: %d traced events came from goroutines that never joined the trace", t.stray)
	}
	return t.events, nil
}

// Join binds the calling goroutine to participant id: its events are
// recorded as id's.
func (t *Tracer) Join(id int) {
	g := goid()
	t.mu.Lock()
	t.ids[g] = id
	t.mu.Unlock()
}

// Waited reports whether participant id has begun to wait since the trace
// started (a TraceWait event).
func (t *Tracer) Waited(id int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.waited[id]
}

func (t *Tracer) record(k TraceKind, loc uintptr) {
	g := goid()
	t.mu.Lock()
	defer t.mu.Unlock()
	id, ok := t.ids[g]
	if !ok {
		t.stray++
		return
	}
	if k == TraceWait {
		t.waited[id] = true
	}
	t.events = append(t.events, TraceEvent{Participant: id, Kind: k, Loc: loc})
}

// goid returns the calling goroutine's id, from the header of its stack
// trace ("goroutine 42 [running]:").
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i >= 0 {
		b = b[:i]
	}
	g, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		panic("barriers: cannot read the goroutine id from " + strconv.Quote(string(buf[:])))
	}
	return g
}

func traceRecord(k TraceKind, p unsafe.Pointer) {
	if t := activeTracer.Load(); t != nil {
		t.record(k, uintptr(p))
	}
}

// traceWrite records a write of p by the calling participant.
func traceWrite[T any](p *T) { traceRecord(TraceWrite, unsafe.Pointer(p)) }

// traceSaw records that the calling participant observed p reach what it
// waited for.
func traceSaw[T any](p *T) { traceRecord(TraceSaw, unsafe.Pointer(p)) }

// traceWait records that the calling participant begins to wait on p.
func traceWait[T any](p *T) { traceRecord(TraceWait, unsafe.Pointer(p)) }
