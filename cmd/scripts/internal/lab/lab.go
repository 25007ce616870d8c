// Package lab holds what the measurement scripts share: child processes
// run under a time limit and killed by their pid when they overrun, C
// programs compiled for a comparison, the machine's load for the figures'
// labels, and the median.
package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/internal/osal"
)

// Run runs name with args under limit (the process is killed when it
// overruns, and its pipes are closed a second later) and returns its
// standard output, or its output and standard error together when
// combined. env nil inherits this process's environment.
func Run(limit time.Duration, env []string, combined bool, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.WaitDelay = time.Second
	var out []byte
	var err error
	if combined {
		out, err = cmd.CombinedOutput()
	} else {
		out, err = cmd.Output()
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("killed after %s: %w", limit, err)
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			first, _, _ := strings.Cut(strings.TrimSpace(string(ee.Stderr)), "\n")
			err = fmt.Errorf("%w: %s", err, first)
		}
		return out, fmt.Errorf("%s %s: %w", filepath.Base(name), strings.Join(args, " "), err)
	}
	return out, nil
}

// CompileC writes src to dir/name.c and compiles it with cc and flags into
// dir/name (within two minutes), returning the binary's path; the error
// holds the compiler's first line of output.
func CompileC(cc, dir, name string, src []byte, flags ...string) (string, error) {
	path, err := exec.LookPath(cc)
	if err != nil {
		return "", fmt.Errorf("no %s on PATH", cc)
	}
	file, bin := filepath.Join(dir, name+".c"), filepath.Join(dir, name)
	if err := os.WriteFile(file, src, 0o644); err != nil {
		return "", err
	}
	args := append(slices.Clone(flags), "-o", bin, file)
	if out, err := Run(2*time.Minute, nil, true, path, args...); err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		return "", fmt.Errorf("%w: %s", err, first)
	}
	return bin, nil
}

// Load is the load average now, "1 min, 5 min, 15 min" ("unknown" where
// /proc/loadavg cannot be read), for labelling figures.
func Load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}

// Median is the median of v (NaN-free), 0 for none; v is not changed.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// Usagef is an error in a script's arguments: Main exits 2 for it.
func Usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

type usageError struct{ error }

// Main runs a script's run function and exits: 0 when it succeeds, 2 for
// an error made by Usagef, else 1, the error printed after the script's
// name.
func Main(name string, run func() error) {
	err := run()
	if err == nil {
		return
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
	if errors.As(err, new(usageError)) {
		os.Exit(2)
	}
	os.Exit(1)
}

// Counts reads a comma-separated list of counts (thread or rank counts)
// given to flag name, each 1 to most, sorted and without repeats; a bad
// entry is a usage error naming it.
func Counts(name, list, what string, most int) ([]int, error) {
	var counts []int
	for _, s := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > most {
			return nil, Usagef("%s: %q is not a %s count (want 1 to %d, comma-separated)", name, s, what, most)
		}
		counts = append(counts, n)
	}
	slices.Sort(counts)
	return slices.Compact(counts), nil
}

// BuildTool builds the barriertune command into a new temporary
// directory (the script runs from the module root) and returns its path
// and the directory, which the caller removes.
func BuildTool(script string) (tool, dir string, err error) {
	dir, err = os.MkdirTemp("", script+"-")
	if err != nil {
		return "", "", err
	}
	tool = filepath.Join(dir, "barriertune")
	if out, err := Run(5*time.Minute, nil, true, "go", "build", "-o", tool, "./cmd/barriertune"); err != nil {
		os.RemoveAll(dir)
		return "", "", fmt.Errorf("building barriertune (run %s from the module root): %v\n%s", script, err, out)
	}
	return tool, dir, nil
}

// HostFloor is the check's floor (measure.PingPongLatency: one barrier
// flag signal) between the first two CPUs this process may use, in ns;
// 0 where there are not two or it cannot be measured. A VM's host moves
// its vCPUs between states whose floors are several times apart, and a
// barrier's time moves with them: the scripts read it around their
// rounds to say which state the rounds ran in.
func HostFloor() float64 {
	set, err := osal.Allowed()
	if err != nil || set.Len() < 2 {
		return 0
	}
	cpus := set.Members()
	pp, err := measure.PingPongLatency(cpus[0], cpus[1], measure.Options{Samples: 15})
	if err != nil {
		return 0
	}
	return pp.MedianNs
}

// PingPong runs the hand-written C program bin (cmd/scripts/cdissem's
// dissem.c) in its pingpong mode between the CPUs of pair ("a,b"), 20,000
// round trips (1-15 ms), and returns the one-way latency in ns: the host
// state's reading.
func PingPong(bin, pair string) (float64, error) {
	out, err := Run(time.Minute, nil, false, bin, "pingpong", pair, "20000")
	if err != nil {
		return 0, fmt.Errorf("C ping-pong: %w", err)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		return 0, fmt.Errorf("C ping-pong printed %q", out)
	}
	return v, nil
}
