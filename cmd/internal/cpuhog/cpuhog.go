// Package cpuhog starts CPU-bound competitor processes for tests that
// measure beside a busy machine: copies of the test binary that spin until
// they are killed by their pid or their bound passes, whichever is first.
package cpuhog

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// env makes the test binary a competitor: it spins for the value in ms (at
// most a minute) and exits.
const env = "BARRIERTUNE_CPUHOG_MS"

// maxBound caps how long a competitor spins, whatever it was asked.
const maxBound = time.Minute

// Main makes this process a competitor when Start started it: it spins
// and exits. Call it first in the test binary's TestMain; otherwise it
// returns at once.
func Main() {
	v := os.Getenv(env)
	if v == "" {
		return
	}
	ms, _ := strconv.Atoi(v)
	end := time.Now().Add(min(time.Duration(max(ms, 1))*time.Millisecond, maxBound))
	for x := 0; time.Now().Before(end); x++ {
		for i := 0; i < 1e6; i++ {
			x ^= i
		}
	}
	os.Exit(0)
}

// Start starts n competitors, each bounded to bound, and returns a
// function that kills them by pid and waits for them; it also runs when
// the test ends. The test binary's TestMain must call Main.
func Start(t testing.TB, n int, bound time.Duration) (kill func()) {
	t.Helper()
	var procs []*exec.Cmd
	kill = func() {
		for _, c := range procs {
			c.Process.Kill()
			c.Wait()
		}
		procs = nil
	}
	t.Cleanup(kill)
	for range n {
		c := exec.Command(os.Args[0], "-test.run=^$")
		c.Env = append(os.Environ(), env+"="+strconv.FormatInt(bound.Milliseconds(), 10))
		if err := c.Start(); err != nil {
			kill()
			t.Fatal(err)
		}
		procs = append(procs, c)
	}
	return kill
}
