package export

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/internal/osal"
)

// An outnumbered central barrier counts its arrivals per CPU, and a
// waiter whose CPU holds no participant still to arrive spins instead of
// yielding. The words' protocol, step by step and under
// concurrent arrivals.
func TestCBarrierCPUWords(t *testing.T) {
	eachCC(t, func(t *testing.T, cc, path string) {
		dir := headerDir(t, fixture(t))
		compileIn(t, dir, path, "cpuwords", "cpuwords.c", "-std=c11", "-O2")
		out, err := runLimited(time.Minute, dir, filepath.Join(dir, "cpuwords"))
		if err != nil || strings.TrimSpace(out) != "ok" {
			t.Errorf("%v\n%s", err, out)
		}
	})
}

// The words are sized by the highest CPU the process may use (a power of
// two above it), and kept only where the threads outnumber those CPUs;
// the C library's sched_getcpu tells the CPU with or without _GNU_SOURCE.
// (A binding CPU quota: none; TestCBarrierCgroupQuota.)
func TestCBarrierCPUWordsSized(t *testing.T) {
	if osal.Usable() < 2 {
		t.Skip("needs CPUs 0 and 1")
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("taskset not installed")
	}
	path := cTool(t, "gcc")
	dir := headerDir(t, fixture(t))
	compileIn(t, dir, path, "cpuwords", "cpuwords.c", "-std=c11", "-O2")
	compileIn(t, dir, path, "cpuwords-gnu", "cpuwords.c", "-std=c11", "-O2", "-D_GNU_SOURCE")
	for _, c := range []struct{ bin, cpus, want string }{
		{"cpuwords", "0", "1"},
		{"cpuwords", "1", "2"},
		{"cpuwords", "0,1", "2"},
		{"cpuwords-gnu", "1", "2"},
	} {
		out, err := runLimited(time.Minute, dir, taskset, "-c", c.cpus, filepath.Join(dir, c.bin), "size")
		if err != nil || strings.TrimSpace(out) != "cpuwords "+c.want {
			t.Errorf("%s on CPUs %s: %v %q, want cpuwords %s", c.bin, c.cpus, err, out, c.want)
		}
	}
}

// The CPU the barrier believes a thread is on decides only whether a
// waiter spins a while and where its arrival is deposited: with a hint
// that lies (a random CPU at every look; every participant on a CPU of
// its own while all share one) the central barrier keeps the barrier
// property, blocking first, and every run ends. Under the active policy
// nobody sleeps, so every deposit must be added by a waiter's own flush
// after its yield (a wait that flushed only before sleeping never ends).
func TestCBarrierCPUHintLies(t *testing.T) {
	path := cTool(t, "gcc")
	dir := headerDir(t, fixture(t))
	compileIn(t, dir, path, "prop-hint", "prop.c", "-std=c11", "-O2", "-DPROP_CPU_HINT")
	taskset, _ := exec.LookPath("taskset")
	for _, c := range []struct {
		hint, cpus, n, policy string
	}{
		{"random", "", "8", "auto"},
		{"random", "", "16", "auto"},
		{"own", "", "8", "auto"},
		{"own", "0", "4", "auto"},
		{"random", "", "8", "active"},
		{"own", "0", "4", "active"},
	} {
		name, args := filepath.Join(dir, "prop-hint"), []string{"central", c.n, "100", "1", c.n}
		if c.cpus != "" {
			if taskset == "" {
				t.Log("taskset not installed: the one-CPU case skipped")
				continue
			}
			name, args = taskset, append([]string{"-c", c.cpus, name}, args...)
		}
		out, err := runEnv(time.Minute, dir, []string{"PROP_CPU_HINT=" + c.hint, "BARRIERTUNE_WAIT_POLICY=" + c.policy}, name, args...)
		if err != nil || !strings.HasPrefix(out, "ok central ") {
			t.Errorf("hint %s, CPUs %q, %s threads, %s: %v\n%s", c.hint, c.cpus, c.n, c.policy, err, out)
		}
	}
}
