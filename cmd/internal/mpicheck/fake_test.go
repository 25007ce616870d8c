package mpicheck

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/pairs"
	"github.com/barriertune/barriertune/cpuset"
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

// fakeTimes is a fake launcher's script that times every launch at a
// base of 1000 ns a barrier, changed by the settings in its environment
// as body says (shell: n is the rank count, t the time).
func fakeTimes(body string) string {
	return `n=$3; t=1000
` + body + `
i=0; while [ $i -lt 9 ]; do echo "chunk $i $t 10"; i=$((i+1)); done
echo "ranks $n barriers 100"; echo "library fake MPI 1.0"`
}

func fakeVerdict(d, s []float64) pairs.Verdict {
	v := pairs.Verdict{MarginPct: 100 * (pairs.Median(d)/pairs.Median(s) - 1), Test: "fake"}
	v.Faster = v.MarginPct > 3
	return v
}

func launchResult(t *testing.T, rs []LaunchResult, setting string) LaunchResult {
	t.Helper()
	for _, r := range rs {
		if r.Setting == setting {
			return r
		}
	}
	t.Fatalf("no result for %s in %+v", setting, rs)
	return LaunchResult{}
}

// A launch-level setting faster at one count and slower at another is
// not chosen (a parameter file applies it to every count), whether the
// screening pair or the pairs find it slower; one faster at a count and
// even at the others is; a setting slower at the largest count is not
// timed again.
func TestTuneLaunchWinsAndLoses(t *testing.T) {
	p := fakeLauncher(t, OpenMPI, fakeTimes(`
case "$OMPI_MCA_hwloc_base_binding_policy" in none) if [ $n = 2 ]; then t=500; else t=2000; fi;; esac
case "$OMPI_MCA_coll_sm_priority" in 100) if [ $n = 2 ]; then t=500; else t=1150; fi;; esac
case "$OMPI_MCA_rmaps_base_mapping_policy" in core) if [ $n = 4 ]; then t=500; fi;; esac`))
	cands := []LaunchCandidate{{Setting: "hwloc_base_binding_policy=none", Scope: "binding"}, {Setting: "coll_sm_priority=100", Scope: "sm"}, {Setting: "rmaps_base_mapping_policy=core", Scope: "mapping"}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rs := TuneLaunch(ctx, Config{Verdict: fakeVerdict, RunLimit: 10 * time.Second}, LaunchConfig{Program: p, Candidates: cands, Ranks: []int{2, 4}})
	none := launchResult(t, rs, "hwloc_base_binding_policy=none")
	if none.Chosen || !none.Counts[1].Slower || none.Counts[1].Ranks != 4 || none.Counts[0].Measured || !strings.Contains(none.Counts[0].Why, "not timed") {
		t.Errorf("binding none (faster at 2, 2x at 4): %+v", none)
	}
	sm := launchResult(t, rs, "coll_sm_priority=100")
	if sm.Chosen || !sm.Counts[1].Slower || sm.Counts[1].Ratio < 1.1 || !strings.Contains(sm.Why, "slower at 4 ranks") {
		t.Errorf("coll/sm (1.15x at 4 in pairs): %+v", sm)
	}
	m := launchResult(t, rs, "rmaps_base_mapping_policy=core")
	if !m.Chosen || !m.Counts[1].Faster || m.Counts[0].Faster || m.Counts[0].Slower || !m.Counts[0].Measured || !strings.HasPrefix(m.Why, "chosen") {
		t.Errorf("mapping (faster at 4, even at 2): %+v", m)
	}
	if m.Counts[1].Baseline != "the defaults" || m.Counts[1].BaseNs != 1000 || m.Counts[1].Ns != 500 {
		t.Errorf("mapping at 4 ranks: %+v", m.Counts[1])
	}
}

// A launch-level setting whose launch crashes, hangs or is refused is
// reported and never chosen; one the time did not reach at some count is
// not chosen either.
func TestTuneLaunchFailures(t *testing.T) {
	p := fakeLauncher(t, OpenMPI, fakeTimes(`
case "$OMPI_MCA_coll_sm_priority" in 100) echo "rank 1 died: signal 11" >&2; exit 1;; esac
case "$OMPI_MCA_hwloc_base_binding_policy" in none) sleep 30;; esac
case "$OMPI_MCA_rmaps_base_mapping_policy" in bogus) echo "WARNING: the mapping policy bogus is not recognized" >&2;; esac
case "$OMPI_MCA_coll_sm_tree_degree" in 2) t=500;; esac`))
	cands := []LaunchCandidate{{Setting: "coll_sm_priority=100", Scope: "crash"}, {Setting: "hwloc_base_binding_policy=none", Scope: "hang"}, {Setting: "rmaps_base_mapping_policy=bogus", Scope: "refused"}, {Setting: "coll_sm_tree_degree=2", Scope: "wins, but only one count is reached"}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	rs := TuneLaunch(ctx, Config{Verdict: fakeVerdict, RunLimit: 500 * time.Millisecond}, LaunchConfig{Program: p, Candidates: cands, Ranks: []int{2}})
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %s", d)
	}
	for _, s := range cands[:3] {
		r := launchResult(t, rs, s.Setting)
		if r.Chosen || r.Counts[0].Failed == "" || !strings.Contains(r.Why, "never chosen") {
			t.Errorf("%s (%s): %+v", s.Setting, s.Scope, r)
		}
	}
	if r := launchResult(t, rs, "coll_sm_tree_degree=2"); !r.Chosen {
		t.Errorf("the winner among failures: %+v", r)
	}
	// The same winner, where the time runs out before the second count.
	ctx, cancel = context.WithCancel(context.Background())
	cfg := Config{Verdict: fakeVerdict, Progress: func(s string) {
		if strings.Contains(s, ", 2 ranks") {
			cancel()
		}
	}}
	rs = TuneLaunch(ctx, cfg, LaunchConfig{Program: p, Candidates: cands[3:], Ranks: []int{2, 4}})
	cancel()
	if r := rs[0]; r.Chosen || r.Counts[0].Measured || !strings.Contains(r.Why, "not measured at 2 ranks") {
		t.Errorf("measured at 4 ranks only: %+v", r)
	}
}

// The candidates follow the installation and the tree: coll/sm only where
// ompi_info lists it, spreading only on several NUMA nodes or packages,
// at most four.
func TestLaunchCandidates(t *testing.T) {
	p := &Program{Implementation: Implementation{Name: OpenMPI}}
	cs, notes := LaunchCandidates(p, []int{2, 3, 4, 8}, 2, 1, 1)
	if len(cs) != 2 || len(notes) != 1 || !strings.Contains(notes[0], "coll/sm") {
		t.Errorf("no coll/sm, one NUMA node: %v %v", cs, notes)
	}
	p.CollSM, p.CollSMDegree = parseCollSM("mca:coll:sm:version:\"mca:2.1.0\"\nmca:coll:sm:param:coll_sm_tree_degree:value:4\n")
	if !p.CollSM || p.CollSMDegree != 4 {
		t.Fatalf("parseCollSM: %v %d", p.CollSM, p.CollSMDegree)
	}
	cs, _ = LaunchCandidates(p, []int{2, 3, 4, 8}, 2, 1, 1)
	want := []string{"hwloc_base_binding_policy=none", "hwloc_base_binding_policy=core:overload-allowed", "coll_sm_priority=100", "coll_sm_priority=100,coll_sm_tree_degree=2"}
	if len(cs) != len(want) {
		t.Fatalf("%v", cs)
	}
	for i, c := range cs {
		if c.Setting != want[i] || c.Scope == "" {
			t.Errorf("candidate %d: %+v, want %s", i, c, want[i])
		}
	}
	cs, notes = LaunchCandidates(p, []int{2, 4}, 64, 2, 4)
	if len(cs) != 4 || cs[2].Setting != "rmaps_base_mapping_policy=numa" || len(notes) != 1 {
		t.Errorf("four NUMA nodes: %v %v", cs, notes)
	}
	if cs, _ := LaunchCandidates(&Program{Implementation: Implementation{Name: MPICH}}, []int{2}, 2, 1, 1); cs != nil {
		t.Errorf("MPICH: %v", cs)
	}
	if got := LaunchEnv("coll_sm_priority=100,coll_sm_tree_degree=2"); len(got) != 2 || got[1] != "OMPI_MCA_coll_sm_tree_degree=2" {
		t.Errorf("LaunchEnv: %v", got)
	}
}

// Where a binding is Open MPI's own default at a count (no binding
// policy set), it is not timed there and counts as not slower: binding
// none above the CPUs, a core at 2 ranks.
func TestLaunchDefaultsNotTimed(t *testing.T) {
	if !parseDefaultBinding("mca:hwloc:base:param:hwloc_base_binding_policy:value:\nmca:hwloc:base:param:hwloc_base_binding_policy:source:default\n") ||
		parseDefaultBinding("mca:hwloc:base:param:hwloc_base_binding_policy:value:core\n") || parseDefaultBinding("") {
		t.Error("parseDefaultBinding")
	}
	p := fakeLauncher(t, OpenMPI, fakeTimes(`
case "$OMPI_MCA_hwloc_base_binding_policy" in none) if [ $n = 2 ]; then t=500; else t=99000; fi;; esac`))
	p.DefaultBinding = true
	cands, _ := LaunchCandidates(p, []int{2, 4}, 2, 1, 1)
	if len(cands) != 2 || !slices.Equal(cands[0].Defaults, []int{4}) || !slices.Equal(cands[1].Defaults, []int{2}) {
		t.Fatalf("candidates %+v", cands)
	}
	rs := TuneLaunch(context.Background(), Config{Verdict: fakeVerdict}, LaunchConfig{Program: p, Candidates: cands[:1], Ranks: []int{2, 4}})
	r := rs[0]
	if c := r.Counts[1]; !c.Measured || c.Slower || c.Runs != 0 || !strings.Contains(c.Why, "Open MPI's own binding") {
		t.Errorf("binding none at 4 ranks on 2 CPUs: %+v", c)
	}
	if !r.Chosen || !r.Counts[0].Faster {
		t.Errorf("binding none, faster at 2 ranks and the defaults at 4: %+v", r)
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

// TestLaunchKeepsToTheAllowedCPUs: where the process may use fewer CPUs
// than are online (taskset, a batch job's subset), Open MPI's launches
// pass them with --cpu-set (its launcher places ranks by the machine's
// tree, not the affinity it inherits); with every online CPU allowed,
// or the sets unknown, they pass nothing (the option changes Open MPI's
// own binding); MPICH's launcher keeps the affinity and gets nothing.
func TestLaunchKeepsToTheAllowedCPUs(t *testing.T) {
	set := func(s string) cpuset.Set {
		c, err := cpuset.ParseList(s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, c := range []struct{ allowed, online, want string }{
		{"0", "0-1", "0"}, {"2-3,6", "0-7", "2-3,6"}, {"0-1", "0-1", ""}, {"", "0-1", ""}, {"0-1", "", ""}, {"0-3", "0-1", ""},
	} {
		var a, o cpuset.Set
		if c.allowed != "" {
			a = set(c.allowed)
		}
		if c.online != "" {
			o = set(c.online)
		}
		if got := restricted(a, o); got != c.want {
			t.Errorf("restricted(%q, %q) = %q, want %q", c.allowed, c.online, got, c.want)
		}
	}
	p := &Program{Implementation: Implementation{Name: OpenMPI}, CPUSet: "0"}
	if got := strings.Join(p.launchArgs(4, []string{"--tune", "F"}), " "); got != "--oversubscribe -np 4 --cpu-set 0 --tune F" {
		t.Errorf("Open MPI on CPU 0: %q", got)
	}
	p.CPUSet = ""
	if got := strings.Join(p.launchArgs(2, nil), " "); strings.Contains(got, "cpu-set") {
		t.Errorf("Open MPI on every CPU: %q", got)
	}
	m := &Program{Implementation: Implementation{Name: MPICH}, CPUSet: "0"}
	if got := strings.Join(m.launchArgs(2, nil), " "); got != "-np 2" {
		t.Errorf("MPICH: %q", got)
	}
}
