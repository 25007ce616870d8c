package export

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/results"
)

// withOpenMP is the fixture (8 allowed CPUs) with an OpenMP record:
// libomp and libgomp measured at 2 and 16 threads; at 2 both keep their
// defaults, at 16 each has its own setting, and libgomp's also sets
// OMP_PROC_BIND, which libomp's does not.
func withOpenMP(t *testing.T) *results.File {
	f := fixture(t)
	f.OpenMP = &results.OpenMP{Loop: "the loop", Share: "1/3", Runtimes: []results.OpenMPRuntime{
		{Name: "libgomp", Compiler: "/usr/bin/gcc", Library: "/usr/lib/libgomp.so.1.0.0", Version: "gcc 12", Counts: []results.OpenMPCount{
			{Threads: 2, DefaultNs: 900, Why: "no setting was faster", Settings: 7, Runs: 80},
			{Threads: 16, DefaultNs: 40000, Best: []string{"GOMP_SPINCOUNT=0", "OMP_PROC_BIND=close"}, BestNs: 30000, MarginPct: 33.3, Test: "p 0.001", Settings: 7, Runs: 80},
		}},
		{Name: "libomp", Compiler: "/usr/bin/clang", Library: "/usr/lib/llvm-14/lib/libomp.so.5", Version: "LLVM OMP version 5.0.20140926", Counts: []results.OpenMPCount{
			{Threads: 2, DefaultNs: 1000, Why: "no setting was faster", Settings: 12, Runs: 80},
			{Threads: 16, DefaultNs: 20000, Best: []string{"KMP_PLAIN_BARRIER_PATTERN=linear,linear"}, BestNs: 12000, MarginPct: 66.7, Test: "p 0.002", Settings: 12, Runs: 80},
		}},
	}}
	return f
}

func exportString(t *testing.T, f *results.File, format string, threads int) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, f, format, Options{Threads: threads}); err != nil {
		t.Fatalf("%s --threads %d: %v", format, threads, err)
	}
	return b.String()
}

// sourced sources an omp-env export in sh with OMP_NUM_THREADS set to n
// (0: unset) and returns the OMP_, KMP_ and GOMP_ variables it leaves.
func sourced(t *testing.T, script string, n int) map[string]string {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	path := filepath.Join(t.TempDir(), "omp.env")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", ". "+path+" && env")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	if n > 0 {
		cmd.Env = append(cmd.Env, "OMP_NUM_THREADS="+strconv.Itoa(n))
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sourcing the export: %v\n%s", err, out)
	}
	vars := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(l, "=")
		if ok && (strings.HasPrefix(k, "OMP_") || strings.HasPrefix(k, "KMP_") || strings.HasPrefix(k, "GOMP_")) {
			vars[k] = v
		}
	}
	return vars
}

// TestOMPEnvNotMeasured: a file without an OpenMP measurement (one from
// before v1.5) says that neither runtime was measured and sets nothing a
// runtime reads (with --threads, only the count asked for).
func TestOMPEnvNotMeasured(t *testing.T) {
	f := fixture(t)
	for _, threads := range []int{0, 2, 16} {
		out := exportString(t, f, "omp-env", threads)
		for _, rt := range []string{"libgomp", "libomp"} {
			if !strings.Contains(out, "# "+rt+" was not measured") {
				t.Errorf("--threads %d: the export does not say %s was not measured:\n%s", threads, rt, out)
			}
		}
		vars := sourced(t, out, 0)
		want := map[string]string{}
		if threads > 0 {
			want["OMP_NUM_THREADS"] = strconv.Itoa(threads)
		}
		if len(vars) != len(want) || vars["OMP_NUM_THREADS"] != want["OMP_NUM_THREADS"] {
			t.Errorf("--threads %d: sourcing sets %v, want %v", threads, vars, want)
		}
	}
	// One runtime not measured: nothing is set for it, and nothing both
	// read.
	f = withOpenMP(t)
	f.OpenMP.Runtimes[0] = results.OpenMPRuntime{Name: "libgomp", Compiler: "gcc", NotMeasured: "gcc: compiler not found"}
	out := exportString(t, f, "omp-env", 16)
	if !strings.Contains(out, "# libgomp was not measured (gcc: compiler not found)") {
		t.Errorf("the export does not say why libgomp was not measured:\n%s", out)
	}
	vars := sourced(t, out, 0)
	if vars["KMP_PLAIN_BARRIER_PATTERN"] != "linear,linear" || vars["GOMP_SPINCOUNT"] != "" || vars["OMP_PROC_BIND"] != "" {
		t.Errorf("with libgomp not measured: %v, want libomp's setting alone", vars)
	}
}

