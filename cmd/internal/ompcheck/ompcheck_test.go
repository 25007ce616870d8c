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

	"github.com/barriertune/barriertune/cmd/internal/pairs"
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

// fakeLoop is a stand-in for the OpenMP loops: under KMP_BLOCKTIME=0 it
// hangs (a child sleeping 30 s, its pid in $BT_PIDFILE), under
// KMP_BLOCKTIME=1 it crashes (SIGSEGV), under the dist pattern the
// "runtime" warns, under KMP_AFFINITY it is twice as fast as the defaults
// on both shapes, and under any other setting as fast.
const fakeLoop = `case "$KMP_BLOCKTIME" in
0) sleep 30 & echo $! > "$BT_PIDFILE"; wait; exit 0;;
1) kill -SEGV $$;;
esac
[ "$KMP_PLAIN_BARRIER_PATTERN" = "dist,dist" ] && echo "OMP: Warning #44: KMP_PLAIN_BARRIER_PATTERN value is invalid" >&2
ns=1000
[ -n "$KMP_AFFINITY" ] && ns=500
echo "threads $OMP_NUM_THREADS library /fake/libomp.so.5"
echo "barrier $ns $ns $ns $ns $ns $ns"
echo "stencil $ns $ns $ns $ns $ns $ns"
`

func fakeVerdict(d, s []float64) pairs.Verdict {
	md, ms := median(d), median(s)
	v := pairs.Verdict{MarginPct: 100 * (md/ms - 1), Test: "fake"}
	v.Faster = len(s) >= 4 && md > ms*1.03 && slices.Max(s) < slices.Min(d)
	return v
}

func median(v []float64) float64 { return pairs.Median(v) }

