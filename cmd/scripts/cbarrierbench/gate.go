package main

import (
	"fmt"
	"os"
	"time"

	"github.com/barriertune/barriertune/cmd/scripts/internal/lab"
)

// gate holds a scenario back until the host is in the state asked for:
// the one-way ping-pong between the first two allowed CPUs (the
// hand-written C program's pingpong mode) under below. The host moves
// between states that last from seconds to hours, so a figure for one
// state is taken when it comes, not when the program starts; the
// binaries are compiled before the wait, so a state that lasts a minute
// is not spent compiling.
type gate struct {
	dissem string        // the compiled dissem program ("": no gate)
	pair   string        // the two CPUs, "a,b"
	below  float64       // ns one way
	wait   time.Duration // how long to wait for the state at most
	lock   string        // a file to hold (flock) while reading and measuring ("": none)
	held   *os.File      // the lock, while held
}

// pollEvery is how often the gate reads the host state; a reading is
// 20,000 round trips, about 1 ms in the fast state and 15 ms in the slow.
const pollEvery = 5 * time.Second

// pingpong reads the one-way ping-pong between the gate's CPUs, in ns.
func (g *gate) pingpong() (float64, error) { return lab.PingPong(g.dissem, g.pair) }

// open waits until the ping-pong reads under the gate's bound with the
// lock held (where one is named: other work that holds it keeps the
// reading and the scenario off a busy machine), and returns the reading;
// the lock stays held until close. With no gate it returns 0 at once.
func (g *gate) open() (float64, error) {
	if g.dissem == "" {
		return 0, nil
	}
	deadline := time.Now().Add(g.wait)
	for {
		ok, err := g.tryLock()
		if err != nil {
			return 0, err
		}
		if ok {
			v, err := g.pingpong()
			if err != nil {
				g.close()
				return 0, fmt.Errorf("reading the host state: %w", err)
			}
			if v < g.below {
				return v, nil
			}
			g.close()
			fmt.Fprintf(os.Stderr, "cbarrierbench: %s ping-pong %.0f ns one way (waiting for under %.0f)\n", time.Now().UTC().Format("15:04:05"), v, g.below)
		}
		if time.Now().Add(pollEvery).After(deadline) {
			return 0, fmt.Errorf("the ping-pong did not read under %.0f ns one way within %s", g.below, g.wait)
		}
		time.Sleep(pollEvery)
	}
}

// close releases the lock, if held.
func (g *gate) close() {
	if g.held != nil {
		g.held.Close() // closing the last descriptor releases the flock
		g.held = nil
	}
}
