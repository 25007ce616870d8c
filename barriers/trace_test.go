//go:build barriertrace

package barriers

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/barriertune/barriertune/internal/trace"
)

// traceRun runs one episode of b with every participant joined to tr.
func traceRun(tr *trace.Tracer, b Barrier, join bool) {
	var wg sync.WaitGroup
	for id := 0; id < b.N(); id++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			if join {
				tr.Join(id)
			}
			b.Wait(id)
		}(id)
	}
	wg.Wait()
}

// One trace at a time; Stop makes room for the next.
func TestTraceExclusive(t *testing.T) {
	tr, err := trace.Start()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := trace.Start(); err == nil {
		t.Fatal("a second trace started while one runs")
	}
	if _, err := tr.Stop(); err != nil {
		t.Fatal(err)
	}
	tr2, err := trace.Start()
	if err != nil {
		t.Fatalf("after Stop: %v", err)
	}
	tr2.Stop()
}

// Dissemination with 2 participants: each sets the other's flag and
// observes its own, so the trace pairs every write with the other's
// observation of the same flag.
func TestTraceDissemination(t *testing.T) {
	b, err := New("dissemination", 2, WithPolicy(Park), WithSpinBudget(0))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.Start()
	if err != nil {
		t.Fatal(err)
	}
	traceRun(tr, b, true)
	events, err := tr.Stop()
	if err != nil {
		t.Fatal(err)
	}
	wrote := map[int]uintptr{}
	saw := map[int]uintptr{}
	for _, ev := range events {
		switch ev.Kind {
		case trace.Write:
			wrote[ev.Participant] = ev.Loc
		case trace.Saw:
			saw[ev.Participant] = ev.Loc
		}
	}
	d := b.(*dissemination)
	for p := 0; p < 2; p++ {
		mine := uintptr(unsafe.Pointer(&d.flags[p]))
		if saw[p] != mine || wrote[1-p] != mine {
			t.Errorf("participant %d saw %#x, %d wrote %#x; want both %#x (its flag)", p, saw[p], 1-p, wrote[1-p], mine)
		}
	}
}

// Events from goroutines that never joined are an error, not silently
// another participant's.
func TestTraceStray(t *testing.T) {
	b, err := New("central", 2, WithPolicy(Park), WithSpinBudget(0))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.Start()
	if err != nil {
		t.Fatal(err)
	}
	traceRun(tr, b, false)
	if _, err := tr.Stop(); err == nil {
		t.Fatal("events of goroutines that never joined were accepted")
	}
}
