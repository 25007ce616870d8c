package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/store"
	"github.com/barriertune/barriertune/results"
)

// withRuntimes is the 2-CPU fixture with an OpenMP count and an MPI count
// measured to a decision.
func withRuntimes(t *testing.T) *results.File {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "results", "testdata", "check-2cpu.json"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := results.Parse(data, "check-2cpu.json")
	if err != nil {
		t.Fatal(err)
	}
	f.Schema = results.Schema
	f.OpenMP = &results.OpenMP{Loop: "l", Share: "s", Runtimes: []results.OpenMPRuntime{{Name: "libomp", Compiler: "clang",
		Counts: []results.OpenMPCount{{Threads: 2, DefaultNs: 5000, Why: "the defaults stay", Settings: 2, Runs: 40}}}}}
	f.MPI = &results.MPI{Loop: "l", Share: "s", Implementations: []results.MPIImplementation{{Name: "openmpi", Compiler: "mpicc", Launcher: "mpirun",
		Counts: []results.MPICount{{Ranks: 2, DefaultNs: 500, Best: "coll_tuned_barrier_algorithm=4", BestNs: 400, Settings: 6, Runs: 80}}}}}
	return f
}

// TestRuntimesLost: every way an interrupted run can lack a decision the
// old file holds (the record absent, the runtime or implementation
// absent, the count absent, not measured, not decided) is named; a run
// that decided everything old decided loses nothing.
func TestRuntimesLost(t *testing.T) {
	old := withRuntimes(t)
	cases := map[string]func(f *results.File){
		"no OpenMP record":      func(f *results.File) { f.OpenMP = nil },
		"no MPI record":         func(f *results.File) { f.MPI = nil },
		"runtime absent":        func(f *results.File) { f.OpenMP.Runtimes = nil },
		"implementation absent": func(f *results.File) { f.MPI.Implementations = nil },
		"OpenMP count absent":   func(f *results.File) { f.OpenMP.Runtimes[0].Counts = nil },
		"MPI count absent":      func(f *results.File) { f.MPI.Implementations[0].Counts = nil },
		"OpenMP not measured": func(f *results.File) {
			f.OpenMP.Runtimes[0].Counts[0] = results.OpenMPCount{Threads: 2, NotMeasured: "the OpenMP share of the budget ran out"}
		},
		"OpenMP not decided": func(f *results.File) { f.OpenMP.Runtimes[0].Counts[0].NotDecided = "not decided: 1 pair" },
		"MPI not measured": func(f *results.File) {
			f.MPI.Implementations[0].Counts[0] = results.MPICount{Ranks: 2, NotMeasured: "interrupted"}
		},
		"MPI not decided": func(f *results.File) {
			c := &f.MPI.Implementations[0].Counts[0]
			c.Best, c.BestNs, c.Why = "", 0, "not decided: 1 pair of each at most, need 4"
		},
	}
	for name, spoil := range cases {
		f := withRuntimes(t)
		spoil(f)
		if runtimesLost(f, old) == "" {
			t.Errorf("%s: nothing lost", name)
		}
	}
	f := withRuntimes(t)
	c := &f.MPI.Implementations[0].Counts[0]
	c.Best, c.BestNs, c.Why = "", 0, "the defaults stay" // decided otherwise: a decision all the same
	if lost := runtimesLost(f, old); lost != "" {
		t.Errorf("a run that decided every count lost %s", lost)
	}
	if lost := runtimesLost(withRuntimes(t), &results.File{}); lost != "" {
		t.Errorf("an old file without runtimes: lost %s", lost)
	}
}

// TestInterruptedRuntimesKeepOldFile: a check interrupted after its
// rounds, during the OpenMP and MPI steps, does not replace a file whose
// steps finished: the file stays byte for byte, the run goes beside it,
// and the error says so; where it loses nothing it replaces the file,
// with a cut saying the steps after the rounds were stopped.
func TestInterruptedRuntimesKeepOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "results.json")
	if err := store.Write(path, withRuntimes(t)); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&signalError{sig: syscall.SIGINT})
	opts := &checkOptions{global: &globalOptions{}}
	dest := store.OutputDestination("-o", path)

	cut := withRuntimes(t)
	cut.MPI.Implementations[0].Counts[0] = results.MPICount{Ranks: 2, NotMeasured: "mpicc.openmpi failed: context canceled"}
	var out bytes.Buffer
	err := writeCheckResults(ctx, opts, dest, cut, nil, &out)
	if err == nil || exitCode(err) != 130 || !strings.Contains(err.Error(), "unchanged") || !strings.Contains(err.Error(), path+".partial") {
		t.Fatalf("interrupted during MPI: %v (exit %d), want 130 naming the file unchanged and the run beside it", err, exitCode(err))
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the file whose steps finished was replaced")
	}
	side, err := results.Read(path + ".partial")
	if err != nil || !strings.Contains(strings.Join(side.Cuts, "\n"), "after the algorithms' rounds") {
		t.Errorf("the run beside it: %v, cuts %q", err, side.Cuts)
	}

	// Nothing lost: the file is replaced, its cuts say what was stopped.
	whole := withRuntimes(t)
	whole.Time = whole.Time.Add(1)
	err = writeCheckResults(ctx, opts, dest, whole, nil, &out)
	if err == nil || exitCode(err) != 130 || !strings.Contains(err.Error(), "written to "+path) {
		t.Fatalf("interrupted losing nothing: %v", err)
	}
	got, err := results.Read(path)
	if err != nil || !strings.Contains(strings.Join(got.Cuts, "\n"), "after the algorithms' rounds") {
		t.Errorf("the replaced file: %v, cuts %q", err, got.Cuts)
	}
}