func settings(names ...string) []Setting {
	var out []Setting
	for _, n := range names {
		out = append(out, ParseSetting(n))
	}
	return out
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
	cands := func(string, int, string, int) []Setting {
		return settings("KMP_BLOCKTIME=0", "KMP_BLOCKTIME=1", "KMP_PLAIN_BARRIER_PATTERN=dist,dist", "KMP_AFFINITY=granularity=fine,compact", "KMP_LIBRARY=turnaround")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	out := Tune(ctx, Config{Programs: []*Program{p}, Threads: []int{2}, CPUs: 2, Seconds: 0.001, Limit: 500 * time.Millisecond,
		Verdict: fakeVerdict, Candidates: cands})
	if len(out) != 1 || !out[0].Measured || !out[0].Decided {
		t.Fatalf("got %+v, want one measured, decided choice", out)
	}
	c := out[0]
	if !slices.Equal(c.Setting, NewSetting("KMP_AFFINITY=granularity=fine,compact")) || c.DefaultNs != 1000 || c.Ns != 500 || c.StencilNs != 500 {
		t.Errorf("chose %s at %g ns (defaults %g); want KMP_AFFINITY at 500 against 1000: %s", c.Setting, c.Ns, c.DefaultNs, c.Describe())
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

// TestTuneTransitionRejected: a run whose chunk times show the runtime's
// start (the first chunks 150 times the others, as a 15 ms run of libomp
// read here) is rerun, never recorded: the times recorded are the steady
// ones.
func TestTuneTransitionRejected(t *testing.T) {
	needSh(t)
	dir := t.TempDir()
	// Every other run of the defaults is in transition (the count is of
	// the defaults' runs alone: counting every run, a pair's random
	// order could put each run of the defaults on an odd count).
	loop := script(t, dir, "loop", `c="$BT_DIR/count"; n=1
if [ -z "$KMP_AFFINITY" ]; then n=$(cat "$c" 2>/dev/null || echo 0); echo $((n+1)) > "$c"; fi
echo "threads $OMP_NUM_THREADS library /fake/libomp.so.5"
if [ -z "$KMP_AFFINITY" ] && [ $((n % 2)) = 0 ]; then
  echo "barrier 50200 48000 47000 330 320 325 322 328"
  echo "stencil 900 900 900 900 900 900 900 900"
else
  echo "barrier 330 320 325 322 328 326 321 324"
  echo "stencil 900 900 900 900 900 900 900 900"
fi
`)
	t.Setenv("BT_DIR", dir)
	p := &Program{Runtime: LibOMP, Path: loop}
	cands := func(string, int, string, int) []Setting { return settings("KMP_AFFINITY=granularity=fine,compact") }
	out := Tune(context.Background(), Config{Programs: []*Program{p}, Threads: []int{2}, CPUs: 2, Seconds: 0.001, Verdict: fakeVerdict, Candidates: cands})
	c := out[0]
	if !c.Measured || c.DefaultNs > 400 || c.Setting != nil {
		t.Fatalf("recorded the defaults at %g ns, chose %s; want the steady 320-330 ns and nothing chosen: %s", c.DefaultNs, c.Setting, c.Describe())
	}
	if c.Runs <= 2*c.Pairs {
		t.Errorf("%d runs for %d pairs: want the runs in transition rerun", c.Runs, c.Pairs)
	}
}

// TestTuneTooFewRuns: a budget that holds fewer than the pairs a decision
// needs decides nothing, even for a setting twice as fast, and says so
// with the time that would give them; the largest count is measured
// first.
func TestTuneTooFewRuns(t *testing.T) {
	needSh(t)
	dir := t.TempDir()
	loop := script(t, dir, "loop", "sleep 0.05\n"+fakeLoop)
	p := &Program{Runtime: LibOMP, Path: loop}
	cands := func(string, int, string, int) []Setting { return settings("KMP_AFFINITY=granularity=fine,compact") }
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	out := Tune(ctx, Config{Programs: []*Program{p}, Threads: []int{2, 8}, CPUs: 2, Seconds: 0.001, Verdict: fakeVerdict, Candidates: cands})
	if len(out) != 2 || out[0].Threads != 2 || out[1].Threads != 8 {
		t.Fatalf("got %+v, want the counts in the order asked", out)
	}
	for _, c := range out {
		if c.Decided || c.Setting != nil {
			t.Errorf("%d threads: decided %v, chose %s; want no decision on too few pairs", c.Threads, c.Decided, c.Setting)
		}
	}
	if c := out[1]; !c.Measured || !strings.Contains(c.Why, "not decided") || !strings.Contains(c.Why, "need 4") || c.NeedBudget <= 0 {
		t.Errorf("8 threads (measured first): %s, need %s; want not decided, naming the pairs needed and the time", c.Why, c.NeedBudget)
	}
}

// TestTuneStencilVeto: a setting faster on the plain barrier loop but
// slower on the stencil is not chosen; one faster on the barrier loop and
// as fast on the stencil is.
func TestTuneStencilVeto(t *testing.T) {
	needSh(t)
	dir := t.TempDir()
	loop := script(t, dir, "loop", `b=1000; s=5000
[ "$KMP_BLOCKTIME" = "0" ] && b=500 && s=7000
[ -n "$KMP_AFFINITY" ] && b=800
echo "threads $OMP_NUM_THREADS library /fake/libomp.so.5"
echo "barrier $b $b $b $b $b $b"
echo "stencil $s $s $s $s $s $s"
`)
	p := &Program{Runtime: LibOMP, Path: loop}
	cands := func(string, int, string, int) []Setting {
		return settings("KMP_BLOCKTIME=0", "KMP_AFFINITY=granularity=fine,compact")
	}
	out := Tune(context.Background(), Config{Programs: []*Program{p}, Threads: []int{8}, CPUs: 2, Seconds: 0.001, Verdict: fakeVerdict, Candidates: cands})
	if c := out[0]; !slices.Equal(c.Setting, NewSetting("KMP_AFFINITY=granularity=fine,compact")) || !strings.Contains(c.Why, "KMP_BLOCKTIME=0") {
		t.Errorf("chose %s (%s); want KMP_AFFINITY, and why the faster KMP_BLOCKTIME=0 was not", c.Setting, c.Why)
	}
}

// TestCandidatesOwnVariables: every candidate sets only variables its
// runtime reads, and every one but libgomp's GOMP_CPU_AFFINITY (which
// libomp reads too, and omp-run sets for libgomp's programs only) a
// variable of its runtime alone: a gain measured for one runtime is
// carried by that runtime's own variable.
func TestCandidatesOwnVariables(t *testing.T) {
	for _, tc := range Toolchains() {
		for _, n := range []int{2, 8} {
			cs := Candidates(tc.Runtime, n, "0-3", 4)
			if len(cs) < 2 {
				t.Errorf("%s at %d threads: only %d candidates", tc.Runtime, n, len(cs))
			}
			for _, c := range cs {
				if len(c.For(tc.Runtime)) != len(c) {
					t.Errorf("%s: %s sets a variable it does not read", tc.Runtime, c)
				}
				for _, kv := range c.Shared() {
					if !strings.HasPrefix(kv, "GOMP_CPU_AFFINITY=") || tc.Runtime != LibGOMP {
						t.Errorf("%s: %s sets %s, which the other runtime reads", tc.Runtime, c, kv)
					}
				}
				if !slices.Equal(ParseSetting(c.String()), c) {
					t.Errorf("%s does not survive its name", c)
				}
			}
		}
	}
	if ReadBy("GOMP_SPINCOUNT", LibOMP) || !ReadBy("GOMP_CPU_AFFINITY", LibOMP) || ReadBy("KMP_BLOCKTIME", LibGOMP) || ReadBy("KMP_AFFINITY", LibGOMP) {
		t.Error("ReadBy does not follow what the runtimes read")
	}
}

// TestCandidatesBindOnlyEvenly: with more threads than CPUs, binding the
// threads to the CPUs in turn is a candidate only where they divide
// evenly among them (4 or 8 threads on 2 CPUs, not 3 or 5); with a CPU
// per thread it always is.
func TestCandidatesBindOnlyEvenly(t *testing.T) {
	binds := func(threads, cpus int) bool {
		for _, c := range Candidates(LibGOMP, threads, "0-1", cpus) {
			for _, kv := range c {
				if strings.HasPrefix(kv, "GOMP_CPU_AFFINITY=") {
					return true
				}
			}
		}
		return false
	}
	for _, c := range []struct {
		threads, cpus int
		want          bool
	}{{2, 2, true}, {1, 2, true}, {3, 2, false}, {4, 2, true}, {5, 2, false}, {8, 2, true}, {6, 4, false}, {8, 4, true}} {
		if got := binds(c.threads, c.cpus); got != c.want {
			t.Errorf("%d threads on %d CPUs: binding offered %v, want %v", c.threads, c.cpus, got, c.want)
		}
		if len(Candidates(LibGOMP, c.threads, "0-1", c.cpus)) == 0 {
			t.Errorf("%d threads on %d CPUs: no candidate", c.threads, c.cpus)
		}
	}
}

// TestCellShare: a count gets an even split of what is left, or what a
// decision takes (twice the minimum pairs and the confirmation) where the
// split is less and the window holds it, never more than is left.
func TestCellShare(t *testing.T) {
	pair := 200 * time.Millisecond
	need := cellNeed(pair, 2) // 2 x (4 pairs x 2 candidates + 3 confirming) pairs
	if want := 2 * 11 * pair; need != want {
		t.Fatalf("cellNeed = %s, want %s", need, want)
	}
	for _, tc := range []struct {
		left  time.Duration
		cells int
		want  time.Duration
	}{
		{8 * time.Second, 8, need},              // --budget 20s: the first count gets its decision's time
		{2 * time.Second, 8, time.Second * 2},   // less than a decision: what is left
		{80 * time.Second, 8, 10 * time.Second}, // plenty: the even split
		{8 * time.Second, 0, 8 * time.Second},   // no cell count: all of it
	} {
		if got := cellShare(tc.left, tc.cells, pair, 2); got != tc.want {
			t.Errorf("cellShare(%s left, %d cells) = %s, want %s", tc.left, tc.cells, got, tc.want)
		}
	}
}
