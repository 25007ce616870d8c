package check

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cmd/internal/measure"
	"github.com/barriertune/barriertune/cmd/internal/ompcheck"
	"github.com/barriertune/barriertune/cmd/internal/sysload"
	"github.com/barriertune/barriertune/results"
)

// noOpenMP is the live measurer with toolchains that are not installed.
type noOpenMP struct{ Hardware }

func (noOpenMP) OpenMPToolchains() []ompcheck.Toolchain {
	return []ompcheck.Toolchain{{Runtime: ompcheck.LibGOMP, Compiler: "barriertune-no-gcc"}, {Runtime: ompcheck.LibOMP, Compiler: "barriertune-no-clang"}}
}

func openMPFile() *results.File {
	return &results.File{Machine: results.Machine{AllowedCPUs: "0-1"}, Threads: []results.Threads{
		{Threads: 2, Best: &results.Choice{CPUs: []int{0, 1}, Spec: results.Spec{Algorithm: "central", Policy: "spin"}}},
	}}
}

// TestOpenMPMissingToolchain: without a compiler, each runtime is
// recorded as not measured, saying why, and the step returns at once.
func TestOpenMPMissingToolchain(t *testing.T) {
	f := openMPFile()
	start := time.Now()
	measureOpenMP(context.Background(), f, Config{Budget: time.Minute, Algorithms: catalog.Names()}, noOpenMP{}, start.Add(time.Minute), 1)
	if f.OpenMP == nil || len(f.OpenMP.Runtimes) != 2 {
		t.Fatalf("got %+v, want both runtimes recorded", f.OpenMP)
	}
	for _, r := range f.OpenMP.Runtimes {
		if !strings.Contains(r.NotMeasured, "compiler not found") || len(r.Counts) != 0 {
			t.Errorf("%s: %+v, want not measured: compiler not found", r.Name, r)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the step took %s without a compiler", d)
	}
}

// TestOpenMPBudgetShare: the step takes the window it is given (what the
// algorithms left), and with less than minOpenMPWindow left it measures
// nothing and says why; a simulated file is left alone.
func TestOpenMPBudgetShare(t *testing.T) {
	f := openMPFile()
	now := time.Now()
	measureOpenMP(context.Background(), f, Config{Budget: 6 * time.Second, Algorithms: catalog.Names()}, noOpenMP{}, now.Add(2*time.Second), 1)
	// The step reads the clock after the test did: 2 s less what passed
	// in between (1.999s on a loaded machine).
	if f.OpenMP == nil || !regexp.MustCompile(`the budget left (2|1\.9\d*)s, less than the 3s`).MatchString(f.OpenMP.Runtimes[0].NotMeasured) {
		t.Errorf("2 s left of a 6 s budget: %+v, want not measured: the budget left 2s", f.OpenMP)
	}
	f = openMPFile()
	measureOpenMP(context.Background(), f, Config{Budget: time.Minute, Algorithms: catalog.Names()}, noOpenMP{}, now.Add(time.Second), 1)
	if f.OpenMP == nil || !strings.Contains(f.OpenMP.Runtimes[1].NotMeasured, "less than the 3s") {
		t.Errorf("1 s left: %+v, want not measured: less than the 3s", f.OpenMP)
	}
	f = openMPFile()
	measureOpenMP(context.Background(), f, Config{Budget: time.Minute, Algorithms: []string{"central"}}, noOpenMP{}, now.Add(time.Minute), 1)
	if f.OpenMP != nil {
		t.Errorf("a check restricted to central got an OpenMP record: %+v", f.OpenMP)
	}
	f = openMPFile()
	f.Simulated = true
	measureOpenMP(context.Background(), f, Config{Budget: time.Minute, Algorithms: catalog.Names()}, noOpenMP{}, now.Add(time.Minute), 1)
	if f.OpenMP != nil {
		t.Errorf("a simulated file got an OpenMP record: %+v", f.OpenMP)
	}
}

// TestOpenMPVerdict: the verdict is the check's own: within 3% is not
// faster, a larger gap the test cannot separate is not either, a clear one
// is.
func TestOpenMPVerdict(t *testing.T) {
	def := []float64{1000, 1010, 990, 1005, 995, 1002, 998}
	if v := openMPVerdict(def, []float64{990, 985, 992, 988, 991, 987, 989}); v.Faster || !strings.HasPrefix(v.Test, "within 3%") {
		t.Errorf("1%% faster: %+v, want within 3%%", v)
	}
	if v := openMPVerdict(def[:2], []float64{500, 1500}); v.Faster {
		t.Errorf("two noisy runs: %+v, want not separable", v)
	}
	v := openMPVerdict(def, []float64{600, 610, 590, 605, 595, 602, 598})
	if !v.Faster || v.MarginPct < 60 || v.MarginPct > 75 {
		t.Errorf("0.6x: %+v, want faster by about 67%%", v)
	}
}

// slowOpenMP builds a stand-in loop (a shell script) that takes 0.4 s a
// run, twice as fast under KMP_AFFINITY: a window of a few seconds holds
// too few pairs to decide.
type slowOpenMP struct {
	Hardware
	dir string
}

func (slowOpenMP) OpenMPToolchains() []ompcheck.Toolchain {
	return []ompcheck.Toolchain{{Runtime: ompcheck.LibOMP, Compiler: "clang"}}
}

func (s slowOpenMP) BuildOpenMP(_ context.Context, tc ompcheck.Toolchain, _ string) (*ompcheck.Program, error) {
	path := filepath.Join(s.dir, "loop")
	body := `#!/bin/sh
sleep 0.4
ns=1000; [ -n "$KMP_AFFINITY" ] && ns=500
echo "threads $OMP_NUM_THREADS library /fake/libomp.so.5"
echo "barrier $ns $ns $ns $ns $ns $ns"
echo "stencil $ns $ns $ns $ns $ns $ns"
`
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		return nil, err
	}
	return &ompcheck.Program{Runtime: tc.Runtime, Compiler: tc.Compiler, Path: path, Library: "/fake/libomp.so.5", Version: "fake"}, nil
}

