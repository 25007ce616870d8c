package check

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cmd/internal/mpicheck"
	"github.com/barriertune/barriertune/results"
)

// noMPI is the live measurer with implementations that are not
// installed.
type noMPI struct{ Hardware }

func (noMPI) MPIImplementations() []mpicheck.Implementation {
	return []mpicheck.Implementation{
		{Name: mpicheck.OpenMPI, Compiler: "barriertune-no-mpicc", Launcher: "barriertune-no-mpirun"},
		{Name: mpicheck.MPICH, Compiler: "barriertune-no-mpicc.mpich", Launcher: "barriertune-no-mpirun.mpich"},
	}
}

// TestMPIMissing: without an implementation, each is recorded as not
// installed, in one line each, and the step returns at once; told to
// measure no MPI (--runtimes openmp), it records nothing.
func TestMPIMissing(t *testing.T) {
	f := openMPFile()
	start := time.Now()
	measureMPI(context.Background(), f, Config{Budget: time.Minute, Algorithms: catalog.Names()}, noMPI{}, start.Add(20*time.Second))
	if f.MPI == nil || len(f.MPI.Implementations) != 2 {
		t.Fatalf("got %+v, want both implementations recorded", f.MPI)
	}
	for _, im := range f.MPI.Implementations {
		if !strings.Contains(im.NotMeasured, "not installed") || len(im.Counts) != 0 {
			t.Errorf("%s: %+v, want not measured: not installed", im.Name, im)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the step took %s without an implementation", d)
	}
	f = openMPFile()
	measureMPI(context.Background(), f, Config{Budget: time.Minute, Algorithms: catalog.Names(), Runtimes: []string{RuntimeOpenMP}}, noMPI{}, start.Add(20*time.Second))
	if f.MPI != nil {
		t.Errorf("--runtimes openmp recorded MPI: %+v", f.MPI)
	}
}

// TestParseRuntimes: the accepted lists, and refusals naming the value
// and what is accepted.
func TestParseRuntimes(t *testing.T) {
	for in, want := range map[string]string{"openmp,openmpi,mpich": "openmp openmpi mpich", "none": "", "mpich": "mpich"} {
		got, err := ParseRuntimes(in)
		if err != nil || strings.Join(got, " ") != want || got == nil {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{"intelmpi": `"intelmpi": unknown (accepted: openmp, openmpi, mpich, or none alone)`, "openmp,none": `"none": none measures no runtime, so it stands alone`, "none,openmp": "stands alone", "OpenMPI": `"OpenMPI": unknown; did you mean "openmpi"?`, "mpich,mpich": "twice", "": `""`} {
		if _, err := ParseRuntimes(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error naming %s", in, err, want)
		}
	}
}

// fakeOpenMPI is a Program whose launcher is a shell script that times
// every launch at 1000 ns a barrier, 500 at 8 ranks with linear forced or
// set by a rules file, 700 at 2 ranks unbound, and 5000 at 8 ranks with
// coll/sm; it reads a --tune file as mpirun would, unless
// BARRIERTUNE_FAKE_IGNORE is set (a file Open MPI ignored).
func fakeOpenMPI(t *testing.T) *mpicheck.Program {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("no sh")
	}
	script := `#!/bin/sh
n=$3; t=1000
if [ "$4" = --tune ] && [ -z "$BARRIERTUNE_FAKE_IGNORE" ]; then
  grep -q "^coll_tuned_dynamic_rules_filename = /" "$5" && [ $n = 8 ] && t=500
  grep -q "^hwloc_base_binding_policy = none$" "$5" && [ $n = 2 ] && t=700
fi
[ "$OMPI_MCA_coll_tuned_barrier_algorithm" = 1 ] && [ $n = 8 ] && t=500
[ "$OMPI_MCA_hwloc_base_binding_policy" = none ] && [ $n = 2 ] && t=700
[ "$OMPI_MCA_coll_sm_priority" = 100 ] && [ $n = 8 ] && t=5000
i=0; while [ $i -lt 9 ]; do echo "chunk $i $t 10"; i=$((i+1)); done
echo "ranks $n barriers 100"; echo "library Open MPI v4.1.4, fake"
`
	path := filepath.Join(t.TempDir(), "mpirun-fake")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return &mpicheck.Program{Implementation: mpicheck.Implementation{Name: mpicheck.OpenMPI, Compiler: "cc", Launcher: path}, Path: "/nonexistent/mpiloop", CollSM: true, CollSMDegree: 4}
}

// fakeLaunchFile is a file whose Open MPI record chose linear at 8 ranks.
func fakeLaunchFile() *results.File {
	return &results.File{MPI: &results.MPI{Implementations: []results.MPIImplementation{{Name: mpicheck.OpenMPI, Launcher: "fake", Version: "Open MPI v4.1.4, fake", Counts: []results.MPICount{
		{Ranks: 2, DefaultNs: 1000, Why: "no setting was faster"},
		{Ranks: 4, DefaultNs: 1000, Why: "no setting was faster"},
		{Ranks: 8, DefaultNs: 1000, Best: "coll_tuned_barrier_algorithm=1", BestNs: 500, MarginPct: 100, Test: "fake"},
	}}}}}
}

// TestMPILaunchAndVerify: the launch-level settings are timed against
// each count's export without them (linear forced at 8 ranks); the one
// faster at 2 ranks and even elsewhere is chosen, coll/sm (5x at 8 ranks)
// is not; the export through --tune then reproduces the chosen times at
// every count it changes. On a busy machine nothing is chosen; a file
// the implementation ignores is not reproduced; without time left, the
// counts say so.
func TestMPILaunchAndVerify(t *testing.T) {
	p := fakeOpenMPI(t)
	tune := mpicheck.Config{Programs: []*mpicheck.Program{p}, Ranks: []int{2, 4, 8}, CPUs: 2, Verdict: mpiVerdict, Now: time.Now}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := fakeLaunchFile()
	r := &f.MPI.Implementations[0]
	measureLaunch(ctx, r, p, tune, nil, "")
	if r.LaunchChosen != "hwloc_base_binding_policy=none" {
		t.Fatalf("chosen %q, want binding none\n%s", r.LaunchChosen, strings.Join(r.LaunchWhy, "\n"))
	}
	for _, c := range r.Launch {
		switch {
		case c.Setting == "coll_sm_priority=100" && c.Ranks == 8 && !c.Slower:
			t.Errorf("coll/sm at 8 ranks: %+v, want slower", c)
		case c.Ranks == 8 && c.Setting == r.LaunchChosen && (c.Baseline != "coll_tuned_barrier_algorithm=1 (the count's chosen setting)" || c.DefaultNs != 500):
			t.Errorf("at 8 ranks the baseline is the chosen algorithm: %+v", c)
		case c.Ranks == 2 && c.Setting == r.LaunchChosen && c.Best != r.LaunchChosen:
			t.Errorf("binding none at 2 ranks: %+v, want faster", c)
		}
	}
	dir := t.TempDir()
	verifyMPI(ctx, f, r, p, dir, Hardware{}, time.Now().Add(time.Minute), nil)
	for _, c := range r.Counts {
		if c.Verify != "reproduced" || c.VerifyWhy == "" {
			t.Errorf("%d ranks: verify %q %q (ratio %g), want reproduced", c.Ranks, c.Verify, c.VerifyWhy, c.VerifyRatio)
		}
	}
	if r.Counts[0].VerifyRatio != 0.7 || r.Counts[2].VerifyRatio != 0.5 {
		t.Errorf("verify ratios %g at 2, %g at 8, want 0.7 and 0.5", r.Counts[0].VerifyRatio, r.Counts[2].VerifyRatio)
	}
	// The same file, ignored by the implementation.
	t.Setenv("BARRIERTUNE_FAKE_IGNORE", "1")
	verifyMPI(ctx, f, r, p, dir, Hardware{}, time.Now().Add(time.Minute), nil)
	if c := r.Counts[2]; c.Verify != "not_reproduced" || !strings.Contains(c.VerifyWhy, "NOT reproduced") {
		t.Errorf("an ignored file at 8 ranks: %q %q", c.Verify, c.VerifyWhy)
	}
	if c := r.Counts[1]; c.Verify != "reproduced" {
		t.Errorf("an ignored file at 4 ranks, where it changes nothing measurable: %q %q", c.Verify, c.VerifyWhy)
	}
	// No time left.
	verifyMPI(ctx, f, r, p, dir, Hardware{}, time.Now(), nil)
	if c := r.Counts[2]; c.Verify != "not_verified" || !strings.Contains(c.VerifyWhy, "budget") || !strings.Contains(c.VerifyWhy, "--verify") {
		t.Errorf("no time: %q %q", c.Verify, c.VerifyWhy)
	}
	// Busy: measured, not chosen.
	f = fakeLaunchFile()
	r = &f.MPI.Implementations[0]
	measureLaunch(ctx, r, p, tune, nil, "others ran 3 threads")
	if r.LaunchChosen != "" || !strings.Contains(strings.Join(r.LaunchWhy, "\n"), "busy") {
		t.Errorf("busy: chosen %q\n%s", r.LaunchChosen, strings.Join(r.LaunchWhy, "\n"))
	}
	for _, c := range r.Launch {
		if c.Best != "" {
			t.Errorf("busy, yet %s is best at %d ranks", c.Setting, c.Ranks)
		}
	}
	f.Schema = results.Schema
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := results.Parse(data, "x"); err != nil && strings.Contains(err.Error(), "mpi") {
		t.Errorf("the record does not validate: %v", err)
	}
}

// MPICH's export is verified with its assignments in the launch's
// environment, count by count.
func TestMPICHVerify(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no sh")
	}
	script := `#!/bin/sh
n=$2; t=1000
[ "$MPIR_CVAR_BARRIER_INTRA_ALGORITHM" = smp ] && [ $n = 2 ] && t=700
i=0; while [ $i -lt 9 ]; do echo "chunk $i $t 10"; i=$((i+1)); done
echo "ranks $n barriers 100"; echo "library MPICH fake"
`
	path := filepath.Join(t.TempDir(), "mpirun-fake")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	p := &mpicheck.Program{Implementation: mpicheck.Implementation{Name: mpicheck.MPICH, Compiler: "cc", Launcher: path}, Path: "/nonexistent/mpiloop"}
	f := &results.File{MPI: &results.MPI{Implementations: []results.MPIImplementation{{Name: mpicheck.MPICH, Launcher: "fake", Version: "MPICH fake", Counts: []results.MPICount{
		{Ranks: 2, DefaultNs: 1000, Best: "MPIR_CVAR_BARRIER_INTRA_ALGORITHM=smp", BestNs: 700, MarginPct: 43, Test: "fake"},
		{Ranks: 4, DefaultNs: 8e6, Why: "MPICH costs 8.0 ms"},
	}}}}}
	r := &f.MPI.Implementations[0]
	verifyMPI(context.Background(), f, r, p, t.TempDir(), Hardware{}, time.Now().Add(time.Minute), nil)
	if c := r.Counts[0]; c.Verify != "reproduced" || c.VerifyRatio != 0.7 {
		t.Errorf("2 ranks: %q %g %q", c.Verify, c.VerifyRatio, c.VerifyWhy)
	}
	if c := r.Counts[1]; c.Verify != "" {
		t.Errorf("4 ranks, where the file sets nothing: %q", c.Verify)
	}
}

// TestMPIStoppedCounts: a signal during the MPI step leaves no count that
// chose nothing looking decided (its defaults may have stayed only
// because the signal cut its pairs); a chosen setting, a count not
// measured and MPICH's cost above the CPUs keep what they say.
func TestMPIStoppedCounts(t *testing.T) {
	counts := []results.MPICount{
		{Ranks: 2, DefaultNs: 500, Why: "no candidate was faster than the defaults: the defaults stay"},
		{Ranks: 3, DefaultNs: 900, Best: "coll_tuned_barrier_algorithm=1", BestNs: 600},
		{Ranks: 4, NotMeasured: "the MPI share of the budget ran out"},
		{Ranks: 8, DefaultNs: 8e6, Why: "MPICH costs 8.0 ms a barrier at 8 ranks on 2 CPUs"},
	}
	stoppedCounts(counts, errors.New("interrupted by SIGINT"))
	if w := counts[0].Why; !strings.HasPrefix(w, "not decided: the check was stopped (interrupted by SIGINT)") {
		t.Errorf("2 ranks, defaults stayed when stopped: %q", w)
	}
	if counts[1].Best == "" || counts[1].Why != "" || counts[2].Why != "" || !strings.HasPrefix(counts[3].Why, "MPICH costs") {
		t.Errorf("chosen, not measured or cost-only changed: %+v", counts[1:])
	}
}
