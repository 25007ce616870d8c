//go:build unix

package ompcheck

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// script writes an executable shell script.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func needSh(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
}

// TestBuildMissingCompiler: a toolchain whose compiler is not installed
// fails with ErrNoCompiler, naming the compiler and the runtime.
func TestBuildMissingCompiler(t *testing.T) {
	_, err := Build(context.Background(), Toolchain{Runtime: LibOMP, Compiler: "barriertune-no-such-cc"}, t.TempDir())
	if !errors.Is(err, ErrNoCompiler) || !strings.Contains(err.Error(), "barriertune-no-such-cc") || !strings.Contains(err.Error(), LibOMP) {
		t.Fatalf("got %v, want ErrNoCompiler naming the compiler and libomp", err)
	}
}

// TestBuildCompilerFails: a compiler that fails (here: no omp.h) is
// reported with what it said; a program that builds but does not run
// (its runtime library missing) is reported too.
func TestBuildCompilerFails(t *testing.T) {
	needSh(t)
	dir := t.TempDir()
	cc := script(t, dir, "failcc", "echo 'fatal error: omp.h: No such file or directory' >&2\nexit 1\n")
	_, err := Build(context.Background(), Toolchain{Runtime: LibGOMP, Compiler: cc}, dir)
	if err == nil || !strings.Contains(err.Error(), "-fopenmp failed") || !strings.Contains(err.Error(), "omp.h: No such file") {
		t.Fatalf("got %v, want the compiler's failure and its message", err)
	}
	// A "compiler" whose program cannot load its runtime.
	cc = script(t, dir, "nolibcc", `out=""
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
[ "$out" = "" ] && { echo 1.0; exit 0; }
printf '#!/bin/sh\necho "omploop: error while loading shared libraries: libomp.so.5: cannot open shared object file" >&2\nexit 127\n' > "$out"
chmod +x "$out"
`)
	_, err = Build(context.Background(), Toolchain{Runtime: LibOMP, Compiler: cc}, dir)
	if err == nil || !strings.Contains(err.Error(), "does not run") || !strings.Contains(err.Error(), "libomp.so.5") {
		t.Fatalf("got %v, want a program that does not run, naming the missing library", err)
	}
}

// fakeLoop is a stand-in for the OpenMP loop: under KMP_BLOCKTIME=0 it
// hangs (a child sleeping 30 s, its pid in $BT_PIDFILE), under
// KMP_BLOCKTIME=1 it crashes (SIGSEGV), under the dist pattern the
// "runtime" warns, under the linear pattern it is twice as fast as the
// defaults, and under any other setting as fast.
const fakeLoop = `case "$KMP_BLOCKTIME" in
0) sleep 30 & echo $! > "$BT_PIDFILE"; wait; exit 0;;
1) kill -SEGV $$;;
esac
[ "$KMP_PLAIN_BARRIER_PATTERN" = "dist,dist" ] && echo "OMP: Warning #44: KMP_PLAIN_BARRIER_PATTERN value is invalid" >&2
ns=1000
[ "$KMP_PLAIN_BARRIER_PATTERN" = "linear,linear" ] && ns=500
echo "threads $OMP_NUM_THREADS barriers 100 ns_per_barrier $ns"
echo "library /fake/libomp.so.5"
`

func fakeVerdict(d, s []float64) Verdict {
	md, ms := median(d), median(s)
	v := Verdict{MarginPct: 100 * (md/ms - 1), Test: "fake"}
	v.Faster = len(s) >= 3 && md > ms*1.03
	return v
}

