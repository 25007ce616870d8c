package sysload

import (
	"sync"
	"time"
)

// Watch reads the machine every interval in a goroutine of its own until
// Stop.
type Watch struct {
	p        Proc
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	readings []Reading
	err      error
}

// maxReadings caps what a Watch keeps: past it, every other reading is
// dropped (the first and the latest stay), so a watch of days stays
// small.
const maxReadings = 4096

// Start starts a Watch that reads p at once and then every interval
// (at least a millisecond).
func Start(p Proc, interval time.Duration) *Watch {
	w := &Watch{p: p, stop: make(chan struct{}), done: make(chan struct{})}
	w.read()
	go func() {
		defer close(w.done)
		t := time.NewTicker(max(interval, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
				w.read()
			}
		}
	}()
	return w
}

func (w *Watch) read() {
	r, err := w.p.Read()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if w.err == nil {
			w.err = err
		}
		return
	}
	w.readings = append(w.readings, r)
	if len(w.readings) > maxReadings {
		keep := w.readings[:1]
		for i := 2; i < len(w.readings); i += 2 {
			keep = append(keep, w.readings[i])
		}
		if keep[len(keep)-1].When != r.When {
			keep = append(keep, r)
		}
		w.readings = keep
	}
}

// Stop takes a last reading, ends the watch and sums up what it saw; the
// error is the first failed reading's (a system without these files).
// Stop may be called once.
func (w *Watch) Stop() (Summary, error) {
	close(w.stop)
	<-w.done
	w.read()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil && len(w.readings) < 2 {
		return Summary{}, w.err
	}
	return Summarise(w.readings, w.p.cpus()), nil
}
