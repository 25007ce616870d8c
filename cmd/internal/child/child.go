// Package child runs the programs the tuner builds and runs on this
// machine (the OpenMP loop, the C measurement on OS threads, the MPI
// launches) as bounded child processes: a process group of their own
// where the system has them, killed as a whole when the context ends (Run)
// or when the caller says (Start, for a child it talks to), their output
// capped.
package child

import (
	"bytes"
	"strings"
)

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
