package cpuset

import (
	"io/fs"
	"math"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// usable is the process's usable CPU count, read once (the accepted
// sync.Once-cached fact of the process).
var usable struct {
	once sync.Once
	n    int
}

// Usable returns how many CPUs this process may run on at once: the CPUs
// it was allowed at start (runtime.NumCPU: the affinity the runtime read
// before main, and before anything pinned a thread), no more than its
// cgroup's cpuset allows (cpuset.cpus.effective in cgroup v2,
// cpuset.effective_cpus in v1) and no more than its CPU quota buys
// (⌈quota/period⌉ of cpu.max in v2, cpu.cfs_quota_us in v1; the
// tightest of the cgroup and its ancestors). It never reads the calling
// thread's affinity, which a pinned thread (an OpenMP runtime's initial
// thread, a pinned team) has narrowed to its own CPU. Read once per
// process, at the first call; at least 1.
func Usable() int {
	usable.once.Do(func() { usable.n = usableFrom(runtime.NumCPU(), os.DirFS("/")) })
	return usable.n
}

// usableFrom is Usable for a process allowed numCPU CPUs at start, whose
// /proc and /sys are read from root (a file system rooted at /). A file
// that is missing or unreadable limits nothing.
func usableFrom(numCPU int, root fs.FS) int {
	n := max(numCPU, 1)
	v2, v1 := cgroupPaths(root)
	if v2.mount != "" {
		if s, ok := readList(root, path.Join(v2.mount, v2.rel, "cpuset.cpus.effective")); ok && s.Len() > 0 {
			n = min(n, s.Len())
		}
		for _, dir := range ancestors(v2.mount, v2.rel) {
			if q, ok := quotaV2(root, path.Join(dir, "cpu.max")); ok {
				n = min(n, q)
			}
		}
	}
	if c, ok := v1["cpuset"]; ok {
		if s, ok := readList(root, path.Join(c.mount, c.rel, "cpuset.effective_cpus")); ok && s.Len() > 0 {
			n = min(n, s.Len())
		} else if s, ok := readList(root, path.Join(c.mount, c.rel, "cpuset.cpus")); ok && s.Len() > 0 {
			n = min(n, s.Len())
		}
	}
	if c, ok := v1["cpu"]; ok {
		for _, dir := range ancestors(c.mount, c.rel) {
			if q, ok := quotaV1(root, dir); ok {
				n = min(n, q)
			}
		}
	}
	return max(n, 1)
}

// cgroupDir is a cgroup's directory: where its hierarchy is mounted, and
// its path below the mount.
type cgroupDir struct{ mount, rel string }

// cgroupPaths finds the process's cgroup v2 directory and its v1
// directories by controller (/proc/self/cgroup, /proc/self/mountinfo).
// Paths are relative to root (no leading slash).
func cgroupPaths(root fs.FS) (v2 cgroupDir, v1 map[string]cgroupDir) {
	v1 = map[string]cgroupDir{}
	cg, err := fs.ReadFile(root, "proc/self/cgroup")
	if err != nil {
		return v2, v1
	}
	mi, err := fs.ReadFile(root, "proc/self/mountinfo")
	if err != nil {
		return v2, v1
	}
	type mount struct{ root, point string }
	var unified mount
	byCtl := map[string]mount{}
	for _, line := range strings.Split(string(mi), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 {
			continue
		}
		m := mount{root: f[3], point: f[4]}
		switch g[0] {
		case "cgroup2":
			unified = m
		case "cgroup":
			for _, opt := range strings.Split(g[2], ",") {
				byCtl[opt] = m
			}
		}
	}
	rel := func(m mount, p string) cgroupDir {
		r := strings.TrimPrefix(p, m.root)
		if m.root != "/" && len(r) == len(p) { // the cgroup is outside the mount's root
			r = "/"
		}
		return cgroupDir{mount: strings.TrimPrefix(m.point, "/"), rel: strings.TrimPrefix(r, "/")}
	}
	for _, line := range strings.Split(string(cg), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			if unified.point != "" {
				v2 = rel(unified, f[2])
			}
			continue
		}
		for _, ctl := range strings.Split(f[1], ",") {
			if m, ok := byCtl[ctl]; ok && (ctl == "cpu" || ctl == "cpuset") {
				v1[ctl] = rel(m, f[2])
			}
		}
	}
	return v2, v1
}

// ancestors returns the cgroup's directory and its ancestors' up to the
// mount.
func ancestors(mount, rel string) []string {
	var out []string
	for r := rel; ; r = path.Dir(r) {
		if r == "." || r == "/" {
			r = ""
		}
		out = append(out, path.Join(mount, r))
		if r == "" {
			return out
		}
	}
}

func readList(root fs.FS, name string) (Set, bool) {
	b, err := fs.ReadFile(root, name)
	if err != nil {
		return Set{}, false
	}
	s, err := ParseList(strings.TrimSpace(string(b)))
	return s, err == nil
}

// quotaV2 reads a cgroup v2 cpu.max ("max 100000", or "quota period").
func quotaV2(root fs.FS, name string) (int, bool) {
	b, err := fs.ReadFile(root, name)
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] == "max" {
		return 0, false
	}
	return cpusOf(f[0], f[1])
}

// quotaV1 reads a cgroup v1 directory's cpu.cfs_quota_us (-1: none) and
// cpu.cfs_period_us.
func quotaV1(root fs.FS, dir string) (int, bool) {
	q, err1 := fs.ReadFile(root, path.Join(dir, "cpu.cfs_quota_us"))
	p, err2 := fs.ReadFile(root, path.Join(dir, "cpu.cfs_period_us"))
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return cpusOf(strings.TrimSpace(string(q)), strings.TrimSpace(string(p)))
}

// cpusOf returns ⌈quota/period⌉, at least 1, or false for no quota.
func cpusOf(quota, period string) (int, bool) {
	q, err1 := strconv.ParseInt(quota, 10, 64)
	p, err2 := strconv.ParseInt(period, 10, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0, false
	}
	return max(int(math.Ceil(float64(q)/float64(p))), 1), true
}
