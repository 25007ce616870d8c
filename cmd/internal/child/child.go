// Package child runs the programs the tuner builds and runs on this
// machine (the OpenMP loop, the C measurement on OS threads, the MPI
// launches) as bounded child processes: a process group of their own
// where the system has them, killed as a whole when the context ends (Run)
// or when the caller says (Start, for a child it talks to), their output
// capped.
package child

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The ways a run fails (Failure), wrapped with what happened.
var (
	// ErrHung: the run overran its time limit and its process group was
	// killed.
	ErrHung = errors.New("hung: killed by its process group's id after the time limit")
	// ErrCrashed: the run died on a signal or exited with a failure.
	ErrCrashed = errors.New("crashed")
)

// Failure says why a run whose context was bounded by limit returned
// err: ctx's own error when the caller's ctx ended (a stop, not the run's
// fault), ErrHung when the run's own limit killed it, else ErrCrashed with
// err and the first lines of what it wrote on stderr.
func Failure(ctx context.Context, out Output, err error, limit time.Duration, lines int) error {
	switch {
	case out.Killed && ctx.Err() == nil:
		return fmt.Errorf("%w (%s)", ErrHung, limit)
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return fmt.Errorf("%w: %v: %s", ErrCrashed, err, FirstLines(bytes.TrimSpace(out.Stderr), lines))
}

// Output is what a child process wrote (the first MaxOutput bytes of
// each stream); Killed says its group was killed because the context
// ended.
type Output struct {
	Stdout, Stderr []byte
	Killed         bool
}

// Combined is Stdout followed by Stderr.
func (o Output) Combined() []byte { return append(append([]byte(nil), o.Stdout...), o.Stderr...) }

// MaxOutput caps what is kept of a child's stdout and stderr.
const MaxOutput = 64 << 10

// capped keeps the first MaxOutput bytes written to it. The buffer is a
// field, not embedded: an embedded bytes.Buffer's ReadFrom would let
// io.Copy (exec's copy from the pipe) write past the cap.
type capped struct{ buf bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := MaxOutput - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// Bytes is what was kept.
func (c *capped) Bytes() []byte { return c.buf.Bytes() }

// FirstLines is the first n lines of b, trimmed, joined by " | ": a
// child's error in one line.
func FirstLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " | ")
}