// TestOpenMPTooFewPairs: a window that holds too few pairs decides
// nothing, even for a setting twice as fast: the count records that it
// was not decided, with the budget that would decide it, and chooses
// nothing.
func TestOpenMPTooFewPairs(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	f := openMPFile()
	f.Load = &results.Load{} // quiet: the probe alone may not say busy
	start := time.Now()
	measureOpenMP(context.Background(), f, Config{Budget: 12 * time.Second, Algorithms: catalog.Names()}, slowOpenMP{dir: t.TempDir()}, start.Add(4*time.Second), 1)
	r := f.OpenMP.Runtime(ompcheck.LibOMP)
	if r == nil || len(r.Counts) != 1 {
		t.Fatalf("got %+v, want libomp's one count", f.OpenMP)
	}
	c := r.Counts[0]
	if len(c.Best) != 0 || !strings.Contains(c.NotDecided+c.NotMeasured, "need 4") || !strings.Contains(c.NotDecided+c.NotMeasured, "a budget of") {
		t.Errorf("got %+v; want nothing chosen and not decided, with the budget that would decide", c)
	}
	if c.NotDecided != "" && !(c.NeedBudgetS > 12) {
		t.Errorf("need_budget_s %g: want more than the 12 s given", c.NeedBudgetS)
	}
	if d := time.Since(start); d > 7*time.Second {
		t.Errorf("the step took %s of a 4 s window", d)
	}
}

// floorOpenMP is slowOpenMP whose floor reads each of floors in turn.
type floorOpenMP struct {
	slowOpenMP
	floors *[]float64
}

func (f floorOpenMP) CanPingPong() bool { return true }

