package export

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/barriertune/barriertune/internal/osal"
)

// processFacts runs the process program and returns its "key value"
// lines.
func processFacts(t *testing.T, dir, bin string, env []string, taskset string) (map[string]string, string) {
	t.Helper()
	name, args := filepath.Join(dir, bin), []string(nil)
	if taskset != "" {
		p, err := exec.LookPath("taskset")
		if err != nil {
			t.Skip("taskset not installed")
		}
		name, args = p, []string{"-c", taskset, filepath.Join(dir, bin)}
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v\n%s%s", bin, err, stdout.String(), stderr.String())
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("%s: a hang", bin)
	}
	facts := map[string]string{}
	for _, l := range strings.Split(stdout.String(), "\n") {
		if k, v, ok := strings.Cut(l, " "); ok {
			facts[k] = v
		}
	}
	return facts, stderr.String()
}

// BARRIERTUNE_WAIT_POLICY sets the process's wait policy (read once, when
// the program is loaded); barriertune_barrier_init_policy overrides it for
// one barrier; an invalid value gives auto and one line on standard error
// naming the value and the accepted ones.
func TestCBarrierWaitPolicy(t *testing.T) {
	path := cTool(t, "gcc")
	dir := headerDir(t, fixture(t))
	compileIn(t, dir, path, "process", "process.c", "-std=c11", "-O2")
	for _, c := range []struct{ env, want, stderr string }{
		{"", "auto", ""},
		{"active", "active", ""},
		{" PASSIVE ", "passive", ""},
		{"Auto", "auto", ""},
		{"spin-forever", "auto", `BARRIERTUNE_WAIT_POLICY="spin-forever" is not a wait policy (accepted: active, passive, auto); using auto`},
	} {
		env := []string{}
		if c.env != "" {
			env = append(env, "BARRIERTUNE_WAIT_POLICY="+c.env)
		}
		facts, stderr := processFacts(t, dir, "process", env, "")
		if facts["policy"] != c.want || facts["from_env"] != c.want {
			t.Errorf("BARRIERTUNE_WAIT_POLICY=%q: policy %q, init_policy(FROM_ENV) %q; want %q", c.env, facts["policy"], facts["from_env"], c.want)
		}
		if facts["explicit"] != "active" {
			t.Errorf("BARRIERTUNE_WAIT_POLICY=%q: init_policy(ACTIVE) gives %q", c.env, facts["explicit"])
		}
		if facts["init_policy(3)"] != "22" || facts["init_policy(-2)"] != "22" {
			t.Errorf("init_policy with no such policy: %q and %q, want EINVAL (22)", facts["init_policy(3)"], facts["init_policy(-2)"])
		}
		if (c.stderr == "") != (stderr == "") || !strings.Contains(stderr, c.stderr) || strings.Count(stderr, "\n") > 1 {
			t.Errorf("BARRIERTUNE_WAIT_POLICY=%q: stderr %q, want %q", c.env, stderr, c.stderr)
		}
	}
}

// The CPUs the process may use are its affinity within its cgroup's CPU
// quota, the least of the cgroup's and its ancestors' (v2's cpu.max, v1's
// cfs quota), as Go's osal.Usable reads them; two
// threads under a quota of one CPU take the blocking wait.
func TestCBarrierCgroupQuota(t *testing.T) {
	if osal.Usable() < 2 {
		t.Skip("needs 2 usable CPUs, to see a quota of 1 limit them")
	}
	path := cTool(t, "gcc")
	dir := headerDir(t, fixture(t))
	// One build reads every case's files: the test root is rewritten
	// between the runs.
	root := filepath.Join(dir, "root")
	compileIn(t, dir, path, "process-root", "process.c", "-std=c11", "-O2", testRoot(root))
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const self, fs = "proc/self/cgroup", "sys/fs/cgroup" // under the test root
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string // allowed CPUs; "" = the affinity's
		block string
	}{
		{"v2 parent quota", map[string]string{self: "0::/a/b\n", fs + "/a/b/cpu.max": "max 100000\n", fs + "/a/cpu.max": "50000 100000\n"}, "1", "1"},
		{"v2 no quota", map[string]string{self: "0::/a\n", fs + "/a/cpu.max": "max 100000\n", fs + "/cpu.max": "max 100000\n"}, "", "0"},
		{"v2 quota above the affinity", map[string]string{self: "0::/\n", fs + "/cpu.max": "6400000 100000\n"}, "", "0"},
		{"v1 cpu controller", map[string]string{self: "12:memory:/m\n4:cpu,cpuacct:/x\n", fs + "/cpu,cpuacct/x/cpu.cfs_quota_us": "50000\n", fs + "/cpu,cpuacct/x/cpu.cfs_period_us": "100000\n"}, "1", "1"},
		{"v1 no quota", map[string]string{self: "4:cpu,cpuacct:/x\n", fs + "/cpu,cpuacct/x/cpu.cfs_quota_us": "-1\n", fs + "/cpu,cpuacct/x/cpu.cfs_period_us": "100000\n"}, "", "0"},
		{"garbage", map[string]string{self: "0::/a\n", fs + "/a/cpu.max": "zzz\x00\xff 1\n"}, "", "0"},
		{"no cgroup file", map[string]string{}, "", "0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.RemoveAll(root); err != nil {
				t.Fatal(err)
			}
			for k, v := range c.files {
				write(k, v)
			}
			facts, _ := processFacts(t, dir, "process-root", nil, "")
			want := c.want
			if want == "" {
				want = facts["allowed"] // the affinity's count, checked below
				if n := osal.Usable(); want != strconv.Itoa(n) {
					t.Errorf("allowed %s, want the affinity's %d", facts["allowed"], n)
				}
			}
			if facts["allowed"] != want || facts["block"] != c.block {
				t.Errorf("allowed %q block %q, want %q and %q", facts["allowed"], facts["block"], want, c.block)
			}
			// A binding quota: no per-CPU arrival words (a waiter
			// that spun would spend the quota its partners need).
			if binds := c.want != ""; (facts["cpuwords"] == "0") != binds {
				t.Errorf("quota binds %v: cpuwords %q", binds, facts["cpuwords"])
			}
		})
	}
}

// barriertune_barrier_pin places a participant within the CPUs the process
// may use: the table's CPU where the process may use every CPU
// the choice places on, else the (id mod k)th of its own.
func TestCBarrierPinWithinAllowed(t *testing.T) {
	if osal.Usable() < 2 {
		t.Skip("needs CPUs 0 and 1")
	}
	path := cTool(t, "gcc")
	dir := headerDir(t, fixture(t))
	compileIn(t, dir, path, "process", "process.c", "-std=c11", "-O2")
	facts, _ := processFacts(t, dir, "process", nil, "0,1")
	if facts["pin0"] != "0 0" || facts["pin1"] != "0 1" {
		t.Errorf("every CPU allowed: pin0 %q pin1 %q, want the table's CPUs (\"0 0\", \"0 1\")", facts["pin0"], facts["pin1"])
	}
	facts, _ = processFacts(t, dir, "process", nil, "1")
	if facts["pin0"] != "0 1" || facts["pin1"] != "0 1" {
		t.Errorf("CPU 1 alone allowed: pin0 %q pin1 %q, want both on CPU 1 (\"0 1\")", facts["pin0"], facts["pin1"])
	}
}
