package ompcheck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/child"
)

// Sample is one run of the barrier loop.
type Sample struct {
	// Threads is OMP_NUM_THREADS.
	Threads int
	// Seconds is how long the loop runs (the program's SECONDS).
	Seconds float64
	// Work is the multiply-adds each thread does between barriers.
	Work int
	// Env are the setting's variables (NAME=VALUE), added to this
	// process's environment less every OMP_, GOMP_ and KMP_ variable.
	Env []string
	// Limit is the wall time after which the run's process group is
	// killed (the run hung); 0: Seconds plus 10 s.
	Limit time.Duration
	// Tolerant accepts output on stderr (a version report); otherwise a
	// runtime's warning about a variable rejects the setting.
	Tolerant bool
}

// Timing is what one run measured.
type Timing struct {
	// NsPerBarrier is the median over the loop's five equal spans of time
	// of each span's time per barrier (the whole loop's time over its
	// barriers when the loop was too short for spans).
	NsPerBarrier float64
	// Library is the runtime the program loaded ("unknown" when the
	// dynamic linker could not say).
	Library string
	// Stderr is what the program wrote on stderr.
	Stderr string
}

// The ways a run fails, wrapped with what happened.
var (
	// ErrHung: the run overran its limit and its process group was
	// killed.
	ErrHung = errors.New("hung: killed by its process group's id after the time limit")
	// ErrCrashed: the run died on a signal or exited with a failure.
	ErrCrashed = errors.New("crashed")
	// ErrRejected: the runtime warned about the setting (an invalid
	// value, or a variable this runtime version does not know).
	ErrRejected = errors.New("rejected by the runtime")
)

// Run runs the loop once as s says and returns its timing.
func (p *Program) Run(ctx context.Context, s Sample) (Timing, error) {
	if s.Threads < 1 {
		panic(fmt.Sprintf("ompcheck: Sample.Threads %d, want at least 1", s.Threads))
	}
	limit := s.Limit
	if limit <= 0 {
		limit = time.Duration(s.Seconds*float64(time.Second)) + 10*time.Second
	}
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	env := append(cleanEnv(os.Environ()), "OMP_NUM_THREADS="+strconv.Itoa(s.Threads))
	env = append(env, s.Env...)
	work := s.Work
	if work == 0 {
		work = 64
	}
	out, err := child.Run(rctx, env, p.Path, strconv.FormatFloat(s.Seconds, 'f', -1, 64), "100000000", strconv.Itoa(work))
	stderr := strings.TrimSpace(string(out.Stderr))
	if err != nil {
		switch {
		case out.Killed && ctx.Err() == nil:
			return Timing{}, fmt.Errorf("%w (%s)", ErrHung, limit)
		case ctx.Err() != nil:
			return Timing{}, ctx.Err()
		}
		return Timing{}, fmt.Errorf("%w: %v: %s", ErrCrashed, err, child.FirstLines([]byte(stderr), 2))
	}
	if !s.Tolerant && runtimeWarned(stderr) {
		return Timing{}, fmt.Errorf("%w: %s", ErrRejected, child.FirstLines([]byte(stderr), 2))
	}
	t := Timing{Stderr: stderr}
	var n int
	var barriers int64
	first, rest, _ := strings.Cut(string(out.Stdout), "\n")
	if _, err := fmt.Sscanf(first, "threads %d barriers %d ns_per_barrier %g", &n, &barriers, &t.NsPerBarrier); err != nil {
		return Timing{}, fmt.Errorf("%w: unexpected output %q", ErrCrashed, first)
	}
	if _, med, ok := strings.Cut(first, " chunk_median_ns "); ok {
		if x, err := strconv.ParseFloat(strings.TrimSpace(med), 64); err == nil && x > 0 {
			t.NsPerBarrier = x
		}
	}
	if n != s.Threads {
		return Timing{}, fmt.Errorf("%w: the runtime ran %d threads, want %d", ErrRejected, n, s.Threads)
	}
	if !(t.NsPerBarrier > 0) {
		return Timing{}, fmt.Errorf("%w: a time of %g ns per barrier", ErrCrashed, t.NsPerBarrier)
	}
	t.Library = "unknown"
	if lib, ok := strings.CutPrefix(strings.TrimSpace(rest), "library "); ok {
		t.Library = strings.TrimSpace(lib)
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
