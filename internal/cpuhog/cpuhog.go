// Package cpuhog starts CPU-bound competitor processes for the tests and
// lab programs that measure beside a busy machine: copies of the running
// binary that spin until they are killed by their pid or their bound
// passes, whichever is first. It is the one CPU hog of the module.
package cpuhog

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// env makes the binary a competitor: it spins for the value in ms (at
// most maxBound) and exits.
const env = "BARRIERTUNE_CPUHOG_MS"

// maxBound caps how long a competitor spins, whatever it was asked.
const maxBound = time.Hour

// Main makes this process a competitor when Spawn or Start started it: it
// spins and exits. Call it first in the test binary's TestMain, or first
// in a program's main (before its flags are parsed); otherwise it returns
// at once.
func Main() {
	v := os.Getenv(env)
	if v == "" {
		return
	}
	ms, _ := strconv.ParseInt(v, 10, 64)
	end := time.Now().Add(min(time.Duration(max(ms, 1))*time.Millisecond, maxBound))
	for x := 0; time.Now().Before(end); x++ {
		for i := 0; i < 1e6; i++ {
			x ^= i
		}
	}
	os.Exit(0)
}

// Hogs are running competitors.
type Hogs []*exec.Cmd

// Spawn starts n competitors, each exiting by itself after bound (at most
// an hour), with the environment environ (nil: this process's). The
// binary must call Main first. They are running when it returns.
func Spawn(n int, bound time.Duration, environ []string) (Hogs, error) {
	if environ == nil {
		environ = os.Environ()
	}
	var hs Hogs
	for range n {
		c := exec.Command(os.Args[0], "-test.run=^$")
		c.Env = append(append([]string(nil), environ...), env+"="+strconv.FormatInt(bound.Milliseconds(), 10))
		if err := c.Start(); err != nil {
			hs.Stop()
			return nil, err
		}
		hs = append(hs, c)
	}
	time.Sleep(20 * time.Millisecond) // let them start spinning
	return hs, nil
}

// Stop kills every competitor by its pid and reaps it.
func (hs Hogs) Stop() {
	for _, c := range hs {
		_ = c.Process.Kill()
		_ = c.Wait()
	}
}

// Start is Spawn for a test: it fails the test when a competitor cannot
// start, and stops them all when the test ends; the function it returns
// stops them sooner. The test binary's TestMain must call Main.
func Start(t testing.TB, n int, bound time.Duration) (stop func()) {
	t.Helper()
	hs, err := Spawn(n, bound, nil)
	if err != nil {
		t.Fatal(err)
	}
	stop = func() { hs.Stop(); hs = nil }
	t.Cleanup(stop)
	return stop
}
