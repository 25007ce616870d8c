package main

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/export"
	"github.com/barriertune/barriertune/cmd/internal/ompcheck"
	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/osal"
)

// ompRunOptions are the omp-run command's flags.
type ompRunOptions struct {
	global  *globalOptions
	results string
	runtime string
	print   bool
}

func newOMPRunCmd(g *globalOptions) *cobra.Command {
	o := &ompRunOptions{global: g}
	cmd := &cobra.Command{
		Use:   "omp-run [--results FILE] [--runtime libgomp|libomp] [--print] -- PROGRAM [ARGS...]",
		Short: "Run an OpenMP program with the settings the check measured faster for it",
		Long: `Run an OpenMP program with the runtime settings the check measured faster
than its runtime's defaults, chosen when the program starts: for the
program's thread count ($OMP_NUM_THREADS, its first number; unset: one
thread per allowed CPU, the runtimes' default) and for the runtime the
program links (libgomp or libomp, read from the program's ELF dynamic
section; --runtime names it for a script or a static binary), the whole
setting the check chose at the count that serves that count (the count
itself where the check listed it, measured or not; else the nearest
measured count on the same side of the CPU count). Then it
replaces itself with the program (exec), so the program's exit status,
signals and standard streams are its own. A program that cannot be found
exits 127, one found that cannot be run (not executable, not a program)
126, as env(1) and the shells do.

A variable already in the environment is left as it is: what you set
wins. Nothing is set where the defaults stayed, where the runs were too
few to decide, or where the runtime was not measured; -v says why on
stderr. --print prints the variables it would set, one NAME=VALUE a line,
and runs nothing.

The sourced form (export --format omp-env) sets the variables both
runtimes agree on for the $OMP_NUM_THREADS exported before it is sourced;
omp-run also applies a setting that holds a variable the other runtime
reads (GOMP_CPU_AFFINITY), and applies the thread count the program
really gets.`,
		Example: `  barriertune omp-run -- ./prog
  OMP_NUM_THREADS=8 barriertune omp-run -- ./prog input.dat
  barriertune omp-run --print -- ./prog`,
		Args: func(_ *cobra.Command, args []string) error {
			if o.runtime != "" && o.runtime != ompcheck.LibGOMP && o.runtime != ompcheck.LibOMP {
				return usageErrorf("--runtime %q: want libgomp or libomp", o.runtime)
			}
			if len(args) == 0 {
				return usageErrorf("omp-run: no program given (usage: barriertune omp-run [--results FILE] -- PROGRAM [ARGS...])")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runOMPRun(o, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.SetInterspersed(false) // what follows the program is the program's
	f.StringVar(&o.results, "results", "", "results file (`FILE`; default: the lookup order of show and export)")
	f.StringVar(&o.runtime, "runtime", "", "the program's OpenMP runtime, libgomp or libomp (default: read from the program)")
	f.BoolVar(&o.print, "print", false, "print the variables that would be set, NAME=VALUE a line, and run nothing")
	registerCompletions(cmd, map[string][]string{"runtime": {ompcheck.LibGOMP, ompcheck.LibOMP}})
	return cmd
}

// programError is the error for a program omp-run cannot start, with
// env(1)'s exit codes: 127 where there is no such program (not on $PATH,
// no such file), 126 where there is one that cannot be run (no execute
// permission, a directory, not a format the kernel runs).
func programError(name string, err error) error {
	code := exitCannotRun
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		code = exitNotFound
	}
	return &exitError{code: code, err: fmt.Errorf("omp-run: program %q: %w", name, err)}
}

// ompThreads is the thread count a program started now gets: the first
// number of OMP_NUM_THREADS, else cpus.
func ompThreads(env string, cpus int) (int, error) {
	if env == "" {
		return cpus, nil
	}
	first, _, _ := strings.Cut(env, ",")
	n, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || n < 1 || n > barriers.MaxParticipants {
		return 0, usageErrorf("OMP_NUM_THREADS=%q: want a thread count 1..%d (or a comma-separated list, whose first is used)", env, barriers.MaxParticipants)
	}
	return n, nil
}

// programRuntime is the OpenMP runtime the ELF program at path links
// (from its dynamic section's needed libraries), or "" when it links
// none or is not an ELF program.
func programRuntime(path string) string {
	ef, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer ef.Close()
	libs, err := ef.ImportedLibraries()
	if err != nil {
		return ""
	}
	for _, l := range libs {
		switch {
		case strings.HasPrefix(l, "libgomp.so"):
			return ompcheck.LibGOMP
		case strings.HasPrefix(l, "libomp.so"), strings.HasPrefix(l, "libiomp5.so"):
			return ompcheck.LibOMP
		}
	}
	return ""
}

func runOMPRun(o *ompRunOptions, args []string, stdout, stderr io.Writer) error {
	prog, err := exec.LookPath(args[0])
	if err != nil {
		return programError(args[0], err)
	}
	rs, err := openResults(o.global, o.results, "")
	if err != nil {
		return err
	}
	allowed := rs.allowed
	if allowed.IsEmpty() {
		if a, err := osal.Allowed(); err == nil {
			allowed = a
		}
	}
	n, err := ompThreads(os.Getenv("OMP_NUM_THREADS"), max(allowed.Len(), 1))
	if err != nil {
		return err
	}
	rt := o.runtime
	if rt == "" {
		rt = programRuntime(prog)
	}
	vars, notes := export.OMPRunEnv(rs.File, rt, n, cpuset.Set(allowed))
	var set []string
	for _, kv := range vars {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := os.LookupEnv(k); ok {
			notes = append(notes, fmt.Sprintf("%s is already set: left as it is", k))
			continue
		}
		set = append(set, kv)
	}
	for _, note := range notes {
		o.global.verbosef(stderr, "omp-run: %s", note)
	}
	if o.print {
		for _, kv := range set {
			fmt.Fprintln(stdout, kv)
		}
		return nil
	}
	env := append(os.Environ(), set...)
	return execProgram(prog, append([]string{filepath.Base(args[0])}, args[1:]...), slices.Clip(env))
}