// TestOMPEnvSetsOnlyMeasured: each count's block sets the settings
// measured faster, for the runtime that reads them; where the defaults
// stayed it sets nothing; a variable both runtimes read that was chosen
// for one only is not set; counts on the other side of the CPU count are
// not served by a measurement from this side; the comments name the
// runtimes' versions.
func TestOMPEnvSetsOnlyMeasured(t *testing.T) {
	f := withOpenMP(t)
	all := exportString(t, f, "omp-env", 0)
	for _, s := range []string{"gcc 12", "LLVM OMP version 5.0.20140926", "/usr/lib/llvm-14/lib/libomp.so.5", "the defaults stay"} {
		if !strings.Contains(all, s) {
			t.Errorf("the export does not name %q:\n%s", s, all)
		}
	}
	for _, tc := range []struct {
		n    int
		want map[string]string
	}{
		{2, map[string]string{"OMP_NUM_THREADS": "2"}},
		{5, map[string]string{"OMP_NUM_THREADS": "5"}}, // served by 2
		// libgomp's setting holds OMP_PROC_BIND, not chosen for libomp:
		// none of it is set (GOMP_SPINCOUNT alone was never measured).
		{9, map[string]string{"OMP_NUM_THREADS": "9", "KMP_PLAIN_BARRIER_PATTERN": "linear,linear"}},
		{64, map[string]string{"OMP_NUM_THREADS": "64", "KMP_PLAIN_BARRIER_PATTERN": "linear,linear"}},
		{0, map[string]string{}}, // unset: 8, one per CPU, served by 2
	} {
		for _, script := range []string{all, exportString(t, f, "omp-env", max(tc.n, 8))} {
			if tc.n == 0 && script != all {
				continue
			}
			got := sourced(t, script, tc.n)
			if tc.n > 0 && script != all {
				delete(got, "OMP_NUM_THREADS")
				got["OMP_NUM_THREADS"] = strconv.Itoa(tc.n)
			}
			if len(got) != len(tc.want) {
				t.Errorf("OMP_NUM_THREADS=%d: sourcing sets %v, want %v\n%s", tc.n, got, tc.want, script)
				continue
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("OMP_NUM_THREADS=%d: %s=%q, want %q", tc.n, k, got[k], v)
				}
			}
		}
	}
	if strings.Contains(all, "BUSY") {
		t.Errorf("a quiet file's export says BUSY:\n%s", all)
	}
	f.Load = &results.Load{Busy: true, Why: "3 runnable tasks of other processes"}
	if out := exportString(t, f, "omp-env", 16); !strings.Contains(out, "# BUSY: the check ran on a busy machine (3 runnable tasks") {
		t.Errorf("a busy file's export does not say so:\n%s", out)
	}
	f.Load = nil
	if !strings.Contains(all, "OMP_PROC_BIND: both runtimes read it, and it was not chosen for both: not set") {
		t.Errorf("the export does not say why OMP_PROC_BIND is not set:\n%s", all)
	}
	// Chosen for both with the same value, a shared variable is set.
	f.OpenMP.Runtimes[1].Counts[1].Best = append(f.OpenMP.Runtimes[1].Counts[1].Best, "OMP_PROC_BIND=close")
	if got := sourced(t, exportString(t, f, "omp-env", 16), 0); got["OMP_PROC_BIND"] != "close" {
		t.Errorf("OMP_PROC_BIND chosen for both runtimes is not set: %v", got)
	}
}