func (f floorOpenMP) Floor(a, b int, _ measure.Options) (measure.PingPong, error) {
	if len(*f.floors) == 0 {
		return measure.PingPong{}, errors.New("no floor left")
	}
	x := (*f.floors)[0]
	*f.floors = (*f.floors)[1:]
	return measure.PingPong{CPUs: [2]int{a, b}, MedianNs: x}, nil
}

// TestOpenMPRecordsTheHostState: the step records the floor measured
// just before and just after it, and says that the host moved when the
// two are a host state apart; within the factor it records both and
// says nothing.
func TestOpenMPRecordsTheHostState(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	floors := []float64{80.04, 350}
	f := openMPFile()
	f.Load = &results.Load{}
	measureOpenMP(context.Background(), f, Config{Budget: 12 * time.Second, Algorithms: catalog.Names()}, floorOpenMP{slowOpenMP{dir: t.TempDir()}, &floors}, time.Now().Add(3500*time.Millisecond), 1)
	o := f.OpenMP
	if o.HostFloorBeforeNs != 80 || o.HostFloorAfterNs != 350 || !strings.Contains(o.HostMoved, "80 ns before it and 350 ns after") {
		t.Errorf("floors %g, %g, host_moved %q; want 80, 350 and the move named", o.HostFloorBeforeNs, o.HostFloorAfterNs, o.HostMoved)
	}
	if len(floors) != 0 {
		t.Errorf("%d floors left unread, want both read", len(floors))
	}
	for _, c := range []struct {
		before, after float64
		moved         bool
	}{{100, 140, false}, {140, 100, false}, {139, 216, false}, {100, 199, false}, {100, 200, true}, {300, 100, true}, {0, 100, false}, {100, math.NaN(), false}} {
		b, a, why := bracketFloors(c.before, c.after)
		if (why != "") != c.moved {
			t.Errorf("bracketFloors(%g, %g) = %q; want moved %v", c.before, c.after, why, c.moved)
		}
		if !(c.before > 0 && c.after > 0) && (b != 0 || a != 0) {
			t.Errorf("bracketFloors(%g, %g) records %g, %g; want nothing for a floor not measured", c.before, c.after, b, a)
		}
	}
}

// TestOpenMPStopped: a step stopped by a signal (its context canceled,
// the window not over) records its undecided counts as stopped, with the
// cause, and never as a budget that ran out or one that would decide
// them: a larger budget would not have helped.
func TestOpenMPStopped(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	f := openMPFile()
	f.Load = &results.Load{}
	stop := errors.New("interrupted by SIGINT")
	ctx, cancel := context.WithCancelCause(context.Background())
	timer := time.AfterFunc(1200*time.Millisecond, func() { cancel(stop) })
	defer timer.Stop()
	start := time.Now()
	measureOpenMP(ctx, f, Config{Budget: time.Minute, Algorithms: catalog.Names()}, slowOpenMP{dir: t.TempDir()}, start.Add(30*time.Second), 1)
	r := f.OpenMP.Runtime(ompcheck.LibOMP)
	if r == nil || len(r.Counts) != 1 {
		t.Fatalf("got %+v, want libomp's one count", f.OpenMP)
	}
	c := r.Counts[0]
	why := c.NotDecided + c.NotMeasured
	if len(c.Best) != 0 || !strings.Contains(why, stop.Error()) || strings.Contains(why, "budget") || c.NeedBudgetS != 0 {
		t.Errorf("got %+v; want it stopped by %q, with no budget named", c, stop)
	}
}

// TestBusyLooks: a runtime step calls the machine busy only when a
// second, longer look confirms the first; a quiet first look takes no
// second, and a transient the second look misses is not load.
func TestBusyLooks(t *testing.T) {
	for _, c := range []struct {
		looks []bool
		want  string
		n     int
	}{
		{[]bool{false}, "", 1},
		{[]bool{true, false}, "", 2},
		{[]bool{true, true}, "look 2", 2},
	} {
		n := 0
		var slept time.Duration
		got := busyLooks(func(d time.Duration) (bool, string) {
			n++
			return c.looks[n-1], fmt.Sprintf("look %d", n)
		}, func(d time.Duration) { slept += d })
		if got != c.want || n != c.n || (n == 2) != (slept > 0) {
			t.Errorf("looks %v: %q after %d looks (slept %s), want %q after %d", c.looks, got, n, slept, c.want, c.n)
		}
	}
}

