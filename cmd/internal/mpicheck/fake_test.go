package mpicheck

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/pairs"
)

// fakeLauncher is a Program whose launcher is a shell script.
func fakeLauncher(t *testing.T, name, script string) *Program {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("no sh")
	}
	path := filepath.Join(t.TempDir(), "mpirun-fake")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &Program{Implementation: Implementation{Name: name, Compiler: "cc", Launcher: path}, Path: "/nonexistent/mpiloop"}
}

// A launcher that fails is a crash, saying what it wrote; one that hangs
// (and leaves a child holding its output) is killed with its process
// group at the limit, promptly; one whose output is not the loop's is a
// crash too.
func TestLauncherFailsOrHangs(t *testing.T) {
	p := fakeLauncher(t, OpenMPI, `echo "mpirun: no slots" >&2; exit 1`)
	if _, err := p.Run(context.Background(), Sample{Ranks: 2}); !errors.Is(err, ErrCrashed) || !strings.Contains(err.Error(), "no slots") {
		t.Errorf("failing launcher: %v, want ErrCrashed naming its message", err)
	}
	p = fakeLauncher(t, OpenMPI, `sleep 30 & sleep 30`)
	start := time.Now()
	if _, err := p.Run(context.Background(), Sample{Ranks: 2, Limit: 300 * time.Millisecond}); !errors.Is(err, ErrHung) {
		t.Errorf("hanging launcher: %v, want ErrHung", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the hung launch took %s to end", d)
	}
	p = fakeLauncher(t, MPICH, `echo hello`)
	if _, err := p.Run(context.Background(), Sample{Ranks: 2}); !errors.Is(err, ErrCrashed) {
		t.Errorf("a launcher that prints something else: %v, want ErrCrashed", err)
	}
	// A launch that ran the wrong rank count is refused.
	p = fakeLauncher(t, MPICH, `echo "chunk 0 500.0 20.0"; echo "chunk 1 510.0 20.0"; echo "ranks 1 barriers 9"; echo "library fake"`)
	if _, err := p.Run(context.Background(), Sample{Ranks: 2}); !errors.Is(err, ErrRefused) {
		t.Errorf("one rank for two: %v, want ErrRefused", err)
	}
	p = fakeLauncher(t, MPICH, `echo "chunk 0 500.0 20.0"; echo "chunk 1 700.0 30.0"; echo "chunk 2 600.0 25.0"; echo "ranks 2 barriers 9"; echo "library fake MPI 1.0"`)
	tm, err := p.Run(context.Background(), Sample{Ranks: 2})
	if err != nil || tm.NsPerBarrier != 600 || tm.SpreadNs != 25 || len(tm.Chunks) != 3 || p.Version != "fake MPI 1.0" {
		t.Errorf("a good launch: %+v %v (version %q)", tm, err, p.Version)
	}
}

// A session whose launcher hangs before it is ready, or while a run is
// timed, is killed at the limit and says so; Tune then records the count
// as not measured, and the check goes on.
func TestSessionHangs(t *testing.T) {
	p := fakeLauncher(t, OpenMPI, `sleep 30`)
	start := time.Now()
	if _, err := p.StartSession(context.Background(), SessionConfig{Ranks: 2, Limit: 300 * time.Millisecond}); !errors.Is(err, ErrHung) {
		t.Errorf("start: %v, want ErrHung", err)
	}
	p = fakeLauncher(t, OpenMPI, `echo "ready 10 fake"; read line; sleep 30`)
	s, err := p.StartSession(context.Background(), SessionConfig{Ranks: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Run(context.Background(), 0, 3, 300*time.Millisecond); !errors.Is(err, ErrHung) {
		t.Errorf("run: %v, want ErrHung", err)
	}
	s.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the hung sessions took %s to end", d)
	}
	p = fakeLauncher(t, OpenMPI, `echo "mpirun was unable to launch" >&2; exit 1`)
	cs := Tune(context.Background(), Config{Programs: []*Program{p}, Ranks: []int{2}, CPUs: 2, Verdict: nil2})
	if len(cs) != 1 || cs[0].Measured || !strings.Contains(cs[0].Why, "unable to launch") {
		t.Errorf("a failing launcher in Tune: %+v", cs)
	}
}

func nil2([]float64, []float64) (v pairs.Verdict) { return }

// As root, Open MPI's launches carry its two permission variables (and a
// user's OMPI_MCA_ variables are not passed on); not as root, neither.
func TestRootEnvironment(t *testing.T) {
	t.Setenv("OMPI_MCA_coll_tuned_barrier_algorithm", "2")
	p := &Program{Implementation: Implementation{Name: OpenMPI}, Root: "as root", ParamFiles: "/etc/openmpi/openmpi-mca-params.conf"}
	env := strings.Join(p.env([]string{"OMPI_MCA_x=1"}), "\n")
	for _, want := range []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_mca_param_files=/etc/openmpi/openmpi-mca-params.conf", "OMPI_MCA_x=1"} {
		if !strings.Contains(env, want) {
			t.Errorf("root's environment lacks %s", want)
		}
	}
	if strings.Contains(env, "barrier_algorithm") {
		t.Error("a user's OMPI_MCA_ variable reached the launch")
	}
	p.Root = ""
	if strings.Contains(strings.Join(p.env(nil), "\n"), "OMPI_ALLOW_RUN_AS_ROOT") {
		t.Error("not root, yet the permission is set")
	}
}

// TestBuildStopped: a build stopped by its context (a signal, the
// step's share of the budget) says it was stopped and why, wrapping the
// cause, and never blames a missing development package; a compiler
// that fails still does.
func TestBuildStopped(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	cc := filepath.Join(dir, "mpicc-fake")
	if err := os.WriteFile(cc, []byte("#!/bin/sh\necho 'mpi.h: No such file' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	im := Implementation{Name: MPICH, Compiler: cc, Launcher: "sh"}
	stop := errors.New("interrupted by SIGINT")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(stop)
	_, err := Build(ctx, im, t.TempDir())
	if err == nil || !errors.Is(err, stop) || !strings.Contains(err.Error(), "stopped") || strings.Contains(err.Error(), "development package") {
		t.Errorf("a stopped build: %v, want it stopped by %v, not a missing package", err, stop)
	}
	if _, err := Build(context.Background(), im, t.TempDir()); err == nil || !strings.Contains(err.Error(), "development package") {
		t.Errorf("a failing compiler: %v, want the development package named", err)
	}
}
