package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/results"
)

// TestOMPRunPrint: omp-run reads OMP_NUM_THREADS when the program starts
// (set after the results were exported), and gives, for the runtime the
// program links (--runtime here), the setting the check chose at the
// serving count; a variable already set is left as it is.
func TestOMPRunPrint(t *testing.T) {
	data, err := os.ReadFile(exportTestdata)
	if err != nil {
		t.Fatal(err)
	}
	f, err := results.Parse(data, exportTestdata)
	if err != nil {
		t.Fatal(err)
	}
	f.OpenMP = &results.OpenMP{Loop: "the loops", Share: "1/3", Runtimes: []results.OpenMPRuntime{
		{Name: "libgomp", Compiler: "gcc", Counts: []results.OpenMPCount{{Threads: 2, DefaultNs: 900, Why: "no setting was faster", Settings: 2, Runs: 20}}},
		{Name: "libomp", Compiler: "clang", Counts: []results.OpenMPCount{{Threads: 2, DefaultNs: 1400, Best: []string{"KMP_AFFINITY=granularity=fine,compact"}, BestNs: 450, Settings: 2, Runs: 20}}},
	}}
	out, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "results.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KMP_AFFINITY", "")
	os.Unsetenv("KMP_AFFINITY")
	for _, n := range []int{1, 2, 3} {
		t.Setenv("OMP_NUM_THREADS", strconv.Itoa(n))
		code, stdout, stderr := execLine("omp-run", "--results", path, "--runtime", "libomp", "--print", "--", "true")
		if code != 0 || strings.TrimSpace(stdout) != "KMP_AFFINITY=granularity=fine,compact" {
			t.Errorf("OMP_NUM_THREADS=%d: exit %d, printed %q (%s); want libomp's KMP_AFFINITY", n, code, stdout, stderr)
		}
		code, stdout, _ = execLine("omp-run", "--results", path, "--runtime", "libgomp", "--print", "--", "true")
		if code != 0 || strings.TrimSpace(stdout) != "" {
			t.Errorf("OMP_NUM_THREADS=%d: libgomp: exit %d, printed %q; want nothing (its defaults stay)", n, code, stdout)
		}
	}
	t.Setenv("KMP_AFFINITY", "none")
	if code, stdout, _ := execLine("omp-run", "--results", path, "--runtime", "libomp", "--print", "--", "true"); code != 0 || strings.TrimSpace(stdout) != "" {
		t.Errorf("with KMP_AFFINITY already set: exit %d, printed %q; want it left as it is", code, stdout)
	}
	// Without --, the program's own flags are its own.
	if code, stdout, stderr := execLine("omp-run", "--results", path, "--runtime", "libomp", "--print", "true", "--print", "-x"); code != 0 || strings.TrimSpace(stdout) != "" {
		t.Errorf("flags after the program: exit %d, %q, %q", code, stdout, stderr)
	}
	t.Setenv("OMP_NUM_THREADS", "x")
	if code, _, stderr := execLine("omp-run", "--results", path, "--print", "--", "true"); code != 2 || !strings.Contains(stderr, "OMP_NUM_THREADS") {
		t.Errorf("OMP_NUM_THREADS=x: exit %d, %q; want a usage error naming it", code, stderr)
	}
}

// TestOMPRunBadFlagValue: a bad value of omp-run's own flag is a usage
// error that names the flag, the value and what is accepted, once, and
// none of the program's arguments (an argument validator's error once
// named the command twice and appended the program's arguments).
func TestOMPRunBadFlagValue(t *testing.T) {
	for _, args := range [][]string{
		{"omp-run", "--runtime", "intel", "--", "prog-arg0", "prog-arg1"},
		{"omp-run", "--runtime", "intel", "prog-arg0", "--print"},
	} {
		code, _, stderr := execLine(args...)
		if code != 2 || !strings.Contains(stderr, `--runtime "intel": want libgomp or libomp`) || strings.Contains(stderr, "prog-arg") || strings.Count(stderr, "barriertune") != 1 {
			t.Errorf("%v: exit %d, %q; want 2 and the flag named once, without the program's arguments", args, code, stderr)
		}
	}
}

// TestOMPRunProgramExitCodes: a program omp-run cannot start exits with
// env(1)'s codes, naming the program: 127 where there is none (not on
// $PATH, no such file), 126 where there is one that cannot be run (no
// execute permission, a directory, a file the kernel does not run).
func TestOMPRunProgramExitCodes(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "results.json")
	data, err := os.ReadFile(exportTestdata)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(results, data, 0o644); err != nil {
		t.Fatal(err)
	}
	noexec := filepath.Join(dir, "noexec")
	if err := os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Executable, but no format the kernel runs: execve fails (ENOEXEC)
	// and omp-run returns, rather than replacing the test.
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("\x00\x01\x02 not a program\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OMP_NUM_THREADS", "2")
	for _, tc := range []struct {
		prog string
		code int
	}{
		{"barriertune-no-such-program-anywhere", 127},
		{filepath.Join(dir, "missing"), 127},
		{dir, 126},
		{noexec, 126},
		{garbage, 126},
	} {
		code, _, stderr := execLine("omp-run", "--results", results, "--runtime", "libgomp", "--", tc.prog)
		if code != tc.code || !strings.Contains(stderr, strconv.Quote(tc.prog)) {
			t.Errorf("omp-run -- %s: exit %d, stderr %q; want %d naming the program", tc.prog, code, stderr, tc.code)
		}
	}
}