// usageSeq is a measurer whose Usage reads are given in turn: what else
// used the CPUs while a step ran.
type usageSeq struct {
	Hardware
	reads []sysload.Usage
	i     *int
}

func (u usageSeq) Usage([]int) (sysload.Usage, error) {
	if *u.i >= len(u.reads) {
		return sysload.Usage{}, errors.New("no more readings")
	}
	*u.i++
	return u.reads[*u.i-1], nil
}

// TestStepWatch: a runtime step is called busy when other processes used
// a quarter of a CPU or more while it ran (the machine's busy time less
// the check's own and its children's), quiet below that, and never by a
// measurer that cannot tell.
func TestStepWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(wall, machine, own time.Duration) sysload.Usage {
		return sysload.Usage{When: t0.Add(wall), Machine: machine, Own: own}
	}
	for _, tc := range []struct {
		name string
		b    sysload.Usage
		busy bool
	}{
		{"a compiler beside the step", at(10*time.Second, 30*time.Second, 19*time.Second), true},  // others 11 s of 10 s: 110%
		{"quiet: the step's own runs", at(10*time.Second, 19*time.Second, 18*time.Second), false}, // others 1 s: 10%
		{"just over the bound", at(10*time.Second, 20600*time.Millisecond, 18*time.Second), true}, // others 2.6 s: 26%
	} {
		i := 0
		got := stepWatch(usageSeq{reads: []sysload.Usage{at(0, 0, 0), tc.b}, i: &i}, nil)()
		if (got != "") != tc.busy || (tc.busy && !strings.Contains(got, "while the step ran")) {
			t.Errorf("%s: %q, want busy %v, saying it was while the step ran", tc.name, got, tc.busy)
		}
	}
	type fake struct{ Measurer }
	if got := stepWatch(fake{}, nil)(); got != "" {
		t.Errorf("a measurer without Usage: %q, want never busy", got)
	}
	i := 0
	if got := stepWatch(usageSeq{reads: []sysload.Usage{at(0, 0, 0)}, i: &i}, nil)(); got != "" {
		t.Errorf("a second reading that fails: %q, want not busy", got)
	}
}

// TestBusyProbeSeesACompetitor: a CPU-bound process running beside the
// check (started here, bounded, killed by its pid) makes the probe before
// a runtime step call the machine busy, naming the CPU it used; a
// measurer that cannot read the machine never does.
func TestBusyProbeSeesACompetitor(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/stat")
	}
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	if _, err := (Hardware{}).Usage(nil); err != nil {
		t.Skipf("no CPU times here: %v", err)
	}
	spin := exec.Command("/bin/sh", "-c", "while :; do :; done")
	if err := spin.Start(); err != nil {
		t.Fatal(err)
	}
	killed := make(chan struct{})
	go func() {
		select {
		case <-killed:
		case <-time.After(20 * time.Second): // bounded whatever the test does
		}
		spin.Process.Kill()
	}()
	defer func() {
		close(killed)
		spin.Process.Kill()
		spin.Wait()
	}()
	time.Sleep(50 * time.Millisecond)
	why := busyProbe(context.Background(), Hardware{}, nil)
	if !strings.Contains(why, "of a CPU") {
		t.Errorf("a spinning process beside the probe: %q, want busy, naming the CPU others used", why)
	}
	type fake struct{ Measurer }
	if why := busyProbe(context.Background(), fake{}, nil); why != "" {
		t.Errorf("a measurer without Usage: %q, want never busy", why)
	}
}
