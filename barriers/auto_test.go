package barriers

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/results"
)

// atLeastTwoProcs raises GOMAXPROCS to 2 for the test, where it is 1 (CI's
// GOMAXPROCS=1 run): Tuned selects inside what the process runs at once,
// and a winner measured with two threads applies where two run.
func atLeastTwoProcs(t *testing.T) {
	if old := runtime.GOMAXPROCS(0); old < 2 {
		runtime.GOMAXPROCS(2)
		t.Cleanup(func() { runtime.GOMAXPROCS(old) })
	}
}

// writeResults records a winner for 2 threads on this machine.
func writeResults(t *testing.T, mutate func(*results.File)) string {
	t.Helper()
	allowed, err := osal.Allowed()
	if err != nil {
		t.Skip(err)
	}
	cpus := allowed.Members()
	if len(cpus) < 2 || osal.Usable() < 2 {
		t.Skip("needs two usable CPUs")
	}
	atLeastTwoProcs(t)
	f := &results.File{
		Schema:  results.Schema,
		Machine: machine(allowed.String()),
		Threads: []results.Threads{{Threads: 2, Complete: true, Best: &results.Choice{CPUs: cpus[:2], MedianNs: 61, Spec: results.Spec{Algorithm: "mcs", Policy: "spin"}}}},
	}
	if mutate != nil {
		mutate(f)
	}
	path := filepath.Join(t.TempDir(), "results.json")
	if err := writeResultsFile(path, f); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAutoPicksTheWinner(t *testing.T) {
	path := writeResults(t, nil)
	t.Setenv(results.ResultsEnv, path)
	tu := Tuned(2)
	if tu.Algorithm != "mcs" || tu.Fallback != "" || tu.Source != path || len(tu.CPUs) != 2 || tu.MedianNs != 61 {
		t.Fatalf("Tuned(2) = %+v, want mcs from %s", tu, path)
	}
	b, err := Auto(2)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.(*mcs); !ok {
		t.Errorf("Auto(2) is %T, want the tuned mcs", b)
	}
	// Another count takes the nearest measured count's algorithm, packed
	// on the first allowed CPUs.
	if tu := Tuned(1); tu.Algorithm != "mcs" || tu.Rule != results.RuleNearest || len(tu.CPUs) != 1 || tu.CPUs[0] != allowedCPUs(t)[0] {
		t.Errorf("Tuned(1) = %+v", tu)
	}
	// More participants than allowed CPUs are another regime: goroutine,
	// round-robin, on an unpinned team.
	over := len(allowedCPUs(t)) + 1 // the file has an entry for 2
	if tu := Tuned(over); tu.Algorithm != "goroutine" || tu.Rule != results.RuleOversubscribed || len(tu.CPUs) != over {
		t.Errorf("Tuned(%d) = %+v, want goroutine for more participants than CPUs", over, tu)
	} else if team, err := tu.Team(); err != nil || team.Pinned() {
		t.Errorf("Tuned(%d).Team() pinned %v, %v: want plain goroutines", over, team.Pinned(), err)
	}
	team, err := tu.Team()
	if err != nil || !team.Pinned() || !slices.Equal(team.CPUs(), tu.CPUs) {
		t.Errorf("Team() = %v pinned, %v, %v", team.Pinned(), team.CPUs(), err)
	}
	checkBarrier(t, b, 2, 100, 1)
}

func TestAutoFallback(t *testing.T) {
	// No file anywhere in the lookup order: none named, no per-user file.
	t.Setenv(results.ResultsEnv, filepath.Join(t.TempDir(), "none.json"))
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_DIRS", "")
	if _, err := os.Stat(results.SystemPath); err == nil {
		t.Skipf("a system-wide results file exists at %s: the fallback cannot be seen here", results.SystemPath)
	}
	cache.reset()
	tu := Tuned(2)
	if tu.Algorithm != fallbackAlgorithm(2) || !strings.Contains(tu.Fallback, "no results file") {
		t.Errorf("Tuned without a file = %+v", tu)
	}
	b, err := Auto(2)
	if err != nil || b.N() != 2 {
		t.Fatalf("Auto(2) without results: %v", err)
	}
	if fallbackAlgorithm(1000) != "goroutine" {
		t.Error("oversubscribed fallback must be goroutine")
	}
	team, err := Tuned(3).Team()
	if err != nil || team.Pinned() || team.Size() != 3 {
		t.Errorf("fallback team: %v", err)
	}
}

func TestAutoRefusesForeignResults(t *testing.T) {
	path := writeResults(t, func(f *results.File) {
		f.Machine.CPU.Name = "Imaginary CPU 9000"
		f.Machine.AllowedCPUs = "0-4095"
	})
	tu := TunedFrom(path, 2)
	if tu.Algorithm != fallbackAlgorithm(2) || !strings.Contains(tu.Fallback, "another machine") || !strings.Contains(tu.Fallback, "Imaginary") || !strings.Contains(tu.Fallback, "0-4095") {
		t.Errorf("foreign results: %+v", tu)
	}
	t.Setenv(results.ForceEnv, "1")
	if tu := TunedFrom(path, 2); tu.Algorithm != "mcs" || !strings.Contains(tu.Warning, "another machine") {
		t.Errorf("forced foreign results: %+v", tu)
	}
	t.Setenv(results.ForceEnv, "")
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := writeResultsFile(bad, &results.File{Machine: results.Machine{TopologyHash: "x", AllowedCPUs: "0"}}); err != nil {
		t.Fatal(err)
	}
	if tu := TunedFrom(bad, 2); tu.Fallback == "" {
		t.Errorf("a file without winners must fall back: %+v", tu)
	}
}

// allowedCPUs are the CPUs this process may run on.
func allowedCPUs(t *testing.T) []int {
	allowed, err := osal.Allowed()
	if err != nil {
		t.Skip(err)
	}
	return allowed.Members()
}

// machine is this machine's fingerprint as the check records it (with a
// tree digest, which the library trusts).
func machine(allowed string) results.Machine {
	m := hostMachine(allowed)
	m.Topology, m.TopologyHash = "test", "0123456789abcdef"
	return m
}

// TestTunedCachesUntilReload: Tuned reads the file once per path; the
// cache's reset makes it read again.
func TestTunedCachesUntilReload(t *testing.T) {
	cache.reset()
	t.Cleanup(cache.reset)
	path := writeResults(t, nil)
	t.Setenv(results.ResultsEnv, path)
	if tu := Tuned(2); tu.Algorithm != "mcs" {
		t.Fatalf("Tuned(2) = %+v, want mcs", tu)
	}
	f, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Threads[0].Best.Algorithm = "tournament"
	if err := writeResultsFile(path, f); err != nil {
		t.Fatal(err)
	}
	if tu := Tuned(2); tu.Algorithm != "mcs" {
		t.Errorf("cached Tuned(2) = %s, want mcs (the file is read once)", tu.Algorithm)
	}
	if tu := TunedFrom(path, 2); tu.Algorithm != "tournament" {
		t.Errorf("TunedFrom reads every time: %s", tu.Algorithm)
	}
	cache.reset()
	if tu := Tuned(2); tu.Algorithm != "tournament" {
		t.Errorf("after the reset Tuned(2) = %s, want tournament", tu.Algorithm)
	}
	// Another path is another read.
	other := writeResults(t, func(f *results.File) { f.Threads[0].Best.Algorithm = "central" })
	t.Setenv(results.ResultsEnv, other)
	if tu := Tuned(2); tu.Algorithm != "central" {
		t.Errorf("Tuned(2) with a new path = %s, want central", tu.Algorithm)
	}
}

// TestLightDependencies: the library links only the standard library,
// golang.org/x/sys and this module's light packages (hwtree, which
// results builds the recorded tree with, among them): no ghw, no cgo, no
// CLI.
func TestLightDependencies(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH:", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Skip("go list:", err)
	}
	const mod = "github.com/barriertune/barriertune/"
	light := []string{mod + "barriers", mod + "osal", mod + "results", mod + "cpuset", mod + "hwtree"}
	for _, p := range strings.Fields(string(out)) {
		first, _, _ := strings.Cut(p, "/")
		switch {
		case p == "runtime/cgo" || strings.Contains(p, "ghw") || p == mod+"cmd/internal/cpumodel":
			t.Errorf("the barriers package links %s", p)
		case !strings.Contains(first, "."), strings.HasPrefix(p, "vendor/"):
			// standard library
		case strings.HasPrefix(p, "golang.org/x/sys/"):
		case slices.Contains(light, p), strings.HasPrefix(p, mod+"internal/"):
		default:
			t.Errorf("the barriers package links %s, not a light package", p)
		}
	}
}