// TestOMPOneRuntimeGain: a gain measured for one runtime only is carried
// by that runtime's own variable: libomp's KMP_AFFINITY is set by the
// sourced file and by omp-run for libomp's programs, never for
// libgomp's; libgomp's GOMP_CPU_AFFINITY (which libomp reads too) is not
// set by the file, whose readers may link either, but omp-run sets it,
// whole, for libgomp's programs only.
func TestOMPOneRuntimeGain(t *testing.T) {
	f := withOpenMP(t)
	f.OpenMP.Runtimes[0].Counts[0] = results.OpenMPCount{Threads: 2, DefaultNs: 900, Best: []string{"GOMP_CPU_AFFINITY=0-7"}, BestNs: 600, Settings: 2, Runs: 30}
	f.OpenMP.Runtimes[1].Counts[0] = results.OpenMPCount{Threads: 2, DefaultNs: 1400, Best: []string{"KMP_AFFINITY=granularity=fine,compact"}, BestNs: 450, Settings: 2, Runs: 30}
	got := sourced(t, exportString(t, f, "omp-env", 0), 2)
	if got["KMP_AFFINITY"] != "granularity=fine,compact" || got["GOMP_CPU_AFFINITY"] != "" {
		t.Errorf("the sourced file at 2 threads sets %v; want libomp's KMP_AFFINITY and not GOMP_CPU_AFFINITY", got)
	}
	cpus := cpuset.Range(0, 7)
	for _, tc := range []struct {
		runtime string
		want    []string
	}{
		{"libomp", []string{"KMP_AFFINITY=granularity=fine,compact"}},
		{"libgomp", []string{"GOMP_CPU_AFFINITY=0-7"}},
		{"", []string{"KMP_AFFINITY=granularity=fine,compact"}},
	} {
		vars, notes := OMPRunEnv(f, tc.runtime, 2, cpus)
		if !slices.Equal(vars, tc.want) || len(notes) == 0 {
			t.Errorf("omp-run for %q at 2 threads: %v (%v), want %v", tc.runtime, vars, notes, tc.want)
		}
	}
	// libomp's defaults stay at 2: nothing for it, whatever libgomp chose.
	f.OpenMP.Runtimes[1].Counts[0] = results.OpenMPCount{Threads: 2, DefaultNs: 1400, Why: "no setting was faster", Settings: 2, Runs: 30}
	if vars, _ := OMPRunEnv(f, "libomp", 2, cpus); len(vars) != 0 {
		t.Errorf("omp-run for libomp where its defaults stay: %v", vars)
	}
	// Not decided: nothing, and the note says why.
	f.OpenMP.Runtimes[0].Counts[0] = results.OpenMPCount{Threads: 2, DefaultNs: 900, NotDecided: "not decided: 2 pairs of each at most, need 4; a budget of 1m30s (--budget) would give them", Settings: 2, Runs: 8}
	if vars, notes := OMPRunEnv(f, "libgomp", 2, cpus); len(vars) != 0 || !strings.Contains(strings.Join(notes, " "), "a budget of 1m30s") {
		t.Errorf("omp-run for libgomp not decided: %v (%v)", vars, notes)
	}
}

// TestOMPRunEveryCount: the run-time form, with OMP_NUM_THREADS set after
// the export was written, gives at every count from 1 to 40 the block of
// the count that serves it: the sourced file's block for the same
// OMP_NUM_THREADS, and each runtime's own setting.
func TestOMPRunEveryCount(t *testing.T) {
	f := withOpenMP(t)
	script := exportString(t, f, "omp-env", 0)
	cpus := cpuset.Range(0, 7)
	for n := 1; n <= 40; n++ {
		file := sourced(t, script, n)
		delete(file, "OMP_NUM_THREADS")
		var want []string
		for k, v := range file {
			want = append(want, k+"="+v)
		}
		slices.Sort(want)
		got, _ := OMPRunEnv(f, "", n, cpus)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("OMP_NUM_THREADS=%d: omp-run sets %v, the sourced file %v", n, got, want)
		}
		omp, _ := OMPRunEnv(f, "libomp", n, cpus)
		gomp, _ := OMPRunEnv(f, "libgomp", n, cpus)
		wantOMP, wantGOMP := []string(nil), []string(nil)
		if n > 8 {
			wantOMP, wantGOMP = []string{"KMP_PLAIN_BARRIER_PATTERN=linear,linear"}, []string{"GOMP_SPINCOUNT=0", "OMP_PROC_BIND=close"}
		}
		if !slices.Equal(omp, wantOMP) || !slices.Equal(gomp, wantGOMP) {
			t.Errorf("OMP_NUM_THREADS=%d: omp-run sets %v for libomp, %v for libgomp; want %v and %v", n, omp, gomp, wantOMP, wantGOMP)
		}
	}
}

// goroutineWords are what an export read by C, C++ or OpenMP programs
// never names: the algorithms that run only as goroutines or through the
// Go runtime.
var goroutineWords = regexp.MustCompile(`\b(goroutine|cond|channel)\b`)

