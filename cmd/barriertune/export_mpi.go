package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/barriertune/barriertune/cmd/internal/check"
	"github.com/barriertune/barriertune/cmd/internal/export"
	"github.com/barriertune/barriertune/cmd/internal/mpicheck"
	"github.com/barriertune/barriertune/results"
)

// verifyMPI runs the MPI loop through the exported file written at path
// (Open MPI: mpirun --tune FILE; MPICH: its assignments in the launch's
// environment), not through forced parameters, against the defaults, at
// each count the file changes (export.MPIChecks; threads > 0: that
// count), and fails unless the file is faster than the defaults by the
// check's margin at every count that chose a setting, and within the
// margin of the check's ratio where only a launch-level setting applies.
func verifyMPI(ctx context.Context, f *results.File, format, path string, threads int, w, stderr io.Writer) error {
	var im *results.MPIImplementation
	if f.MPI != nil {
		for i := range f.MPI.Implementations {
			if f.MPI.Implementations[i].Name == format {
				im = &f.MPI.Implementations[i]
			}
		}
	}
	checks := export.MPIChecks(f, format, threads)
	if len(checks) == 0 {
		fmt.Fprintf(w, "verify: the file sets nothing (no count chose a setting): nothing to verify\n")
		return nil
	}
	var impl mpicheck.Implementation
	for _, x := range mpicheck.Implementations() {
		if x.Name == format {
			impl = x
		}
	}
	dir, err := os.MkdirTemp("", "barriertune-verify-")
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	defer os.RemoveAll(dir)
	p, err := mpicheck.Build(ctx, impl, dir)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if p.Root != "" {
		fmt.Fprintf(stderr, "verify: %s\n", p.Root)
	}
	vc := mpicheck.VerifyConfig{Margin: check.TieFraction, Progress: func(s string) { fmt.Fprintf(stderr, "\r%-100s", s) }}
	switch format {
	case mpicheck.OpenMPI:
		vc.Args = []string{"--tune", path}
	default:
		env, err := mpichAssignments(path, threads, checks)
		if err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		vc.Env = env
	}
	bad := 0
	vs := p.Verify(ctx, vc, checks)
	fmt.Fprintf(stderr, "\r%-100s\r", "")
	if im.Version != "" && p.Version != "" && p.Version != im.Version {
		fmt.Fprintf(stderr, "verify: the file was measured with %s, this is %s\n", im.Version, p.Version)
	}
	for _, v := range vs {
		fmt.Fprintf(w, "verify %s, %s\n", format, v.Describe())
		if !v.Passed() {
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("verify: at %d of %d counts the file did not do what the check measured through %s (faster than the defaults where a setting was chosen, not slower where only a launch-level setting applies)", bad, len(checks), path)
	}
	return nil
}

// mpichAssignments are the NAME=VALUE assignments of an mpich export
// (with --threads; without it, the case block's line for the count, one
// count only).
func mpichAssignments(path string, threads int, checks []mpicheck.Check) ([]string, error) {
	if threads == 0 && len(checks) != 1 {
		return nil, fmt.Errorf("an mpich export without --threads sets each count through $BARRIERTUNE_MPI_RANKS: verify one count at a time (--threads N)")
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var env []string
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") {
			continue
		}
		if i := strings.Index(l, ") export "); i >= 0 {
			l = strings.TrimSuffix(strings.TrimSpace(l[i+len(") export "):]), ";;")
		}
		// One assignment a line, or several on a case line (a k value
		// with its algorithm).
		for _, kv := range strings.Fields(l) {
			if name, value, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(name, "MPIR_CVAR_") {
				env = append(env, name+"="+strings.Trim(value, "'"))
			}
		}
	}
	return env, sc.Err()
}