// TestTunedBySystemFile: with no $BARRIERTUNE_RESULTS and no per-user file
// (another uid, env -i), Tuned takes the system-wide file's choice; a
// per-user file recorded on another machine falls through to it.
func TestTunedBySystemFile(t *testing.T) {
	sys := writeResults(t, nil)
	allowed, err := osal.Allowed()
	if err != nil {
		t.Skip(err)
	}
	fd := results.Finder{System: []string{sys}, Host: hostMachine(allowed.String())}
	if tu := tunedBy(fd, 2); tu.Algorithm != "mcs" || tu.Source != sys || tu.Rule != results.Measured || len(tu.Skipped) != 0 {
		t.Errorf("system file only: %+v", tu)
	}
	fd.User = writeResults(t, func(f *results.File) {
		f.Machine.CPU.Name = "Imaginary CPU 9000"
		f.Threads[0].Best.Algorithm = "central"
	})
	tu := tunedBy(fd, 2)
	if tu.Algorithm != "mcs" || tu.Source != sys || len(tu.Skipped) != 1 || !strings.Contains(tu.Skipped[0], "Imaginary") {
		t.Errorf("foreign per-user file: %+v, want the system file's mcs and the per-user file skipped", tu)
	}
	fd.System = []string{filepath.Join(t.TempDir(), "none.json")}
	if tu := tunedBy(fd, 2); tu.Fallback == "" || !strings.Contains(tu.Fallback, "Imaginary") {
		t.Errorf("no file applies: %+v, want the fallback with the reason", tu)
	}
}

// tunedBy is Tuned with an explicit lookup order (its Host names the
// allowed CPUs), read on every call.
func tunedBy(fd results.Finder, n int) Tuning {
	return tuning(prepare(fd.Find()), n)
}

// hostMachine is this machine's light fingerprint (results.HereFinder's)
// for the allowed CPUs given.
func hostMachine(allowed string) results.Machine {
	fd, _ := results.HereFinder()
	m := fd.Host
	m.AllowedCPUs = allowed
	return m
}

// reset drops the results Tuned and Auto cached, so the next call reads
// the file and fingerprints the machine again (the tests' way; a program's
// cache lasts the process).
func (c *resultsCache) reset() {
	c.mu.Lock()
	c.loaded = nil
	c.mu.Unlock()
}
