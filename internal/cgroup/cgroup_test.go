package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/cpuset"
)

// tree writes files (slash-separated paths under a new root) and returns
// the root.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func with(base map[string]string, more map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// TestRead reads fabricated /proc and /sys trees of cgroup v2, v1 and the
// legacy cpuset file system: the effective set before the configured
// one, the tightest quota of the cgroup and its ancestors, the mounts from
// mountinfo or, without it, /proc/mounts.
func TestRead(t *testing.T) {
	v2 := map[string]string{
		"proc/self/cgroup":    "0::/app/job\n",
		"proc/self/mountinfo": "30 22 0:27 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw\n",
	}
	v1 := map[string]string{
		"proc/self/cgroup": "4:memory:/x\n3:cpuset:/box\n1:cpu,cpuacct:/box\n",
		"proc/self/mountinfo": "31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n" +
			"33 30 0:30 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n",
		"sys/fs/cgroup/cpuset/box/cpuset.effective_cpus":  "0-5\n",
		"sys/fs/cgroup/cpuset/box/cpuset.cpus":            "0-7\n",
		"sys/fs/cgroup/cpuset/box/cpuset.effective_mems":  "0\n",
		"sys/fs/cgroup/cpu,cpuacct/box/cpu.cfs_quota_us":  "250000\n",
		"sys/fs/cgroup/cpu,cpuacct/box/cpu.cfs_period_us": "100000\n",
	}
	for _, c := range []struct {
		name  string
		files map[string]string
		cpus  string // "" for none
		mems  string // "" for unknown
		quota int
	}{
		{"no cgroup files", nil, "", "", 0},
		{"v2 unlimited", with(v2, map[string]string{"sys/fs/cgroup/app/job/cpu.max": "max 100000\n"}), "", "", 0},
		{"v2 cpuset", with(v2, map[string]string{"sys/fs/cgroup/app/job/cpuset.cpus.effective": "0-2,6\n", "sys/fs/cgroup/app/job/cpuset.cpus": "0-7\n",
			"sys/fs/cgroup/app/job/cpuset.mems.effective": "1\n"}), "0-2,6", "1", 0},
		{"v2 configured set alone", with(v2, map[string]string{"sys/fs/cgroup/app/job/cpuset.cpus": "4-5\n"}), "4-5", "", 0},
		{"v2 quota rounds up", with(v2, map[string]string{"sys/fs/cgroup/app/job/cpu.max": "150000 100000\n"}), "", "", 2},
		{"v2 ancestor's quota", with(v2, map[string]string{"sys/fs/cgroup/app/job/cpu.max": "max 100000\n", "sys/fs/cgroup/app/cpu.max": "300000 100000\n"}), "", "", 3},
		{"v2 tiny quota", with(v2, map[string]string{"sys/fs/cgroup/app/job/cpu.max": "1000 100000\n"}), "", "", 1},
		{"v2 malformed", with(v2, map[string]string{"sys/fs/cgroup/app/job/cpu.max": "lots\n", "sys/fs/cgroup/app/job/cpuset.cpus.effective": "zero\n"}), "", "", 0},
		{"v1 effective first, quota", v1, "0-5", "0", 3},
		{"legacy cpuset file system in /proc/mounts", map[string]string{
			"proc/self/cpuset":                        "/job\n",
			"proc/mounts":                             "cgroup /sys/fs/cgroup/cpuset cpuset rw,nosuid 0 0\n",
			"sys/fs/cgroup/cpuset/job/cpus":           "0-3\n",
			"sys/fs/cgroup/cpuset/job/effective_cpus": "2-3\n",
			"sys/fs/cgroup/cpuset/job/mems":           "0\n"}, "2-3", "0", 0},
		{"v1 noprefix in /proc/mounts", map[string]string{
			"proc/self/cpuset":      "/prout\n",
			"proc/mounts":           "cgroup2 /dev/cgroup cgroup2 rw 0 0\ncpuset /dev/cpuset cgroup rw,relatime,cpuset,noprefix 0 0\n",
			"dev/cpuset/prout/cpus": "0-3\n", "dev/cpuset/prout/mems": "2-3\n"}, "0-3", "2-3", 0},
		{"v1 cpuset in /proc/mounts", map[string]string{
			"proc/self/cpuset":                     "/job\n",
			"proc/mounts":                          "cgroup /sys/fs/cgroup/cpuset cgroup rw,nosuid,cpuset 0 0\n",
			"sys/fs/cgroup/cpuset/job/cpuset.cpus": "1-2\n"}, "1-2", "", 0},
	} {
		l := Read(tree(t, c.files))
		if got := l.CPUs.String(); got != c.cpus {
			t.Errorf("%s: CPUs %q, want %q", c.name, got, c.cpus)
		}
		var mems string
		if l.Mems != nil {
			mems = l.Mems.String()
		}
		if mems != c.mems {
			t.Errorf("%s: mems %q, want %q", c.name, mems, c.mems)
		}
		if l.Quota != c.quota {
			t.Errorf("%s: quota %d, want %d", c.name, l.Quota, c.quota)
		}
		if (l.Cpuset != "") != (c.cpus != "") {
			t.Errorf("%s: cpuset path %q with CPUs %q", c.name, l.Cpuset, c.cpus)
		}
	}
}

// TestReadCapped: an oversized mountinfo is refused, not read whole, and
// limits nothing.
func TestReadCapped(t *testing.T) {
	root := tree(t, map[string]string{
		"proc/self/cgroup":                      "0::/j\n",
		"sys/fs/cgroup/j/cpuset.cpus.effective": "0\n",
	})
	f, err := os.Create(filepath.Join(root, "proc", "self", "mountinfo"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxMountsSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if l := Read(root); !l.CPUs.IsEmpty() {
		t.Errorf("an oversized mountinfo gave CPUs %s", l.CPUs)
	}
}

// TestReadLive: this process's limits are within the machine (a smoke
// test: where there is no cgroup file system it finds nothing).
func TestReadLive(t *testing.T) {
	l := Read("/")
	if l.CPUs.Len() > cpuset.MaxCPU+1 || l.Quota < 0 {
		t.Fatalf("Read(/) = %+v", l)
	}
	if !l.CPUs.IsEmpty() && !strings.HasPrefix(l.Cpuset, "/") {
		t.Errorf("cpuset %s at path %q, want an absolute cgroup path", l.CPUs, l.Cpuset)
	}
}