// TestExportsAboveCPUsNameOSThreads: above the allowed CPUs, omp-env,
// env, kv and c-header take the choice measured on OS threads (or a
// stand-in with no time), never the goroutine-timed best or its time.
func TestExportsAboveCPUsNameOSThreads(t *testing.T) {
	f := withOpenMP(t)
	t16 := f.Lookup(16)
	if t16 == nil || t16.Best == nil || !goroutineWords.MatchString(t16.Best.Algorithm) {
		t.Fatalf("the fixture's 16-thread best is not a goroutine algorithm: %+v", t16)
	}
	goTime := strconv.FormatFloat(t16.Best.MedianNs, 'f', 1, 64)
	check := func(what string) {
		for _, format := range []string{"omp-env", "env", "kv", "c-header"} {
			for _, threads := range []int{0, 16, 32} {
				out := exportString(t, f, format, threads)
				if m := goroutineWords.FindString(out); m != "" {
					t.Errorf("%s: %s --threads %d names %q:\n%s", what, format, threads, m, out)
				}
				if strings.Contains(out, goTime) {
					t.Errorf("%s: %s --threads %d gives the goroutine time %s", what, format, threads, goTime)
				}
			}
		}
	}
	check("no OS-thread measurement")
	kv := exportString(t, f, "kv", 16)
	if !strings.Contains(kv, "algorithm=central") || strings.Contains(kv, "median_ns") || !strings.Contains(kv, "rule=substituted") {
		t.Errorf("kv --threads 16 without an OS-thread measurement: %q, want central standing in, no time", kv)
	}
	// A best C can run, timed as goroutines: its algorithm, not its time.
	was := t16.Best.Algorithm
	t16.Best.Algorithm = "central"
	for _, format := range []string{"env", "kv", "c-header"} {
		if out := exportString(t, f, format, 16); strings.Contains(out, goTime) {
			t.Errorf("%s --threads 16 gives the goroutine-timed central's time %s:\n%s", format, goTime, out)
		}
	}
	t16.Best.Algorithm = was
	t16.OSThreads = &results.Choice{Spec: results.Spec{Algorithm: "combining", Policy: "park", FanIn: 4}, CPUs: t16.Best.CPUs, Label: "oversubscribed, OS threads", MedianNs: 71234.5}
	check("with an OS-thread measurement")
	for _, format := range []string{"env", "kv"} {
		out := exportString(t, f, format, 16)
		if !strings.Contains(out, "combining") || !strings.Contains(out, "71234.5") {
			t.Errorf("%s --threads 16 does not give the OS-thread choice (combining, 71234.5 ns):\n%s", format, out)
		}
	}
}

// TestOMPBandsEveryCount: the bands, evaluated only where the serving
// count can change, give every thread count the count ompServing gives
// it, for random counts and CPU counts (above the largest count too: a
// setting measured with a CPU per thread never serves more threads than
// CPUs), and a file whose counts reach a
// million threads is banded from its two counts (the export once walked
// every count up to the largest, and hung on a file's huge count).
func TestOMPBandsEveryCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := 0; trial < 300; trial++ {
		var counts []int
		for i := rng.IntN(6) + 1; i > 0; i-- {
			counts = append(counts, rng.IntN(40)+1)
		}
		slices.Sort(counts)
		counts = slices.Compact(counts)
		cpus := rng.IntN(20)
		bands := ompBands(counts, cpus)
		at := func(n int) int {
			for _, b := range bands {
				if n >= b.lo && (b.hi == 0 || n <= b.hi) {
					return b.measured
				}
			}
			t.Fatalf("counts %v, cpus %d: no band holds %d: %+v", counts, cpus, n, bands)
			return 0
		}
		for n := 1; n <= max(counts[len(counts)-1], cpus)+5; n++ {
			if got, want := at(n), ompServing(counts, n, cpus); got != want {
				t.Fatalf("counts %v, cpus %d: %d threads banded to %d, served by %d: %+v", counts, cpus, n, got, want, bands)
			}
		}
		for i := 1; i < len(bands); i++ {
			if bands[i].lo != bands[i-1].hi+1 || bands[i].measured == bands[i-1].measured {
				t.Fatalf("counts %v, cpus %d: bands not adjacent or not merged: %+v", counts, cpus, bands)
			}
		}
	}
	if b := ompBands([]int{2, 1 << 20}, 2); len(b) != 2 || b[0].hi != 2 || b[1].measured != 1<<20 {
		t.Fatalf("a million threads: %+v", b)
	}
}

