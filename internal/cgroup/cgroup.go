// Package cgroup reads what a process's control groups allow it: the
// cpuset's CPUs and memory nodes and the CPU quota. It is the one reader
// of the cgroup files, parameterised by its root: "/" for this process,
// or a captured snapshot's directory holding proc/ and sys/.
//
// The cgroup's directories come from proc/self/cgroup (proc/self/cpuset
// where that file is missing) and the hierarchies' mount points from
// proc/self/mountinfo (proc/mounts where that is missing). A cpuset is
// read as the kernel enforces it: the effective set first
// (cpuset.cpus.effective in cgroup v2, cpuset.effective_cpus in v1,
// effective_cpus in the legacy cpuset file system and in a v1 hierarchy
// mounted with noprefix), then the configured one. A file that is missing, unreadable, too large or malformed
// limits nothing.
package cgroup

import (
	"math"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/capped"
)

// Limits is what a process's control groups allow it.
type Limits struct {
	// CPUs is the cpuset's CPUs (every hierarchy's that has a cpuset,
	// intersected); empty when no cpuset was found.
	CPUs cpuset.Set
	// Mems is the cpuset's memory nodes, nil when unknown.
	Mems *cpuset.Set
	// Cpuset is the cpuset's cgroup path ("/job"), "" when none was
	// found.
	Cpuset string
	// Quota is ⌈quota/period⌉ of the tightest CPU quota of the cgroup and
	// its ancestors (cpu.max in v2, cpu.cfs_quota_us and cpu.cfs_period_us
	// in v1); 0 when none is set.
	Quota int
}

// The caps on what is read: mountinfo on a container host with thousands
// of mounts holds a few MiB; every other file a line.
const (
	maxMountsSize = 64 << 20
	maxValueSize  = 1 << 20
)

// mount is one cgroup hierarchy's mount: the cgroup path mounted (its
// root), where, and its kind.
type mount struct {
	root, point string
	kind        int // v2, v1 (a cgroup mount with the cpuset or cpu controller) or legacy (fstype cpuset)
	ctls        []string
	noprefix    bool // v1 mounted with noprefix: cpus, not cpuset.cpus
}

const (
	v2 = iota
	v1
	legacy
)

// Read returns what the control groups of the process whose proc/ and
// sys/ lie under root allow it.
func Read(root string) Limits {
	var l Limits
	paths := cgroupPaths(root)
	for _, m := range mounts(root) {
		var p string
		switch m.kind {
		case v2:
			p = paths[""]
		case v1, legacy:
			for _, c := range m.ctls {
				if q, ok := paths[c]; ok {
					p = q
				}
			}
		}
		if p == "" {
			continue
		}
		dir := relative(m, p)
		if m.kind == v2 || m.has("cpuset") {
			cpuFiles, memFiles := []string{"cpuset.cpus.effective", "cpuset.cpus"}, []string{"cpuset.mems.effective", "cpuset.mems"}
			switch {
			case m.kind == legacy || m.noprefix:
				cpuFiles, memFiles = []string{"effective_cpus", "cpus"}, []string{"effective_mems", "mems"}
			case m.kind == v1:
				cpuFiles, memFiles = []string{"cpuset.effective_cpus", "cpuset.cpus"}, []string{"cpuset.effective_mems", "cpuset.mems"}
			}
			if cpus, ok := firstList(root, dir, cpuFiles); ok {
				if l.Cpuset == "" {
					l.CPUs, l.Cpuset = cpus, p
				} else {
					l.CPUs = l.CPUs.And(cpus)
				}
				if mems, ok := firstList(root, dir, memFiles); ok {
					l.Mems = &mems
				}
			}
		}
		if m.kind == v2 || m.has("cpu") {
			for _, d := range ancestors(strings.TrimPrefix(m.point, "/"), dir) {
				q, ok := quota(root, d, m.kind == v2)
				if ok && (l.Quota == 0 || q < l.Quota) {
					l.Quota = q
				}
			}
		}
	}
	return l
}

func (m mount) has(ctl string) bool {
	for _, c := range m.ctls {
		if c == ctl {
			return true
		}
	}
	return false
}

