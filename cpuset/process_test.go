package cpuset

import (
	"runtime"
	"testing"
	"testing/fstest"
)

// TestUsableFromCgroups reads fabricated /proc and /sys trees: the count is
// the start affinity's, narrowed by the cgroup's cpuset and by the
// tightest CPU quota of the cgroup and its ancestors, in v2 and in v1.
func TestUsableFromCgroups(t *testing.T) {
	v2 := func(files map[string]string) fstest.MapFS {
		m := fstest.MapFS{
			"proc/self/cgroup":    {Data: []byte("0::/app/job\n")},
			"proc/self/mountinfo": {Data: []byte("30 22 0:27 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw\n")},
		}
		for k, v := range files {
			m[k] = &fstest.MapFile{Data: []byte(v)}
		}
		return m
	}
	v1 := fstest.MapFS{
		"proc/self/cgroup": {Data: []byte("4:memory:/x\n3:cpuset:/box\n1:cpu,cpuacct:/box\n")},
		"proc/self/mountinfo": {Data: []byte("31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n" +
			"33 30 0:30 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n")},
		"sys/fs/cgroup/cpuset/box/cpuset.effective_cpus":  {Data: []byte("0-5\n")},
		"sys/fs/cgroup/cpu,cpuacct/box/cpu.cfs_quota_us":  {Data: []byte("250000\n")},
		"sys/fs/cgroup/cpu,cpuacct/box/cpu.cfs_period_us": {Data: []byte("100000\n")},
	}
	for _, c := range []struct {
		name   string
		numCPU int
		root   fstest.MapFS
		want   int
	}{
		{"no cgroup files", 8, fstest.MapFS{}, 8},
		{"v2 unlimited", 8, v2(map[string]string{"sys/fs/cgroup/app/job/cpu.max": "max 100000\n"}), 8},
		{"v2 cpuset", 8, v2(map[string]string{"sys/fs/cgroup/app/job/cpuset.cpus.effective": "0-2,6\n"}), 4},
		{"v2 quota rounds up", 8, v2(map[string]string{"sys/fs/cgroup/app/job/cpu.max": "150000 100000\n"}), 2},
		{"v2 ancestor's quota", 8, v2(map[string]string{"sys/fs/cgroup/app/job/cpu.max": "max 100000\n", "sys/fs/cgroup/app/cpu.max": "300000 100000\n"}), 3},
		{"v2 quota above affinity", 2, v2(map[string]string{"sys/fs/cgroup/app/job/cpu.max": "800000 100000\n"}), 2},
		{"v2 tiny quota", 8, v2(map[string]string{"sys/fs/cgroup/app/job/cpu.max": "1000 100000\n"}), 1},
		{"v1 cpuset and quota", 8, v1, 3},
		{"v1 affinity narrower", 2, v1, 2},
	} {
		if got := usableFrom(c.numCPU, c.root); got != c.want {
			t.Errorf("%s: usableFrom(%d) = %d, want %d", c.name, c.numCPU, got, c.want)
		}
	}
}

// TestUsableWithinNumCPU: the process's count is never above the CPUs the
// runtime saw at start, nor below 1.
func TestUsableWithinNumCPU(t *testing.T) {
	if u := Usable(); u < 1 || u > runtime.NumCPU() {
		t.Fatalf("Usable() = %d, want 1..%d (runtime.NumCPU)", u, runtime.NumCPU())
	}
}