// TestOMPEnvNamesTheHostState: omp-env's comments name the host state the
// times were measured in (the floors before and after the OpenMP step, or
// the file's words where the host moved), on one comment line whatever
// the file holds, and nothing where no floor was read.
func TestOMPEnvNamesTheHostState(t *testing.T) {
	f := withOpenMP(t)
	f.OpenMP.HostFloorBeforeNs, f.OpenMP.HostFloorAfterNs = 140, 152
	if out := exportString(t, f, "omp-env", 0); !strings.Contains(out, "# host state: the floor read 140 ns before the OpenMP step and 152 ns after it") {
		t.Errorf("no host state:\n%s", out)
	}
	f.OpenMP.HostMoved = "the host moved\necho injected"
	out := exportString(t, f, "omp-env", 2)
	if !strings.Contains(out, "# host state: the host moved echo injected") || regexp.MustCompile(`(?m)^echo`).MatchString(out) {
		t.Errorf("the file's words, on one comment line:\n%s", out)
	}
	f.OpenMP.HostFloorBeforeNs, f.OpenMP.HostFloorAfterNs, f.OpenMP.HostMoved = 0, 0, ""
	if out := exportString(t, f, "omp-env", 0); strings.Contains(out, "host state") {
		t.Errorf("a host state without a floor:\n%s", out)
	}
}

// TestOMPListedCountServesItself: a count the check listed but did not
// reach (not measured for every runtime, or not decided) keeps the
// defaults, in the sourced file and in omp-run, rather than borrow the
// choice of the nearest measured count: libgomp's GOMP_CPU_AFFINITY
// chosen at 4 threads on 2 CPUs ran 1.6 times the defaults' time when
// served at 3. A count the check never listed is still served by the
// nearest measured one on its side of the CPUs.
func TestOMPListedCountServesItself(t *testing.T) {
	f := fixture(t)
	chosen := []string{"GOMP_CPU_AFFINITY=0-1", "GOMP_SPINCOUNT=0"}
	f.OpenMP = &results.OpenMP{Loop: "the loop", Share: "1/2", Runtimes: []results.OpenMPRuntime{
		{Name: "libgomp", Compiler: "/usr/bin/gcc", Version: "gcc 12", Counts: []results.OpenMPCount{
			{Threads: 3, NotMeasured: "the OpenMP share of the budget ran out before a pair of runs"},
			{Threads: 4, DefaultNs: 17000, Best: chosen, BestNs: 14000, MarginPct: 21, Test: "p 0.01", Settings: 2, Runs: 20},
			{Threads: 6, DefaultNs: 30000, NotDecided: "not decided: 1 pair of each at most, need 4", Settings: 2, Runs: 4},
			{Threads: 8, DefaultNs: 36000, Best: chosen, BestNs: 22000, MarginPct: 64, Test: "p 0.001", Settings: 2, Runs: 20},
		}},
		{Name: "libomp", Compiler: "/usr/bin/clang", Version: "LLVM OMP version 5.0", Counts: []results.OpenMPCount{
			{Threads: 3, NotMeasured: "the OpenMP share of the budget ran out before a pair of runs"},
			{Threads: 4, NotMeasured: "the OpenMP share of the budget ran out before a pair of runs"},
			{Threads: 6, NotMeasured: "the OpenMP share of the budget ran out before a pair of runs"},
			{Threads: 8, NotMeasured: "the OpenMP share of the budget ran out before a pair of runs"},
		}},
	}}
	cpus := cpuset.Range(0, 1)
	script := exportString(t, f, "omp-env", 0)
	for n, want := range map[int][]string{3: nil, 4: chosen, 5: nil, 6: nil, 7: chosen, 8: chosen, 12: chosen} {
		gomp, _ := OMPRunEnv(f, "libgomp", n, cpus)
		slices.Sort(gomp)
		if !slices.Equal(gomp, want) {
			t.Errorf("omp-run, libgomp, %d threads: %v, want %v", n, gomp, want)
		}
		// The sourced file sets a variable libomp reads too only where
		// both runtimes chose it: here it must set nothing at a count the
		// check listed and did not decide.
		if file := sourced(t, script, n); want == nil && len(file) > 1 {
			t.Errorf("the sourced file at %d threads: %v, want nothing but OMP_NUM_THREADS", n, file)
		}
	}
}
