package check

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/child"
	"github.com/barriertune/barriertune/cmd/internal/export"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/results"
)

// The OS-thread choice above the CPUs is the C exports' (OSThreads), and
// Go's OS threads are a poor stand-in for a C program's: every blocking
// wait of theirs is a hand-over between the Go scheduler and the kernel,
// 15-20 times the episode of the exported header's own barrier, which
// yields its CPU to the threads queued on it and sleeps only after its
// bound. So where this machine has a C compiler, the check builds a
// small program (csrc/osthreads.c) against the exported header itself
// and times the candidates with it; elsewhere, or when that fails, it
// times Go's OS threads as before, and the cut says why.

// osThreadsCSource is the C measurement's program.
//
//go:embed csrc/osthreads.c
var osThreadsCSource []byte

// OSThreadsCLabel is the Label of an OS-thread choice timed in C with
// the exported header's barrier (the compiler follows in parentheses);
// OSThreadsGoLabel that of one timed with Go's OS threads.
const (
	OSThreadsCLabel  = "oversubscribed, OS threads, C"
	OSThreadsGoLabel = "oversubscribed, OS threads"
)

// osThreadsCompilers are the C compilers tried, in order.
var osThreadsCompilers = [...]string{"cc", "gcc", "clang"}

// osThreadsProbeTimeout bounds the compiler's version probes (the build
// itself is child.Compile's, within child.BuildLimit).
const osThreadsProbeTimeout = 10 * time.Second

// cOSThreads is the built C measurement.
type cOSThreads struct {
	bin string
	// compiler names the compiler and its version, e.g. "cc 12.2.0".
	compiler string
}

// osThreadsCMeasurer is a Measurer that can build the C measurement
// (Hardware).
type osThreadsCMeasurer interface {
	BuildOSThreadsC(ctx context.Context, dir string) (*cOSThreads, error)
}

// BuildOSThreadsC builds the C measurement in dir: the exported header
// without a table (the safe default; the program names each algorithm)
// and csrc/osthreads.c, with the compiler $CC names (its first word; the
// others are flags, as make takes it), else the first of cc, gcc and
// clang found.
func (Hardware) BuildOSThreadsC(ctx context.Context, dir string) (*cOSThreads, error) {
	cc, flags, err := osThreadsCompiler(os.Getenv("CC"))
	if err != nil {
		return nil, err
	}
	var h bytes.Buffer
	if err := export.Write(&h, &results.File{}, "c-barrier", export.Options{}); err != nil {
		return nil, fmt.Errorf("writing the C header: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "barriertune.h"), h.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("writing the C header: %w", err)
	}
	args := append(append([]string(nil), flags...), "-O2", "-std=c11", "-pthread")
	bin, out, err := child.Compile(ctx, cc, osThreadsCSource, dir, "osthreads", args...)
	if err != nil {
		return nil, fmt.Errorf("%s %s failed: %v: %s", filepath.Base(cc), strings.Join(args, " "), err, child.FirstLines(out.Combined(), 1))
	}
	bctx, cancel := context.WithTimeout(ctx, osThreadsProbeTimeout)
	defer cancel()
	name := filepath.Base(cc)
	for _, flag := range []string{"-dumpfullversion", "-dumpversion"} { // gcc's full version; clang's
		if v, err := child.Run(bctx, nil, cc, flag); err == nil && len(bytes.TrimSpace(v.Stdout)) > 0 {
			name += " " + child.FirstLines(v.Stdout, 1)
			break
		}
	}
	return &cOSThreads{bin: bin, compiler: name}, nil
}

// osThreadsCompiler finds the C compiler: the first word of cc ($CC) and
// the rest as flags when cc is set, else the first of osThreadsCompilers
// on PATH. A $CC that names no program is an error that says so.
func osThreadsCompiler(cc string) (path string, flags []string, err error) {
	if f := strings.Fields(cc); len(f) > 0 {
		p, err := exec.LookPath(f[0])
		if err != nil {
			return "", nil, fmt.Errorf("CC=%q: %s is not a program on PATH (set CC to a C compiler, or unset it for cc, gcc or clang)", cc, f[0])
		}
		return p, f[1:], nil
	}
	for _, c := range osThreadsCompilers {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil, nil
		}
	}
	return "", nil, fmt.Errorf("no C compiler (looked for %s; set $CC to name another)", strings.Join(osThreadsCompilers[:], ", "))
}

// run times algs with n unpinned threads: samples rounds, each run about
// target long after calibration. What the program printed before ctx
// ended is kept (a candidate may end with no sample); a program that
// fails, or prints what it should not, is an error.
func (c *cOSThreads) run(ctx context.Context, n int, algs []string, samples int, target time.Duration) (measure.Run, error) {
	args := append([]string{strconv.Itoa(n), strconv.Itoa(samples), strconv.FormatInt(target.Nanoseconds(), 10)}, algs...)
	// The default wait (auto), whatever the check's own environment sets.
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, barriers.WaitPolicyEnv+"=") })
	out, err := child.Run(ctx, env, c.bin, args...)
	if err != nil && ctx.Err() == nil {
		return measure.Run{}, fmt.Errorf("%s: %v: %s", filepath.Base(c.bin), err, child.FirstLines(out.Stderr, 1))
	}
	return parseOSThreadsC(out.Stdout, n, algs, ctx.Err() != nil)
}

// parseOSThreadsC reads the C program's lines ("sample ALGORITHM NS") into
// one result per algorithm of algs, in that order. A line that is not a
// sample of one of them, or a time that is not positive and finite, is an
// error, except for a last line cut short by a stop (partial).
func parseOSThreadsC(out []byte, n int, algs []string, partial bool) (measure.Run, error) {
	run := measure.Run{Results: make([]measure.Result, len(algs))}
	for i, a := range algs {
		run.Results[i] = measure.Result{Algorithm: a, Policy: "auto", Threads: n}
	}
	lines := strings.Split(string(out), "\n")
	for i, l := range lines {
		if l == "" {
			continue
		}
		f := strings.Fields(l)
		k := -1
		var ns float64
		var err error
		if len(f) == 3 && f[0] == "sample" {
			for j, a := range algs {
				if f[1] == a {
					k = j
				}
			}
			ns, err = strconv.ParseFloat(f[2], 64)
		}
		if k < 0 || err != nil || !(ns > 0) || math.IsInf(ns, 0) {
			if partial && i == len(lines)-1 {
				break // cut short when the program was stopped
			}
			return measure.Run{}, fmt.Errorf("the C program printed %.200q, want \"sample ALGORITHM NS\" for one of %s", l, strings.Join(algs, ", "))
		}
		run.Results[k].Samples = append(run.Results[k].Samples, ns)
	}
	for i := range run.Results {
		if len(run.Results[i].Samples) > 0 {
			run.Results[i].Summarise()
		}
	}
	return run, nil
}
