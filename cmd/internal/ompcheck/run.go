package ompcheck

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/child"
	"github.com/barriertune/barriertune/cmd/internal/pairs"
)

// Sample is one run of the loops.
type Sample struct {
	// Threads is OMP_NUM_THREADS.
	Threads int
	// Seconds is how long each loop shape runs, timed (the program's
	// SECONDS); Warmup the untimed warm-up before them (WARMUP; 0 is
	// none).
	Seconds, Warmup float64
	// Work is the multiply-adds each thread does between barriers in the
	// plain barrier loop (default 64).
	Work int
	// Shapes is "barrier" or "stencil" to run one loop shape; empty runs
	// both.
	Shapes string
	// Env are the setting's variables (NAME=VALUE), added to this
	// process's environment less every OMP_, GOMP_ and KMP_ variable.
	Env []string
	// Limit is the wall time after which the run's process group is
	// killed (the run hung); 0: the run's time plus 10 s.
	Limit time.Duration
	// Tolerant accepts output on stderr (a version report); otherwise a
	// runtime's warning about a variable rejects the setting.
	Tolerant bool
}

// Timing is what one run measured.
type Timing struct {
	// Barrier and Stencil are the loop shapes' chunk times, in order:
	// each of the timed span's equal chunks' ns per barrier (nil for a
	// shape not run).
	Barrier, Stencil []float64
	// Library is the runtime the program loaded ("unknown" when the
	// dynamic linker could not say).
	Library string
	// Stderr is what the program wrote on stderr.
	Stderr string
}

// NsPerBarrier is the plain barrier loop's median chunk time (0 when it
// did not run).
func (t Timing) NsPerBarrier() float64 { return pairs.Median(t.Barrier) }

// StencilNs is the stencil's median chunk time (0 when it did not run).
func (t Timing) StencilNs() float64 { return pairs.Median(t.Stencil) }

// Steady checks every shape's chunks for steady state (pairs.Steady): an
// error wraps pairs.ErrUnsteady when a shape was still in transition.
func (t Timing) Steady() error {
	for _, c := range []struct {
		name   string
		chunks []float64
	}{{"barrier", t.Barrier}, {"stencil", t.Stencil}} {
		if c.chunks == nil {
			continue
		}
		if err := pairs.Steady(c.chunks); err != nil {
			return fmt.Errorf("the %s loop: %w", c.name, err)
		}
	}
	return nil
}

// The ways a run fails, wrapped with what happened.
var (
	// ErrHung: the run overran its limit and its process group was
	// killed (child.ErrHung).
	ErrHung = child.ErrHung
	// ErrCrashed: the run died on a signal or exited with a failure
	// (child.ErrCrashed; for a launch, also a rank that died or output
	// that was not the loop's).
	ErrCrashed = child.ErrCrashed
	// ErrRejected: the runtime warned about the setting (an invalid
	// value, or a variable this runtime version does not know).
	ErrRejected = errors.New("rejected by the runtime")
)

// maxChunks caps the chunk times read from a line of the program.
const maxChunks = 100

// Run runs the loops once as s says and returns their timing.
func (p *Program) Run(ctx context.Context, s Sample) (Timing, error) {
	if s.Threads < 1 {
		panic(fmt.Sprintf("ompcheck: Sample.Threads %d, want at least 1", s.Threads))
	}
	shapes := s.Shapes
	if shapes == "" {
		shapes = "both"
	}
	limit := s.Limit
	if limit <= 0 {
		limit = time.Duration((2*s.Seconds+s.Warmup)*float64(time.Second)) + 10*time.Second
	}
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	env := append(cleanEnv(os.Environ()), "OMP_NUM_THREADS="+strconv.Itoa(s.Threads))
	env = append(env, s.Env...)
	work := s.Work
	if work == 0 {
		work = 64
	}
	out, err := child.Run(rctx, env, p.Path, strconv.FormatFloat(s.Seconds, 'f', -1, 64), strconv.FormatFloat(s.Warmup, 'f', -1, 64), strconv.Itoa(work), shapes)
	stderr := strings.TrimSpace(string(out.Stderr))
	if err != nil {
		return Timing{}, child.Failure(ctx, out, err, limit, 2)
	}
	if !s.Tolerant && runtimeWarned(stderr) {
		return Timing{}, fmt.Errorf("%w: %s", ErrRejected, child.FirstLines([]byte(stderr), 2))
	}
	return parseTiming(string(out.Stdout), s.Threads, stderr)
}

// parseTiming reads the program's lines: "threads N library PATH", then
// one line of chunk times per shape run.
func parseTiming(stdout string, threads int, stderr string) (Timing, error) {
	t := Timing{Stderr: stderr, Library: "unknown"}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var n int
	if _, err := fmt.Sscanf(lines[0], "threads %d", &n); err != nil {
		return Timing{}, fmt.Errorf("%w: unexpected output %q", ErrCrashed, child.FirstLines([]byte(lines[0]), 1))
	}
	if _, lib, ok := strings.Cut(lines[0], " library "); ok && strings.TrimSpace(lib) != "" {
		t.Library = strings.TrimSpace(lib)
	}
	if n != threads {
		return Timing{}, fmt.Errorf("%w: the runtime ran %d threads, want %d", ErrRejected, n, threads)
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) < 2 || len(f) > maxChunks+1 {
			return Timing{}, fmt.Errorf("%w: unexpected output %q", ErrCrashed, child.FirstLines([]byte(l), 1))
		}
		chunks := make([]float64, 0, len(f)-1)
		for _, x := range f[1:] {
			v, err := strconv.ParseFloat(x, 64)
			if err != nil || !(v > 0) || math.IsInf(v, 0) {
				return Timing{}, fmt.Errorf("%w: a chunk time of %q ns per barrier", ErrCrashed, x)
			}
			chunks = append(chunks, v)
		}
		switch f[0] {
		case "barrier":
			t.Barrier = chunks
		case "stencil":
			t.Stencil = chunks
		default:
			return Timing{}, fmt.Errorf("%w: unexpected output %q", ErrCrashed, child.FirstLines([]byte(l), 1))
		}
	}
	if t.Barrier == nil && t.Stencil == nil {
		return Timing{}, fmt.Errorf("%w: no chunk times in its output", ErrCrashed)
	}
	return t, nil
}

// runtimeWarned reports whether stderr holds a runtime's complaint:
// libomp's "OMP: Warning #N" or "OMP: Error", libgomp's "libgomp: ...".
func runtimeWarned(stderr string) bool {
	return strings.Contains(stderr, "OMP: Warning") || strings.Contains(stderr, "OMP: Error") || strings.Contains(stderr, "libgomp:")
}

// cleanEnv is env without the variables the runtimes read (OMP_, GOMP_,
// KMP_): a run sees the runtime's defaults plus its setting only.
func cleanEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.HasPrefix(kv, "OMP_") || strings.HasPrefix(kv, "GOMP_") || strings.HasPrefix(kv, "KMP_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}