// cgroupPaths returns the process's cgroup path by controller, "" for
// the v2 hierarchy's, from proc/self/cgroup, else proc/self/cpuset.
func cgroupPaths(root string) map[string]string {
	out := map[string]string{}
	b, err := readValue(root, "proc/self/cgroup")
	if err != nil {
		if c, err := readValue(root, "proc/self/cpuset"); err == nil && strings.TrimSpace(string(c)) != "" {
			out["cpuset"] = strings.TrimSpace(string(c))
		}
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			out[""] = f[2]
			continue
		}
		for _, ctl := range strings.Split(f[1], ",") {
			out[ctl] = f[2]
		}
	}
	return out
}

// mounts returns the cgroup hierarchies' mounts, from
// proc/self/mountinfo, else proc/mounts (where every mount's root is
// taken to be "/").
func mounts(root string) []mount {
	var out []mount
	add := func(root, point, fstype, opts string) {
		m := mount{root: root, point: point}
		switch fstype {
		case "cgroup2":
			m.kind = v2
		case "cgroup":
			m.kind = v1
			for _, o := range strings.Split(opts, ",") {
				switch o {
				case "cpuset", "cpu":
					m.ctls = append(m.ctls, o)
				case "noprefix": // the files are named as the legacy cpuset file system's
					m.noprefix = true
				}
			}
			if len(m.ctls) == 0 {
				return
			}
		case "cpuset":
			m.kind, m.ctls = legacy, []string{"cpuset"}
		default:
			return
		}
		out = append(out, m)
	}
	if b, err := (capped.File{What: "mountinfo", Limit: maxMountsSize}).ReadFile(filepath.Join(root, "proc", "self", "mountinfo")); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			pre, post, ok := strings.Cut(line, " - ")
			f, g := strings.Fields(pre), strings.Fields(post)
			if ok && len(f) >= 5 && len(g) >= 3 {
				add(f[3], f[4], g[0], g[2])
			}
		}
		return out
	}
	if b, err := (capped.File{What: "mounts", Limit: maxMountsSize}).ReadFile(filepath.Join(root, "proc", "mounts")); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 4 {
				add("/", f[1], f[2], f[3])
			}
		}
	}
	return out
}

// relative returns the directory of cgroup path p under m's mount point,
// relative to the root the files are read under (no leading slash). A
// cgroup outside the mount's root (a namespace's view) is the mount's
// root directory.
func relative(m mount, p string) string {
	r := strings.TrimPrefix(p, m.root)
	if m.root != "/" && len(r) == len(p) {
		r = "/"
	}
	return strings.TrimPrefix(path.Join(m.point, r), "/")
}

// ancestors returns a cgroup's directory and its ancestors' up to the
// hierarchy's mount point (both relative, no leading slash).
func ancestors(point, dir string) []string {
	out := []string{dir}
	for d := dir; d != point && len(d) > len(point); {
		d = path.Dir(d)
		out = append(out, d)
	}
	return out
}

// quota reads a cgroup directory's CPU quota: cpu.max ("max 100000", or
// "quota period") in v2, cpu.cfs_quota_us (-1: none) and
// cpu.cfs_period_us in v1.
func quota(root, dir string, unified bool) (int, bool) {
	if unified {
		b, err := readValue(root, path.Join(dir, "cpu.max"))
		f := strings.Fields(string(b))
		if err != nil || len(f) != 2 || f[0] == "max" {
			return 0, false
		}
		return cpusOf(f[0], f[1])
	}
	q, err1 := readValue(root, path.Join(dir, "cpu.cfs_quota_us"))
	p, err2 := readValue(root, path.Join(dir, "cpu.cfs_period_us"))
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

// firstList returns the first of the files in dir that holds a CPU or
// node list.
func firstList(root, dir string, names []string) (cpuset.Set, bool) {
	for _, n := range names {
		b, err := readValue(root, path.Join(dir, n))
		if s := strings.TrimSpace(string(b)); err == nil && s != "" {
			if v, err := cpuset.ParseList(s); err == nil {
				return v, true
			}
		}
	}
	return cpuset.Set{}, false
}

// readValue reads a small file under root (name is slash-separated and
// relative).
func readValue(root, name string) ([]byte, error) {
	return capped.File{Limit: maxValueSize}.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
}
