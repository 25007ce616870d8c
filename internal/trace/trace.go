// Package trace records the signals of barrier episodes: which participant
// wrote, waited on and observed which flag or counter. The barriers package
// records into the active Tracer only when built with -tags barriertrace
// (its hooks compile away otherwise); the model's signal-pattern test
// compares these traces with the patterns it predicts. It is test
// machinery of the tuner, not API.
package trace

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
)

// Kind says what an Event records.
type Kind uint8

// The events a Tracer records.
const (
	// Write: the participant wrote the location (set a flag,
	// incremented a counter, released an episode).
	Write Kind = iota
	// Saw: the participant observed the location reach what it
	// waited for; it depends on every write to the location by another
	// participant in this episode (for a counter, the increments it
	// completed; for a flag, the set it awaited).
	Saw
	// Wait: the participant began to wait on the location (what it
	// waits for was not there yet).
	Wait
)

// Event is one recorded event: participant Participant did Kind on
// the flag or counter at address Loc. Events are in the order they were
// recorded, so each participant's events are in its program order.
type Event struct {
	Participant int
	Kind        Kind
	Loc         uintptr
}

// Tracer records the signals of barrier episodes. The barriers package's
// hooks (build tag barriertrace) have no barrier to hang a recorder on, so
// the active Tracer is this package's one package-level variable; one
// Tracer records at a time. Participants are the goroutines bound with
// Join; a hybrid's sub-barriers therefore record under the global id.
type Tracer struct {
	mu     sync.Mutex
	ids    map[uint64]int // goroutine id -> participant
	events []Event
	waited map[int]bool
	stray  int // events from goroutines that never joined
}

// activeTracer is the Tracer the hooks record into (nil: none).
var activeTracer atomic.Pointer[Tracer]

// Start makes a new Tracer the active one; it fails while another is
// active.
func Start() (*Tracer, error) {
	t := &Tracer{ids: map[uint64]int{}, waited: map[int]bool{}}
	if !activeTracer.CompareAndSwap(nil, t) {
		return nil, fmt.Errorf("trace: a trace is already running (Stop it first)")
	}
	return t, nil
}

// Stop ends the recording and returns the events, or an error if some
// came from a goroutine that never called Join.
func (t *Tracer) Stop() ([]Event, error) {
	activeTracer.CompareAndSwap(t, nil)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stray > 0 {
		return t.events, fmt.Errorf("trace: %d traced events came from goroutines that never joined the trace", t.stray)
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
// started (a Wait event).
func (t *Tracer) Waited(id int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.waited[id]
}

func (t *Tracer) record(k Kind, loc uintptr) {
	g := goid()
	t.mu.Lock()
	defer t.mu.Unlock()
	id, ok := t.ids[g]
	if !ok {
		t.stray++
		return
	}
	if k == Wait {
		t.waited[id] = true
	}
	t.events = append(t.events, Event{Participant: id, Kind: k, Loc: loc})
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
		panic("trace: cannot read the goroutine id from " + strconv.Quote(string(buf[:])))
	}
	return g
}

// Record records an event of kind k on the location loc by the calling
// goroutine into the active Tracer, if any.
func Record(k Kind, loc uintptr) {
	if t := activeTracer.Load(); t != nil {
		t.record(k, loc)
	}
}