// TestTuneHungCrashedRejected: a setting that hangs the program is killed
// by its process group (its child too) after the limit and reported, one
// that crashes it or that the runtime warns about is reported, none is
// chosen, and the one measured faster is.
func TestTuneHungCrashedRejected(t *testing.T) {
	needSh(t)
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pid")
	t.Setenv("BT_PIDFILE", pidfile)
	p := &Program{Runtime: LibOMP, Path: script(t, dir, "loop", fakeLoop)}
	cands := func(string, int, int) []Candidate {
		return []Candidate{
			{NewSetting("KMP_BLOCKTIME=0"), FamilyWait},
			{NewSetting("KMP_BLOCKTIME=1"), FamilyWait},
			{NewSetting("KMP_PLAIN_BARRIER_PATTERN=dist,dist"), FamilyPattern},
			{NewSetting("KMP_PLAIN_BARRIER_PATTERN=linear,linear"), FamilyPattern},
			{NewSetting("KMP_PLAIN_BARRIER_PATTERN=tree,tree"), FamilyPattern},
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	out := Tune(ctx, Config{Programs: []*Program{p}, Threads: []int{2}, CPUs: 2, Seconds: 0.001, Limit: 500 * time.Millisecond,
		Faster: fakeVerdict, Candidates: cands, AllRuntimes: 1})
	if len(out) != 1 || !out[0].Measured {
		t.Fatalf("got %+v, want one measured choice", out)
	}
	c := out[0]
	if !slices.Equal(c.Setting, NewSetting("KMP_PLAIN_BARRIER_PATTERN=linear,linear")) || c.DefaultNs != 1000 || c.Ns != 500 {
		t.Errorf("chose %s at %g ns (defaults %g); want the linear pattern at 500 against 1000: %s", c.Setting, c.Ns, c.DefaultNs, c.Describe())
	}
	failed := strings.Join(c.Failed, "\n")
	for _, want := range []string{"KMP_BLOCKTIME=0: hung: killed by its process group", "KMP_BLOCKTIME=1: crashed", "dist,dist: rejected by the runtime: OMP: Warning #44"} {
		if !strings.Contains(failed, want) {
			t.Errorf("failed settings lack %q:\n%s", want, failed)
		}
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("Tune took %s: the hung run was not killed at its limit", time.Since(start))
	}
	data, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatalf("the hanging setting did not run: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	// The sleeping child was in the killed process group.
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the hung run's child %d is still alive", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTuneBudgetAndAgreement: counts the budget does not reach are not
// measured and say why; with a runtime not measured, a setting of a
// variable both runtimes read is never chosen.
func TestTuneBudgetAndAgreement(t *testing.T) {
	needSh(t)
	dir := t.TempDir()
	loop := script(t, dir, "loop", `ns=1000
[ "$OMP_PROC_BIND" = "close" ] && ns=400
[ "$KMP_LIBRARY" = "turnaround" ] && ns=700
echo "threads $OMP_NUM_THREADS barriers 100 ns_per_barrier $ns"
`)
	p := &Program{Runtime: LibOMP, Path: loop}
	cands := func(string, int, int) []Candidate {
		return []Candidate{{NewSetting("OMP_PROC_BIND=close"), FamilyPlaces}, {NewSetting("KMP_LIBRARY=turnaround"), FamilyWait}}
	}
	out := Tune(context.Background(), Config{Programs: []*Program{p}, Threads: []int{2}, CPUs: 2, Seconds: 0.001, Faster: fakeVerdict, Candidates: cands})
	if len(out) != 1 || !out[0].Measured {
		t.Fatalf("got %+v", out)
	}
	// OMP_PROC_BIND alone is faster still, but libgomp was not measured.
	if got := out[0].Setting; len(got.Shared()) > 0 || !slices.Contains(got, "KMP_LIBRARY=turnaround") {
		t.Errorf("with libgomp not measured, chose %s; want KMP_LIBRARY=turnaround alone: %s", got, out[0].Describe())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	time.Sleep(2 * time.Millisecond)
	out = Tune(ctx, Config{Programs: []*Program{p}, Threads: []int{2, 8}, CPUs: 2, Seconds: 0.001, Faster: fakeVerdict, Candidates: cands})
	for _, c := range out {
		if c.Measured || c.Setting != nil || !strings.Contains(c.Why, "not measured") {
			t.Errorf("after the deadline: %+v, want not measured", c)
		}
	}
}

// TestCandidatesReadByTheirRuntime: every candidate sets only variables
// its runtime reads, and the shared ones are the OMP_ variables.
func TestCandidatesReadByTheirRuntime(t *testing.T) {
	for _, tc := range Toolchains() {
		for _, n := range []int{2, 8} {
			cs := Candidates(tc.Runtime, n, 4)
			if len(cs) < 4 {
				t.Errorf("%s at %d threads: only %d candidates", tc.Runtime, n, len(cs))
			}
			for _, c := range cs {
				if len(c.Setting.For(tc.Runtime)) != len(c.Setting) {
					t.Errorf("%s: %s sets a variable it does not read", tc.Runtime, c.Setting)
				}
				for _, kv := range c.Setting.Shared() {
					if !strings.HasPrefix(kv, "OMP_") {
						t.Errorf("%s: shared %s is not an OMP_ variable", tc.Runtime, kv)
					}
				}
			}
		}
	}
	if ReadBy("GOMP_SPINCOUNT", LibOMP) || !ReadBy("GOMP_CPU_AFFINITY", LibOMP) || ReadBy("KMP_BLOCKTIME", LibGOMP) {
		t.Error("ReadBy does not follow what the runtimes read")
	}
}

// TestTuneSharedVariableMeasuredForBoth: libgomp is faster only bound
// (OMP_PROC_BIND, which libomp reads too), libomp with its linear pattern
// and as fast bound: the binding is measured for libomp as well, and
// chosen for both.
func TestTuneSharedVariableMeasuredForBoth(t *testing.T) {
	needSh(t)
	dir := t.TempDir()
	gomp := &Program{Runtime: LibGOMP, Path: script(t, dir, "gomp", `ns=1000
[ "$OMP_PROC_BIND" = "close" ] && ns=600
echo "threads $OMP_NUM_THREADS barriers 100 ns_per_barrier $ns"
`)}
	omp := &Program{Runtime: LibOMP, Path: script(t, dir, "omp", `ns=1000
[ "$KMP_PLAIN_BARRIER_PATTERN" = "linear,linear" ] && ns=500
echo "threads $OMP_NUM_THREADS barriers 100 ns_per_barrier $ns"
`)}
	cands := func(rt string, _, _ int) []Candidate {
		if rt == LibOMP {
			return []Candidate{{NewSetting("KMP_PLAIN_BARRIER_PATTERN=linear,linear"), FamilyPattern}}
		}
		return []Candidate{{NewSetting("OMP_PROC_BIND=close"), FamilyPlaces}}
	}
	out := Tune(context.Background(), Config{Programs: []*Program{gomp, omp}, Threads: []int{8}, CPUs: 2, Seconds: 0.001, Faster: fakeVerdict, Candidates: cands})
	if len(out) != 2 {
		t.Fatalf("got %d choices", len(out))
	}
	for _, c := range out {
		if !slices.Contains(c.Setting, "OMP_PROC_BIND=close") {
			t.Errorf("%s: chose %s, want OMP_PROC_BIND=close measured for both: %s", c.Runtime, c.Setting, c.Describe())
		}
	}
	if !slices.Contains(out[1].Setting, "KMP_PLAIN_BARRIER_PATTERN=linear,linear") {
		t.Errorf("libomp: chose %s, want its linear pattern with the binding", out[1].Setting)
	}
}
